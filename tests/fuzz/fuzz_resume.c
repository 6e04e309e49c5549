/* fuzz_resume.c: libFuzzer target for --resume's checks of a stopped run's
 * outputs (resume.c). The input is up to three files, split at the line
 * FUZZ_PART: a checkpoint, the stopped run's trajectory, its metrics table.
 * They are laid out in a directory of the target's own as boidsim
 * --resume finds them: the checkpoint's names (relative ones: out.bin,
 * .out.bin.tmp.XXXXXX, met.csv, ...) are put in that directory (and its
 * CRC made right), the trajectory under the checkpoint's temporary name
 * for it when that is one of the output's, else where a stopped run leaves
 * it (out.bin, out.csv.partial), and the table the same way. The command
 * line is the one the checkpoint names (-o out.bin, out.csv or out.csv.gz,
 * --metrics met.csv when it has metrics). Then, as boidsim does: the
 * checkpoint is read into the run of its scenario (fuzz_run.h), its names
 * checked, and the frames and rows read back and written again. Every
 * refusal must be one line; nothing may crash, leak or read out of bounds,
 * and no file outside the directory is read or written. Built and run by
 * .ci/run, as fuzz_checkpoint. */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "fuzz_common.h"
#include "fuzz_run.h"
#include "checkpoint.h"
#include "metrics.h"
#include "outfile.h"
#include "resume.h"
#include "sim.h"
#include "traj.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_PART "\n@@boidsim-fuzz-part@@\n"

/* -DFUZZ_DEBUG: each input's verdict on stderr, to see how far the seed
 * corpus gets (every seed should be resumed). */
#ifdef FUZZ_DEBUG
#define verdict(...) fprintf(stderr, "fuzz_resume: " __VA_ARGS__)
#else
#define verdict(...) ((void)0)
#endif

static char dir[64];
/* The files an input made, removed after it. */
static char made[4][4096];
static int n_made;

static void cleanup(void)
{
	int i;

	for (i = 0; i < n_made; i++)
		unlink(made[i]);
	n_made = 0;
}

static void remove_dir(void)
{
	cleanup();
	rmdir(dir);
}

static void put_file(const char *name, const unsigned char *p, size_t n)
{
	if (n_made < 4 && fuzz_write_file(name, p, n) == 0)
		snprintf(made[n_made++], sizeof made[0], "%s", name);
}

/* The first FUZZ_PART in p..end, or NULL (memmem is not POSIX). */
static const unsigned char *find_part(const unsigned char *p, const unsigned char *end)
{
	const size_t sl = sizeof FUZZ_PART - 1;

	for (; (size_t)(end - p) >= sl; p++)
		if (*p == FUZZ_PART[0] && memcmp(p, FUZZ_PART, sl) == 0)
			return p;
	return NULL;
}

/* The parts of the input: up to three, at FUZZ_PART. */
static int split(const uint8_t *data, size_t size, const unsigned char *part[3],
		 size_t len[3])
{
	const size_t sl = sizeof FUZZ_PART - 1;
	const unsigned char *p = data, *end = data + size;
	int n = 0;

	while (n < 3) {
		const unsigned char *q = n < 2 ? find_part(p, end) : NULL;

		part[n] = p;
		len[n] = (size_t)((q ? q : end) - p);
		n++;
		if (q == NULL)
			break;
		p = q + sl;
	}
	return n;
}

/* name in the directory: dir/name for a relative name, "" for "" */
static void in_dir(const char *name, char *out, size_t cap)
{
	if (name == NULL || !name[0])
		snprintf(out, cap, "%s", name ? name : "");
	else
		snprintf(out, cap, "%s%s%s", name[0] == '/' ? "" : dir, name[0] == '/' ? "" : "/",
			 name);
}

static void put_u32(unsigned char **p, uint32_t v)
{
	traj_put_u32(*p, v);
	*p += 4;
}

/* The checkpoint with its four names put in the directory and its CRC
 * made right, written to dir/ck; its scenario, generator and names
 * (unmoved) returned. Returns 0, or -1 when it does not hold them (it is
 * written as it is then). */
static int put_checkpoint(const unsigned char *d, size_t size, char *str[6], char *ck)
{
	size_t at = FUZZ_CKPT_STRINGS, cap;
	unsigned char *out, *p;
	char moved[4][4096];
	int i;

	for (i = 0; i < 6; i++)
		str[i] = NULL;
	for (i = 0; i < 6; i++)
		if (!(str[i] = fuzz_ckpt_string(d, size, &at)))
			break;
	if (i < 6 || size - at < 4) {
		put_file(ck, d, size);
		return -1;
	}
	cap = size + 4 * sizeof moved[0];
	if (!(out = malloc(cap)))
		return -1;
	memcpy(out, d, FUZZ_CKPT_STRINGS);
	p = out + FUZZ_CKPT_STRINGS;
	for (i = 0; i < 6; i++) {
		const char *s = str[i];
		size_t n;

		if (i >= 2) {
			in_dir(str[i], moved[i - 2], sizeof moved[0]);
			s = moved[i - 2];
		}
		n = strlen(s);
		put_u32(&p, (uint32_t)n);
		memcpy(p, s, n);
		p += n;
	}
	/* the rest, whose CRC is then this one's */
	memcpy(p, d + at, size - at - 4);
	p += size - at - 4;
	traj_put_u32(p, (uint32_t)crc32_z(crc32(0L, Z_NULL, 0), out, (size_t)(p - out)));
	p += 4;
	put_file(ck, out, (size_t)(p - out));
	free(out);
	return 0;
}

/* One line, whatever made it: resume.c's own, or the reader's, which
 * names the file (in the directory). */
static void check_refusal(const struct util_err *err)
{
	if (strncmp(err->msg, "cannot resume: ", 15) == 0)
		fuzz_check_error(err, "cannot resume: ");
	else
		fuzz_check_error(err, dir);
}

static void resume(const unsigned char *part[3], const size_t len[3], int parts)
{
	static const char *const names[3] = {"out.bin", "out.csv", "out.csv.gz"};
	char *str[6], ck[4096], output[4096], metrics[4096], tmp[4096], src[4096], gen[256];
	struct scenario sc;
	struct sim sim;
	struct checkpoint_files cf;
	struct util_err err;
	struct traj_writer *w = NULL;
	struct outfile mout = {0};
	struct traj_agents agents = {0, NULL, NULL}, *ag = NULL;
	float *frame[TRAJ_FIELDS_MAX] = {0};
	enum traj_format fmt = TRAJ_BIN;
	char *json = NULL;
	uint64_t cap;
	int i, d, refused, sim_ok = 0;

	snprintf(ck, sizeof ck, "%s/ck", dir);
	put_checkpoint(part[0], len[0], str, ck);
	/* the command line the checkpoint was written by, within reason */
	for (i = 0; i < 3; i++)
		if (str[2] && strcmp(str[2], names[i]) == 0)
			break;
	in_dir(names[i < 3 ? i : 0], output, sizeof output);
	traj_format_guess(output, &fmt);
	in_dir("met.csv", metrics, sizeof metrics);

	fuzz_run_scenario(str[0], &sc);
	fuzz_generator(str[1], gen, sizeof gen);
	if (sim_init(&sim, &sc, SIM_GRID, NULL, &err) != 0)
		goto out;
	sim_ok = 1;
	if (!(json = scenario_to_json(&sc)))
		abort();
	if (checkpoint_read(ck, &sim, json, gen, &cf, &err) != 0) {
		verdict("%s\n", err.msg);
		fuzz_check_error(&err, ck);
		goto out;
	}
	if (checkpoint_files_check(ck, &cf, output, cf.metrics && cf.metrics[0] ? metrics : NULL,
				   &err) != 0) {
		verdict("%s\n", err.msg);
		fuzz_check_error(&err, ck);
		goto out_files;
	}
	/* the stopped run's outputs, where it left them */
	if (parts > 1) {
		if (cf.output_tmp && cf.output_tmp[0])
			snprintf(tmp, sizeof tmp, "%s", cf.output_tmp);
		else
			snprintf(tmp, sizeof tmp, "%s%s", output, fmt == TRAJ_BIN ? "" : ".partial");
		put_file(tmp, part[1], len[1]);
	}
	if (parts > 2 && cf.metrics && cf.metrics[0]) {
		if (cf.metrics_tmp && cf.metrics_tmp[0])
			snprintf(tmp, sizeof tmp, "%s", cf.metrics_tmp);
		else
			snprintf(tmp, sizeof tmp, "%s.partial", metrics);
		put_file(tmp, part[2], len[2]);
	}

	cap = sim_frame_capacity(&sc);
	for (d = 0; d < flock_fields(&sim.flock); d++)
		if (!(frame[d] = util_alloc((size_t)cap, sizeof(float), &err)))
			goto out_files;
	if (sim_has_agents(&sc)) {
		ag = &agents;
		if (!(agents.id = util_alloc((size_t)cap, sizeof(uint32_t), &err)) ||
		    !(agents.group = util_alloc((size_t)cap, sizeof(uint32_t), &err)))
			goto out_files;
	}
	w = traj_writer_open(output, fmt, sc.dims, sc.has_hue, ag ? TRAJ_FLAG_AGENTS : 0, cap,
			     sc.seed, gen, json, sc.compression, sc.precision, &err);
	if (w == NULL) {
		fprintf(stderr, "fuzz: cannot open %s: %s\n", output, err.msg);
		abort();
	}
	if (resume_frames(&sc, json, &cf, output, fmt, w, sim.step, frame, ag, src, sizeof src,
			  &refused, &err) != 0) {
		if (!refused) {
			fprintf(stderr, "fuzz: writing %s failed: %s\n", output, err.msg);
			abort();
		}
		verdict("%s\n", err.msg);
		check_refusal(&err);
		goto out_files;
	}
	if (cf.metrics && cf.metrics[0]) {
		if (outfile_open(&mout, metrics, &err) != 0 ||
		    metrics_write_header(mout.fp, sc.dims, sc.has_hue) != 0) {
			fprintf(stderr, "fuzz: cannot open %s: %s\n", metrics, err.msg);
			abort();
		}
		if (resume_rows(&cf, metrics, mout.fp, sim.step, sc.every, &refused, &err) != 0) {
			verdict("%s\n", err.msg);
			check_refusal(&err);
			goto out_files;
		}
	}
	verdict("resumed at step %llu from %s\n", (unsigned long long)sim.step, src);
out_files:
	checkpoint_files_free(&cf);
out:
	outfile_abort(&mout, NULL);
	traj_writer_abort(w, NULL);
	for (d = 0; d < TRAJ_FIELDS_MAX; d++)
		util_free(frame[d]);
	util_free(agents.id);
	util_free(agents.group);
	free(json);
	if (sim_ok)
		sim_free(&sim);
	scenario_free(&sc);
	for (i = 0; i < 6; i++)
		free(str[i]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const unsigned char *part[3];
	size_t len[3];
	int parts;

	if (size > (1u << 20))
		return 0;
	if (!dir[0]) {
		snprintf(dir, sizeof dir, "/tmp/fuzz_resume.XXXXXX");
		if (mkdtemp(dir) == NULL)
			abort();
		atexit(remove_dir);
	}
	parts = split(data, size, part, len);
	resume(part, len, parts);
	cleanup();
	return 0;
}
