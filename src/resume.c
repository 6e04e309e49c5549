/* resume.c: --resume's checks of a stopped run's outputs against its
 * checkpoint, and their copy into the resumed run's outputs. */
#include "config.h"
#include "resume.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "sim.h"

uint64_t resume_written_before(uint64_t step, uint64_t every)
{
	return step == 0 ? 0 : (step - 1) / every + 1;
}

const char *resume_source(const char *tmp, const char *final, int csv, char *buf, size_t cap)
{
	if (tmp && tmp[0] && access(tmp, R_OK) == 0) {
		snprintf(buf, cap, "%s", tmp);
		return buf;
	}
	snprintf(buf, cap, "%s.partial", final);
	if (access(buf, R_OK) == 0)
		return buf;
	/* a binary file a run stopped by a signal left under its own name
	 * before the .partial name (the frames are checked all the same) */
	snprintf(buf, cap, "%s", final);
	return !csv && access(buf, R_OK) == 0 ? buf : NULL;
}

int resume_frames(const struct scenario *sc, const char *json,
		  const struct checkpoint_files *cf, const char *output, enum traj_format fmt,
		  struct traj_writer *w, uint64_t before, float *const frame[TRAJ_FIELDS_MAX],
		  struct traj_agents *a, char *src_buf, size_t cap, int *refused,
		  struct util_err *err)
{
	const struct traj_header *h;
	const char *src = resume_source(cf->output_tmp, output, fmt != TRAJ_BIN, src_buf, cap);
	struct traj_reader *r = NULL;
	uint64_t step, k, n = resume_written_before(before, sc->every), bytes;
	uint32_t sum;
	/* have: a frame read and not yet written; ended: the file's end read */
	int rc = -1, have = 0, ended = 0;

	*refused = 1;
	if (src == NULL) {
		util_err_set(err, "cannot resume: the stopped run's output (%s) is gone", output);
		goto out;
	}
	if (!(r = traj_reader_open(src, err)))
		goto out;
	/* The frames must fit this run's: its format, dimensions, hue,
	 * agents and at most as many boids (or agents) as it can hold. */
	h = traj_reader_header(r);
	if (h->format != fmt || h->dims != sc->dims || h->has_hue != sc->has_hue ||
	    h->has_agents != (a != NULL) ||
	    h->count > (a ? sim_frame_capacity(sc) : sc->count) ||
	    (!a && h->count != sc->count)) {
		util_err_set(err, "cannot resume: %s does not hold this run's frames", src);
		goto out;
	}
	if (fmt == TRAJ_BIN && (h->seed != sc->seed || strcmp(h->scenario, json) != 0)) {
		util_err_set(err, "cannot resume: %s is another run's output (its %s is not the "
			     "checkpoint's)", src, h->seed != sc->seed ? "seed" : "scenario");
		goto out;
	}
	/* Exactly the frames before the step, and not one more: what the
	 * stopped run wrote after its checkpoint may be cut short. A CSV
	 * frame of no agents has no rows, so a CSV file with agents may skip
	 * a step: that frame was empty (and if it was not, the text differs
	 * from what the checkpoint summed, below). */
	for (k = 0; k < n; k++) {
		if (!have && !ended) {
			have = a ? traj_read_frame_agents(r, &step, frame, a, err) :
				   traj_read_frame(r, &step, frame, err);
			if (have < 0)
				goto out;
			ended = have == 0;
		}
		if (a && fmt != TRAJ_BIN && (!have || step > k * sc->every)) {
			struct traj_agents none = {0, a->id, a->group};

			if (traj_write_frame_agents(w, k * sc->every, frame, &none, err) != 0) {
				*refused = 0;
				goto out;
			}
			continue;
		}
		if (!have || step != k * sc->every) {
			int got = have;

			util_err_set(err, "cannot resume: %s has %s step %llu where the checkpoint "
				     "needs step %llu", src, got == 0 ? "no frame after" : "a frame of",
				     (unsigned long long)(got == 0 ? traj_reader_last_step(r) : step),
				     (unsigned long long)(k * sc->every));
			goto out;
		}
		have = 0;
		if ((a ? traj_write_frame_agents(w, step, frame, a, err) :
		     traj_write_frame(w, step, frame, err)) != 0) {
			*refused = 0;
			goto out;
		}
	}
	traj_writer_mark(w, &bytes, &sum);
	if (bytes != cf->output_bytes || sum != cf->output_sum) {
		util_err_set(err, "cannot resume: the frames in %s are not the ones the "
			     "checkpointed run wrote", src);
		goto out;
	}
	rc = 0;
out:
	if (r)
		traj_reader_close(r);
	return rc;
}

int resume_rows(const struct checkpoint_files *cf, const char *metrics, FILE *out,
		uint64_t before, uint64_t every, int *refused, struct util_err *err)
{
	char buf[4096], line[8192];
	const char *src = resume_source(cf->metrics_tmp, metrics, 1, buf, sizeof buf);
	uint64_t k, n = resume_written_before(before, every), bytes = 0;
	uLong sum = crc32(0L, Z_NULL, 0);
	FILE *in = NULL;
	int rc = -1;

	*refused = 1;
	if (src == NULL) {
		util_err_set(err, "cannot resume: the stopped run's metrics (%s) are gone", metrics);
		goto out;
	}
	if (!(in = fopen(src, "r"))) {
		util_err_set(err, "cannot resume: %s: %s", src, strerror(errno));
		goto out;
	}
	/* the header (already written) and the n rows */
	for (k = 0; k <= n; k++) {
		char *end;

		if (!fgets(line, sizeof line, in) || !strchr(line, '\n')) {
			util_err_set(err, "cannot resume: %s ends before the checkpoint's step", src);
			goto out;
		}
		if (k > 0 && (strtoull(line, &end, 10) != (k - 1) * every || *end != ',')) {
			util_err_set(err, "cannot resume: %s has no row of step %llu where the "
				     "checkpoint needs one", src, (unsigned long long)(k - 1) * every);
			goto out;
		}
		bytes += strlen(line);
		sum = crc32_z(sum, (const Bytef *)line, strlen(line));
		if (k > 0)
			fputs(line, out);
	}
	if (bytes != cf->metrics_bytes || (uint32_t)sum != cf->metrics_sum) {
		util_err_set(err, "cannot resume: the rows in %s are not the ones the "
			     "checkpointed run wrote", src);
		goto out;
	}
	rc = 0;
out:
	if (in)
		fclose(in);
	return rc;
}
