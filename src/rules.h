/* rules.h: the Reynolds steering rules: per-neighbour accumulation (inline,
 * called from the neighbour loops) and the per-boid steering forces. */
#ifndef BOIDSIM_RULES_H
#define BOIDSIM_RULES_H

#include <stdint.h>
#include "bounds.h"
#include "scenario.h"

struct rules_params {
	int dims;
	struct bounds box;
	/* Squared radii in binary32: "within r" means |d|^2 <= r^2 computed
	 * in binary32, so a neighbour exactly at the radius counts. */
	float r2_sep, r2_ali, r2_coh, r2_max;
	double w_sep, w_ali, w_coh, w_target, w_bounds;
	double speed_max, max_force;
	int has_target;
	double target[3];
};

/* What one boid gathers from its neighbours. Sums run in binary32 in the
 * order the neighbour loop visits them, which depends on the data only. */
struct rules_acc {
	float sep[3], ali[3], coh[3];
	uint32_t n_sep, n_ali, n_coh;
};

void rules_params_init(struct rules_params *p, const struct scenario *sc);

static inline void rules_acc_init(struct rules_acc *a)
{
	*a = (struct rules_acc){{0, 0, 0}, {0, 0, 0}, {0, 0, 0}, 0, 0, 0};
}

/* Neighbour j seen from boid i: d = p_j - p_i (minimum image), d2 = |d|^2,
 * v = v_j. Reynolds (1987), "Flocks, herds and schools", section 4:
 * separation pushes along p_i - p_j weighted by 1/|d| (so the sum of
 * (p_i - p_j)/|d|^2), alignment averages v_j, cohesion averages d.
 * Coincident boids (d2 == 0) give separation no direction and are skipped
 * by it; they still count for alignment and cohesion. */
static inline void rules_acc_add(struct rules_acc *a, const struct rules_params *p,
				 const float d[3], float d2, const float v[3])
{
	int k;

	if (d2 <= p->r2_sep && d2 > 0.0f) {
		for (k = 0; k < p->dims; k++)
			a->sep[k] -= d[k] / d2;
		a->n_sep++;
	}
	if (d2 <= p->r2_ali) {
		for (k = 0; k < p->dims; k++)
			a->ali[k] += v[k];
		a->n_ali++;
	}
	if (d2 <= p->r2_coh) {
		for (k = 0; k < p->dims; k++)
			a->coh[k] += d[k];
		a->n_coh++;
	}
}

/* Acceleration of a boid at pos with velocity vel from its accumulated
 * neighbourhood: the weighted sum of the steering forces. */
void rules_acceleration(const struct rules_params *p, const struct rules_acc *a,
			const float pos[3], const float vel[3], double acc[3]);

/* Reynolds' steering: desired direction scaled to speed.max, minus the
 * velocity, limited to max_force; zero when desired is zero. Exposed for
 * the tests. */
void rules_steer(const struct rules_params *p, const double desired[3],
		 const float vel[3], double force[3]);

#endif
