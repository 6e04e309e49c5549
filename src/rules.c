/* rules.c: the Reynolds flocking model, every formula in one place.
 * Reynolds, "Flocks, herds and schools: a distributed behavioral model",
 * SIGGRAPH '87; Reynolds, "Steering behaviors for autonomous characters",
 * GDC 1999 (steering = desired velocity - velocity, truncated to max_force). */
#include "config.h"
#include "rules.h"

#include <math.h>
#include <string.h>

void rules_params_init(struct rules_params *p, const struct scenario *sc)
{
	float r;

	memset(p, 0, sizeof *p);
	p->dims = sc->dims;
	bounds_init(&p->box, sc);
	r = (float)sc->r_sep;
	p->r2_sep = r * r;
	r = (float)sc->r_ali;
	p->r2_ali = r * r;
	r = (float)sc->r_coh;
	p->r2_coh = r * r;
	p->r2_max = fmaxf(p->r2_sep, fmaxf(p->r2_ali, p->r2_coh));
	p->w_sep = sc->w_sep;
	p->w_ali = sc->w_ali;
	p->w_coh = sc->w_coh;
	p->w_target = sc->w_target;
	p->w_bounds = sc->mode == BOUNDS_STEER ? sc->w_bounds : 0.0;
	p->speed_max = sc->speed_max;
	p->max_force = sc->max_force;
	p->has_target = sc->has_target;
	memcpy(p->target, sc->target, sizeof p->target);
}

void rules_steer(const struct rules_params *p, const double desired[3],
		 const float vel[3], double force[3])
{
	double len2 = 0, f2 = 0, s;
	int k;

	for (k = 0; k < 3; k++)
		force[k] = 0.0;
	for (k = 0; k < p->dims; k++)
		len2 += desired[k] * desired[k];
	if (!(len2 > 0.0))
		return;
	s = p->speed_max / sqrt(len2);
	for (k = 0; k < p->dims; k++) {
		force[k] = desired[k] * s - (double)vel[k];
		f2 += force[k] * force[k];
	}
	if (f2 > p->max_force * p->max_force) {
		s = p->max_force / sqrt(f2);
		for (k = 0; k < p->dims; k++)
			force[k] *= s;
	}
}

/* acc += w * steer(desired) */
static void add_rule(const struct rules_params *p, double w, const double desired[3],
		     const float vel[3], double acc[3])
{
	double f[3];
	int k;

	if (w == 0.0)
		return;
	rules_steer(p, desired, vel, f);
	for (k = 0; k < p->dims; k++)
		acc[k] += w * f[k];
}

void rules_acceleration(const struct rules_params *p, const struct rules_acc *a,
			const float pos[3], const float vel[3], double acc[3])
{
	double desired[3] = {0, 0, 0};
	int k;

	acc[0] = acc[1] = acc[2] = 0.0;
	/* Separation: sum of (p_i - p_j)/|p_i - p_j|^2. */
	if (a->n_sep > 0) {
		for (k = 0; k < p->dims; k++)
			desired[k] = a->sep[k];
		add_rule(p, p->w_sep, desired, vel, acc);
	}
	/* Alignment: the mean velocity of the neighbours. */
	if (a->n_ali > 0) {
		for (k = 0; k < p->dims; k++)
			desired[k] = (double)a->ali[k] / a->n_ali;
		add_rule(p, p->w_ali, desired, vel, acc);
	}
	/* Cohesion: the mean displacement toward the neighbours. */
	if (a->n_coh > 0) {
		for (k = 0; k < p->dims; k++)
			desired[k] = (double)a->coh[k] / a->n_coh;
		add_rule(p, p->w_coh, desired, vel, acc);
	}
	/* Target: the displacement to the target (nearest image under wrap). */
	if (p->has_target) {
		for (k = 0; k < p->dims; k++)
			desired[k] = bounds_min_image(&p->box, k,
				(float)(p->target[k] - (double)pos[k]));
		add_rule(p, p->w_target, desired, vel, acc);
	}
	/* Steer-mode walls: inside the margin of a wall, turn back toward the
	 * box along that axis (Reynolds 1999, "containment"). */
	if (p->w_bounds != 0.0) {
		int near = 0;

		for (k = 0; k < p->dims; k++) {
			desired[k] = 0.0;
			if ((double)pos[k] < p->box.lo[k] + p->box.margin)
				desired[k] = 1.0, near = 1;
			else if ((double)pos[k] > p->box.hi[k] - p->box.margin)
				desired[k] = -1.0, near = 1;
		}
		if (near)
			add_rule(p, p->w_bounds, desired, vel, acc);
	}
}
