/* check_sim.c: whole runs: identical results for any thread count, the
 * invariants after a run, numerical safety, and flocking emerging. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include "check_suites.h"
#include "checkpoint.h"
#include "metrics.h"
#include "sim.h"
#include "traj.h"

static const char *const MODES[] = {"wrap", "reflect", "steer", "none"};

static void mode_scenario(char *buf, size_t cap, int dims, const char *mode, int count)
{
	if (dims == 2)
		snprintf(buf, cap, "{\"count\": %d, \"steps\": 40, \"seed\": 11,"
			 "\"speed\": {\"min\": 0.2, \"max\": 1}, \"max_force\": 0.1,"
			 "\"bounds\": {\"min\": [-10, 0], \"max\": [20, 25], \"mode\": \"%s\","
			 "\"margin\": 3}, \"target\": {\"position\": [5, 5]},"
			 "\"weights\": {\"target\": 0.2}}", count, mode);
	else
		snprintf(buf, cap, "{\"dimensions\": 3, \"count\": %d, \"steps\": 40, \"seed\": 11,"
			 "\"speed\": {\"min\": 0.2, \"max\": 1}, \"max_force\": 0.1,"
			 "\"bounds\": {\"min\": [0, 0, 0], \"max\": [15, 12, 10], \"mode\": \"%s\","
			 "\"margin\": 2}}", count, mode);
}

/* Runs sc with the given thread count; returns the final state in id
 * order (2*dims arrays in one block). */
static float *run_with_threads(const struct scenario *sc, int threads, enum sim_search search)
{
	struct sim s;
	struct util_err err;
	float *block, *fields[FLOCK_FIELDS_MAX] = {0};
	size_t n = (size_t)sc->count;
	int d;
	uint64_t k;

#ifdef _OPENMP
	omp_set_num_threads(threads);
#else
	(void)threads;
#endif
	ck_assert_int_eq(sim_init(&s, sc, search, &test_ctx, &err), 0);
	for (k = 0; k < sc->steps; k++)
		sim_step(&s);
	ck_assert_msg(sim_check(&s, &err) == 0, "%s", err.msg);
	block = malloc(n * (size_t)(2 * sc->dims) * sizeof(float));
	for (d = 0; d < 2 * sc->dims; d++)
		fields[d] = block + (size_t)d * n;
	flock_to_id_order(&s.flock, fields);
	sim_free(&s);
	return block;
}

/* _i: a 2D flock, a 3D one with a hue, a 2D one with boids removed (its
 * ids sparse, ranks through f->rank), each large enough for the threads
 * to split the id order's loops: the frame is each row's values at its
 * rank, bit for bit, for 1, 2 and 3 threads, and the state is left as it
 * was. */
START_TEST(test_id_order_large)
{
	static const char *const SCEN[] = {
		"{\"count\": 70000, \"steps\": 2, \"seed\": 5,"
		" \"bounds\": {\"min\": [0, 0], \"max\": [300, 300], \"mode\": \"wrap\"}}",
		"{\"dimensions\": 3, \"count\": 70000, \"steps\": 2, \"seed\": 5,"
		" \"hue\": {\"weight\": 0.5},"
		" \"bounds\": {\"min\": [0, 0, 0], \"max\": [60, 60, 60], \"mode\": \"wrap\"}}",
		"{\"count\": 140000, \"steps\": 2, \"seed\": 5,"
		" \"population\": [{\"step\": 1, \"remove\": 50000}],"
		" \"bounds\": {\"min\": [0, 0], \"max\": [400, 400], \"mode\": \"wrap\"}}"};
	struct scenario sc;
	struct sim s;
	struct util_err err;
	float *want[FLOCK_FIELDS_MAX] = {0}, *got[FLOCK_FIELDS_MAX] = {0};
	size_t n, r, k;
	int nf, fi, t, dims;
	uint64_t step;

	load_ok(SCEN[_i], &sc);
	ck_assert_int_eq(sim_init(&s, &sc, SIM_GRID, &test_ctx, &err), 0);
	for (step = 0; step < sc.steps; step++)
		sim_step(&s);
	n = s.flock.n;
	dims = s.flock.dims;
	nf = flock_fields(&s.flock);
	ck_assert_uint_ge(n, 70000);
	ck_assert_int_eq(s.flock.rank != NULL, _i == 2);
	ck_assert_int_eq(nf, 2 * dims + (_i == 1));
	for (fi = 0; fi < nf; fi++) {
		want[fi] = malloc(n * sizeof(float));
		got[fi] = malloc(n * sizeof(float));
		ck_assert(want[fi] && got[fi]);
	}
	for (r = 0; r < n; r++) {
		k = flock_rank(&s.flock, s.flock.id[r]);
		for (fi = 0; fi < 2 * dims; fi++)
			want[fi][k] = fi < dims ? s.flock.pos[fi][r] : s.flock.vel[fi - dims][r];
		if (nf > 2 * dims)
			want[2 * dims][k] = flock_hue_turns(s.flock.hue[0][r], s.flock.hue[1][r]);
	}
	for (t = 1; t <= 3; t++) {
#ifdef _OPENMP
		omp_set_num_threads(t);
#endif
		for (fi = 0; fi < nf; fi++)
			memset(got[fi], 0xff, n * sizeof(float));
		flock_to_id_order(&s.flock, got);
		for (fi = 0; fi < nf; fi++)
			ck_assert_msg(memcmp(want[fi], got[fi], n * sizeof(float)) == 0,
				      "scenario %d, %d threads: field %d differs", _i, t, fi);
		ck_assert_msg(sim_check(&s, &err) == 0, "%s", err.msg);
	}
	for (fi = 0; fi < nf; fi++) {
		free(want[fi]);
		free(got[fi]);
	}
	sim_free(&s);
	scenario_free(&sc);
}
END_TEST

/* _i: dims x mode. Bytes must be identical for 1, 2 and 3 threads. */
START_TEST(test_thread_count_invariance)
{
	char text[1024];
	int dims = 2 + _i / 4;
	struct scenario sc;
	float *one, *more;
	size_t bytes;
	int t;

	mode_scenario(text, sizeof text, dims, MODES[_i % 4], 1200);
	load_ok(text, &sc);
	bytes = (size_t)sc.count * (size_t)(2 * dims) * sizeof(float);
	one = run_with_threads(&sc, 1, SIM_GRID);
	for (t = 2; t <= 3; t++) {
		more = run_with_threads(&sc, t, SIM_GRID);
		ck_assert_msg(memcmp(one, more, bytes) == 0, "%s %dD: %d threads differ from 1",
			      MODES[_i % 4], dims, t);
		free(more);
	}
	free(one);
	/* brute force is deterministic too */
	sc.count = 500;
	one = run_with_threads(&sc, 1, SIM_BRUTE);
	more = run_with_threads(&sc, 3, SIM_BRUTE);
	ck_assert(memcmp(one, more, 500 * (size_t)(2 * dims) * sizeof(float)) == 0);
	free(one);
	free(more);
	scenario_free(&sc);
}
END_TEST

/* sim_check after every step of a run, each mode: no NaN, speeds within
 * [min, max], positions in the box under wrap and reflect. */
START_TEST(test_invariants_every_step)
{
	char text[1024];
	int dims = 2 + _i / 4;
	struct scenario sc;
	struct sim s;
	struct util_err err;
	uint64_t k;

	mode_scenario(text, sizeof text, dims, MODES[_i % 4], 1000);
	load_ok(text, &sc);
	ck_assert_int_eq(sim_init(&s, &sc, SIM_GRID, &test_ctx, &err), 0);
	for (k = 0; k < sc.steps; k++) {
		ck_assert_msg(sim_check(&s, &err) == 0, "%s", err.msg);
		sim_step(&s);
	}
	ck_assert_msg(sim_check(&s, &err) == 0, "%s", err.msg);
	sim_free(&s);
	scenario_free(&sc);
}
END_TEST

/* The per-boid arrays are slices of one block (flock_init_part): each
 * starts on a cache line, none overlaps another, and each ends in
 * RULES_LANES slots of zeros that the neighbour loop reads past the last
 * boid, also after steps have swapped the current and spare arrays. */
START_TEST(test_flock_layout)
{
	const char *text = "{\"dimensions\": 3, \"count\": 300, \"steps\": 3, \"seed\": 2,"
			   "\"hue\": {\"spin\": 0.5},"
			   "\"bounds\": {\"min\": [0, 0, 0], \"max\": [10, 10, 10]}}";
	struct scenario sc;
	struct sim s;
	struct util_err err;
	const char *lo[32], *hi[32];
	int d, a, b, na = 0;
	size_t k, room;

	load_ok(text, &sc);
	ck_assert_int_eq(sc.hue_spin_on, 1);
	ck_assert_int_eq(sim_init(&s, &sc, SIM_GRID, &test_ctx, &err), 0);
	sim_step(&s);
	sim_step(&s);
	room = (s.flock.cap + RULES_LANES) * sizeof(float);
	for (d = 0; d < 3; d++) {
		const float *f[4] = {s.flock.pos[d], s.flock.vel[d], s.flock.pos_next[d],
				     s.flock.vel_next[d]};

		for (a = 0; a < 4; a++) {
			lo[na] = (const char *)f[a];
			hi[na++] = (const char *)f[a] + room;
		}
		for (a = 0; a < 2; a++) {
			const float *h = a ? s.flock.hue_next[d] : s.flock.hue[d];

			lo[na] = (const char *)h;
			hi[na++] = (const char *)h + room;
		}
	}
	lo[na] = (const char *)s.flock.id;
	hi[na++] = (const char *)(s.flock.id + s.flock.cap);
	lo[na] = (const char *)s.flock.id_next;
	hi[na++] = (const char *)(s.flock.id_next + s.flock.cap);
	for (a = 0; a < na; a++) {
		ck_assert_ptr_nonnull(lo[a]);
		ck_assert_msg((uintptr_t)lo[a] % UTIL_ALIGN == 0, "array %d not aligned", a);
		for (b = 0; b < a; b++)
			ck_assert_msg(hi[a] <= lo[b] || hi[b] <= lo[a], "arrays %d and %d overlap", a, b);
	}
	for (a = 0; a < na - 2; a++)
		for (k = s.flock.cap; k < s.flock.cap + RULES_LANES; k++)
			ck_assert_msg(((const float *)(const void *)lo[a])[k] == 0.0f,
				      "array %d: padding slot %zu is not zero", a, k);
	sim_free(&s);
	scenario_free(&sc);
}
END_TEST

/* sim_check itself must catch what it is for. */
START_TEST(test_invariant_check_catches)
{
	char text[1024];
	struct scenario sc;
	struct sim s;
	struct util_err err;

	mode_scenario(text, sizeof text, 2, "wrap", 10);
	load_ok(text, &sc);
	ck_assert_int_eq(sim_init(&s, &sc, SIM_GRID, &test_ctx, &err), 0);
	ck_assert_int_eq(sim_check(&s, &err), 0);
	s.flock.vel[0][3] = NAN;
	ck_assert_int_ne(sim_check(&s, &err), 0);
	ck_assert_ptr_nonnull(strstr(err.msg, "non-finite"));
	s.flock.vel[0][3] = 5.0f;
	ck_assert_int_ne(sim_check(&s, &err), 0);
	ck_assert_ptr_nonnull(strstr(err.msg, "speed"));
	s.flock.vel[0][3] = 0.5f;
	s.flock.vel[1][3] = 0.0f;
	s.flock.pos[0][3] = 20.0f; /* the box is [-10, 20) */
	ck_assert_int_ne(sim_check(&s, &err), 0);
	ck_assert_ptr_nonnull(strstr(err.msg, "outside the box"));
	s.flock.pos[0][3] = 0.0f;
	s.flock.id[3] = s.flock.id[4];
	ck_assert_int_ne(sim_check(&s, &err), 0);
	sim_free(&s);
	scenario_free(&sc);
}
END_TEST

/* Degenerate but valid inputs never produce NaN: a flock in one point with
 * zero speed, huge and tiny weights, radii larger than the box. */
START_TEST(test_numerical_safety)
{
	static const char *const CASES[] = {
		"{\"count\": 200, \"steps\": 20, \"speed\": {\"min\": 0, \"max\": 1},"
		" \"bounds\": {\"min\": [0, 0], \"max\": [10, 10]}}",
		"{\"dimensions\": 3, \"count\": 200, \"steps\": 20, \"speed\": {\"min\": 0.5},"
		" \"bounds\": {\"min\": [0, 0, 0], \"max\": [10, 10, 10], \"mode\": \"reflect\"}}",
		"{\"count\": 200, \"steps\": 20, \"max_force\": 1e9, \"speed\": {\"max\": 1e9},"
		" \"weights\": {\"separation\": 1e9, \"alignment\": 1e-9, \"cohesion\": 1e9},"
		" \"radii\": {\"separation\": 100, \"alignment\": 1e9, \"cohesion\": 1e-9},"
		" \"bounds\": {\"min\": [0, 0], \"max\": [10, 10], \"mode\": \"none\"}}",
		"{\"count\": 200, \"steps\": 20, \"dt\": 1e-6, \"radii\": {\"separation\": 1e-6},"
		" \"bounds\": {\"min\": [0, 0], \"max\": [1e-3, 1e-3], \"mode\": \"wrap\"}}",
	};
	struct scenario sc;
	struct sim s;
	struct util_err err;
	size_t k;
	int d;
	uint64_t t;

	load_ok(CASES[_i], &sc);
	ck_assert_int_eq(sim_init(&s, &sc, SIM_GRID, &test_ctx, &err), 0);
	/* cases 0 and 1: everyone in one point, standing still */
	for (k = 0; _i < 2 && k < s.flock.n; k++)
		for (d = 0; d < sc.dims; d++) {
			s.flock.pos[d][k] = (float)((sc.bmin[d] + sc.bmax[d]) / 2);
			s.flock.vel[d][k] = _i == 1 ? (d == 0 ? 0.5f : 0.0f) : 0.0f;
		}
	for (t = 0; t < sc.steps; t++) {
		sim_step(&s);
		ck_assert_msg(sim_check(&s, &err) == 0, "case %d: %s", _i, err.msg);
	}
	sim_free(&s);
	scenario_free(&sc);
}
END_TEST

/* The default scenario flocks: polarization rises from near 0 to > 0.5. */
START_TEST(test_flocking_emerges)
{
	struct scenario sc;
	struct sim s;
	struct util_err err;
	double p0, p1;
	uint64_t t;

#ifdef _OPENMP
	omp_set_num_threads(2);
#endif
	ck_assert_int_eq(scenario_load_file(test_srcfile("scenarios/flock2d.json"), NULL, 0,
					    &sc, &err), 0);
	ck_assert_int_eq(sim_init(&s, &sc, SIM_GRID, &test_ctx, &err), 0);
	p0 = metrics_polarization(&s.flock);
	for (t = 0; t < sc.steps; t++)
		sim_step(&s);
	p1 = metrics_polarization(&s.flock);
	ck_assert_msg(p0 < 0.1, "initial polarization %g is not near 0", p0);
	ck_assert_msg(p1 > 0.5, "polarization after %llu steps is only %g",
		      (unsigned long long)sc.steps, p1);
	sim_free(&s);
	scenario_free(&sc);
}
END_TEST

START_TEST(test_polarization_values)
{
	struct scenario sc;
	struct sim s;
	struct util_err err;
	size_t k;

	load_ok("{\"count\": 4, \"steps\": 1, \"bounds\": {\"min\": [0, 0], \"max\": [9, 9]}}", &sc);
	ck_assert_int_eq(sim_init(&s, &sc, SIM_GRID, &test_ctx, &err), 0);
	for (k = 0; k < 4; k++) {
		s.flock.vel[0][k] = 0.5f * (float)(k + 1);
		s.flock.vel[1][k] = 0.0f;
	}
	ck_assert_double_eq_tol(metrics_polarization(&s.flock), 1.0, 1e-15);
	s.flock.vel[0][1] = -1.0f;
	s.flock.vel[0][3] = -2.0f;
	ck_assert_double_eq_tol(metrics_polarization(&s.flock), 0.0, 1e-15);
	s.flock.vel[0][1] = 0.0f;
	s.flock.vel[1][1] = 3.0f; /* (1,0)+(0,1)+(1,0)+(-1,0) = (1,1) */
	ck_assert_double_eq_tol(metrics_polarization(&s.flock), sqrt(2.0) / 4, 1e-15);
	sim_free(&s);
	scenario_free(&sc);
}
END_TEST

/* A checkpoint of a run with predators and a population schedule reads
 * back to the same state; one whose ids or count the schedule does not
 * allow at its step (made with a valid CRC) is refused before anything
 * can be written past the arrays, and so is one with a predator's value
 * not finite or a boid outside the wrapping box. */
START_TEST(test_checkpoint_population)
{
	static const char *const TEXT =
		"{\"count\": 20, \"steps\": 30, \"predators\": {\"count\": 2},"
		" \"population\": [{\"step\": 3, \"remove\": 5}, {\"step\": 12, \"add\": 30}],"
		" \"bounds\": {\"min\": [0, 0], \"max\": [20, 20]}}";
	struct scenario sc;
	struct sim a, b;
	struct util_err err;
	struct checkpoint_files files = {0}, got;
	char path[] = "/tmp/boidsim-ckpt-XXXXXX", *json;
	unsigned char *data;
	size_t size, at;
	FILE *fp;
	int fd, t, bad;

	load_ok(TEXT, &sc);
	json = scenario_to_json(&sc);
	ck_assert_int_eq(sim_init(&a, &sc, SIM_GRID, &test_ctx, &err), 0);
	for (t = 0; t < 5; t++)
		sim_step(&a);
	ck_assert_uint_eq(a.flock.n, 15);
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_msg(checkpoint_write(path, &a, &a.flock, json, "test", &files, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(sim_init(&b, &sc, SIM_GRID, &test_ctx, &err), 0);
	ck_assert_msg(checkpoint_read(path, &b, json, "test", &got, &err) == 0, "%s", err.msg);
	checkpoint_files_free(&got);
	ck_assert_uint_eq(b.step, 5);
	ck_assert_uint_eq(b.flock.n, 15);
	ck_assert_uint_eq(b.flock.next_id, 20);
	ck_assert(b.pred.pos[0][1] == a.pred.pos[0][1] && b.pred.vel[1][0] == a.pred.vel[1][0]);
	sim_free(&b);
	/* the file: ..., count (u64) at 16, ..., the next id just before the
	 * 15 ids, 4 bytes each, then the state */
	fp = fopen(path, "rb");
	ck_assert_ptr_nonnull(fp);
	fseek(fp, 0, SEEK_END);
	size = (size_t)ftell(fp);
	rewind(fp);
	data = malloc(size);
	ck_assert_uint_eq(fread(data, 1, size, fp), size);
	fclose(fp);
	at = size - 4 - (size_t)(2 * 2 * 2 * 4) - 15 * 2 * 2 * 4 - 15 * 4 - 4;
	ck_assert_uint_eq(traj_get_u32(data + at), 20);
	ck_assert_uint_eq(traj_get_u32(data + at + 4), 0);
	for (bad = 0; bad < 5; bad++) {
		unsigned char *m = malloc(size);
		float x = bad == 3 ? NAN : 20.0f;
		uint32_t u;

		memcpy(m, data, size);
		memcpy(&u, &x, 4);
		if (bad == 0)
			traj_put_u32(m + at, 50);      /* ids beyond the schedule's */
		else if (bad < 3)
			traj_put_u64(m + 16, bad == 1 ? 45 : 0); /* too many, or none */
		else if (bad == 3)
			traj_put_u32(m + size - 4 - 2 * 2 * 2 * 4, u); /* predator 0's x */
		else
			traj_put_u32(m + at + 4 + 15 * 4, u); /* boid 0's x, on the far wall */
		traj_put_u32(m + size - 4, (uint32_t)crc32(crc32(0L, Z_NULL, 0), m, (uInt)(size - 4)));
		fp = fopen(path, "wb");
		ck_assert_uint_eq(fwrite(m, 1, size, fp), size);
		fclose(fp);
		free(m);
		ck_assert_int_eq(sim_init(&b, &sc, SIM_GRID, &test_ctx, &err), 0);
		ck_assert_msg(checkpoint_read(path, &b, json, "test", &got, &err) != 0,
			      "case %d accepted", bad);
		ck_assert_msg(strstr(err.msg, "damaged") != NULL, "case %d: %s", bad, err.msg);
		sim_free(&b);
	}
	unlink(path);
	free(data);
	free(json);
	sim_free(&a);
	scenario_free(&sc);
}
END_TEST

Suite *sim_suite(void)
{
	Suite *s = suite_create("sim");
	TCase *tc = tcase_create("runs");

	tcase_set_timeout(tc, 300);
	tcase_add_loop_test(tc, test_thread_count_invariance, 0, 8);
	tcase_add_loop_test(tc, test_invariants_every_step, 0, 8);
	tcase_add_test(tc, test_invariant_check_catches);
	tcase_add_test(tc, test_flock_layout);
	tcase_add_loop_test(tc, test_id_order_large, 0, 3);
	tcase_add_loop_test(tc, test_numerical_safety, 0, 4);
	tcase_add_test(tc, test_flocking_emerges);
	tcase_add_test(tc, test_polarization_values);
	tcase_add_test(tc, test_checkpoint_population);
	suite_add_tcase(s, tc);
	return s;
}
