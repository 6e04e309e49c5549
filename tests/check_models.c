/* check_models.c: the models against the papers' qualitative results,
 * the field of view and turn limit, deterministic maths, and the metrics
 * on configurations whose values are known. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check_suites.h"
#include "detmath.h"
#include "metrics.h"
#include "rng.h"
#include "rules.h"
#include "sim.h"

/* Polarization (and milling) at the end of a run of a scenario file with
 * up to five overrides (NULL-terminated). */
static double run_file(const char *file, const char *const *over, double *milling)
{
	struct scenario sc;
	struct sim s;
	struct metrics m;
	struct metrics_row row;
	struct util_err err = {0};
	struct scenario_override ov[5];
	uint64_t t;
	int n = 0;

	for (; over[n] && n < 5; n++) {
		ov[n].text = over[n];
		ov[n].label = NULL;
	}
	ck_assert_msg(scenario_load_file(test_srcfile(file), ov, n, &sc, &err) == 0,
		      "%s", err.msg);
	ck_assert_int_eq(sim_init(&s, &sc, SIM_GRID, &test_ctx, &err), 0);
	ck_assert_int_eq(metrics_init(&m, s.flock.n, &err), 0);
	for (t = 0; t < sc.steps; t++)
		sim_step(&s);
	ck_assert_msg(sim_check(&s, &err) == 0, "%s", err.msg);
	sim_measure(&s, &m, &row);
	if (milling)
		*milling = row.milling;
	metrics_free(&m);
	sim_free(&s);
	scenario_free(&sc);
	return row.polarization;
}

/* Vicsek et al. (1995) fig. 2(a), N = 400, density 4: ordered without
 * noise, disordered at eta = 2 pi (random headings give 0.886/sqrt(N) =
 * 0.044 on average). */
#define RUN(file, milling, ...) run_file(file, (const char *const[]){__VA_ARGS__, NULL}, milling)
#define VICSEK "scenarios/models/vicsek.json"
#define COUZIN "scenarios/models/couzin.json"

START_TEST(test_vicsek_order_disorder)
{
	double low = RUN(VICSEK, NULL, "noise=0", "steps=600");
	double high = RUN(VICSEK, NULL, "noise=6.283185307179586", "steps=600");
	double mid = RUN(VICSEK, NULL, "noise=2", "steps=600");

	ck_assert_msg(low > 0.9, "v_a at eta = 0 is %g", low);
	ck_assert_msg(high < 0.2, "v_a at eta = 2 pi is %g", high);
	ck_assert_msg(mid > high + 0.3 && mid < low, "v_a at eta = 2 is %g", mid);
}
END_TEST

/* In 3D (noise as a cone) the same: ordered at low noise, not at full. */
START_TEST(test_vicsek_3d)
{
	double low = RUN(VICSEK, NULL, "dimensions=3", "bounds.min=[0,0,0]", "bounds.max=[5,5,5]",
			 "noise=0.3", "steps=400");
	double high = RUN(VICSEK, NULL, "dimensions=3", "bounds.min=[0,0,0]", "bounds.max=[5,5,5]",
			  "noise=6.283185307179586", "steps=400");

	ck_assert_msg(low > 0.8, "3D v_a at eta = 0.3 is %g", low);
	ck_assert_msg(high < 0.2, "3D v_a at eta = 2 pi is %g", high);
}
END_TEST

/* Couzin et al. (2002) fig. 2: with the paper's parameters, Delta r_o = 0
 * gives a swarm, 1 a torus (milling), 7 a highly parallel group. */
START_TEST(test_couzin_phases)
{
	double m_swarm, m_torus, m_par;
	double p_swarm = RUN(COUZIN, &m_swarm, "radii.alignment=1", "steps=2000");
	double p_torus = RUN(COUZIN, &m_torus, "radii.alignment=2", "steps=2000");
	double p_par = RUN(COUZIN, &m_par, "radii.alignment=8", "steps=2000");

	ck_assert_msg(p_swarm < 0.4 && m_swarm < 0.4, "swarm: p %g m %g", p_swarm, m_swarm);
	ck_assert_msg(m_torus > 0.6 && p_torus < 0.4, "torus: p %g m %g", p_torus, m_torus);
	ck_assert_msg(p_par > 0.9 && m_par < 0.3, "parallel: p %g m %g", p_par, m_par);
}
END_TEST

/* The simple model's pull is linear in the offsets. */
START_TEST(test_simple_model_terms)
{
	struct scenario sc;
	struct rules_params rp;
	struct rules_acc a;
	float pos[3] = {5, 5, 0}, vel[3] = {0.5f, 0, 0}, still[3] = {0, 0, 0};
	float d1[3] = {1, 0, 0}, v1[3] = {0, 0.5f, 0}, po[3], vo[3];

	load_ok("{\"model\": \"simple\", \"count\": 2, \"steps\": 1, \"dt\": 1,"
		"\"radii\": {\"separation\": 2, \"alignment\": 2, \"cohesion\": 2},"
		"\"weights\": {\"separation\": 0.05, \"alignment\": 0.125, \"cohesion\": 0.25},"
		"\"speed\": {\"max\": 10}, \"bounds\": {\"min\": [0, 0], \"max\": [10, 10]}}", &sc);
	rules_params_init(&rp, &sc);
	rules_acc_init(&a);
	rules_acc_add(&a, &rp, d1, 1.0f, v1, still, 0.0f);
	rules_update(&rp, &a, 0, 0, pos, vel, po, vo);
	/* dv = 0.25 (1, 0) + 0.125 ((0, 0.5) - (0.5, 0)) + 0.05 (-1, 0) */
	ck_assert_float_eq_tol(vo[0], 0.5f + 0.25f - 0.0625f - 0.05f, 1e-6f);
	ck_assert_float_eq_tol(vo[1], 0.0625f, 1e-6f);
	scenario_free(&sc);
}
END_TEST

/* A neighbour behind the boid, outside a 180-degree view, is not seen;
 * one ahead is. */
START_TEST(test_field_of_view)
{
	struct scenario sc;
	struct rules_params rp;
	struct rules_acc a;
	float vi[3] = {1, 0, 0}, ahead[3] = {1, 0.5f, 0}, behind[3] = {-1, 0.2f, 0};
	float side[3] = {-0.01f, 1, 0}, v[3] = {0, 1, 0};

	load_ok("{\"count\": 2, \"steps\": 1, \"view_angle\": 180,"
		"\"bounds\": {\"min\": [0, 0], \"max\": [10, 10]}}", &sc);
	rules_params_init(&rp, &sc);
	rules_acc_init(&a);
	rules_acc_add(&a, &rp, behind, 1.04f, v, vi, 1.0f);
	ck_assert_uint_eq(a.n_ali, 0);
	rules_acc_add(&a, &rp, side, 1.0001f, v, vi, 1.0f);
	ck_assert_uint_eq(a.n_ali, 0);
	rules_acc_add(&a, &rp, ahead, 1.25f, v, vi, 1.0f);
	ck_assert_uint_eq(a.n_ali, 1);
	scenario_free(&sc);
	/* 300 degrees: blind only in a 60-degree cone straight behind */
	load_ok("{\"count\": 2, \"steps\": 1, \"view_angle\": 300,"
		"\"bounds\": {\"min\": [0, 0], \"max\": [10, 10]}}", &sc);
	rules_params_init(&rp, &sc);
	rules_acc_init(&a);
	rules_acc_add(&a, &rp, behind, 1.04f, v, vi, 1.0f);
	ck_assert_uint_eq(a.n_ali, 0);
	rules_acc_add(&a, &rp, side, 1.0001f, v, vi, 1.0f);
	ck_assert_uint_eq(a.n_ali, 1);
	scenario_free(&sc);
}
END_TEST

/* No boid turns more than max_turn * dt in one step (Reynolds, 2D and 3D,
 * and Couzin), over a whole run. */
START_TEST(test_turn_limit)
{
	static const char *const CASES[] = {
		"{\"count\": 300, \"steps\": 40, \"max_turn\": 10, \"max_force\": 1,"
		" \"bounds\": {\"min\": [0, 0], \"max\": [15, 15]}}",
		"{\"dimensions\": 3, \"count\": 300, \"steps\": 40, \"max_turn\": 5, \"dt\": 0.5,"
		" \"max_force\": 1, \"bounds\": {\"min\": [0, 0, 0], \"max\": [8, 8, 8],"
		" \"mode\": \"reflect\"}}",
		"{\"model\": \"couzin\", \"count\": 200, \"steps\": 40, \"max_turn\": 40,"
		" \"dt\": 0.1, \"noise\": 0.5, \"speed\": {\"max\": 3},"
		" \"radii\": {\"separation\": 1, \"alignment\": 3, \"cohesion\": 10},"
		" \"bounds\": {\"min\": [0, 0], \"max\": [20, 20], \"mode\": \"none\"}}",
	};
	struct scenario sc;
	struct sim s;
	struct util_err err;
	float *before[FLOCK_FIELDS_MAX], *after[FLOCK_FIELDS_MAX];
	size_t k, n;
	int d, dims;
	uint64_t t;
	double worst = 0, limit;

	load_ok(CASES[_i], &sc);
	ck_assert_int_eq(sim_init(&s, &sc, SIM_GRID, &test_ctx, &err), 0);
	n = s.flock.n;
	dims = sc.dims;
	for (d = 0; d < 2 * dims; d++) {
		before[d] = malloc(n * sizeof(float));
		after[d] = malloc(n * sizeof(float));
	}
	limit = sc.max_turn * sc.dt * DETMATH_PI / 180.0;
	for (t = 0; t < sc.steps; t++) {
		flock_to_id_order(&s.flock, before);
		sim_step(&s);
		flock_to_id_order(&s.flock, after);
		for (k = 0; k < n; k++) {
			double dot = 0, a2 = 0, b2 = 0, ang;

			for (d = dims; d < 2 * dims; d++) {
				/* reflect flips a component: compare before the flip */
				double vb = before[d][k], va = after[d][k];
				double pa = after[d - dims][k];

				if (sc.mode == BOUNDS_REFLECT &&
				    (pa <= sc.bmin[d - dims] + 1.0 || pa >= sc.bmax[d - dims] - 1.0))
					goto next;
				dot += vb * va;
				a2 += vb * vb;
				b2 += va * va;
			}
			if (a2 == 0 || b2 == 0)
				continue;
			ang = acos(fmin(1.0, fmax(-1.0, dot / sqrt(a2 * b2))));
			worst = fmax(worst, ang);
next:;
		}
	}
	ck_assert_msg(worst <= limit * (1 + 1e-5) + 1e-6, "case %d: turned %g rad, limit %g",
		      _i, worst, limit);
	ck_assert_msg(worst > limit * 0.5, "case %d: the limit was never reached (%g)", _i, worst);
	for (d = 0; d < 2 * dims; d++) {
		free(before[d]);
		free(after[d]);
	}
	sim_free(&s);
	scenario_free(&sc);
}
END_TEST

START_TEST(test_detmath)
{
	double x, s, c, worst = 0;

	for (x = -4.0; x <= 4.0; x += 1e-3) {
		detmath_sincos(x, &s, &c);
		worst = fmax(worst, fmax(fabs(s - sin(x)), fabs(c - cos(x))));
	}
	ck_assert_msg(worst < 1e-15, "sincos off by %g", worst);
	worst = 0;
	for (x = 1e-300; x < 1e300; x *= 7.77) {
		double l = log(x);

		worst = fmax(worst, fabs(detmath_log(x) - l) / fabs(l));
	}
	ck_assert_msg(worst < 1e-15, "log off by %g relative", worst);
	ck_assert_double_eq(detmath_log(1.0), 0.0);
	/* Box-Muller: 1 and 0.25 give sqrt(0) = 0; 1/e^2 and 0.5 give 2 cos(0) */
	ck_assert_double_eq_tol(detmath_normal(1.0, 0.3), 0.0, 1e-300);
	ck_assert_double_eq_tol(detmath_normal(exp(-2.0), 0.5), 2.0, 1e-14);
}
END_TEST

/* atan2 against the C library's, all round the circle and at every scale,
 * on the axes, the diagonals and next to them. */
/* detmath_fmax and detmath_fmin: b on a tie, with its sign of zero, and
 * the number where the other is a NaN, whatever the C library would give */
START_TEST(test_detmath_fmax)
{
	const double nan = NAN;

	ck_assert(signbit(detmath_fmax(0.0, -0.0)) && !signbit(detmath_fmax(-0.0, 0.0)));
	ck_assert(signbit(detmath_fmin(0.0, -0.0)) && !signbit(detmath_fmin(-0.0, 0.0)));
	ck_assert(signbit(detmath_fmaxf(0.0f, -0.0f)) && !signbit(detmath_fmaxf(-0.0f, 0.0f)));
	ck_assert(detmath_fmax(nan, 1.0) == 1.0 && detmath_fmax(1.0, nan) == 1.0);
	ck_assert(detmath_fmin(nan, 1.0) == 1.0 && detmath_fmin(1.0, nan) == 1.0);
	ck_assert(isnan(detmath_fmax(nan, nan)) && isnan(detmath_fmin(nan, nan)));
	ck_assert(detmath_fmax(-2.0, 3.0) == 3.0 && detmath_fmax(3.0, -2.0) == 3.0);
	ck_assert(detmath_fmin(-2.0, 3.0) == -2.0 && detmath_fmin(3.0, -2.0) == -2.0);
	ck_assert(detmath_fmax(-INFINITY, -1e308) == -1e308 && detmath_fmin(INFINITY, 1e308) == 1e308);
	ck_assert(detmath_fmaxf(nan, 1.0f) == 1.0f && detmath_fmaxf(2.0f, 1.0f) == 2.0f);
}
END_TEST

START_TEST(test_detmath_atan2)
{
	static const double SPECIAL[][2] = {
		{0, 1}, {1, 0}, {0, -1}, {-1, 0}, {1, 1}, {-1, 1}, {1, -1}, {-1, -1},
		{1e-300, 1}, {1, 1e-300}, {-1e-300, -1}, {1e300, -1e-300},
		{1, 0x1.fffffffffffffp-1}, {0x1.fffffffffffffp-1, 1}, {-3, 4}, {4, -3}};
	double worst = 0, a;
	uint32_t r[4];
	size_t i;

	for (i = 0; i < sizeof SPECIAL / sizeof SPECIAL[0]; i++)
		worst = fmax(worst, fabs(detmath_atan2(SPECIAL[i][0], SPECIAL[i][1]) -
					 atan2(SPECIAL[i][0], SPECIAL[i][1])));
	for (i = 0; i < 200000; i++) {
		double scale, x, y;

		rng_draw4(1, RNG_NOISE, 0, (uint32_t)i, 77, r);
		scale = ldexp(1.0, (int)(r[2] % 200) - 100);
		x = (2.0 * rng_unit(r[0], 0) - 1.0) * scale;
		y = (2.0 * rng_unit(r[1], 0) - 1.0) * scale;
		worst = fmax(worst, fabs(detmath_atan2(y, x) - atan2(y, x)));
	}
	ck_assert_msg(worst < 1e-14, "atan2 off by %g", worst);
	for (a = -3.14; a < 3.14; a += 1e-3) {
		double s, c;

		detmath_sincos(a, &s, &c);
		worst = fmax(worst, fabs(detmath_atan2(s, c) - a));
	}
	ck_assert_msg(worst < 1e-14, "atan2(sin a, cos a) off by %g", worst);
	ck_assert(detmath_atan2(0.0, 0.0) == 0.0);
	ck_assert(detmath_atan2(0.0, -1.0) == DETMATH_PI);
	ck_assert(detmath_atan2(-1e-30, -1.0) == -DETMATH_PI);
}
END_TEST

/* detmath_kernels.h as the batch update uses it, on vectors of doubles:
 * every lane has the bits of the scalar functions, at the special points
 * (zeros of both signs, infinities, NaN, subnormals, the diagonal) and on
 * random pairs at every scale. */
/* (Vectors of two lanes, 16 bytes, which every target's ABI passes in
 * registers: the batch update's wider ones would need its instruction
 * sets, and the lanes are independent whatever their number.) */
#define TM_W 2
typedef double tm_vd __attribute__((vector_size(8 * TM_W)));
typedef int64_t tm_vl __attribute__((vector_size(8 * TM_W)));
static inline tm_vd tm_vsqrt(tm_vd x)
{
	int l;

	for (l = 0; l < TM_W; l++)
		x[l] = sqrt(x[l]);
	return x;
}
static inline tm_vd tm_vsel(tm_vl m, tm_vd a, tm_vd b)
{
	return (tm_vd)(((tm_vl)a & m) | ((tm_vl)b & ~m));
}
static inline tm_vd tm_vfloor(tm_vd x)
{
	int l;

	for (l = 0; l < TM_W; l++)
		x[l] = floor(x[l]);
	return x;
}
#define DM_T tm_vd
#define DM_M tm_vl
#define DM_I tm_vl
#define DM_(name) tm_dm_##name
#define DM_SQRT(x) tm_vsqrt(x)
#define DM_ABS(x) ((tm_vd)((tm_vl)(x) & INT64_MAX))
#define DM_SEL(m, a, b) tm_vsel(m, a, b)
#define DM_FLOOR(x) tm_vfloor(x)
#define DM_TARGET
#include "detmath_kernels.h"
#define NZ_T tm_vd
#define NZ_(name) tm_nz_##name
#define NZ_SIN(x) tm_dm_sin(x)
#define NZ_FLOOR(x) tm_vfloor(x)
#define NZ_SEL(m, a, b) tm_vsel(m, a, b)
#define NZ_TARGET
#include "rules_noise.h"

static int same_bits(double a, double b)
{
	return memcmp(&a, &b, sizeof a) == 0;
}

START_TEST(test_detmath_vector_lanes)
{
	static const double V[] = {0.0, -0.0, 1.0, -1.0, 0x1p-1074, -0x1p-1074, 1e-300,
				   3.0, -4.0, 1e300, -1e300, INFINITY, -INFINITY, NAN,
				   0x1.fffffffffffffp-1, 2.5};
	const size_t nv = sizeof V / sizeof V[0];
	uint32_t r[4];
	size_t i, bad = 0, tried = 0;
	int l;

	for (i = 0; i < nv * nv + 100000; i += TM_W) {
		tm_vd y, x, a, s, c, ang;

		for (l = 0; l < TM_W; l++) {
			size_t k = i + (size_t)l;

			if (k < nv * nv) {
				y[l] = V[k / nv];
				x[l] = V[k % nv];
			} else {
				rng_draw4(5, RNG_NOISE, 0, (uint32_t)k, 9, r);
				y[l] = (2.0 * rng_unit(r[0], 0) - 1.0) * ldexp(1.0, (int)(r[2] % 120) - 60);
				x[l] = (2.0 * rng_unit(r[1], 0) - 1.0) * ldexp(1.0, (int)(r[3] % 120) - 60);
			}
			ang[l] = fmod(y[l], 4.0);
			if (!isfinite(ang[l]))
				ang[l] = 0.5;
		}
		a = tm_dm_atan2(y, x);
		tm_dm_sincos(ang, &s, &c);
		for (l = 0; l < TM_W; l++) {
			double ss, cc;

			detmath_sincos(ang[l], &ss, &cc);
			tried++;
			if (!same_bits(a[l], detmath_atan2(y[l], x[l])) || !same_bits(s[l], ss) ||
			    !same_bits(c[l], cc)) {
				if (bad++ < 5)
					fprintf(stderr, "lane %d: atan2(%a, %a) = %a, scalar %a\n", l,
						y[l], x[l], a[l], detmath_atan2(y[l], x[l]));
			}
		}
	}
	ck_assert_msg(bad == 0, "%zu of %zu lanes differ from the scalar functions", bad, tried);
	ck_assert_uint_gt(tried, nv * nv);
}
END_TEST

/* The vector log (its frexp from the bits) and normal deviates against the
 * scalar functions, bit for bit: at the ends of the noise's uniforms
 * (2^-53 and 1), about sqrt(1/2) where the mantissa is doubled, at powers
 * of two, and on random normal numbers of every scale and random uniform
 * pairs. */
START_TEST(test_detmath_vector_log)
{
	static const double V[] = {0x1p-53, 1.0, 0.5, 0x1.fffffffffffffp-1, 0.70710678118654752440,
				   0x1.6a09e667f3bccp-1, 0x1.6a09e667f3bcdp-1, 1.5, 2.0, 0x1p-1022,
				   0x1.fffffffffffffp+1023, 3.0};
	const size_t nv = sizeof V / sizeof V[0];
	uint32_t r[4];
	size_t i, bad = 0, tried = 0;
	int l;

	for (i = 0; i < nv + 200000; i += TM_W) {
		tm_vd x, u1, u2, lg, g;

		for (l = 0; l < TM_W; l++) {
			size_t k = i + (size_t)l;

			rng_draw4(11, RNG_NOISE, 0, (uint32_t)k, 3, r);
			u1[l] = 1.0 - rng_unit(r[0], r[1]);
			u2[l] = rng_unit(r[2], r[3]);
			x[l] = k < nv ? V[k] : k % 2 ? u1[l] :
			       (0.5 + rng_unit(r[1], r[2])) * ldexp(1.0, (int)(r[3] % 2000) - 1000);
		}
		lg = tm_dm_log(x);
		g = tm_dm_normal(u1, u2);
		for (l = 0; l < TM_W; l++) {
			tried++;
			if (!same_bits(lg[l], detmath_log(x[l])) ||
			    !same_bits(g[l], detmath_normal(u1[l], u2[l]))) {
				if (bad++ < 5)
					fprintf(stderr, "lane %d: log(%a) = %a, scalar %a\n", l, x[l],
						lg[l], detmath_log(x[l]));
			}
		}
	}
	ck_assert_msg(bad == 0, "%zu of %zu lanes differ from the scalar functions", bad, tried);
	ck_assert_uint_gt(tried, 200000);
}
END_TEST

/* sin, seed 002's value noise and model inertia's speed factor on vector
 * lanes (rules_noise.h, as model inertia's batch update uses them): the
 * bits of detmath_sin, of rules_noise002 and of the factor's formula with
 * fmin and fmax, at the lattice's integers and their neighbours and at
 * random points over the noise's whole range (its coordinate t / period +
 * 1000 u up to 1e6 + 1000, scenario.c; sin's arguments to 171 times that). */
START_TEST(test_noise002_vector_lanes)
{
	static const double V[] = {0.0, 1.0, 0x1.fffffffffffffp-1, 0x1.0000000000001p+0, 0.5,
				   999.0, 1000.5, 1e6, 1001000.0, 1e-300};
	const size_t nv = sizeof V / sizeof V[0];
	uint32_t r[4];
	size_t i, bad = 0, tried = 0;
	int l;

	for (i = 0; i < nv + 100000; i += TM_W) {
		tm_vd x, a, sn, nz, fc;
		double var[TM_W];

		for (l = 0; l < TM_W; l++) {
			size_t k = i + (size_t)l;

			rng_draw4(17, RNG_NOISE, 0, (uint32_t)k, 5, r);
			x[l] = k < nv ? V[k] :
			       k % 3 ? rng_unit(r[0], r[1]) * 1001000.0 : rng_unit(r[0], r[1]) * 1000.0;
			a[l] = 171.0 * x[l] + (double)(r[2] % 172);
			var[l] = k % 2 ? 1.0 : rng_unit(r[2], r[3]);
		}
		sn = tm_dm_sin(a);
		nz = tm_nz_noise002(x);
		for (l = 0; l < TM_W; l++) {
			double nu = fmin(1.0, fmax(-1.0, rules_noise002(x[l]))) * 2.0 - 1.0;
			const tm_vd xl = (tm_vd){0} + x[l];

			fc = tm_nz_inertia_factor(xl, var[l]);
			tried++;
			if (!same_bits(sn[l], detmath_sin(a[l])) ||
			    !same_bits(nz[l], rules_noise002(x[l])) ||
			    !same_bits(fc[0], 1.0 + nu * var[l])) {
				if (bad++ < 5)
					fprintf(stderr, "lane %d: x %a: noise %a, scalar %a\n", l, x[l],
						nz[l], rules_noise002(x[l]));
			}
		}
	}
	ck_assert_msg(bad == 0, "%zu of %zu lanes differ from the scalar functions", bad, tried);
	ck_assert_uint_gt(tried, 100000);
}
END_TEST

/* Metrics of configurations whose values are known by construction. */
START_TEST(test_metrics_known)
{
	struct scenario sc;
	struct sim s;
	struct metrics m;
	struct metrics_row row;
	struct util_err err;
	size_t k, n = 64;
	int d;

	/* A ring of 64 boids around (50, 50), radius 10, all turning the same
	 * way: milling 1, polarization 0, gyration 10; nearest neighbour at
	 * 2 r sin(pi/64); one group (the largest radius is 3). */
	load_ok("{\"count\": 64, \"steps\": 1, \"bounds\": {\"min\": [0, 0], \"max\": [100, 100]}}",
		&sc);
	ck_assert_int_eq(sim_init(&s, &sc, SIM_GRID, &test_ctx, &err), 0);
	ck_assert_int_eq(metrics_init(&m, n, &err), 0);
	for (k = 0; k < n; k++) {
		double a = 2 * DETMATH_PI * (double)k / n;

		s.flock.pos[0][k] = (float)(50 + 10 * cos(a));
		s.flock.pos[1][k] = (float)(50 + 10 * sin(a));
		s.flock.vel[0][k] = (float)(-sin(a));
		s.flock.vel[1][k] = (float)(cos(a));
	}
	sim_measure(&s, &m, &row);
	ck_assert_double_eq_tol(row.milling, 1.0, 1e-6);
	ck_assert_double_eq_tol(row.polarization, 0.0, 1e-6);
	ck_assert_double_eq_tol(row.gyration, 10.0, 1e-4);
	ck_assert_double_eq_tol(row.centroid[0], 50.0, 1e-4);
	ck_assert_double_eq_tol(row.nn_distance, 20 * sin(DETMATH_PI / 64), 1e-4);
	ck_assert_uint_eq(row.groups, 1);
	ck_assert_double_eq_tol(row.mean_speed, 1.0, 1e-6);
	/* Two clusters across the wrapped edge x = 0/100: under wrap the
	 * centroid is at the edge, not mid-box, and they are two groups when
	 * 20 apart in y. */
	for (k = 0; k < n; k++) {
		s.flock.pos[0][k] = k % 2 ? 99.5f : 0.5f;
		s.flock.pos[1][k] = k < n / 2 ? 30.0f + 0.01f * k : 50.0f + 0.01f * k;
		for (d = 0; d < 2; d++)
			s.flock.vel[d][k] = d == 0 ? 1.0f : 0.0f;
	}
	sim_measure(&s, &m, &row);
	ck_assert_msg(fabs(row.centroid[0] - 100.0) < 1e-3 || fabs(row.centroid[0]) < 1e-3,
		      "centroid x %g is not at the wrapped edge", row.centroid[0]);
	ck_assert_uint_eq(row.groups, 2);
	ck_assert_double_eq_tol(row.polarization, 1.0, 1e-12);
	metrics_free(&m);
	sim_free(&s);
	scenario_free(&sc);
	/* A lone boid under wrap sits at its circular mean but for rounding
	 * (about 1e-15): no offset, so no milling, wherever it is. */
	load_ok("{\"count\": 1, \"steps\": 1, \"bounds\": {\"min\": [0, 0], \"max\": [10, 10]}}",
		&sc);
	ck_assert_int_eq(sim_init(&s, &sc, SIM_GRID, &test_ctx, &err), 0);
	ck_assert_int_eq(metrics_init(&m, 1, &err), 0);
	for (k = 0; k < 50; k++) {
		s.flock.pos[0][0] = (float)(0.173 * (double)k + 0.01);
		s.flock.pos[1][0] = (float)(9.9 - 0.191 * (double)k);
		s.flock.vel[0][0] = 0.3f;
		s.flock.vel[1][0] = -0.7f;
		sim_measure(&s, &m, &row);
		ck_assert_msg(row.milling == 0.0, "a lone boid at (%g, %g) mills %g",
			      (double)s.flock.pos[0][0], (double)s.flock.pos[1][0], row.milling);
	}
	metrics_free(&m);
	sim_free(&s);
	scenario_free(&sc);
	/* No boid at all (a schedule disabled them): every mean "nan", 0
	 * groups, in 2D and 3D, with a hue */
	for (d = 2; d <= 3; d++) {
		char json[300], line[200];
		FILE *fp = tmpfile();

		snprintf(json, sizeof json,
			 "{\"dimensions\": %d, \"count\": 30, \"steps\": 3, \"hue\": {},"
			 " \"bounds\": {\"min\": [0, 0%s], \"max\": [10, 10%s]},"
			 " \"population\": [{\"step\": 1, \"disable\": 30}]}", d,
			 d == 3 ? ", 0" : "", d == 3 ? ", 10" : "");
		load_ok(json, &sc);
		ck_assert_int_eq(sim_init(&s, &sc, SIM_GRID, &test_ctx, &err), 0);
		ck_assert_int_eq(metrics_init(&m, 30, &err), 0);
		sim_step(&s);
		sim_step(&s);
		ck_assert_uint_eq(s.flock.n, 0);
		sim_measure(&s, &m, &row);
		ck_assert(isnan(row.polarization) && isnan(row.nn_distance) &&
			  isnan(row.centroid[0]) && isnan(row.hue_order));
		ck_assert_uint_eq(row.groups, 0);
		ck_assert_ptr_nonnull(fp);
		ck_assert_int_eq(metrics_write_row(fp, d, 2, 0.5, &row), 0);
		rewind(fp);
		ck_assert_ptr_nonnull(fgets(line, sizeof line, fp));
		ck_assert_str_eq(line, d == 2 ? "2,1,nan,nan,nan,nan,nan,nan,nan,0,nan\n"
					      : "2,1,nan,nan,nan,nan,nan,nan,nan,nan,0,nan\n");
		fclose(fp);
		metrics_free(&m);
		sim_free(&s);
		scenario_free(&sc);
	}
}
END_TEST

/* Keys a model ignores are reported, once each. */
START_TEST(test_unused_keys_noted)
{
	struct scenario sc;

	load_ok("{\"model\": \"vicsek\", \"count\": 2, \"steps\": 1, \"max_force\": 1,"
		"\"weights\": {\"cohesion\": 2}, \"noise\": 1,"
		"\"bounds\": {\"min\": [0, 0], \"max\": [10, 10]}}", &sc);
	ck_assert_int_eq(sc.n_notes, 2);
	ck_assert_str_eq(sc.notes[0], "t.json: weights: not used by model vicsek");
	ck_assert_str_eq(sc.notes[1], "t.json: max_force: not used by model vicsek");
	scenario_free(&sc);
	load_ok("{\"count\": 2, \"steps\": 1, \"noise\": 1,"
		"\"bounds\": {\"min\": [0, 0], \"max\": [10, 10]}}", &sc);
	ck_assert_int_eq(sc.n_notes, 1);
	ck_assert_str_eq(sc.notes[0], "t.json: noise: not used by model reynolds");
	scenario_free(&sc);
}
END_TEST

/* The update rules as the papers and boidsim-scenario(5) state them, one
 * boid at a time with known neighbours (the scalar update; check_rules
 * holds the batches to its bits). The statistical tests above pass many a
 * wrong model; these pin the formulas. */

/* The angle from unit a to b in 2D, in (-pi, pi]. */
static double angle2(const float a[3], const float b[3])
{
	return atan2((double)a[0] * b[1] - (double)a[1] * b[0],
		     (double)a[0] * b[0] + (double)a[1] * b[1]);
}

/* Vicsek: the new heading is the mean of the unit headings within r, the
 * boid itself included; the particle moves with its old velocity,
 * x(t+1) = x(t) + v(t) dt (eq. 1 as boidsim reads it), or with move_with
 * "new_velocity" (_i 1) with the new one, x(t+1) = x(t) + v(t+1) dt
 * (Gregoire and Chate's order); the speed is v. */
START_TEST(test_vicsek_rule)
{
	static const char *const MOVE[2] = {"old_velocity", "new_velocity"};
	struct scenario sc;
	struct rules_params rp;
	struct rules_acc a;
	float pos[3] = {5, 5, 0}, vel[3] = {0.5f, 0, 0}, po[3], vo[3];
	float d[3] = {0.3f, 0.4f, 0}, vj[3] = {0, 0.5f, 0};
	const double h = sqrt(0.5);
	char json[400];

	snprintf(json, sizeof json,
		 "{\"model\": \"vicsek\", \"count\": 2, \"steps\": 1, \"dt\": 2, \"noise\": 0,"
		 "\"move_with\": \"%s\", \"radii\": {\"alignment\": 1}, \"speed\": {\"max\": 0.5},"
		 "\"bounds\": {\"min\": [0, 0], \"max\": [10, 10], \"mode\": \"wrap\"}}", MOVE[_i]);
	load_ok(json, &sc);
	rules_params_init(&rp, &sc);
	rules_acc_init(&a);
	rules_acc_add(&a, &rp, d, 0.25f, vj, vel, 0.25f);
	ck_assert_uint_eq(a.n_ali, 1);
	rules_update(&rp, &a, 0, 0, pos, vel, po, vo);
	/* (1, 0) and (0, 1): the mean heading is the bisector, not (0, 1) */
	ck_assert_float_eq_tol(vo[0], 0.5 * h, 1e-6);
	ck_assert_float_eq_tol(vo[1], 0.5 * h, 1e-6);
	if (_i == 0) {
		/* moved with the old velocity (0.5, 0) for dt 2, not the new one */
		ck_assert_float_eq_tol(po[0], 6.0f, 1e-6f);
		ck_assert_float_eq_tol(po[1], 5.0f, 1e-6f);
	} else {
		ck_assert_float_eq_tol(po[0], 5.0 + 2 * 0.5 * h, 1e-6);
		ck_assert_float_eq_tol(po[1], 5.0 + 2 * 0.5 * h, 1e-6);
	}
	/* a neighbour just beyond r is not counted */
	rules_acc_init(&a);
	d[0] = 0.6f;
	d[1] = 0.81f;
	rules_acc_add(&a, &rp, d, d[0] * d[0] + d[1] * d[1], vj, vel, 0.25f);
	ck_assert_uint_eq(a.n_ali, 0);
	scenario_free(&sc);
}
END_TEST

/* Vicsek's noise: a lone particle turns by an angle uniform in
 * [-eta/2, eta/2]: never beyond eta/2, both ends reached, mean 0 and mean
 * square eta^2/12 (to 3 %; 40,000 draws give about 0.4 %). */
START_TEST(test_vicsek_noise_uniform)
{
	struct scenario sc;
	struct rules_params rp;
	struct rules_acc a;
	float pos[3] = {5, 5, 0}, vel[3] = {0.03f, 0, 0}, po[3], vo[3], u[3] = {1, 0, 0};
	const double eta = 2.0;
	double lo = 0, hi = 0, sum = 0, sum2 = 0, t;
	uint32_t id;
	uint64_t step;
	int n = 0;

	load_ok("{\"model\": \"vicsek\", \"count\": 2, \"steps\": 1, \"noise\": 2,"
		"\"radii\": {\"alignment\": 1}, \"speed\": {\"max\": 0.03},"
		"\"bounds\": {\"min\": [0, 0], \"max\": [10, 10], \"mode\": \"wrap\"}}", &sc);
	rules_params_init(&rp, &sc);
	rules_acc_init(&a);
	for (id = 0; id < 200; id++)
		for (step = 0; step < 200; step++) {
			rules_update(&rp, &a, id, step, pos, vel, po, vo);
			vo[0] /= 0.03f;
			vo[1] /= 0.03f;
			t = angle2(u, vo);
			lo = t < lo ? t : lo;
			hi = t > hi ? t : hi;
			sum += t;
			sum2 += t * t;
			n++;
		}
	ck_assert_msg(lo >= -eta / 2 - 1e-6 && hi <= eta / 2 + 1e-6,
		      "turns from %g to %g, beyond +-eta/2 = %g", lo, hi, eta / 2);
	ck_assert_msg(lo < -0.99 * eta / 2 && hi > 0.99 * eta / 2,
		      "turns only from %g to %g", lo, hi);
	ck_assert_msg(fabs(sum / n) < 0.01, "mean turn %g", sum / n);
	ck_assert_msg(fabs(sum2 / n / (eta * eta / 12) - 1) < 0.03,
		      "mean square turn %g, not eta^2/12 = %g", sum2 / n, eta * eta / 12);
	scenario_free(&sc);
}
END_TEST

/* Couzin's zones (noise 0, no turn limit, the paper's alpha = 270):
 * repulsion has priority; orientation alone gives the neighbours' mean
 * heading (the boid itself excluded, as boidsim-scenario(5) says); with
 * both, the mean of the two unit directions; a neighbour in the blind
 * cone behind is not seen; the individual moves with its new velocity. */
START_TEST(test_couzin_rule)
{
	struct scenario sc;
	struct rules_params rp;
	struct rules_acc a;
	float pos[3] = {0, 0, 0}, vel[3] = {3, 0, 0}, po[3], vo[3];
	float rep[3] = {0.3f, 0.4f, 0}, ori[3] = {1.2f, 1.6f, 0}, att1[3] = {6, 0, 0};
	float att2[3] = {8, 0, 0}, back[3] = {-8, 0.5f, 0}, up[3] = {0, 3, 0};
	const double h = sqrt(0.5);

	load_ok("{\"model\": \"couzin\", \"count\": 2, \"steps\": 1, \"dt\": 0.1, \"noise\": 0,"
		"\"view_angle\": 270, \"speed\": {\"max\": 3},"
		"\"radii\": {\"separation\": 1, \"alignment\": 3, \"cohesion\": 15},"
		"\"bounds\": {\"min\": [0, 0], \"max\": [8, 8], \"mode\": \"none\"}}", &sc);
	rules_params_init(&rp, &sc);
	/* orientation only: the neighbour's heading (0, 1) */
	rules_acc_init(&a);
	rules_acc_add(&a, &rp, ori, 4.0f, up, vel, 9.0f);
	rules_update(&rp, &a, 0, 0, pos, vel, po, vo);
	ck_assert_float_eq_tol(vo[0], 0.0f, 1e-6f);
	ck_assert_float_eq_tol(vo[1], 3.0f, 1e-6f);
	/* the new velocity moves it: (0, 3) dt */
	ck_assert_float_eq_tol(po[0], 0.0f, 1e-6f);
	ck_assert_float_eq_tol(po[1], 0.3f, 1e-6f);
	/* and two in the zone of attraction along x: d_a/|d_a| = (1, 0),
	 * d = ((0, 1) + (1, 0))/2 whatever their number */
	rules_acc_add(&a, &rp, att1, 36.0f, vel, vel, 9.0f);
	rules_acc_add(&a, &rp, att2, 64.0f, vel, vel, 9.0f);
	/* one behind, in the blind cone of 90 degrees, is not seen */
	rules_acc_add(&a, &rp, back, 64.25f, up, vel, 9.0f);
	ck_assert_uint_eq(a.n_ali, 1);
	ck_assert_uint_eq(a.n_coh, 2);
	rules_update(&rp, &a, 0, 0, pos, vel, po, vo);
	ck_assert_float_eq_tol(vo[0], 3 * h, 1e-5);
	ck_assert_float_eq_tol(vo[1], 3 * h, 1e-5);
	/* one in the zone of repulsion: away from it, the others ignored */
	rules_acc_add(&a, &rp, rep, 0.25f, up, vel, 9.0f);
	rules_update(&rp, &a, 0, 0, pos, vel, po, vo);
	ck_assert_float_eq_tol(vo[0], -3 * 0.6, 1e-5);
	ck_assert_float_eq_tol(vo[1], -3 * 0.8, 1e-5);
	scenario_free(&sc);
	/* the turn limit: theta tau = 40 degrees/s x 0.1 s toward (0, 1) */
	load_ok("{\"model\": \"couzin\", \"count\": 2, \"steps\": 1, \"dt\": 0.1, \"noise\": 0,"
		"\"view_angle\": 270, \"max_turn\": 40, \"speed\": {\"max\": 3},"
		"\"radii\": {\"separation\": 1, \"alignment\": 3, \"cohesion\": 15},"
		"\"bounds\": {\"min\": [0, 0], \"max\": [8, 8], \"mode\": \"none\"}}", &sc);
	rules_params_init(&rp, &sc);
	rules_acc_init(&a);
	rules_acc_add(&a, &rp, ori, 4.0f, up, vel, 9.0f);
	rules_update(&rp, &a, 0, 0, pos, vel, po, vo);
	ck_assert_float_eq_tol(atan2(vo[1], vo[0]), 4.0 * DETMATH_PI / 180.0, 1e-6);
	ck_assert_float_eq_tol(hypot(vo[0], vo[1]), 3.0, 1e-5);
	scenario_free(&sc);
}
END_TEST

Suite *models_suite(void)
{
	Suite *s = suite_create("models");
	TCase *tc = tcase_create("models");

	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_vicsek_order_disorder);
	tcase_add_test(tc, test_vicsek_3d);
	tcase_add_test(tc, test_couzin_phases);
	tcase_add_loop_test(tc, test_vicsek_rule, 0, 2);
	tcase_add_test(tc, test_vicsek_noise_uniform);
	tcase_add_test(tc, test_couzin_rule);
	tcase_add_test(tc, test_simple_model_terms);
	tcase_add_test(tc, test_field_of_view);
	tcase_add_loop_test(tc, test_turn_limit, 0, 3);
	tcase_add_test(tc, test_detmath);
	tcase_add_test(tc, test_detmath_atan2);
	tcase_add_test(tc, test_detmath_fmax);
	tcase_add_test(tc, test_detmath_vector_lanes);
	tcase_add_test(tc, test_detmath_vector_log);
	tcase_add_test(tc, test_noise002_vector_lanes);
	tcase_add_test(tc, test_metrics_known);
	tcase_add_test(tc, test_unused_keys_noted);
	suite_add_tcase(s, tc);
	return s;
}
