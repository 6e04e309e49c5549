/* obstacles.h: solid obstacles (spheres or circles, axis-aligned boxes, and
 * in 2D line segments): the avoidance direction a boid steers along, and
 * the collision that keeps it from ever passing through one. */
#ifndef BOIDSIM_OBSTACLES_H
#define BOIDSIM_OBSTACLES_H

#include <stdint.h>

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

/* Whether p is inside o: obstacle_nearest's *inside, without the point. */
int obstacle_inside(const struct obstacle *o, int dims, const double p[3]);

/* Whether a move from p0 to p1 enters o: then *t is the fraction of the
 * move done where it first touches o's surface, and n the unit normal
 * there, facing the move. Tested against the whole move, so no step size
 * tunnels through. A segment's ends reach OBSTACLE_END_TOL of its length
 * further, so that a move through the joint of two pieces of a polyline
 * hits at least one of them whatever the rounding; a move along a
 * segment's line, short of it or past it, does not hit it (the point of a
 * hit lies in the segment's box, to within half obstacle_index_query's
 * margin). */
#define OBSTACLE_END_TOL 1e-9
int obstacle_hit(const struct obstacle *o, int dims, const double p0[3], const double p1[3],
		 double *t, double n[3]);

/* The bounce of a move from p0 to p1 (velocity v) that hits a surface of
 * unit normal n at fraction t of the move: p0 becomes the point of
 * impact, p1 the reflection of the rest of the move, v the reflection of
 * v, both about n; both points a hair (obstacle_backoff) off the surface,
 * on n's side. */
void obstacle_reflect(int dims, double p0[3], double p1[3], double v[3], double t,
		      const double n[3]);

/* The bounce of a move into a corner (two surfaces met at once): straight
 * back the way it came, p0 a hair short of the point of impact, p1 and v
 * reversed, on a path the move has just taken, free whatever the corner. */
void obstacle_reverse(int dims, double p0[3], double p1[3], double v[3], double t);

/* How far a bounce at h backs off its surface: 1e-9, or eight units in
 * the last place of h's largest coordinate where that is more (from 2^20). */
double obstacle_backoff(int dims, const double h[3]);

/* obstacle_hit, then obstacle_reflect where it hit; 1 when it did. */
int obstacle_collide(const struct obstacle *o, int dims, double p0[3], double p1[3],
		     double v[3]);

/* Of a segment (2D): the cross product of b - a and p - a, whose sign
 * tells which side of the segment's line p is on (0: on it). */
double obstacle_side(const struct obstacle *o, const double p[3]);

/* A static spatial index of the obstacles, so that a boid tests only the
 * obstacles near it: a uniform grid of cells over the obstacles' bounding
 * boxes, each cell listing, in increasing index order, the obstacles whose
 * box (widened by the index's reach) overlaps it. Obstacles never move, so
 * it is built once and never changes; queries run from any number of
 * threads at once and use no shared scratch.
 *
 * obstacle_index_build returns the index of the n obstacles o (the caller
 * owns it, and keeps o alive as long), or NULL when an index would not pay
 * (fewer than OBSTACLE_INDEX_MIN) or cannot be had (more than
 * OBSTACLE_INDEX_MAX, or no memory): callers then test every obstacle,
 * which gives the same results. reach (>= 0) tunes the cell layout for
 * queries of about that half-width (radii.avoid); queries are
 * exact whatever it is. A scenario owns the index of its obstacles. */
#define OBSTACLE_INDEX_MIN 8
#define OBSTACLE_INDEX_MAX 4096
struct obstacle_index;
struct obstacle_index *obstacle_index_build(const struct obstacle *o, int n, int dims,
					    double reach);
void obstacle_index_free(struct obstacle_index *ix);

/* The obstacles that can matter to anything inside the box [lo, hi] (the
 * first dims axes): every obstacle whose bounding box, widened by a margin
 * far above rounding (1e-6 x (1 + the largest coordinate involved)),
 * overlaps the box, and no other (but where one cell of the index lists
 * more than OBSTACLE_QUERY_MAX: all of that cell's). So every obstacle a
 * boid at x is inside of or within r of is among those for [x - r, x + r],
 * and every obstacle a move from p0 to p1 can hit among those for the box
 * of p0 and p1. Returns how many, with *list pointing to their indices in
 * increasing order (into the index or into buf), or -1 when the query
 * cannot be answered that way (more than OBSTACLE_QUERY_MAX of them, a
 * non-finite coordinate): the caller then tests every obstacle. */
#define OBSTACLE_QUERY_MAX 256
int obstacle_index_query(const struct obstacle_index *ix, const double lo[3],
			 const double hi[3], uint16_t buf[OBSTACLE_QUERY_MAX],
			 const uint16_t **list);

#endif
