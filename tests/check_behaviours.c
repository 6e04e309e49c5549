/* check_behaviours.c: the behaviours of the seed systems: per-boid speeds,
 * target radius and wandering target, attractors and repellers, and the
 * parameter schedule, each on a small case whose outcome is known. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "check_suites.h"
#include "obstacles.h"
#include "rules.h"
#include "sim.h"

#define BOX "\"bounds\": {\"min\": [0, 0], \"max\": [40, 40]}"

static double speed_of(const struct flock *f, size_t k)
{
	double v2 = 0;
	int d;

	for (d = 0; d < f->dims; d++)
		v2 += (double)f->vel[d][k] * f->vel[d][k];
	return sqrt(v2);
}

/* Each boid keeps to its own cruise speed, and the cruise speeds spread
 * over [speed.max (1 - variation), speed.max]. */
START_TEST(test_speed_variation)
{
	struct scenario sc;
	struct sim s;
	struct util_err err;
	double lo = INFINITY, hi = 0;
	size_t k;
	int t;

	load_ok("{\"count\": 400, \"steps\": 30, \"speed\": {\"min\": 0, \"max\": 2,"
		" \"variation\": 0.5}, \"max_force\": 1, " BOX "}", &sc);
	ck_assert_int_eq(sim_init(&s, &sc, SIM_GRID, &err), 0);
	for (t = 0; t < 30; t++)
		sim_step(&s);
	for (k = 0; k < s.flock.n; k++) {
		double cruise = rules_cruise(&s.rp, s.flock.id[k], s.step);

		ck_assert_msg(speed_of(&s.flock, k) <= cruise * (1 + 1e-6),
			      "boid %u: speed %g above its cruise speed %g", s.flock.id[k],
			      speed_of(&s.flock, k), cruise);
		ck_assert(cruise >= 1.0 - 1e-12 && cruise <= 2.0);
		lo = fmin(lo, cruise);
		hi = fmax(hi, cruise);
	}
	ck_assert_msg(lo < 1.1 && hi > 1.9, "cruise speeds only span [%g, %g]", lo, hi);
	sim_free(&s);
	scenario_free(&sc);
}
END_TEST

/* speed.noise changes a boid's cruise speed smoothly: by at most
 * speed.max x amplitude x dt / period per step, and not never. */
START_TEST(test_speed_noise_smooth)
{
	struct scenario sc;
	struct rules_params rp;
	double worst = 0, moved = 0, prev, bound;
	uint64_t t;

	load_ok("{\"count\": 10, \"steps\": 1, \"dt\": 0.5, \"speed\": {\"max\": 2,"
		" \"noise\": {\"amplitude\": 0.4, \"period\": 20}}, " BOX "}", &sc);
	rules_params_init(&rp, &sc);
	bound = 2 * 0.4 * 0.5 / 20 * (1 + 1e-9);
	prev = rules_cruise(&rp, 3, 0);
	for (t = 1; t < 400; t++) {
		double c = rules_cruise(&rp, 3, t);

		worst = fmax(worst, fabs(c - prev));
		moved = fmax(moved, fabs(c - rules_cruise(&rp, 3, 0)));
		ck_assert(c >= 2 * (1 - 0.4) - 1e-12 && c <= 2.0);
		prev = c;
	}
	ck_assert_msg(worst <= bound, "cruise jumped by %g in one step (bound %g)", worst, bound);
	ck_assert_msg(moved > 0.1, "cruise speed hardly changes (%g)", moved);
	scenario_free(&sc);
}
END_TEST

/* The target pulls only beyond target.radius. */
START_TEST(test_target_radius)
{
	struct scenario sc;
	struct rules_params rp;
	struct rules_acc a;
	float inside[3] = {22, 20, 0}, outside[3] = {30, 20, 0}, vel[3] = {0, 0, 0};
	double acc[3];

	load_ok("{\"count\": 2, \"steps\": 1, \"target\": {\"position\": [20, 20], \"radius\": 5},"
		" \"max_force\": 10, " BOX "}", &sc);
	rules_params_init(&rp, &sc);
	rules_acc_init(&a);
	rules_acceleration(&rp, &a, inside, vel, sc.speed_max, acc);
	ck_assert(acc[0] == 0.0 && acc[1] == 0.0);
	rules_acceleration(&rp, &a, outside, vel, sc.speed_max, acc);
	ck_assert_double_eq(acc[0], -1.0);
	scenario_free(&sc);
}
END_TEST

/* The wandering target jumps about once per interval, always inside its
 * region, the same way in every run. */
START_TEST(test_wandering_target)
{
	struct scenario sc;
	struct sim a, b;
	struct util_err err;
	int jumps = 0, t, d;
	double prev[2];

	load_ok("{\"count\": 5, \"steps\": 2000, \"target\": {\"wander\": {\"min\": [10, 10],"
		" \"max\": [30, 20], \"interval\": 50}}, " BOX "}", &sc);
	ck_assert_int_eq(sim_init(&a, &sc, SIM_GRID, &err), 0);
	ck_assert_int_eq(sim_init(&b, &sc, SIM_BRUTE, &err), 0);
	ck_assert_double_eq(a.rp.target[0], 20.0); /* no position: the centre */
	memcpy(prev, a.rp.target, sizeof prev);
	for (t = 0; t < 2000; t++) {
		sim_step(&a);
		sim_step(&b);
		ck_assert(a.rp.target[0] == b.rp.target[0] && a.rp.target[1] == b.rp.target[1]);
		for (d = 0; d < 2; d++)
			ck_assert(a.rp.target[d] >= sc.wander_min[d] &&
				  a.rp.target[d] <= sc.wander_max[d]);
		if (a.rp.target[0] != prev[0] || a.rp.target[1] != prev[1])
			jumps++;
		memcpy(prev, a.rp.target, sizeof prev);
	}
	ck_assert_msg(jumps >= 25 && jumps <= 60, "%d jumps in 2000 steps, expected about 40",
		      jumps);
	sim_free(&a);
	sim_free(&b);
	scenario_free(&sc);
}
END_TEST

/* A repeller empties its range, an attractor gathers the flock. */
START_TEST(test_repeller_and_attractor)
{
	struct scenario sc;
	struct sim s;
	struct util_err err;
	size_t k, inside = 0;
	double before = 0, after = 0;
	int t;

	load_ok("{\"count\": 300, \"steps\": 1, \"max_force\": 0.2, \"speed\": {\"max\": 1},"
		" \"weights\": {\"cohesion\": 0, \"alignment\": 0},"
		" \"attractors\": [{\"position\": [20, 20], \"strength\": -3, \"range\": 8}], "
		BOX "}", &sc);
	ck_assert_int_eq(sim_init(&s, &sc, SIM_GRID, &err), 0);
	for (t = 0; t < 120; t++)
		sim_step(&s);
	for (k = 0; k < s.flock.n; k++)
		inside += hypot(s.flock.pos[0][k] - 20.0, s.flock.pos[1][k] - 20.0) < 7.0;
	ck_assert_msg(inside == 0, "%zu boids still within the repeller's range", inside);
	sim_free(&s);
	scenario_free(&sc);

	load_ok("{\"count\": 300, \"steps\": 1, \"max_force\": 0.2, \"speed\": {\"max\": 1},"
		" \"weights\": {\"cohesion\": 0, \"alignment\": 0},"
		" \"attractors\": [{\"position\": [20, 20], \"strength\": 3, \"range\": 30}], "
		BOX "}", &sc);
	ck_assert_int_eq(sim_init(&s, &sc, SIM_GRID, &err), 0);
	for (k = 0; k < s.flock.n; k++)
		before += hypot(s.flock.pos[0][k] - 20.0, s.flock.pos[1][k] - 20.0);
	for (t = 0; t < 60; t++)
		sim_step(&s);
	for (k = 0; k < s.flock.n; k++)
		after += hypot(s.flock.pos[0][k] - 20.0, s.flock.pos[1][k] - 20.0);
	ck_assert_msg(after < 0.5 * before, "mean distance %g -> %g", before / 300, after / 300);
	sim_free(&s);
	scenario_free(&sc);
}
END_TEST

/* Waypoints: rest at the first, move linearly, rest at the last. */
START_TEST(test_waypoints)
{
	struct scenario sc;
	struct rules_params rp;

	load_ok("{\"count\": 2, \"steps\": 1, \"attractors\": [{\"strength\": 1, \"range\": 5,"
		" \"waypoints\": [{\"step\": 10, \"position\": [0, 0]},"
		" {\"step\": 20, \"position\": [10, 20]}, {\"step\": 30, \"position\": [10, 0]}]}], "
		BOX "}", &sc);
	rules_params_init(&rp, &sc);
	rules_set_step(&rp, 5);
	ck_assert(rp.attr_pos[0][0] == 0.0 && rp.attr_pos[0][1] == 0.0);
	rules_set_step(&rp, 15);
	ck_assert_double_eq_tol(rp.attr_pos[0][0], 5.0, 1e-12);
	ck_assert_double_eq_tol(rp.attr_pos[0][1], 10.0, 1e-12);
	rules_set_step(&rp, 25);
	ck_assert_double_eq_tol(rp.attr_pos[0][1], 10.0, 1e-12);
	rules_set_step(&rp, 99);
	ck_assert(rp.attr_pos[0][0] == 10.0 && rp.attr_pos[0][1] == 0.0);
	scenario_free(&sc);
}
END_TEST

/* A scheduled change takes effect exactly at its step: the state at step 5
 * is the unscheduled run's, the state at step 6 is not. */
START_TEST(test_schedule_takes_effect_at_its_step)
{
	struct scenario a, b;
	struct sim sa, sb;
	struct util_err err;
	float *fa[6] = {0}, *fb[6] = {0};
	size_t n = 300;
	int d, t;

	load_ok("{\"count\": 300, \"steps\": 10, " BOX "}", &a);
	load_ok("{\"count\": 300, \"steps\": 10, \"schedule\": [{\"step\": 5,"
		" \"set\": {\"weights.cohesion\": 3, \"max_force\": 0.5}}], " BOX "}", &b);
	ck_assert_int_eq(b.n_stages, 1);
	ck_assert_double_eq(b.stages[0].sc.w_coh, 3.0);
	ck_assert_int_eq(sim_init(&sa, &a, SIM_GRID, &err), 0);
	ck_assert_int_eq(sim_init(&sb, &b, SIM_GRID, &err), 0);
	for (d = 0; d < 4; d++) {
		fa[d] = malloc(n * sizeof(float));
		fb[d] = malloc(n * sizeof(float));
	}
	for (t = 0; t < 6; t++) {
		sim_step(&sa);
		sim_step(&sb);
		flock_to_id_order(&sa.flock, fa);
		flock_to_id_order(&sb.flock, fb);
		if (sa.step <= 5)
			for (d = 0; d < 4; d++)
				ck_assert_msg(memcmp(fa[d], fb[d], n * sizeof(float)) == 0,
					      "differs at step %llu", (unsigned long long)sa.step);
	}
	ck_assert_msg(memcmp(fa[2], fb[2], n * sizeof(float)) != 0 ||
		      memcmp(fa[3], fb[3], n * sizeof(float)) != 0, "no change at step 6");
	for (d = 0; d < 4; d++) {
		free(fa[d]);
		free(fb[d]);
	}
	sim_free(&sa);
	sim_free(&sb);
	scenario_free(&a);
	scenario_free(&b);
}
END_TEST

/* No boid ever ends a step inside an obstacle, whatever the step size:
 * circles, boxes and a polyline in 2D, spheres and boxes in 3D, with boids
 * flying straight at them (weights off, so only the hard collision acts). */
START_TEST(test_obstacles_never_entered)
{
	static const char *const OBS2 =
		"\"obstacles\": [{\"type\": \"sphere\", \"center\": [20, 20], \"radius\": 6},"
		" {\"type\": \"box\", \"min\": [5, 28], \"max\": [35, 31]},"
		" {\"type\": \"polyline\", \"points\": [[2, 2], [38, 6], [38, 14]]}]";
	static const char *const OBS3 =
		"\"obstacles\": [{\"type\": \"sphere\", \"center\": [20, 20, 20], \"radius\": 7},"
		" {\"type\": \"box\", \"min\": [2, 2, 2], \"max\": [12, 12, 12]}]";
	static const double DT[] = {0.1, 1, 7, 50};
	char text[1024];
	struct scenario sc;
	struct sim s;
	struct util_err err;
	size_t k;
	int t, i, o, dims = _i < 4 ? 2 : 3;

	snprintf(text, sizeof text, "{\"dimensions\": %d, \"count\": 400, \"steps\": 60, "
		 "\"dt\": %g, \"speed\": {\"min\": 0.5, \"max\": 1}, \"weights\": {\"separation\": 0,"
		 " \"alignment\": 0, \"cohesion\": 0, \"avoid\": 0},"
		 " \"target\": {\"position\": %s}, \"max_force\": 0.5, %s,"
		 " \"bounds\": {\"min\": %s, \"max\": %s, \"mode\": \"reflect\"}}",
		 dims, DT[_i % 4], dims == 2 ? "[20, 20]" : "[20, 20, 20]", dims == 2 ? OBS2 : OBS3,
		 dims == 2 ? "[0, 0]" : "[0, 0, 0]", dims == 2 ? "[40, 40]" : "[40, 40, 40]");
	load_ok(text, &sc);
	ck_assert_int_eq(sc.n_obstacles, dims == 2 ? 4 : 2);
	ck_assert_int_eq(sim_init(&s, &sc, SIM_GRID, &err), 0);
	for (t = 0; t < 60; t++) {
		sim_step(&s);
		for (k = 0; k < s.flock.n; k++)
			for (o = 0; o < sc.n_obstacles; o++) {
				double x[3] = {0, 0, 0}, q[3];
				int inside;

				for (i = 0; i < dims; i++)
					x[i] = s.flock.pos[i][k];
				obstacle_nearest(&sc.obstacles[o], dims, x, q, &inside);
				ck_assert_msg(!inside, "dt %g: boid %u inside obstacle %d at step %d",
					      DT[_i % 4], s.flock.id[k], o, t + 1);
			}
		ck_assert_msg(sim_check(&s, &err) == 0, "%s", err.msg);
	}
	sim_free(&s);
	scenario_free(&sc);
}
END_TEST

/* Within radii.avoid of an obstacle a boid steers away from it. */
START_TEST(test_obstacle_avoidance_steers)
{
	struct scenario sc;
	struct rules_params rp;
	struct rules_acc a;
	float near[3] = {13, 20, 0}, far[3] = {2, 20, 0}, vel[3] = {0, 0, 0};
	double acc[3];

	load_ok("{\"count\": 2, \"steps\": 1, \"max_force\": 10, \"radii\": {\"avoid\": 4},"
		" \"weights\": {\"avoid\": 2}, \"obstacles\": [{\"type\": \"sphere\","
		" \"center\": [20, 20], \"radius\": 5}], " BOX "}", &sc);
	rules_params_init(&rp, &sc);
	rules_acc_init(&a);
	rules_acceleration(&rp, &a, near, vel, sc.speed_max, acc);
	ck_assert_double_eq_tol(acc[0], -2.0, 1e-12); /* away, along -x, weight 2 */
	ck_assert_double_eq_tol(acc[1], 0.0, 1e-12);
	rules_acceleration(&rp, &a, far, vel, sc.speed_max, acc);
	ck_assert(acc[0] == 0.0 && acc[1] == 0.0);
	scenario_free(&sc);
}
END_TEST

static const struct bad {
	const char *text;
	const char *expect;
} BAD[] = {
	{"{\"count\": 2, \"steps\": 9, \"schedule\": [{\"step\": 3, \"set\": {\"weights.cohesin\": 1}}], "
	 BOX "}", "t.json: schedule[0]: weights.cohesin: unknown key (did you mean \"cohesion\"?)"},
	{"{\"count\": 2, \"steps\": 9, \"schedule\": [{\"step\": 3, \"set\": {\"count\": 5}}], " BOX "}",
	 "t.json: schedule[0].set: \"count\" cannot change during a run"},
	{"{\"count\": 2, \"steps\": 9, \"schedule\": [{\"step\": 3, \"set\": {\"max_force\": 1}},"
	 " {\"step\": 3, \"set\": {\"max_force\": 2}}], " BOX "}",
	 "t.json: schedule[1].step: schedule steps must increase"},
	{"{\"count\": 2, \"steps\": 9, \"schedule\": [{\"step\": 0, \"set\": {}}], " BOX "}",
	 "t.json: schedule[0].step: must be between 1 and"},
	{"{\"count\": 2, \"steps\": 9, \"schedule\": [{\"step\": 2, \"set\": {\"radii.alignment\": -1}}], "
	 BOX "}", "t.json: schedule[0]: radii.alignment: must be greater than 0"},
	{"{\"count\": 2, \"steps\": 9, \"attractors\": [{\"strength\": 1, \"range\": 2}], " BOX "}",
	 "t.json: attractors[0]: give either position or waypoints"},
	{"{\"count\": 2, \"steps\": 9, \"attractors\": [{\"position\": [1, 1], \"range\": 2}], " BOX "}",
	 "t.json: attractors[0].strength: required key is missing"},
	{"{\"count\": 2, \"steps\": 9, \"attractors\": [{\"position\": [1, 1], \"strength\": 1,"
	 " \"range\": 2, \"colour\": 1}], " BOX "}", "t.json: attractors[0].colour: unknown key"},
	{"{\"count\": 2, \"steps\": 9, \"attractors\": [{\"strength\": 1, \"range\": 2, \"waypoints\":"
	 " [{\"step\": 5, \"position\": [1, 1]}, {\"step\": 5, \"position\": [2, 2]}]}], " BOX "}",
	 "t.json: attractors[0].waypoints[1].step: waypoint steps must increase"},
	{"{\"count\": 2, \"steps\": 9, \"obstacles\": [{\"type\": \"cone\"}], " BOX "}",
	 "t.json: obstacles[0].type: expected \"sphere\", \"box\", \"segment\" or \"polyline\""},
	{"{\"count\": 2, \"steps\": 9, \"obstacles\": [{\"type\": \"sphere\", \"center\": [1, 1]}], "
	 BOX "}", "t.json: obstacles[0].radius: required key is missing"},
	{"{\"count\": 2, \"steps\": 9, \"obstacles\": [{\"type\": \"box\", \"min\": [1, 5],"
	 " \"max\": [2, 5]}], " BOX "}", "t.json: obstacles[0].max[1]: must be greater than min[1]"},
	{"{\"dimensions\": 3, \"count\": 2, \"steps\": 9, \"obstacles\": [{\"type\": \"segment\","
	 " \"from\": [1, 1, 1], \"to\": [2, 2, 2]}], \"bounds\": {\"min\": [0, 0, 0], \"max\": [9, 9, 9]}}",
	 "t.json: obstacles[0].type: segments are 2D only"},
	{"{\"count\": 2, \"steps\": 9, \"speed\": {\"variation\": 1}, " BOX "}",
	 "t.json: speed.variation: must be at most 0.999"},
	{"{\"count\": 2, \"steps\": 9, \"target\": {\"wander\": {\"min\": [5, 5], \"max\": [5, 9]}}, "
	 BOX "}", "t.json: target.wander.max[0]: must be greater than target.wander.min[0]"},
};

START_TEST(test_bad_behaviour_keys)
{
	struct scenario sc;
	struct util_err err = {{0}};
	const struct bad *b = &BAD[_i];

	ck_assert_msg(scenario_load_string("t.json", b->text, strlen(b->text), NULL, 0, &sc,
					   &err) != 0, "case %d accepted", _i);
	ck_assert_msg(strstr(err.msg, b->expect) != NULL, "case %d: got \"%s\", want \"%s\"", _i,
		      err.msg, b->expect);
}
END_TEST

Suite *behaviours_suite(void)
{
	Suite *s = suite_create("behaviours");
	TCase *tc = tcase_create("behaviours");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_speed_variation);
	tcase_add_test(tc, test_speed_noise_smooth);
	tcase_add_test(tc, test_target_radius);
	tcase_add_test(tc, test_wandering_target);
	tcase_add_test(tc, test_repeller_and_attractor);
	tcase_add_test(tc, test_waypoints);
	tcase_add_test(tc, test_schedule_takes_effect_at_its_step);
	tcase_add_loop_test(tc, test_obstacles_never_entered, 0, 8);
	tcase_add_test(tc, test_obstacle_avoidance_steers);
	tcase_add_loop_test(tc, test_bad_behaviour_keys, 0, (int)(sizeof BAD / sizeof BAD[0]));
	suite_add_tcase(s, tc);
	return s;
}
