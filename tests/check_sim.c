/* check_sim.c: whole runs: identical results for any thread count, the
 * invariants after a run, numerical safety, and flocking emerging. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include "check_suites.h"
#include "metrics.h"
#include "sim.h"

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
	ck_assert_int_eq(sim_init(&s, sc, search, &err), 0);
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
	ck_assert_int_eq(sim_init(&s, &sc, SIM_GRID, &err), 0);
	for (k = 0; k < sc.steps; k++) {
		ck_assert_msg(sim_check(&s, &err) == 0, "%s", err.msg);
		sim_step(&s);
	}
	ck_assert_msg(sim_check(&s, &err) == 0, "%s", err.msg);
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
	ck_assert_int_eq(sim_init(&s, &sc, SIM_GRID, &err), 0);
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
	ck_assert_int_eq(sim_init(&s, &sc, SIM_GRID, &err), 0);
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
	ck_assert_int_eq(sim_init(&s, &sc, SIM_GRID, &err), 0);
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
	ck_assert_int_eq(sim_init(&s, &sc, SIM_GRID, &err), 0);
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

Suite *sim_suite(void)
{
	Suite *s = suite_create("sim");
	TCase *tc = tcase_create("runs");

	tcase_set_timeout(tc, 300);
	tcase_add_loop_test(tc, test_thread_count_invariance, 0, 8);
	tcase_add_loop_test(tc, test_invariants_every_step, 0, 8);
	tcase_add_test(tc, test_invariant_check_catches);
	tcase_add_loop_test(tc, test_numerical_safety, 0, 4);
	tcase_add_test(tc, test_flocking_emerges);
	tcase_add_test(tc, test_polarization_values);
	suite_add_tcase(s, tc);
	return s;
}
