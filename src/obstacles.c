/* obstacles.c: geometry of the obstacles: nearest surface points for
 * steering, and swept collisions with reflection for never passing through
 * (a boid moving from p0 to p1 is tested along the whole segment). */
#include "config.h"
#include "obstacles.h"

#include <math.h>
#include <string.h>

static double clampd(double x, double lo, double hi)
{
	return x < lo ? lo : x > hi ? hi : x;
}

void obstacle_nearest(const struct obstacle *o, int dims, const double p[3], double q[3],
		      int *inside)
{
	int d;

	memset(q, 0, 3 * sizeof *q);
	*inside = 0;
	switch (o->kind) {
	case OBSTACLE_SPHERE: {
		double r2 = 0, n;

		for (d = 0; d < dims; d++)
			r2 += (p[d] - o->a[d]) * (p[d] - o->a[d]);
		n = sqrt(r2);
		*inside = n < o->radius;
		for (d = 0; d < dims; d++)
			q[d] = n > 0 ? o->a[d] + (p[d] - o->a[d]) * (o->radius / n) :
			       o->a[d] + (d == 0 ? o->radius : 0.0);
		break;
	}
	case OBSTACLE_BOX: {
		double best = INFINITY;
		int in = 1, axis = 0, side = 0;

		for (d = 0; d < dims; d++) {
			q[d] = clampd(p[d], o->a[d], o->b[d]);
			if (p[d] <= o->a[d] || p[d] >= o->b[d])
				in = 0;
		}
		if (in) { /* inside: the nearest face */
			for (d = 0; d < dims; d++) {
				if (p[d] - o->a[d] < best)
					best = p[d] - o->a[d], axis = d, side = 0;
				if (o->b[d] - p[d] < best)
					best = o->b[d] - p[d], axis = d, side = 1;
			}
			memcpy(q, p, 3 * sizeof *q);
			q[axis] = side ? o->b[axis] : o->a[axis];
			*inside = 1;
		}
		break;
	}
	case OBSTACLE_SEGMENT: {
		double ab[3] = {0, 0, 0}, t = 0, l2 = 0;

		for (d = 0; d < dims; d++) {
			ab[d] = o->b[d] - o->a[d];
			l2 += ab[d] * ab[d];
			t += (p[d] - o->a[d]) * ab[d];
		}
		t = l2 > 0 ? clampd(t / l2, 0.0, 1.0) : 0.0;
		for (d = 0; d < dims; d++)
			q[d] = o->a[d] + t * ab[d];
		break;
	}
	}
}

/* Mirror the remainder of the move (from the hit point h, fraction t of
 * the move done) and the velocity about the unit normal n. */
static void reflect(int dims, double p0[3], double p1[3], double v[3], double t,
		    const double n[3])
{
	double h[3], rest[3], rn = 0, vn = 0;
	int d;

	for (d = 0; d < dims; d++) {
		h[d] = p0[d] + t * (p1[d] - p0[d]);
		rest[d] = p1[d] - h[d];
		rn += rest[d] * n[d];
		vn += v[d] * n[d];
	}
	for (d = 0; d < dims; d++) {
		/* back off a hair along the normal so the boid stays outside */
		p1[d] = h[d] + rest[d] - 2.0 * rn * n[d] + 1e-9 * n[d];
		v[d] -= 2.0 * vn * n[d];
		p0[d] = h[d] + 1e-9 * n[d];
	}
}

int obstacle_collide(const struct obstacle *o, int dims, double p0[3], double p1[3],
		     double v[3])
{
	double dir[3] = {0, 0, 0}, n[3] = {0, 0, 0}, t = -1.0;
	int d;

	for (d = 0; d < dims; d++)
		dir[d] = p1[d] - p0[d];
	switch (o->kind) {
	case OBSTACLE_SPHERE: {
		/* |p0 + t dir - c| = r, smallest t in [0, 1] */
		double a = 0, b = 0, c = -o->radius * o->radius, disc, s;

		for (d = 0; d < dims; d++) {
			double m = p0[d] - o->a[d];

			a += dir[d] * dir[d];
			b += 2.0 * m * dir[d];
			c += m * m;
		}
		if (a == 0.0 || c < 0.0) /* no move, or already inside: leave it */
			return 0;
		disc = b * b - 4.0 * a * c;
		if (disc < 0.0)
			return 0;
		s = (-b - sqrt(disc)) / (2.0 * a);
		if (s < 0.0 || s > 1.0)
			return 0;
		t = s;
		for (d = 0; d < dims; d++)
			n[d] = (p0[d] + t * dir[d] - o->a[d]) / o->radius;
		break;
	}
	case OBSTACLE_BOX: {
		/* slab method: entering time and the face entered */
		double tin = -INFINITY, tout = INFINITY;
		int axis = -1, sign = 0;

		for (d = 0; d < dims; d++) {
			double t0, t1;

			if (dir[d] == 0.0) {
				if (p0[d] <= o->a[d] || p0[d] >= o->b[d])
					return 0;
				continue;
			}
			t0 = (o->a[d] - p0[d]) / dir[d];
			t1 = (o->b[d] - p0[d]) / dir[d];
			if (t0 > t1) {
				double x = t0;

				t0 = t1;
				t1 = x;
			}
			if (t0 > tin) {
				tin = t0;
				axis = d;
				sign = dir[d] > 0 ? -1 : 1;
			}
			if (t1 < tout)
				tout = t1;
		}
		if (axis < 0 || tin > tout || tin < 0.0 || tin > 1.0)
			return 0;
		t = tin;
		n[axis] = sign;
		break;
	}
	case OBSTACLE_SEGMENT: {
		/* 2D: the move crosses the segment a-b */
		double e0 = o->b[0] - o->a[0], e1 = o->b[1] - o->a[1];
		double den = dir[0] * e1 - dir[1] * e0, s, u, len;

		if (dims != 2 || den == 0.0)
			return 0;
		s = ((o->a[0] - p0[0]) * e1 - (o->a[1] - p0[1]) * e0) / den;
		u = ((o->a[0] - p0[0]) * dir[1] - (o->a[1] - p0[1]) * dir[0]) / den;
		if (s < 0.0 || s > 1.0 || u < 0.0 || u > 1.0)
			return 0;
		t = s;
		len = sqrt(e0 * e0 + e1 * e1);
		n[0] = -e1 / len;
		n[1] = e0 / len;
		if (n[0] * dir[0] + n[1] * dir[1] > 0) { /* face the incoming boid */
			n[0] = -n[0];
			n[1] = -n[1];
		}
		break;
	}
	}
	reflect(dims, p0, p1, v, t, n);
	return 1;
}
