/* integrate.c: semi-implicit Euler step of velocity then position. */
#include "config.h"
#include "integrate.h"

#include <float.h>
#include <math.h>
#include <string.h>

#include "detmath.h"
#include "obstacles.h"

void integrate_params_init(struct integrate_params *ip, const struct scenario *sc)
{
	ip->dims = sc->dims;
	ip->dt = sc->dt;
	ip->speed_min = sc->speed_min;
	ip->speed_max = sc->speed_max;
	bounds_init(&ip->box, sc);
	ip->n_obstacles = sc->n_obstacles;
	ip->obstacles = sc->obstacles;
	ip->obstacle_index = sc->obstacle_index;
}

int integrate_obstacles_in(const struct integrate_params *ip, const double lo[3],
			   const double hi[3], uint16_t buf[OBSTACLE_QUERY_MAX],
			   const uint16_t **list)
{
	int m = obstacle_index_query(ip->obstacle_index, lo, hi, buf, list);

	if (m < 0) {
		*list = NULL;
		return ip->n_obstacles;
	}
	return m;
}

int integrate_obstacles_near(const struct integrate_params *ip, const float pos[3], double r,
			     uint16_t buf[OBSTACLE_QUERY_MAX], const uint16_t **list)
{
	double lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
	int k;

	if (ip->obstacle_index == NULL) {
		*list = NULL;
		return ip->n_obstacles;
	}
	for (k = 0; k < ip->dims; k++) {
		lo[k] = (double)pos[k] - r;
		hi[k] = (double)pos[k] + r;
	}
	return integrate_obstacles_in(ip, lo, hi, buf, list);
}

/* A move gives up bouncing after this many bounces, and a boid pushed
 * out of obstacles this many times in all goes back (integrate_finish). */
#define INTEGRATE_BOUNCES 8
#define INTEGRATE_PASSES 64

/* bounds_apply, keeping in x the exact point that p stands for: under
 * wrap the walls also round p to binary32 (bounds_wrap1), so x is p
 * before that, moved by the whole boxes p was. */
static void finish_bounds(const struct integrate_params *ip, double p[3], float vel[3],
			  double x[3])
{
	const struct bounds *b = &ip->box;
	int k;

	memcpy(x, p, 3 * sizeof *x);
	bounds_apply(b, p, vel);
	if (b->mode == BOUNDS_WRAP)
		for (k = 0; k < ip->dims; k++)
			x[k] += nearbyint((p[k] - x[k]) / b->len[k]) * b->len[k];
}

/* Whether rounding x (the end of a move, off the segment o's line) to pf
 * (binary32) put it on or across the line, within the segment's length
 * (OBSTACLE_END_TOL further at each end, as obstacle_hit): then p and x
 * become the binary32 point nearest x along the line's normal on x's
 * side, a few units in the last place away, and 1. */
static int segment_rounding(const struct obstacle *o, double x[3], double p[3],
			    const double pf[3])
{
	const double sp = obstacle_side(o, x), sf = obstacle_side(o, pf);
	const double e0 = o->b[0] - o->a[0], e1 = o->b[1] - o->a[1], l2 = e0 * e0 + e1 * e1;
	double w, n[2], len, ulp, big;
	int i, k;

	if (sp == 0.0 || (sf != 0.0 && (sf > 0.0) == (sp > 0.0)) || l2 == 0.0)
		return 0;
	w = ((pf[0] - o->a[0]) * e0 + (pf[1] - o->a[1]) * e1) / l2;
	if (w < -OBSTACLE_END_TOL || w > 1.0 + OBSTACLE_END_TOL)
		return 0;
	/* the unit normal on p's side: obstacle_side is positive on (-e1, e0)'s */
	len = sqrt(l2);
	n[0] = (sp > 0.0 ? -e1 : e1) / len;
	n[1] = (sp > 0.0 ? e0 : -e0) / len;
	big = fmax(fmax(fabs(x[0]), fabs(x[1])), (double)FLT_MIN);
	ulp = ldexp(1.0, ilogb(big) - (FLT_MANT_DIG - 1));
	for (i = 1; i <= 64; i *= 2) {
		double c[3] = {0, 0, 0}, sc;

		for (k = 0; k < 2; k++)
			c[k] = (float)(x[k] + i * ulp * n[k]);
		sc = obstacle_side(o, c);
		if (sc != 0.0 && (sc > 0.0) == (sp > 0.0)) {
			for (k = 0; k < 2; k++)
				p[k] = x[k] = c[k];
			return 1;
		}
	}
	return 0;
}

int integrate_inside(const struct integrate_params *ip, const double x[3])
{
	uint16_t buf[OBSTACLE_QUERY_MAX];
	const uint16_t *near;
	int j, m = integrate_obstacles_in(ip, x, x, buf, &near);

	for (j = 0; j < m; j++)
		if (obstacle_inside(&ip->obstacles[near ? near[j] : j], ip->dims, x))
			return near ? near[j] : j;
	return -1;
}

/* Whether c is a place to stay: inside the box where the walls keep boids
 * in it, outside every obstacle, and reached from x without crossing a
 * segment. c holds binary32 values. */
static int free_place(const struct integrate_params *ip, const double x[3], const double c[3])
{
	const struct bounds *b = &ip->box;
	double lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
	uint16_t buf[OBSTACLE_QUERY_MAX];
	const uint16_t *near;
	int k, j, m;

	for (k = 0; k < ip->dims; k++) {
		if ((b->mode == BOUNDS_WRAP && !(c[k] >= b->lo_f[k] && c[k] < b->hi_f[k])) ||
		    (b->mode == BOUNDS_REFLECT && !(c[k] >= b->lo_f[k] && c[k] <= b->hi_f[k])))
			return 0;
		lo[k] = fmin(x[k], c[k]);
		hi[k] = fmax(x[k], c[k]);
	}
	if (integrate_inside(ip, c) >= 0)
		return 0;
	m = integrate_obstacles_in(ip, lo, hi, buf, &near);
	for (j = 0; j < m; j++) {
		const struct obstacle *o = &ip->obstacles[near ? near[j] : j];
		double t, n[3];

		if (o->kind == OBSTACLE_SEGMENT && obstacle_hit(o, ip->dims, x, c, &t, n))
			return 0;
	}
	return 1;
}

/* A boid that the push-out keeps sending from one obstacle into another
 * (two that overlap, one reaching past a reflecting wall) goes back to
 * where its step began, turned round, when that place is free (it is,
 * unless obstacles appeared there this step); else to the nearest free
 * place found on rays from where it is, in 16 directions (2D) or 26 (3D),
 * at distances doubling from 1e-5 of its largest coordinate. Where there
 * is none it stays. */
static void escape(const struct integrate_params *ip, const float pos[3], double p[3],
		   float vel[3])
{
	double x[3] = {0, 0, 0}, c[3] = {0, 0, 0}, scale = 1.0, r;
	int k, i, dims = ip->dims;

	for (k = 0; k < dims; k++) {
		x[k] = (float)p[k];
		c[k] = pos[k];
		scale = fmax(scale, fabs(x[k]));
	}
	if (free_place(ip, x, c)) {
		for (k = 0; k < dims; k++) {
			p[k] = c[k];
			vel[k] = -vel[k];
		}
		return;
	}
	for (r = 1e-5 * scale; r < 1e6 * scale; r *= 2.0) {
		for (i = 0; i < (dims == 2 ? 16 : 27); i++) {
			double u[3] = {0, 0, 0}, len = 0.0;

			if (dims == 2) {
				detmath_sincos(DETMATH_PI / 8.0 * i, &u[1], &u[0]);
			} else {
				if (i == 13) /* (0, 0, 0) */
					continue;
				u[0] = i / 9 - 1;
				u[1] = i / 3 % 3 - 1;
				u[2] = i % 3 - 1;
			}
			for (k = 0; k < dims; k++)
				len += u[k] * u[k];
			len = sqrt(len);
			for (k = 0; k < dims; k++)
				c[k] = (float)(x[k] + r * u[k] / len);
			if (free_place(ip, x, c)) {
				memcpy(p, c, 3 * sizeof *p);
				return;
			}
		}
	}
}

void integrate_finish(const struct integrate_params *ip, const float pos[3], double p[3],
		      float vel[3])
{
	double p0[3] = {0, 0, 0}, v[3] = {0, 0, 0}, lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
	double x[3]; /* the exact point p stands for (finish_bounds) */
	uint16_t buf[OBSTACLE_QUERY_MAX];
	const uint16_t *near;
	int k, pass, i, j, m, hit = 0, pushed, reuse, dims = ip->dims;

	if (ip->n_obstacles == 0) {
		bounds_apply(&ip->box, p, vel);
		return;
	}
	for (k = 0; k < dims; k++) {
		p0[k] = pos[k];
		v[k] = vel[k];
	}
	/* A bounce can send the rest of the move into another obstacle:
	 * follow it a few times from each point of impact. Each time the
	 * obstacle the move touches first (the least t; of equal ones, the
	 * first in index order): another that the move also enters, further
	 * on, lies beyond that surface. Only those near the move can be hit
	 * (integrate_obstacles_in), the others would all miss. A move still
	 * bouncing after INTEGRATE_BOUNCES stops at its last point of
	 * impact, outside, rather than going on untested. */
	for (pass = 0; pass < INTEGRATE_BOUNCES; pass++) {
		double t = INFINITY, n[3] = {0, 0, 0};

		for (k = 0; k < dims; k++) {
			lo[k] = fmin(p0[k], p[k]);
			hi[k] = fmax(p0[k], p[k]);
		}
		m = integrate_obstacles_in(ip, lo, hi, buf, &near);
		hit = 0;
		for (j = 0; j < m; j++) {
			double tj, nj[3];

			if (obstacle_hit(&ip->obstacles[near ? near[j] : j], dims, p0, p, &tj,
					 nj) &&
			    tj < t) {
				t = tj;
				memcpy(n, nj, sizeof n);
				hit = 1;
			}
		}
		if (!hit)
			break;
		obstacle_reflect(dims, p0, p, v, t, n);
	}
	if (hit)
		memcpy(p, p0, 3 * sizeof *p);
	for (k = 0; k < dims; k++) {
		vel[k] = (float)v[k];
		lo[k] = p[k];
	}
	finish_bounds(ip, p, vel, x);
	/* The move's last query serves the check below while the walls left
	 * the end of the move where it was, or only rounded it to binary32 (a
	 * wrap box's, inside it) after a move that hit nothing: nearly every
	 * move. That end is a corner of the box queried, and its binary32
	 * rounding is within 2^-24 of its size of it, far inside the query's
	 * margin (1e-6 x (1 + the largest coordinate), obstacles.h), so every
	 * obstacle the rounded point is inside of is on the list, in the same
	 * increasing order as a query of its own would give. */
	reuse = !hit;
	for (k = 0; k < dims; k++)
		reuse = reuse && (p[k] == lo[k] || p[k] == (double)(float)lo[k]);
	/* Whatever the walls, a corner, rounding to binary32 or a flock that
	 * started inside did: a boid left inside goes to the nearest surface,
	 * just outside, moving out of it, then back into the box. The first
	 * obstacle it is inside of, in index order (only those at its point
	 * can hold it); pushed out of one, maybe into another: check again.
	 * A segment has no inside, so the side the boid is on is all that
	 * stops it next step: where rounding to binary32 moved it onto or
	 * across a segment's line, it goes the least step back to the side
	 * its exact point is on (segment_rounding). Obstacles that keep
	 * pushing a boid between them (two that overlap, one at a wall) send
	 * it back where the step began, outside them all, turned round. */
	do {
		double pf[3] = {0, 0, 0};

		for (k = 0; k < dims; k++)
			pf[k] = (float)p[k];
		if (!reuse)
			m = integrate_obstacles_in(ip, pf, pf, buf, &near);
		reuse = 0;
		pushed = 0;
		for (j = 0; j < m && !pushed; j++) {
			double q[3], n[3] = {0, 0, 0}, len = 0, vn = 0, scale = 1;
			int inside;

			i = near ? near[j] : j;
			if (ip->obstacles[i].kind == OBSTACLE_SEGMENT) {
				pushed = segment_rounding(&ip->obstacles[i], x, p, pf);
				if (pushed)
					finish_bounds(ip, p, vel, x);
				continue;
			}
			if (!obstacle_inside(&ip->obstacles[i], dims, pf))
				continue;
			obstacle_nearest(&ip->obstacles[i], dims, pf, q, &inside);
			for (k = 0; k < dims; k++) {
				n[k] = q[k] - pf[k];
				len += n[k] * n[k];
				scale = fmax(scale, fabs(q[k]));
			}
			len = sqrt(len);
			if (len == 0.0) {
				n[0] = 1.0;
				len = 1.0;
			}
			for (k = 0; k < dims; k++) {
				n[k] /= len;
				p[k] = q[k] + n[k] * 1e-5 * scale;
				vn += (double)vel[k] * n[k];
			}
			if (vn < 0)
				for (k = 0; k < dims; k++)
					vel[k] = (float)((double)vel[k] - 2.0 * vn * n[k]);
			/* an obstacle reaching past a wall pushes across it:
			 * the bounds again (then check again) */
			finish_bounds(ip, p, vel, x);
			pushed = 1;
		}
	} while (pushed && ++pass <= INTEGRATE_PASSES);
	if (pushed)
		escape(ip, pos, p, vel);
}

void integrate_boid(const struct integrate_params *ip, const double acc[3],
		    const float pos[3], const float vel[3], double smax,
		    float pos_out[3], float vel_out[3])
{
	double v[3] = {0, 0, 0}, p[3] = {0, 0, 0}, s2 = 0, s, scale = 1.0;
	int k, dims = ip->dims;

	for (k = 0; k < dims; k++) {
		v[k] = (double)vel[k] + acc[k] * ip->dt;
		s2 += v[k] * v[k];
	}
	s = sqrt(s2);
	if (s > smax) {
		scale = smax / s;
	} else if (s < ip->speed_min) {
		if (s > 0.0) {
			scale = ip->speed_min / s;
		} else {
			/* No direction left: keep the old heading at minimum speed. */
			double o2 = 0;

			for (k = 0; k < dims; k++) {
				v[k] = vel[k];
				o2 += v[k] * v[k];
			}
			scale = o2 > 0.0 ? ip->speed_min / sqrt(o2) : 0.0;
		}
	}
	for (k = 0; k < dims; k++) {
		vel_out[k] = (float)(v[k] * scale);
		p[k] = (double)pos[k] + (double)vel_out[k] * ip->dt;
	}
	integrate_finish(ip, pos, p, vel_out);
	for (k = 0; k < dims; k++)
		pos_out[k] = (float)p[k];
}
