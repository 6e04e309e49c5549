/* rules_batch.h: the batch update (rules_update_batch_*, rules.h),
 * written once and included by rules.c once per instruction set: RB_TARGET
 * is the target attribute every function here is compiled for, and
 * RB_(name) the name of this instance's copy. The helpers carry the target
 * too, not only the function they are inlined into: gcc splits vector
 * operations wider than a function's own instruction set into pieces
 * before inlining it, and the comparisons of the selects came out as a
 * scalar compare and insert a lane (measured: this update took 40% of a
 * 2D 1M step's neighbours and update, a third less with the target). RB_W is
 * the lanes of its vectors, one boid each: 8 binary64 in a 512-bit
 * register, 4 in a 256-bit one, for gcc splits wider vectors into pieces
 * in the AVX2 copy (measured: with 8 lanes it had 524 scalar compares and
 * took 36% of a 2D 1M step's time, against 23% for AVX-512's). */

#if RULES_BATCH % RB_W != 0
#error "RB_W must divide RULES_BATCH"
#endif
typedef double RB_(vd) __attribute__((vector_size(8 * RB_W)));
typedef int64_t RB_(vl) __attribute__((vector_size(8 * RB_W)));
typedef float RB_(vfb) __attribute__((vector_size(4 * RB_W)));
typedef int32_t RB_(vib) __attribute__((vector_size(4 * RB_W)));

RB_TARGET static inline __attribute__((always_inline)) RB_(vd)
RB_(vsel)(RB_(vl) m, RB_(vd) a, RB_(vd) b)
{
	return (RB_(vd))(((RB_(vl))a & m) | ((RB_(vl))b & ~m));
}

RB_TARGET static inline __attribute__((always_inline)) RB_(vd) RB_(vsqrt)(RB_(vd) x)
{
	RB_(vd) r;
	int l;

	for (l = 0; l < RB_W; l++)
		r[l] = sqrt(x[l]);
	return r;
}

/* One binary64 vector from RB_W boids' values: lane l from acc[l] (or
 * from slot k + l), the last real one repeated past nb. Built in a vector
 * of its own and returned: written lane by lane into an array of vectors
 * (des[d][l]), gcc kept the array on the stack, and each vector was
 * reloaded whole just after its lanes were stored one by one, a load that
 * store forwarding cannot serve (docs/PERFORMANCE.md). Unrolled, or gcc
 * keeps RB_W = 8 lanes a loop through the stack all the same. */
#ifndef RB_UNROLL
#define RB_UNROLL _Pragma("GCC unroll 8")
#endif
RB_TARGET static inline __attribute__((always_inline)) RB_(vd)
RB_(acc_f)(const struct rules_acc acc[RB_W], int nb, size_t off)
{
	RB_(vfb) r;
	float x; /* a vector's element has no address in clang */
	int l;

	RB_UNROLL
	for (l = 0; l < RB_W; l++) {
		memcpy(&x, (const char *)&acc[l < nb ? l : nb - 1] + off, sizeof x);
		r[l] = x;
	}
	return __builtin_convertvector(r, RB_(vd));
}

/* A count, uint32: converted as int32 after a bias of 2^31, which binary64
 * then adds back, exactly (a vector conversion in place of one a lane). */
RB_TARGET static inline __attribute__((always_inline)) RB_(vd)
RB_(acc_n)(const struct rules_acc acc[RB_W], int nb, size_t off)
{
	RB_(vib) r;
	uint32_t c;
	int l;

	RB_UNROLL
	for (l = 0; l < RB_W; l++) {
		memcpy(&c, (const char *)&acc[l < nb ? l : nb - 1] + off, sizeof c);
		r[l] = (int32_t)(c ^ 0x80000000u);
	}
	return __builtin_convertvector(r, RB_(vd)) + 2147483648.0;
}

RB_TARGET static inline __attribute__((always_inline)) RB_(vd)
RB_(slots)(const float *x, int nb, size_t k)
{
	RB_(vfb) r;
	int l;

	RB_UNROLL
	for (l = 0; l < RB_W; l++)
		r[l] = x[k + (size_t)(l < nb ? l : nb - 1)];
	return __builtin_convertvector(r, RB_(vd));
}

#define RB_ACC(field) offsetof(struct rules_acc, field)

RB_TARGET static inline __attribute__((always_inline)) RB_(vd) RB_(vabs)(RB_(vd) x)
{
	return (RB_(vd))((RB_(vl))x & INT64_MAX);
}

/* floor: exact, so any instruction gives the scalar's bits; one
 * rounding of the whole vector (lane by lane, gcc rounded each lane on its
 * own, with its extract and insert) */
RB_TARGET static inline __attribute__((always_inline)) RB_(vd) RB_(vfloor)(RB_(vd) x)
{
#if RB_W == 8
	return (RB_(vd))_mm512_roundscale_pd((__m512d)x, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
#elif RB_W == 4
	return (RB_(vd))_mm256_round_pd((__m256d)x, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
#else
#error "RB_W: 8 or 4 lanes"
#endif
}

/* detmath's sincos, sin, atan2, log and normal deviates on RB_W lanes,
 * each the scalar's bits */
#define DM_T RB_(vd)
#define DM_M RB_(vl)
#define DM_I RB_(vl)
#define DM_(name) RB_(dm_##name)
#define DM_SQRT(x) RB_(vsqrt)(x)
#define DM_ABS(x) RB_(vabs)(x)
#define DM_SEL(m, a, b) RB_(vsel)(m, a, b)
#define DM_FLOOR(x) RB_(vfloor)(x)
#define DM_TARGET RB_TARGET
#include "detmath_kernels.h"
#undef DM_T
#undef DM_M
#undef DM_I
#undef DM_
#undef DM_SQRT
#undef DM_ABS
#undef DM_SEL
#undef DM_FLOOR
#undef DM_TARGET

/* seed 002's value noise and model inertia's speed factor on RB_W lanes */
#define NZ_T RB_(vd)
#define NZ_(name) RB_(nz_##name)
#define NZ_SIN(x) RB_(dm_sin)(x)
#define NZ_FLOOR(x) RB_(vfloor)(x)
#define NZ_SEL(m, a, b) RB_(vsel)(m, a, b)
#define NZ_TARGET RB_TARGET
#include "rules_noise.h"

/* The batch's new positions and velocities along axis d into slots k ..
 * k+nb-1, as integrate_finish does without obstacles (bounds_apply):
 * positions wrapped under wrap (bounds_wrap1), reflected under reflect
 * (bounds_reflect1, which reverses the velocity too), else rounded. Under
 * wrap the lanes inside the box, nearly all, take bounds_wrap1's own path
 * for them in vectors (round, then the far wall to the near one): its call
 * a lane and axis was a quarter of this update's time. Under reflect they
 * are left alone, and the few outside call bounds_reflect1. */
RB_TARGET static inline __attribute__((always_inline)) void
RB_(store_batch)(const struct rules_params *p, int d, RB_(vd) xn, RB_(vfb) vf, int nb, size_t k,
	    float *const pos_out[3], float *const vel_out[3])
{
	const struct bounds *b = &p->ip.box;
	RB_(vfb) x = __builtin_convertvector(xn, RB_(vfb));
	int l;

	if (b->mode == BOUNDS_WRAP) {
		const RB_(vl) out = (xn < b->lo[d]) | (xn >= b->hi[d]);
		const RB_(vib) wall = (x >= b->hi_f[d]) | (x < b->lo_f[d]);
		RB_(vfb) lo;
		int64_t any = 0;

		for (l = 0; l < RB_W; l++) {
			lo[l] = b->lo_f[d];
			any |= out[l];
		}
		x = (RB_(vfb))(((RB_(vib))x & ~wall) | ((RB_(vib))lo & wall));
		for (l = 0; any && l < nb; l++)
			if (out[l])
				x[l] = bounds_wrap1(b, d, xn[l]);
	} else if (b->mode == BOUNDS_REFLECT) {
		const RB_(vl) out = (xn < b->lo[d]) | (xn > b->hi[d]);
		int64_t any = 0;

		for (l = 0; l < RB_W; l++)
			any |= out[l];
		for (l = 0; any && l < nb; l++)
			if (out[l]) {
				double xl = xn[l];
				float vl = vf[l];

				bounds_reflect1(b, d, &xl, &vl);
				x[l] = (float)xl;
				vf[l] = vl;
			}
	}
	if (nb == RB_W) {
		memcpy(pos_out[d] + k, &x, sizeof x);
		memcpy(vel_out[d] + k, &vf, sizeof vf);
		return;
	}
	for (l = 0; l < nb; l++) {
		pos_out[d][k + (size_t)l] = x[l];
		vel_out[d][k + (size_t)l] = vf[l];
	}
}

/* integrate_finish with obstacles, lane by lane: the collisions and
 * the push out of an obstacle are searches of the obstacle index per boid
 * (a bounce can lead into another obstacle), left to the scalar code,
 * which then does the bounds as store_batch would. */
RB_TARGET static inline __attribute__((always_inline)) void
RB_(finish_lanes)(const struct rules_params *p, const RB_(vd) xn[3], const RB_(vfb) vf[3],
		  int nb, size_t k, const float *const pos[3], float *const pos_out[3],
		  float *const vel_out[3], const int dims)
{
	int l, d;

	for (l = 0; l < nb; l++) {
		float x[3] = {0, 0, 0}, v[3] = {0, 0, 0};
		double xl[3] = {0, 0, 0};

		for (d = 0; d < dims; d++) {
			x[d] = pos[d][k + (size_t)l];
			xl[d] = xn[d][l];
			v[d] = vf[d][l];
		}
		integrate_finish(&p->ip, x, xl, v);
		for (d = 0; d < dims; d++) {
			pos_out[d][k + (size_t)l] = (float)xl[d];
			vel_out[d][k + (size_t)l] = v[d];
		}
	}
}

/* The batch's new positions xn (binary64) and velocities vf on every
 * axis: integrate_finish, in vectors without obstacles (store_batch,
 * axis by axis), else lane by lane (finish_lanes). */
RB_TARGET static inline __attribute__((always_inline)) void
RB_(store_all)(const struct rules_params *p, const RB_(vd) xn[3], const RB_(vfb) vf[3], int nb,
	       size_t k, const float *const pos[3], float *const pos_out[3],
	       float *const vel_out[3], const int dims)
{
	int d;

	if (p->ip.n_obstacles > 0) {
		RB_(finish_lanes)(p, xn, vf, nb, k, pos, pos_out, vel_out, dims);
		return;
	}
	for (d = 0; d < dims; d++)
		RB_(store_batch)(p, d, xn[d], vf[d], nb, k, pos_out, vel_out);
}

/* The batch's move (its new velocity, binary64) on every axis: the
 * velocity stored in binary32, the position advanced by move dt from
 * binary64 (finish_heading). */
RB_TARGET static inline __attribute__((always_inline)) void
RB_(move_all)(const struct rules_params *p, const RB_(vd) move[3], int nb, size_t k,
	      const float *const pos[3], float *const pos_out[3], float *const vel_out[3],
	      const int dims)
{
	RB_(vfb) vf[3];
	RB_(vd) xn[3];
	int d;

	for (d = 0; d < dims; d++) {
		vf[d] = __builtin_convertvector(move[d], RB_(vfb));
		xn[d] = RB_(slots)(pos[d], nb, k) + move[d] * p->ip.dt;
	}
	RB_(store_all)(p, xn, vf, nb, k, pos, pos_out, vel_out, dims);
}

/* rng_unit of the first two words of each lane's draw (seed, purpose,
 * index, the lane's boid, step), and of the last two where u23 is given:
 * the draws in one loop over the lanes that the compiler turns into
 * vector instructions (rng_draw4 is inline integer arithmetic: the same
 * words either way), the 53 bits to binary64 exactly. */
RB_TARGET static inline __attribute__((always_inline)) void
RB_(unit_lanes)(const struct rules_params *p, enum rng_purpose purpose, uint32_t index, int nb,
		size_t k, const uint32_t *id, uint64_t step, RB_(vd) *u01, RB_(vd) *u23)
{
	const uint64_t M = (UINT64_C(1) << 53) - 1;
	uint64_t b01[RB_W], b23[RB_W];
	int l;

#pragma omp simd
	for (l = 0; l < RB_W; l++) {
		uint32_t r[4];

		rng_draw4(p->seed, purpose, index, id[k + (size_t)(l < nb ? l : nb - 1)], step, r);
		b01[l] = (((uint64_t)r[0] << 21) ^ (uint64_t)(r[1] >> 11)) & M;
		b23[l] = (((uint64_t)r[2] << 21) ^ (uint64_t)(r[3] >> 11)) & M;
	}
	*u01 = (RB_(vd)){0};
	for (l = 0; l < RB_W; l++)
		(*u01)[l] = (double)b01[l] * 0x1p-53;
	if (u23 != NULL) {
		*u23 = (RB_(vd)){0};
		for (l = 0; l < RB_W; l++)
			(*u23)[l] = (double)b23[l] * 0x1p-53;
	}
}

/* rules_cruise on the lanes: each boid's own speed.max under speed
 * variation or speed noise, its operations in its order (the noise's
 * lattice point k is the same for every boid), else speed.max on every
 * lane. */
RB_TARGET static inline __attribute__((always_inline)) RB_(vd)
RB_(cruise_batch)(const struct rules_params *p, int nb, size_t k, const uint32_t *id,
		  uint64_t step)
{
	const RB_(vd) zero = {0};
	RB_(vd) s = zero + p->speed_max, u, v0, v1;

	if (p->uniform_speed)
		return s;
	if (p->speed_variation > 0.0) {
		RB_(unit_lanes)(p, RNG_SPEED_VARIATION, 0, nb, k, id, 0, &u, NULL);
		s *= 1.0 - p->speed_variation * u;
	}
	if (p->speed_noise_amp > 0.0) {
		const double t = (double)step * p->ip.dt / p->speed_noise_period, kt = floor(t);

		RB_(unit_lanes)(p, RNG_SPEED_NOISE, 0, nb, k, id, (uint64_t)kt, &v0, NULL);
		RB_(unit_lanes)(p, RNG_SPEED_NOISE, 0, nb, k, id, (uint64_t)kt + 1, &v1, NULL);
		v0 = 2.0 * v0 - 1.0;
		v1 = 2.0 * v1 - 1.0;
		u = v0 + (t - kt) * (v1 - v0);
		s *= 1.0 - p->speed_noise_amp * (u + 1.0) / 2.0;
	}
	return RB_(vsel)(s < p->ip.speed_min, zero + p->ip.speed_min, s);
}

/* acc += w steer(desired) where on (add_rule, rules_steer). */
RB_TARGET static inline __attribute__((always_inline)) void
RB_(steer_batch)(const struct rules_params *p, int dims, double w, RB_(vl) on,
       const RB_(vd) desired[3], const RB_(vd) vel[3], RB_(vd) smax, RB_(vd) acc[3])
{
	const RB_(vd) zero = {0};
	RB_(vd) len2 = zero, f2 = zero, f[3], s, t;
	RB_(vl) some, big;
	int k;

	if (w == 0.0)
		return;
	for (k = 0; k < dims; k++)
		len2 += desired[k] * desired[k];
	some = len2 > 0.0;
	s = smax / RB_(vsqrt)(len2);
	for (k = 0; k < dims; k++) {
		f[k] = desired[k] * s - vel[k];
		f2 += f[k] * f[k];
	}
	big = f2 > p->max_force * p->max_force;
	t = p->max_force / RB_(vsqrt)(f2);
	for (k = 0; k < dims; k++) {
		f[k] = RB_(vsel)(big, f[k] * t, f[k]);
		f[k] = RB_(vsel)(some, f[k], zero);
		acc[k] = RB_(vsel)(on, acc[k] + w * f[k], acc[k]);
	}
}

/* The inputs of the velocity models' batches: the boids' velocities and
 * positions, the accelerations cleared, the three counts. Lanes past nb
 * repeat the last boid and are not stored; the arrays' members past dims
 * are never read, and left unset (set, gcc 12 kept the arrays in memory
 * and cleared them with rep stos: 3% of the AVX2 update). */
RB_TARGET static inline __attribute__((always_inline)) void
RB_(batch_inputs)(const struct rules_acc acc[RB_W], int nb, size_t k,
		  const float *const pos[3], const float *const vel[3], RB_(vd) v0[3],
		  RB_(vd) x0[3], RB_(vd) a[3], RB_(vd) *nsep, RB_(vd) *nali, RB_(vd) *ncoh,
		  const int dims)
{
	const RB_(vd) zero = {0};
	int d;

	for (d = 0; d < dims; d++) {
		a[d] = zero;
		v0[d] = RB_(slots)(vel[d], nb, k);
		x0[d] = RB_(slots)(pos[d], nb, k);
	}
	*nsep = RB_(acc_n)(acc, nb, RB_ACC(n_sep));
	*nali = RB_(acc_n)(acc, nb, RB_ACC(n_ali));
	*ncoh = RB_(acc_n)(acc, nb, RB_ACC(n_coh));
}

/* normalize (rules.c) on RB_W lanes: v/|v| as v (1/|v|), v kept where 0 */
RB_TARGET static inline __attribute__((always_inline)) void
RB_(normalize_batch)(RB_(vd) v[3], const int dims)
{
	const RB_(vd) zero = {0};
	RB_(vd) n2 = zero, inv;
	int k;

	for (k = 0; k < dims; k++)
		n2 += v[k] * v[k];
	inv = 1.0 / RB_(vsqrt)(n2);
	for (k = 0; k < dims; k++)
		v[k] = RB_(vsel)(n2 > 0.0, v[k] * inv, v[k]);
}

/* perpendicular (rules.c) on RB_W lanes: a unit vector perpendicular to
 * unit u; in 3D by Gram-Schmidt against the axis least aligned with u. */
RB_TARGET static inline __attribute__((always_inline)) void
RB_(perpendicular_batch)(const RB_(vd) u[3], RB_(vd) e[3], const int dims)
{
	RB_(vl) x_low;

	if (dims == 2) {
		e[0] = -u[1];
		e[1] = u[0];
		return;
	}
	x_low = RB_(vabs)(u[0]) < 0.9;
	e[0] = RB_(vsel)(x_low, 1.0 - u[0] * u[0], -u[1] * u[0]);
	e[1] = RB_(vsel)(x_low, -u[0] * u[1], 1.0 - u[1] * u[1]);
	e[2] = RB_(vsel)(x_low, -u[0] * u[2], -u[1] * u[2]);
	RB_(normalize_batch)(e, 3);
}

/* rules_turn_limit (rules.c) on RB_W lanes, with max_turn dt's cosine and
 * sine: unit u turned toward unit w by at most that angle, in their plane
 * (either way round when w is opposite u), into out. */
RB_TARGET static inline __attribute__((always_inline)) void
RB_(turn_batch)(const struct rules_params *p, const RB_(vd) u[3], const RB_(vd) w[3],
		RB_(vd) out[3], const int dims)
{
	const RB_(vd) zero = {0};
	RB_(vd) uw = zero, perp[3], e[3], pn2 = zero;
	RB_(vl) keep;
	int d;

	for (d = 0; d < dims; d++)
		uw += u[d] * w[d];
	keep = uw >= p->cos_turn;
	for (d = 0; d < dims; d++) {
		perp[d] = w[d] - uw * u[d];
		pn2 += perp[d] * perp[d];
	}
	RB_(normalize_batch)(perp, dims);
	RB_(perpendicular_batch)(u, e, dims);
	for (d = 0; d < dims; d++) {
		perp[d] = RB_(vsel)(pn2 > 0.0, perp[d], e[d]);
		out[d] = RB_(vsel)(keep, w[d], p->cos_turn * u[d] + p->sin_turn * perp[d]);
	}
}

/* update_velocity_model's turn limit (rules.c) on RB_W lanes: where both
 * the velocity and v + a dt have a direction, a becomes the acceleration
 * that gives v + a dt turned toward by at most max_turn dt, at its speed. */
RB_TARGET static inline __attribute__((always_inline)) void
RB_(turn_velocity_batch)(const struct rules_params *p, RB_(vd) a[3], const RB_(vd) v0[3],
			 const int dims)
{
	const RB_(vd) zero = {0};
	const double dt = p->ip.dt;
	RB_(vd) u[3], w[3], t[3], u2 = zero, w2 = zero, sp;
	RB_(vl) turn;
	int d;

	for (d = 0; d < dims; d++) {
		u[d] = v0[d];
		w[d] = v0[d] + a[d] * dt;
		u2 += u[d] * u[d];
		w2 += w[d] * w[d];
	}
	sp = RB_(vsqrt)(w2);
	turn = (u2 > 0.0) & (w2 > 0.0);
	RB_(normalize_batch)(u, dims);
	RB_(normalize_batch)(w, dims);
	RB_(turn_batch)(p, u, w, t, dims);
	for (d = 0; d < dims; d++)
		a[d] = RB_(vsel)(turn, (t[d] * sp - v0[d]) / dt, a[d]);
}

/* The obstacles' and attractors' terms of the models with forces, lane
 * by lane in the scalar code (steer_avoid_attract for Reynolds',
 * simple_avoid_attract for simple's and accelerate's), in their place
 * among the terms: lists searched per boid, and most lanes near none. */
RB_TARGET static inline __attribute__((always_inline)) void
RB_(avoid_attract_lanes)(const struct rules_params *p, const RB_(vd) x0[3],
			 const RB_(vd) v0[3], RB_(vd) smax, int nb, RB_(vd) a[3], const int dims)
{
	int l, d;

	if (p->ip.n_obstacles == 0 && p->n_attractors == 0)
		return;
	for (l = 0; l < nb; l++) {
		float x[3] = {0, 0, 0}, v[3] = {0, 0, 0};
		double al[3] = {0, 0, 0};

		for (d = 0; d < dims; d++) {
			x[d] = (float)x0[d][l];
			v[d] = (float)v0[d][l];
			al[d] = a[d][l];
		}
		if (p->model == MODEL_REYNOLDS)
			steer_avoid_attract(p, x, v, smax[l], al);
		else
			simple_avoid_attract(p, x, al);
		for (d = 0; d < dims; d++)
			a[d][l] = al[d];
	}
}

/* integrate_boid on the batch: v' = v + a dt, |v'| clamped to [smin,
 * smax] (smax each lane's, cruise_batch), the move, the bounds. */
RB_TARGET static inline __attribute__((always_inline)) void
RB_(integrate_batch)(const struct rules_params *p, const RB_(vd) a[3], const RB_(vd) v0[3],
		     const RB_(vd) x0[3], RB_(vd) smax, int nb, size_t k,
		     const float *const pos[3], float *const pos_out[3], float *const vel_out[3],
		     const int dims)
{
	const RB_(vd) zero = {0};
	const double smin = p->ip.speed_min, dt = p->ip.dt;
	RB_(vd) v[3], s2 = zero, s, o2 = zero, scale, xn[3];
	RB_(vfb) vf[3];
	int d;

	for (d = 0; d < dims; d++) {
		v[d] = v0[d] + a[d] * dt;
		s2 += v[d] * v[d];
		o2 += v0[d] * v0[d];
	}
	s = RB_(vsqrt)(s2);
	scale = zero + 1.0;
	scale = RB_(vsel)(s < smin, RB_(vsel)(s > 0.0, smin / s,
				    RB_(vsel)(o2 > 0.0, smin / RB_(vsqrt)(o2), zero)), scale);
	scale = RB_(vsel)(s > smax, smax / s, scale);
	for (d = 0; d < dims; d++)
		v[d] = RB_(vsel)((s < smin) & ~(s > 0.0) & ~(s > smax), v0[d], v[d]);
	for (d = 0; d < dims; d++) {
		vf[d] = __builtin_convertvector(v[d] * scale, RB_(vfb));
		xn[d] = x0[d] + __builtin_convertvector(vf[d], RB_(vd)) * dt;
	}
	RB_(store_all)(p, xn, vf, nb, k, pos, pos_out, vel_out, dims);
}

/* bounds_min_image on RB_W binary32 lanes of axis d: under wrap, the
 * nearest periodic image of the displacement t. */
RB_TARGET static inline __attribute__((always_inline)) RB_(vfb)
RB_(min_image_batch)(const struct bounds *b, int d, RB_(vfb) t)
{
	if (b->mode == BOUNDS_WRAP) {
		const RB_(vib) hi = t > b->half_f[d];
		const RB_(vib) lo = ~hi & (t < -b->half_f[d]);
		const RB_(vfb) dn = t - b->len_f[d], up = t + b->len_f[d];

		t = (RB_(vfb))(((RB_(vib))dn & hi) | ((RB_(vib))up & lo) |
			       ((RB_(vib))t & ~(hi | lo)));
	}
	return t;
}

/* target_offset (rules.c) on RB_W lanes: off, the offset to the target,
 * its binary32 difference brought to the nearest image under wrap
 * (bounds_min_image); returns the lanes farther than target.radius. */
RB_TARGET static inline __attribute__((always_inline)) RB_(vl)
RB_(offset_batch)(const struct rules_params *p, const double c[3], double radius, int at_least,
		  const RB_(vd) x0[3], RB_(vd) off[3], const int dims)
{
	const RB_(vd) zero = {0};
	const struct bounds *b = &p->ip.box;
	RB_(vd) r2 = zero;
	int d;

	for (d = 0; d < dims; d++) {
		const RB_(vfb) t = __builtin_convertvector(c[d] - x0[d], RB_(vfb));

		off[d] = __builtin_convertvector(RB_(min_image_batch)(b, d, t), RB_(vd));
		r2 += off[d] * off[d];
	}
	return at_least ? r2 >= radius * radius : r2 > radius * radius;
}

RB_TARGET static inline __attribute__((always_inline)) RB_(vl)
RB_(target_batch)(const struct rules_params *p, const RB_(vd) x0[3], RB_(vd) off[3],
		  const int dims)
{
	return RB_(offset_batch)(p, p->target, p->target_radius, 0, x0, off, dims);
}

/* flee_offset (rules.c) on RB_W lanes: off, the displacement away from
 * predator i (binary32, its nearest image under wrap); returns the lanes
 * within radii.flee of it and not on it. x0: the positions, binary32
 * values. */
RB_TARGET static inline __attribute__((always_inline)) RB_(vl)
RB_(flee_batch)(const struct rules_params *p, int i, const RB_(vd) x0[3], RB_(vd) off[3],
		const int dims)
{
	const RB_(vd) zero = {0};
	RB_(vd) r2 = zero;
	int d;

	for (d = 0; d < dims; d++) {
		const RB_(vfb) t = __builtin_convertvector(x0[d], RB_(vfb)) - p->pred_pos[d][i];

		off[d] = __builtin_convertvector(RB_(min_image_batch)(&p->ip.box, d, t), RB_(vd));
		r2 += off[d] * off[d];
	}
	return (r2 <= p->r_flee * p->r_flee) & (r2 > 0.0);
}

/* containment (rules.c) on RB_W lanes: des, along each axis, +1 inside
 * the low wall's margin, -1 inside the high one's, else 0; returns the
 * lanes near a wall. */
RB_TARGET static inline __attribute__((always_inline)) RB_(vl)
RB_(containment_batch)(const struct rules_params *p, const RB_(vd) x0[3], RB_(vd) des[3],
		       const int dims)
{
	const RB_(vd) zero = {0};
	const struct bounds *b = &p->ip.box;
	RB_(vl) near = (RB_(vl))zero;
	int d;

	for (d = 0; d < dims; d++) {
		const RB_(vl) low = x0[d] < b->lo[d] + b->margin;
		const RB_(vl) high = ~low & (x0[d] > b->hi[d] - b->margin);

		des[d] = RB_(vsel)(low, zero + 1.0, RB_(vsel)(high, zero - 1.0, zero));
		near |= low | high;
	}
	return near;
}

/* dims is a constant in each caller, so the loops over it unroll and
 * the vectors stay in registers (measured: this update took a third of
 * a 2D run's time with dims read at run time). */
RB_TARGET static inline __attribute__((always_inline)) void
RB_(update_batch)(const struct rules_params *p, const struct rules_acc acc[RB_W], int nb,
		  size_t k, const uint32_t *id, uint64_t step, const float *const pos[3],
		  const float *const vel[3], float *const pos_out[3], float *const vel_out[3],
		  const int dims)
{
	const RB_(vd) smax = RB_(cruise_batch)(p, nb, k, id, step);
	RB_(vd) v0[3], x0[3], des[3], a[3], nsep, nali, ncoh;
	int d, i;

	RB_(batch_inputs)(acc, nb, k, pos, vel, v0, x0, a, &nsep, &nali, &ncoh, dims);
	/* Separation: sum of (p_i - p_j)/|p_i - p_j|^2. */
	for (d = 0; d < dims; d++)
		des[d] = RB_(acc_f)(acc, nb, RB_ACC(sep) + (size_t)d * sizeof(float));
	RB_(steer_batch)(p, dims, p->w_sep, nsep > 0.0, des, v0, smax, a);
	/* Alignment: the mean velocity of the neighbours. */
	for (d = 0; d < dims; d++)
		des[d] = RB_(acc_f)(acc, nb, RB_ACC(ali) + (size_t)d * sizeof(float)) / nali;
	RB_(steer_batch)(p, dims, p->w_ali, nali > 0.0, des, v0, smax, a);
	/* Cohesion: the mean displacement toward the neighbours. */
	for (d = 0; d < dims; d++)
		des[d] = RB_(acc_f)(acc, nb, RB_ACC(coh) + (size_t)d * sizeof(float)) / ncoh;
	RB_(steer_batch)(p, dims, p->w_coh, ncoh > 0.0, des, v0, smax, a);
	/* Target: the displacement to it, beyond target.radius. */
	if (p->has_target) {
		RB_(vl) pull = RB_(target_batch)(p, x0, des, dims);

		RB_(steer_batch)(p, dims, p->w_target, pull, des, v0, smax, a);
	}
	/* Containment (steer mode): back into the box inside its margin. */
	if (p->w_bounds != 0.0) {
		RB_(vl) near = RB_(containment_batch)(p, x0, des, dims);

		RB_(steer_batch)(p, dims, p->w_bounds, near, des, v0, smax, a);
	}
	RB_(avoid_attract_lanes)(p, x0, v0, smax, nb, a, dims);
	/* Flee: from each predator within radii.flee, straight away, in
	 * order. */
	for (i = 0; i < p->n_pred; i++) {
		RB_(vl) flee = RB_(flee_batch)(p, i, x0, des, dims);

		RB_(steer_batch)(p, dims, p->w_flee, flee, des, v0, smax, a);
	}
	if (p->has_turn)
		RB_(turn_velocity_batch)(p, a, v0, dims);
	RB_(integrate_batch)(p, a, v0, x0, smax, nb, k, pos, pos_out, vel_out, dims);
}


/* simple_acceleration and integrate_boid for the case of p->fast_simple
 * (the pseudocode boids and the JavaFX flock: any bounds, steer mode's
 * containment, the target, obstacles and attractors (lane by lane),
 * predators, the turn limit and speeds that vary), each term added where
 * the scalar code adds it, in its order. */
RB_TARGET static inline __attribute__((always_inline)) void
RB_(simple_batch)(const struct rules_params *p, const struct rules_acc acc[RB_W], int nb,
		  size_t k, const uint32_t *id, uint64_t step, const float *const pos[3],
		  const float *const vel[3], float *const pos_out[3], float *const vel_out[3],
		  const int dims)
{
	const int accel = p->model == MODEL_ACCELERATE;
	const RB_(vd) smax = RB_(cruise_batch)(p, nb, k, id, step);
	RB_(vd) v0[3], x0[3], a[3], wall[3], tgt[3], nsep, nali, ncoh, t;
	RB_(vl) near = {0}, pull = {0};
	int d, i;

	RB_(batch_inputs)(acc, nb, k, pos, vel, v0, x0, a, &nsep, &nali, &ncoh, dims);
	if (p->has_target)
		pull = RB_(target_batch)(p, x0, tgt, dims);
	if (p->w_bounds != 0.0)
		near = RB_(containment_batch)(p, x0, wall, dims);
	for (d = 0; d < dims; d++) {
		const size_t off = (size_t)d * sizeof(float);

		t = p->w_coh * (RB_(acc_f)(acc, nb, RB_ACC(coh) + off) / ncoh);
		a[d] = RB_(vsel)(ncoh > 0.0, a[d] + t, a[d]);
		t = p->w_ali * (RB_(acc_f)(acc, nb, RB_ACC(ali) + off) / nali - v0[d]);
		a[d] = RB_(vsel)(nali > 0.0, a[d] + t, a[d]);
		t = RB_(acc_f)(acc, nb, RB_ACC(sep) + off);
		if (!accel)
			a[d] = a[d] + p->w_sep * t;
		else
			a[d] = RB_(vsel)(nsep > 0.0, a[d] + p->w_sep * (p->r_sep * t / nsep), a[d]);
		if (p->has_target)
			a[d] = RB_(vsel)(pull, a[d] + p->w_target * tgt[d], a[d]);
		/* containment (steer mode), on every axis where any is near */
		if (p->w_bounds != 0.0)
			a[d] = RB_(vsel)(near, a[d] + p->w_bounds * wall[d], a[d]);
	}
	RB_(avoid_attract_lanes)(p, x0, v0, smax, nb, a, dims);
	/* w_flee times the unit vector away from each predator within
	 * radii.flee, in order */
	for (i = 0; i < p->n_pred; i++) {
		const RB_(vd) zero = {0};
		RB_(vl) flee = RB_(flee_batch)(p, i, x0, tgt, dims);
		RB_(vd) n2 = zero, len;

		for (d = 0; d < dims; d++)
			n2 += tgt[d] * tgt[d];
		len = RB_(vsqrt)(n2);
		for (d = 0; d < dims; d++)
			a[d] = RB_(vsel)(flee, a[d] + p->w_flee * tgt[d] / len, a[d]);
	}
	if (p->has_turn)
		RB_(turn_velocity_batch)(p, a, v0, dims);
	RB_(integrate_batch)(p, a, v0, x0, smax, nb, k, pos, pos_out, vel_out, dims);
}

/* inertia_update for the case of p->fast_inertia (the compute-shader
 * flock; obstacles' collisions lane by lane), each lane the scalar code's
 * operations in its order. */
RB_TARGET static inline __attribute__((always_inline)) void
RB_(inertia_batch)(const struct rules_params *p, const struct rules_acc acc[RB_W], int nb,
		   size_t k, const uint32_t *id, uint64_t step, const float *const pos[3],
		   const float *const vel[3], float *const pos_out[3], float *const vel_out[3],
		   const int dims)
{
	const double smax = p->speed_max, keep = p->inertia_keep;
	const RB_(vd) inv_n = 1.0 / (RB_(acc_n)(acc, nb, RB_ACC(n_ali)) + 1.0);
	const RB_(vd) zero = {0};
	RB_(vd) u[3], c[3], tg[3], x0[3], xn[3]; /* past dims unset: see batch_inputs */
	RB_(vfb) vf[3];
	RB_(vd) f = zero + 1.0;
	int d;

	/* rules_inertia_factor: the offsets drawn for every lane, the noise in
	 * vectors */
	if (p->speed_variation > 0.0) {
		RB_(vd) o;

		RB_(unit_lanes)(p, RNG_NOISE_OFFSET, 0, nb, k, id, 0, &o, NULL);
		f = RB_(nz_inertia_factor)((double)step * p->ip.dt / p->speed_noise_period +
					   1000.0 * o, p->speed_variation);
	}

	for (d = 0; d < dims; d++)
		tg[d] = zero;
	if (p->has_target) {
		for (d = 0; d < dims; d++)
			x0[d] = RB_(slots)(pos[d], nb, k);
		(void)RB_(target_batch)(p, x0, tg, dims);
	}
	for (d = 0; d < dims; d++) {
		u[d] = RB_(slots)(vel[d], nb, k) / smax;
		/* the target's offset (0 without one) + the sum */
		c[d] = (tg[d] + RB_(acc_f)(acc, nb, RB_ACC(coh) + (size_t)d * sizeof(float))) * inv_n;
	}
	RB_(normalize_batch)(u, dims);
	RB_(normalize_batch)(c, dims);
	for (d = 0; d < dims; d++) {
		const size_t off = (size_t)d * sizeof(float);
		const RB_(vd) dd = RB_(acc_f)(acc, nb, RB_ACC(ali) + off) / smax * inv_n +
				   RB_(acc_f)(acc, nb, RB_ACC(sep) + off) + c[d];
		const RB_(vd) dir = dd + keep * (u[d] - dd);

		/* the velocity written dir smax, the move dir smax f (f is 1
		 * without speed variation, and x 1 is exact) */
		vf[d] = __builtin_convertvector(dir * smax, RB_(vfb));
		xn[d] = RB_(slots)(pos[d], nb, k) + dir * smax * f * p->ip.dt;
	}
	RB_(store_all)(p, xn, vf, nb, k, pos, pos_out, vel_out, dims);
}

/* safe_unit on RB_W vectors: v/|v| where |v| > 1e-6, else 0,
 * with normalize's operations (1/sqrt(v.v), then a product a component). */
RB_TARGET static inline __attribute__((always_inline)) void
RB_(safe_unit_batch)(RB_(vd) v[3], const int dims)
{
	const RB_(vd) zero = {0};
	RB_(vd) n2 = zero, r, inv;
	RB_(vl) ok;
	int k;

	for (k = 0; k < dims; k++)
		n2 += v[k] * v[k];
	r = RB_(vsqrt)(n2);
	ok = r > 1e-6;
	inv = 1.0 / r;
	for (k = 0; k < dims; k++)
		v[k] = RB_(vsel)(ok, v[k] * inv, zero);
}

/* blend_update for p->fast_blend (every case: the return rule in
 * vectors; obstacles, attractors and predators lane by lane), each lane
 * the scalar code's operations in its order. */
RB_TARGET static inline __attribute__((always_inline)) void
RB_(blend_batch)(const struct rules_params *p, const struct rules_acc acc[RB_W], int nb,
	    size_t k, const float *const pos[3], const float *const vel[3],
	    float *const pos_out[3], float *const vel_out[3], const int dims)
{
	const RB_(vd) zero = {0};
	const double w3[3] = {p->w_sep, p->w_ali, p->w_coh}, smax = p->speed_max, dt = p->ip.dt;
	RB_(vd) f[3], t[3], v[3], cnt, n2 = zero, inv;
	int i, d;

	for (d = 0; d < dims; d++) /* past dims unset: see update_batch */
		f[d] = zero;

	static const size_t SUM[3] = {RB_ACC(sep), RB_ACC(ali), RB_ACC(coh)};
	static const size_t CNT[3] = {RB_ACC(n_sep), RB_ACC(n_ali), RB_ACC(n_coh)};

	for (i = 0; i < 3; i++) {
		cnt = RB_(acc_n)(acc, nb, CNT[i]);
		for (d = 0; d < dims; d++)
			t[d] = RB_(acc_f)(acc, nb, SUM[i] + (size_t)d * sizeof(float)) / cnt;
		RB_(safe_unit_batch)(t, dims);
		for (d = 0; d < dims; d++)
			f[d] = RB_(vsel)(cnt > 0.0, f[d] + w3[i] * t[d], f[d]);
	}
	/* the return rule (seed 000): the unit offset to the centre beyond
	 * return.radius, else the velocity, weight return.weight */
	if (p->has_return) {
		RB_(vd) x0[3], off[3];
		RB_(vl) out;

		for (d = 0; d < dims; d++)
			x0[d] = RB_(slots)(pos[d], nb, k);
		out = RB_(offset_batch)(p, p->return_center, p->return_radius, 0, x0, off, dims);
		RB_(safe_unit_batch)(off, dims);
		for (d = 0; d < dims; d++)
			f[d] = f[d] + p->w_return * RB_(vsel)(out, off[d], RB_(slots)(vel[d], nb, k));
	}
	/* obstacles, attractors and predators lane by lane */
	if (p->ip.n_obstacles > 0 || p->n_attractors > 0 || p->n_pred > 0)
		for (i = 0; i < nb; i++) {
			float x[3] = {0, 0, 0};
			double fl[3] = {0, 0, 0};

			for (d = 0; d < dims; d++) {
				x[d] = pos[d][k + (size_t)i];
				fl[d] = f[d][i];
			}
			blend_avoid_attract_flee(p, x, fl);
			for (d = 0; d < dims; d++)
				f[d][i] = fl[d];
		}
	RB_(safe_unit_batch)(f, dims);
	for (d = 0; d < dims; d++) {
		v[d] = RB_(slots)(vel[d], nb, k) + f[d] * dt;
		n2 += v[d] * v[d];
	}
	/* normalize: at rest with no rule pulling, v stays as it is */
	inv = 1.0 / RB_(vsqrt)(n2);
	for (d = 0; d < dims; d++)
		v[d] = RB_(vsel)(n2 > 0.0, v[d] * inv, v[d]) * smax;
	/* finish_heading */
	RB_(move_all)(p, v, nb, k, pos, pos_out, vel_out, dims);
}

/* slerp_unit on the lanes where on: u turned toward the unit vector w by
 * the fraction t of the angle between them (u not renormalised, as
 * slerp_unit's result). Returns 0, having changed nothing, where such a
 * lane's u and w are parallel (slerp_unit's special cases). */
RB_TARGET static inline __attribute__((always_inline)) int
RB_(slerp_lanes)(RB_(vd) u[3], const RB_(vd) w[3], double t, RB_(vl) on, const int dims)
{
	const RB_(vd) zero = {0};
	RB_(vd) e[3], cs = zero, e2 = zero, sn, s1, c1;
	int l, d;

	for (d = 0; d < dims; d++)
		cs += u[d] * w[d];
	for (d = 0; d < dims; d++) {
		e[d] = w[d] - cs * u[d];
		e2 += e[d] * e[d];
	}
	sn = RB_(vsqrt)(e2);
	for (l = 0; l < RB_W; l++)
		if (on[l] && !(sn[l] > 1e-12))
			return 0;
	RB_(dm_sincos)(t * RB_(dm_atan2)(sn, cs), &s1, &c1);
	s1 = RB_(vsel)(on, s1, zero);
	c1 = RB_(vsel)(on, c1, zero);
	for (d = 0; d < dims; d++)
		u[d] = RB_(vsel)(on, c1 * u[d] + s1 * (e[d] / sn), u[d]);
	return 1;
}

/* slerp_update for p->fast_slerp (no return rule; any bounds; the target
 * in vectors; obstacles' collisions lane by lane; slerp flees no
 * predator), each lane the scalar code's operations in its order, the
 * slerp angle's atan2 and sincos too (detmath_kernels.h); the return rule
 * (seed 001's turn back at return.radius or farther, and a speed drawn
 * in [speed.min, speed.max]) in vectors too. Returns 0, having written
 * nothing, where a boid stands still or turns from a heading exactly
 * toward or away from its goal (the scalar code's special cases). */
RB_TARGET static inline __attribute__((always_inline)) int
RB_(slerp_batch)(const struct rules_params *p, const struct rules_acc acc[RB_W], int nb,
		 size_t k, const uint32_t *id, uint64_t step, const float *const pos[3],
		 const float *const vel[3], float *const pos_out[3], float *const vel_out[3],
		 const int dims)
{
	const RB_(vd) zero = {0};
	const double tf = p->turn_frac;
	RB_(vd) u[3], dv[3], e[3], tg[3], x0[3]; /* past dims unset: see update_batch */
	RB_(vd) n2 = zero, sp, inv, ncoh, sp2;
	RB_(vl) pull = {0};
	int l, d;

	ncoh = RB_(acc_n)(acc, nb, RB_ACC(n_coh));
	sp2 = RB_(acc_f)(acc, nb, RB_ACC(ali));
	for (d = 0; d < dims; d++) {
		u[d] = RB_(slots)(vel[d], nb, k);
		dv[d] = RB_(acc_f)(acc, nb, RB_ACC(coh) + (size_t)d * sizeof(float));
		e[d] = RB_(acc_f)(acc, nb, RB_ACC(sep) + (size_t)d * sizeof(float));
		x0[d] = RB_(slots)(pos[d], nb, k);
		tg[d] = zero;
	}
	for (d = 0; d < dims; d++)
		n2 += u[d] * u[d];
	for (l = 0; l < RB_W; l++)
		if (!(n2[l] > 0.0))
			return 0;
	sp = RB_(vsqrt)(n2);
	inv = 1.0 / sp;
	for (d = 0; d < dims; d++)
		u[d] *= inv;
	/* d = mean(p_j - p_i) + (the target's offset beyond target.radius,
	 * else 0) + sep, its unit vector */
	if (p->has_target)
		pull = RB_(target_batch)(p, x0, tg, dims);
	n2 = zero;
	for (d = 0; d < dims; d++) {
		dv[d] = (dv[d] / ncoh + RB_(vsel)(pull, tg[d], zero)) + e[d];
		n2 += dv[d] * dv[d];
	}
	sp = RB_(vsel)(ncoh > 0.0, sp2 / ncoh, sp);
	inv = 1.0 / RB_(vsqrt)(n2);
	for (d = 0; d < dims; d++)
		dv[d] *= inv;
	if (!RB_(slerp_lanes)(u, dv, tf, (ncoh > 0.0) & (n2 > 0.0), dims))
		return 0;
	/* the return rule: at return.radius or farther, toward the centre */
	if (p->has_return) {
		RB_(vl) back = RB_(offset_batch)(p, p->return_center, p->return_radius, 1, x0, e,
						 dims);
		RB_(vd) r;

		n2 = zero;
		for (d = 0; d < dims; d++)
			n2 += e[d] * e[d];
		back &= n2 > 0.0;
		inv = 1.0 / RB_(vsqrt)(n2);
		for (d = 0; d < dims; d++)
			e[d] *= inv;
		if (!RB_(slerp_lanes)(u, e, tf, back, dims))
			return 0;
		RB_(unit_lanes)(p, RNG_TURN_SPEED, 0, nb, k, id, step, &r, NULL);
		sp = RB_(vsel)(back, p->ip.speed_min + r * (p->speed_max - p->ip.speed_min), sp);
	}
	n2 = zero;
	for (d = 0; d < dims; d++)
		n2 += u[d] * u[d];
	inv = 1.0 / RB_(vsqrt)(n2);
	for (d = 0; d < dims; d++)
		u[d] = u[d] * inv * sp;
	RB_(move_all)(p, u, nb, k, pos, pos_out, vel_out, dims);
	return 1;
}

/* The noise draws of the batch's boids (noise_uniforms in rules.c, one
 * Philox call a lane): u1 in (0, 1], u2 in [0, 1). */
RB_TARGET static inline __attribute__((always_inline)) void
RB_(noise_batch)(const struct rules_params *p, const uint32_t *id, uint64_t step, int nb,
		 size_t k, RB_(vd) *u1, RB_(vd) *u2)
{
	RB_(unit_lanes)(p, RNG_NOISE, 0, nb, k, id, step, u1, u2);
	*u1 = 1.0 - *u1;
}

/* rotate_about (rules.c) on RB_W lanes: cos(t) u + sin(t) e(phi), e(phi)
 * the unit vector at angle phi around unit u (2D: the perpendicular, phi
 * not read). */
RB_TARGET static inline __attribute__((always_inline)) void
RB_(rotate_batch)(const RB_(vd) u[3], RB_(vd) c, RB_(vd) s, RB_(vd) phi, RB_(vd) out[3],
		  const int dims)
{
	RB_(vd) e1[3], e2[3], cp, sp;
	int d;

	RB_(perpendicular_batch)(u, e1, dims);
	if (dims == 2) {
		for (d = 0; d < 2; d++)
			out[d] = c * u[d] + s * e1[d];
		return;
	}
	e2[0] = u[1] * e1[2] - u[2] * e1[1];
	e2[1] = u[2] * e1[0] - u[0] * e1[2];
	e2[2] = u[0] * e1[1] - u[1] * e1[0];
	RB_(dm_sincos)(phi, &sp, &cp);
	for (d = 0; d < 3; d++)
		out[d] = c * u[d] + s * (cp * e1[d] + sp * e2[d]);
}

/* vicsek_update for the case of p->fast_vicsek (any speeds, bounds and
 * obstacles), each lane the scalar code's operations in its order,
 * the noise's rotation too (sincos from detmath_kernels.h). Returns 0,
 * having written nothing, where a boid's mean heading is zero (the scalar
 * code's special case). */
RB_TARGET static inline __attribute__((always_inline)) int
RB_(vicsek_batch)(const struct rules_params *p, const struct rules_acc acc[RB_W], int nb,
		  size_t k, const uint32_t *id, uint64_t step, const float *const pos[3],
		  const float *const vel[3], float *const pos_out[3], float *const vel_out[3],
		  const int dims)
{
	const RB_(vd) zero = {0};
	const double dt = p->ip.dt;
	const RB_(vd) speed = RB_(cruise_batch)(p, nb, k, id, step);
	RB_(vd) v[3], m[3], h[3], n2 = zero, inv, isp; /* past dims unset: see update_batch */
	RB_(vfb) vf[3];
	int l, d;

	/* the own heading: v / speed.max, or with speeds that vary v / |v|
	 * in binary32 (rules_inv_norm) lane by lane */
	isp = zero + (double)p->inv_speed;
	if (!p->uniform_speed)
		for (l = 0; l < RB_W; l++) {
			const size_t j = k + (size_t)(l < nb ? l : nb - 1);
			const float vl[3] = {vel[0][j], vel[1][j], dims == 3 ? vel[2][j] : 0.0f};

			isp[l] = (double)rules_inv_norm(vl, dims);
		}
	for (d = 0; d < dims; d++) {
		v[d] = RB_(slots)(vel[d], nb, k);
		m[d] = RB_(acc_f)(acc, nb, RB_ACC(ali) + (size_t)d * sizeof(float)) + v[d] * isp;
		n2 += m[d] * m[d];
	}
	for (l = 0; l < RB_W; l++)
		if (!(n2[l] > 0.0))
			return 0;
	inv = 1.0 / RB_(vsqrt)(n2);
	for (d = 0; d < dims; d++)
		h[d] = m[d] *= inv;
	if (p->noise > 0.0) {
		RB_(vd) u1, u2, s, c, t;

		RB_(noise_batch)(p, id, step, nb, k, &u1, &u2);
		if (dims == 2) {
			RB_(dm_sincos)(p->noise * (u2 - 0.5), &s, &c);
		} else {
			/* uniform on the spherical cap: cos theta uniform */
			c = 1.0 - u1 * (1.0 - p->cos_half_noise);
			t = 1.0 - c * c;
			s = RB_(vsqrt)(RB_(vsel)(t > 0.0, t, zero));
		}
		RB_(rotate_batch)(m, c, s, 2.0 * DETMATH_PI * u2 - DETMATH_PI, h, dims);
		RB_(normalize_batch)(h, dims);
	}
	/* finish_heading: the new heading at speed, the move with the old
	 * velocity (Vicsek's eq. 1) or with move_with the new one */
	for (d = 0; d < dims; d++) {
		vf[d] = __builtin_convertvector(h[d] * speed, RB_(vfb));
		v[d] = RB_(slots)(pos[d], nb, k) + (p->move_new ? h[d] * speed : v[d]) * dt;
	}
	RB_(store_all)(p, v, vf, nb, k, pos, pos_out, vel_out, dims);
	return 1;
}

/* couzin_update for the case of p->fast_couzin (any speeds, obstacles,
 * any bounds), each lane the scalar code's operations in its order: the
 * predators' flight or the zones' direction, the
 * Gaussian turn (Box-Muller from detmath_kernels.h; fmod, exact, lane by
 * lane where the angle is a whole turn or more), the turn limit and the
 * move. Returns 0, having written nothing, where a boid stands still (the
 * scalar code's special case). */
RB_TARGET static inline __attribute__((always_inline)) int
RB_(couzin_batch)(const struct rules_params *p, const struct rules_acc acc[RB_W], int nb,
		  size_t k, const uint32_t *id, uint64_t step, const float *const pos[3],
		  const float *const vel[3], float *const pos_out[3], float *const vel_out[3],
		  const int dims)
{
	const RB_(vd) zero = {0};
	const double TWO_PI = 2.0 * DETMATH_PI;
	const RB_(vd) speed = RB_(cruise_batch)(p, nb, k, id, step);
	RB_(vd) u[3], o[3], at[3], dv[3], w[3], h[3], n2 = zero, no2 = zero, na2 = zero, inv;
	RB_(vd) nsep, nali, ncoh, fd[3], off[3], x0[3];
	RB_(vl) has_o, has_a, fled = {0};
	int l, d, i;

	for (d = 0; d < dims; d++) {
		u[d] = RB_(slots)(vel[d], nb, k);
		n2 += u[d] * u[d];
	}
	/* predators first: the sum of the unit vectors away from those
	 * within radii.flee (flee_sum), whatever the neighbours do */
	for (d = 0; d < dims; d++)
		fd[d] = zero;
	if (p->n_pred > 0)
		for (d = 0; d < dims; d++)
			x0[d] = RB_(slots)(pos[d], nb, k);
	for (i = 0; i < p->n_pred; i++) {
		RB_(vl) flee = RB_(flee_batch)(p, i, x0, off, dims);

		RB_(normalize_batch)(off, dims);
		for (d = 0; d < dims; d++)
			fd[d] = RB_(vsel)(flee, fd[d] + off[d], fd[d]);
		fled |= flee;
	}
	for (l = 0; l < RB_W; l++)
		if (!(n2[l] > 0.0))
			return 0;
	inv = 1.0 / RB_(vsqrt)(n2);
	for (d = 0; d < dims; d++)
		u[d] *= inv;
	/* repulsion first; else orientation and attraction, each normalised */
	nsep = RB_(acc_n)(acc, nb, RB_ACC(n_sep));
	nali = RB_(acc_n)(acc, nb, RB_ACC(n_ali));
	ncoh = RB_(acc_n)(acc, nb, RB_ACC(n_coh));
	for (d = 0; d < dims; d++) {
		o[d] = RB_(acc_f)(acc, nb, RB_ACC(ali) + (size_t)d * sizeof(float));
		at[d] = RB_(acc_f)(acc, nb, RB_ACC(coh) + (size_t)d * sizeof(float));
		no2 += o[d] * o[d];
		na2 += at[d] * at[d];
	}
	RB_(normalize_batch)(o, dims);
	RB_(normalize_batch)(at, dims);
	has_o = (nali > 0.0) & (no2 > 0.0);
	has_a = (ncoh > 0.0) & (na2 > 0.0);
	n2 = zero;
	for (d = 0; d < dims; d++) {
		const RB_(vd) sep = -RB_(acc_f)(acc, nb, RB_ACC(sep) + (size_t)d * sizeof(float));

		dv[d] = RB_(vsel)(has_o & has_a, 0.5 * (o[d] + at[d]),
				  RB_(vsel)(has_o, o[d], RB_(vsel)(has_a, at[d], u[d])));
		dv[d] = RB_(vsel)(nsep > 0.0, sep, dv[d]);
		dv[d] = RB_(vsel)(fled, fd[d], dv[d]);
		n2 += dv[d] * dv[d];
	}
	inv = 1.0 / RB_(vsqrt)(n2);
	for (d = 0; d < dims; d++)
		w[d] = dv[d] = RB_(vsel)(n2 > 0.0, dv[d] * inv, u[d]);
	if (p->noise > 0.0) {
		RB_(vd) u1, u2, g, s, c, phi = zero;

		RB_(noise_batch)(p, id, step, nb, k, &u1, &u2);
		g = p->noise * RB_(dm_normal)(u1, u2);
		/* the same rotation for angles that differ by whole turns */
		for (l = 0; l < RB_W; l++)
			if (!(fabs(g[l]) < TWO_PI))
				g[l] = fmod(g[l], TWO_PI);
		g = RB_(vsel)(g > DETMATH_PI, g - TWO_PI, RB_(vsel)(g < -DETMATH_PI, g + TWO_PI, g));
		RB_(dm_sincos)(dims == 2 ? g : RB_(vabs)(g), &s, &c);
		/* 3D: the axis of the turn, uniform around d, from a second draw */
		if (dims == 3) {
			RB_(unit_lanes)(p, RNG_NOISE, 1, nb, k, id, step, &phi, NULL);
			phi = 2.0 * DETMATH_PI * phi - DETMATH_PI;
		}
		RB_(rotate_batch)(dv, c, s, phi, w, dims);
		RB_(normalize_batch)(w, dims);
	}
	/* rules_turn: at most max_turn dt from u toward w, in their plane */
	if (p->has_turn)
		RB_(turn_batch)(p, u, w, h, dims);
	else
		for (d = 0; d < dims; d++)
			h[d] = w[d];
	RB_(normalize_batch)(h, dims);
	/* finish_heading: c_i(t + dt) = c_i(t) + v_i(t + dt) dt */
	for (d = 0; d < dims; d++)
		h[d] *= speed;
	RB_(move_all)(p, h, nb, k, pos, pos_out, vel_out, dims);
	return 1;
}

/* One vector of up to RB_W boids, slots k .. k+nb-1. */
RB_TARGET static inline __attribute__((always_inline)) int
RB_(update_nb)(const struct rules_params *p, const struct rules_acc acc[RB_W], int nb,
	       size_t k, const uint32_t *id, uint64_t step, const float *const pos[3],
	       const float *const vel[3], float *const pos_out[3], float *const vel_out[3])
{
	if (p->fast_couzin)
		return p->dims == 2 ?
		       RB_(couzin_batch)(p, acc, nb, k, id, step, pos, vel, pos_out, vel_out, 2) :
		       RB_(couzin_batch)(p, acc, nb, k, id, step, pos, vel, pos_out, vel_out, 3);
	if (p->fast_vicsek)
		return p->dims == 2 ?
		       RB_(vicsek_batch)(p, acc, nb, k, id, step, pos, vel, pos_out, vel_out, 2) :
		       RB_(vicsek_batch)(p, acc, nb, k, id, step, pos, vel, pos_out, vel_out, 3);
	if (p->fast_slerp)
		return p->dims == 2 ?
		       RB_(slerp_batch)(p, acc, nb, k, id, step, pos, vel, pos_out, vel_out, 2) :
		       RB_(slerp_batch)(p, acc, nb, k, id, step, pos, vel, pos_out, vel_out, 3);
	if (p->fast_simple)
		p->dims == 2 ?
		RB_(simple_batch)(p, acc, nb, k, id, step, pos, vel, pos_out, vel_out, 2) :
		RB_(simple_batch)(p, acc, nb, k, id, step, pos, vel, pos_out, vel_out, 3);
	else if (p->fast_inertia)
		p->dims == 2 ?
		RB_(inertia_batch)(p, acc, nb, k, id, step, pos, vel, pos_out, vel_out, 2) :
		RB_(inertia_batch)(p, acc, nb, k, id, step, pos, vel, pos_out, vel_out, 3);
	else if (p->fast_blend && p->dims == 2)
		RB_(blend_batch)(p, acc, nb, k, pos, vel, pos_out, vel_out, 2);
	else if (p->fast_blend)
		RB_(blend_batch)(p, acc, nb, k, pos, vel, pos_out, vel_out, 3);
	else if (p->dims == 2)
		RB_(update_batch)(p, acc, nb, k, id, step, pos, vel, pos_out, vel_out, 2);
	else
		RB_(update_batch)(p, acc, nb, k, id, step, pos, vel, pos_out, vel_out, 3);
	return 1;
}

/* A full vector (every one but a cell's last) passes nb as the constant
 * RB_W, so that each lane's acc[l < nb ? l : nb - 1] and slot fold to l
 * and the gathers take fixed offsets (measured: the Reynolds update's
 * instructions -29%, docs/PERFORMANCE.md). */
RB_TARGET static inline __attribute__((always_inline)) int
RB_(update_vector)(const struct rules_params *p, const struct rules_acc acc[RB_W], int nb,
		   size_t k, const uint32_t *id, uint64_t step, const float *const pos[3],
		   const float *const vel[3], float *const pos_out[3], float *const vel_out[3])
{
	if (nb == RB_W)
		return RB_(update_nb)(p, acc, RB_W, k, id, step, pos, vel, pos_out, vel_out);
	return RB_(update_nb)(p, acc, nb, k, id, step, pos, vel, pos_out, vel_out);
}

/* The batch, RB_W boids a vector. Where a vector returns 0 (the special
 * cases of slerp, Vicsek and Couzin) the caller updates the whole batch one by one: the
 * vectors before it wrote into pos_out and vel_out only, from pos and vel,
 * the bits the scalar code writes again. */
RB_TARGET int RB_(rules_update_batch)(const struct rules_params *p,
				      const struct rules_acc acc[RULES_BATCH], int nb, size_t k,
				      const uint32_t *id, uint64_t step, const float *const pos[3],
				      const float *const vel[3], float *const pos_out[3],
				      float *const vel_out[3])
{
	int h;

	if (!(p->fast_batch || p->fast_blend || p->fast_slerp || p->fast_simple || p->fast_inertia ||
	      p->fast_vicsek || p->fast_couzin))
		return 0;
	for (h = 0; h < nb; h += RB_W)
		if (!RB_(update_vector)(p, acc + h, nb - h < RB_W ? nb - h : RB_W, k + (size_t)h,
					id, step, pos, vel, pos_out, vel_out))
			return 0;
	return 1;
}
