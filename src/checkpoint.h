/* checkpoint.h: the state of a run at a step, saved so that a run can be
 * resumed and give the same bytes as if it had never stopped. */
#ifndef BOIDSIM_CHECKPOINT_H
#define BOIDSIM_CHECKPOINT_H

#include <stdint.h>
#include "sim.h"
#include "util.h"

#define CHECKPOINT_MAGIC "BOIDCKPT"
#define CHECKPOINT_VERSION 2
#define CHECKPOINT_STRING_MAX (16u << 20)

/* Where the run's outputs were being written when the checkpoint was
 * taken: the final names and the temporary files that held the data; and
 * what each held before the outputs of the checkpoint's step: its bytes
 * (the trajectory's before gzip) and their CRC-32. */
struct checkpoint_files {
	char *output, *output_tmp;
	char *metrics, *metrics_tmp;
	uint64_t output_bytes, metrics_bytes;
	uint32_t output_sum, metrics_sum;
};

/* Writes the state of s (id order), its boids those of f (the whole flock,
 * sim_whole), the effective scenario and the files atomically to path:
 * temporary file, fsync, rename, directory sync. */
int checkpoint_write(const char *path, const struct sim *s, const struct flock *f,
		     const char *scenario_json, const char *generator,
		     const struct checkpoint_files *files, struct util_err *err);

/* Loads path into s (already initialised from the same scenario): refused
 * unless its scenario (unless scenario_json is NULL) and generator are
 * exactly these, and its state one the run can reach (finite, inside the
 * box where the box bounds it).
 * Fills files (free with checkpoint_files_free). */
int checkpoint_read(const char *path, struct sim *s, const char *scenario_json,
		    const char *generator, struct checkpoint_files *files,
		    struct util_err *err);

/* Only the files of checkpoint path (free with checkpoint_files_free),
 * without its state: -1 with err set when it is not a whole checkpoint of
 * this format version. */
int checkpoint_peek(const char *path, struct checkpoint_files *files, struct util_err *err);

void checkpoint_files_free(struct checkpoint_files *files);

/* The files of checkpoint path must be the command line's: output and
 * metrics (NULL when not given) the same names, and the temporary names
 * ones that these names give (outfile_is_temp), so that resuming reads and
 * removes no other file. */
int checkpoint_files_check(const char *path, const struct checkpoint_files *files,
			   const char *output, const char *metrics, struct util_err *err);

#endif
