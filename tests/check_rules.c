/* check_rules.c: the Reynolds rules and the integrator on small cases whose
 * results are computed by hand, in 2D and 3D. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check_suites.h"
#include "flock.h"
#include "grid.h"
#include "integrate.h"
#include "rules.h"

#define BOX2 "\"count\": 2, \"steps\": 1, \"bounds\": {\"min\": [0, 0], \"max\": [10, 10]"

static void params(const char *text, struct scenario *sc, struct rules_params *rp)
{
	load_ok(text, sc);
	rules_params_init(rp, sc);
}

static void add(struct rules_acc *a, const struct rules_params *rp, float dx, float dy,
		float dz, float vx, float vy, float vz)
{
	float d[3] = {dx, dy, dz}, v[3] = {vx, vy, vz}, still[3] = {0, 0, 0};

	/* a boid standing still sees all round */
	rules_acc_add(a, rp, d, dx * dx + dy * dy + dz * dz, v, still, 0.0f);
}

START_TEST(test_separation_one_neighbour)
{
	struct scenario sc;
	struct rules_params rp;
	struct rules_acc a;
	float pos[3] = {5, 5, 0}, vel[3] = {0.5f, 0, 0};
	double acc[3];

	params("{" BOX2 "}, \"radii\": {\"separation\": 2},"
	       "\"weights\": {\"alignment\": 0, \"cohesion\": 0}, \"max_force\": 10}", &sc, &rp);
	rules_acc_init(&a);
	add(&a, &rp, 1, 0, 0, 0, 1, 0);
	ck_assert_uint_eq(a.n_sep, 1);
	rules_acceleration(&rp, &a, pos, vel, sc.speed_max, acc);
	/* desired (-1, 0) at speed 1, minus v = (-1.5, 0), times weight 1.5 */
	ck_assert_double_eq(acc[0], -2.25);
	ck_assert_double_eq(acc[1], 0.0);
	scenario_free(&sc);
}
END_TEST

START_TEST(test_separation_two_neighbours)
{
	struct scenario sc;
	struct rules_params rp;
	struct rules_acc a;
	float pos[3] = {5, 5, 0}, vel[3] = {0, 0, 0};
	double acc[3];

	params("{" BOX2 "}, \"radii\": {\"separation\": 3},"
	       "\"weights\": {\"separation\": 1, \"alignment\": 0, \"cohesion\": 0},"
	       "\"max_force\": 10}", &sc, &rp);
	rules_acc_init(&a);
	add(&a, &rp, 1, 0, 0, 0, 0, 0);  /* pushes by (-1, 0)/1 */
	add(&a, &rp, 0, 2, 0, 0, 0, 0);  /* pushes by (0, -2)/4: nearer pushes harder */
	ck_assert_float_eq(a.sep[0], -1.0f);
	ck_assert_float_eq(a.sep[1], -0.5f);
	rules_acceleration(&rp, &a, pos, vel, sc.speed_max, acc);
	ck_assert_double_eq_tol(acc[0], -2.0 / sqrt(5.0), 1e-12);
	ck_assert_double_eq_tol(acc[1], -1.0 / sqrt(5.0), 1e-12);
	scenario_free(&sc);
}
END_TEST

START_TEST(test_alignment_two_neighbours_truncated)
{
	struct scenario sc;
	struct rules_params rp;
	struct rules_acc a;
	float pos[3] = {5, 5, 0}, vel[3] = {0, 0, 0};
	double acc[3];

	params("{" BOX2 "}, \"weights\": {\"separation\": 0, \"alignment\": 2, \"cohesion\": 0},"
	       "\"max_force\": 0.5}", &sc, &rp);
	rules_acc_init(&a);
	add(&a, &rp, 1, 1, 0, 1, 0, 0);
	add(&a, &rp, -1, 1, 0, 0, 1, 0);
	ck_assert_uint_eq(a.n_ali, 2);
	rules_acceleration(&rp, &a, pos, vel, sc.speed_max, acc);
	/* mean (0.5, 0.5) -> speed 1 along (1,1) -> truncated to 0.5 -> x2 */
	ck_assert_double_eq_tol(acc[0], 1.0 / sqrt(2.0), 1e-12);
	ck_assert_double_eq_tol(acc[1], 1.0 / sqrt(2.0), 1e-12);
	ck_assert_double_eq_tol(hypot(acc[0], acc[1]), 2 * 0.5, 1e-12);
	scenario_free(&sc);
}
END_TEST

START_TEST(test_cohesion_two_neighbours)
{
	struct scenario sc;
	struct rules_params rp;
	struct rules_acc a;
	float pos[3] = {5, 5, 0}, vel[3] = {0.25f, 0, 0};
	double acc[3];

	params("{" BOX2 "}, \"weights\": {\"separation\": 0, \"alignment\": 0, \"cohesion\": 1},"
	       "\"speed\": {\"max\": 2}, \"max_force\": 10}", &sc, &rp);
	rules_acc_init(&a);
	add(&a, &rp, 2, 0, 0, 0, 0, 0);
	add(&a, &rp, 0, 2, 0, 0, 0, 0);
	rules_acceleration(&rp, &a, pos, vel, sc.speed_max, acc);
	/* mean displacement (1, 1) -> (sqrt 2, sqrt 2) at speed 2, minus v */
	ck_assert_double_eq_tol(acc[0], sqrt(2.0) - 0.25, 1e-12);
	ck_assert_double_eq_tol(acc[1], sqrt(2.0), 1e-12);
	scenario_free(&sc);
}
END_TEST

START_TEST(test_neighbour_at_radius)
{
	struct scenario sc;
	struct rules_params rp;
	struct rules_acc a;

	params("{" BOX2 "}, \"radii\": {\"separation\": 1, \"alignment\": 1, \"cohesion\": 1}}",
	       &sc, &rp);
	rules_acc_init(&a);
	add(&a, &rp, 1, 0, 0, 0, 0, 0);              /* exactly at r: counts */
	add(&a, &rp, 0, nextafterf(1, 2), 0, 0, 0, 0); /* just beyond: does not */
	ck_assert_uint_eq(a.n_sep, 1);
	ck_assert_uint_eq(a.n_ali, 1);
	ck_assert_uint_eq(a.n_coh, 1);
	scenario_free(&sc);
}
END_TEST

START_TEST(test_coincident_boids)
{
	struct scenario sc;
	struct rules_params rp;
	struct rules_acc a;
	float pos[3] = {5, 5, 0}, vel[3] = {0, 0, 0};
	double acc[3];

	params("{" BOX2 "}}", &sc, &rp);
	rules_acc_init(&a);
	add(&a, &rp, 0, 0, 0, 0, 0, 0);
	rules_acceleration(&rp, &a, pos, vel, sc.speed_max, acc);
	ck_assert_uint_eq(a.n_sep, 0); /* no direction to push along */
	ck_assert_uint_eq(a.n_coh, 1);
	ck_assert(acc[0] == 0.0 && acc[1] == 0.0); /* zero desired: no force, no NaN */
	scenario_free(&sc);
}
END_TEST

START_TEST(test_cohesion_3d)
{
	struct scenario sc;
	struct rules_params rp;
	struct rules_acc a;
	float pos[3] = {5, 5, 5}, vel[3] = {0, 0, 0};
	double acc[3];

	params("{\"dimensions\": 3, \"count\": 2, \"steps\": 1, \"bounds\": {\"min\": [0, 0, 0],"
	       "\"max\": [10, 10, 10]}, \"weights\": {\"separation\": 0, \"alignment\": 0,"
	       "\"cohesion\": 3}, \"max_force\": 10}", &sc, &rp);
	rules_acc_init(&a);
	add(&a, &rp, 0, 0, 2, 0, 0, 0);
	rules_acceleration(&rp, &a, pos, vel, sc.speed_max, acc);
	ck_assert_double_eq(acc[0], 0.0);
	ck_assert_double_eq(acc[1], 0.0);
	ck_assert_double_eq(acc[2], 3.0);
	scenario_free(&sc);
}
END_TEST

START_TEST(test_steer_zero_desired)
{
	struct scenario sc;
	struct rules_params rp;
	double desired[3] = {0, 0, 0}, f[3];
	float vel[3] = {0.3f, 0.1f, 0};

	params("{" BOX2 "}}", &sc, &rp);
	rules_steer(&rp, desired, vel, sc.speed_max, f);
	ck_assert(f[0] == 0.0 && f[1] == 0.0 && f[2] == 0.0);
	scenario_free(&sc);
}
END_TEST

START_TEST(test_target_across_edge)
{
	struct scenario sc;
	struct rules_params rp;
	struct rules_acc a;
	float pos[3] = {1, 5, 0}, vel[3] = {0, 0, 0};
	double acc[3];

	/* From x=1 the target at x=9 is nearer through the wrapped edge. */
	params("{" BOX2 "}, \"target\": {\"position\": [9, 5]}, \"max_force\": 10}", &sc, &rp);
	rules_acc_init(&a);
	rules_acceleration(&rp, &a, pos, vel, sc.speed_max, acc);
	ck_assert_double_eq(acc[0], -1.0);
	ck_assert_double_eq(acc[1], 0.0);
	scenario_free(&sc);
}
END_TEST

START_TEST(test_steer_walls)
{
	struct scenario sc;
	struct rules_params rp;
	struct rules_acc a;
	float near_lo[3] = {0.5f, 5, 0}, middle[3] = {5, 5, 0}, vel[3] = {0, 0, 0};
	double acc[3];

	params("{" BOX2 ", \"mode\": \"steer\", \"margin\": 1}, \"weights\": {\"bounds\": 2},"
	       "\"max_force\": 10}", &sc, &rp);
	rules_acc_init(&a);
	rules_acceleration(&rp, &a, near_lo, vel, sc.speed_max, acc);
	ck_assert_double_eq(acc[0], 2.0);
	ck_assert_double_eq(acc[1], 0.0);
	rules_acceleration(&rp, &a, middle, vel, sc.speed_max, acc);
	ck_assert_double_eq(acc[0], 0.0);
	scenario_free(&sc);
}
END_TEST

/* ---- integrator ---- */
static void integrate(const char *extra, const float p[3], const float v[3],
		      const double a[3], float po[3], float vo[3])
{
	char text[512];
	struct scenario sc;
	struct rules_params rp;
	struct integrate_params ip;

	snprintf(text, sizeof text, "{" BOX2 "%s}", extra);
	params(text, &sc, &rp);
	integrate_params_init(&ip, &sc);
	integrate_boid(&ip, a, p, v, sc.speed_max, po, vo);
	scenario_free(&sc);
}

START_TEST(test_integrate_speed_limits)
{
	float p[3] = {5, 5, 0}, v[3] = {0.5f, 0, 0}, po[3], vo[3];
	double a[3] = {1.5, 0, 0}, none[3] = {0, 0, 0};

	integrate("}, \"speed\": {\"min\": 0.25, \"max\": 1}", p, v, a, po, vo);
	ck_assert_float_eq(vo[0], 1.0f); /* 2.0 clamped to speed.max */
	ck_assert_float_eq(po[0], 6.0f);
	v[0] = 0.125f;
	integrate("}, \"speed\": {\"min\": 0.25, \"max\": 1}", p, v, none, po, vo);
	ck_assert_float_eq(vo[0], 0.25f); /* raised to speed.min */
}
END_TEST

START_TEST(test_integrate_zero_keeps_heading)
{
	float p[3] = {5, 5, 0}, v[3] = {0.375f, 0.5f, 0}, po[3], vo[3];
	double a[3] = {-0.375, -0.5, 0};

	integrate("}, \"speed\": {\"min\": 0.25, \"max\": 1}", p, v, a, po, vo);
	ck_assert_float_eq_tol(vo[0], 0.15f, 1e-7f);
	ck_assert_float_eq_tol(vo[1], 0.2f, 1e-7f);
	ck_assert(!isnan(po[0]) && !isnan(po[1]));
}
END_TEST

START_TEST(test_integrate_reflect_and_wrap)
{
	float p[3] = {9.75f, 5, 0}, v[3] = {0.5f, 0, 0}, po[3], vo[3];
	double a[3] = {0, 0, 0};

	integrate(", \"mode\": \"reflect\"}", p, v, a, po, vo);
	ck_assert_float_eq(po[0], 9.75f);  /* 10.25 mirrored to 9.75 */
	ck_assert_float_eq(vo[0], -0.5f);
	integrate(", \"mode\": \"wrap\"}", p, v, a, po, vo);
	ck_assert_float_eq(po[0], 0.25f);
	ck_assert_float_eq(vo[0], 0.5f);
	integrate(", \"mode\": \"none\"}", p, v, a, po, vo);
	ck_assert_float_eq(po[0], 10.25f);
}
END_TEST

/* rules_params is plain data: a copy works after the original is gone
 * (an MPI rank, a checkpoint or a second simulation may take one), as a
 * struct pointing into itself would not. */
START_TEST(test_params_copyable)
{
	struct scenario sc;
	struct rules_params *rp = malloc(sizeof *rp), copy;
	struct rules_acc acc;
	float pos[3] = {9.75f, 5, 0}, vel[3] = {0.5f, 0, 0}, po[3], vo[3], cp[3], cv[3];

	ck_assert_ptr_nonnull(rp);
	params("{" BOX2 ", \"mode\": \"reflect\"}}", &sc, rp);
	rules_acc_init(&acc);
	rules_update(rp, &acc, 0, 0, pos, vel, po, vo);
	memcpy(&copy, rp, sizeof copy);
	memset(rp, 0xff, sizeof *rp); /* the original is gone, its bytes garbage */
	free(rp);
	rules_update(&copy, &acc, 0, 0, pos, vel, cp, cv);
	ck_assert_float_eq(cp[0], po[0]);
	ck_assert_float_eq(cv[0], vo[0]);
	ck_assert_float_eq(po[0], 9.75f); /* the reflection, from the box */
	scenario_free(&sc);
}
END_TEST

/* Two boids either side of a wrapped edge are neighbours in the grid and in
 * brute force, and cohesion pulls them through the edge. */
START_TEST(test_wrap_edge_neighbours)
{
	struct scenario sc;
	struct flock f;
	struct grid g;
	struct rules_params rp;
	struct util_err err;
	uint32_t ids[4];

	params("{" BOX2 "}, \"radii\": {\"separation\": 0.5, \"alignment\": 2, \"cohesion\": 2}}",
	       &sc, &rp);
	ck_assert_int_eq(flock_init(&f, &sc, test_ctx.parallel_min, &err), 0);
	ck_assert_int_eq(grid_init(&g, &sc, f.n, &err), 0);
	f.pos[0][0] = 0.5f;
	f.pos[1][0] = 5.0f;
	f.pos[0][1] = 9.5f;
	f.pos[1][1] = 5.0f;
	ck_assert_uint_eq(brute_neighbours(&f, &rp, 0, rp.r2_coh, ids, 4), 1);
	ck_assert_uint_eq(ids[0], 1);
	grid_build(&g, &f);
	ck_assert_uint_gt(g.n[0], 2); /* the edge is a real cell boundary */
	ck_assert_uint_eq(grid_neighbours(&g, &f, &rp, 0, rp.r2_coh, ids, 4), 1);
	ck_assert_uint_eq(grid_neighbours(&g, &f, &rp, 1, rp.r2_coh, ids, 4), 1);
	grid_free(&g);
	flock_free(&f);
	scenario_free(&sc);
}
END_TEST

/* The batch updates (rules_update_batch_avx512 and _avx2, RULES_BATCH
 * boids, in vectors of 8 and of 4 binary64 lanes) against rules_update,
 * boid by boid, bit for bit: the models they serve, 2D and 3D, in every
 * bounds mode but none (steer only where the model has forces), with a
 * target where the model has one, Reynolds and simple with a turn limit
 * (when reflecting), predators in some trials, each boid's own speed
 * (speed variation and speed noise) for the models that have them, every
 * batch size 1 .. RULES_BATCH (the AVX2 copy splits a batch in two
 * vectors), sums with empty rules and boids outside the box among them;
 * and no slot at or past nb written. Only the levels this CPU runs are
 * called; the test is not registered where it runs none (rules_suite). */
#if defined(__x86_64__) && defined(__GNUC__)
#define BATCH_LEVELS 1
typedef int batch_update_fn(const struct rules_params *p, const struct rules_acc acc[RULES_BATCH],
			    int nb, size_t k, const uint32_t *id, uint64_t step,
			    const float *const pos[3], const float *const vel[3],
			    float *const pos_out[3], float *const vel_out[3]);

static int batch_level_runs(int level)
{
	__builtin_cpu_init();
	if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma") ||
	    !__builtin_cpu_supports("bmi") || !__builtin_cpu_supports("bmi2"))
		return 0;
	return level == 1 || (__builtin_cpu_supports("avx512f") &&
			      __builtin_cpu_supports("avx512bw") &&
			      __builtin_cpu_supports("avx512cd") &&
			      __builtin_cpu_supports("avx512dq") &&
			      __builtin_cpu_supports("avx512vl"));
}

/* xorshift: the test's own numbers, the same on every run */
static double batch_rand(uint64_t *st)
{
	*st ^= *st << 13;
	*st ^= *st >> 7;
	*st ^= *st << 17;
	return (double)(*st >> 11) / 9007199254740992.0;
}

START_TEST(test_batch_matches_scalar)
{
	static const char *MODELS[] = {"reynolds", "blend", "slerp", "simple", "accelerate",
				       "inertia", "vicsek", "couzin"};
	const int nm = (int)(sizeof MODELS / sizeof MODELS[0]), slerp = 2, vicsek = 6, couzin = 7;
	static const float PRED[3][2] = {{9.5f, 3.0f}, {0.5f, 6.0f}, {9.5f, 2.0f}};
	const int blend = 1;
	/* every bounds mode the batches take (steer's margin 2 of 10) */
	static const char *MODES[] = {"wrap", "reflect", "steer"};
	/* ids and a step of their own, which the noise of Vicsek's and Couzin's
	 * models reads */
	const uint32_t ids[RULES_BATCH] = {1000, 1037, 1074, 1111, 1148, 1185, 1222, 1259};
	batch_update_fn *const FN[2] = {rules_update_batch_avx512, rules_update_batch_avx2};
	uint64_t st = 0x9e3779b97f4a7c15u;
	const int inertia = 5;
	int m, mode, dims, level, nb, b, d, trial, sv, batched = 0, levels = 0;
	int slerp_batched[3] = {0, 0, 0};

	for (level = 0; level < 2; level++)
		levels += batch_level_runs(level);
	ck_assert_int_gt(levels, 0);
	for (m = 0; m < nm; m++)
		for (sv = 0; sv < 3; sv++)
		for (mode = 0; mode < 3; mode++)
		for (dims = 2; dims <= 3; dims++) {
			char text[1024];
			struct scenario sc;
			struct rules_params rp;
			const int forces = m == 0 || strcmp(MODELS[m], "simple") == 0 ||
					   strcmp(MODELS[m], "accelerate") == 0;
			const int target = m == 0 || strcmp(MODELS[m], "simple") == 0 || m == inertia ||
					   m == slerp;
			/* sv 1, speeds that vary: a variation and a noise (inertia's
			 * noise has a period only); blend and slerp have neither */
			const char *vary = sv != 1 || m == blend || m == slerp ? "" : m == inertia ?
					   ", \"variation\": 0.5, \"noise\": {\"period\": 0.5}" :
					   ", \"variation\": 0.5,"
					   " \"noise\": {\"amplitude\": 0.6, \"period\": 0.5}";

			/* sv 2: an obstacle in the middle (boids inside it, near it
			 * and moving into it), whose collisions every batch takes
			 * lane by lane; for the models with forces and blend its
			 * avoidance, an attractor and a repeller (one across the
			 * edge under wrap) too, their terms lane by lane. sv 1 for
			 * blend and slerp: the return rule, to a centre (one across
			 * the edge under wrap) beyond radius 3 */
			const int avoids = forces || m == blend;
			const char *world = sv == 1 && m == blend ? (dims == 2 ?
					    "\"return\": {\"center\": [8, 2], \"radius\": 3, \"weight\": 0.7}," :
					    "\"return\": {\"center\": [8, 2, 5], \"radius\": 3,"
					    " \"weight\": 0.7},") :
					    sv == 1 && m == slerp ? (dims == 2 ?
					    "\"return\": {\"center\": [8, 2], \"radius\": 3}," :
					    "\"return\": {\"center\": [8, 2, 5], \"radius\": 3},") :
					    sv != 2 ? "" : !avoids ? (dims == 2 ?
					    "\"obstacles\": [{\"type\": \"sphere\", \"center\": [5, 5],"
					    " \"radius\": 1.5}]," :
					    "\"obstacles\": [{\"type\": \"sphere\", \"center\": [5, 5, 5],"
					    " \"radius\": 1.5}],") : dims == 2 ?
					    "\"obstacles\": [{\"type\": \"sphere\", \"center\": [5, 5],"
					    " \"radius\": 1.5}], \"radii\": {\"avoid\": 2},"
					    " \"attractors\": [{\"strength\": 0.3, \"range\": 6,"
					    " \"position\": [2, 8]}, {\"strength\": -0.2, \"range\": 4,"
					    " \"position\": [9.5, 0.5]}]," :
					    "\"obstacles\": [{\"type\": \"sphere\", \"center\": [5, 5, 5],"
					    " \"radius\": 1.5}], \"radii\": {\"avoid\": 2},"
					    " \"attractors\": [{\"strength\": 0.3, \"range\": 6,"
					    " \"position\": [2, 8, 5]}, {\"strength\": -0.2, \"range\": 4,"
					    " \"position\": [9.5, 0.5, 9.5]}],";

			/* steer mode only for the models with forces */
			if (mode == 2 && m != 0 && strcmp(MODELS[m], "simple") != 0 &&
			    strcmp(MODELS[m], "accelerate") != 0)
				continue;
			snprintf(text, sizeof text,
				 "{\"model\": \"%s\", \"dimensions\": %d, \"count\": 8, \"steps\": 1,"
				 " %s%s%s%s\"speed\": {%s\"max\": 1%s}, %s"
				 " \"bounds\": {\"min\": [0, 0%s], \"max\": [10, 10%s],"
				 " \"mode\": \"%s\", \"margin\": 2}}",
				 MODELS[m], dims,
				 /* a target near a corner (so that under wrap some boids
				  * see it across the edge), radius 3 (some within it),
				  * for the models whose batches have one */
				 target ?
				 (dims == 2 ? "\"target\": {\"position\": [9, 1], \"radius\": 3}," :
					      "\"target\": {\"position\": [9, 1, 8], \"radius\": 3},") : "",
				 /* the target's weight, and avoid's with obstacles */
				 sv == 2 && avoids ?
				 (target ? "\"weights\": {\"target\": 0.5, \"avoid\": 1.5}," :
					   "\"weights\": {\"avoid\": 1.5},") :
				 target ? "\"weights\": {\"target\": 0.5}," : "",
				 world,
				 /* a turn limit of 30 degrees a step, when reflecting */
				 mode == 1 && (strcmp(MODELS[m], "reynolds") == 0 ||
					       strcmp(MODELS[m], "simple") == 0) ? "\"max_turn\": 30," : "",
				 m == vicsek || m == couzin ? "" : "\"min\": 0.25, ", vary,
				 m == vicsek ? "\"noise\": 0.7," :
				 /* noise 3: some turns of a whole turn or more (the
				  * lanes' fmod); a turn limit of 40 degrees a step */
				 m == couzin ? "\"noise\": 3, \"max_turn\": 40," :
				 "\"max_force\": 0.05,",
				 dims == 3 ? ", 0" : "", dims == 3 ? ", 10" : "", MODES[mode]);
			params(text, &sc, &rp);
			for (trial = 0; trial < 40; trial++) {
				float pos[3][RULES_BATCH], vel[3][RULES_BATCH];
				struct rules_acc acc[RULES_BATCH];
				const float *in_p[3] = {pos[0], pos[1], pos[2]};
				const float *in_v[3] = {vel[0], vel[1], vel[2]};

				for (b = 0; b < RULES_BATCH; b++) {
					rules_acc_init(&acc[b]);
					for (d = 0; d < 3; d++) {
						/* some boids at the box's far edge, to wrap,
						 * or at either wall headed out, to reflect */
						pos[d][b] = trial % 5 == 0 && b == 3 ? 9.9990f :
							    trial % 5 == 1 && b == 2 ? 0.0005f :
							    (float)(10.0 * batch_rand(&st));
						vel[d][b] = d >= dims ? 0.0f :
							    trial % 5 == 0 && b == 3 ? 0.75f :
							    trial % 5 == 1 && b == 2 ? -0.75f :
							    (float)(batch_rand(&st) - 0.5);
						acc[b].sep[d] = (float)(4.0 * batch_rand(&st) - 2.0);
						acc[b].ali[d] = (float)(6.0 * batch_rand(&st) - 3.0);
						acc[b].coh[d] = (float)(8.0 * batch_rand(&st) - 4.0);
					}
					/* empty rules in some boids */
					acc[b].n_sep = (uint32_t)(batch_rand(&st) * 4.0);
					acc[b].n_ali = (uint32_t)(batch_rand(&st) * 6.0);
					acc[b].n_coh = (trial + b) % 7 == 0 ? 0 : acc[b].n_ali + 1;
					if (m == slerp) /* ali[0] holds the neighbours' speeds */
						acc[b].ali[0] = (float)acc[b].n_coh * 0.75f;
				}
				/* Vicsek: boid 5's mean heading exactly zero (speed.max 1,
				 * so its own unit heading is its velocity), which the
				 * batch leaves to the scalar code */
				if (m == vicsek && trial % 9 == 4)
					for (d = 0; d < 3; d++) {
						acc[5].ali[d] = -vel[d][5];
						/* with speeds that vary, its own heading is
						 * v/|v|: at rest, 0 */
						if (sv)
							vel[d][5] = acc[5].ali[d] = 0.0f;
					}
				/* Couzin: boid 5 standing still, likewise */
				if (m == couzin && trial % 9 == 4)
					for (d = 0; d < 3; d++)
						vel[d][5] = 0.0f;
				/* two predators in every third trial, one near a corner
				 * (seen across the edge under wrap): Reynolds, simple,
				 * accelerate and Couzin flee them in their batches,
				 * blend lane by lane, the others see none */
				rp.n_pred = trial % 3 == 2 ? 2 : 0;
				for (d = 0; d < 3; d++)
					rp.pred_pos[d] = PRED[d];
				for (level = 0; level < 2; level++) {
					if (!batch_level_runs(level))
						continue;
					for (nb = 1; nb <= RULES_BATCH; nb++) {
						float po[3][RULES_BATCH], vo[3][RULES_BATCH];
						float *out_p[3] = {po[0], po[1], po[2]};
						float *out_v[3] = {vo[0], vo[1], vo[2]};
						int done;

						memset(po, 0x7f, sizeof po);
						memset(vo, 0x7f, sizeof vo);
						done = FN[level](&rp, acc, nb, 0, ids, (uint64_t)trial + 5, in_p,
								 in_v, out_p, out_v);
						/* slerp's special cases are left to the scalar code,
						 * and so is Vicsek's zero mean heading, when boid 5
						 * is in the batch */
						if (m == vicsek || m == couzin)
							ck_assert_msg(done == !(trial % 9 == 4 && nb > 5),
								      "%s %dD trial %d nb %d: done %d",
								      MODELS[m], dims, trial, nb, done);
						else if (m != slerp)
							ck_assert_msg(done, "%s %dD: the batch declined", MODELS[m],
								      dims);
						if (!done)
							continue;
						batched++;
						slerp_batched[sv] += m == slerp;
						for (b = 0; b < RULES_BATCH; b++) {
							float p1[3] = {pos[0][b], pos[1][b], pos[2][b]};
							float v1[3] = {vel[0][b], vel[1][b], vel[2][b]};
							float ps[3], vs[3];

							rules_update(&rp, &acc[b], ids[b], (uint64_t)trial + 5, p1,
								     v1, ps, vs);
							for (d = 0; d < dims; d++) {
								const float want_p = b < nb ? ps[d] : 3.3961514e38f;
								const float want_v = b < nb ? vs[d] : 3.3961514e38f;

								ck_assert_msg(memcmp(&po[d][b], &want_p, sizeof want_p) == 0 &&
									      memcmp(&vo[d][b], &want_v, sizeof want_v) == 0,
									      "%s %dD level %d nb %d boid %d axis %d: "
									      "%a %a against %a %a", MODELS[m], dims,
									      level, nb, b, d, po[d][b], vo[d][b],
									      want_p, want_v);
							}
						}
					}
				}
			}
			scenario_free(&sc);
		}
	/* every level and model that runs updated batches */
	ck_assert_int_gt(batched, levels * (nm - 2) * 2 * 40 * RULES_BATCH);
	/* slerp's batch, with a target, a return rule and an obstacle, takes
	 * most boids (its special cases are rare) */
	for (sv = 0; sv < 3; sv++)
		ck_assert_int_gt(slerp_batched[sv], levels * 40 * RULES_BATCH);
}
END_TEST
#endif

Suite *rules_suite(void)
{
	Suite *s = suite_create("rules");
	TCase *tc = tcase_create("reynolds");

	tcase_add_test(tc, test_separation_one_neighbour);
	tcase_add_test(tc, test_separation_two_neighbours);
	tcase_add_test(tc, test_alignment_two_neighbours_truncated);
	tcase_add_test(tc, test_cohesion_two_neighbours);
	tcase_add_test(tc, test_neighbour_at_radius);
	tcase_add_test(tc, test_coincident_boids);
	tcase_add_test(tc, test_cohesion_3d);
	tcase_add_test(tc, test_steer_zero_desired);
	tcase_add_test(tc, test_target_across_edge);
	tcase_add_test(tc, test_steer_walls);
	tcase_add_test(tc, test_wrap_edge_neighbours);
	suite_add_tcase(s, tc);
	tc = tcase_create("integrate");
	tcase_add_test(tc, test_integrate_speed_limits);
	tcase_add_test(tc, test_integrate_zero_keeps_heading);
	tcase_add_test(tc, test_integrate_reflect_and_wrap);
	tcase_add_test(tc, test_params_copyable);
	suite_add_tcase(s, tc);
#ifdef BATCH_LEVELS
	tc = tcase_create("batch");
	if (batch_level_runs(0) || batch_level_runs(1))
		tcase_add_test(tc, test_batch_matches_scalar);
	else
		fprintf(stderr, "SKIP: rules batch: this CPU runs neither batch level\n");
	suite_add_tcase(s, tc);
#endif
	return s;
}
