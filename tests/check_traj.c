/* check_traj.c: trajectory files: binary frames read back equal to the CSV,
 * temporary files never take the final name on failure, and damage or
 * truncation is detected. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include "check_suites.h"
#include "sim.h"
#include "traj.h"

static char dir[256];

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

/* Runs a small scenario, writing path in the given format. */
static void write_run(const char *scen, const char *path, enum traj_format fmt,
		      uint64_t stop_after)
{
	struct scenario sc;
	struct sim s;
	struct util_err err;
	struct traj_writer *w;
	float *fields[6] = {0};
	char *json;
	int d;

	load_ok(scen, &sc);
	ck_assert_int_eq(sim_init(&s, &sc, SIM_GRID, &err), 0);
	json = scenario_to_json(&sc);
	w = traj_writer_open(path, fmt, sc.dims, sc.count, sc.seed, "boidsim test", json,
			     sc.compression, &err);
	ck_assert_msg(w != NULL, "%s", err.msg);
	for (d = 0; d < 2 * sc.dims; d++)
		fields[d] = malloc(sc.count * sizeof(float));
	for (;;) {
		if (s.step % sc.every == 0) {
			flock_to_id_order(&s.flock, fields);
			ck_assert_int_eq(traj_write_frame(w, s.step, fields, &err), 0);
		}
		if (s.step == stop_after) {
			traj_writer_abort(w);
			w = NULL;
			break;
		}
		if (s.step == sc.steps)
			break;
		sim_step(&s);
	}
	if (w)
		ck_assert_msg(traj_writer_close(w, TRAJ_COMPLETE, &err) == 0, "%s", err.msg);
	for (d = 0; d < 6; d++)
		free(fields[d]);
	free(json);
	sim_free(&s);
	scenario_free(&sc);
}

static const char *SCEN3D =
	"{\"dimensions\": 3, \"count\": 50, \"steps\": 12, \"seed\": 5,"
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
	float *f[6];
	uint64_t step;
	FILE *csv;
	char line[512];
	int d, frames = 0;

	make_dir();
	write_run(SCEN3D, path_in("a.bin"), TRAJ_BIN, UINT64_MAX);
	write_run(SCEN3D, path_in("a.csv"), TRAJ_CSV, UINT64_MAX);
	r = traj_reader_open(path_in("a.bin"), &err);
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
	struct util_err err = {{0}};
	float *f[6];
	uint64_t step;
	int d, n = 0, rc;

	r = traj_reader_open(path, &err);
	if (r == NULL) {
		*rc_out = -2;
		strcpy(msg, err.msg);
		return 0;
	}
	for (d = 0; d < 6; d++)
		f[d] = malloc(50 * sizeof(float));
	while ((rc = traj_read_frame(r, &step, f, &err)) == 1)
		n++;
	*rc_out = rc;
	strcpy(msg, err.msg);
	for (d = 0; d < 6; d++)
		free(f[d]);
	traj_reader_close(r);
	return n;
}

/* A flipped byte anywhere in a frame's payload is caught by its CRC. */
START_TEST(test_flipped_byte_detected)
{
	char msg[UTIL_ERR_MAX];
	long size;
	int rc, n;
	FILE *fp;
	unsigned char b;

	make_dir();
	write_run(SCEN3D, path_in("c.bin"), TRAJ_BIN, UINT64_MAX);
	size = file_size(path_in("c.bin"));
	fp = fopen(path_in("c.bin"), "r+b");
	/* a byte inside the last frame's payload (before the 28-byte end) */
	fseek(fp, size - TRAJ_END_LEN - 10, SEEK_SET);
	ck_assert_int_eq(fread(&b, 1, 1, fp), 1);
	b ^= 0x10;
	fseek(fp, size - TRAJ_END_LEN - 10, SEEK_SET);
	fwrite(&b, 1, 1, fp);
	fclose(fp);
	n = count_frames(path_in("c.bin"), &rc, msg);
	ck_assert_int_eq(rc, -1);
	ck_assert_int_eq(n, 4);
	ck_assert_ptr_nonnull(strstr(msg, "frame 4 (step 12): CRC mismatch"));
	remove_dir();
}
END_TEST

/* Cut at every length: the reader returns exactly the complete frames
 * before the cut, and never crashes or reads garbage. */
START_TEST(test_truncation_every_length)
{
	char msg[UTIL_ERR_MAX];
	long size, len, header_end, frame_end[5], off;
	int rc, n, k, complete;
	FILE *in, *out;
	unsigned char *all;

	make_dir();
	write_run(SCEN3D, path_in("t.bin"), TRAJ_BIN, UINT64_MAX);
	size = file_size(path_in("t.bin"));
	all = malloc((size_t)size);
	in = fopen(path_in("t.bin"), "rb");
	ck_assert_int_eq(fread(all, 1, (size_t)size, in), (size_t)size);
	fclose(in);
	/* Where the header and each frame end, from the lengths they store. */
	off = TRAJ_HEADER_FIXED + (long)traj_get_u32(all + 36) + (long)traj_get_u32(all + 40) + 4;
	header_end = off;
	for (k = 0; k < 5; k++) {
		off += TRAJ_FRAME_HEADER + (long)traj_get_u64(all + off + 28);
		frame_end[k] = off;
	}
	ck_assert_int_eq(off + TRAJ_END_LEN, size);
	for (len = 0; len < size; len++) {
		out = fopen(path_in("cut.bin"), "wb");
		ck_assert_int_eq(fwrite(all, 1, (size_t)len, out), (size_t)len);
		fclose(out);
		n = count_frames(path_in("cut.bin"), &rc, msg);
		for (complete = 0; complete < 5 && frame_end[complete] <= len; complete++)
			;
		ck_assert_msg(n == complete, "cut at %ld: %d frames read, %d complete", len, n,
			      complete);
		if (len < header_end)
			ck_assert_msg(rc == -2, "cut at %ld inside the header was accepted", len);
		else if (len == header_end || (complete > 0 && len == frame_end[complete - 1]))
			ck_assert_msg(rc == 0, "cut at %ld after a whole frame: %s", len, msg);
		else
			ck_assert_msg(rc == -1 && strstr(msg, "cut short") != NULL,
				      "cut at %ld: rc %d, %s", len, rc, msg);
	}
	free(all);
	remove_dir();
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
	tcase_add_test(tc, test_format_names);
	suite_add_tcase(s, tc);
	return s;
}
