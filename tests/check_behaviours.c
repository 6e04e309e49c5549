/* check_behaviours.c: the behaviours of the seed systems: per-boid speeds,
 * target radius and wandering target, attractors and repellers, the
 * parameter schedule, colour following, predators and the population
 * schedule, each on a small case whose outcome is known. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "check_suites.h"
#include "detmath.h"
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
	ck_assert_int_eq(sim_init(&s, &sc, SIM_GRID, &test_ctx, &err), 0);
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
	ck_assert_int_eq(sim_init(&a, &sc, SIM_GRID, &test_ctx, &err), 0);
	ck_assert_int_eq(sim_init(&b, &sc, SIM_BRUTE, &test_ctx, &err), 0);
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
	ck_assert_int_eq(sim_init(&s, &sc, SIM_GRID, &test_ctx, &err), 0);
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
	ck_assert_int_eq(sim_init(&s, &sc, SIM_GRID, &test_ctx, &err), 0);
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
	float *fa[FLOCK_FIELDS_MAX] = {0}, *fb[FLOCK_FIELDS_MAX] = {0};
	size_t n = 300;
	int d, t;

	load_ok("{\"count\": 300, \"steps\": 10, " BOX "}", &a);
	load_ok("{\"count\": 300, \"steps\": 10, \"schedule\": [{\"step\": 5,"
		" \"set\": {\"weights.cohesion\": 3, \"max_force\": 0.5}}], " BOX "}", &b);
	ck_assert_int_eq(b.n_stages, 1);
	ck_assert_double_eq(b.stages[0].sc.w_coh, 3.0);
	ck_assert_int_eq(sim_init(&sa, &a, SIM_GRID, &test_ctx, &err), 0);
	ck_assert_int_eq(sim_init(&sb, &b, SIM_GRID, &test_ctx, &err), 0);
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
	ck_assert_int_eq(sim_init(&s, &sc, SIM_GRID, &test_ctx, &err), 0);
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

/* A flock shut in a closed polyline never leaves it: polygons of 3 to 9
 * corners at every angle, in a box that reflects or wraps (where the
 * walls round positions to binary32 themselves), Vicsek's model with
 * little or no noise (boids
 * sliding along the walls and into the corners, where a move ending a
 * hair off a wall, or passing through a joint, used to leak: one boid or
 * more in half of these before the rounding was handled), several
 * speeds. Each step, every boid is tested against the polygon by the
 * crossing rule, in double. */
static int in_polygon(const double (*v)[2], int n, double x, double y)
{
	int i, in = 0;

	for (i = 0; i < n; i++) {
		const double *a = v[i], *b = v[(i + 1) % n];

		if ((a[1] > y) != (b[1] > y) &&
		    x < a[0] + (y - a[1]) / (b[1] - a[1]) * (b[0] - a[0]))
			in = !in;
	}
	return in;
}

/* Closes the scenario text begun at text (w: its end) with the polygon
 * v of nv corners as a closed polyline, runs it step by step and checks
 * every boid in the polygon after each step (case: the loop's index). */
static void stays_in_polygon(char *text, char *w, const double (*v)[2], int nv, int steps,
			     int case_)
{
	struct scenario sc;
	struct sim s;
	struct util_err err;
	size_t k;
	int i, t;

	for (i = 0; i <= nv; i++)
		w += sprintf(w, "%s[%.17g, %.17g]", i ? ", " : "", v[i % nv][0], v[i % nv][1]);
	sprintf(w, "]}]}");
	load_ok(text, &sc);
	ck_assert_int_eq(sim_init(&s, &sc, SIM_GRID, &test_ctx, &err), 0);
	for (t = 1; t <= steps; t++) {
		sim_step(&s);
		for (k = 0; k < s.flock.n; k++)
			ck_assert_msg(in_polygon(v, nv, s.flock.pos[0][k], s.flock.pos[1][k]),
				      "case %d: boid %u left at step %d, at (%.9g, %.9g)", case_,
				      s.flock.id[k], t, (double)s.flock.pos[0][k],
				      (double)s.flock.pos[1][k]);
	}
	sim_free(&s);
	scenario_free(&sc);
}

START_TEST(test_polygon_never_left)
{
	static const double SPEED[] = {0.05, 0.3, 0.7, 1.5};
	static const double NOISE[] = {0, 0.02, 0, 0.3};
	const int nv = 3 + _i % 7;
	const double rot = 0.37 + 0.91 * _i;
	double v[9][2];
	char text[2048], *w = text;
	int i;

	w += sprintf(w, "{\"model\": \"vicsek\", \"count\": 150, \"steps\": 400, \"dt\": 1,"
		     " \"seed\": %d, \"radii\": {\"alignment\": 1}, \"speed\": {\"max\": %g},"
		     " \"noise\": %g, \"bounds\": {\"min\": [0, 0], \"max\": [50, 50], "
		     "\"mode\": \"%s\"}, \"start\": {\"shape\": \"ball\", \"center\": "
		     "[25, 25], \"radius\": 3}, \"obstacles\": [{\"type\": \"polyline\", "
		     "\"points\": [", _i + 1, SPEED[_i % 4], NOISE[(_i / 4) % 4],
		     (_i / 4) % 2 ? "wrap" : "reflect");
	for (i = 0; i < nv; i++) {
		const double a = rot + 2 * M_PI * i / nv, r = i % 2 ? 15 : 9 + _i % 5;

		v[i][0] = 25 + r * cos(a);
		v[i][1] = 25 + r * sin(a);
	}
	stays_in_polygon(text, w, (const double (*)[2])v, nv, 400, _i);
}
END_TEST

/* A polygon with a spike of about 5 degrees (a review's): boids driven
 * into its tip, where binary32 cannot tell the two sides apart, stay in
 * (174 of 200 left it in 300 steps under wrap before the integrator took
 * a move still bouncing after 8 bounces back to where it began). Wrap and
 * reflect; and wrap a million units from the origin, where a unit in the
 * last place (1/16) is long beside the polygon's sides, and rounding
 * took 8 boids round a vertex (before the way from a boid's exact point
 * to its rounding was tested against the segments). */
START_TEST(test_spike_never_left)
{
	static const double V[8][2] = {
		{27.667521586530995, 23.94340992457714}, {27.810129272622753, 26.17003916346196},
		{25.549960891488414, 25.954563913962396}, {18.080864961061117, 40.400411701558696},
		{24.368371710912584, 25.17210180611196}, {7.04285290360702, 17.213651570294434},
		{16.722331706576764, 6.793402085396195}, {25.354036656675316, 24.330167688141657}};
	const double o = _i == 2 ? 1e6 : 0; /* the offset */
	double W[8][2];
	char text[2048], *w = text;
	int i;

	w += sprintf(w, "{\"model\": \"vicsek\", \"count\": 200, \"steps\": 300, \"dt\": 0.5,"
		     " \"seed\": 92, \"radii\": {\"alignment\": 1}, \"speed\": {\"max\": 1.5},"
		     " \"noise\": 0, \"bounds\": {\"min\": [%.17g, %.17g], \"max\": [%.17g, %.17g],"
		     " \"mode\": \"%s\"}, \"start\": {\"shape\": \"ball\", \"center\": [%.17g, %.17g],"
		     " \"radius\": %.17g}, \"obstacles\": [{\"type\": \"polyline\", \"points\": [",
		     o, o, o + 50, o + 50, _i == 1 ? "reflect" : "wrap", o + 25, o + 25,
		     _i == 2 ? 0.39279307252934925 : 0.3927930725042111);
	for (i = 0; i < 8; i++) {
		W[i][0] = V[i][0] + o;
		W[i][1] = V[i][1] + o;
	}
	stays_in_polygon(text, w, (const double (*)[2])W, 8, 300, _i);
}
END_TEST

/* A corridor half a unit wide along a reflecting wall, its far side beyond the
 * wall: boids in it come back off the wall into the segment, which they
 * must not cross (the walls moved them after the move, untested, before
 * they joined the bounce loop). */
START_TEST(test_wall_corridor_never_left)
{
	static const double V[4][2] = {{49.5, 5}, {51, 5}, {51, 45}, {49.5, 45}};
	char text[2048], *w = text;

	w += sprintf(w, "{\"model\": \"vicsek\", \"count\": 100, \"steps\": 300, \"dt\": 1,"
		     " \"seed\": 4, \"radii\": {\"alignment\": 1}, \"speed\": {\"max\": %g},"
		     " \"noise\": 0.3, \"bounds\": {\"min\": [0, 0], \"max\": [50, 50],"
		     " \"mode\": \"reflect\"}, \"start\": {\"shape\": \"ball\", \"center\": "
		     "[49.75, 25], \"radius\": 0.2}, \"obstacles\": [{\"type\": \"polyline\", "
		     "\"points\": [", _i ? 1.3 : 0.7);
	stays_in_polygon(text, w, V, 4, 300, _i);
}
END_TEST

/* A cell 0.6 wide round the corner of a wrap box a million units from
 * the origin (x and y each in [max - 0.3, max) or [min, min + 0.3), four
 * segments; a unit in the last place is 1/16 there): boids stay in it.
 * Nudged back across a segment after rounding, they were sent out of
 * the box, and its walls moved them on into other cells (a review's:
 * 8 boids left at the first step). */
START_TEST(test_far_corner_cell_never_left)
{
	struct scenario sc;
	struct sim s;
	struct util_err err;
	size_t k;
	int t;

	load_ok("{\"model\": \"vicsek\", \"count\": 200, \"steps\": 40, \"dt\": 1, \"seed\": 1,"
		" \"radii\": {\"alignment\": 1}, \"speed\": {\"max\": 0.2}, \"noise\": 0.5,"
		" \"bounds\": {\"min\": [1000000, 1000000], \"max\": [1000050, 1000050],"
		" \"mode\": \"wrap\"}, \"start\": {\"shape\": \"ball\", \"center\": [1000049.85,"
		" 1000049.85], \"radius\": 0.075}, \"obstacles\": ["
		"{\"type\": \"segment\", \"from\": [1000049.7, 1000000], \"to\": [1000049.7, 1000050]},"
		"{\"type\": \"segment\", \"from\": [1000000.3, 1000000], \"to\": [1000000.3, 1000050]},"
		"{\"type\": \"segment\", \"from\": [1000000, 1000049.7], \"to\": [1000050, 1000049.7]},"
		"{\"type\": \"segment\", \"from\": [1000000, 1000000.3], \"to\": [1000050, 1000000.3]}]}",
		&sc);
	ck_assert_int_eq(sim_init(&s, &sc, SIM_GRID, &test_ctx, &err), 0);
	for (t = 1; t <= 40; t++) {
		sim_step(&s);
		for (k = 0; k < s.flock.n; k++) {
			const double x = s.flock.pos[0][k], y = s.flock.pos[1][k];

			ck_assert_msg((x > 1000049.7 || x < 1000000.3) && (y > 1000049.7 || y < 1000000.3),
				      "boid %u left at step %d, at (%.9g, %.9g)", s.flock.id[k], t, x, y);
		}
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
	 "t.json: obstacles[0].type: expected one of \"sphere\", \"box\", \"segment\" or \"polyline\", got \"cone\""},
	{"{\"count\": 2, \"steps\": 9, \"obstacles\": [{\"type\": \"sphere\", \"center\": [1, 1]}], "
	 BOX "}", "t.json: obstacles[0].radius: required key is missing"},
	{"{\"count\": 2, \"steps\": 9, \"obstacles\": [{\"type\": \"box\", \"min\": [1, 5],"
	 " \"max\": [2, 5]}], " BOX "}", "t.json: obstacles[0].max[1]: must be greater than min[1]"},
	{"{\"dimensions\": 3, \"count\": 2, \"steps\": 9, \"obstacles\": [{\"type\": \"segment\","
	 " \"from\": [1, 1, 1], \"to\": [2, 2, 2]}], \"bounds\": {\"min\": [0, 0, 0], \"max\": [9, 9, 9]}}",
	 "t.json: obstacles[0].type: segments are 2D only"},
	{"{\"count\": 2, \"steps\": 9, \"speed\": {\"variation\": 1}, " BOX "}",
	 "t.json: speed.variation: must be at most 0.999"},
	{"{\"count\": 2, \"steps\": 9, \"hue\": 1, " BOX "}", "t.json: hue: must be an object"},
	{"{\"count\": 2, \"steps\": 9, \"hue\": {\"wieght\": 1}, " BOX "}",
	 "t.json: hue.wieght: unknown key (did you mean \"weight\"?)"},
	{"{\"count\": 2, \"steps\": 9, \"hue\": {\"weight\": -1}, " BOX "}",
	 "t.json: hue.weight: must be at least 0, got -1"},
	{"{\"count\": 2, \"steps\": 9, \"dt\": 0.5, \"hue\": {\"weight\": 3}, " BOX "}",
	 "t.json: hue.weight: must be at most 1/dt (2), got 3"},
	{"{\"count\": 2, \"steps\": 9, \"hue\": {\"radius\": 0}, " BOX "}",
	 "t.json: hue.radius: must be greater than 0, got 0"},
	{"{\"count\": 2, \"steps\": 9, \"hue\": {\"radius\": \"far\"}, " BOX "}",
	 "t.json: hue.radius: expected a number"},
	{"{\"count\": 2, \"steps\": 9, \"hue\": {\"radius\": 3.5}, " BOX "}",
	 "t.json: hue.radius: must be at most the model's largest radius (3), got 3.5"},
	{"{\"count\": 2, \"steps\": 9, \"schedule\": [{\"step\": 3, \"set\": {\"hue.weight\": 1}}], "
	 BOX "}", "t.json: schedule[0].set: a schedule can change hue.weight and hue.radius only"},
	{"{\"count\": 2, \"steps\": 9, \"target\": {\"wander\": {\"min\": [5, 5], \"max\": [5, 9]}}, "
	 BOX "}", "t.json: target.wander.max[0]: must be greater than target.wander.min[0]"},
};

/* ---- colour following ---- */

/* The circular variance of the hues, 1 - |mean of the hue vectors|: about
 * 1 for hues spread round the circle, 0 when they are all one. */
static double hue_variance(const struct flock *f)
{
	double c = 0, s = 0;
	size_t k;

	for (k = 0; k < f->n; k++) {
		c += f->hue[0][k];
		s += f->hue[1][k];
	}
	return 1.0 - sqrt(c * c + s * s) / (double)f->n;
}

static size_t hue_groups(struct sim *s)
{
	uint32_t *parent = malloc(s->flock.n * sizeof *parent);
	size_t g;

	grid_build(&s->grid, &s->flock);
	g = grid_groups(&s->grid, &s->flock, &s->rp, s->rp.r2_hue, parent);
	free(parent);
	return g;
}

/* The hues of a connected flock converge: from random hues (circular
 * variance near 1) to one hue (below 0.05) within 300 steps; for boids
 * that hardly move (2D, 3D) and for flying Reynolds and Vicsek flocks. The
 * flock is checked to be connected (one group within hue.radius) at the
 * start and at the end. */
START_TEST(test_hue_converges)
{
	static const char *const CASES[] = {
		"{\"count\": 200, \"steps\": 300, \"seed\": 1, \"speed\": {\"max\": 1e-6},"
		" \"weights\": {\"separation\": 0, \"alignment\": 0, \"cohesion\": 0},"
		" \"radii\": {\"alignment\": 4}, \"hue\": {\"weight\": 0.5},"
		" \"bounds\": {\"min\": [0, 0], \"max\": [20, 20], \"mode\": \"reflect\"}}",
		"{\"dimensions\": 3, \"count\": 300, \"steps\": 300, \"seed\": 2,"
		" \"speed\": {\"max\": 1e-6}, \"weights\": {\"separation\": 0, \"alignment\": 0,"
		" \"cohesion\": 0}, \"radii\": {\"cohesion\": 5}, \"hue\": {\"weight\": 0.5,"
		" \"radius\": 4}, \"bounds\": {\"min\": [0, 0, 0], \"max\": [12, 12, 12],"
		" \"mode\": \"reflect\"}}",
		"{\"count\": 300, \"steps\": 300, \"seed\": 3, \"radii\": {\"alignment\": 4,"
		" \"cohesion\": 4}, \"bounds\": {\"min\": [0, 0], \"max\": [20, 20],"
		" \"mode\": \"reflect\"}, \"hue\": {\"weight\": 0.5}}",
		"{\"model\": \"vicsek\", \"count\": 300, \"steps\": 300, \"seed\": 4,"
		" \"noise\": 0.3, \"radii\": {\"alignment\": 4}, \"speed\": {\"max\": 0.1},"
		" \"bounds\": {\"min\": [0, 0], \"max\": [16, 16]}, \"hue\": {\"weight\": 0.5}}"};
	struct scenario sc;
	struct sim s;
	struct util_err err;
	double v0, v = 1;
	int t;

	load_ok(CASES[_i], &sc);
	ck_assert_int_eq(sim_init(&s, &sc, SIM_GRID, &test_ctx, &err), 0);
	v0 = hue_variance(&s.flock);
	ck_assert_msg(v0 > 0.8, "case %d: initial hues not spread (variance %g)", _i, v0);
	ck_assert_msg(hue_groups(&s) == 1, "case %d: the flock is not connected", _i);
	for (t = 0; t < 300 && v >= 0.05; t++) {
		sim_step(&s);
		v = hue_variance(&s.flock);
	}
	ck_assert_msg(v < 0.05, "case %d: circular variance still %g after %d steps", _i, v, t);
	ck_assert_msg(hue_groups(&s) == 1, "case %d: the flock came apart", _i);
	sim_free(&s);
	scenario_free(&sc);
}
END_TEST

/* A boid with no neighbour within hue.radius keeps its hue, bit for bit:
 * alone, or far from the others. */
START_TEST(test_hue_lone_boid)
{
	struct scenario sc;
	struct sim s;
	struct util_err err;
	float c[3], sn[3];
	size_t k;
	int t;

	load_ok(_i == 0 ? "{\"count\": 1, \"steps\": 100, \"hue\": {\"weight\": 1}, " BOX "}" :
		"{\"count\": 3, \"steps\": 100, \"seed\": 7, \"speed\": {\"max\": 1e-6},"
		" \"hue\": {\"weight\": 1, \"radius\": 0.01}, " BOX "}", &sc);
	ck_assert_int_eq(sim_init(&s, &sc, _i == 0 ? SIM_GRID : SIM_BRUTE, &test_ctx, &err), 0);
	for (k = 0; k < s.flock.n; k++) {
		c[s.flock.id[k]] = s.flock.hue[0][k];
		sn[s.flock.id[k]] = s.flock.hue[1][k];
	}
	for (t = 0; t < 100; t++)
		sim_step(&s);
	for (k = 0; k < s.flock.n; k++) {
		uint32_t id = s.flock.id[k];

		ck_assert_msg(s.flock.hue[0][k] == c[id] && s.flock.hue[1][k] == sn[id],
			      "boid %u: hue (%.9g, %.9g) became (%.9g, %.9g)", id, c[id], sn[id],
			      s.flock.hue[0][k], s.flock.hue[1][k]);
	}
	sim_free(&s);
	scenario_free(&sc);
}
END_TEST

/* The update u' = normalize(u + w dt (mean - u)), on known sums. */
START_TEST(test_hue_update)
{
	struct scenario sc;
	struct rules_params rp;
	struct rules_acc a;
	const float east[3] = {1, 0, 0};
	float out[3];

	load_ok("{\"count\": 2, \"steps\": 1, \"dt\": 0.5, \"hue\": {\"weight\": 1}, " BOX "}",
		&sc);
	rules_params_init(&rp, &sc);
	ck_assert_double_eq(rp.hue_rate, 0.5);
	ck_assert_float_eq(rp.r2_hue, 9.0f); /* radii.alignment's default 3 */
	rules_acc_init(&a);
	a.hue[1] = 2.0f; /* two neighbours due north: the mean is (0, 1) */
	a.n_hue = 2;
	rules_hue_update(&rp, &a, east, out);
	ck_assert_float_eq_tol(out[0], 0.70710678f, 1e-7f);
	ck_assert_float_eq_tol(out[1], 0.70710678f, 1e-7f);
	/* a mean of zero at rate 1 would leave nothing: the hue is kept */
	rp.hue_rate = 1.0;
	a.hue[1] = 0.0f;
	rules_hue_update(&rp, &a, east, out);
	ck_assert(out[0] == 1.0f && out[1] == 0.0f);
	/* no neighbour: kept */
	a.n_hue = 0;
	a.hue[1] = 2.0f;
	rules_hue_update(&rp, &a, east, out);
	ck_assert(out[0] == 1.0f && out[1] == 0.0f);
	/* the fraction of a turn written to trajectories */
	ck_assert_float_eq(flock_hue_turns(1.0f, 0.0f), 0.0f);
	ck_assert_float_eq(flock_hue_turns(0.0f, 1.0f), 0.25f);
	ck_assert_float_eq(flock_hue_turns(-1.0f, 0.0f), 0.5f);
	ck_assert_float_eq(flock_hue_turns(0.0f, -1.0f), 0.75f);
	ck_assert_float_eq(flock_hue_turns(1.0f, -1e-30f), 0.0f); /* rounds to 1: 0 */
	ck_assert(!signbit(flock_hue_turns(1.0f, -0.0f)));
	scenario_free(&sc);
}
END_TEST

/* A colour velocity (the JavaFX report's colour vector moved by cohesion
 * and alignment): r' = r + dt (C m.perp(u) + A (mean r_j - r)), u' =
 * normalize(u + dt r' perp(u)), on known sums. */
START_TEST(test_hue_spin_update)
{
	struct scenario sc;
	struct rules_params rp;
	struct rules_acc a;
	const float east[3] = {1, 0, 0.2f};
	float out[3];

	load_ok("{\"count\": 2, \"steps\": 1, \"dt\": 0.5, \"hue\": {\"weight\": 1, "
		"\"alignment\": 1}, " BOX "}", &sc);
	ck_assert(sc.hue_spin_on);
	rules_params_init(&rp, &sc);
	ck_assert(rp.hue_spin);
	rules_acc_init(&a);
	/* two neighbours due north turning at 0.4: alignment 0.4 - 0.2, and
	 * cohesion pulls by m.perp(u) = 1: r' = 0.2 + 0.5 (1 + 0.2) */
	a.hue[1] = 2.0f;
	a.hue_r = 0.8f;
	a.n_hue = 2;
	rules_hue_update(&rp, &a, east, out);
	ck_assert_float_eq_tol(out[2], 0.8f, 1e-7f);
	ck_assert_float_eq_tol(out[0], 0.92847669f, 1e-7f); /* normalize(1, 0.4) */
	ck_assert_float_eq_tol(out[1], 0.37139068f, 1e-7f);
	/* neighbours at east turning at 0.2 too: nothing changes the rate */
	a.hue[0] = 2.0f;
	a.hue[1] = 0.0f;
	a.hue_r = 0.4f;
	rules_hue_update(&rp, &a, east, out);
	ck_assert_float_eq(out[2], 0.2f);
	/* no neighbour: the rate is kept and the hue turns by atan(dt r) */
	a.n_hue = 0;
	rules_hue_update(&rp, &a, east, out);
	ck_assert_float_eq(out[2], 0.2f);
	ck_assert_float_eq_tol(out[1] / out[0], 0.1f, 1e-7f);
	scenario_free(&sc);
}


/* The hue never changes motion: positions and velocities are the same
 * bits with and without it; and a boid sees hues only in its view cone. */
START_TEST(test_hue_keeps_motion)
{
	static const char *const FLOCK =
		"{\"count\": 400, \"steps\": 40, \"seed\": 11, \"view_angle\": 200,"
		" \"bounds\": {\"min\": [0, 0], \"max\": [25, 25]}%s}";
	char text[512];
	struct scenario a, b;
	struct sim sa, sb;
	struct util_err err;
	size_t k;
	int t, d;

	snprintf(text, sizeof text, FLOCK, "");
	load_ok(text, &a);
	snprintf(text, sizeof text, FLOCK, ", \"hue\": {\"weight\": 0.3}");
	load_ok(text, &b);
	ck_assert_int_eq(sim_init(&sa, &a, SIM_GRID, &test_ctx, &err), 0);
	ck_assert_int_eq(sim_init(&sb, &b, SIM_GRID, &test_ctx, &err), 0);
	for (t = 0; t < 40; t++) {
		sim_step(&sa);
		sim_step(&sb);
	}
	for (k = 0; k < sa.flock.n; k++) {
		ck_assert_uint_eq(sa.flock.id[k], sb.flock.id[k]);
		for (d = 0; d < 2; d++)
			ck_assert(sa.flock.pos[d][k] == sb.flock.pos[d][k] &&
				  sa.flock.vel[d][k] == sb.flock.vel[d][k]);
	}
	sim_free(&sa);
	sim_free(&sb);
	scenario_free(&a);
	scenario_free(&b);
	/* Two boids flying east, one behind the other, with a 90-degree view:
	 * the one in front does not see the one behind, which sees it. */
	load_ok("{\"count\": 2, \"steps\": 1, \"view_angle\": 90, \"speed\": {\"min\": 1,"
		" \"max\": 1}, \"hue\": {\"weight\": 1}, " BOX "}", &a);
	ck_assert_int_eq(sim_init(&sa, &a, SIM_BRUTE, &test_ctx, &err), 0);
	for (k = 0; k < 2; k++) {
		sa.flock.pos[0][k] = sa.flock.id[k] == 0 ? 20.0f : 19.0f;
		sa.flock.pos[1][k] = 20.0f;
		sa.flock.vel[0][k] = 1.0f;
		sa.flock.vel[1][k] = 0.0f;
		sa.flock.hue[0][k] = sa.flock.id[k] == 0 ? 1.0f : -1.0f;
		sa.flock.hue[1][k] = 0.0f;
	}
	sim_step(&sa);
	for (k = 0; k < 2; k++)
		if (sa.flock.id[k] == 0)
			ck_assert(sa.flock.hue[0][k] == 1.0f && sa.flock.hue[1][k] == 0.0f);
		else
			ck_assert_msg(sa.flock.hue[0][k] == 1.0f, "the boid behind kept %g",
				      sa.flock.hue[0][k]);
	sim_free(&sa);
	scenario_free(&a);
}
END_TEST

/* A boid flees a predator: one boid moving across, a predator as fast as
 * it three units behind, chasing it. _i: model (reynolds, simple, couzin)
 * x dims. With flight (against weights.flee 0, or for Couzin a radii.flee
 * too small to see the predator) the boid's velocity away from the
 * predator is larger after one step, and after twenty it is well away
 * and heading away. */
START_TEST(test_boids_flee_predator)
{
	static const char *const MODEL[] = {"reynolds", "simple", "couzin"};
	const int m = _i % 3, dims = 2 + _i / 3;
	double dist[2], away[2], along[2];
	int on, t, d;

	for (on = 0; on < 2; on++) {
		char text[1024];
		struct scenario sc;
		struct sim s;
		struct util_err err;
		double v[3] = {0, 0, 0}, r[3] = {0, 0, 0}, r2 = 0, dot = 0;

		snprintf(text, sizeof text,
			 "{\"model\": \"%s\", \"dimensions\": %d, \"count\": 1, \"steps\": 1,"
			 " \"speed\": {\"min\": 0, \"max\": 1}, \"max_force\": 0.2,"
			 " \"radii\": {\"flee\": %s}, \"weights\": {\"flee\": %s},"
			 " \"predators\": {\"speed\": 0.5},"
			 " \"bounds\": {\"min\": [0, 0%s], \"max\": [60, 60%s], \"mode\": \"none\"}}",
			 MODEL[m], dims, m == 2 && !on ? "0.01" : "6", m != 2 && !on ? "0" : "2",
			 dims == 3 ? ", 0" : "", dims == 3 ? ", 60" : "");
		load_ok(text, &sc);
		ck_assert_int_eq(sim_init(&s, &sc, SIM_GRID, &test_ctx, &err), 0);
		ck_assert_int_eq(s.pred.n, 1);
		for (d = 0; d < dims; d++) {
			s.flock.pos[d][0] = 30.0f;
			s.flock.vel[d][0] = d == 1 ? 0.5f : 0.0f;
			s.pred.pos[d][0] = d == 0 ? 27.0f : 30.0f;
			s.pred.vel[d][0] = d == 0 ? 0.5f : 0.0f;
		}
		for (t = 1; t <= 20; t++) {
			sim_step(&s);
			ck_assert_msg(sim_check(&s, &err) == 0, "%s", err.msg);
			if (t == 1) {
				double q2 = 0, q = 0;

				for (d = 0; d < dims; d++) {
					double rd = (double)s.flock.pos[d][0] - s.pred.pos[d][0];

					q2 += rd * rd;
					q += rd * s.flock.vel[d][0];
				}
				along[on] = q / sqrt(q2);
			}
		}
		for (d = 0; d < dims; d++) {
			r[d] = (double)s.flock.pos[d][0] - s.pred.pos[d][0];
			v[d] = s.flock.vel[d][0];
			r2 += r[d] * r[d];
			dot += r[d] * v[d];
		}
		dist[on] = sqrt(r2);
		away[on] = dot / sqrt(r2) / sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
		sim_free(&s);
		scenario_free(&sc);
	}
	ck_assert_msg(along[1] > along[0] + 0.2, "%s %dD: speed away %g fleeing, %g not",
		      MODEL[m], dims, along[1], along[0]);
	ck_assert_msg(dist[1] > 6.0 && away[1] > 0.9, "%s %dD: %g away, heading cosine %g",
		      MODEL[m], dims, dist[1], away[1]);
}
END_TEST

/* A predator heads for its quarry, the nearest boid or the flock's
 * centre, at predators.speed; and it turns at most predators.max_turn dt
 * per step. */
START_TEST(test_predator_chase)
{
	static const char *const CHASE[] = {"nearest", "centre"};
	struct scenario sc;
	struct sim s;
	struct util_err err;
	char text[1024];
	double want[2], got[2], n;
	int t, k;

	snprintf(text, sizeof text,
		 "{\"count\": 3, \"steps\": 1, \"speed\": {\"min\": 0, \"max\": 1},"
		 " \"predators\": {\"speed\": 0.25, \"chase\": \"%s\"}, " BOX "}", CHASE[_i]);
	load_ok(text, &sc);
	ck_assert_int_eq(sim_init(&s, &sc, SIM_BRUTE, &test_ctx, &err), 0);
	/* boids at (30, 20), (20, 32) and (10, 10); the predator at (20, 20) */
	for (k = 0; k < 3; k++) {
		const float X[3] = {30, 20, 10}, Y[3] = {20, 32, 10};

		s.flock.pos[0][k] = X[s.flock.id[k]];
		s.flock.pos[1][k] = Y[s.flock.id[k]];
		s.flock.vel[0][k] = s.flock.vel[1][k] = 0.0f;
	}
	s.pred.pos[0][0] = s.pred.pos[1][0] = 20.0f;
	s.pred.vel[0][0] = 0.0f;
	s.pred.vel[1][0] = -0.25f;
	/* nearest: (30, 20), 10 away; centre: (20, 62/3) */
	want[0] = _i == 0 ? 1.0 : 0.0;
	want[1] = _i == 0 ? 0.0 : 1.0;
	sim_step(&s);
	n = hypot(s.pred.vel[0][0], s.pred.vel[1][0]);
	got[0] = s.pred.vel[0][0] / n;
	got[1] = s.pred.vel[1][0] / n;
	ck_assert_msg(fabs(got[0] - want[0]) < 1e-6 && fabs(got[1] - want[1]) < 1e-6,
		      "%s: heading (%g, %g), want (%g, %g)", CHASE[_i], got[0], got[1], want[0],
		      want[1]);
	ck_assert_msg(fabs(n - 0.25) < 1e-6, "predator speed %g", n);
	sim_free(&s);
	scenario_free(&sc);

	/* The turn limit: 30 degrees per unit time, dt 0.5, from heading -y
	 * toward a quarry at +x: 15 degrees a step, never more, until aimed. */
	snprintf(text, sizeof text,
		 "{\"count\": 1, \"steps\": 1, \"dt\": 0.5, \"speed\": {\"min\": 0, \"max\": 1},"
		 " \"predators\": {\"speed\": 0.01, \"chase\": \"%s\", \"max_turn\": 30}, " BOX "}",
		 CHASE[_i]);
	load_ok(text, &sc);
	ck_assert_int_eq(sim_init(&s, &sc, SIM_BRUTE, &test_ctx, &err), 0);
	s.flock.pos[0][0] = 30.0f;
	s.flock.pos[1][0] = 20.0f;
	s.flock.vel[0][0] = s.flock.vel[1][0] = 0.0f;
	s.pred.pos[0][0] = s.pred.pos[1][0] = 20.0f;
	s.pred.vel[0][0] = 0.0f;
	s.pred.vel[1][0] = -0.01f;
	for (t = 1; t <= 8; t++) {
		double a;

		sim_step(&s);
		a = atan2(s.pred.vel[1][0], s.pred.vel[0][0]) * 180.0 / DETMATH_PI;
		/* from -90 degrees, 15 a step, exactly, up to the quarry at
		 * about 0 (as the predator moves a little, not quite) */
		ck_assert_msg(fabs(a - fmin(0.0, -90.0 + 15.0 * t)) < (t < 6 ? 1e-4 : 0.5),
			      "step %d: heading %g degrees", t, a);
	}
	sim_free(&s);
	scenario_free(&sc);
}
END_TEST

/* Counts follow the population schedule, step by step: boids added with
 * the next ids at their step, removed by highest id (in a region, only
 * those inside it), every id once, the invariants kept. */
START_TEST(test_population_schedule)
{
	struct scenario sc;
	struct sim s;
	struct util_err err;
	uint32_t ids[64];
	size_t k, inside = 0;
	int t;

	load_ok("{\"count\": 20, \"steps\": 1, \"speed\": {\"min\": 0.5, \"max\": 1},"
		" \"population\": [{\"step\": 3, \"add\": 10, \"region\": {\"min\": [5, 5], \"max\": [6, 6]}},"
		" {\"step\": 5, \"remove\": 4},"
		" {\"step\": 5, \"add\": 2},"
		" {\"step\": 8, \"remove\": 30, \"region\": {\"min\": [0, 0], \"max\": [20, 40]}}], "
		BOX "}", &sc);
	ck_assert_uint_eq(sc.capacity, 30);
	ck_assert_uint_eq(sc.ids_total, 32);
	ck_assert_int_eq(sim_init(&s, &sc, _i ? SIM_BRUTE : SIM_GRID, &test_ctx, &err), 0);
	for (t = 1; t <= 10; t++) {
		size_t want = t < 3 ? 20 : t < 5 ? 30 : 28;

		sim_step(&s);
		ck_assert_msg(sim_check(&s, &err) == 0, "step %d: %s", t, err.msg);
		if (t == 3) {
			/* the new boids start in their region */
			for (k = 0; k < s.flock.n; k++)
				if (s.flock.id[k] >= 20)
					ck_assert(s.flock.pos[0][k] >= 5.0f &&
						  s.flock.pos[0][k] <= 6.0f &&
						  s.flock.pos[1][k] >= 5.0f &&
						  s.flock.pos[1][k] <= 6.0f);
		}
		if (t < 8) {
			ck_assert_msg(s.flock.n == want, "step %d: %zu boids, want %zu", t,
				      s.flock.n, want);
		}
		if (t == 5 || t == 7) {
			/* ids 26-29 went (the highest), 30 and 31 came */
			flock_ids(&s.flock, ids);
			for (k = 0; k < 26; k++)
				ck_assert_uint_eq(ids[k], k);
			ck_assert_uint_eq(ids[26], 30);
			ck_assert_uint_eq(ids[27], 31);
		}
		if (t == 7) {
			/* how many the region removal will take at step 8 */
			inside = 0;
			for (k = 0; k < s.flock.n; k++)
				inside += s.flock.pos[0][k] >= 0.0f && s.flock.pos[0][k] <= 20.0f;
			ck_assert(inside > 0 && inside < s.flock.n);
		}
		if (t == 8) {
			ck_assert_msg(s.flock.n == 28 - inside, "%zu boids left, want %zu",
				      s.flock.n, 28 - inside);
			for (k = 0; k < s.flock.n; k++)
				ck_assert(s.flock.pos[0][k] > 20.0f || s.flock.pos[0][k] < 0.0f);
		}
	}
	sim_free(&s);
	scenario_free(&sc);
}
END_TEST

START_TEST(test_bad_behaviour_keys)
{
	struct scenario sc;
	struct util_err err = {0};
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
	tcase_add_loop_test(tc, test_polygon_never_left, 0, 24);
	tcase_add_loop_test(tc, test_spike_never_left, 0, 3);
	tcase_add_loop_test(tc, test_wall_corridor_never_left, 0, 2);
	tcase_add_test(tc, test_far_corner_cell_never_left);
	tcase_add_test(tc, test_obstacle_avoidance_steers);
	tcase_add_loop_test(tc, test_hue_converges, 0, 4);
	tcase_add_loop_test(tc, test_hue_lone_boid, 0, 2);
	tcase_add_test(tc, test_hue_update);
	tcase_add_test(tc, test_hue_spin_update);
	tcase_add_test(tc, test_hue_keeps_motion);
	tcase_add_loop_test(tc, test_boids_flee_predator, 0, 6);
	tcase_add_loop_test(tc, test_predator_chase, 0, 2);
	tcase_add_loop_test(tc, test_population_schedule, 0, 2);
	tcase_add_loop_test(tc, test_bad_behaviour_keys, 0, (int)(sizeof BAD / sizeof BAD[0]));
	suite_add_tcase(s, tc);
	return s;
}
