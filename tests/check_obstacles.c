/* check_obstacles.c: the obstacle index. Its candidates must include every
 * obstacle whose own tests can succeed (avoidance within a radius, being
 * inside, a swept collision), in increasing order, so that runs with and
 * without it are bit-identical; checked against brute force on random
 * obstacles and random points and moves, many of them grazing a surface. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "check_suites.h"
#include "integrate.h"
#include "obstacles.h"
#include "rules.h"

/* splitmix64: the same numbers on every platform */
static uint64_t rnd_state;

static uint64_t rnd_next(void)
{
	uint64_t z = (rnd_state += UINT64_C(0x9E3779B97F4A7C15));

	z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
	return z ^ (z >> 31);
}

static double uni(double lo, double hi)
{
	return lo + (hi - lo) * ((double)(rnd_next() >> 11) * 0x1.0p-53);
}

static int pick(int n)
{
	return (int)(rnd_next() % (uint64_t)n);
}

/* n obstacles in [0, 100]^dims: mostly small, a few large, of every kind
 * (segments in 2D only), some axis-aligned segments and some that share
 * endpoints, as in mazes and polylines. */
static void random_obstacles(struct obstacle *o, int n, int dims)
{
	int i, d;

	for (i = 0; i < n; i++) {
		int kind = pick(dims == 2 ? 3 : 2);
		double size = pick(20) == 0 ? uni(5, 30) : uni(0.05, 3);

		memset(&o[i], 0, sizeof o[i]);
		o[i].kind = kind == 0 ? OBSTACLE_SPHERE : kind == 1 ? OBSTACLE_BOX :
			    OBSTACLE_SEGMENT;
		for (d = 0; d < dims; d++)
			o[i].a[d] = uni(0, 100);
		switch (o[i].kind) {
		case OBSTACLE_SPHERE:
			o[i].radius = size;
			break;
		case OBSTACLE_BOX:
			for (d = 0; d < dims; d++)
				o[i].b[d] = o[i].a[d] + uni(0.01, size);
			break;
		case OBSTACLE_SEGMENT:
			if (i > 0 && o[i - 1].kind == OBSTACLE_SEGMENT && pick(2))
				memcpy(o[i].a, o[i - 1].b, sizeof o[i].a); /* a polyline */
			if (pick(3) == 0) { /* axis-aligned, as in a maze */
				memcpy(o[i].b, o[i].a, sizeof o[i].b);
				o[i].b[pick(2)] += pick(2) ? size : -size;
			} else {
				double t = uni(0, 6.283185307179586);

				o[i].b[0] = o[i].a[0] + size * cos(t);
				o[i].b[1] = o[i].a[1] + size * sin(t);
			}
			break;
		}
	}
}

/* A point on or near obstacle o's surface (or anywhere, now and then). */
static void near_point(const struct obstacle *o, int dims, double eps, double x[3])
{
	double q[3];
	int d, inside;

	x[0] = x[1] = x[2] = 0.0;
	if (pick(8) == 0) {
		for (d = 0; d < dims; d++)
			x[d] = uni(-20, 120);
		return;
	}
	switch (o->kind) {
	case OBSTACLE_SPHERE:
		for (d = 0; d < dims; d++)
			x[d] = o->a[d] + uni(-2, 2) * o->radius;
		break;
	case OBSTACLE_BOX:
		for (d = 0; d < dims; d++)
			x[d] = pick(3) == 0 ? (pick(2) ? o->a[d] : o->b[d]) :
			       uni(o->a[d], o->b[d]);
		break;
	case OBSTACLE_SEGMENT: {
		double t = pick(4) == 0 ? (double)pick(2) : uni(0, 1);

		for (d = 0; d < dims; d++)
			x[d] = o->a[d] + t * (o->b[d] - o->a[d]);
		break;
	}
	}
	/* onto the surface, then off it by a little or a lot */
	obstacle_nearest(o, dims, x, q, &inside);
	for (d = 0; d < dims; d++)
		x[d] = (pick(4) == 0 ? x[d] : q[d]) + (pick(2) ? uni(-eps, eps) : 0.0);
}

/* Whether obstacle o's box, widened by twice the query's margin
 * (obstacles.h: 1e-6 x (1 + the largest coordinate; here at most 200)),
 * meets [lo, hi]. */
static int near_box(const struct obstacle *o, int dims, const double lo[3], const double hi[3])
{
	const double s = 2e-6 * 201.0;
	int d;

	for (d = 0; d < dims; d++) {
		double a = o->kind == OBSTACLE_SPHERE ? o->a[d] - o->radius : fmin(o->a[d], o->b[d]);
		double b = o->kind == OBSTACLE_SPHERE ? o->a[d] + o->radius :
			   o->kind == OBSTACLE_BOX ? o->b[d] : fmax(o->a[d], o->b[d]);

		if (a > hi[d] + s || b < lo[d] - s)
			return 0;
	}
	return 1;
}

static long n_all; /* answers "all of them" (check_candidates) */

/* Whether the index's answer for [lo, hi] holds every obstacle in must[]
 * (flags), in strictly increasing order, and none whose box is not near
 * [lo, hi]; counts its candidates. */
static void check_candidates(const struct obstacle_index *ix, const struct obstacle *o, int n,
			     int dims, const double lo[3], const double hi[3],
			     const unsigned char *must, const char *what, long *total,
			     long *queries)
{
	uint16_t buf[OBSTACLE_QUERY_MAX];
	const uint16_t *list;
	int m = obstacle_index_query(ix, lo, hi, buf, &list), j, i, prev = -1;

	if (m < -1)
		ck_abort_msg("%s: answer %d", what, m);
	if (m < 0) { /* the caller tests them all */
		n_all++;
		*total += n;
		++*queries;
		return;
	}
	if (m > 0 && list == NULL)
		ck_abort_msg("%s: no list", what);
	for (j = 0; j < m; j++) {
		if (!(list[j] > prev && list[j] < n))
			ck_abort_msg("%s: candidates out of order", what);
		if (!near_box(&o[list[j]], dims, lo, hi))
			ck_abort_msg("%s: obstacle %d is a candidate, but its box is not near "
				     "the query's", what, list[j]);
		prev = list[j];
	}
	/* (ck_assert costs a write per call: only on failure here) */
	for (i = 0, j = 0; i < n; i++) {
		while (j < m && list[j] < i)
			j++;
		if (must[i] && !(j < m && list[j] == i))
			ck_abort_msg("%s: obstacle %d matters but is not a candidate of "
				     "[%.17g, %.17g] x [%.17g, %.17g]", what, i, lo[0], hi[0],
				     lo[1], hi[1]);
	}
	*total += m;
	++*queries;
}

/* Random obstacles and random queries: avoidance within a radius (below,
 * at and above the index's reach), being inside, and moves of every length
 * up to a few reaches, aimed at obstacles or grazing them. */
START_TEST(test_index_finds_every_obstacle_that_matters)
{
	enum { N = 1500, Q = 4000 };
	static struct obstacle o[N];
	static unsigned char must[N], in[N];
	int dims = 2 + _i % 2, n = 200 + 400 * (_i / 2), t, i, d, hits = 0, close = 0;
	double reach = (_i / 2) % 2 ? 0.5 : 2.0;
	long cand = 0, queries = 0;
	struct obstacle_index *ix;

	rnd_state = 1000 + (uint64_t)_i;
	n_all = 0;
	random_obstacles(o, n, dims);
	ix = obstacle_index_build(o, n, dims, reach);
	ck_assert_ptr_nonnull(ix);
	for (t = 0; t < Q; t++) {
		const struct obstacle *target = &o[pick(n)];
		double x[3], lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
		double r = t % 4 == 0 ? 0.0 : t % 4 == 1 ? reach : t % 4 == 2 ? uni(0, reach) :
			   pick(2) ? uni(reach, 1.2 * reach) : uni(reach, 4 * reach);
		double p0[3], p1[3], dir[3] = {0, 0, 0}, len;
		char what[64];

		/* avoidance: avoid_direction's test in rules.c; inside: integrate_finish's */
		near_point(target, dims, pick(2) ? 1e-9 : r + 0.5, x);
		if (pick(4) == 0) /* just within r of it, along an axis */
			x[pick(dims)] += (pick(2) ? r : -r) * (1.0 - 1e-12);
		for (i = 0; i < n; i++) {
			double q[3], d2 = 0.0;
			int inside;

			obstacle_nearest(&o[i], dims, x, q, &inside);
			for (d = 0; d < dims; d++)
				d2 += (inside ? q[d] - x[d] : x[d] - q[d]) *
				      (inside ? q[d] - x[d] : x[d] - q[d]);
			must[i] = d2 > 0.0 && (inside || d2 <= r * r);
			in[i] = (unsigned char)inside;
			close += must[i];
		}
		for (d = 0; d < dims; d++) {
			lo[d] = x[d] - r;
			hi[d] = x[d] + r;
		}
		snprintf(what, sizeof what, "dims %d, query %d, within %g", dims, t, r);
		check_candidates(ix, o, n, dims, lo, hi, must, what, &cand, &queries);
		check_candidates(ix, o, n, dims, x, x, in, "inside", &cand, &queries);

		/* a move from near a surface: through it, along it, or past it */
		len = t % 3 == 0 ? uni(0, reach) : t % 3 == 1 ? uni(0, 2 * reach) :
		      uni(0, 6 * reach);
		near_point(target, dims, pick(2) ? 1e-7 : 0.5, p0);
		for (d = 0; d < dims; d++)
			dir[d] = uni(-1, 1);
		if (target->kind == OBSTACLE_SPHERE && pick(2)) {
			/* tangent to the sphere at p0's nearest point, +-tiny */
			double nrm[3] = {0, 0, 0}, dn = 0.0, n2 = 0.0;

			for (d = 0; d < dims; d++) {
				nrm[d] = p0[d] - target->a[d];
				n2 += nrm[d] * nrm[d];
			}
			for (d = 0; d < dims; d++)
				dn += dir[d] * nrm[d];
			for (d = 0; d < dims && n2 > 0.0; d++)
				dir[d] -= dn / n2 * nrm[d];
			for (d = 0; d < dims; d++)
				p0[d] -= dir[d] * len / 2;
		}
		if (pick(2)) /* aimed at the obstacle's surface */
			for (d = 0; d < dims; d++)
				dir[d] = x[d] - p0[d] + uni(-1e-6, 1e-6);
		{
			double l2 = 0.0;

			for (d = 0; d < dims; d++)
				l2 += dir[d] * dir[d];
			for (d = 0; d < dims; d++)
				p1[d] = p0[d] + (l2 > 0.0 ? dir[d] * len / sqrt(l2) : 0.0);
			p1[2] = dims == 3 ? p1[2] : 0.0;
			p0[2] = dims == 3 ? p0[2] : 0.0;
		}
		for (i = 0; i < n; i++) {
			double a[3], b[3], v[3] = {1, 0.5, 0.25};

			memcpy(a, p0, sizeof a);
			memcpy(b, p1, sizeof b);
			must[i] = (unsigned char)obstacle_collide(&o[i], dims, a, b, v);
			hits += must[i];
		}
		for (d = 0; d < dims; d++) {
			lo[d] = fmin(p0[d], p1[d]);
			hi[d] = fmax(p0[d], p1[d]);
		}
		snprintf(what, sizeof what, "dims %d, move %d, length %g", dims, t, len);
		check_candidates(ix, o, n, dims, lo, hi, must, what, &cand, &queries);
	}
	/* the cases must really come close, and the index must really prune */
	ck_assert_msg(hits > Q / 20 && close > Q / 4, "only %d hits, %d near", hits, close);
	ck_assert_msg(n_all == 0, "%ld of %ld queries answered \"all of them\"", n_all, queries);
	ck_assert_msg(cand < queries * (long)n / 8, "%g candidates per query of %d obstacles",
		      (double)cand / (double)queries, n);
	obstacle_index_free(ix);
}
END_TEST

/* Far away, the answer is empty; non-finite, it is "all of them". */
START_TEST(test_index_edges)
{
	static struct obstacle o[64];
	double far[3] = {1e6, 1e6, 0}, nan3[3] = {NAN, 0, 0}, inf3[3] = {INFINITY, 1, 1};
	double lo[3] = {-1e300, -1e300, -1e300}, hi[3] = {1e300, 1e300, 1e300};
	uint16_t buf[OBSTACLE_QUERY_MAX];
	const uint16_t *list;
	struct obstacle_index *ix;
	int i, m;

	rnd_state = 7;
	random_obstacles(o, 64, 2);
	ix = obstacle_index_build(o, 64, 2, 1.0);
	ck_assert_ptr_nonnull(ix);
	ck_assert_int_eq(obstacle_index_query(ix, far, far, buf, &list), 0);
	ck_assert_int_eq(obstacle_index_query(ix, nan3, nan3, buf, &list), -1);
	ck_assert_int_eq(obstacle_index_query(ix, inf3, inf3, buf, &list), -1);
	ck_assert_int_eq(obstacle_index_query(NULL, far, far, buf, &list), -1);
	/* everything: all 64, in order (a query over many cells tests the
	 * obstacles' boxes, rather than answer "all of them") */
	m = obstacle_index_query(ix, lo, hi, buf, &list);
	ck_assert_int_eq(m, 64);
	for (i = 0; i < 64; i++)
		ck_assert_int_eq(list[i], i);
	obstacle_index_free(ix);
}
END_TEST

/* A scenario owns the index of its obstacles, and each stage of its
 * schedule its own; none below OBSTACLE_INDEX_MIN. */
START_TEST(test_index_owned)
{
	char text[4096];
	int i, len;
	struct scenario sc;

	for (i = 0; i < 2; i++) {
		int k, n = i == 0 ? OBSTACLE_INDEX_MIN - 1 : OBSTACLE_INDEX_MIN;

		len = snprintf(text, sizeof text, "{\"count\": 10, \"steps\": 2, \"bounds\": "
			       "{\"min\": [0, 0], \"max\": [100, 100]}, \"schedule\": [{\"step\": 1, "
			       "\"set\": {\"radii.avoid\": 3}}], \"obstacles\": [");
		for (k = 0; k < n; k++)
			len += snprintf(text + len, sizeof text - (size_t)len,
					"%s{\"type\": \"sphere\", \"center\": [%d, 50], \"radius\": 2}",
					k ? ", " : "", 10 * k + 5);
		snprintf(text + len, sizeof text - (size_t)len, "]}");
		load_ok(text, &sc);
		ck_assert_int_eq(sc.n_stages, 1);
		if (i == 0) {
			ck_assert_ptr_null(sc.obstacle_index);
			ck_assert_ptr_null(sc.stages[0].sc.obstacle_index);
		} else {
			ck_assert_ptr_nonnull(sc.obstacle_index);
			ck_assert_ptr_nonnull(sc.stages[0].sc.obstacle_index);
			ck_assert_ptr_ne(sc.obstacle_index, sc.stages[0].sc.obstacle_index);
		}
		scenario_free(&sc);
	}
}
END_TEST

/* The whole update of a boid (avoidance in the rules, swept collisions and
 * push-out in the integrator) gives the same bits with and without the
 * index, for boids all over a scenario with many obstacles. */
static const char *const SAME_CASES[][2] = {
	{"scenarios/obstacles/maze2d.json", "model=reynolds"},
	{"scenarios/obstacles/maze2d.json", "model=simple"},
	{"scenarios/obstacles/forest2d.json", "radii.avoid=6"}, /* beyond the reach */
	{"scenarios/obstacles/forest3d.json", "model=reynolds"},
	{"scenarios/obstacles/forest3d.json", "speed.max=7"},   /* long moves */
};

START_TEST(test_index_same_updates)
{
	struct scenario sc;
	struct rules_params rp;
	struct util_err err = {0};
	struct scenario_override ov = {SAME_CASES[_i][1], NULL};
	const struct obstacle_index *ix;
	int t, d, dims, moved = 0;

	ck_assert_msg(scenario_load_file(test_srcfile(SAME_CASES[_i][0]), &ov, 1, &sc, &err) == 0,
		      "%s", err.msg);
	rules_params_init(&rp, &sc);
	ix = rp.ip.obstacle_index;
	ck_assert_ptr_nonnull(ix);
	dims = sc.dims;
	rnd_state = 99 + (uint64_t)_i;
	for (t = 0; t < 5000; t++) {
		struct rules_acc a;
		float pos[3] = {0, 0, 0}, vel[3] = {0, 0, 0};
		float p1[3] = {0, 0, 0}, v1[3] = {0, 0, 0}, p2[3] = {0, 0, 0}, v2[3] = {0, 0, 0};
		double x[3];

		near_point(&sc.obstacles[pick(sc.n_obstacles)], dims, 2.0, x);
		rules_acc_init(&a);
		for (d = 0; d < dims; d++) {
			pos[d] = (float)fmin(fmax(x[d], sc.bmin[d]), sc.bmax[d]);
			vel[d] = (float)uni(-sc.speed_max, sc.speed_max);
			a.coh[d] = (float)uni(-1, 1);
		}
		a.n_coh = (uint32_t)pick(2);
		rp.ip.obstacle_index = ix;
		rules_update(&rp, &a, (uint32_t)t, 1, pos, vel, p1, v1);
		rp.ip.obstacle_index = NULL;
		rules_update(&rp, &a, (uint32_t)t, 1, pos, vel, p2, v2);
		if (memcmp(p1, p2, sizeof p1) != 0 || memcmp(v1, v2, sizeof v1) != 0)
			ck_abort_msg("%s (%s): boid at (%.9g, %.9g, %.9g) moves differently with the "
				     "index", SAME_CASES[_i][0], SAME_CASES[_i][1], pos[0], pos[1],
				     pos[2]);
		moved += p1[0] != pos[0];
	}
	ck_assert_int_gt(moved, 250);
	scenario_free(&sc);
}
END_TEST

/* A move that wraps across the box's edge into an obstacle on the other
 * side is pushed out of it: the integrator's check after the move looks
 * where the boid ended, not where the move's own query looked (index on
 * and off, same bits). */
START_TEST(test_wrap_into_obstacle)
{
	char text[4096];
	struct scenario sc;
	struct rules_params rp;
	struct rules_acc a;
	float pos[3] = {99.9f, 50.0f, 0.0f}, vel[3] = {0.8f, 0.0f, 0.0f};
	float p1[3] = {0, 0, 0}, v1[3] = {0, 0, 0}, p2[3] = {0, 0, 0}, v2[3] = {0, 0, 0};
	int k, len;

	len = snprintf(text, sizeof text, "{\"count\": 10, \"steps\": 2, \"bounds\": "
		       "{\"min\": [0, 0], \"max\": [100, 100], \"mode\": \"wrap\"}, "
		       "\"speed\": {\"min\": 0.1, \"max\": 1}, \"radii\": {\"avoid\": 1}, "
		       "\"obstacles\": [{\"type\": \"sphere\", \"center\": [1, 50], "
		       "\"radius\": 3}");
	for (k = 0; k < OBSTACLE_INDEX_MIN; k++) /* enough for an index */
		len += snprintf(text + len, sizeof text - (size_t)len,
				", {\"type\": \"sphere\", \"center\": [%d, 10], \"radius\": 1}",
				10 * k + 5);
	snprintf(text + len, sizeof text - (size_t)len, "]}");
	load_ok(text, &sc);
	rules_params_init(&rp, &sc);
	ck_assert_ptr_nonnull(rp.ip.obstacle_index);
	rules_acc_init(&a);
	rules_update(&rp, &a, 0, 1, pos, vel, p1, v1);
	rp.ip.obstacle_index = NULL;
	rules_update(&rp, &a, 0, 1, pos, vel, p2, v2);
	ck_assert_msg(memcmp(p1, p2, sizeof p1) == 0 && memcmp(v1, v2, sizeof v1) == 0,
		      "index: (%.9g, %.9g), none: (%.9g, %.9g)", p1[0], p1[1], p2[0], p2[1]);
	/* outside the sphere (pushed out across the edge again: x = 0.7 is
	 * nearer its left side, at -2, which wraps to 98) */
	ck_assert_double_ge(hypot(remainder(p1[0] - 1.0, 100.0), p1[1] - 50.0), 3.0);
	scenario_free(&sc);
}
END_TEST

/* integrate_finish for the obstacles in the scenario text, in the box
 * (NULL: 0..100, reflect; speed.max 20, which sizes the obstacle index's
 * cells from 8 pieces on), the move from pos to end: the binary32
 * position it leaves, and its velocity (vel: NULL, or in: the velocity
 * the move came with, end - pos without it; out: the one it leaves). */
static void finish_move_in(const char *box, const char *obstacles, const float pos[2],
			   const double end[2], float vel[2], float out[2])
{
	char text[2048];
	struct scenario sc;
	struct integrate_params ip;
	double p[3] = {end[0], end[1], 0};
	float start[3] = {pos[0], pos[1], 0}, v[3] = {(float)(end[0] - pos[0]),
						    (float)(end[1] - pos[1]), 0};

	if (vel) {
		v[0] = vel[0];
		v[1] = vel[1];
	}
	snprintf(text, sizeof text, "{\"count\": 1, \"steps\": 1, \"speed\": {\"max\": 20},"
		 " \"bounds\": %s, \"obstacles\": %s}",
		 box ? box : "{\"min\": [0, 0], \"max\": [100, 100], \"mode\": \"reflect\"}",
		 obstacles);
	load_ok(text, &sc);
	integrate_params_init(&ip, &sc);
	integrate_finish(&ip, start, p, v);
	out[0] = (float)p[0];
	out[1] = (float)p[1];
	if (vel) {
		vel[0] = v[0];
		vel[1] = v[1];
	}
	scenario_free(&sc);
}

static void finish_move(const char *obstacles, const float pos[2], const double end[2],
			float out[2])
{
	finish_move_in(NULL, obstacles, pos, end, NULL, out);
}

/* A move that crosses two walls bounces off the one it reaches first,
 * whatever their order in the list (the first listed used to win, and
 * the boid ended between the walls, through the nearer one). */
START_TEST(test_nearest_wall_first)
{
	static const char *const WALLS[] = {
		"[{\"type\": \"segment\", \"from\": [10, 0], \"to\": [10, 20]},"
		" {\"type\": \"segment\", \"from\": [5, 0], \"to\": [5, 20]}]",
		"[{\"type\": \"segment\", \"from\": [5, 0], \"to\": [5, 20]},"
		" {\"type\": \"segment\", \"from\": [10, 0], \"to\": [10, 20]}]"};
	const float pos[2] = {2, 10};
	const double end[2] = {12, 10};
	float out[2];

	finish_move(WALLS[_i], pos, end, out);
	ck_assert_msg(out[0] < 5.0f, "order %d: the boid ended at x = %.9g, past the wall at 5",
		      _i, (double)out[0]);
}
END_TEST

/* A move that would bounce more often than the integrator follows (a
 * boid between two walls a thousandth apart, moving 50 of their gaps
 * across them) goes back where it began, between them, rather than
 * going on untested through one. */
START_TEST(test_bounces_end_inside)
{
	const float pos[2] = {10.0f, 10.0005f};
	const double end[2] = {10.05, 10.0005 + 0.05};
	float out[2];

	finish_move("[{\"type\": \"segment\", \"from\": [0, 10], \"to\": [100, 10]},"
		    " {\"type\": \"segment\", \"from\": [0, 10.001], \"to\": [100, 10.001]}]",
		    pos, end, out);
	ck_assert_msg(out[1] > 10.0f && out[1] < 10.001f, "the boid ended at y = %.9g",
		      (double)out[1]);
}
END_TEST

/* A move along a segment's line, short of the segment or past it: its
 * crossing test's denominator is then rounding noise, which gave a "hit"
 * at a point of the move far off the segment (a review found one 0.32
 * away, and so a bounce that the obstacle index, which leaves such a
 * segment out, did not give). No move hits a segment that lies wholly
 * beyond its end or before its start on its line. */
START_TEST(test_collinear_segment_not_hit)
{
	int t, hits = 0;

	rnd_state = 41;
	for (t = 0; t < 200000; t++) {
		const double ang = uni(0, 6.283185307179586), len = uni(0.01, 2);
		const double p0[3] = {(float)uni(-50, 50), (float)uni(-50, 50), 0};
		const double dir[2] = {len * cos(ang), len * sin(ang)};
		const double p1[3] = {p0[0] + dir[0], p0[1] + dir[1], 0};
		/* on the line, from f0 to f1 of the move: beyond it or behind */
		const double f0 = pick(2) ? uni(1.01, 3) : uni(-5, -0.01 - 3);
		const double f1 = f0 + uni(0.5, 10) * (f0 > 0 ? 1 : -1);
		struct obstacle o;
		double tt, n[3];

		memset(&o, 0, sizeof o);
		o.kind = OBSTACLE_SEGMENT;
		o.a[0] = p0[0] + f0 * dir[0];
		o.a[1] = p0[1] + f0 * dir[1];
		o.b[0] = p0[0] + f1 * dir[0];
		o.b[1] = p0[1] + f1 * dir[1];
		if (obstacle_hit(&o, 2, p0, p1, &tt, n) && hits++ == 0)
			fprintf(stderr, "(%.17g, %.17g) to (%.17g, %.17g) hit the segment (%.17g, "
				"%.17g)-(%.17g, %.17g) at t %.17g\n", p0[0], p0[1], p1[0], p1[1],
				o.a[0], o.a[1], o.b[0], o.b[1], tt);
	}
	ck_assert_int_eq(hits, 0);
}
END_TEST

/* A move straight through the apex of a triangle, the joint of two of
 * its sides, stays inside: mirrored about one side alone it went on past
 * the apex, out (a review's case). */
START_TEST(test_apex_bounce)
{
	static const char *const TRI =
		"[{\"type\": \"polyline\", \"points\": [[5, 10], [10.5, 20], [16, 10], [5, 10]]}]";
	const float pos[2] = {10.5f, 19.0f};
	const double end[2] = {10.5, 21.0};
	float out[2];

	finish_move(TRI, pos, end, out);
	/* inside: below both sides, above the base */
	ck_assert_msg(out[1] > 10.0f && out[1] < 20.0f - fabs(out[0] - 10.5) * 10.0 / 5.5,
		      "the boid ended at (%.9g, %.9g), outside the triangle", (double)out[0],
		      (double)out[1]);
}
END_TEST

/* A bounce that leaves the boid a hair off a slanted wall, closer than
 * binary32 can tell at its coordinates: the position it is rounded to
 * is still on its own side of the wall, never on or across its line
 * (more than a third of these moves used to be). */
#define SIDE(p) (70 * ((p)[1] - 30) - 47 * ((p)[0] - 20)) /* > 0: the start's side */
START_TEST(test_rounding_keeps_side)
{
	const char *wall = "[{\"type\": \"segment\", \"from\": [20, 30], \"to\": [90, 77]}]";
	int t, flipped = 0;

	rnd_state = 11;
	for (t = 0; t < 3000; t++) {
		/* a point of the wall, the move's end a little beyond it */
		const double u = uni(0.05, 0.95), e0 = 70, e1 = 47, len = hypot(e0, e1);
		const double h[2] = {20 + u * e0, 30 + u * e1}, d = uni(0, 1e-6);
		const double end[2] = {h[0] + e1 / len * d, h[1] - e0 / len * d};
		const float pos[2] = {(float)(h[0] - e1 / len * 3 + uni(-2, 2)),
				      (float)(h[1] + e0 / len * 3 + uni(-2, 2))};
		double sp[3] = {pos[0], pos[1], 0}, se[3], so[3];
		float out[2];

		se[0] = end[0], se[1] = end[1], se[2] = 0;
		ck_assert(SIDE(sp) > 0 && SIDE(se) < 0);
		finish_move(wall, pos, end, out);
		so[0] = out[0], so[1] = out[1], so[2] = 0;
		if (!(SIDE(so) > 0))
			flipped++;
	}
	ck_assert_int_eq(flipped, 0);
}
END_TEST
#undef SIDE

/* Ten million units from the origin a bounce's back-off of 1e-9 is
 * below a double's unit in the last place: the boid stayed on the wall,
 * was mirrored back across it by the rest of its move, and went through
 * (a review's case). It must end on its own side. */
START_TEST(test_far_bounce)
{
	static const double A[2] = {10000014.722963978, 10000013.536407638};
	static const double B[2] = {10000001.282101559, 10000006.039423775};
	const float pos[2] = {10000004.0f, 10000006.0f};
	const double end[2] = {10000004.0 - 0.755138, 10000006.0 + 1.15202};
	char obs[256];
	float out[2];

#define FAR_SIDE(x, y) ((B[0] - A[0]) * ((y) - A[1]) - (B[1] - A[1]) * ((x) - A[0]))
	snprintf(obs, sizeof obs, "[{\"type\": \"segment\", \"from\": [%.17g, %.17g], "
		 "\"to\": [%.17g, %.17g]}]", A[0], A[1], B[0], B[1]);
	ck_assert(FAR_SIDE(pos[0], pos[1]) > 0 && FAR_SIDE(end[0], end[1]) < 0);
	finish_move_in("{\"min\": [9999970, 9999970], \"max\": [10000030, 10000030], "
		       "\"mode\": \"reflect\"}", obs, pos, end, NULL, out);
	ck_assert_msg(FAR_SIDE(out[0], out[1]) > 0, "the boid ended at (%.9g, %.9g), across",
		      (double)out[0], (double)out[1]);
#undef FAR_SIDE
}
END_TEST

/* With and without the obstacle index (7 pieces, or the same and 8 far
 * away: from 8 on they are indexed), a bounce off a reflecting wall ends
 * with the same bits: the check of its rounding used the point outside
 * the box before the wall mirrored it, and with all the pieces it saw a
 * crossing the index's list did not (a review's case). */
START_TEST(test_wall_bounce_index_alike)
{
	char seven[1024], fifteen[2048];
	int i, n;
	const float pos[2] = {50.0f, 1.0f};
	const double end[2] = {50.0, -19.0};
	float va[2] = {0.0f, -20.0f}, vb[2] = {0.0f, -20.0f}, a[2], b[2];

	n = snprintf(seven, sizeof seven, "[{\"type\": \"segment\", \"from\": [40, 3], "
		     "\"to\": [60, 3]}");
	for (i = 0; i < 6; i++)
		n += snprintf(seven + n, sizeof seven - (size_t)n, ", {\"type\": \"segment\", "
			      "\"from\": [%d, 80], \"to\": [%d, 85]}", 80 + i, 80 + i);
	memcpy(fifteen, seven, (size_t)n);
	for (i = 0; i < 8; i++)
		n += snprintf(fifteen + n, sizeof fifteen - (size_t)n, ", {\"type\": \"segment\","
			      " \"from\": [90, %g], \"to\": [95, %g]}", 90 + 0.5 * i, 90 + 0.5 * i);
	snprintf(fifteen + n, sizeof fifteen - (size_t)n, "]");
	strcat(seven, "]");
	finish_move_in(NULL, seven, pos, end, va, a);
	finish_move_in(NULL, fifteen, pos, end, vb, b);
	ck_assert_msg(memcmp(a, b, sizeof a) == 0 && memcmp(va, vb, sizeof va) == 0,
		      "7 pieces: (%.9g, %.9g) v (%g, %g); 15: (%.9g, %.9g) v (%g, %g)",
		      (double)a[0], (double)a[1], (double)va[0], (double)va[1], (double)b[0],
		      (double)b[1], (double)vb[0], (double)vb[1]);
}
END_TEST

/* A segment beside a wall of the box: a boid between them moving into
 * the wall comes back off it into the segment, which it must not cross
 * (reflect); under wrap, a boid leaving the box on the right comes in on
 * the left, where a segment stands (0.5 from the edge; with the one at
 * 50, boids right of 50 and left of 0.5 are one region). The walls
 * moved such boids after the move, untested: 223 and 178 of these 400
 * moves went through. */
START_TEST(test_wall_beside_segment)
{
	static const char *const BOX[] = {
		"{\"min\": [0, 0], \"max\": [100, 100], \"mode\": \"reflect\"}",
		"{\"min\": [0, 0], \"max\": [100, 100], \"mode\": \"wrap\"}"};
	static const char *const SEGMENTS[] = {
		"[{\"type\": \"segment\", \"from\": [99, 0], \"to\": [99, 100]}]",
		"[{\"type\": \"segment\", \"from\": [0.5, 0], \"to\": [0.5, 100]},"
		" {\"type\": \"segment\", \"from\": [50, 0], \"to\": [50, 100]}]"};
	int t, crossed = 0;

	rnd_state = 13 + (uint64_t)_i;
	for (t = 0; t < 400; t++) {
		const double ang = uni(-1.4, 1.4), len = uni(0.5, 5);
		const float pos[2] = {(float)uni(_i ? 97 : 99.01, 99.99), (float)uni(20, 80)};
		const double end[2] = {pos[0] + len * cos(ang), pos[1] + len * sin(ang)};
		float out[2];

		finish_move_in(BOX[_i], SEGMENTS[_i], pos, end, NULL, out);
		if (_i ? out[0] > 0.5f && out[0] < 50.0f : out[0] < 99.0f) {
			if (crossed++ == 0)
				fprintf(stderr, "%s: from (%.9g, %.9g) to (%.9g, %.9g) ended at "
					"(%.9g, %.9g)\n", _i ? "wrap" : "reflect", (double)pos[0],
					(double)pos[1], end[0], end[1], (double)out[0],
					(double)out[1]);
		}
	}
	ck_assert_int_eq(crossed, 0);
}
END_TEST

/* The walls' own cases (a review's): a move in a corridor narrower than
 * it, from wall to segment and back more often than twice the
 * dimensions (the walls' count was not renewed at a bounce, and the
 * rest of the move crossed the segment); and under wrap a segment on the
 * periodic edge, which backs a move that wraps in onto it off to just
 * outside the box, where the wall was no longer seen (its way back was
 * tested unwrapped, and crossed the segment near the other edge). (The
 * nudge kept in the box: check_behaviours, test_far_corner_cell_never_left.) */
START_TEST(test_wall_edge_cases)
{
	static const struct {
		const char *box, *obstacles;
		float pos[2], vel[2];
		double end[2], lo, hi; /* where x (case 0: y) must end */
	} C[] = {
		{"{\"min\": [0, 0], \"max\": [10, 10], \"mode\": \"reflect\"}",
		 "[{\"type\": \"segment\", \"from\": [0, 0.5], \"to\": [10, 0.5]}]",
		 {5.0f, 0.25f}, {0.1f, -5.0f}, {5.1, -4.75}, 0, 0.5},
		{"{\"min\": [0, 0], \"max\": [10, 10], \"mode\": \"wrap\"}",
		 "[{\"type\": \"segment\", \"from\": [0, 0], \"to\": [0, 10]},"
		 " {\"type\": \"segment\", \"from\": [9.95, 0], \"to\": [9.95, 10]}]",
		 {9.98f, 5.0f}, {0.12f, 0.05f}, {10.1, 5.05}, 9.95, 10},
		{"{\"min\": [0, 0], \"max\": [10, 10], \"mode\": \"wrap\"}",
		 "[{\"type\": \"segment\", \"from\": [10, 0], \"to\": [10, 10]},"
		 " {\"type\": \"segment\", \"from\": [0.05, 0], \"to\": [0.05, 10]}]",
		 {0.02f, 5.0f}, {-0.12f, 0.05f}, {-0.1, 5.05}, 0, 0.05}};
	float vel[2] = {C[_i].vel[0], C[_i].vel[1]}, out[2];
	double at;

	finish_move_in(C[_i].box, C[_i].obstacles, C[_i].pos, C[_i].end, vel, out);
	at = _i == 0 ? out[1] : out[0];
	ck_assert_msg(at > C[_i].lo && at < C[_i].hi, "case %d: ended at (%.9g, %.9g), outside "
		      "(%.9g, %.9g)", _i, (double)out[0], (double)out[1], C[_i].lo, C[_i].hi);
}
END_TEST

/* Under wrap, a move through a wall that no obstacle stops ends at the
 * bits of the same move where there are no obstacles at all (the walls'
 * own arithmetic, bounds_wrap1's fmod from the box's corner), not at the
 * bounce loop's (the move continued a box further on, p - len). The two
 * differ by a rounding where the corner is not 0, which shows in binary32
 * only near a midpoint of two binary32 numbers: the moves are chosen to
 * end there, where the two ways round to different numbers. */
START_TEST(test_wrap_past_obstacles_same_bits)
{
	const char *box = "{\"min\": [-10.123, -7.3], \"max\": [13.777, 21.9], \"mode\": \"wrap\"}";
	const char *far = "[{\"type\": \"sphere\", \"center\": [1, 2], \"radius\": 0.01}]";
	const double lo = (float)-10.123, hi = (float)13.777, len = hi - lo; /* (as bounds_init) */
	int t, tried = 0, differ = 0;

	rnd_state = 29;
	for (t = 0; t < 400; t++) {
		const float f = (float)(lo + uni(0.1, 0.9));
		const double mid = 0.5 * (double)f + 0.5 * (double)nextafterf(f, INFINITY);
		double end[2] = {mid + len, uni(0, 10)};
		const float pos[2] = {(float)(hi - uni(0.1, 0.4)), (float)end[1]};
		int k;

		for (k = 0; k < 20; k++)
			end[0] = nextafter(end[0], -INFINITY);
		for (k = 0; k < 40; k++, end[0] = nextafter(end[0], INFINITY)) {
			double r = lo + fmod(end[0] - lo, len);
			float a[2], b[2];

			if ((float)r == (float)(end[0] - len))
				continue;
			tried++;
			finish_move_in(box, far, pos, end, NULL, a);
			finish_move_in(box, "[]", pos, end, NULL, b);
			if (memcmp(a, b, sizeof a) != 0 && differ++ == 0)
				fprintf(stderr, "from (%.9g, %.9g) to (%.17g, %.17g): (%.9g, %.9g) "
					"past an obstacle, (%.9g, %.9g) without\n", (double)pos[0],
					(double)pos[1], end[0], end[1], (double)a[0], (double)a[1],
					(double)b[0], (double)b[1]);
		}
	}
	ck_assert_msg(tried > 20, "only %d moves where the two ways round apart", tried);
	ck_assert_int_eq(differ, 0);
}
END_TEST

/* Boids under two overlapping circles drawn over them, at a wall they
 * reach past, each pushing a boid into the other or the wall: every one
 * ends outside both, in the box. */
START_TEST(test_overlap_escape)
{
	const char *obs = "[{\"type\": \"sphere\", \"center\": [95, 50], \"radius\": 6},"
			  " {\"type\": \"sphere\", \"center\": [97, 43], \"radius\": 6}]";
	int t;

	rnd_state = 5;
	for (t = 0; t < 400; t++) {
		const float pos[2] = {(float)uni(92, 100), (float)uni(41, 52)};
		const double end[2] = {pos[0] + uni(-0.5, 0.5), pos[1] + uni(-0.5, 0.5)};
		float out[2];

		finish_move(obs, pos, end, out);
		ck_assert_msg(out[0] >= 0 && out[0] <= 100 &&
			      hypot(out[0] - 95.0, out[1] - 50.0) >= 6 &&
			      hypot(out[0] - 97.0, out[1] - 43.0) >= 6,
			      "from (%.9g, %.9g): ended at (%.9g, %.9g)", (double)pos[0],
			      (double)pos[1], (double)out[0], (double)out[1]);
	}
}
END_TEST

/* obstacle_inside, which the integrator's push-out asks first, answers as
 * obstacle_nearest does, also on and a rounding away from the surfaces. */
START_TEST(test_inside_agrees)
{
	enum { N = 300, Q = 20000 };
	static struct obstacle o[N];
	int dims = 2 + _i, t, ins = 0, outs = 0;

	rnd_state = 7 + (uint64_t)_i;
	random_obstacles(o, N, dims);
	for (t = 0; t < Q; t++) {
		const struct obstacle *ob = &o[pick(N)];
		double x[3], q[3];
		int inside;

		near_point(ob, dims, pick(2) ? 1e-12 : 0.5, x);
		obstacle_nearest(ob, dims, x, q, &inside);
		if (obstacle_inside(ob, dims, x) != inside)
			ck_abort_msg("%dD obstacle of kind %d, point (%.17g, %.17g, %.17g): "
				     "obstacle_inside says %d, obstacle_nearest %d", dims,
				     (int)ob->kind, x[0], x[1], x[2], !inside, inside);
		ins += inside;
		outs += !inside;
	}
	/* both answers were exercised */
	ck_assert_int_gt(ins, Q / 50);
	ck_assert_int_gt(outs, Q / 50);
}
END_TEST

Suite *obstacles_suite(void)
{
	Suite *s = suite_create("obstacles");
	TCase *tc = tcase_create("index");

	tcase_add_loop_test(tc, test_index_finds_every_obstacle_that_matters, 0, 8);
	tcase_add_test(tc, test_index_edges);
	tcase_add_test(tc, test_index_owned);
	tcase_add_loop_test(tc, test_inside_agrees, 0, 2);
	tcase_add_test(tc, test_wrap_into_obstacle);
	tcase_add_loop_test(tc, test_nearest_wall_first, 0, 2);
	tcase_add_test(tc, test_bounces_end_inside);
	tcase_add_test(tc, test_apex_bounce);
	tcase_add_test(tc, test_far_bounce);
	tcase_add_test(tc, test_wall_bounce_index_alike);
	tcase_add_test(tc, test_rounding_keeps_side);
	tcase_add_test(tc, test_overlap_escape);
	tcase_add_loop_test(tc, test_wall_beside_segment, 0, 2);
	tcase_add_test(tc, test_wrap_past_obstacles_same_bits);
	tcase_add_test(tc, test_collinear_segment_not_hit);
	tcase_add_loop_test(tc, test_wall_edge_cases, 0, 3);
	tcase_add_loop_test(tc, test_index_same_updates, 0,
			    (int)(sizeof SAME_CASES / sizeof SAME_CASES[0]));
	suite_add_tcase(s, tc);
	return s;
}
