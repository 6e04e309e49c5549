/* rules.h: the models of collective motion: per-neighbour accumulation
 * (inline, called from the neighbour loops) and the per-boid update. The
 * formulas are all in rules.c. */
#ifndef BOIDSIM_RULES_H
#define BOIDSIM_RULES_H

#include <math.h>
#include <stdint.h>
#include "bounds.h"
#include "integrate.h"
#include "scenario.h"

struct rules_params {
	enum model_kind model;
	int dims;
	struct bounds box;
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
	struct integrate_params ip;
};

/* What one boid gathers from its neighbours. Sums run in binary32 in the
 * order the neighbour loop visits them, which depends on the data only.
 * What each sum holds depends on the model (rules.c). */
struct rules_acc {
	float sep[3], ali[3], coh[3];
	uint32_t n_sep, n_ali, n_coh;
};

void rules_params_init(struct rules_params *p, const struct scenario *sc);

/* Positions that move with time (attractors on waypoints) at this step. */
void rules_set_step(struct rules_params *p, uint64_t step);

/* Boid id's largest speed at this step: speed.max, lowered by its own
 * speed.variation draw and its speed.noise fluctuation, never below
 * speed.min. */
double rules_cruise(const struct rules_params *p, uint32_t id, uint64_t step);

/* 1/|v|, or 0 for a zero vector. */
static inline float rules_inv_norm(const float v[3], const int dims)
{
	float n2 = v[0] * v[0] + v[1] * v[1] + (dims == 3 ? v[2] * v[2] : 0.0f);

	return n2 > 0.0f ? 1.0f / sqrtf(n2) : 0.0f;
}

static inline void rules_acc_init(struct rules_acc *a)
{
	*a = (struct rules_acc){{0, 0, 0}, {0, 0, 0}, {0, 0, 0}, 0, 0, 0};
}

/* Whether a neighbour at d (d2 = |d|^2) is inside the field of view of a
 * boid heading along vi (not necessarily unit; zero sees all round). */
static inline __attribute__((always_inline)) int
rules_sees(const struct rules_params *p, const int dims, const float d[3], float d2,
	   const float vi[3], float vi2)
{
	float dot = 0.0f;
	int k;

	if (p->all_round || vi2 == 0.0f)
		return 1;
	for (k = 0; k < dims; k++)
		dot += d[k] * vi[k];
	/* dot >= |d||vi| cos(a/2), squared to avoid two square roots */
	if (p->cos_half_view >= 0.0f)
		return dot >= 0.0f && dot * dot >= p->cos2_half_view * d2 * vi2;
	return dot >= 0.0f || dot * dot <= p->cos2_half_view * d2 * vi2;
}

/* Neighbour j seen from boid i: d = p_j - p_i (minimum image), d2 = |d|^2,
 * vj = v_j; vi, vi2: boid i's velocity and its square, for the field of
 * view. Which sum a neighbour enters is the model's (rules.c, section
 * "Neighbours"); coincident boids (d2 == 0) give no direction and are
 * skipped by the rules that need one. */
static inline __attribute__((always_inline)) void
rules_acc_add_model(struct rules_acc *a, const struct rules_params *p,
		    const enum model_kind model, const int dims, const float d[3], float d2,
		    const float vj[3], const float vi[3], float vi2)
{
	int k;

	if (!rules_sees(p, dims, d, d2, vi, vi2))
		return;
	switch (model) {
	case MODEL_REYNOLDS:
	case MODEL_SIMPLE:
		/* Reynolds (1987) section 4: separation along p_i - p_j weighted
		 * by 1/|d| (so the sum of (p_i - p_j)/|d|^2), alignment averages
		 * v_j, cohesion averages d. The pseudocode boids (simple) sum
		 * p_i - p_j unweighted. */
		if (d2 <= p->r2_sep && (d2 > 0.0f || model == MODEL_SIMPLE)) {
			for (k = 0; k < dims; k++)
				a->sep[k] -= model == MODEL_SIMPLE ? d[k] : d[k] / d2;
			a->n_sep++;
		}
		if (d2 <= p->r2_ali) {
			for (k = 0; k < dims; k++)
				a->ali[k] += vj[k];
			a->n_ali++;
		}
		if (d2 <= p->r2_coh) {
			for (k = 0; k < dims; k++)
				a->coh[k] += d[k];
			a->n_coh++;
		}
		break;
	case MODEL_VICSEK:
		/* Vicsek et al. (1995): the headings of all within r. */
		if (d2 <= p->r2_ali) {
			const float inv = p->uniform_speed ? p->inv_speed : rules_inv_norm(vj, dims);

			for (k = 0; k < dims; k++)
				a->ali[k] += vj[k] * inv;
			a->n_ali++;
		}
		break;
	case MODEL_COUZIN:
		/* Couzin et al. (2002): three exclusive zones; repulsion and
		 * attraction sum unit directions, orientation unit headings. */
		if (d2 == 0.0f) {
			break;
		} else if (d2 <= p->r2_sep) {
			float inv = 1.0f / sqrtf(d2);

			for (k = 0; k < dims; k++)
				a->sep[k] += d[k] * inv;
			a->n_sep++;
		} else if (d2 <= p->r2_ali) {
			const float inv = p->uniform_speed ? p->inv_speed : rules_inv_norm(vj, dims);

			for (k = 0; k < dims; k++)
				a->ali[k] += vj[k] * inv;
			a->n_ali++;
		} else if (d2 <= p->r2_coh) {
			float inv = 1.0f / sqrtf(d2);

			for (k = 0; k < dims; k++)
				a->coh[k] += d[k] * inv;
			a->n_coh++;
		}
		break;
	}
}

/* The same, with the model from p; the neighbour loops call the form
 * above with a constant model so that each model gets its own loop. */
static inline __attribute__((always_inline)) void
rules_acc_add(struct rules_acc *a, const struct rules_params *p, const float d[3],
	      float d2, const float vj[3], const float vi[3], float vi2)
{
	rules_acc_add_model(a, p, p->model, p->dims, d, d2, vj, vi, vi2);
}

/* The new position and velocity of one boid (slot k holds boid id at the
 * given step) from its accumulated neighbourhood. */
void rules_update(const struct rules_params *p, const struct rules_acc *a, uint32_t id,
		  uint64_t step, const float pos[3], const float vel[3], float pos_out[3],
		  float vel_out[3]);

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
