/* integrate.h: the explicit Euler update of one boid, with the speed clamp
 * and the bounds mode applied after the move. */
#ifndef BOIDSIM_INTEGRATE_H
#define BOIDSIM_INTEGRATE_H

#include "bounds.h"
#include "scenario.h"

struct obstacle;

struct integrate_params {
	int dims;
	double dt, speed_min, speed_max;
	const struct bounds *box;
	int n_obstacles;
	const struct obstacle *obstacles;
};

/* After a move from pos to p (double) with velocity vel: bounce off every
 * obstacle the move would enter, then the bounds mode. No boid ends a step
 * inside an obstacle. */
void integrate_finish(const struct integrate_params *ip, const float pos[3], double p[3],
		      float vel[3]);

void integrate_params_init(struct integrate_params *ip, const struct scenario *sc,
			   const struct bounds *box);

/* v' = v + a dt, |v'| clamped to [speed.min, smax] (smax: the boid's own
 * largest speed, speed.max unless speeds vary; a zero v' keeps the heading
 * of v); p' = p + v' dt; then the bounds mode. Writes pos_out and vel_out
 * (binary32); the arithmetic is in double. */
void integrate_boid(const struct integrate_params *ip, const double acc[3],
		    const float pos[3], const float vel[3], double smax,
		    float pos_out[3], float vel_out[3]);

#endif
