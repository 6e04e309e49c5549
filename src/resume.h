/* resume.h: what --resume checks of a stopped run's outputs before it goes
 * on: that they are the checkpointed run's (its scenario and seed, exactly
 * its frames' or rows' steps, and the bytes and CRC-32 the checkpoint
 * says), read back and written again into the new run's outputs. */
#ifndef BOIDSIM_RESUME_H
#define BOIDSIM_RESUME_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "checkpoint.h"
#include "scenario.h"
#include "traj.h"
#include "util.h"

/* How many frames (or metrics rows, every K-th step) a run writes before
 * step: those of steps 0, K, 2K, ... below it. */
uint64_t resume_written_before(uint64_t step, uint64_t every);

/* Where the frames of a stopped run are: its temporary file tmp (NULL or
 * "": none) when it was killed, else the file it closed, final.partial
 * (binary: or final, where an older boidsim stopped by a signal left it).
 * The name goes into buf; NULL when none is readable.
 * tmp must have passed checkpoint_files_check. */
const char *resume_source(const char *tmp, const char *final, int csv, char *buf, size_t cap);

/* The frames before step before, read back from the stopped run's output
 * (resume_source of cf's temporary name and output) and written again to
 * w, so that the file is the same as if the run had never stopped. fmt is
 * w's format; a NULL a: frames without agents, else with (frame and a
 * sized for sim_frame_capacity(sc)); json the effective scenario. Returns
 * 0 (src, cap bytes, names the file read), or -1 with err set and
 * *refused: 1 when the file is not the checkpointed run's (nothing of the
 * stopped run touched: a usage error), 0 when writing w failed. */
int resume_frames(const struct scenario *sc, const char *json,
		  const struct checkpoint_files *cf, const char *output, enum traj_format fmt,
		  struct traj_writer *w, uint64_t before, float *const frame[TRAJ_FIELDS_MAX],
		  struct traj_agents *a, char *src, size_t cap, int *refused,
		  struct util_err *err);

/* The same for the metrics table: the header line (already written to out)
 * and the rows before step before, one every every steps, checked the same
 * way (their steps, then their bytes' CRC-32 against the checkpoint's);
 * the rows are written to out. */
int resume_rows(const struct checkpoint_files *cf, const char *metrics, FILE *out,
		uint64_t before, uint64_t every, int *refused, struct util_err *err);

#endif
