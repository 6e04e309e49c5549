/* integrate.c: semi-implicit Euler step of velocity then position. */
#include "config.h"
#include "integrate.h"

#include <math.h>
#include <string.h>

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

void integrate_finish(const struct integrate_params *ip, const float pos[3], double p[3],
		      float vel[3])
{
	double p0[3] = {0, 0, 0}, v[3] = {0, 0, 0}, lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
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
	 * first obstacle the move hits, in index order; only those near the
	 * move can (integrate_obstacles_in), the others would all miss. */
	for (pass = 0; pass < 8; pass++) {
		for (k = 0; k < dims; k++) {
			lo[k] = fmin(p0[k], p[k]);
			hi[k] = fmax(p0[k], p[k]);
		}
		m = integrate_obstacles_in(ip, lo, hi, buf, &near);
		hit = 0;
		for (j = 0; j < m && !hit; j++)
			hit = obstacle_collide(&ip->obstacles[near ? near[j] : j], dims, p0, p, v);
		if (!hit)
			break;
	}
	for (k = 0; k < dims; k++) {
		vel[k] = (float)v[k];
		lo[k] = p[k];
	}
	bounds_apply(&ip->box, p, vel);
	/* The move's last query serves the check below while the walls left
	 * the end of the move where it was, or only rounded it to binary32 (a
	 * wrap box's, inside it) after a move that hit nothing: nearly every
	 * move. That end is a corner of the box queried, and its binary32
	 * rounding is within 2^-24 of its size of it, far inside the query's
	 * margin (1e-6 x (1 + the largest coordinate), obstacles.h), so every
	 * obstacle the rounded point is inside of is on the list, in the same
	 * increasing order as a query of its own would give. */
	reuse = pass < 8 && !hit;
	for (k = 0; k < dims; k++)
		reuse = reuse && (p[k] == lo[k] || p[k] == (double)(float)lo[k]);
	/* Whatever the walls, a corner, rounding to binary32 or a flock that
	 * started inside did: a boid left inside goes to the nearest surface,
	 * just outside, moving out of it, then back into the box. The first obstacle it is inside of,
	 * in index order (only those at its point can hold it); pushed out of
	 * one, maybe into another: check again. */
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
			bounds_apply(&ip->box, p, vel);
			pushed = 1;
		}
	} while (pushed && ++pass <= 64);
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
