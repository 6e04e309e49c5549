/* rules.c: the models of collective motion, every formula in one place:
 *  reynolds  Reynolds, "Flocks, herds and schools: a distributed behavioral
 *            model", SIGGRAPH '87; "Steering behaviors for autonomous
 *            characters", GDC 1999 (steering = desired - velocity,
 *            truncated to max_force);
 *  simple    the widely copied pseudocode boids (velocity += cohesion,
 *            alignment and separation terms), as in Conrad Parker's notes;
 *  vicsek    Vicsek et al., Phys. Rev. Lett. 75, 1226 (1995);
 *  couzin    Couzin et al., J. theor. Biol. 218, 1-11 (2002);
 *  hue       the colour following of the JavaFX flock, as Reynolds'
 *            alignment applied to a heading on the colour circle;
 *  blend, slerp, inertia, accelerate
 *            the update rules of the seed programs boidsim replaces,
 *            from their documents (docs/SEEDS.md): the OpenGL/ImGui flock
 *            (000), the first Unity flock (001), the Unity compute-shader
 *            flock (002) and the JavaFX flock (004).
 * Per-boid arithmetic is in binary64; angles use detmath (no libm). */
#include "config.h"
#include "rules.h"

#include <stddef.h>
#include <math.h>
#include <string.h>

#include "detmath.h"
#include "obstacles.h"
#include "rng.h"

void rules_params_init(struct rules_params *p, const struct scenario *sc)
{
	float r;
	double s, c;

	memset(p, 0, sizeof *p);
	p->model = sc->model;
	p->dims = sc->dims;
	integrate_params_init(&p->ip, sc);
	r = (float)sc->r_sep;
	p->r2_sep = r * r;
	r = (float)sc->r_ali;
	p->r2_ali = r * r;
	r = (float)sc->r_coh;
	p->r2_coh = r * r;
	p->r2_max = sc->model == MODEL_VICSEK || sc->model == MODEL_INERTIA ? p->r2_ali :
		    sc->model == MODEL_SLERP ? p->r2_coh :
		    detmath_fmaxf(p->r2_sep, detmath_fmaxf(p->r2_ali, p->r2_coh));
	p->all_round = sc->view_angle >= 360.0 || sc->model == MODEL_VICSEK;
	detmath_sincos(sc->view_angle / 2.0 * DETMATH_PI / 180.0, &s, &c);
	p->cos_half_view = (float)c;
	p->cos2_half_view = (float)(c * c);
	p->inv_speed = (float)(1.0 / sc->speed_max);
	p->w_sep = sc->w_sep;
	p->w_ali = sc->w_ali;
	p->w_coh = sc->w_coh;
	p->w_target = sc->w_target;
	p->w_bounds = sc->mode == BOUNDS_STEER ? sc->w_bounds : 0.0;
	p->speed_max = sc->speed_max;
	p->max_force = sc->max_force;
	p->has_target = sc->has_target && sc->model != MODEL_BLEND &&
			sc->model != MODEL_ACCELERATE;
	memcpy(p->target, sc->target, sizeof p->target);
	p->noise = sc->noise;
	p->move_new = sc->move_new;
	p->seed = sc->seed;
	/* A turn of half a circle or more per step is no limit at all. */
	p->has_turn = sc->max_turn > 0 && sc->max_turn * sc->dt < 180.0 &&
		      (sc->model == MODEL_REYNOLDS || sc->model == MODEL_SIMPLE ||
		       sc->model == MODEL_COUZIN);
	if (p->has_turn)
		detmath_sincos(sc->max_turn * sc->dt * DETMATH_PI / 180.0, &p->sin_turn,
			       &p->cos_turn);
	detmath_sincos(sc->noise / 2.0, &s, &p->cos_half_noise);
	p->speed_variation = sc->speed_variation;
	p->speed_noise_amp = sc->speed_noise_amp;
	p->speed_noise_period = sc->speed_noise_period;
	p->uniform_speed = sc->speed_variation == 0.0 && sc->speed_noise_amp == 0.0;
	p->target_radius = sc->target_radius;
	p->w_avoid = sc->w_avoid;
	p->r_avoid = sc->r_avoid;
	p->n_attractors = sc->model == MODEL_VICSEK || sc->model == MODEL_COUZIN ?
			  0 : sc->n_attractors;
	p->attractors = sc->attractors;
	p->r_flee = sc->r_flee;
	p->w_flee = sc->w_flee;
	p->has_hue = sc->has_hue;
	if (p->has_hue) {
		r = (float)sc->r_hue;
		p->r2_hue = r * r;
		p->hue_rate = sc->hue_weight * sc->dt;
		p->hue_spin = sc->hue_spin_on;
		p->hue_coh = sc->hue_weight;
		p->hue_ali = sc->hue_alignment;
		p->dt = sc->dt;
	}
	p->has_return = sc->has_return;
	memcpy(p->return_center, sc->return_center, sizeof p->return_center);
	p->return_radius = sc->return_radius;
	p->w_return = sc->w_return;
	p->r_sep = sc->r_sep;
	p->turn_frac = detmath_fmin(1.0, sc->turn_rate * sc->dt);
	if (sc->model == MODEL_INERTIA)
		p->inertia_keep = detmath_exp(-sc->turn_rate * sc->dt);
	p->inv_r_ali = (float)(1.0 / sc->r_ali);
	/* Any bounds mode: the batch's store wraps or reflects as
	 * bounds_apply does, and steer mode's containment, which only
	 * Reynolds', simple and accelerate have, is in their batches; so is
	 * the target, where a model has one (not blend, accelerate, Vicsek
	 * or Couzin; slerp's is its own, not in its batch). Reynolds',
	 * simple's and accelerate's batches take obstacles and attractors
	 * lane by lane (avoid_attract_lanes, finish_lanes); the models that
	 * only collide with obstacles (slerp, inertia, Vicsek, Couzin) take
	 * the collisions lane by lane (store_all). */
	p->fast_batch = p->model == MODEL_REYNOLDS;
	p->fast_blend = p->model == MODEL_BLEND;
	p->fast_simple = p->model == MODEL_SIMPLE || p->model == MODEL_ACCELERATE;
	p->fast_inertia = p->model == MODEL_INERTIA && p->n_attractors == 0;
	p->fast_vicsek = p->model == MODEL_VICSEK;
	p->fast_couzin = p->model == MODEL_COUZIN;
	p->fast_slerp = p->model == MODEL_SLERP && p->n_attractors == 0;
	rules_set_step(p, 0);
}

/* An attractor on waypoints moves linearly between them and rests at the
 * first before it and at the last after it. */
void rules_set_step(struct rules_params *p, uint64_t step)
{
	int a, k, d;

	for (a = 0; a < p->n_attractors; a++) {
		const struct scenario_attractor *at = &p->attractors[a];

		for (k = 0; k + 1 < at->n_points && at->steps[k + 1] <= step; k++)
			;
		for (d = 0; d < p->dims; d++) {
			p->attr_pos[a][d] = at->pos[k][d];
			if (k + 1 < at->n_points && step > at->steps[k]) {
				double f = (double)(step - at->steps[k]) /
					   (double)(at->steps[k + 1] - at->steps[k]);

				p->attr_pos[a][d] += f * (at->pos[k + 1][d] - at->pos[k][d]);
			}
		}
	}
}

/* speed.max x (1 - variation u_i) x (1 - amplitude (nu_i(t) + 1)/2):
 * u_i uniform in [0, 1) per boid; nu_i(t) in [-1, 1] interpolates linearly
 * between values drawn uniformly at t = k period (value noise), so the
 * speed changes smoothly. Both are pure functions of (seed, id, step). */
double rules_cruise(const struct rules_params *p, uint32_t id, uint64_t step)
{
	double s = p->speed_max;
	uint32_t r[4];

	if (p->uniform_speed)
		return s;
	if (p->speed_variation > 0.0) {
		rng_draw4(p->seed, RNG_SPEED_VARIATION, 0, id, 0, r);
		s *= 1.0 - p->speed_variation * rng_unit(r[0], r[1]);
	}
	if (p->speed_noise_amp > 0.0) {
		double t = (double)step * p->ip.dt / p->speed_noise_period, k = floor(t), v0, v1, nu;

		rng_draw4(p->seed, RNG_SPEED_NOISE, 0, id, (uint64_t)k, r);
		v0 = 2.0 * rng_unit(r[0], r[1]) - 1.0;
		rng_draw4(p->seed, RNG_SPEED_NOISE, 0, id, (uint64_t)k + 1, r);
		v1 = 2.0 * rng_unit(r[0], r[1]) - 1.0;
		nu = v0 + (t - k) * (v1 - v0);
		s *= 1.0 - p->speed_noise_amp * (nu + 1.0) / 2.0;
	}
	return s < p->ip.speed_min ? p->ip.speed_min : s;
}

/* ---- vector helpers (binary64) ---- */
static double dot3(const double a[3], const double b[3], int dims)
{
	double s = 0.0;
	int k;

	for (k = 0; k < dims; k++)
		s += a[k] * b[k];
	return s;
}

/* Scales v to unit length; returns 0 when v is zero. */
static int normalize(double v[3], int dims)
{
	double n2 = dot3(v, v, dims), inv;
	int k;

	if (!(n2 > 0.0))
		return 0;
	inv = 1.0 / sqrt(n2);
	for (k = 0; k < dims; k++)
		v[k] *= inv;
	return 1;
}

int rules_normalize(double v[3], int dims)
{
	return normalize(v, dims);
}

/* A unit vector perpendicular to unit u (2D: u turned by +90 degrees). */
static void perpendicular(const double u[3], int dims, double e[3])
{
	if (dims == 2) {
		e[0] = -u[1];
		e[1] = u[0];
		e[2] = 0.0;
		return;
	}
	/* Gram-Schmidt against the axis least aligned with u. */
	if (fabs(u[0]) < 0.9) {
		e[0] = 1.0 - u[0] * u[0];
		e[1] = -u[0] * u[1];
		e[2] = -u[0] * u[2];
	} else {
		e[0] = -u[1] * u[0];
		e[1] = 1.0 - u[1] * u[1];
		e[2] = -u[1] * u[2];
	}
	normalize(e, 3);
}

/* cos(t) u + sin(t) e(phi), e(phi) the unit vector at angle phi around u:
 * in 2D e is the perpendicular (phi ignored; the sign of t turns). */
static void rotate_about(const double u[3], int dims, double c, double s, double phi,
			 double out[3])
{
	double e1[3], e2[3], cp, sp;
	int k;

	perpendicular(u, dims, e1);
	if (dims == 2) {
		for (k = 0; k < 3; k++)
			out[k] = c * u[k] + s * e1[k];
		return;
	}
	e2[0] = u[1] * e1[2] - u[2] * e1[1];
	e2[1] = u[2] * e1[0] - u[0] * e1[2];
	e2[2] = u[0] * e1[1] - u[1] * e1[0];
	detmath_sincos(phi, &sp, &cp);
	for (k = 0; k < 3; k++)
		out[k] = c * u[k] + s * (cp * e1[k] + sp * e2[k]);
}

void rules_turn_limit(double cos_t, double sin_t, int dims, const double u[3],
		      const double w[3], double out[3])
{
	double perp[3], uw = dot3(u, w, dims);
	int k;

	if (uw >= cos_t) {
		memcpy(out, w, 3 * sizeof *w);
		return;
	}
	/* Turn by exactly the limit, in the plane of u and w. */
	for (k = 0; k < 3; k++)
		perp[k] = k < dims ? w[k] - uw * u[k] : 0.0;
	if (!normalize(perp, dims))
		perpendicular(u, dims, perp); /* w opposite u: either way round */
	for (k = 0; k < 3; k++)
		out[k] = cos_t * u[k] + sin_t * perp[k];
}

void rules_turn(const struct rules_params *p, int dims, const double u[3],
		const double w[3], double out[3])
{
	if (!p->has_turn) {
		memcpy(out, w, 3 * sizeof *w);
		return;
	}
	rules_turn_limit(p->cos_turn, p->sin_turn, dims, u, w, out);
}

/* ---- Reynolds ---- */
void rules_steer(const struct rules_params *p, const double desired[3],
		 const float vel[3], double smax, double force[3])
{
	double len2 = 0, f2 = 0, s;
	int k;

	for (k = 0; k < 3; k++)
		force[k] = 0.0;
	for (k = 0; k < p->dims; k++)
		len2 += desired[k] * desired[k];
	if (!(len2 > 0.0))
		return;
	s = smax / sqrt(len2);
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
		     const float vel[3], double smax, double acc[3])
{
	double f[3];
	int k;

	if (w == 0.0)
		return;
	rules_steer(p, desired, vel, smax, f);
	for (k = 0; k < p->dims; k++)
		acc[k] += w * f[k];
}

/* Steer-mode walls: inside the margin of a wall, the direction back into
 * the box along that axis (Reynolds 1999, "containment"); 0 when clear. */
static int containment(const struct rules_params *p, const float pos[3], double desired[3])
{
	int k, near = 0;

	for (k = 0; k < 3; k++)
		desired[k] = 0.0;
	for (k = 0; k < p->dims; k++) {
		if ((double)pos[k] < p->ip.box.lo[k] + p->ip.box.margin)
			desired[k] = 1.0, near = 1;
		else if ((double)pos[k] > p->ip.box.hi[k] - p->ip.box.margin)
			desired[k] = -1.0, near = 1;
	}
	return near;
}

/* The displacement to the target (nearest image under wrap), when it is
 * farther than target.radius; 0 when it pulls not. */
static int target_offset(const struct rules_params *p, const float pos[3], double off[3])
{
	double r2 = 0.0;
	int k;

	if (!p->has_target)
		return 0;
	for (k = 0; k < 3; k++)
		off[k] = 0.0;
	for (k = 0; k < p->dims; k++) {
		off[k] = bounds_min_image(&p->ip.box, k, (float)(p->target[k] - (double)pos[k]));
		r2 += off[k] * off[k];
	}
	return r2 > p->target_radius * p->target_radius;
}

/* Obstacle avoidance: the direction away from obstacle i's nearest surface
 * point when the boid is within radii.avoid of it (back out when inside). */
static int avoid_direction(const struct rules_params *p, int i, const float pos[3],
			   double dir[3])
{
	double x[3] = {0, 0, 0}, q[3], d2 = 0;
	int k, inside;

	for (k = 0; k < p->dims; k++)
		x[k] = pos[k];
	obstacle_nearest(&p->ip.obstacles[i], p->dims, x, q, &inside);
	for (k = 0; k < 3; k++) {
		dir[k] = k < p->dims ? (inside ? q[k] - x[k] : x[k] - q[k]) : 0.0;
		d2 += dir[k] * dir[k];
	}
	return d2 > 0.0 && (inside || d2 <= p->r_avoid * p->r_avoid);
}

/* The obstacles within radii.avoid of pos, in index order (only those the
 * index finds near can be that close): avoid_first, then avoid_next
 * gives each one's direction away (avoid_direction) until it returns 0. */
struct avoid_iter {
	uint16_t buf[OBSTACLE_QUERY_MAX];
	const uint16_t *near;
	int j, m;
};

static void avoid_first(const struct rules_params *p, const float pos[3], struct avoid_iter *it)
{
	it->j = 0;
	it->near = NULL;
	it->m = p->ip.n_obstacles > 0 ?
		integrate_obstacles_near(&p->ip, pos, p->r_avoid, it->buf, &it->near) : 0;
}

static int avoid_next(const struct rules_params *p, const float pos[3], struct avoid_iter *it,
		      double dir[3])
{
	while (it->j < it->m) {
		int i = it->near ? it->near[it->j] : it->j;

		it->j++;
		if (avoid_direction(p, i, pos, dir))
			return 1;
	}
	return 0;
}

/* The displacement to attractor i when the boid is within its range. */
static int attractor_offset(const struct rules_params *p, int i, const float pos[3],
			    double off[3])
{
	double r2 = 0.0, range = p->attractors[i].range;
	int k;

	for (k = 0; k < 3; k++)
		off[k] = 0.0;
	for (k = 0; k < p->dims; k++) {
		off[k] = bounds_min_image(&p->ip.box, k, (float)(p->attr_pos[i][k] - (double)pos[k]));
		r2 += off[k] * off[k];
	}
	return r2 <= range * range && r2 > 0.0;
}

/* The displacement away from predator i (nearest image under wrap) when
 * the boid is within radii.flee of it; 0 when it flees not, or when they
 * coincide (no direction to flee in). */
static int flee_offset(const struct rules_params *p, int i, const float pos[3], double off[3])
{
	double r2 = 0.0;
	int k;

	for (k = 0; k < 3; k++)
		off[k] = 0.0;
	for (k = 0; k < p->dims; k++) {
		off[k] = bounds_min_image(&p->ip.box, k, pos[k] - p->pred_pos[k][i]);
		r2 += off[k] * off[k];
	}
	return r2 <= p->r_flee * p->r_flee && r2 > 0.0;
}

/* rules_acceleration's obstacles and attractors, added to acc in its
 * order (after the bounds, before the predators); the batch update calls
 * it lane by lane. */
static void steer_avoid_attract(const struct rules_params *p, const float pos[3],
				const float vel[3], double smax, double acc[3])
{
	double desired[3] = {0, 0, 0};
	struct avoid_iter it;
	int k;

	/* Obstacles within radii.avoid: steer away from the nearest surface
	 * point (Reynolds 1999, "obstacle avoidance"), weight weights.avoid.
	 * In index order; only those the index finds near can be that close. */
	avoid_first(p, pos, &it);
	while (avoid_next(p, pos, &it, desired))
		add_rule(p, p->w_avoid, desired, vel, smax, acc);
	/* Attractors steer toward themselves with weight strength, repellers
	 * (strength < 0) away, within their range. */
	for (k = 0; k < p->n_attractors; k++) {
		double s = p->attractors[k].strength;
		int e;

		if (!attractor_offset(p, k, pos, desired))
			continue;
		for (e = 0; e < p->dims; e++)
			desired[e] = s < 0 ? -desired[e] : desired[e];
		add_rule(p, fabs(s), desired, vel, smax, acc);
	}
}

void rules_acceleration(const struct rules_params *p, const struct rules_acc *a,
			const float pos[3], const float vel[3], double smax, double acc[3])
{
	double desired[3] = {0, 0, 0};
	int k;

	acc[0] = acc[1] = acc[2] = 0.0;
	/* Separation: sum of (p_i - p_j)/|p_i - p_j|^2. */
	if (a->n_sep > 0) {
		for (k = 0; k < p->dims; k++)
			desired[k] = a->sep[k];
		add_rule(p, p->w_sep, desired, vel, smax, acc);
	}
	/* Alignment: the mean velocity of the neighbours. */
	if (a->n_ali > 0) {
		for (k = 0; k < p->dims; k++)
			desired[k] = (double)a->ali[k] / a->n_ali;
		add_rule(p, p->w_ali, desired, vel, smax, acc);
	}
	/* Cohesion: the mean displacement toward the neighbours. */
	if (a->n_coh > 0) {
		for (k = 0; k < p->dims; k++)
			desired[k] = (double)a->coh[k] / a->n_coh;
		add_rule(p, p->w_coh, desired, vel, smax, acc);
	}
	/* Target: the displacement to it, beyond target.radius. */
	if (target_offset(p, pos, desired))
		add_rule(p, p->w_target, desired, vel, smax, acc);
	if (p->w_bounds != 0.0 && containment(p, pos, desired))
		add_rule(p, p->w_bounds, desired, vel, smax, acc);
	steer_avoid_attract(p, pos, vel, smax, acc);
	/* Flee: from each predator within radii.flee, steer straight away
	 * (Reynolds 1999, "flee"), weight weights.flee, predators in order. */
	for (k = 0; k < p->n_pred; k++)
		if (flee_offset(p, k, pos, desired))
			add_rule(p, p->w_flee, desired, vel, smax, acc);
}

/* ---- simple, accelerate ---- */
/* dv/dt = w_coh (mean d) + w_ali (mean v_j - v) + w_sep sum(p_i - p_j)
 *       + w_target (target - p) + w_bounds (containment direction)
 *       + sum over attractors in range of strength (a - p)/|a - p|
 *       + sum over predators q within radii.flee of w_flee (p - q)/|p - q|
 * The JavaFX flock (accelerate; seed 004, sections 5.1 and 5.3) adds its
 * accelerations the same way, with its own separation, the mean over
 * 0 < |d| <= r_sep of r_sep (p_i - p_j)/|p_i - p_j| (its radius/2 and
 * distance.getNorm()), and no target; its cohesion is the mean of the
 * neighbours' positions, as its text says (its code starts that count at
 * 1, the boid's own place, without adding the boid's position). */
/* acc += w off/|off| (off not zero) */
static void add_toward(double w, const double off[3], int dims, double acc[3])
{
	double n2 = 0.0;
	int k;

	for (k = 0; k < dims; k++)
		n2 += off[k] * off[k];
	for (k = 0; k < dims; k++)
		acc[k] += w * off[k] / sqrt(n2);
}

/* simple_acceleration's obstacles and attractors, added to acc in its
 * order (after the bounds, before the predators); the batch update calls
 * it lane by lane. */
static void simple_avoid_attract(const struct rules_params *p, const float pos[3],
				 double acc[3])
{
	double off[3];
	struct avoid_iter it;
	int i;

	avoid_first(p, pos, &it);
	while (avoid_next(p, pos, &it, off))
		add_toward(p->w_avoid, off, p->dims, acc);
	for (i = 0; i < p->n_attractors; i++)
		if (attractor_offset(p, i, pos, off))
			add_toward(p->attractors[i].strength, off, p->dims, acc);
}

static void simple_acceleration(const struct rules_params *p, const struct rules_acc *a,
				const float pos[3], const float vel[3], double acc[3])
{
	double wall[3], tgt[3], off[3];
	int k, i, near = p->w_bounds != 0.0 && containment(p, pos, wall);
	int pull = target_offset(p, pos, tgt);

	for (k = 0; k < 3; k++)
		acc[k] = 0.0;
	for (k = 0; k < p->dims; k++) {
		if (a->n_coh > 0)
			acc[k] += p->w_coh * ((double)a->coh[k] / a->n_coh);
		if (a->n_ali > 0)
			acc[k] += p->w_ali * ((double)a->ali[k] / a->n_ali - (double)vel[k]);
		if (p->model != MODEL_ACCELERATE)
			acc[k] += p->w_sep * (double)a->sep[k];
		else if (a->n_sep > 0)
			acc[k] += p->w_sep * (p->r_sep * (double)a->sep[k] / a->n_sep);
		if (pull)
			acc[k] += p->w_target * tgt[k];
		if (near)
			acc[k] += p->w_bounds * wall[k];
	}
	simple_avoid_attract(p, pos, acc);
	for (i = 0; i < p->n_pred; i++)
		if (flee_offset(p, i, pos, off))
			add_toward(p->w_flee, off, p->dims, acc);
}

/* Velocity models: v' = v + a dt, then the turn limit, then integrate. */
static void update_velocity_model(const struct rules_params *p, const double acc[3],
				  const float pos[3], const float vel[3], double smax,
				  float pos_out[3], float vel_out[3])
{
	double a[3] = {acc[0], acc[1], acc[2]};
	int k, dims = p->dims;

	if (p->has_turn) {
		double u[3] = {0, 0, 0}, w[3] = {0, 0, 0}, t[3], sp = 0;

		for (k = 0; k < dims; k++) {
			u[k] = vel[k];
			w[k] = (double)vel[k] + acc[k] * p->ip.dt;
		}
		sp = sqrt(dot3(w, w, dims));
		if (normalize(u, dims) && normalize(w, dims)) {
			rules_turn(p, dims, u, w, t);
			/* the acceleration that gives the turned velocity */
			for (k = 0; k < dims; k++)
				a[k] = (t[k] * sp - (double)vel[k]) / p->ip.dt;
		}
	}
	integrate_boid(&p->ip, a, pos, vel, smax, pos_out, vel_out);
}

/* ---- the two noise draws of one boid at one step ---- */
static void noise_uniforms(const struct rules_params *p, uint32_t id, uint64_t step,
			   double *u1, double *u2)
{
	uint32_t r[4];

	rng_draw4(p->seed, RNG_NOISE, 0, id, step, r);
	*u1 = 1.0 - rng_unit(r[0], r[1]); /* (0, 1] */
	*u2 = rng_unit(r[2], r[3]);       /* [0, 1) */
}

/* A third uniform in [0, 1), independent of the first two. */
static double noise_third(const struct rules_params *p, uint32_t id, uint64_t step)
{
	uint32_t r[4];

	rng_draw4(p->seed, RNG_NOISE, 1, id, step, r);
	return rng_unit(r[0], r[1]);
}

/* Constant-speed models: move, store the new heading at speed.max, walls. */
static void finish_heading(const struct rules_params *p, const double h[3], double speed,
			   const double *move, const float pos[3], float pos_out[3],
			   float vel_out[3])
{
	double x[3] = {0, 0, 0};
	int k;

	for (k = 0; k < p->dims; k++) {
		vel_out[k] = (float)(h[k] * speed);
		x[k] = (double)pos[k] + move[k] * p->ip.dt;
	}
	integrate_finish(&p->ip, pos, x, vel_out);
	for (k = 0; k < p->dims; k++)
		pos_out[k] = (float)x[k];
}

/* ---- Vicsek ---- */
/* theta_i(t+1) = <theta(t)>_r + xi, xi uniform in [-eta/2, eta/2]: the mean
 * of the unit headings within r, the boid itself included, turned by xi
 * (in 3D: a direction uniform in the cone of half-angle eta/2 around it).
 * Eq. (1) of the paper moves the particle with v_i(t), the heading it had
 * before this update: x_i(t+1) = x_i(t) + v_i(t) dt; with move_with
 * "new_velocity" it moves with v_i(t+1), the heading just found (the
 * "forward" update of Gregoire and Chate, PRL 92, 025702 (2004)). */
static void vicsek_update(const struct rules_params *p, const struct rules_acc *a,
			  uint32_t id, uint64_t step, const float pos[3], const float vel[3],
			  double speed, float pos_out[3], float vel_out[3])
{
	double own[3] = {0, 0, 0}, m[3] = {0, 0, 0}, h[3], move[3] = {0, 0, 0};
	double u1, u2, s, c;
	int k, dims = p->dims;

	for (k = 0; k < dims; k++) {
		own[k] = (double)vel[k] * (p->uniform_speed ? p->inv_speed : rules_inv_norm(vel, dims));
		m[k] = (double)a->ali[k] + own[k];
		move[k] = vel[k];
	}
	if (!normalize(m, dims)) {
		memcpy(m, own, sizeof m);
		if (!normalize(m, dims))
			m[0] = 1.0; /* a boid at rest with no neighbours heads along x */
	}
	memcpy(h, m, sizeof h);
	if (p->noise > 0.0) {
		noise_uniforms(p, id, step, &u1, &u2);
		if (dims == 2) {
			detmath_sincos(p->noise * (u2 - 0.5), &s, &c);
			rotate_about(m, 2, c, s, 0.0, h);
		} else {
			/* uniform on the spherical cap: cos theta uniform */
			c = 1.0 - u1 * (1.0 - p->cos_half_noise);
			s = sqrt(detmath_fmax(0.0, 1.0 - c * c));
			rotate_about(m, 3, c, s, 2.0 * DETMATH_PI * u2 - DETMATH_PI, h);
		}
		normalize(h, dims);
	}
	if (p->move_new)
		for (k = 0; k < dims; k++)
			move[k] = h[k] * speed;
	finish_heading(p, h, speed, move, pos, pos_out, vel_out);
}

/* The sum of the unit vectors away from the predators within radii.flee;
 * 0 when there is none. */
static int flee_sum(const struct rules_params *p, const float pos[3], double d[3])
{
	double off[3];
	int i, k, n = 0;

	for (i = 0; i < p->n_pred; i++) {
		if (!flee_offset(p, i, pos, off))
			continue;
		normalize(off, p->dims);
		for (k = 0; k < p->dims; k++)
			d[k] += off[k];
		n++;
	}
	return n;
}

/* ---- Couzin ---- */
/* Predators first: d = sum of the unit vectors away from those within
 * radii.flee (a zone of flight above the paper's zones, as in models of
 * predator avoidance built on it). Then repulsion: d = -sum r_ij/|r_ij|
 * over the zone of repulsion. Else
 * d_o = sum v_j/|v_j| (zone of orientation), d_a = sum r_ij/|r_ij| (zone of
 * attraction); both present: d = (d_o/|d_o| + d_a/|d_a|)/2, as in the
 * paper; one: that one; none: keep the heading. Then the heading is turned
 * by a Gaussian angle of s.d. sigma (noise) about a random axis, turned
 * toward d by at most max_turn dt, and the boid moves with the new
 * velocity: c_i(t+dt) = c_i(t) + v_i(t+dt) dt. */
static void couzin_update(const struct rules_params *p, const struct rules_acc *a,
			  uint32_t id, uint64_t step, const float pos[3], const float vel[3],
			  double speed, float pos_out[3], float vel_out[3])
{
	double u[3] = {0, 0, 0}, d[3] = {0, 0, 0}, w[3], h[3];
	int k, dims = p->dims;

	for (k = 0; k < dims; k++)
		u[k] = vel[k];
	if (!normalize(u, dims))
		u[0] = 1.0;
	if (flee_sum(p, pos, d)) {
		/* predators first: away from them, whatever the neighbours do */
	} else if (a->n_sep > 0) {
		for (k = 0; k < dims; k++)
			d[k] = -(double)a->sep[k];
	} else {
		double o[3] = {0, 0, 0}, at[3] = {0, 0, 0};
		int has_o = 0, has_a = 0;

		for (k = 0; k < dims; k++) {
			o[k] = a->ali[k];
			at[k] = a->coh[k];
		}
		if (a->n_ali > 0)
			has_o = normalize(o, dims);
		if (a->n_coh > 0)
			has_a = normalize(at, dims);
		for (k = 0; k < dims; k++)
			d[k] = has_o && has_a ? 0.5 * (o[k] + at[k]) : has_o ? o[k] :
			       has_a ? at[k] : u[k];
	}
	if (!normalize(d, dims))
		memcpy(d, u, sizeof d);
	memcpy(w, d, sizeof w);
	if (p->noise > 0.0) {
		double u1, u2, g, s, c;

		noise_uniforms(p, id, step, &u1, &u2);
		g = p->noise * detmath_normal(u1, u2);
		/* the same rotation for angles that differ by whole turns */
		g = fmod(g, 2.0 * DETMATH_PI);
		if (g > DETMATH_PI)
			g -= 2.0 * DETMATH_PI;
		else if (g < -DETMATH_PI)
			g += 2.0 * DETMATH_PI;
		detmath_sincos(dims == 2 ? g : fabs(g), &s, &c);
		/* 3D: the axis of the turn, uniform around d, from a second draw */
		rotate_about(d, dims, c, s, dims == 2 ? 0.0 :
			     2.0 * DETMATH_PI * noise_third(p, id, step) - DETMATH_PI, w);
		normalize(w, dims);
	}
	rules_turn(p, dims, u, w, h);
	normalize(h, dims);
	for (k = 0; k < dims; k++)
		d[k] = h[k] * speed;
	finish_heading(p, h, speed, d, pos, pos_out, vel_out);
}

/* ---- blend ---- */
/* v scaled to unit length when longer than 1e-6, else zero (seed 000's
 * GetSafeNormal). */
static void safe_unit(double v[3], int dims)
{
	int k;

	if (!(sqrt(dot3(v, v, dims)) > 1e-6)) {
		for (k = 0; k < 3; k++)
			v[k] = 0.0;
		return;
	}
	normalize(v, dims);
}

/* The offset from pos to the return rule's centre (nearest image under
 * wrap); returns whether the boid is beyond return.radius (strictly, seed
 * 000's "> returnDistance"; at_least: ">=", seed 001's ">= 20"). */
static int return_offset(const struct rules_params *p, const float pos[3], int at_least,
			 double off[3])
{
	double r2 = 0.0, R2 = p->return_radius * p->return_radius;
	int k;

	for (k = 0; k < 3; k++)
		off[k] = 0.0;
	for (k = 0; k < p->dims; k++) {
		off[k] = bounds_min_image(&p->ip.box, k,
					  (float)(p->return_center[k] - (double)pos[k]));
		r2 += off[k] * off[k];
	}
	return p->has_return && (at_least ? r2 >= R2 : r2 > R2);
}

/* acc += w unit(off), for the unit-direction terms of blend. */
static void add_unit(double w, double off[3], int dims, double acc[3])
{
	int k;

	if (!normalize(off, dims))
		return;
	for (k = 0; k < dims; k++)
		acc[k] += w * off[k];
}

/* The OpenGL/ImGui flock (seed 000, BoidManager::Tick and its Cal*
 * rules): each rule gives a unit direction (safe_unit),
 *   s = u(mean over r_sep of p_i - p_j),  a = u(mean over r_ali of v_j),
 *   c = u(mean over r_coh of p_j - p_i),
 *   r = u(center - p) beyond return.radius, v itself within it;
 *   f = u(w_sep s + w_ali a + w_coh c + w_return r + the obstacles',
 *         attractors' and predators' unit directions, weighted as in
 *         simple);
 *   v' = speed.max (v + f dt)/|v + f dt|,  p' = p + v' dt.
 * Two readings of the document's code: cohesion toward the neighbours'
 * mean position (its code normalises the centroid before subtracting the
 * position), and the return rule by the distance (its code compares the
 * squared distance with twice the radius). Its loop updates boids in place,
 * so later boids see earlier ones' new state; here every boid sees the
 * previous step's. */
/* blend_update's obstacles, attractors and predators, added to f in its
 * order (after the return rule); the batch update calls it lane by
 * lane. */
static void blend_avoid_attract_flee(const struct rules_params *p, const float pos[3],
				     double f[3])
{
	double off[3];
	struct avoid_iter it;
	int i, dims = p->dims;

	avoid_first(p, pos, &it);
	while (avoid_next(p, pos, &it, off))
		add_unit(p->w_avoid, off, dims, f);
	for (i = 0; i < p->n_attractors; i++)
		if (attractor_offset(p, i, pos, off))
			add_unit(p->attractors[i].strength, off, dims, f);
	for (i = 0; i < p->n_pred; i++)
		if (flee_offset(p, i, pos, off))
			add_unit(p->w_flee, off, dims, f);
}

static void blend_update(const struct rules_params *p, const struct rules_acc *a,
			 const float pos[3], const float vel[3], float pos_out[3],
			 float vel_out[3])
{
	const float *const acc3[3] = {a->sep, a->ali, a->coh};
	const uint32_t cnt[3] = {a->n_sep, a->n_ali, a->n_coh};
	const double w3[3] = {p->w_sep, p->w_ali, p->w_coh};
	double f[3] = {0, 0, 0}, t[3], v[3] = {0, 0, 0}, off[3], move[3] = {0, 0, 0};
	int k, i, dims = p->dims;

	for (i = 0; i < 3; i++) {
		if (cnt[i] == 0)
			continue;
		for (k = 0; k < 3; k++)
			t[k] = k < dims ? (double)acc3[i][k] / cnt[i] : 0.0;
		safe_unit(t, dims);
		for (k = 0; k < dims; k++)
			f[k] += w3[i] * t[k];
	}
	if (p->has_return) {
		if (return_offset(p, pos, 0, off))
			safe_unit(off, dims);
		else
			for (k = 0; k < dims; k++)
				off[k] = vel[k];
		for (k = 0; k < dims; k++)
			f[k] += p->w_return * off[k];
	}
	blend_avoid_attract_flee(p, pos, f);
	safe_unit(f, dims);
	for (k = 0; k < dims; k++)
		v[k] = (double)vel[k] + f[k] * p->ip.dt;
	/* at rest with no rule pulling, v stays zero (normalize leaves it) */
	normalize(v, dims);
	for (k = 0; k < dims; k++)
		move[k] = v[k] * p->speed_max;
	finish_heading(p, v, p->speed_max, move, pos, pos_out, vel_out);
}

/* ---- slerp ---- */
/* Turns unit u toward unit w by the fraction t of the angle between them,
 * along the great circle. Seed 001's Quaternion.Slerp between whole
 * orientations moves the forward axis along the great circle only for a
 * turn in pitch alone or in yaw alone at level flight (boidsim-scenario(5),
 * slerp); with no
 * orientation kept beyond the heading, this is the reading taken.
 * Opposite directions turn either way round (perpendicular). */
static void slerp_unit(const double u[3], const double w[3], double t, int dims,
		       double out[3])
{
	double e[3], c = dot3(u, w, dims), sn, th, s1, c1;
	int k;

	for (k = 0; k < 3; k++)
		e[k] = k < dims ? w[k] - c * u[k] : 0.0;
	sn = sqrt(dot3(e, e, dims));
	if (!(sn > 1e-12)) {
		if (c > 0.0) {
			memcpy(out, t > 0.0 ? w : u, 3 * sizeof *out);
			return;
		}
		perpendicular(u, dims, e);
	} else {
		for (k = 0; k < dims; k++)
			e[k] /= sn;
	}
	th = detmath_atan2(sn, c);
	detmath_sincos(t * th, &s1, &c1);
	for (k = 0; k < 3; k++)
		out[k] = k < dims ? c1 * u[k] + s1 * e[k] : 0.0;
}

/* The first Unity flock (seed 001, BoidController.Update), with the n
 * boids within r_coh (its neighbourDistance):
 *   d = mean(p_j - p_i) + (target - p_i) + sum over |d| < r_sep of
 *       (p_i - p_j)     [vCenter / groupSize + (targetPos - position)
 *                        + vAvoid - position],
 *   u' = slerp(u, d/|d|, min(1, turn_rate dt)),  s' = mean |v_j|
 *       [boidSpeed = groupSpeed / groupSize],
 * then, at return.radius or farther from return.center (its 20 from the
 * origin), u' = slerp(u', unit(center - p), the same fraction) and s' drawn
 * uniform in [speed.min, speed.max] [Random.Range(1, RandomnessSpeed)];
 * the boid moves forward, p' = p + s' u' dt. The document never shows the
 * move; Unity flocks of this kind translate along their forward axis by
 * speed x deltaTime, after turning. Without a target its term is 0. */
static void slerp_update(const struct rules_params *p, const struct rules_acc *a,
			 uint32_t id, uint64_t step, const float pos[3], const float vel[3],
			 float pos_out[3], float vel_out[3])
{
	double u[3] = {0, 0, 0}, d[3] = {0, 0, 0}, tg[3], off[3], h[3], sp;
	int k, dims = p->dims;

	for (k = 0; k < dims; k++)
		u[k] = vel[k];
	sp = sqrt(dot3(u, u, dims));
	if (!normalize(u, dims))
		u[dims - 1] = 1.0; /* at rest: Unity's forward, +z (2D: +y) */
	if (a->n_coh > 0) {
		int pull = target_offset(p, pos, tg);

		for (k = 0; k < dims; k++)
			d[k] = (double)a->coh[k] / a->n_coh + (pull ? tg[k] : 0.0) +
			       (double)a->sep[k];
		sp = (double)a->ali[0] / a->n_coh;
		if (normalize(d, dims)) {
			slerp_unit(u, d, p->turn_frac, dims, h);
			memcpy(u, h, sizeof u);
		}
	}
	if (return_offset(p, pos, 1, off) && normalize(off, dims)) {
		uint32_t r[4];

		slerp_unit(u, off, p->turn_frac, dims, h);
		memcpy(u, h, sizeof u);
		rng_draw4(p->seed, RNG_TURN_SPEED, 0, id, step, r);
		sp = p->ip.speed_min + rng_unit(r[0], r[1]) * (p->speed_max - p->ip.speed_min);
	}
	normalize(u, dims);
	for (k = 0; k < dims; k++)
		d[k] = u[k] * sp;
	finish_heading(p, u, sp, d, pos, pos_out, vel_out);
}

/* ---- inertia ---- */
#define NZ_T double
#define NZ_(name) rules_k_##name
#define NZ_SIN(x) detmath_sin(x)
#define NZ_FLOOR(x) floor(x)
#define NZ_SEL(m, a, b) ((m) ? (a) : (b))
#define NZ_TARGET
#include "rules_noise.h"

double rules_noise002(double x)
{
	return rules_k_noise002(x);
}

/* Boid id's speed factor at a step (rules_noise.h) at t = step dt, its
 * coordinate t / period + o_i, o_i = 1000 x a uniform draw (its
 * Random.value * 1000). */
double rules_inertia_factor(const struct rules_params *p, uint32_t id, uint64_t step)
{
	uint32_t r[4];

	if (p->speed_variation == 0.0)
		return 1.0;
	rng_draw4(p->seed, RNG_NOISE_OFFSET, 0, id, 0, r);
	return rules_k_inertia_factor((double)step * p->ip.dt / p->speed_noise_period +
				      1000.0 * rng_unit(r[0], r[1]), p->speed_variation);
}

/* The Unity compute-shader flock (seed 002, CSMain), with the n boids
 * within R = radii.alignment and the target (its flockPosition) counted
 * as one more (its nearbyCount starts at 1):
 *   a = sum u_j / (n + 1),  u_j = v_j / speed.max, the neighbours'
 *       directions,
 *   c = unit((target - p_i + sum d_j) / (n + 1))  [(flockPosition + sum
 *       p_j) / (n + 1) - p_i],
 *   s = sum (p_i - p_j)(1 / max(|d|, 1e-6) - 1 / R),
 *   u' = lerp(a + s + c, u / |u|, e^(-turn_rate dt)),
 *   p' = p + u' speed.max f_i(t) dt  (f_i: rules_inertia_factor).
 * The direction is not normalised, as in the program: the velocity
 * written is u' speed.max, and the boid moves by it times f_i(t). Without
 * a target, the count's 1 is the boid itself, as the program's comment
 * says: c = unit(sum d_j / (n + 1)). Its kernel updates the buffer in
 * place while other threads read it; here every boid sees the previous
 * step's state. */
static void inertia_update(const struct rules_params *p, const struct rules_acc *a,
			   uint32_t id, uint64_t step, const float pos[3], const float vel[3],
			   float pos_out[3], float vel_out[3])
{
	const double inv_n = 1.0 / ((double)a->n_ali + 1.0), keep = p->inertia_keep;
	double u[3] = {0, 0, 0}, c[3] = {0, 0, 0}, tg[3] = {0, 0, 0}, dir[3] = {0, 0, 0};
	double move[3] = {0, 0, 0}, x[3] = {0, 0, 0}, f;
	int k, dims = p->dims;

	if (p->has_target)
		target_offset(p, pos, tg);
	for (k = 0; k < dims; k++) {
		u[k] = (double)vel[k] / p->speed_max;
		c[k] = (tg[k] + (double)a->coh[k]) * inv_n;
	}
	normalize(u, dims);
	normalize(c, dims);
	f = rules_inertia_factor(p, id, step);
	for (k = 0; k < dims; k++) {
		double d = (double)a->ali[k] / p->speed_max * inv_n + (double)a->sep[k] + c[k];

		dir[k] = d + keep * (u[k] - d);
		vel_out[k] = (float)(dir[k] * p->speed_max);
		move[k] = dir[k] * p->speed_max * f;
		x[k] = (double)pos[k] + move[k] * p->ip.dt;
	}
	integrate_finish(&p->ip, pos, x, vel_out);
	for (k = 0; k < dims; k++)
		pos_out[k] = (float)x[k];
}

/* ---- colour following ---- */
/* The JavaFX flock (one of the programs boidsim replaces; its report
 * describes it) gives each boid a colour that follows its neighbours'
 * colours, by alignment and cohesion on the hue. Here the hue h is a unit
 * vector u = (cos 2 pi h, sin 2 pi h), a heading on the colour circle, so
 * that its mean is defined across the wrap from 1 to 0.
 *
 * Without a colour velocity, steering toward the neighbours' mean heading
 * (Reynolds' alignment) and toward their mean position (cohesion) are on
 * the circle the same term, so there is one rate, w = hue.weight:
 *   u' = normalize(u + w dt (m - u)),  m = (1/|H|) sum(j in H) u_j,
 * H the neighbours seen within hue.radius, in binary64 from the binary32
 * sum. A boid without such neighbours, or whose u' would be zero, keeps u.
 *
 * With one (hue.alignment or hue.spin): the report (its section 5, "the
 * colour vector") moves the colour vector by the motion's rules, cohesion
 * and alignment but no separation, so that colours agree within a group
 * and keep changing through alignment. A velocity fixed in the colour
 * plane would bring every hue to rest along it, so the colour velocity is
 * kept tangent to the circle, w = r perp(u) with perp(u) = (-u_y, u_x) and
 * r the rate in radians per unit time. Cohesion is the report's vector
 * term projected on perp(u), the part that can turn u; alignment compares
 * velocities at different points of the circle, which is done by carrying
 * each along the circle (parallel transport), so that it compares rates:
 *   cohesion   C (m - u) . perp(u) = C m . perp(u),
 *   alignment  A ((1/|H|) sum(j in H) r_j - r),
 *   r' = r + dt (cohesion + alignment)    (none without neighbours),
 *   u' = normalize(u + dt r' perp(u)),
 * C = hue.weight, A = hue.alignment; the neighbour loops sum u_j and r_j
 * in binary32, the rest is binary64. Alignment moves rates toward their
 * neighbours' mean and cohesion pulls hues together, so a group's colours
 * lock and turn together at about its members' mean rate (a Kuramoto
 * model with inertia); rates start uniform in hue.spin's range.
 * The hue never changes motion. */
void rules_hue_update(const struct rules_params *p, const struct rules_acc *a,
		      const float u[3], float out[3])
{
	double v[2], n2;
	int k;

	out[0] = u[0];
	out[1] = u[1];
	if (p->hue_spin) {
		const double ux = u[0], uy = u[1];
		double r = u[2];

		if (a->n_hue > 0) {
			const double n = a->n_hue;
			const double coh = ((double)a->hue[1] * ux - (double)a->hue[0] * uy) / n;
			const double ali = (double)a->hue_r / n - r;

			r += p->dt * (p->hue_coh * coh + p->hue_ali * ali);
		}
		out[2] = (float)r;
		v[0] = ux - p->dt * (double)out[2] * uy;
		v[1] = uy + p->dt * (double)out[2] * ux;
	} else {
		if (a->n_hue == 0)
			return;
		for (k = 0; k < 2; k++)
			v[k] = (double)u[k] + p->hue_rate * ((double)a->hue[k] / a->n_hue - (double)u[k]);
	}
	n2 = v[0] * v[0] + v[1] * v[1];
	if (!(n2 > 0.0))
		return;
	n2 = 1.0 / sqrt(n2);
	out[0] = (float)(v[0] * n2);
	out[1] = (float)(v[1] * n2);
}

void rules_update(const struct rules_params *p, const struct rules_acc *a, uint32_t id,
		  uint64_t step, const float pos[3], const float vel[3], float pos_out[3],
		  float vel_out[3])
{
	double acc[3], smax = p->speed_max;

	if (p->model != MODEL_BLEND && p->model != MODEL_SLERP && p->model != MODEL_INERTIA)
		smax = rules_cruise(p, id, step);
	switch (p->model) {
	case MODEL_REYNOLDS:
		rules_acceleration(p, a, pos, vel, smax, acc);
		update_velocity_model(p, acc, pos, vel, smax, pos_out, vel_out);
		break;
	case MODEL_SIMPLE:
		simple_acceleration(p, a, pos, vel, acc);
		update_velocity_model(p, acc, pos, vel, smax, pos_out, vel_out);
		break;
	case MODEL_VICSEK:
		vicsek_update(p, a, id, step, pos, vel, smax, pos_out, vel_out);
		break;
	case MODEL_COUZIN:
		couzin_update(p, a, id, step, pos, vel, smax, pos_out, vel_out);
		break;
	case MODEL_BLEND:
		blend_update(p, a, pos, vel, pos_out, vel_out);
		break;
	case MODEL_SLERP:
		slerp_update(p, a, id, step, pos, vel, pos_out, vel_out);
		break;
	case MODEL_INERTIA:
		inertia_update(p, a, id, step, pos, vel, pos_out, vel_out);
		break;
	case MODEL_ACCELERATE:
		simple_acceleration(p, a, pos, vel, acc);
		update_velocity_model(p, acc, pos, vel, smax, pos_out, vel_out);
		break;
	}
}

/* ---- RULES_BATCH boids at a time ---- */
/* rules_acceleration and integrate_boid for p->fast_batch (Reynolds'
 * model; its obstacles and attractors lane by lane), in vectors of RULES_BATCH binary64 lanes, one boid each: every branch of the
 * scalar code is a select of both sides, each side the same IEEE
 * operations in the same order, so every lane gets the scalar bits.
 * Measured slower than the scalar code on baseline x86-64 (where the
 * vectors are split in four and the square roots are not vectorised), so
 * it exists only compiled for AVX-512 and for AVX2. */
#if defined(__x86_64__) && defined(__GNUC__) && defined(__has_attribute)
#if __has_attribute(target)
#define RULES_AVX512 \
	__attribute__((target("avx512f,avx512bw,avx512cd,avx512dq,avx512vl,avx2,bmi,bmi2,fma")))
#define RULES_AVX2 __attribute__((target("avx2,bmi,bmi2,fma")))
#endif
#endif

#ifdef RULES_AVX512
/* The helpers below take and return vectors wider than the baseline ABI
 * has registers for; they are always inlined into the targeted functions,
 * so no call ever passes one, and gcc's note that the ABI would differ
 * does not apply. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wpsabi"
#endif
#include <immintrin.h> /* (rules_batch.h's floor) */
#define RB_TARGET RULES_AVX512
#define RB_(name) name##_avx512
#define RB_W 8
#include "rules_batch.h"
#undef RB_TARGET
#undef RB_
#undef RB_W
#define RB_TARGET RULES_AVX2
#define RB_(name) name##_avx2
#define RB_W 4
#include "rules_batch.h"
#undef RB_TARGET
#undef RB_
#undef RB_W
#else
int rules_update_batch_avx512(const struct rules_params *p,
			      const struct rules_acc acc[RULES_BATCH], int nb, size_t k,
			      const uint32_t *id, uint64_t step, const float *const pos[3],
			      const float *const vel[3], float *const pos_out[3],
			      float *const vel_out[3])
{
	(void)p, (void)acc, (void)nb, (void)k, (void)id, (void)step, (void)pos, (void)vel,
		(void)pos_out, (void)vel_out;
	return 0;
}

int rules_update_batch_avx2(const struct rules_params *p,
			    const struct rules_acc acc[RULES_BATCH], int nb, size_t k,
			    const uint32_t *id, uint64_t step, const float *const pos[3],
			    const float *const vel[3], float *const pos_out[3],
			    float *const vel_out[3])
{
	return rules_update_batch_avx512(p, acc, nb, k, id, step, pos, vel, pos_out, vel_out);
}
#endif
