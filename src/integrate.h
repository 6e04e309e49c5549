/* integrate.h: the explicit Euler update of one boid, with the speed clamp
 * and the bounds mode applied after the move. */
#ifndef BOIDSIM_INTEGRATE_H
#define BOIDSIM_INTEGRATE_H

#include <stdint.h>
#include "bounds.h"
#include "obstacles.h"
#include "scenario.h"

struct integrate_params {
	int dims;
	double dt, speed_min, speed_max;
	struct bounds box;
	int n_obstacles;
	const struct obstacle *obstacles;
	/* Their spatial index (obstacles.h), owned by the scenario; NULL:
	 * every boid tests every obstacle. */
	const struct obstacle_index *obstacle_index;
};

/* After a move from pos to p (double) with velocity vel: bounce off every
 * obstacle the move would enter, then the bounds mode. No boid ends a step
 * inside an obstacle where it can be helped (boidsim-scenario(5)), nor
 * with its binary32 position on or across a segment it did not cross. */
void integrate_finish(const struct integrate_params *ip, const float pos[3], double p[3],
		      float vel[3]);

void integrate_params_init(struct integrate_params *ip, const struct scenario *sc);

/* The obstacles that may matter inside the box [lo, hi]: a superset, in
 * increasing index order, of those whose own tests (obstacle_nearest within
 * a distance, obstacle_collide) can succeed there. Returns how many; *list
 * holds their indices, or is NULL when they are all the obstacles, 0 to
 * n_obstacles - 1. buf is the caller's scratch (the function keeps none),
 * so any number of threads may call it at once. */
int integrate_obstacles_in(const struct integrate_params *ip, const double lo[3],
			   const double hi[3], uint16_t buf[OBSTACLE_QUERY_MAX],
			   const uint16_t **list);

/* The first obstacle (in index order) that x is inside of, or -1. */
int integrate_inside(const struct integrate_params *ip, const double x[3]);

/* Those within distance r of a boid at pos, or that it is inside of. */
int integrate_obstacles_near(const struct integrate_params *ip, const float pos[3], double r,
			     uint16_t buf[OBSTACLE_QUERY_MAX], const uint16_t **list);

/* v' = v + a dt, |v'| clamped to [speed.min, smax] (smax: the boid's own
 * largest speed, speed.max unless speeds vary; a zero v' keeps the heading
 * of v); p' = p + v' dt; then the bounds mode. Writes pos_out and vel_out
 * (binary32); the arithmetic is in double. */
void integrate_boid(const struct integrate_params *ip, const double acc[3],
		    const float pos[3], const float vel[3], double smax,
		    float pos_out[3], float vel_out[3]);

#endif
