/* check_traj.c: trajectory files: every codec reads back as written (bit
 * for bit, or within precision/2), temporary files never take the final
 * name on failure, damage and truncation are detected, the frame index
 * gives the frames read in order, and threads change no byte. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include "check_suites.h"
#include "sim.h"
#include "traj.h"

static char dir[256];

/* Small test frames must still take the threaded paths of the writer and
 * the reader: every one is opened through these. */
static struct traj_writer *open_writer(const char *path, enum traj_format fmt, int dims, int hue,
				       uint32_t flags, uint64_t count, uint64_t seed,
				       const char *generator, const char *json, int level,
				       double precision, struct util_err *err)
{
	struct traj_writer *w = traj_writer_open(path, fmt, dims, hue, flags, count, seed,
						 generator, json, level, precision, err);

	if (w)
		traj_writer_set_parallel_min(w, test_ctx.parallel_min);
	return w;
}

static struct traj_reader *open_reader(const char *path, struct util_err *err)
{
	struct traj_reader *r = traj_reader_open(path, err);

	if (r)
		traj_reader_set_parallel_min(r, test_ctx.parallel_min);
	return r;
}

static void make_dir(void)
{
	snprintf(dir, sizeof dir, "/tmp/boidsim-check-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void remove_dir(void)
{
	char cmd[300];

	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

static int exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

/* Writer settings beyond the scenario's: 0 leaves the default. Positions
 * are predicted (codec 5) as the command line does, unless xor_only. */
struct wopts {
	uint32_t chunk, key_interval;
	double precision;
	int level; /* -1: the scenario's */
	int xor_only;
	int zlib;  /* 1: zlib chunks, not the scenario's compressor (zstd) */
};

/* write_run_opts: 1, 2, 3, 1, ... threads for the frames in turn
 * (test_csv_gz_blocks sets it around one run). */
static int vary_threads;

static const struct wopts DEFAULTS = {0, 0, 0, -1, 0, 0};

/* Runs a small scenario, writing path in the given format. */
static void write_run_opts(const char *scen, const char *path, enum traj_format fmt,
			   uint64_t stop_after, const struct wopts *o)
{
	struct scenario sc;
	struct sim s;
	struct util_err err;
	struct traj_writer *w;
	float *fields[TRAJ_FIELDS_MAX] = {0};
	char *json;
	int d, frames = 0;

	load_ok(scen, &sc);
	ck_assert_int_eq(sim_init(&s, &sc, SIM_GRID, &test_ctx, &err), 0);
	json = scenario_to_json(&sc);
	w = open_writer(path, fmt, sc.dims, sc.has_hue,
			traj_compressor_flag(o->zlib ? TRAJ_ZLIB
					     : (enum traj_compressor)sc.compressor),
			sc.count, sc.seed, "boidsim test", json,
			     o->level >= 0 ? o->level : sc.compression,
			     o->precision > 0 ? o->precision : sc.precision, &err);
	ck_assert_msg(w != NULL, "%s", err.msg);
	if (o->chunk)
		traj_writer_set_chunk_size(w, o->chunk);
	if (o->key_interval)
		traj_writer_set_key_interval(w, o->key_interval);
	if (!o->xor_only)
		traj_writer_set_predict(w, sc.dt);
	for (d = 0; d < flock_fields(&s.flock); d++)
		fields[d] = malloc(sc.count * sizeof(float));
	for (;;) {
		if (s.step % sc.every == 0) {
			flock_to_id_order(&s.flock, fields);
#ifdef _OPENMP
			if (vary_threads)
				omp_set_num_threads(1 + frames % 3);
#endif
			frames++;
			ck_assert_msg(traj_write_frame(w, s.step, fields, &err) == 0, "%s", err.msg);
		}
		if (s.step == stop_after) {
			traj_writer_abort(w, NULL);
			w = NULL;
			break;
		}
		if (s.step == sc.steps)
			break;
		sim_step(&s);
	}
	if (w)
		ck_assert_msg(traj_writer_close(w, TRAJ_COMPLETE, &err) == 0, "%s", err.msg);
	for (d = 0; d < TRAJ_FIELDS_MAX; d++)
		free(fields[d]);
	free(json);
	sim_free(&s);
	scenario_free(&sc);
}

static void write_run(const char *scen, const char *path, enum traj_format fmt,
		      uint64_t stop_after)
{
	write_run_opts(scen, path, fmt, stop_after, &DEFAULTS);
}

static const char *SCEN3D =
	"{\"dimensions\": 3, \"count\": 50, \"steps\": 12, \"seed\": 5,"
	" \"output\": {\"every\": 3}, \"bounds\": {\"min\": [0, 0, 0], \"max\": [5, 5, 5]}}";

/* Small enough to damage or cut at every byte in a few seconds. */
static const char *SCEN3D_SMALL =
	"{\"dimensions\": 3, \"count\": 12, \"steps\": 12, \"seed\": 5,"
	" \"output\": {\"every\": 3}, \"bounds\": {\"min\": [0, 0, 0], \"max\": [5, 5, 5]}}";

static const char *path_in(const char *name)
{
	static char buf[2][320];
	static int which;

	which ^= 1;
	snprintf(buf[which], sizeof buf[which], "%s/%s", dir, name);
	return buf[which];
}

/* Every value of every binary frame equals the CSV's, bit for bit. */
START_TEST(test_bin_equals_csv)
{
	struct traj_reader *r;
	struct util_err err;
	float *f[TRAJ_FIELDS_MAX];
	uint64_t step;
	FILE *csv;
	char line[512];
	int d, frames = 0;

	make_dir();
	write_run(SCEN3D, path_in("a.bin"), TRAJ_BIN, UINT64_MAX);
	write_run(SCEN3D, path_in("a.csv"), TRAJ_CSV, UINT64_MAX);
	r = open_reader(path_in("a.bin"), &err);
	ck_assert_msg(r != NULL, "%s", err.msg);
	ck_assert_int_eq(traj_reader_header(r)->dims, 3);
	ck_assert_uint_eq(traj_reader_header(r)->count, 50);
	ck_assert_uint_eq(traj_reader_header(r)->seed, 5);
	ck_assert_ptr_nonnull(strstr(traj_reader_header(r)->scenario, "\"every\":\t3"));
	for (d = 0; d < 6; d++)
		f[d] = malloc(50 * sizeof(float));
	csv = fopen(path_in("a.csv"), "r");
	ck_assert_ptr_nonnull(csv);
	ck_assert_ptr_nonnull(fgets(line, sizeof line, csv));
	ck_assert_str_eq(line, "step,id,x,y,z,vx,vy,vz\n");
	while (traj_read_frame(r, &step, f, &err) == 1) {
		size_t k;

		ck_assert_uint_eq(step, (uint64_t)frames * 3);
		for (k = 0; k < 50; k++) {
			unsigned long long cs;
			unsigned id;
			float v[6];

			ck_assert_ptr_nonnull(fgets(line, sizeof line, csv));
			ck_assert_int_eq(sscanf(line, "%llu,%u,%f,%f,%f,%f,%f,%f", &cs, &id, &v[0],
						&v[1], &v[2], &v[3], &v[4], &v[5]), 8);
			ck_assert_uint_eq(cs, step);
			ck_assert_uint_eq(id, k);
			for (d = 0; d < 6; d++)
				ck_assert_msg(memcmp(&v[d], &f[d][k], 4) == 0,
					      "step %llu boid %zu field %d: csv %.9g bin %.9g",
					      cs, k, d, v[d], f[d][k]);
		}
		frames++;
	}
	ck_assert_int_eq(frames, 5); /* steps 0, 3, 6, 9, 12 */
	ck_assert_int_eq(traj_reader_ended(r, NULL), 1);
	ck_assert_ptr_null(fgets(line, sizeof line, csv));
	fclose(csv);
	for (d = 0; d < 6; d++)
		free(f[d]);
	traj_reader_close(r);
	remove_dir();
}
END_TEST

/* A run that fails part way leaves neither a final file nor a temporary one,
 * and an existing good file of that name survives untouched. */
START_TEST(test_abort_keeps_previous_file)
{
	FILE *fp;
	char buf[32] = {0};

	make_dir();
	fp = fopen(path_in("keep.bin"), "w");
	fputs("previous good file", fp);
	fclose(fp);
	write_run(SCEN3D, path_in("keep.bin"), TRAJ_BIN, 6);
	write_run(SCEN3D, path_in("new.csv.gz"), TRAJ_CSV_GZ, 3);
	fp = fopen(path_in("keep.bin"), "r");
	ck_assert_ptr_nonnull(fgets(buf, sizeof buf, fp));
	fclose(fp);
	ck_assert_str_eq(buf, "previous good file");
	ck_assert(!exists(path_in("new.csv.gz")));
	{
		char cmd[400];

		/* nothing else is left in the directory */
		snprintf(cmd, sizeof cmd, "test $(ls -A '%s' | wc -l) -eq 1", dir);
		ck_assert_int_eq(system(cmd), 0);
	}
	remove_dir();
}
END_TEST

static long file_size(const char *path)
{
	struct stat st;

	ck_assert_int_eq(stat(path, &st), 0);
	return (long)st.st_size;
}

static int count_frames(const char *path, int *rc_out, char *msg)
{
	struct traj_reader *r;
	struct util_err err = {0};
	float *f[TRAJ_FIELDS_MAX];
	uint64_t step;
	int d, n = 0, rc;

	r = open_reader(path, &err);
	if (r == NULL) {
		*rc_out = -2;
		strcpy(msg, err.msg);
		return 0;
	}
	for (d = 0; d < 6; d++)
		f[d] = malloc(traj_reader_header(r)->count * sizeof(float));
	while ((rc = traj_read_frame(r, &step, f, &err)) == 1)
		n++;
	*rc_out = rc;
	strcpy(msg, err.msg);
	for (d = 0; d < 6; d++)
		free(f[d]);
	traj_reader_close(r);
	return n;
}

static unsigned char *slurp(const char *path, long *size)
{
	unsigned char *all;
	FILE *in;

	*size = file_size(path);
	all = malloc((size_t)*size + 1);
	in = fopen(path, "rb");
	ck_assert_ptr_nonnull(in);
	ck_assert_int_eq(fread(all, 1, (size_t)*size, in), (size_t)*size);
	fclose(in);
	return all;
}

static void spill(const char *path, const unsigned char *b, long len)
{
	FILE *out = fopen(path, "wb");

	ck_assert_ptr_nonnull(out);
	ck_assert_int_eq(fwrite(b, 1, (size_t)len, out), (size_t)len);
	fclose(out);
}

/* Where the records of a binary file end, from the lengths they store:
 * the header, each frame, the frame index. Returns the number of frames. */
static int record_ends(const unsigned char *all, long size, long *header_end,
		       long *frame_end, int max, long *index_end)
{
	long off = TRAJ_HEADER_FIXED + (long)traj_get_u32(all + 36) +
		   (long)traj_get_u32(all + 40) + 4;
	int k = 0;

	*header_end = off;
	while (off + 4 <= size && memcmp(all + off, TRAJ_FRAME_TAG, 4) == 0) {
		ck_assert_int_lt(k, max);
		off += TRAJ_FRAME_HEADER + (long)traj_get_u64(all + off + 28);
		frame_end[k++] = off;
	}
	ck_assert_mem_eq(all + off, TRAJ_INDEX_TAG, 4);
	ck_assert_uint_eq(traj_get_u64(all + off + 4), (uint64_t)k);
	off += TRAJ_INDEX_FIXED + (long)k * TRAJ_INDEX_ENTRY;
	*index_end = off;
	ck_assert_int_eq(off + TRAJ_END_LEN, size);
	return k;
}

/* Every frame of a file in memory: steps and values (frame after frame,
 * field after field), with the digest. */
struct frames {
	int n, nf;
	uint64_t count, steps[64];
	float *v;
	char digest[TRAJ_DIGEST_HEX];
	struct traj_reader *r; /* kept open when asked */
};

static void load_frames(const char *path, struct frames *fr, int keep)
{
	struct util_err err = {0};
	struct traj_reader *r = open_reader(path, &err);
	float *f[TRAJ_FIELDS_MAX] = {0};
	uint64_t step;
	int d, rc;

	ck_assert_msg(r != NULL, "%s", err.msg);
	memset(fr, 0, sizeof *fr);
	fr->count = traj_reader_header(r)->count;
	fr->nf = traj_reader_header(r)->fields;
	fr->v = malloc(64 * TRAJ_FIELDS_MAX * fr->count * sizeof(float));
	for (;;) {
		ck_assert_int_lt(fr->n, 64);
		for (d = 0; d < fr->nf; d++)
			f[d] = fr->v + ((size_t)fr->n * fr->nf + d) * fr->count;
		rc = traj_read_frame(r, &step, f, &err);
		ck_assert_msg(rc >= 0, "%s: %s", path, err.msg);
		if (rc == 0)
			break;
		fr->steps[fr->n++] = step;
	}
	traj_reader_digest(r, fr->digest);
	if (keep)
		fr->r = r;
	else
		traj_reader_close(r);
}

static void free_frames(struct frames *fr)
{
	free(fr->v);
	traj_reader_close(fr->r);
}

static const float *frame_values(const struct frames *fr, int k)
{
	return fr->v + (size_t)k * fr->nf * fr->count;
}

static void assert_same_frames(const struct frames *a, const struct frames *b, const char *what)
{
	int k;

	ck_assert_msg(a->n == b->n, "%s: %d frames, %d expected", what, b->n, a->n);
	for (k = 0; k < a->n; k++) {
		ck_assert_uint_eq(a->steps[k], b->steps[k]);
		ck_assert_msg(memcmp(frame_values(a, k), frame_values(b, k),
				     a->nf * a->count * sizeof(float)) == 0,
			      "%s: frame %d differs", what, k);
	}
	ck_assert_str_eq(a->digest, b->digest);
}

static const char *SCEN2D_EVERY1 =
	"{\"count\": 60, \"steps\": 14, \"seed\": 9,"
	" \"bounds\": {\"min\": [0, 0], \"max\": [6, 6], \"mode\": \"wrap\"}}";

/* Every lossless configuration (chunks, key frames, levels) reads back bit
 * for bit as the CSV of the same run, with the same digest. */
START_TEST(test_codecs_bit_identical)
{
	static const struct wopts cfg[] = {
		{64, 3, 0, -1, 0, 0},   /* many chunks, key frame every 3 */
		{100, 1, 0, -1, 0, 0},  /* key frames only */
		{0, 1000, 0, -1, 0, 0}, /* one key frame, deltas after */
		{64, 2, 0, 0, 0, 0},    /* stored */
		{0, 0, 0, 9, 0, 0},
		{64, 3, 0, -1, 1, 0},   /* deltas XOR the previous frame's positions */
		{64, 3, 0, -1, 0, 1}, /* zlib chunks */
		{64, 2, 0, 0, 0, 1},  /* zlib, stored */
		{0, 0, 0, 9, 0, 1},
	};
	struct frames ref, got;
	size_t i;

	make_dir();
	write_run(SCEN2D_EVERY1, path_in("ref.csv"), TRAJ_CSV, UINT64_MAX);
	load_frames(path_in("ref.csv"), &ref, 0);
	ck_assert_int_eq(ref.n, 15);
	for (i = 0; i < sizeof cfg / sizeof cfg[0]; i++) {
		char name[32], msg[64];

		snprintf(name, sizeof name, "c%zu.bin", i);
		snprintf(msg, sizeof msg, "configuration %zu", i);
		write_run_opts(SCEN2D_EVERY1, path_in(name), TRAJ_BIN, UINT64_MAX, &cfg[i]);
		load_frames(path_in(name), &got, 1);
		assert_same_frames(&ref, &got, msg);
		ck_assert_int_eq(traj_reader_indexed(got.r), 1);
		ck_assert(traj_reader_precision(got.r) == 0);
		ck_assert_uint_eq(traj_reader_header(got.r)->flags, cfg[i].zlib ? 0 : TRAJ_FLAG_ZSTD);
		if (i == 0 || i == 5) {
			ck_assert_uint_eq(traj_reader_codec_frames(got.r, TRAJ_CODEC_SHUFFLE), 5);
			ck_assert_uint_eq(traj_reader_codec_frames(got.r, i == 0 ? TRAJ_CODEC_PREDICT
								      : TRAJ_CODEC_XOR), 10);
			ck_assert_uint_eq(traj_reader_codec_frames(got.r, i == 0 ? TRAJ_CODEC_XOR
								      : TRAJ_CODEC_PREDICT), 0);
		}
		if (i == 1)
			ck_assert_uint_eq(traj_reader_codec_frames(got.r, TRAJ_CODEC_XOR) +
					  traj_reader_codec_frames(got.r, TRAJ_CODEC_PREDICT), 0);
		free_frames(&got);
	}
	free_frames(&ref);
	remove_dir();
}
END_TEST

/* Lossy frames: every value within precision/2 of the simulation's (exact
 * test in binary64), the values really on the grid of the precision (or
 * kept bit for bit as exceptions), the precision reported. */
START_TEST(test_lossy_bound)
{
	static const double precs[] = {0.5, 1e-3, 3e-7};
	struct frames ref, got;
	size_t i, j, total;
	int k;

	make_dir();
	write_run(SCEN2D_EVERY1, path_in("ref.csv"), TRAJ_CSV, UINT64_MAX);
	load_frames(path_in("ref.csv"), &ref, 0);
	for (i = 0; i < sizeof precs / sizeof precs[0]; i++) {
		struct wopts o = {64, 4, precs[i], -1, 0, 0};
		double p = precs[i];
		size_t on_grid = 0, changed = 0;

		write_run_opts(SCEN2D_EVERY1, path_in("l.bin"), TRAJ_BIN, UINT64_MAX, &o);
		load_frames(path_in("l.bin"), &got, 1);
		ck_assert_int_eq(got.n, ref.n);
		ck_assert(traj_reader_precision(got.r) == p);
		ck_assert_uint_eq(traj_reader_codec_frames(got.r, TRAJ_CODEC_QUANT), 4);
		ck_assert_uint_eq(traj_reader_codec_frames(got.r, TRAJ_CODEC_QUANT_DELTA), 11);
		total = (size_t)ref.n * ref.nf * ref.count;
		for (j = 0; j < total; j++) {
			float x = ref.v[j], y = got.v[j];
			double t = (double)y / p;

			ck_assert_msg(2.0 * fabs((double)y - (double)x) <= p,
				      "precision %g: value %zu: %.9g read back as %.9g", p, j, x, y);
			if (fabs(t) <= TRAJ_QUANT_MAX &&
			    traj_dequantise((int64_t)nearbyint(t), p) == y)
				on_grid++;
			else
				ck_assert_msg(memcmp(&x, &y, 4) == 0, "value %zu neither on the grid "
					      "nor exact", j);
			changed += memcmp(&x, &y, 4) != 0;
		}
		if (p >= 1e-3) {
			/* Quantised for real: almost every value moved to the grid. */
			ck_assert_msg(on_grid > total * 99 / 100, "%zu of %zu on the grid",
				      on_grid, total);
			ck_assert_msg(changed > total * 9 / 10, "%zu of %zu changed", changed, total);
		}
		for (k = 0; k < ref.n; k++)
			ck_assert_uint_eq(got.steps[k], ref.steps[k]);
		free_frames(&got);
	}
	free_frames(&ref);
	remove_dir();
}
END_TEST

/* Values that cannot be quantised (not finite, too large, or where
 * rounding to binary32 would break the bound) come back bit for bit, in
 * key and delta frames, and the values after them still decode. */
START_TEST(test_lossy_exceptions)
{
	const float inf = INFINITY;
	float v[4][3][8] = {
		{{NAN, inf, -inf, 1e30f, -0.0f, 0.0005f, 123.456f, 3.4e38f},
		 {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f, 0.7f, 0.8f},
		 {-1, -2, -3, -4, 1, 2, 3, 4}},
		{{1.0f, inf, 2.0f, -1e30f, 5.0f, NAN, 123.457f, 1.0f},
		 {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f, 0.7f, 0.8f},
		 {-1, -2, -3, -4, 1, 2, 3, 4}},
		{{1.5f, 2.5f, 3.5f, 4.5f, 5.5f, 6.5f, 7.5f, 8.5f},
		 {0, 0, 0, 0, 0, 0, 0, 1e-20f},
		 {9e15f, -9e15f, 3, 4, 1, 2, 3, 4}},
		{{1.5f, 2.5f, 3.5f, 4.5f, 5.5f, 6.5f, 7.5f, 8.5f},
		 {1, 1, 1, 1, 1, 1, 1, 1},
		 {-1, -2, -3, -4, 1, 2, 3, 4}},
	};
	static const double precs[] = {1e-3, 1e-9, 1e9};
	struct util_err err;
	size_t i;
	int k, f, j;

	make_dir();
	for (i = 0; i < sizeof precs / sizeof precs[0]; i++) {
		struct traj_writer *w;
		struct traj_reader *r;
		float out[4][8], *fo[TRAJ_FIELDS_MAX], *fi[TRAJ_FIELDS_MAX];
		uint64_t step;

		/* 2D: x, y, vx, vy; rows 0-2 above, then row 0 again. */
		w = open_writer(path_in("e.bin"), TRAJ_BIN, 2, 0, 0, 8, 1, "test", "{\"seed\": 1}", 1,
				     precs[i], &err);
		ck_assert_msg(w != NULL, "%s", err.msg);
		traj_writer_set_key_interval(w, 3);
		for (k = 0; k < 4; k++) {
			fi[0] = v[k][0];
			fi[1] = v[k][1];
			fi[2] = v[k][2];
			fi[3] = v[k][0];
			ck_assert_int_eq(traj_write_frame(w, (uint64_t)k, fi, &err), 0);
		}
		ck_assert_int_eq(traj_writer_close(w, TRAJ_COMPLETE, &err), 0);
		r = open_reader(path_in("e.bin"), &err);
		ck_assert_msg(r != NULL, "%s", err.msg);
		for (f = 0; f < 4; f++)
			fo[f] = out[f];
		for (k = 0; k < 4; k++) {
			ck_assert_msg(traj_read_frame(r, &step, fo, &err) == 1, "%s", err.msg);
			for (f = 0; f < 4; f++)
				for (j = 0; j < 8; j++) {
					float x = v[k][f == 3 ? 0 : f][j], y = out[f][j];

					if (!isfinite(x) || fabsf(x) >= 1e29f)
						ck_assert_msg(memcmp(&x, &y, 4) == 0,
							      "frame %d field %d boid %d: %g read as %g",
							      k, f, j, x, y);
					else
						ck_assert_msg(2.0 * fabs((double)y - (double)x) <=
							      precs[i], "precision %g: %.9g read as %.9g",
							      precs[i], x, y);
				}
		}
		ck_assert_int_eq(traj_read_frame(r, &step, fo, &err), 0);
		traj_reader_close(r);
	}
	remove_dir();
}
END_TEST

/* A flipped byte anywhere is caught: in the header the file is refused, in
 * frame k the frames before it read and frame k is named, in the index or
 * the end record every frame reads and then the damage is reported. */
START_TEST(test_flipped_byte_detected)
{
	static const struct wopts cfg[] = {{64, 2, 0, -1, 0, 0}, {64, 2, 1e-3, -1, 0, 0}, {0, 0, 0, -1, 0, 0},
						{64, 2, 0, -1, 1, 0}};
	char msg[UTIL_ERR_MAX], want[64];
	long size, header_end, frame_end[8], index_end, pos;
	unsigned char *all;
	size_t c;
	int rc, n, nframes, k;

	make_dir();
	for (c = 0; c < sizeof cfg / sizeof cfg[0]; c++) {
		write_run_opts(SCEN3D_SMALL, path_in("c.bin"), TRAJ_BIN, UINT64_MAX, &cfg[c]);
		all = slurp(path_in("c.bin"), &size);
		nframes = record_ends(all, size, &header_end, frame_end, 8, &index_end);
		ck_assert_int_eq(nframes, 5);
		/* The header is one CRC'd block: a sample of it is enough. */
		for (pos = 0; pos < size; pos += pos < header_end ? 7 : 1) {
			all[pos] ^= 0x10;
			spill(path_in("flip.bin"), all, size);
			all[pos] ^= 0x10;
			n = count_frames(path_in("flip.bin"), &rc, msg);
			for (k = 0; k < nframes && frame_end[k] <= pos; k++)
				;
			if (pos < header_end) {
				ck_assert_msg(rc == -2, "flip at %ld (header) accepted", pos);
				continue;
			}
			ck_assert_msg(rc == -1 && n == k, "configuration %zu, flip at %ld: %d frames "
				      "read, rc %d (%s)", c, pos, n, rc, msg);
			snprintf(want, sizeof want, "frame %d", k);
			if (k < nframes)
				ck_assert_msg(strstr(msg, want) != NULL, "flip at %ld: %s", pos, msg);
			else
				ck_assert_msg(strstr(msg, pos < index_end ? "index" : "end record") ||
					      strstr(msg, "bad record tag"), "flip at %ld: %s", pos, msg);
		}
		free(all);
	}
	remove_dir();
}
END_TEST

/* Cut at every length: the reader returns exactly the complete frames
 * before the cut, and never crashes or reads garbage. */
START_TEST(test_truncation_every_length)
{
	static const struct wopts cfg[] = {{0, 0, 0, -1, 0, 0}, {64, 2, 0, -1, 0, 0}, {64, 3, 0.01, -1, 0, 0}};
	char msg[UTIL_ERR_MAX];
	long size, len, header_end, frame_end[8], index_end;
	int rc, n, complete, nframes;
	size_t c;
	unsigned char *all;

	make_dir();
	for (c = 0; c < sizeof cfg / sizeof cfg[0]; c++) {
		write_run_opts(c == 0 ? SCEN3D : SCEN3D_SMALL, path_in("t.bin"), TRAJ_BIN,
			       UINT64_MAX, &cfg[c]);
		all = slurp(path_in("t.bin"), &size);
		nframes = record_ends(all, size, &header_end, frame_end, 8, &index_end);
		ck_assert_int_eq(nframes, 5);
		for (len = 0; len < size; len++) {
			spill(path_in("cut.bin"), all, len);
			n = count_frames(path_in("cut.bin"), &rc, msg);
			for (complete = 0; complete < 5 && frame_end[complete] <= len; complete++)
				;
			ck_assert_msg(n == complete, "cut at %ld: %d frames read, %d complete", len,
				      n, complete);
			if (len < header_end)
				ck_assert_msg(rc == -2, "cut at %ld inside the header was accepted", len);
			else if (len == header_end || len == index_end ||
				 (complete > 0 && len == frame_end[complete - 1]))
				ck_assert_msg(rc == 0, "cut at %ld after a whole record: %s", len, msg);
			else
				ck_assert_msg(rc == -1 && strstr(msg, "cut short") != NULL,
					      "cut at %ld: rc %d, %s", len, rc, msg);
		}
		free(all);
	}
	remove_dir();
}
END_TEST

/* Random access through the index equals reading in order, whatever the
 * order of the requests; without an index it is refused, not guessed. */
START_TEST(test_random_access)
{
	static const struct wopts cfg[] = {{64, 4, 0, -1, 0, 0}, {64, 4, 1e-3, -1, 0, 0}, {0, 0, 0, -1, 0, 0}};
	static const int order[] = {14, 0, 5, 6, 7, 3, 3, 11, 4, 8, 1, 2, 9, 10, 12, 13, 14};
	struct util_err err;
	long size, header_end, frame_end[16], index_end;
	unsigned char *all;
	size_t c, i;
	int d;

	make_dir();
	for (c = 0; c < sizeof cfg / sizeof cfg[0]; c++) {
		struct frames seq;
		struct traj_reader *r;
		const struct traj_index_entry *e;
		float *f[TRAJ_FIELDS_MAX];
		uint64_t step;
		char msg[UTIL_ERR_MAX];
		int rc;

		write_run_opts(SCEN2D_EVERY1, path_in("r.bin"), TRAJ_BIN, UINT64_MAX, &cfg[c]);
		load_frames(path_in("r.bin"), &seq, 0);
		ck_assert_int_eq(seq.n, 15);
		r = open_reader(path_in("r.bin"), &err);
		ck_assert_int_eq(traj_reader_load_index(r, &err), 1);
		ck_assert_uint_eq(traj_reader_index_frames(r), 15);
		for (i = 0; i < 15; i++) {
			e = traj_reader_index_entry(r, i);
			ck_assert_uint_eq(e->step, seq.steps[i]);
			ck_assert_uint_eq(e->back, cfg[c].key_interval ? i % 4 : i % TRAJ_KEY_INTERVAL);
		}
		for (d = 0; d < 4; d++)
			f[d] = malloc(60 * sizeof(float));
		for (i = 0; i < sizeof order / sizeof order[0]; i++) {
			int k = order[i];

			ck_assert_msg(traj_read_frame_at(r, (uint64_t)k, &step, f, &err) == 1, "%s",
				      err.msg);
			ck_assert_uint_eq(step, seq.steps[k]);
			for (d = 0; d < 4; d++)
				ck_assert_msg(memcmp(f[d], frame_values(&seq, k) + d * 60,
						     60 * sizeof(float)) == 0,
					      "configuration %zu: frame %d field %d differs", c, k, d);
		}
		ck_assert_int_eq(traj_read_frame_at(r, 15, &step, f, &err), 0);
		ck_assert_int_eq(traj_read_frame(r, &step, f, &err), -1);
		traj_reader_close(r);

		/* A killed run's file: the frames, no index, no end record. */
		all = slurp(path_in("r.bin"), &size);
		ck_assert_int_eq(record_ends(all, size, &header_end, frame_end, 16, &index_end), 15);
		spill(path_in("killed.bin"), all, frame_end[14]);
		r = open_reader(path_in("killed.bin"), &err);
		ck_assert_int_eq(traj_reader_load_index(r, &err), 0);
		ck_assert_int_eq(traj_read_frame_at(r, 0, &step, f, &err), -1);
		ck_assert_ptr_nonnull(strstr(err.msg, "no frame index"));
		traj_reader_close(r);
		ck_assert_int_eq(count_frames(path_in("killed.bin"), &rc, msg), 15);
		ck_assert_int_eq(rc, 0);
		/* A damaged index is reported, never used. */
		all[index_end - 30] ^= 1;
		spill(path_in("damaged.bin"), all, size);
		r = open_reader(path_in("damaged.bin"), &err);
		ck_assert_int_eq(traj_reader_load_index(r, &err), -1);
		ck_assert_int_eq(traj_read_frame_at(r, 3, &step, f, &err), -1);
		traj_reader_close(r);
		free(all);
		for (d = 0; d < 4; d++)
			free(f[d]);
		free_frames(&seq);
	}
	remove_dir();
}
END_TEST

/* The thread count changes no byte of the file, lossless or lossy. */
START_TEST(test_threads_same_bytes)
{
	static const struct wopts cfg[] = {{64, 3, 0, -1, 0, 0}, {64, 3, 1e-3, -1, 0, 0}};
	size_t c;
	int t;

	make_dir();
	for (c = 0; c < sizeof cfg / sizeof cfg[0]; c++) {
		unsigned char *one = NULL;
		long size1 = 0;

		for (t = 1; t <= 3; t++) {
			unsigned char *b;
			long size;

#ifdef _OPENMP
			omp_set_num_threads(t);
#endif
			write_run_opts(SCEN2D_EVERY1, path_in("j.bin"), TRAJ_BIN, UINT64_MAX, &cfg[c]);
			b = slurp(path_in("j.bin"), &size);
			if (t == 1) {
				one = b;
				size1 = size;
				continue;
			}
			ck_assert_msg(size == size1 && memcmp(one, b, (size_t)size) == 0,
				      "configuration %zu: %d threads write other bytes", c, t);
			free(b);
		}
		free(one);
	}
	remove_dir();
}
END_TEST

/* A .csv.gz is one gzip stream: the header (no name, no time, XFL as
 * zlib sets it, OS 3), then the header line and each frame's rows in
 * blocks of TRAJ_CSV_ROWS (16384), each what a new raw deflate stream at
 * the file's level writes for its text with a sync flush, primed with the
 * 32 KiB of text before it; then an empty final block and the trailer. The
 * same bytes for 1, 2 and 3 threads and for threads raised between frames;
 * cut before its trailer, the reader says so. */
START_TEST(test_csv_gz_blocks)
{
	static const char *scen =
		"{\"count\": 40000, \"steps\": 2, \"seed\": 5,"
		" \"bounds\": {\"min\": [0, 0], \"max\": [400, 400], \"mode\": \"wrap\"}}";
	static const int LEVELS[] = {1, 6, 0};
	const size_t CAP = 1 << 23;
	char msg[UTIL_ERR_MAX];
	long size, tsize, size1 = 0;
	unsigned char *gz, *one = NULL, *text, *want = malloc(CAP), *raw = malloc(CAP);
	size_t used, at, lines, start;
	int t, l, rc, n;

	ck_assert(want && raw);
	make_dir();
	write_run_opts(scen, path_in("m.csv"), TRAJ_CSV, UINT64_MAX, &DEFAULTS);
	text = slurp(path_in("m.csv"), &tsize);
	for (l = 0; l < 3; l++) {
		struct wopts o = DEFAULTS;
		z_stream zs;
		uLong crc;

		o.level = LEVELS[l];
		for (t = 1; t <= 3; t++) {
#ifdef _OPENMP
			omp_set_num_threads(t);
#endif
			write_run_opts(scen, path_in("m.csv.gz"), TRAJ_CSV_GZ, UINT64_MAX, &o);
			gz = slurp(path_in("m.csv.gz"), &size);
			if (t == 1) {
				free(one);
				one = gz;
				size1 = size;
				continue;
			}
			ck_assert_msg(size == size1 && memcmp(one, gz, (size_t)size) == 0,
				      "level %d: %d threads write other bytes", o.level, t);
			free(gz);
		}
		/* threads raised between frames: more blocks at a time, the
		 * same bytes */
#ifdef _OPENMP
		omp_set_num_threads(1);
#endif
		vary_threads = 1;
		write_run_opts(scen, path_in("m.csv.gz"), TRAJ_CSV_GZ, UINT64_MAX, &o);
		vary_threads = 0;
		gz = slurp(path_in("m.csv.gz"), &size);
		ck_assert_msg(size == size1 && memcmp(one, gz, (size_t)size) == 0,
			      "level %d: 1, 2 then 3 threads write other bytes", o.level);
		free(gz);
		/* the expected bytes, block by block, from the .csv's text */
		memcpy(want, "\x1f\x8b\x08\0\0\0\0\0\0\x03", 10);
		want[8] = LEVELS[l] == 9 ? 2 : LEVELS[l] < 2 ? 4 : 0;
		used = 10;
		for (at = 0, start = 0, lines = 0; at < (size_t)tsize; at++) {
			if (text[at] != '\n')
				continue;
			/* a block ends after the header line, and after 16384
			 * rows or a frame's last row (40000 rows a frame) */
			lines++;
			if (!(lines == 1 || (lines - 1) % 40000 % 16384 == 0 ||
			      (lines - 1) % 40000 == 0))
				continue;
			memset(&zs, 0, sizeof zs);
			ck_assert_int_eq(deflateInit2(&zs, LEVELS[l], Z_DEFLATED, -15, 8,
						      Z_DEFAULT_STRATEGY), Z_OK);
			if (start > 0) {
				size_t d = start < 32768 ? start : 32768;

				ck_assert_int_eq(deflateSetDictionary(&zs, text + start - d, (uInt)d),
						 Z_OK);
			}
			zs.next_in = text + start;
			zs.avail_in = (uInt)(at + 1 - start);
			zs.next_out = want + used;
			zs.avail_out = (uInt)(CAP - used);
			ck_assert_int_eq(deflate(&zs, Z_SYNC_FLUSH), Z_OK);
			used += zs.total_out;
			deflateEnd(&zs);
			start = at + 1;
		}
		ck_assert_uint_eq(lines, 1 + 3 * 40000);
		crc = crc32(0L, text, (uInt)tsize);
		memcpy(want + used, "\x03\0", 2);
		traj_put_u32(want + used + 2, (uint32_t)crc);
		traj_put_u32(want + used + 6, (uint32_t)tsize);
		used += 10;
		ck_assert_msg(used == (size_t)size1 && memcmp(want, one, used) == 0,
			      "level %d: %ld bytes, the blocks make %zu", LEVELS[l], size1, used);
		/* and it decodes, as one stream, to the text */
		memset(&zs, 0, sizeof zs);
		ck_assert_int_eq(inflateInit2(&zs, 15 + 16), Z_OK);
		zs.next_in = one;
		zs.avail_in = (uInt)size1;
		zs.next_out = raw;
		zs.avail_out = (uInt)CAP;
		ck_assert_int_eq(inflate(&zs, Z_FINISH), Z_STREAM_END);
		ck_assert_msg(zs.avail_in == 0 && zs.total_out == (uLong)tsize &&
			      memcmp(raw, text, (size_t)tsize) == 0, "level %d: not the text",
			      LEVELS[l]);
		inflateEnd(&zs);
		/* without its trailer (a killed run's file): cut short */
		spill(path_in("cut.csv.gz"), one, size1 - 10);
		n = count_frames(path_in("cut.csv.gz"), &rc, msg);
		ck_assert_msg(n == 3 && rc == -1 && strstr(msg, "cut short") != NULL,
			      "level %d, no trailer: %d frames, rc %d, %s", LEVELS[l], n, rc, msg);
	}
	free(one);
	free(text);
	free(want);
	free(raw);
	remove_dir();
}
END_TEST

/* A version 1 file (written by boidsim before version 2) still reads, with
 * the digest it always had, and converts to version 2 unchanged. */
START_TEST(test_version1_file)
{
	struct frames v1, v2;
	struct traj_reader *r;
	struct traj_writer *w;
	struct util_err err;
	float *f[TRAJ_FIELDS_MAX];
	int k, d;

	make_dir();
	load_frames(test_srcfile("tests/data/v1-tiny2d.bin"), &v1, 1);
	ck_assert_int_eq(traj_reader_header(v1.r)->version, 1);
	ck_assert_int_eq(v1.n, 5);
	ck_assert_str_eq(v1.digest,
			 "f4b3417c63cd973f335e9fc809981ffbed7c252f6555775286be8430235b9726");
	ck_assert_uint_eq(traj_reader_codec_frames(v1.r, TRAJ_CODEC_ZLIB_F32), 5);
	ck_assert_int_eq(traj_reader_indexed(v1.r), 0);
	ck_assert_int_eq(traj_reader_load_index(v1.r, &err), 0);
	w = open_writer(path_in("v2.bin"), TRAJ_BIN, 2, 0, 0, 50, 4, "test", "{\"seed\": 4}", 1, 0, &err);
	ck_assert_ptr_nonnull(w);
	for (k = 0; k < v1.n; k++) {
		for (d = 0; d < 4; d++)
			f[d] = (float *)frame_values(&v1, k) + d * 50;
		ck_assert_int_eq(traj_write_frame(w, v1.steps[k], f, &err), 0);
	}
	ck_assert_int_eq(traj_writer_close(w, TRAJ_COMPLETE, &err), 0);
	load_frames(path_in("v2.bin"), &v2, 0);
	assert_same_frames(&v1, &v2, "v1 -> v2");
	r = open_reader(path_in("v2.bin"), &err);
	ck_assert_int_eq(traj_reader_header(r)->version, TRAJ_VERSION);
	traj_reader_close(r);
	free_frames(&v1);
	free_frames(&v2);
	remove_dir();
}
END_TEST

/* A hue field after the velocities (colour following): the header says
 * 2 dims + 1 fields, CSV has a hue column, every format and codec keeps it
 * (lossless bit for bit, with one digest; lossy within precision/2), and
 * copying frames from one format to another keeps it too. */
START_TEST(test_hue_field)
{
	static const char *const NAMES[] = {"h.bin", "h.csv", "h.csv.gz", "hl.bin", "copy.bin"};
	static const enum traj_format FMTS[] = {TRAJ_BIN, TRAJ_CSV, TRAJ_CSV_GZ, TRAJ_BIN};
	const int dims = 2 + _i, nf = 2 * dims + 1, n = 40, nframes = 7;
	struct frames fr[5];
	struct util_err err;
	float *vals = malloc((size_t)nframes * nf * n * sizeof(float)), *f[TRAJ_FIELDS_MAX];
	char line[80];
	FILE *fp;
	int k, d, i, j;

	make_dir();
	for (k = 0; k < nframes; k++)
		for (d = 0; d < nf; d++)
			for (i = 0; i < n; i++)
				vals[((size_t)k * nf + d) * n + i] = d == nf - 1 ?
					(float)fmod(0.137 * i + 0.01 * k, 1.0) :
					(float)(d + 1) * (float)sin(0.3 * i + k);
	for (j = 0; j < 4; j++) {
		struct traj_writer *w = open_writer(path_in(NAMES[j]), FMTS[j], dims, 1, 0,
							 (uint64_t)n, 3, "test", "{\"seed\": 3}", 1,
							 j == 3 ? 0.001 : 0, &err);

		ck_assert_msg(w != NULL, "%s", err.msg);
		traj_writer_set_key_interval(w, 3);
		for (k = 0; k < nframes; k++) {
			for (d = 0; d < nf; d++)
				f[d] = vals + ((size_t)k * nf + d) * n;
			ck_assert_int_eq(traj_write_frame(w, (uint64_t)(5 * k), f, &err), 0);
		}
		ck_assert_int_eq(traj_writer_close(w, TRAJ_COMPLETE, &err), 0);
		load_frames(path_in(NAMES[j]), &fr[j], 1);
		ck_assert_int_eq(traj_reader_header(fr[j].r)->fields, nf);
		ck_assert_int_eq(traj_reader_header(fr[j].r)->has_hue, 1);
		ck_assert_int_eq(fr[j].n, nframes);
	}
	ck_assert_msg(memcmp(fr[0].v, vals, (size_t)nframes * nf * n * sizeof(float)) == 0,
		      "the binary file does not read back bit for bit");
	assert_same_frames(&fr[0], &fr[1], "bin and csv");
	assert_same_frames(&fr[0], &fr[2], "bin and csv.gz");
	for (i = 0; i < nframes * nf * n; i++)
		ck_assert_msg(2.0 * fabs((double)fr[3].v[i] - vals[i]) <= 0.001,
			      "lossy: value %d %.9g read as %.9g", i, vals[i], fr[3].v[i]);
	fp = fopen(path_in("h.csv"), "r");
	ck_assert_ptr_nonnull(fgets(line, sizeof line, fp));
	fclose(fp);
	ck_assert_str_eq(line, dims == 2 ? "step,id,x,y,vx,vy,hue\n" : "step,id,x,y,z,vx,vy,vz,hue\n");
	ck_assert_str_eq(traj_field_name(dims, nf - 1), "hue");
	/* csv -> bin, as convert does: the frames and digest of the original */
	{
		struct traj_writer *w = open_writer(path_in(NAMES[4]), TRAJ_BIN, dims,
							 traj_reader_header(fr[1].r)->has_hue, 0,
							 (uint64_t)n, 3, "test", "{\"seed\": 3}", 1, 0, &err);

		ck_assert_ptr_nonnull(w);
		for (k = 0; k < fr[1].n; k++) {
			for (d = 0; d < nf; d++)
				f[d] = (float *)frame_values(&fr[1], k) + (size_t)d * n;
			ck_assert_int_eq(traj_write_frame(w, fr[1].steps[k], f, &err), 0);
		}
		ck_assert_int_eq(traj_writer_close(w, TRAJ_COMPLETE, &err), 0);
		load_frames(path_in(NAMES[4]), &fr[4], 0);
		assert_same_frames(&fr[0], &fr[4], "bin -> csv -> bin");
	}
	for (j = 0; j < 5; j++)
		free_frames(&fr[j]);
	free(vals);
	remove_dir();
}
END_TEST

/* ---- files with agents (TRAJ_FLAG_AGENTS) -------------------------------- */

#define AG_FRAMES 12
#define AG_MAX 40      /* the writer's count: more than any frame holds */

/* A frame of agents as a test writes it and reads it back. */
struct agframe {
	uint64_t step;
	size_t n;
	uint32_t id[AG_MAX], group[AG_MAX];
	float v[TRAJ_FIELDS_MAX][AG_MAX];
};

/* Frame k: a population that changes every third frame (boids come and
 * go with stable, sparse ids; predators appear, one of them with the id
 * of a boid, and leave), values that move a little from frame to frame. */
static void make_agents(struct agframe *fr, int k, int dims, int hue)
{
	static const uint32_t preds[4][3] = {{0}, {3}, {3, 7}, {7}};
	static const size_t npreds[4] = {0, 1, 2, 1};
	int s = (k / 3) % 4, nf = 2 * dims + hue, f;
	uint32_t i;
	size_t j;

	memset(fr, 0, sizeof *fr);
	fr->step = (uint64_t)(10 * k + 1);
	for (i = (uint32_t)(2 * s); i < (uint32_t)(10 + 4 * s); i++)
		if (i % 4 != 1) {
			fr->id[fr->n] = i * 1009u + i * i; /* sparse, increasing */
			fr->group[fr->n++] = TRAJ_GROUP_BOID;
		}
	for (j = 0; j < npreds[s]; j++) {
		fr->id[fr->n] = preds[s][j] * 1009u + preds[s][j] * preds[s][j];
		fr->group[fr->n++] = TRAJ_GROUP_PREDATOR;
	}
	for (j = 0; j < fr->n; j++)
		for (f = 0; f < nf; f++)
			fr->v[f][j] = hue && f == nf - 1 ?
				(fr->group[j] ? 0.0f : (float)fmod(0.0137 * fr->id[j] + 0.01 * k, 1.0)) :
				(float)(f + 1) * (float)sin(1e-5 * fr->id[j] + 0.1 * k + fr->group[j]);
}

static void write_agents(const char *path, enum traj_format fmt, int dims, int hue,
			 double precision, uint32_t interval, const struct agframe *fr, int nframes)
{
	struct util_err err = {0};
	struct traj_writer *w = open_writer(path, fmt, dims, hue, TRAJ_FLAG_AGENTS, AG_MAX, 7,
						 "test", "{\"seed\": 7}", 1, precision, &err);
	int k, f;

	ck_assert_msg(w != NULL, "%s", err.msg);
	if (interval)
		traj_writer_set_key_interval(w, interval);
	for (k = 0; k < nframes; k++) {
		float *v[TRAJ_FIELDS_MAX] = {0};
		struct traj_agents a;

		for (f = 0; f < 2 * dims + hue; f++)
			v[f] = (float *)fr[k].v[f];
		a.n = fr[k].n;
		a.id = (uint32_t *)fr[k].id;
		a.group = (uint32_t *)fr[k].group;
		ck_assert_msg(traj_write_frame_agents(w, fr[k].step, v, &a, &err) == 0, "%s", err.msg);
	}
	ck_assert_msg(traj_writer_close(w, TRAJ_COMPLETE, &err) == 0, "%s", err.msg);
}

/* Reads every frame of path with its agents; returns the reader when keep. */
static struct traj_reader *read_agents(const char *path, struct agframe *fr, int *nframes,
				       char digest[TRAJ_DIGEST_HEX], int keep)
{
	struct util_err err = {0};
	struct traj_reader *r = open_reader(path, &err);
	int rc, f;

	ck_assert_msg(r != NULL, "%s: %s", path, err.msg);
	ck_assert_int_eq(traj_reader_header(r)->has_agents, 1);
	ck_assert_uint_eq(traj_reader_header(r)->flags, TRAJ_FLAG_AGENTS);
	for (*nframes = 0;; (*nframes)++) {
		float *v[TRAJ_FIELDS_MAX] = {0};
		struct traj_agents a;

		ck_assert_int_lt(*nframes, 2 * AG_FRAMES);
		memset(&fr[*nframes], 0xff, sizeof fr[*nframes]);
		for (f = 0; f < traj_reader_header(r)->fields; f++)
			v[f] = fr[*nframes].v[f];
		a.id = fr[*nframes].id;
		a.group = fr[*nframes].group;
		rc = traj_read_frame_agents(r, &fr[*nframes].step, v, &a, &err);
		ck_assert_msg(rc >= 0, "%s: %s", path, err.msg);
		if (rc == 0)
			break;
		fr[*nframes].n = (size_t)a.n;
	}
	traj_reader_digest(r, digest);
	if (keep)
		return r;
	traj_reader_close(r);
	return NULL;
}

/* Frames equal: steps, counts, ids, groups, and the values bit for bit
 * (precision 0) or within precision/2. */
static void assert_same_agents(const struct agframe *a, const struct agframe *b, int n, int nf,
			       double precision, const char *what)
{
	int k, f;
	size_t i;

	for (k = 0; k < n; k++) {
		ck_assert_uint_eq(a[k].step, b[k].step);
		ck_assert_msg(a[k].n == b[k].n, "%s: frame %d: %zu agents, %zu expected", what, k,
			      b[k].n, a[k].n);
		ck_assert_msg(memcmp(a[k].id, b[k].id, a[k].n * 4) == 0 &&
			      memcmp(a[k].group, b[k].group, a[k].n * 4) == 0,
			      "%s: frame %d: other ids or groups", what, k);
		for (f = 0; f < nf; f++)
			for (i = 0; i < a[k].n; i++)
				ck_assert_msg(precision > 0 ?
					      2.0 * fabs((double)a[k].v[f][i] - b[k].v[f][i]) <= precision :
					      memcmp(&a[k].v[f][i], &b[k].v[f][i], 4) == 0,
					      "%s: frame %d field %d agent %zu: %.9g read as %.9g", what,
					      k, f, i, a[k].v[f][i], b[k].v[f][i]);
	}
}

/* Files with agents round-trip in every format, 2D and 3D, with and
 * without a hue: counts that change, sparse ids, predators; a frame whose
 * count differs from the one before is a key frame; the digest is the
 * same in bin, csv and csv.gz; random access crosses count changes. */
START_TEST(test_agents_round_trip)
{
	static const char *const NAMES[] = {"a.bin", "a.csv", "a.csv.gz", "al.bin"};
	static const enum traj_format FMTS[] = {TRAJ_BIN, TRAJ_CSV, TRAJ_CSV_GZ, TRAJ_BIN};
	static const int order[] = {11, 2, 3, 4, 5, 9, 0, 8, 8, 6, 7, 1, 10, 3};
	const int dims = 2 + _i / 2, hue = _i % 2, nf = 2 * dims + hue;
	const uint32_t interval = 4;
	struct agframe *fr = calloc(AG_FRAMES, sizeof *fr), *got = calloc(2 * AG_FRAMES, sizeof *got);
	char digest[4][TRAJ_DIGEST_HEX], d2[TRAJ_DIGEST_HEX], line[128];
	struct util_err err = {0};
	struct traj_reader *r;
	size_t most = 0;
	int k, j, n, changes = 0, f;
	FILE *fp;

	make_dir();
	for (k = 0; k < AG_FRAMES; k++) {
		make_agents(&fr[k], k, dims, hue);
		most = fr[k].n > most ? fr[k].n : most;
		changes += k > 0 && fr[k].n != fr[k - 1].n;
	}
	ck_assert_int_ge(changes, 3);
	for (j = 0; j < 4; j++) {
		write_agents(path_in(NAMES[j]), FMTS[j], dims, hue, j == 3 ? 1e-3 : 0, interval, fr,
			     AG_FRAMES);
		r = read_agents(path_in(NAMES[j]), got, &n, digest[j], 1);
		ck_assert_int_eq(n, AG_FRAMES);
		ck_assert_int_eq(traj_reader_header(r)->fields, nf);
		ck_assert_int_eq(traj_reader_header(r)->has_hue, hue);
		/* the binary header keeps the writer's count; CSV has the largest frame */
		ck_assert_uint_eq(traj_reader_header(r)->count, FMTS[j] == TRAJ_BIN ? AG_MAX : most);
		assert_same_agents(fr, got, AG_FRAMES, nf, j == 3 ? 1e-3 : 0, NAMES[j]);
		if (FMTS[j] == TRAJ_BIN) {
			/* a key frame on the interval and wherever the count changes */
			uint64_t keys = 0;

			ck_assert_int_eq(traj_reader_indexed(r), 1);
			traj_reader_close(r);
			r = open_reader(path_in(NAMES[j]), &err);
			ck_assert_int_eq(traj_reader_load_index(r, &err), 1);
			for (k = 0; k < AG_FRAMES; k++) {
				const struct traj_index_entry *e = traj_reader_index_entry(r, (uint64_t)k);
				int key = k % (int)interval == 0 || fr[k].n != fr[k - 1].n;

				ck_assert_msg(traj_codec_is_key(e->codec) == key, "%s: frame %d is%s a "
					      "key frame", NAMES[j], k, key ? " not" : "");
				ck_assert_uint_le(e->back, interval - 1);
				ck_assert_uint_eq(e->codec, j == 3 ? (key ? TRAJ_CODEC_QUANT :
					TRAJ_CODEC_QUANT_DELTA) : (key ? TRAJ_CODEC_SHUFFLE : TRAJ_CODEC_XOR));
				keys += (uint64_t)key;
			}
			ck_assert_uint_lt(keys, AG_FRAMES); /* there are delta frames too */
			/* random access, across the count changes, equals reading in order */
			for (k = 0; k < (int)(sizeof order / sizeof order[0]); k++) {
				struct agframe one;
				float *v[TRAJ_FIELDS_MAX] = {0};
				struct traj_agents a = {0, one.id, one.group};

				for (f = 0; f < nf; f++)
					v[f] = one.v[f];
				ck_assert_msg(traj_read_frame_at_agents(r, (uint64_t)order[k], &one.step,
									 v, &a, &err) == 1, "%s", err.msg);
				one.n = (size_t)a.n;
				assert_same_agents(&got[order[k]], &one, 1, nf, 0, "random access");
			}
			/* the calls without agents refuse such a file, saying why */
			{
				uint64_t step;
				float *v[TRAJ_FIELDS_MAX] = {got[0].v[0], got[0].v[1], got[0].v[2],
							     got[0].v[3], got[0].v[4], got[0].v[5],
							     got[0].v[6]};

				ck_assert_int_eq(traj_read_frame_at(r, 0, &step, v, &err), -1);
				ck_assert_ptr_nonnull(strstr(err.msg, "traj_read_frame_agents"));
				traj_reader_close(r);
				r = open_reader(path_in(NAMES[j]), &err);
				ck_assert_int_eq(traj_read_frame(r, &step, v, &err), -1);
				ck_assert_ptr_nonnull(strstr(err.msg, "traj_read_frame_agents"));
			}
		}
		traj_reader_close(r);
	}
	ck_assert_str_eq(digest[0], digest[1]);
	ck_assert_str_eq(digest[0], digest[2]);
	ck_assert_str_ne(digest[0], digest[3]);
	fp = fopen(path_in("a.csv"), "r");
	ck_assert_ptr_nonnull(fgets(line, sizeof line, fp));
	fclose(fp);
	ck_assert_str_eq(line, dims == 2 ? (hue ? "step,group,id,x,y,vx,vy,hue\n" :
					    "step,group,id,x,y,vx,vy\n") :
			       (hue ? "step,group,id,x,y,z,vx,vy,vz,hue\n" :
				"step,group,id,x,y,z,vx,vy,vz\n"));
	/* the lossy file converted to CSV (as convert does) keeps its digest */
	{
		int nl;
		struct agframe *lossy = calloc(2 * AG_FRAMES, sizeof *lossy);

		free(read_agents(path_in("al.bin"), lossy, &nl, d2, 0));
		write_agents(path_in("al.csv"), TRAJ_CSV, dims, hue, 0, 0, lossy, nl);
		read_agents(path_in("al.csv"), got, &n, d2, 0);
		ck_assert_str_eq(d2, digest[3]);
		assert_same_agents(lossy, got, nl, nf, 0, "lossy bin -> csv");
		write_agents(path_in("back.bin"), TRAJ_BIN, dims, hue, 0, 0, got, n);
		read_agents(path_in("back.bin"), got, &n, d2, 0);
		ck_assert_str_eq(d2, digest[3]);
		free(lossy);
	}
	free(fr);
	free(got);
	remove_dir();
}
END_TEST

/* Frames of no agents: in the binary format a frame of count 0 (a key
 * frame, and a delta frame after it, lossless and lossy); CSV cannot hold
 * them and writes no line. A file without the flag read with the agents
 * call gives ids 0..n-1, all boids. */
START_TEST(test_agents_empty_frames)
{
	static const size_t counts[] = {3, 0, 0, 2, 2, 0};
	struct agframe fr[6], got[12];
	char d[3][TRAJ_DIGEST_HEX];
	int k, n, p;
	size_t i;

	make_dir();
	for (k = 0; k < 6; k++) {
		make_agents(&fr[k], 4 + k, 2, 1);
		fr[k].n = counts[k];
		for (i = 0; i < fr[k].n; i++)
			fr[k].group[i] = TRAJ_GROUP_BOID, fr[k].v[4][i] = 0.5f;
	}
	for (p = 0; p < 2; p++) {
		struct traj_reader *r;

		write_agents(path_in("e.bin"), TRAJ_BIN, 2, 1, p ? 0.01 : 0, 100, fr, 6);
		r = read_agents(path_in("e.bin"), got, &n, d[p], 1);
		ck_assert_int_eq(n, 6);
		assert_same_agents(fr, got, 6, 5, p ? 0.01 : 0, "frames of no agents");
		/* key, key (count changed), delta of 0, key, delta, key */
		ck_assert_uint_eq(traj_reader_codec_frames(r, p ? TRAJ_CODEC_QUANT : TRAJ_CODEC_SHUFFLE), 4);
		ck_assert_uint_eq(traj_reader_codec_frames(r, p ? TRAJ_CODEC_QUANT_DELTA : TRAJ_CODEC_XOR), 2);
		traj_reader_close(r);
	}
	write_agents(path_in("e.csv"), TRAJ_CSV, 2, 1, 0, 0, fr, 6);
	read_agents(path_in("e.csv"), got, &n, d[2], 0);
	ck_assert_int_eq(n, 3); /* frames 0, 3 and 4 */
	ck_assert(got[0].step == fr[0].step && got[1].step == fr[3].step &&
		  got[2].step == fr[4].step);
	assert_same_agents(&fr[3], &got[1], 2, 5, 0, "CSV without the frames of no agents");
	/* a file without the flag, read with the agents call */
	{
		struct util_err err = {0};
		struct traj_reader *r;
		float *v[TRAJ_FIELDS_MAX] = {0};
		uint32_t id[60], group[60];
		struct traj_agents a = {0, id, group};
		uint64_t step;

		write_run(SCEN2D_EVERY1, path_in("plain.bin"), TRAJ_BIN, UINT64_MAX);
		r = open_reader(path_in("plain.bin"), &err);
		ck_assert_int_eq(traj_reader_header(r)->has_agents, 0);
		for (k = 0; k < 4; k++)
			v[k] = malloc(60 * sizeof(float));
		memset(group, 0xff, sizeof group);
		ck_assert_int_eq(traj_read_frame_agents(r, &step, v, &a, &err), 1);
		ck_assert_uint_eq(a.n, 60);
		for (i = 0; i < 60; i++)
			ck_assert(id[i] == i && group[i] == TRAJ_GROUP_BOID);
		ck_assert_int_eq(traj_read_frame_at_agents(r, 14, &step, v, &a, &err), 1);
		ck_assert_uint_eq(step, 14);
		ck_assert_uint_eq(a.n, 60);
		traj_reader_close(r);
		for (k = 0; k < 4; k++)
			free(v[k]);
	}
	remove_dir();
}
END_TEST

/* The writer refuses agents it cannot store as the format says. */
START_TEST(test_agents_writer_refuses)
{
	struct util_err err = {0};
	struct traj_writer *w;
	struct agframe fr;
	float *v[TRAJ_FIELDS_MAX] = {0};
	struct traj_agents a;
	int f;

	make_dir();
	make_agents(&fr, 6, 2, 1);
	for (f = 0; f < 5; f++)
		v[f] = fr.v[f];
	a.id = fr.id;
	a.group = fr.group;
	ck_assert_ptr_null(open_writer(path_in("w.bin"), TRAJ_BIN, 2, 1, 4, 10, 1, "t", "{}",
					    1, 0, &err));
	ck_assert_ptr_nonnull(strstr(err.msg, "flags"));
	w = open_writer(path_in("w.bin"), TRAJ_BIN, 2, 1, TRAJ_FLAG_AGENTS, AG_MAX, 1, "t",
			     "{\"seed\": 1}", 1, 0, &err);
	ck_assert_ptr_nonnull(w);
	ck_assert_int_eq(traj_write_frame(w, 0, v, &err), -1);
	a.n = AG_MAX + 1;
	ck_assert_int_eq(traj_write_frame_agents(w, 0, v, &a, &err), -1);
	a.n = fr.n;
	fr.group[1] = 2;
	ck_assert_int_eq(traj_write_frame_agents(w, 0, v, &a, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.msg, "group 2"));
	fr.group[1] = TRAJ_GROUP_BOID;
	fr.id[1] = fr.id[0];
	ck_assert_int_eq(traj_write_frame_agents(w, 0, v, &a, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.msg, "order"));
	fr.id[1] = fr.id[2] - 1;
	ck_assert_int_eq(fr.group[fr.n - 1], TRAJ_GROUP_PREDATOR);
	fr.v[4][fr.n - 1] = 0.25f;
	ck_assert_int_eq(traj_write_frame_agents(w, 0, v, &a, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.msg, "hue"));
	fr.v[4][fr.n - 1] = 0;
	ck_assert_msg(traj_write_frame_agents(w, 0, v, &a, &err) == 0, "%s", err.msg);
	traj_writer_abort(w, NULL);
	remove_dir();
}
END_TEST

/* A frame record made by hand: step, count, codec, the stream T (R
 * bytes) as one zlib chunk, and the CRC. Returns its length. */
static size_t make_frame(unsigned char *out, uint64_t step, uint32_t count, uint32_t codec,
			 const unsigned char *t, size_t rlen)
{
	uLongf zl = compressBound((uLong)rlen);
	unsigned char *z = malloc(zl);
	size_t k = rlen ? 1 : 0, plen;
	uLong crc;

	ck_assert_int_eq(compress2(z, &zl, t, (uLong)rlen, 6), Z_OK);
	plen = 8 + 4 * k + (k ? zl : 0);
	memcpy(out, TRAJ_FRAME_TAG, 4);
	traj_put_u64(out + 4, step);
	traj_put_u32(out + 12, count);
	traj_put_u32(out + 16, codec);
	traj_put_u64(out + 20, rlen);
	traj_put_u64(out + 28, plen);
	traj_put_u32(out + 40, TRAJ_CHUNK_SIZE);
	traj_put_u32(out + 44, (uint32_t)k);
	if (k) {
		traj_put_u32(out + 48, (uint32_t)zl);
		memcpy(out + 52, z, zl);
	}
	crc = crc32(crc32(0L, out, 36), out + 40, (uInt)plen);
	traj_put_u32(out + 36, (uint32_t)crc);
	free(z);
	return TRAJ_FRAME_HEADER + plen;
}

/* Codec 1 or 2 stream of a 2D frame without hue (x, y, vx, vy, id, group):
 * byte planes of the u32 values, XOR base when given. */
static size_t planes_stream(unsigned char *t, uint32_t n, const uint32_t *id, const uint32_t *g,
			    const unsigned char *base)
{
	uint32_t f, b, i;

	for (f = 0; f < 6; f++)
		for (b = 0; b < 4; b++)
			for (i = 0; i < n; i++) {
				uint32_t u = f < 4 ? 0x3f800000u + f * 7 + i : f == 4 ? id[i] : g[i];

				t[(f * 4 + b) * n + i] = (unsigned char)(u >> (8 * b)) ^
							 (base ? base[(f * 4 + b) * n + i] : 0);
			}
	return (size_t)n * 24;
}

/* Lossy (codec 3) stream of the same fields: q = i for the floats, the
 * ids and groups as they are, and one exception at slot exc (if not -1). */
static size_t quant_stream(unsigned char *t, uint32_t n, const uint32_t *id, const uint32_t *g,
			   long exc)
{
	size_t off = 16 + 6, i, f;

	traj_put_f64(t, 0.5);
	traj_put_u64(t + 8, exc >= 0 ? 1 : 0);
	for (f = 0; f < 6; f++) {
		t[16 + f] = 8;
		for (i = 0; i < 8 * (size_t)n; i++) {
			uint64_t v = f < 4 ? traj_zigzag(i % n) : traj_zigzag(f == 4 ? id[i % n] : g[i % n]);

			t[off + i] = (unsigned char)(v >> (8 * (i / n)));
		}
		off += 8 * (size_t)n;
	}
	if (exc >= 0) {
		traj_put_u64(t + off, (uint64_t)exc);
		traj_put_u32(t + off + 8, 0x7fc00000u);
		off += 12;
	}
	return off;
}

/* The header of a 2D file with agents, without hue, at most 8 a frame;
 * its flags set to flags (the CRC recomputed). */
static long agents_header(unsigned char *b, uint32_t flags)
{
	struct agframe fr;
	unsigned char *all;
	long size, len;

	make_agents(&fr, 0, 2, 0);
	fr.n = 0;
	write_agents(path_in("h.bin"), TRAJ_BIN, 2, 0, 0, 0, &fr, 1);
	all = slurp(path_in("h.bin"), &size);
	ck_assert_uint_eq(traj_get_u32(all + 12), TRAJ_FLAG_AGENTS);
	ck_assert_uint_eq(traj_get_u32(all + 32), 6);
	len = TRAJ_HEADER_FIXED + (long)traj_get_u32(all + 36) + (long)traj_get_u32(all + 40);
	memcpy(b, all, (size_t)len + 4);
	traj_put_u32(b + 12, flags);
	traj_put_u64(b + 16, 8);
	traj_put_u32(b + len, (uint32_t)crc32(0L, b, (uInt)len));
	free(all);
	return len + 4;
}

/* Reads the file of b: the frames read, and the error (rc -1, -2 at open). */
static int read_built(const unsigned char *b, long len, int *rc, char *msg)
{
	struct util_err err = {0};
	struct traj_reader *r;
	float x[4][8], *v[TRAJ_FIELDS_MAX] = {x[0], x[1], x[2], x[3]};
	uint32_t id[8], g[8];
	struct traj_agents a = {0, id, g};
	uint64_t step;
	int n = 0;

	spill(path_in("built.bin"), b, len);
	r = open_reader(path_in("built.bin"), &err);
	msg[0] = '\0';
	if (r == NULL) {
		*rc = -2;
		strcpy(msg, err.msg);
		return 0;
	}
	while ((*rc = traj_read_frame_agents(r, &step, v, &a, &err)) == 1)
		n++;
	strcpy(msg, err.msg);
	traj_reader_close(r);
	return n;
}

/* The reader refuses what the format does not allow: an unknown flag, a
 * group of 2, ids out of order, a delta frame whose count differs from
 * the frame before it, a frame above the header's count, exceptions in
 * the id and group fields. Each damaged file is made from a sound one
 * that reads, so the tests can tell. */
START_TEST(test_agents_reader_refuses)
{
	static const uint32_t id_ok[4] = {2, 9, 40, 3}, g_ok[4] = {0, 0, 0, 1};
	static const uint32_t id_bad[4] = {2, 40, 9, 3}, g_two[4] = {0, 0, 0, 2};
	static const uint32_t g_back[4] = {0, 1, 0, 1}, id_dup[4] = {2, 9, 9, 3};
	unsigned char *b = malloc(1 << 16), t[4096], base[4096];
	char msg[UTIL_ERR_MAX];
	long hl, len;
	int rc;

	make_dir();
	/* flags: 1 reads, 5 and 4 do not; with 2 (Zstandard) the chunk, a
	 * zlib stream shorter than its 48 bytes, is not a Zstandard frame */
	hl = agents_header(b, TRAJ_FLAG_AGENTS);
	len = hl + (long)make_frame(b + hl, 0, 4, 1, t, planes_stream(t, 4, id_ok, g_ok, NULL));
	ck_assert_msg(read_built(b, len, &rc, msg) == 1 && rc == 0, "%s", msg);
	agents_header(b, TRAJ_FLAG_AGENTS | 4);
	read_built(b, len, &rc, msg);
	ck_assert_msg(rc == -2 && strstr(msg, "flags 0x5"), "%s", msg);
	agents_header(b, 4);
	read_built(b, len, &rc, msg);
	ck_assert_msg(rc == -2 && strstr(msg, "flags 0x4"), "%s", msg);
	agents_header(b, TRAJ_FLAG_AGENTS | TRAJ_FLAG_ZSTD);
	ck_assert_int_eq(read_built(b, len, &rc, msg), 0);
	ck_assert_msg(rc == -1 && strstr(msg, "frame 0: payload does not decompress"), "%s", msg);
	agents_header(b, TRAJ_FLAG_AGENTS);
	/* a group of 2; ids out of order; a repeated id; groups not in order */
	len = hl + (long)make_frame(b + hl, 0, 4, 1, t, planes_stream(t, 4, id_ok, g_two, NULL));
	ck_assert_int_eq(read_built(b, len, &rc, msg), 0);
	ck_assert_msg(rc == -1 && strstr(msg, "frame 0: damaged agents") && strstr(msg, "group 2"),
		      "%s", msg);
	len = hl + (long)make_frame(b + hl, 0, 4, 1, t, planes_stream(t, 4, id_bad, g_ok, NULL));
	ck_assert_int_eq(read_built(b, len, &rc, msg), 0);
	ck_assert_msg(rc == -1 && strstr(msg, "out of (group, id) order"), "%s", msg);
	len = hl + (long)make_frame(b + hl, 0, 4, 1, t, planes_stream(t, 4, id_dup, g_ok, NULL));
	ck_assert_int_eq(read_built(b, len, &rc, msg), 0);
	ck_assert_msg(rc == -1 && strstr(msg, "out of (group, id) order"), "%s", msg);
	len = hl + (long)make_frame(b + hl, 0, 4, 1, t, planes_stream(t, 4, id_ok, g_back, NULL));
	ck_assert_int_eq(read_built(b, len, &rc, msg), 0);
	ck_assert_msg(rc == -1 && strstr(msg, "out of (group, id) order"), "%s", msg);
	/* a delta frame: of the same count it reads, of another count it is refused */
	len = hl + (long)make_frame(b + hl, 0, 4, 1, base, planes_stream(base, 4, id_ok, g_ok, NULL));
	{
		long l2 = len + (long)make_frame(b + len, 1, 4, 2, t,
						 planes_stream(t, 4, id_ok, g_ok, base));

		ck_assert_msg(read_built(b, l2, &rc, msg) == 2 && rc == 0, "%s", msg);
		l2 = len + (long)make_frame(b + len, 1, 3, 2, t, planes_stream(t, 3, id_ok, g_ok, NULL));
		ck_assert_int_eq(read_built(b, l2, &rc, msg), 1);
		ck_assert_msg(rc == -1 && strstr(msg, "frame 1: a delta frame of 3 agents after a "
						 "frame of 4"), "%s", msg);
		/* a key frame of another count is fine */
		l2 = len + (long)make_frame(b + len, 1, 3, 1, t, planes_stream(t, 3, id_ok, g_ok, NULL));
		ck_assert_msg(read_built(b, l2, &rc, msg) == 2 && rc == 0, "%s", msg);
	}
	/* more agents than the header's count (8) */
	{
		uint32_t many[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9}, g0[9] = {0};

		len = hl + (long)make_frame(b + hl, 0, 8, 1, t, planes_stream(t, 8, many, g0, NULL));
		ck_assert_msg(read_built(b, len, &rc, msg) == 1 && rc == 0, "%s", msg);
		len = hl + (long)make_frame(b + hl, 0, 9, 1, t, planes_stream(t, 9, many, g0, NULL));
		ck_assert_int_eq(read_built(b, len, &rc, msg), 0);
		ck_assert_msg(rc == -1 && strstr(msg, "damaged frame header"), "%s", msg);
	}
	/* lossy: an exception in a float field reads, in the id or group field not */
	len = hl + (long)make_frame(b + hl, 0, 4, 3, t, quant_stream(t, 4, id_ok, g_ok, 15));
	ck_assert_msg(read_built(b, len, &rc, msg) == 1 && rc == 0, "%s", msg);
	len = hl + (long)make_frame(b + hl, 0, 4, 3, t, quant_stream(t, 4, id_ok, g_ok, 16));
	ck_assert_int_eq(read_built(b, len, &rc, msg), 0);
	ck_assert_msg(rc == -1 && strstr(msg, "damaged lossy frame"), "%s", msg);
	len = hl + (long)make_frame(b + hl, 0, 4, 3, t, quant_stream(t, 4, id_ok, g_two, -1));
	ck_assert_int_eq(read_built(b, len, &rc, msg), 0);
	ck_assert_msg(rc == -1 && strstr(msg, "group 2"), "%s", msg);
	/* CSV: a group of 2, ids out of order */
	{
		static const char *const bad[] = {"0,2,1,1,1,1,1\n", "0,0,5,1,1,1,1\n0,0,4,1,1,1,1\n"};
		size_t i;

		for (i = 0; i < 2; i++) {
			FILE *fp = fopen(path_in("bad.csv"), "w");
			struct util_err err = {0};
			struct traj_reader *r;
			float x[4][8], *v[TRAJ_FIELDS_MAX] = {x[0], x[1], x[2], x[3]};
			uint32_t id[8], g[8];
			struct traj_agents a = {0, id, g};
			uint64_t step;

			fprintf(fp, "step,group,id,x,y,vx,vy\n0,0,1,1,1,1,1\n%s", bad[i]);
			fclose(fp);
			r = open_reader(path_in("bad.csv"), &err);
			ck_assert_msg(r != NULL, "%s", err.msg);
			ck_assert_int_eq(traj_read_frame_agents(r, &step, v, &a, &err), -1);
			ck_assert_msg(strstr(err.msg, i ? "order" : "group 2") != NULL, "%s", err.msg);
			traj_reader_close(r);
		}
	}
	free(b);
	remove_dir();
}
END_TEST

/* The writer stores chunks of noise and compresses the rest: random
 * bytes are noise; a plane of float exponents, a constant and half noise,
 * half constant are not; fewer than 1024 samples never are; the threshold
 * lies between 116 and 140 values equally likely. */
/* Codec 5 in both forms of the reader's input: positions predicted exactly
 * (every position moved by x + v dt, as the integrators do) leave planes
 * of zeros, so the file is far smaller than with XOR deltas; values the
 * prediction cannot handle (NaN and infinite positions or velocities, a
 * prediction that overflows or is NaN, negative zeros, subnormals) and
 * frames steps apart (h a multiple of dt) still read back bit for bit. */
START_TEST(test_predict_exact)
{
	enum { N = 5000, FRAMES = 20 };
	static const uint64_t steps[FRAMES] = {0, 1, 2, 5, 6, 7, 8, 9, 10, 11, 12, 13,
					       14, 15, 16, 17, 18, 40, 41, 42};
	const double dt = 0.03;
	float *frames = malloc((size_t)FRAMES * 4 * N * sizeof(float));
	long size[2];
	int pass, k, d;
	uint32_t lcg = 12345;
	size_t i;

	ck_assert_ptr_nonnull(frames);
	make_dir();
	for (i = 0; i < (size_t)4 * N; i++) {
		lcg = lcg * 1664525u + 1013904223u;
		frames[i] = (float)(lcg >> 8) / 16777216.0f * (i < 2 * N ? 100.0f : 2.0f) -
			    (i < 2 * N ? 0.0f : 1.0f);
	}
	/* slots 0..9 of x and vx: the awkward values */
	{
		const float x[10] = {NAN, INFINITY, -INFINITY, INFINITY, -0.0f, 1e-40f, 3e38f,
				     -3e38f, 0.0f, 7.0f};
		const float v[10] = {1.0f, 1.0f, 2.0f, -INFINITY, -0.0f, 1e-41f, 3e38f, -3e38f,
				     NAN, 1e-45f};

		for (i = 0; i < 10; i++) {
			frames[i] = x[i];
			frames[2 * N + i] = v[i];
		}
	}
	for (k = 1; k < FRAMES; k++) {
		const double h = (double)(steps[k] - steps[k - 1]) * dt;
		const float *p = frames + (size_t)(k - 1) * 4 * N;
		float *c = frames + (size_t)k * 4 * N;

		for (d = 0; d < 2; d++)
			for (i = 0; i < N; i++) {
				c[(2 + d) * N + i] = p[(2 + d) * N + i];
				c[d * N + i] = (float)((double)p[d * N + i] +
						       (double)p[(2 + d) * N + i] * h);
			}
		/* a few boids that turn, and one whose position jumps (a wrap) */
		for (i = 100; i < 140; i++)
			c[2 * N + i] = -c[2 * N + i];
		c[N + 200] += 50.0f;
	}
	for (pass = 0; pass < 2; pass++) {
		struct util_err err = {0};
		struct traj_writer *w = open_writer(path_in("p.bin"), TRAJ_BIN, 2, 0, 0, N, 1,
						    "boidsim test", "{\"seed\": 1}", 1, 0, &err);
		struct frames got;

		ck_assert_msg(w != NULL, "%s", err.msg);
		traj_writer_set_chunk_size(w, 4096);
		if (pass == 0)
			traj_writer_set_predict(w, dt);
		for (k = 0; k < FRAMES; k++) {
			float *f[TRAJ_FIELDS_MAX] = {0};

			for (d = 0; d < 4; d++)
				f[d] = frames + ((size_t)k * 4 + d) * N;
			ck_assert_msg(traj_write_frame(w, steps[k], f, &err) == 0, "%s", err.msg);
		}
		ck_assert_msg(traj_writer_close(w, TRAJ_COMPLETE, &err) == 0, "%s", err.msg);
		size[pass] = file_size(path_in("p.bin"));
		load_frames(path_in("p.bin"), &got, 1);
		ck_assert_int_eq(got.n, FRAMES);
		for (k = 0; k < FRAMES; k++) {
			ck_assert_uint_eq(got.steps[k], steps[k]);
			ck_assert_msg(memcmp(frame_values(&got, k), frames + (size_t)k * 4 * N,
					     (size_t)4 * N * sizeof(float)) == 0,
				      "pass %d: frame %d differs", pass, k);
		}
		ck_assert_uint_eq(traj_reader_codec_frames(got.r, TRAJ_CODEC_SHUFFLE), 2);
		ck_assert_uint_eq(traj_reader_codec_frames(got.r, pass == 0 ? TRAJ_CODEC_PREDICT
									   : TRAJ_CODEC_XOR), FRAMES - 2);
		free_frames(&got);
	}
	/* the two key frames are alike; the deltas lost their position planes */
	ck_assert_msg(size[0] * 2 < size[1], "predicted %ld bytes, XOR %ld", size[0], size[1]);
	free(frames);
	remove_dir();
}
END_TEST

/* Frames written from the writer's own arrays (traj_writer_fields, kept as
 * the next delta's base) are the bytes of frames written from the caller's
 * (copied), in any mix of the two: lossless with predicted positions, with
 * agents whose count changes, and lossy. */
START_TEST(test_writer_fields_same_bytes)
{
	enum { N = 3000, FRAMES = 14 };
	/* per frame: 0 the caller's arrays, 1 the writer's */
	static const int mixes[3][FRAMES] = {
		{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
		{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1},
		{1, 0, 1, 1, 0, 0, 1, 0, 1, 1, 1, 0, 0, 1}};
	static const double precisions[2] = {0, 1e-3};
	float *frames = malloc((size_t)FRAMES * 4 * N * sizeof(float));
	uint32_t *id = malloc(N * sizeof *id), *group = calloc(N, sizeof *group);
	uint32_t lcg = 777;
	size_t i;
	int agents, pr, m, k, d;

	ck_assert(frames && id && group);
	make_dir();
	for (i = 0; i < N; i++)
		id[i] = (uint32_t)i;
	for (i = 0; i < (size_t)FRAMES * 4 * N; i++) {
		size_t k0 = i / (4 * N), r = i % (4 * N);

		lcg = lcg * 1664525u + 1013904223u;
		/* positions moving with their velocities, a few jumps */
		frames[i] = k0 == 0 || (lcg >> 28) == 0
			? (float)(lcg >> 8) / 16777216.0f * 50.0f
			: frames[i - 4 * N] + (r < 2 * N ? 0.03f * frames[i - 4 * N + 2 * N] : 0.0f);
	}
	for (agents = 0; agents < 2; agents++)
		for (pr = 0; pr < 2; pr++) {
			unsigned char *ref = NULL;
			long ref_size = 0;

			for (m = 0; m < 3; m++) {
				struct util_err err = {0};
				struct traj_writer *w = open_writer(
					path_in("f.bin"), TRAJ_BIN, 2, 0, agents ? TRAJ_FLAG_AGENTS : 0,
					N, 1, "boidsim test", "{\"seed\": 1}", 1, precisions[pr], &err);
				float *const *last = NULL;
				unsigned char *b;
				long size;

				ck_assert_msg(w != NULL, "%s", err.msg);
				traj_writer_set_chunk_size(w, 4096);
				traj_writer_set_key_interval(w, 5);
				traj_writer_set_predict(w, 0.03);
				for (k = 0; k < FRAMES; k++) {
					/* agents: the count drops for two frames */
					struct traj_agents a = {agents && (k == 6 || k == 7) ? N - 7 : N,
								id, group};
					float *mine[TRAJ_FIELDS_MAX] = {0};
					float *const *f = mine;
					int rc;

					for (d = 0; d < 4; d++)
						mine[d] = frames + ((size_t)k * 4 + d) * N;
					if (mixes[m][k]) {
						f = traj_writer_fields(w, &err);
						ck_assert_msg(f != NULL, "%s", err.msg);
						/* lossless: two sets in turn, never the one
						 * just written */
						if (pr == 0 && last && mixes[m][k - 1])
							ck_assert_ptr_ne(f[0], last[0]);
						for (d = 0; d < 4; d++)
							memcpy(f[d], mine[d], (size_t)a.n * sizeof(float));
					}
					rc = agents ? traj_write_frame_agents(w, (uint64_t)k, f, &a, &err)
						    : traj_write_frame(w, (uint64_t)k, f, &err);
					ck_assert_msg(rc == 0, "%s", err.msg);
					last = f;
				}
				ck_assert_msg(traj_writer_close(w, TRAJ_COMPLETE, &err) == 0, "%s",
					      err.msg);
				b = slurp(path_in("f.bin"), &size);
				if (m == 0) {
					struct frames got;

					ref = b;
					ref_size = size;
					/* the reference itself reads back, bit for bit */
					if (pr == 0 && !agents) {
						load_frames(path_in("f.bin"), &got, 1);
						ck_assert_int_eq(got.n, FRAMES);
						for (k = 0; k < FRAMES; k++)
							ck_assert_msg(memcmp(frame_values(&got, k),
									     frames + (size_t)k * 4 * N,
									     (size_t)4 * N * sizeof(float)) == 0,
								      "frame %d differs", k);
						free_frames(&got);
					}
					continue;
				}
				ck_assert_msg(size == ref_size && memcmp(b, ref, (size_t)size) == 0,
					      "agents %d, precision %g, mix %d: other bytes", agents,
					      precisions[pr], m);
				free(b);
			}
			free(ref);
		}
	/* the set just written, written again as the next frame: refused (its
	 * prediction would overwrite the positions); lossy frames keep no set */
	for (pr = 0; pr < 2; pr++) {
		struct util_err err = {0};
		struct traj_writer *w = open_writer(path_in("g.bin"), TRAJ_BIN, 2, 0, 0, N, 1,
						    "boidsim test", "{\"seed\": 1}", 1,
						    precisions[pr], &err);
		float *const *f;

		ck_assert_msg(w != NULL, "%s", err.msg);
		traj_writer_set_predict(w, 0.03);
		f = traj_writer_fields(w, &err);
		ck_assert_ptr_nonnull(f);
		for (d = 0; d < 4; d++)
			memcpy(f[d], frames + (size_t)d * N, N * sizeof(float));
		ck_assert_int_eq(traj_write_frame(w, 0, f, &err), 0);
		ck_assert_int_eq(traj_write_frame(w, 1, f, &err), pr == 0 ? -1 : 0);
		if (pr == 0)
			ck_assert_msg(strstr(err.msg, "arrays of the frame before") != NULL, "%s",
				      err.msg);
		traj_writer_abort(w, NULL);
	}
	free(frames);
	free(id);
	free(group);
	remove_dir();
}
END_TEST

START_TEST(test_noise_chunks)
{
	enum { LEN = 256 << 10 };
	unsigned char *b = malloc(LEN);
	uint32_t x = 2463534242u;
	size_t i;

	ck_assert_ptr_nonnull(b);
	for (i = 0; i < LEN; i++) {
		x ^= x << 13, x ^= x >> 17, x ^= x << 5; /* xorshift32 */
		b[i] = (unsigned char)(x >> 24);
	}
	ck_assert_int_eq(traj_chunk_is_noise(b, LEN), 1);
	ck_assert_int_eq(traj_chunk_is_noise(b, 16 * 1023), 0);
	ck_assert_int_eq(traj_chunk_is_noise(b, 16 * 1024), 1);
	memset(b, 0x41, LEN / 2);
	ck_assert_int_eq(traj_chunk_is_noise(b, LEN), 0);
	for (i = 0; i < LEN; i++) { /* top bytes of floats spread over [0, 1000) */
		float f = (float)(i % 1000) + 0.5f;
		uint32_t u;

		memcpy(&u, &f, sizeof u);
		b[i] = (unsigned char)(u >> 24);
	}
	ck_assert_int_eq(traj_chunk_is_noise(b, LEN), 0);
	memset(b, 0, LEN);
	ck_assert_int_eq(traj_chunk_is_noise(b, LEN), 0);
	/* The threshold, twice the pairs of uniform bytes: bytes spread over
	 * 140 values (1.83 times) are noise, over 116 (2.21 times) are not. */
	for (i = 0; i < LEN; i++) {
		x ^= x << 13, x ^= x >> 17, x ^= x << 5;
		b[i] = (unsigned char)(x % 140u);
	}
	ck_assert_int_eq(traj_chunk_is_noise(b, LEN), 1);
	for (i = 0; i < LEN; i++) {
		x ^= x << 13, x ^= x >> 17, x ^= x << 5;
		b[i] = (unsigned char)(x % 116u);
	}
	ck_assert_int_eq(traj_chunk_is_noise(b, LEN), 0);
	free(b);
}
END_TEST

/* Every chunk's stream is what a new zlib stream writes for its bytes
 * (Z_RLE at the level, or stored where they look like noise): chunks of
 * zeros, whose stream the writer makes once and copies, included. A run
 * in steer bounds at output.every 1 in chunks of 64 bytes: its position
 * planes are predicted exactly, so most of their chunks are zeros. */
START_TEST(test_chunks_are_deflates)
{
	static const struct wopts opt = {64, 4, 0, -1, 0, 1};
	static const char *scen =
		"{\"count\": 60, \"steps\": 14, \"seed\": 9,"
		" \"bounds\": {\"min\": [0, 0], \"max\": [6, 6], \"mode\": \"steer\"}}";
	long size, header_end, frame_end[64], index_end, off;
	unsigned char *all, raw[64], fresh[256];
	int nframes, k, zeros = 0, chunks = 0;

	make_dir();
	write_run_opts(scen, path_in("z.bin"), TRAJ_BIN, UINT64_MAX, &opt);
	all = slurp(path_in("z.bin"), &size);
	nframes = record_ends(all, size, &header_end, frame_end, 64, &index_end);
	ck_assert_int_eq(nframes, 15);
	off = header_end;
	for (k = 0; k < nframes; k++) {
		const unsigned char *pay = all + off + TRAJ_FRAME_HEADER;
		const uint32_t nk = traj_get_u32(pay + 4);
		const unsigned char *z = pay + 8 + 4 * (size_t)nk;
		uint32_t c;

		ck_assert_uint_eq(traj_get_u32(pay), 64);
		for (c = 0; c < nk; c++) {
			const uint32_t zl = traj_get_u32(pay + 8 + 4 * c);
			uLongf rl = sizeof raw;
			z_stream zs;
			int level, i, zero = 1;

			ck_assert_int_eq(uncompress(raw, &rl, z, zl), Z_OK);
			for (i = 0; i < (int)rl; i++)
				zero &= raw[i] == 0;
			zeros += zero && rl == 64;
			level = traj_chunk_is_noise(raw, rl) ? 0 : 1;
			memset(&zs, 0, sizeof zs);
			ck_assert_int_eq(deflateInit2(&zs, level, Z_DEFLATED, 15, 8,
						      level ? Z_RLE : Z_DEFAULT_STRATEGY), Z_OK);
			zs.next_in = raw;
			zs.avail_in = (uInt)rl;
			zs.next_out = fresh;
			zs.avail_out = sizeof fresh;
			ck_assert_int_eq(deflate(&zs, Z_FINISH), Z_STREAM_END);
			ck_assert_msg(zs.total_out == zl && memcmp(fresh, z, zl) == 0,
				      "frame %d, chunk %u (%s): %u bytes, a new stream writes %lu", k,
				      c, zero ? "zeros" : "data", zl, zs.total_out);
			deflateEnd(&zs);
			z += zl;
			chunks++;
		}
		off = frame_end[k];
	}
	ck_assert_msg(zeros > chunks / 4, "%d chunks of zeros of %d", zeros, chunks);
	free(all);
	remove_dir();
}
END_TEST

/* With Zstandard (the default), every chunk is what a new context writes
 * for its bytes at the level, with no checksum, or the bytes themselves
 * (stored) where they look like noise or no shorter frame exists; stored
 * chunks are exactly as long as their bytes and frames are shorter, so the
 * reader tells them apart. Chunks of 64 bytes of a run in steer bounds at
 * output.every 1 (as test_chunks_are_deflates), then 16 KiB chunks of a
 * larger flock, where some hold only the mantissas' noisy low bytes. */
START_TEST(test_chunks_are_zstd)
{
	static const struct wopts opt[2] = {{64, 4, 0, -1, 0, 0}, {16384, 4, 0, -1, 0, 0}};
	static const char *scen[2] = {
		"{\"count\": 60, \"steps\": 14, \"seed\": 9,"
		" \"bounds\": {\"min\": [0, 0], \"max\": [6, 6], \"mode\": \"steer\"}}",
		"{\"count\": 20000, \"steps\": 6, \"seed\": 9,"
		" \"bounds\": {\"min\": [0, 0], \"max\": [150, 150], \"mode\": \"wrap\"}}"};
	long size, header_end, frame_end[64], index_end, off;
	unsigned char *all, *raw = malloc(16384), *fresh = malloc(ZSTD_compressBound(16384));
	int nframes, k, t, stored = 0, frames = 0, noise = 0;
	ZSTD_DCtx *zd = ZSTD_createDCtx();

	ck_assert(raw && fresh && zd);
	make_dir();
	for (t = 0; t < 2; t++) {
		write_run_opts(scen[t], path_in("z.bin"), TRAJ_BIN, UINT64_MAX, &opt[t]);
		all = slurp(path_in("z.bin"), &size);
		ck_assert_uint_eq(traj_get_u32(all + 12), TRAJ_FLAG_ZSTD);
		nframes = record_ends(all, size, &header_end, frame_end, 64, &index_end);
		ck_assert_int_eq(nframes, t ? 7 : 15);
		off = header_end;
		for (k = 0; k < nframes; k++) {
			const unsigned char *pay = all + off + TRAJ_FRAME_HEADER;
			const uint64_t rlen = traj_get_u64(all + off + 20);
			const uint32_t nk = traj_get_u32(pay + 4), cs = traj_get_u32(pay);
			const unsigned char *z = pay + 8 + 4 * (size_t)nk;
			uint32_t c;

			ck_assert_uint_eq(cs, opt[t].chunk);
			for (c = 0; c < nk; c++) {
				const uint32_t zl = traj_get_u32(pay + 8 + 4 * c);
				const size_t rl = rlen - (uint64_t)c * cs < cs ? rlen - (uint64_t)c * cs : cs;
				size_t fl;

				if (zl == rl) {
					memcpy(raw, z, rl);
					stored++;
				} else {
					ck_assert_uint_lt(zl, rl);
					ck_assert_uint_eq(ZSTD_getFrameContentSize(z, zl), rl);
					ck_assert_uint_eq(ZSTD_decompressDCtx(zd, raw, rl, z, zl), rl);
					frames++;
				}
				noise += traj_chunk_is_noise(raw, rl);
				/* a fresh context each chunk (ZSTD_compress), the
				 * writer's being reused from chunk to chunk */
				fl = ZSTD_compress(fresh, ZSTD_compressBound(16384), raw, rl, 1);
				ck_assert(!ZSTD_isError(fl));
				if (traj_chunk_is_noise(raw, rl) || fl >= rl)
					ck_assert_msg(zl == rl, "frame %d, chunk %u: %u bytes, stored "
						      "would be %zu", k, c, zl, rl);
				else
					ck_assert_msg(zl == fl && memcmp(fresh, z, zl) == 0,
						      "frame %d, chunk %u: %u bytes, a new context "
						      "writes %zu", k, c, zl, fl);
				z += zl;
			}
			off = frame_end[k];
		}
		free(all);
	}
	/* each kind seen: frames, stored chunks, stored for noise */
	ck_assert_msg(frames > 0 && stored > 0 && noise > 0, "%d frames, %d stored, %d noise",
		      frames, stored, noise);
	ZSTD_freeDCtx(zd);
	free(raw);
	free(fresh);
	remove_dir();
}
END_TEST

/* A frame record made by hand as make_frame, its one chunk given as the
 * bytes z (zl of them) for a stream of rlen bytes. */
static size_t frame_of_chunk(unsigned char *out, uint32_t count, uint32_t codec, size_t rlen,
			     const unsigned char *z, size_t zl)
{
	size_t plen = 8 + 4 + zl;

	memcpy(out, TRAJ_FRAME_TAG, 4);
	traj_put_u64(out + 4, 0);
	traj_put_u32(out + 12, count);
	traj_put_u32(out + 16, codec);
	traj_put_u64(out + 20, rlen);
	traj_put_u64(out + 28, plen);
	traj_put_u32(out + 40, TRAJ_CHUNK_SIZE);
	traj_put_u32(out + 44, 1);
	traj_put_u32(out + 48, (uint32_t)zl);
	memcpy(out + 52, z, zl);
	traj_put_u32(out + 36, (uint32_t)crc32(crc32(0L, out, 36), out + 40, (uInt)plen));
	return TRAJ_FRAME_HEADER + plen;
}

/* The reader takes a Zstandard chunk only as the format says: the bytes
 * themselves when exactly as long as the chunk, else exactly one frame,
 * shorter, whose header gives the chunk's length; and the flag only in
 * version 3. Each refusal is made from a chunk that reads. */
START_TEST(test_zstd_chunks_refused)
{
	static const uint32_t id_ok[4] = {2, 9, 40, 3}, g_ok[4] = {0, 0, 0, 1};
	unsigned char *b = malloc(1 << 16), t[4096], z[8192], z2[8192];
	char msg[UTIL_ERR_MAX];
	size_t rl, zl, zl2;
	long hl;
	int rc;
	ZSTD_CCtx *zc = ZSTD_createCCtx();

	ck_assert(b && zc);
	make_dir();
	hl = agents_header(b, TRAJ_FLAG_AGENTS | TRAJ_FLAG_ZSTD);
	rl = planes_stream(t, 4, id_ok, g_ok, NULL);
	zl = ZSTD_compress(z, sizeof z, t, rl, 19);
	ck_assert(!ZSTD_isError(zl) && zl < rl);
	/* a frame, and the bytes stored, read */
	ck_assert_int_eq(read_built(b, hl + (long)frame_of_chunk(b + hl, 4, 1, rl, z, zl),
				    &rc, msg), 1);
	ck_assert_msg(rc == 0, "%s", msg);
	ck_assert_int_eq(read_built(b, hl + (long)frame_of_chunk(b + hl, 4, 1, rl, t, rl),
				    &rc, msg), 1);
	ck_assert_msg(rc == 0, "%s", msg);
	/* a byte after the frame; a frame cut short; the stored bytes and one
	 * more; a frame of other bytes (one fewer) */
	memcpy(z2, z, zl);
	z2[zl] = 0;
	ck_assert_int_eq(read_built(b, hl + (long)frame_of_chunk(b + hl, 4, 1, rl, z2, zl + 1),
				    &rc, msg), 0);
	ck_assert_msg(rc == -1 && strstr(msg, "does not decompress"), "%s", msg);
	ck_assert_int_eq(read_built(b, hl + (long)frame_of_chunk(b + hl, 4, 1, rl, z, zl - 1),
				    &rc, msg), 0);
	ck_assert_msg(rc == -1 && strstr(msg, "does not decompress"), "%s", msg);
	memcpy(z2, t, rl);
	z2[rl] = 0;
	ck_assert_int_eq(read_built(b, hl + (long)frame_of_chunk(b + hl, 4, 1, rl, z2, rl + 1),
				    &rc, msg), 0);
	ck_assert_msg(rc == -1 && strstr(msg, "does not decompress"), "%s", msg);
	zl2 = ZSTD_compress(z2, sizeof z2, t, rl - 1, 19);
	ck_assert(!ZSTD_isError(zl2));
	ck_assert_int_eq(read_built(b, hl + (long)frame_of_chunk(b + hl, 4, 1, rl, z2, zl2),
				    &rc, msg), 0);
	ck_assert_msg(rc == -1 && strstr(msg, "does not decompress"), "%s", msg);
	/* a frame whose header does not give its size */
	ck_assert(!ZSTD_isError(ZSTD_CCtx_setParameter(zc, ZSTD_c_compressionLevel, 19)));
	ck_assert(!ZSTD_isError(ZSTD_CCtx_setParameter(zc, ZSTD_c_contentSizeFlag, 0)));
	zl2 = ZSTD_compress2(zc, z2, sizeof z2, t, rl);
	ck_assert(!ZSTD_isError(zl2) && zl2 < rl);
	ck_assert_uint_eq(ZSTD_getFrameContentSize(z2, zl2), ZSTD_CONTENTSIZE_UNKNOWN);
	ck_assert_int_eq(read_built(b, hl + (long)frame_of_chunk(b + hl, 4, 1, rl, z2, zl2),
				    &rc, msg), 0);
	ck_assert_msg(rc == -1 && strstr(msg, "does not decompress"), "%s", msg);
	/* the flag in a version 2 file */
	frame_of_chunk(b + hl, 4, 1, rl, z, zl);
	b[8] = 2;
	traj_put_u32(b + hl - 4, (uint32_t)crc32(0L, b, (uInt)(hl - 4)));
	read_built(b, hl + (long)frame_of_chunk(b + hl, 4, 1, rl, z, zl), &rc, msg);
	ck_assert_msg(rc == -2 && strstr(msg, "flags 0x3"), "%s", msg);
	b[8] = 3;
	traj_put_u32(b + hl - 4, (uint32_t)crc32(0L, b, (uInt)(hl - 4)));
	ck_assert_int_eq(read_built(b, hl + (long)frame_of_chunk(b + hl, 4, 1, rl, z, zl),
				    &rc, msg), 1);
	ZSTD_freeCCtx(zc);
	free(b);
	remove_dir();
}
END_TEST

/* The commands exit 2 for a trajectory that cannot be read and 1 when
 * memory ran out (cmd_traj.c's input_status): the error buffer tells them
 * apart. */
START_TEST(test_error_kinds)
{
	char path[] = "/tmp/check_traj_junk_XXXXXX";
	struct util_err err = {0};
	void *p;
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "not a trajectory\n", 17), 17);
	close(fd);
	ck_assert_ptr_null(traj_reader_open(path, &err));
	ck_assert_msg(strstr(err.msg, "not a boidsim trajectory") != NULL, "%s", err.msg);
	ck_assert_int_eq(err.not_input, 0);
	unlink(path);
	/* a size that overflows is the input's fault, not the memory's */
	ck_assert_ptr_null(util_alloc(SIZE_MAX / 2, 4, &err));
	ck_assert_int_eq(err.not_input, 0);
	/* no address space holds 2^62 bytes (a zeroed array: mmap, which
	 * fails; malloc's would abort under AddressSanitizer) */
	p = util_alloc((size_t)1 << 62, 1, &err);
	ck_assert_ptr_null(p);
	ck_assert_int_eq(err.not_input, 1);
	ck_assert_msg(strstr(err.msg, "out of memory") != NULL, "%s", err.msg);
}
END_TEST

START_TEST(test_format_names)
{
	enum traj_format f;

	ck_assert_int_eq(traj_format_guess("a/b.csv.gz", &f), 0);
	ck_assert_int_eq(f, TRAJ_CSV_GZ);
	ck_assert_int_eq(traj_format_guess("b.csv", &f), 0);
	ck_assert_int_eq(f, TRAJ_CSV);
	ck_assert_int_eq(traj_format_guess("b.bin", &f), 0);
	ck_assert_int_eq(f, TRAJ_BIN);
	ck_assert_int_ne(traj_format_guess("b.txt", &f), 0);
	ck_assert_int_ne(traj_format_guess(".bin", &f), 0);
	ck_assert_int_eq(traj_format_parse("csv.gz", &f), 0);
	ck_assert_int_ne(traj_format_parse("gz", &f), 0);
}
END_TEST

Suite *traj_suite(void)
{
	Suite *s = suite_create("traj");
	TCase *tc = tcase_create("files");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_bin_equals_csv);
	tcase_add_test(tc, test_abort_keeps_previous_file);
	tcase_add_test(tc, test_flipped_byte_detected);
	tcase_add_test(tc, test_truncation_every_length);
	tcase_add_test(tc, test_codecs_bit_identical);
	tcase_add_test(tc, test_lossy_bound);
	tcase_add_test(tc, test_lossy_exceptions);
	tcase_add_test(tc, test_random_access);
	tcase_add_test(tc, test_threads_same_bytes);
	tcase_add_test(tc, test_csv_gz_blocks);
	tcase_add_test(tc, test_version1_file);
	tcase_add_test(tc, test_format_names);
	tcase_add_loop_test(tc, test_hue_field, 0, 2);
	tcase_add_loop_test(tc, test_agents_round_trip, 0, 4);
	tcase_add_test(tc, test_agents_empty_frames);
	tcase_add_test(tc, test_agents_writer_refuses);
	tcase_add_test(tc, test_agents_reader_refuses);
	tcase_add_test(tc, test_noise_chunks);
	tcase_add_test(tc, test_chunks_are_deflates);
	tcase_add_test(tc, test_chunks_are_zstd);
	tcase_add_test(tc, test_zstd_chunks_refused);
	tcase_add_test(tc, test_predict_exact);
	tcase_add_test(tc, test_writer_fields_same_bytes);
	tcase_add_test(tc, test_error_kinds);
	suite_add_tcase(s, tc);
	return s;
}
