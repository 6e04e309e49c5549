/* obstacles.h: solid obstacles (spheres or circles, axis-aligned boxes, and
 * in 2D line segments): the avoidance direction a boid steers along, and
 * the collision that keeps it from ever passing through one. */
#ifndef BOIDSIM_OBSTACLES_H
#define BOIDSIM_OBSTACLES_H

enum obstacle_kind { OBSTACLE_SPHERE = 0, OBSTACLE_BOX, OBSTACLE_SEGMENT };

struct obstacle {
	enum obstacle_kind kind;
	double a[3];      /* sphere: centre; box: min corner; segment: start */
	double b[3];      /* box: max corner; segment: end */
	double radius;    /* sphere */
};

/* The point of o's surface nearest to p, and whether p is inside o. */
void obstacle_nearest(const struct obstacle *o, int dims, const double p[3], double q[3],
		      int *inside);

/* A move from p0 to p1 (velocity v) that would enter o stops at the surface
 * and is mirrored: p1 becomes the reflection of the rest of the move, v the
 * reflection of v, both about the surface's normal where the move hit it.
 * Returns 1 when it hit, with p0 moved to the point of impact. Tested
 * against the whole move, so no step size tunnels through. */
int obstacle_collide(const struct obstacle *o, int dims, double p0[3], double p1[3],
		     double v[3]);

#endif
