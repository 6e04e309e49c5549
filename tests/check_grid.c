/* check_grid.c: the grid finds exactly the neighbours brute force finds, and
 * grid and brute-force trajectories agree to float rounding, in 2D and 3D,
 * for every bounds mode and for awkward geometries. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "check_suites.h"
#include "flock.h"
#include "grid.h"
#include "sim.h"

/* Grid and brute force sum neighbours in different orders, so their
 * trajectories drift apart by rounding, and chaos amplifies it (at 10
 * steps one case reached 1.4e-4 of the side). After GRID_BRUTE_STEPS steps no
 * coordinate may differ by more than this fraction of the box side
 * (documented in boidsim(1) under --neighbours). */
#define GRID_BRUTE_STEPS 5
#define GRID_BRUTE_TOL 1e-4

static const char *const MODES[] = {"wrap", "reflect", "steer", "none"};

static void scenario_text(char *buf, size_t cap, int dims, int count, const char *mode,
			  double r, double side, const char *extra)
{
	if (dims == 2)
		snprintf(buf, cap, "{\"count\": %d, \"steps\": 50, \"seed\": 3,"
			 "\"radii\": {\"separation\": %g, \"alignment\": %g, \"cohesion\": %g},"
			 "\"bounds\": {\"min\": [0, 0], \"max\": [%g, %g], \"mode\": \"%s\"}%s}",
			 count, r / 2, r, r, side, side * 0.75, mode, extra);
	else
		snprintf(buf, cap, "{\"dimensions\": 3, \"count\": %d, \"steps\": 50, \"seed\": 3,"
			 "\"radii\": {\"separation\": %g, \"alignment\": %g, \"cohesion\": %g},"
			 "\"bounds\": {\"min\": [0, 0, 0], \"max\": [%g, %g, %g], \"mode\": \"%s\"}%s}",
			 count, r / 2, r, r, side, side * 0.75, side * 0.5, mode, extra);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

/* Compares the neighbour sets of every boid at radius sqrt(r2) and returns
 * how many neighbours were found in all (so callers can see it is not 0). */
static size_t compare_sets(struct grid *g, struct flock *f, const struct rules_params *rp,
			   float r2)
{
	uint32_t *a = malloc(f->n * sizeof *a), *b = malloc(f->n * sizeof *b);
	size_t k, total = 0;

	for (k = 0; k < f->n; k++) {
		size_t na = grid_neighbours(g, f, rp, k, r2, a, f->n);
		size_t nb = brute_neighbours(f, rp, k, r2, b, f->n);

		ck_assert_msg(na == nb, "boid %u: grid finds %zu neighbours, brute force %zu",
			      f->id[k], na, nb);
		qsort(a, na, sizeof *a, cmp_u32);
		qsort(b, nb, sizeof *b, cmp_u32);
		ck_assert_msg(memcmp(a, b, na * sizeof *a) == 0, "boid %u: different sets",
			      f->id[k]);
		total += na;
	}
	free(a);
	free(b);
	return total;
}

/* The reach the last check_sets build chose. */
static int last_reach;

/* Build, then compare at every radius the rules use. */
static size_t check_sets(const char *text, void (*shape)(struct flock *))
{
	struct scenario sc;
	struct rules_params rp;
	struct flock f;
	struct grid g;
	struct util_err err;
	size_t total;

	load_ok(text, &sc);
	rules_params_init(&rp, &sc);
	ck_assert_int_eq(flock_init(&f, &sc, test_ctx.parallel_min, &err), 0);
	ck_assert_int_eq(grid_init(&g, &sc, f.n, &err), 0);
	if (shape)
		shape(&f);
	grid_build(&g, &f);
	last_reach = g.reach;
	total = compare_sets(&g, &f, &rp, rp.r2_max);
	compare_sets(&g, &f, &rp, rp.r2_sep);
	grid_free(&g);
	flock_free(&f);
	scenario_free(&sc);
	return total;
}

/* _i: dims (2, 3) x the four bounds modes */
START_TEST(test_sets_modes)
{
	char text[1024];
	int dims = 2 + _i / 4;
	size_t total;

	scenario_text(text, sizeof text, dims, 1500, MODES[_i % 4], dims == 2 ? 3.0 : 4.0,
		      dims == 2 ? 40.0 : 20.0, "");
	total = check_sets(text, NULL);
	ck_assert_uint_gt(total, 1500); /* the case really has neighbours */
}
END_TEST

/* A radius larger than half the box: under wrap the grid has one or two
 * cells per axis and must still visit each boid once. */
START_TEST(test_sets_large_radius)
{
	char text[1024];
	int dims = 2 + _i / 4;

	scenario_text(text, sizeof text, dims, 300, MODES[_i % 4], 6.5, 10.0, "");
	ck_assert_uint_gt(check_sets(text, NULL), 300);
}
END_TEST

static void squeeze(struct flock *f)
{
	size_t k;
	int d;

	for (k = 0; k < f->n; k++)
		for (d = 0; d < f->dims; d++)
			f->pos[d][k] = 5.0f + (f->pos[d][k] - 5.0f) * 1e-3f;
}

/* Everyone in one cell (and some coincident): O(N^2) but exact. */
START_TEST(test_sets_one_cell)
{
	char text[1024];
	int dims = 2 + _i / 4;

	scenario_text(text, sizeof text, dims, 400, MODES[_i % 4], 3.0, 40.0, "");
	ck_assert_uint_eq(check_sets(text, squeeze), 400 * 399);
}
END_TEST

static void drift_away(struct flock *f)
{
	size_t k;
	int d;

	for (k = 0; k < f->n; k++)
		for (d = 0; d < f->dims; d++)
			f->pos[d][k] = f->pos[d][k] * (k % 2 ? 1.0f : 50.0f) + 1e6f;
}

/* Unbounded flocks far from their initial box, spread very unevenly. */
START_TEST(test_sets_drifted)
{
	char text[1024];
	int dims = 2 + _i;

	scenario_text(text, sizeof text, dims, 2000, "none", 3.0, 40.0, "");
	ck_assert_uint_gt(check_sets(text, drift_away), 0);
}
END_TEST

/* Three boids in four into one of 4 (2D) or 8 (3D) clumps about 1 across,
 * inside the box of scenario_text(..., side 20, ...). */
static void clump(struct flock *f)
{
	const double len[3] = {20.0, 15.0, 10.0};
	size_t k;
	int d;

	for (k = 0; k < f->n; k++)
		for (d = 0; d < f->dims && k % 4 != 0; d++) {
			double frac = f->pos[d][k] / len[d];

			f->pos[d][k] = (float)(len[d] * (0.25 + 0.5 * (double)((k >> d) % 2)) +
					       (frac - 0.5));
		}
}

/* A clumped flock (most boids share their cell of edge r with a hundred
 * others or more) is searched with cells of r/2 reaching 2 cells, a
 * sparse uniform one with cells of r; both find exactly brute force's sets.
 * _i: dims x mode. */
START_TEST(test_sets_clumped)
{
	char text[1024];
	int dims = 2 + _i / 4;

	scenario_text(text, sizeof text, dims, 1200, MODES[_i % 4], 3.0, 20.0, "");
	ck_assert_uint_gt(check_sets(text, clump), 1200 * 100);
	ck_assert_int_eq(last_reach, 2);
	scenario_text(text, sizeof text, dims, 1200, MODES[_i % 4], 1.0, 20.0, "");
	ck_assert_uint_gt(check_sets(text, NULL), 0);
	ck_assert_int_eq(last_reach, 1);
}
END_TEST

START_TEST(test_sets_few_boids)
{
	char text[1024];

	scenario_text(text, sizeof text, 2, 1, "wrap", 3.0, 40.0, "");
	ck_assert_uint_eq(check_sets(text, NULL), 0);
	scenario_text(text, sizeof text, 3, 2, "none", 3.0, 1.0, "");
	ck_assert_uint_eq(check_sets(text, NULL), 2);
}
END_TEST

/* The largest difference of a position coordinate between two frames in
 * id order; under wrap a boid may sit on either side of an edge. */
static double worst_position_diff(const struct scenario *sc, float *const fa[],
				  float *const fb[], size_t n)
{
	double worst = 0;
	size_t k;
	int d;

	for (d = 0; d < sc->dims; d++)
		for (k = 0; k < n; k++) {
			double diff = fabs((double)fa[d][k] - fb[d][k]);

			if (sc->mode == BOUNDS_WRAP)
				diff = fmin(diff, fabs(diff - (sc->bmax[d] - sc->bmin[d])));
			worst = fmax(worst, diff);
		}
	return worst;
}

/* One scenario run twice, on the grid (a) and by brute force (b), with
 * frame buffers for each: nf float arrays, ids and groups, of room for
 * the most agents a frame can hold. */
struct versus {
	struct scenario sc;
	struct sim a, b;
	float *fa[FLOCK_FIELDS_MAX], *fb[FLOCK_FIELDS_MAX];
	uint32_t *ia, *ib, *ga, *gb;
	int nf;
};

static void versus_init(struct versus *v, const char *text, int nf)
{
	struct util_err err;
	size_t cap;
	int d;

	memset(v, 0, sizeof *v);
	load_ok(text, &v->sc);
	ck_assert_int_eq(sim_init(&v->a, &v->sc, SIM_GRID, &test_ctx, &err), 0);
	ck_assert_int_eq(sim_init(&v->b, &v->sc, SIM_BRUTE, &test_ctx, &err), 0);
	cap = (size_t)sim_frame_capacity(&v->sc);
	v->nf = nf;
	for (d = 0; d < nf; d++) {
		v->fa[d] = malloc(cap * sizeof(float));
		v->fb[d] = malloc(cap * sizeof(float));
	}
	v->ia = malloc(cap * sizeof *v->ia);
	v->ib = malloc(cap * sizeof *v->ib);
	v->ga = malloc(cap * sizeof *v->ga);
	v->gb = malloc(cap * sizeof *v->gb);
}

static void versus_step(struct versus *v)
{
	sim_step(&v->a);
	sim_step(&v->b);
}

static void versus_free(struct versus *v)
{
	int d;

	for (d = 0; d < v->nf; d++) {
		free(v->fa[d]);
		free(v->fb[d]);
	}
	free(v->ia);
	free(v->ib);
	free(v->ga);
	free(v->gb);
	sim_free(&v->a);
	sim_free(&v->b);
	scenario_free(&v->sc);
}

/* Grid and brute-force runs agree to rounding (both in id order). */
START_TEST(test_trajectories_agree)
{
	char text[1024];
	int dims = 2 + _i / 4;
	struct versus v;
	double worst, side = 20.0 * (dims == 2 ? 0.75 : 0.5);
	int s;

	scenario_text(text, sizeof text, dims, 800, MODES[_i % 4], 3.0, 20.0, dims == 2 ?
		      ", \"target\": {\"position\": [10, 5]}, \"speed\": {\"min\": 0.1}" :
		      ", \"target\": {\"position\": [10, 5, 5]}, \"speed\": {\"min\": 0.1}");
	versus_init(&v, text, 2 * dims);
	for (s = 0; s < GRID_BRUTE_STEPS; s++)
		versus_step(&v);
	flock_to_id_order(&v.a.flock, v.fa);
	flock_to_id_order(&v.b.flock, v.fb);
	worst = worst_position_diff(&v.sc, v.fa, v.fb, v.a.flock.n);
	ck_assert_msg(worst <= GRID_BRUTE_TOL * side, "%s %dD: grid and brute differ by %g",
		      MODES[_i % 4], dims, worst);
	versus_free(&v);
}
END_TEST

/* With colour following, grid and brute force give the same hues to
 * rounding: after one step (the same positions, sums in other orders)
 * and after GRID_BRUTE_STEPS. */
START_TEST(test_hue_agrees)
{
	char text[1024];
	int dims = 2 + _i / 4;
	struct versus v;
	double worst[2] = {0, 0};
	size_t k;
	int d, t;

	scenario_text(text, sizeof text, dims, 800, MODES[_i % 4], 3.0, 20.0,
		      ", \"speed\": {\"min\": 0.1}, \"hue\": {\"weight\": 0.5}");
	versus_init(&v, text, 2);
	for (t = 1; t <= GRID_BRUTE_STEPS; t++) {
		versus_step(&v);
		if (t != 1 && t != GRID_BRUTE_STEPS)
			continue;
		flock_hue_to_id_order(&v.a.flock, v.fa);
		flock_hue_to_id_order(&v.b.flock, v.fb);
		for (d = 0; d < 2; d++)
			for (k = 0; k < v.a.flock.n; k++)
				worst[t != 1] = fmax(worst[t != 1],
						     fabs((double)v.fa[d][k] - v.fb[d][k]));
	}
	ck_assert_msg(worst[0] <= 1e-6, "%s %dD: hues differ by %g after one step",
		      MODES[_i % 4], dims, worst[0]);
	ck_assert_msg(worst[1] <= 1e-4, "%s %dD: hues differ by %g after %d steps",
		      MODES[_i % 4], dims, worst[1], GRID_BRUTE_STEPS);
	versus_free(&v);
}
END_TEST

/* With predators (chasing the flock's centre, summed in id order) and a
 * population schedule, grid and brute force give the same ids and groups
 * in every frame, and the same values to rounding after the population
 * events. _i: dims x mode. */
START_TEST(test_agents_agree)
{
	char text[1400];
	int dims = 2 + _i / 4, t;
	struct versus v;
	struct util_err err;
	double worst = 0, side = 20.0 * (dims == 2 ? 0.75 : 0.5);
	size_t na = 0, nb = 0;

	scenario_text(text, sizeof text, dims, 800, MODES[_i % 4], 3.0, 20.0,
		      ", \"speed\": {\"min\": 0.1}, \"weights\": {\"flee\": 3},"
		      " \"predators\": {\"count\": 3, \"chase\": \"centre\", \"speed\": 0.8},"
		      " \"population\": [{\"step\": 1, \"add\": 40}, {\"step\": 2, \"remove\": 30},"
		      " {\"step\": 2, \"remove\": 100, \"region\": {\"min\": [0, 0, 0],"
		      " \"max\": [8, 8, 8]}}]");
	/* 2D scenarios take the region's first two numbers */
	if (dims == 2) {
		char *p = strstr(text, "[0, 0, 0]");

		memmove(p + 6, p + 9, strlen(p + 9) + 1);
		memcpy(p, "[0, 0]", 6);
		p = strstr(text, "[8, 8, 8]");
		memmove(p + 6, p + 9, strlen(p + 9) + 1);
		memcpy(p, "[8, 8]", 6);
	}
	versus_init(&v, text, 2 * dims);
	for (t = 1; t <= GRID_BRUTE_STEPS; t++) {
		versus_step(&v);
		ck_assert_msg(sim_check(&v.a, &err) == 0, "%s", err.msg);
		na = sim_frame(&v.a, v.fa, v.ia, v.ga);
		nb = sim_frame(&v.b, v.fb, v.ib, v.gb);
		ck_assert_uint_eq(na, nb);
		ck_assert(memcmp(v.ia, v.ib, na * sizeof *v.ia) == 0 &&
			  memcmp(v.ga, v.gb, na * sizeof *v.ga) == 0);
		/* Values after the events; later, a boid on the edge of a
		 * predator's flight radius in one run and not the other can
		 * make a difference of a step's steering force. */
		if (t == 2)
			worst = worst_position_diff(&v.sc, v.fa, v.fb, na);
	}
	/* the schedule acted: 800 + 40 - 30, less some in the region, + 3 */
	ck_assert_msg(na < 813 && na > 600, "%zu agents", na);
	ck_assert(v.ga[na - 1] == 1 && v.ga[na - 4] == 0);
	ck_assert_msg(worst <= GRID_BRUTE_TOL * side, "%s %dD: grid and brute differ by %g",
		      MODES[_i % 4], dims, worst);
	versus_free(&v);
}
END_TEST

/* A flock in one cell, whose one span starts at slot 0 as brute force's
 * does: every candidate is in the same lane on the grid (where the AVX-512
 * loop takes boids two at a time) and by brute force (one at a time), so
 * one step gives the same bits. Two boids stand still, which makes them
 * see all round, in pairs with boids that have a view cone. _i: dims x
 * view angle x model; 3D with colour following. */
START_TEST(test_pairs_exact)
{
	static const char *const MODELS[] = {"reynolds", "simple", "couzin", "vicsek"};
	static const int VIEWS[] = {120, 300, 360};
	char text[1024], extra[256];
	const int dims = 2 + _i % 2;
	struct versus v;
	struct flock *fa, *fb;
	uint32_t lcg = 12345;
	size_t k, moved = 0;
	int d;

	snprintf(extra, sizeof extra,
		 ", \"model\": \"%s\", \"view_angle\": %d, \"speed\": {\"min\": 0.1}%s",
		 MODELS[_i / 6], VIEWS[_i / 2 % 3], dims == 3 ? ", \"hue\": {\"weight\": 0.5}" : "");
	scenario_text(text, sizeof text, dims, 9, "none", 3.0, 20.0, extra);
	versus_init(&v, text, 1);
	fa = &v.a.flock;
	fb = &v.b.flock;
	for (k = 0; k < fa->n; k++) {
		ck_assert_uint_eq(fa->id[k], fb->id[k]);
		for (d = 0; d < dims; d++) {
			lcg = lcg * 1664525u + 1013904223u;
			fa->pos[d][k] = fb->pos[d][k] = 5.0f + (float)(lcg >> 8) * 0x1p-24f * 0.8f;
			lcg = lcg * 1664525u + 1013904223u;
			fa->vel[d][k] = fb->vel[d][k] =
				k == 2 || k == 5 ? 0.0f : (float)(lcg >> 8) * 0x1p-24f - 0.5f;
		}
	}
	versus_step(&v);
	ck_assert_uint_eq(fa->n, fb->n);
	for (k = 0; k < fa->n; k++) {
		ck_assert_uint_eq(fa->id[k], fb->id[k]);
		for (d = 0; d < dims; d++) {
			ck_assert_msg(memcmp(&fa->pos[d][k], &fb->pos[d][k], sizeof(float)) == 0 &&
				      memcmp(&fa->vel[d][k], &fb->vel[d][k], sizeof(float)) == 0,
				      "%s %dD view %d: slot %zu axis %d: grid %a %a, brute %a %a",
				      MODELS[_i / 6], dims, VIEWS[_i / 2 % 3], k, d,
				      fa->pos[d][k], fa->vel[d][k], fb->pos[d][k], fb->vel[d][k]);
			moved += fa->vel[d][k] != 0.0f;
		}
		if (dims == 3)
			ck_assert(memcmp(&fa->hue[0][k], &fb->hue[0][k], sizeof(float)) == 0 &&
				  memcmp(&fa->hue[1][k], &fb->hue[1][k], sizeof(float)) == 0);
	}
	ck_assert(moved > 0);
	versus_free(&v);
}
END_TEST

Suite *grid_suite(void)
{
	Suite *s = suite_create("grid");
	TCase *tc = tcase_create("neighbours");

	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, test_sets_modes, 0, 8);
	tcase_add_loop_test(tc, test_sets_large_radius, 0, 8);
	tcase_add_loop_test(tc, test_sets_one_cell, 0, 8);
	tcase_add_loop_test(tc, test_sets_drifted, 0, 2);
	tcase_add_loop_test(tc, test_sets_clumped, 0, 8);
	tcase_add_test(tc, test_sets_few_boids);
	tcase_add_loop_test(tc, test_trajectories_agree, 0, 8);
	tcase_add_loop_test(tc, test_hue_agrees, 0, 8);
	tcase_add_loop_test(tc, test_agents_agree, 0, 8);
	tcase_add_loop_test(tc, test_pairs_exact, 0, 24);
	suite_add_tcase(s, tc);
	return s;
}
