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
 * before that, moved by the whole boxes p was; else p itself. */
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
	else /* mirrored or left in double, p is exact */
		memcpy(x, p, 3 * sizeof *x);
}

/* The wall of a reflect or wrap box that the move from p0 to p leaves
 * the box through first (for wrap, its binary32 box [lo, hi), as
 * bounds_wrap1), with *tw the fraction of the move where, or -1. A move
 * that begins outside (backed off a segment drawn on the wall, or hit
 * just past it) and goes further out crosses it at 0. */
static int wall_crossed(const struct bounds *b, int dims, const double p0[3],
			const double p[3], double *tw)
{
	int k, first = -1;

	*tw = INFINITY;
	if (b->mode != BOUNDS_WRAP && b->mode != BOUNDS_REFLECT)
		return -1;
	for (k = 0; k < dims; k++) {
		double wall, t;

		if (p[k] < b->lo[k] && p[k] < p0[k])
			wall = b->lo[k];
		else if ((b->mode == BOUNDS_WRAP ? p[k] >= b->hi[k] : p[k] > b->hi[k]) &&
			 p[k] > p0[k])
			wall = b->hi[k];
		else
			continue;
		t = detmath_fmax((wall - p0[k]) / (p[k] - p0[k]), 0.0);
		if (t < *tw) {
			*tw = t;
			first = k;
		}
	}
	return first;
}

/* The rest of a move from p0 to p past wall k, at tw of it: the move goes
 * on from the point of the wall, mirrored into the box (reflect, as
 * bounds_mirror1: the same p as the walls give after the move) or from
 * the opposite wall, a box further on (wrap). */
static void wall_pass(const struct bounds *b, int dims, int k, double tw, double p0[3],
		      double p[3], double v[3])
{
	const double wall = p[k] < b->lo[k] ? b->lo[k] : b->hi[k];
	int j;

	for (j = 0; j < dims; j++)
		p0[j] += tw * (p[j] - p0[j]);
	p0[k] = wall;
	if (b->mode == BOUNDS_REFLECT) {
		if (bounds_mirror1(b, k, &p[k]))
			v[k] = -v[k];
	} else {
		const double shift = wall == b->hi[k] ? -b->len[k] : b->len[k];

		p0[k] += shift;
		p[k] += shift;
	}
}

/* The first segment that the straight path from a to b hits
 * (obstacle_hit: its ends widened, a path ending on it hitting it), or
 * -1; n is then its normal facing a. Segments are 2D only. */
static int segment_crossed(const struct integrate_params *ip, const double a[3],
			   const double b[3], double n[3])
{
	uint16_t buf[OBSTACLE_QUERY_MAX];
	const uint16_t *near;
	double lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0}, t = INFINITY;
	int k, j, m, first = -1;

	if (ip->dims != 2)
		return -1;
	for (k = 0; k < 2; k++) {
		lo[k] = detmath_fmin(a[k], b[k]);
		hi[k] = detmath_fmax(a[k], b[k]);
	}
	m = integrate_obstacles_in(ip, lo, hi, buf, &near);
	for (j = 0; j < m; j++) {
		const int i = near ? near[j] : j;
		double tj, nj[3];

		if (ip->obstacles[i].kind == OBSTACLE_SEGMENT &&
		    obstacle_hit(&ip->obstacles[i], 2, a, b, &tj, nj) && tj < t) {
			t = tj;
			first = i;
			memcpy(n, nj, 3 * sizeof *n);
		}
	}
	return first;
}

/* Whether r, the binary32 rounding of the exact point x, crosses one of
 * the m obstacles of list (integrate_obstacles_in; NULL: all): the first
 * segment in index order whose line r is on or across, seen from x, a
 * hair off it (by the signs of obstacle_side, within the segment's length
 * and OBSTACLE_END_TOL: a path that short is too short for obstacle_hit
 * to see its crossing), or that the way from x to r crosses (round a
 * vertex, where a unit in the last place is long beside the segments).
 * Its index, with n its unit normal on x's side, or -1. */
static int rounding_crosses(const struct integrate_params *ip, int m, const uint16_t *list,
			    const double x[3], const double r[3], double n[3])
{
	int j;

	if (ip->dims != 2)
		return -1;
	for (j = 0; j < m; j++) {
		const int i = list ? list[j] : j;
		const struct obstacle *o = &ip->obstacles[i];
		const double e0 = o->b[0] - o->a[0], e1 = o->b[1] - o->a[1];
		const double l2 = e0 * e0 + e1 * e1;
		double sx, sr, w, len, t;

		if (o->kind != OBSTACLE_SEGMENT || l2 == 0.0)
			continue;
		sx = obstacle_side(o, x);
		sr = obstacle_side(o, r);
		/* both strictly on one side of the line: nothing crossed */
		if (sx != 0.0 && sr != 0.0 && (sr > 0.0) == (sx > 0.0))
			continue;
		if (obstacle_hit(o, 2, x, r, &t, n))
			return i;
		if (sx == 0.0)
			continue;
		w = ((r[0] - o->a[0]) * e0 + (r[1] - o->a[1]) * e1) / l2;
		if (w < -OBSTACLE_END_TOL || w > 1.0 + OBSTACLE_END_TOL)
			continue;
		/* obstacle_side is positive on (-e1, e0)'s side */
		len = sqrt(l2);
		n[0] = (sx > 0.0 ? -e1 : e1) / len;
		n[1] = (sx > 0.0 ? e0 : -e0) / len;
		n[2] = 0.0;
		return i;
	}
	return -1;
}

/* Rounding the exact point x to binary32 crossed a segment of normal n
 * (on x's side): p and x become the rounding of x moved along n by the
 * least of 1, 2, 4 ... 64 units in the last place whose rounding is on
 * x's side of every segment (at an acute corner a step off one wall can
 * cross the other); 0, or -1 when none is. */
static int round_back(const struct integrate_params *ip, double x[3], double p[3],
		      const double n[3])
{
	const double big = detmath_fmax(detmath_fmax(fabs(x[0]), fabs(x[1])), (double)FLT_MIN);
	const double ulp = ldexp(1.0, ilogb(big) - (FLT_MANT_DIG - 1));
	double c[3] = {0, 0, 0}, nc[3];
	int i, k;

	for (i = 1; i <= 64; i *= 2) {
		uint16_t buf[OBSTACLE_QUERY_MAX];
		const uint16_t *near;
		double lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
		int m;

		for (k = 0; k < 2; k++) {
			c[k] = (float)(x[k] + i * ulp * n[k]);
			lo[k] = detmath_fmin(x[k], c[k]);
			hi[k] = detmath_fmax(x[k], c[k]);
		}
		m = integrate_obstacles_in(ip, lo, hi, buf, &near);
		/* (not out of a box that keeps boids in: its walls would move
		 * the boid again, untested) */
		for (k = 0; k < 2; k++)
			if (bounds_outside(&ip->box, k, c[k]))
				break;
		if (k == 2 && rounding_crosses(ip, m, near, x, c, nc) < 0) {
			memcpy(p, c, 3 * sizeof *p);
			memcpy(x, c, 3 * sizeof *x);
			return 0;
		}
	}
	return -1;
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

/* Whether c (binary32 values) is a place to stay: inside the box where
 * the walls keep boids in it, outside every obstacle, and, with from,
 * reached from there without crossing a segment. */
static int free_place(const struct integrate_params *ip, const double *from, const double c[3])
{
	const struct bounds *b = &ip->box;
	double n[3];
	int k;

	for (k = 0; k < ip->dims; k++)
		if (bounds_outside(b, k, c[k]))
			return 0;
	return integrate_inside(ip, c) < 0 && (from == NULL || segment_crossed(ip, from, c, n) < 0);
}

/* A boid the obstacles will not let go (two that overlap, or one at a
 * wall, push it into each other; pushed out of a sphere or box it would
 * cross a segment; its rounding to binary32 crosses a segment however it
 * is nudged) goes back to where its step began, turned round, when that
 * place is free (it is, unless obstacles were drawn over it this step);
 * else, from x (its exact point, on the right side of every segment),
 * to the first free place on rays in 16 directions (2D) or 26 (3D), at
 * distances doubling from 1e-5 of its largest coordinate (at least 1).
 * Where there is none it stays. */
static void escape(const struct integrate_params *ip, const float pos[3], const float vin[3],
		   const double x[3], double p[3], float vel[3])
{
	double c[3] = {0, 0, 0}, scale = 1.0, r, rmax;
	int k, i, dims = ip->dims;

	for (k = 0; k < dims; k++) {
		c[k] = pos[k];
		scale = detmath_fmax(scale, fabs(x[k]));
	}
	rmax = 1e6 * scale;
	if (free_place(ip, NULL, c)) {
		for (k = 0; k < dims; k++) {
			p[k] = c[k];
			vel[k] = -vin[k];
		}
		return;
	}
	/* in a box that keeps boids in, no further than across it */
	if (ip->box.mode == BOUNDS_WRAP || ip->box.mode == BOUNDS_REFLECT)
		for (k = 0, rmax = 0.0; k < dims; k++)
			rmax += ip->box.len[k];
	for (r = 1e-5 * scale; r < rmax; r *= 2.0) {
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
	float vin[3] = {0, 0, 0}; /* the velocity the move came with */
	uint16_t buf[OBSTACLE_QUERY_MAX];
	const uint16_t *near;
	double pw[3] = {0, 0, 0}; /* p before the first wrap of the move (wall_pass) */
	int k, pass, walls, i, j, m, hit = 0, pushed, stuck = 0, reuse, dims = ip->dims;
	int wrapped = 0, bounced_wrapped = 0;

	if (ip->n_obstacles == 0) {
		bounds_apply(&ip->box, p, vel);
		return;
	}
	for (k = 0; k < dims; k++) {
		p0[k] = pos[k];
		v[k] = vin[k] = vel[k];
	}
	/* A bounce can send the rest of the move into another obstacle:
	 * follow it a few times from each point of impact. Each time the
	 * surface the move reaches first (the least t; of equal ones, the
	 * first listed): another that the move also enters, further on, lies
	 * beyond it. Where a second is reached within OBSTACLE_END_TOL of the
	 * move (a corner: the joint of two pieces of a polyline, met at its
	 * vertex), the move goes straight back the way it came
	 * (obstacle_reverse): mirrored about one side, a move into an acute
	 * corner's vertex would leave past it. Only the obstacles near the
	 * move can be hit (integrate_obstacles_in). A move still bouncing
	 * after INTEGRATE_BOUNCES (into the tip of a sharp corner, where its
	 * last point of impact may lie beyond the other side) goes back where
	 * it began, turned round, rather than going on untested.
	 * The walls of a reflect or wrap box are surfaces of the loop too, up
	 * to twice the dimensions between two bounces (beyond, the walls act
	 * after the move, untested: a move longer than the box), and do not
	 * count as bounces:
	 * reached first (by more than OBSTACLE_END_TOL, so that a segment
	 * drawn on a wall is hit as a segment), the rest of the move is
	 * mirrored into the box or goes on from the opposite wall, and is
	 * tested in its turn. Where no obstacle is hit after a wrap, p is put
	 * back as it was before it, so that bounds_wrap1 rounds the same
	 * value as a move that no obstacle was near. */
	for (pass = 0, walls = 0; pass < INTEGRATE_BOUNCES;) {
		double t = INFINITY, t2 = INFINITY, tw, n[3] = {0, 0, 0};
		int kw;

		for (k = 0; k < dims; k++) {
			lo[k] = detmath_fmin(p0[k], p[k]);
			hi[k] = detmath_fmax(p0[k], p[k]);
		}
		m = integrate_obstacles_in(ip, lo, hi, buf, &near);
		for (j = 0; j < m; j++) {
			double tt, nt[3];

			if (!obstacle_hit(&ip->obstacles[near ? near[j] : j], dims, p0, p, &tt, nt))
				continue;
			if (tt < t) {
				t2 = t;
				t = tt;
				memcpy(n, nt, sizeof n);
			} else if (tt < t2) {
				t2 = tt;
			}
		}
		kw = walls < 2 * dims ? wall_crossed(&ip->box, dims, p0, p, &tw) : -1;
		if (kw >= 0 && tw + OBSTACLE_END_TOL < t) {
			if (ip->box.mode == BOUNDS_WRAP && !wrapped) {
				memcpy(pw, p, sizeof pw);
				wrapped = 1;
			}
			wall_pass(&ip->box, dims, kw, tw, p0, p, v);
			walls++;
			continue;
		}
		hit = t <= 1.0;
		if (!hit)
			break;
		bounced_wrapped |= wrapped;
		pass++;
		walls = 0;
		if (t2 <= t + OBSTACLE_END_TOL)
			obstacle_reverse(dims, p0, p, v, t);
		else
			obstacle_reflect(dims, p0, p, v, t, n);
	}
	if (wrapped && !bounced_wrapped)
		memcpy(p, pw, sizeof pw);
	for (k = 0; k < dims; k++) {
		vel[k] = (float)v[k];
		if (hit) { /* still bouncing: back where it began, turned round */
			p[k] = pos[k];
			vel[k] = -vin[k];
		}
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
	 * started inside did: a boid left inside a sphere or box goes to its
	 * nearest surface, just outside, moving out of it, then back into the
	 * box. The first obstacle it is inside of, in index order (only those
	 * at its point can hold it); pushed out of one, maybe into another:
	 * check again. A segment has no inside, so the side the boid is on is
	 * all that stops it next step: where rounding its exact point x to
	 * binary32 puts it on or across a segment's line (a hair off it), or
	 * the way from x to its rounding crosses a segment (round a vertex,
	 * where a unit in the last place is long beside the segments), it is
	 * nudged back (round_back).
	 * What cannot be mended so goes to escape. */
	do {
		double pf[3] = {0, 0, 0}, n[3];

		for (k = 0; k < dims; k++)
			pf[k] = (float)p[k];
		pushed = 0;
		/* the list for pf covers x, a rounding away: the query's margin
		 * is about eight units in the last place (obstacles.h) */
		if (!reuse)
			m = integrate_obstacles_in(ip, pf, pf, buf, &near);
		reuse = 0;
		if (rounding_crosses(ip, m, near, x, pf, n) >= 0) {
			if (round_back(ip, x, p, n) != 0) {
				stuck = 1;
				break;
			}
			finish_bounds(ip, p, vel, x);
			pushed = 1;
			continue;
		}
		for (j = 0; j < m && !pushed; j++) {
			double q[3], np[3] = {0, 0, 0}, len = 0, vn = 0, scale = 1;
			int inside;

			i = near ? near[j] : j;
			if (!obstacle_inside(&ip->obstacles[i], dims, pf))
				continue;
			obstacle_nearest(&ip->obstacles[i], dims, pf, q, &inside);
			for (k = 0; k < dims; k++) {
				n[k] = q[k] - pf[k];
				len += n[k] * n[k];
				scale = detmath_fmax(scale, fabs(q[k]));
			}
			len = sqrt(len);
			if (len == 0.0) {
				n[0] = 1.0;
				len = 1.0;
			}
			for (k = 0; k < dims; k++) {
				n[k] /= len;
				np[k] = q[k] + n[k] * 1e-5 * scale;
				vn += (double)vel[k] * n[k];
			}
			if (segment_crossed(ip, x, np, q) >= 0) {
				stuck = 1;
				break;
			}
			memcpy(p, np, sizeof np);
			if (vn < 0)
				for (k = 0; k < dims; k++)
					vel[k] = (float)((double)vel[k] - 2.0 * vn * n[k]);
			/* an obstacle reaching past a wall pushes across it:
			 * the bounds again (then check again) */
			finish_bounds(ip, p, vel, x);
			pushed = 1;
		}
	} while (!stuck && pushed && ++pass <= INTEGRATE_PASSES);
	if (stuck || pushed)
		escape(ip, pos, vin, x, p, vel);
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
