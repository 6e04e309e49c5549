/* rules.h: the models of collective motion: per-neighbour accumulation
 * (inline, called from the neighbour loops) and the per-boid update. The
 * formulas are all in rules.c. */
#ifndef BOIDSIM_RULES_H
#define BOIDSIM_RULES_H

#include <math.h>
#include <stdint.h>
#include <string.h>
#include "bounds.h"
#include "integrate.h"
#include "scenario.h"

struct rules_params {
	enum model_kind model;
	int dims;
	/* Squared radii in binary32: "within r" means |d|^2 <= r^2 computed
	 * in binary32, so a neighbour exactly at the radius counts. */
	float r2_sep, r2_ali, r2_coh, r2_max;
	/* Field of view: a neighbour is seen when the angle between the boid's
	 * heading and the direction to it is at most view_angle/2. */
	int all_round;
	float cos_half_view, cos2_half_view;
	float inv_speed;            /* 1/speed.max: unit headings of constant-speed models */
	double w_sep, w_ali, w_coh, w_target, w_bounds;
	double speed_max, max_force;
	int has_target;
	double target[3];
	double noise;
	/* Vicsek: move with the new velocity (move_with), else the old one */
	int move_new;
	uint64_t seed;
	/* Per-boid speeds (speed.variation, speed.noise); when all boids share
	 * speed.max, inv_speed turns velocities into unit headings. */
	int uniform_speed;
	double speed_variation, speed_noise_amp, speed_noise_period;
	double target_radius;
	double w_avoid, r_avoid;  /* obstacles: in ip.obstacles */
	/* Attractors and repellers, with their positions at the current step
	 * (rules_set_step). */
	int n_attractors;
	const struct scenario_attractor *attractors;
	double attr_pos[SCENARIO_ATTRACTORS_MAX][3];
	/* Turn limit per step: cos and sin of max_turn * dt (has_turn = 0: none). */
	int has_turn;
	double cos_turn, sin_turn;
	/* Vicsek in 3D: the cosine of the noise cone's half-angle. */
	double cos_half_noise;
	/* Predators, their positions at the current step (the simulation
	 * sets them before each step): boids within r_flee of one flee it,
	 * with weight w_flee. */
	int n_pred;
	const float *pred_pos[3];
	double r_flee, w_flee;
	/* Reynolds' model (any bounds mode, any speeds; obstacles and
	 * attractors lane by lane), which
	 * rules_update_batch does RULES_BATCH boids at a time; predators,
	 * set per step, are read at the call. */
	int fast_batch;
	/* The same for blend (its obstacles, attractors and predators lane
	 * by lane) and slerp (blend_batch, slerp_batch). */
	int fast_blend, fast_slerp;
	/* And simple and accelerate, likewise (simple_batch); inertia
	 * (inertia_batch). */
	int fast_simple, fast_inertia;
	/* And Vicsek's and Couzin's models (vicsek_batch, couzin_batch). */
	int fast_vicsek, fast_couzin;
	/* Colour following: neighbours within r2_hue (binary32, as the other
	 * radii) pull the hue at hue_rate = hue.weight x dt per step. */
	int has_hue;
	float r2_hue;
	double hue_rate;
	/* With a colour velocity (hue_spin): the colour cohesion's and
	 * alignment's weights and the time step (rules_hue_update). */
	int hue_spin;
	double hue_coh, hue_ali, dt;
	/* The seed programs' models (rules.c): blend's and slerp's return
	 * rule (return), slerp's turn fraction min(1, turn_rate dt),
	 * inertia's exp(-turn_rate dt) and 1/R in binary32, and its speed
	 * fluctuation (speed.variation, speed.noise.period). */
	int has_return;
	double return_center[3], return_radius, w_return;
	double turn_frac, inertia_keep, r_sep;
	float inv_r_ali;
	struct integrate_params ip;
};

/* What one boid gathers from its neighbours. What each sum holds depends
 * on the model (rules.c). */
struct rules_acc {
	float sep[3], ali[3], coh[3];
	uint32_t n_sep, n_ali, n_coh;
	float hue[2];      /* the sum of the hue vectors within r_hue */
	uint32_t n_hue;
	float hue_r;       /* with a colour velocity: the sum of the rates */
};

/* The neighbour loops add candidates RULES_LANES at a time: candidate t of
 * a run of slots goes to lane t mod RULES_LANES, each lane sums in
 * binary32 in visiting order, and the lanes are added 0, 1, ... at the
 * end. The lanes are vectors of the compiler's generic vector extension,
 * so the summation order is fixed by the source, whatever vector width
 * the compiler or the CPU uses (SSE, AVX2 and AVX-512 give the same bits,
 * as each lane is the same IEEE operations), and the loops need no branch
 * per candidate. Changing RULES_LANES changes results in the last bits. */
#define RULES_LANES 4

typedef float rules_vf __attribute__((vector_size(4 * RULES_LANES)));
typedef int32_t rules_vi __attribute__((vector_size(4 * RULES_LANES)));
/* The lanes of two boids side by side (rules_lanes.h). */
typedef float rules_vf_x2 __attribute__((vector_size(8 * RULES_LANES)));
typedef int32_t rules_vi_x2 __attribute__((vector_size(8 * RULES_LANES)));
/* And of four (the AVX-512 loop: one 16-float register each). */
typedef float rules_vf_x4 __attribute__((vector_size(16 * RULES_LANES)));
typedef int32_t rules_vi_x4 __attribute__((vector_size(16 * RULES_LANES)));

/* Lanes of float vector x where int vector m is true (all bits set), +0
 * elsewhere. */
#define rules_vsel(m, x) ((__typeof__(x))((__typeof__(m))(x) & (m)))

void rules_params_init(struct rules_params *p, const struct scenario *sc);

/* Positions that move with time (attractors on waypoints) at this step. */
void rules_set_step(struct rules_params *p, uint64_t step);

/* Boid id's largest speed at this step: speed.max, lowered by its own
 * speed.variation draw and its speed.noise fluctuation, never below
 * speed.min. */
double rules_cruise(const struct rules_params *p, uint32_t id, uint64_t step);

/* The compute-shader flock's value noise (seed 002's noise1 at the
 * point (x, x, x)), in [0, 1]; and boid id's speed factor at a step in
 * model inertia, 1 + speed.variation (2 noise - 1) (rules.c). */
double rules_noise002(double x);
double rules_inertia_factor(const struct rules_params *p, uint32_t id, uint64_t step);

/* Boids per call of rules_update_batch_*. */
#define RULES_BATCH 8

/* rules_update for nb (1 to RULES_BATCH) boids at slots k .. k+nb-1 of
 * the arrays at once (their ids id[k ..], at step), when one of the fast_*
 * cases above holds (and blend sees no predators): the same binary64
 * operations for each boid, in vectors, so the same bits.
 * Compiled for AVX-512 and for AVX2 (on x86-64), where it pays: call each
 * only where grid_init chose a level the processor has. Returns 0, having done
 * nothing, when it does not apply (and always off x86-64). */
int rules_update_batch_avx512(const struct rules_params *p,
			      const struct rules_acc acc[RULES_BATCH], int nb, size_t k,
			      const uint32_t *id, uint64_t step, const float *const pos[3],
			      const float *const vel[3], float *const pos_out[3],
			      float *const vel_out[3]);
int rules_update_batch_avx2(const struct rules_params *p,
			    const struct rules_acc acc[RULES_BATCH], int nb, size_t k,
			    const uint32_t *id, uint64_t step, const float *const pos[3],
			    const float *const vel[3], float *const pos_out[3],
			    float *const vel_out[3]);

/* Scales v to unit length in binary64; returns 0 (v unchanged) when v is
 * zero. */
int rules_normalize(double v[3], int dims);

/* Turns unit heading u toward unit direction w by at most the angle whose
 * cosine and sine are cos_t and sin_t, in the plane of the two (either way
 * round when w is opposite u). */
void rules_turn_limit(double cos_t, double sin_t, int dims, const double u[3],
		      const double w[3], double out[3]);

/* 1/|v|, or 0 for a zero vector. */
static inline float rules_inv_norm(const float v[3], const int dims)
{
	float n2 = v[0] * v[0] + v[1] * v[1] + (dims == 3 ? v[2] * v[2] : 0.0f);

	return n2 > 0.0f ? 1.0f / sqrtf(n2) : 0.0f;
}

static inline void rules_acc_init(struct rules_acc *a)
{
	*a = (struct rules_acc){{0, 0, 0}, {0, 0, 0}, {0, 0, 0}, 0, 0, 0, {0, 0}, 0, 0};
}

/* The lane sums for one boid (rules_cand, rules_lanes, rules_self,
 * rules_lanes_add ...), for two at a time (the same names ending in _x2)
 * and for four (_x4): rules_lanes.h. */
#define RL_TARGET
#define RL_BOIDS 1
#define RL_VF rules_vf
#define RL_VI rules_vi
#define RL_(name) name
#include "rules_lanes.h"
#undef RL_BOIDS
#undef RL_VF
#undef RL_VI
#undef RL_
/* The pairs' and quads' loops are AVX2's and AVX-512's (step.c), and
 * their lanes are compiled for those. */
#if defined(__x86_64__) && defined(__GNUC__) && defined(__has_attribute)
#if __has_attribute(target)
#undef RL_TARGET
#define RL_TARGET __attribute__((target("avx2,bmi,bmi2,fma")))
#define RL_BOIDS 2
#define RL_VF rules_vf_x2
#define RL_VI rules_vi_x2
#define RL_(name) name##_x2
#include "rules_lanes.h"
#undef RL_BOIDS
#undef RL_VF
#undef RL_VI
#undef RL_
#undef RL_TARGET
#define RL_TARGET \
	__attribute__((target("avx512f,avx512bw,avx512cd,avx512dq,avx512vl,avx2,bmi,bmi2,fma")))
#define RL_BOIDS 4
#define RL_VF rules_vf_x4
#define RL_VI rules_vi_x4
#define RL_(name) name##_x4
#include "rules_lanes.h"
#undef RL_BOIDS
#undef RL_VF
#undef RL_VI
#undef RL_
#endif
#endif
#undef RL_TARGET

/* Adds one neighbour to a (for the tests and small loops): d, d2 and vj as
 * in rules_lane_add, vi and vi2 the boid's own velocity. */
static inline void rules_acc_add(struct rules_acc *a, const struct rules_params *p,
				 const float d[3], float d2, const float vj[3],
				 const float vi[3], float vi2)
{
	struct rules_lanes ln;
	struct rules_self s;
	struct rules_acc one;
	int k;

	(void)vi2;
	rules_lanes_init(&ln);
	rules_self_init(&s, p, p->dims, vi);
	{
		const rules_vf z = {0};
		struct rules_cand c = {{0}, z + d[0], z + d[1], z + d[2], z + d2, z + vj[0],
				       z + vj[1], z + vj[2], z, z, z};

		c.valid[0] = -1;
		rules_lanes_add(&ln, p, p->model, p->dims, 0, &c, &s);
	}
	rules_lanes_reduce(ln, p->dims, 0, &one);
	for (k = 0; k < 3; k++) {
		a->sep[k] += one.sep[k];
		a->ali[k] += one.ali[k];
		a->coh[k] += one.coh[k];
	}
	a->n_sep += one.n_sep;
	a->n_ali += one.n_ali;
	a->n_coh += one.n_coh;
}

/* The new position and velocity of one boid (slot k holds boid id at the
 * given step) from its accumulated neighbourhood. */
void rules_update(const struct rules_params *p, const struct rules_acc *a, uint32_t id,
		  uint64_t step, const float pos[3], const float vel[3], float pos_out[3],
		  float vel_out[3]);

/* Colour following: the new hue vector (out[0], out[1]) of a boid whose
 * hue vector is (u[0], u[1]), from the sum of its neighbours' (a->hue,
 * a->n_hue); with a colour velocity (p->hue_spin) also the new rate out[2]
 * from its rate u[2] and a->hue_r. */
void rules_hue_update(const struct rules_params *p, const struct rules_acc *a,
		      const float u[3], float out[3]);

/* Reynolds' acceleration: the weighted sum of the steering forces.
 * Exposed for the tests. */
void rules_acceleration(const struct rules_params *p, const struct rules_acc *a,
			const float pos[3], const float vel[3], double smax, double acc[3]);

/* Reynolds' steering: desired direction scaled to speed.max, minus the
 * velocity, limited to max_force; zero when desired is zero. */
void rules_steer(const struct rules_params *p, const double desired[3],
		 const float vel[3], double smax, double force[3]);

/* Turns unit vector u toward unit vector w by at most the turn limit;
 * writes the result (unit) to out. */
void rules_turn(const struct rules_params *p, int dims, const double u[3],
		const double w[3], double out[3]);

#endif
