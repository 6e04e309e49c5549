/* bounds.h: the simulation box and its four modes (wrap, reflect, steer,
 * none): minimum-image displacements and what happens at the walls. */
#ifndef BOIDSIM_BOUNDS_H
#define BOIDSIM_BOUNDS_H

#include "scenario.h"

struct bounds {
	int dims;
	enum bounds_mode mode;
	/* The box in the engine's binary32 coordinates; the double copies are
	 * the same values, for arithmetic done in double. */
	float lo_f[3], hi_f[3], len_f[3], half_f[3];
	double lo[3], hi[3], len[3];
	double margin;
};

void bounds_init(struct bounds *b, const struct scenario *sc);

/* A side [lo, hi] of the scenario's box as the engine keeps it (and a
 * reader checks positions against): rounded to binary32, and a side too
 * narrow to survive that rounding given the smallest binary32 width. */
void bounds_side32(double lo, double hi, float *lo_f, float *hi_f);

/* Initial placement of coordinate p in dimension d inside the box. */
float bounds_place(const struct bounds *b, int d, double p);

/* Displacement d = p_j - p_i along one axis; under wrap the nearest periodic
 * image (minimum-image convention). */
static inline float bounds_min_image(const struct bounds *b, int d, float delta)
{
	if (b->mode == BOUNDS_WRAP) {
		if (delta > b->half_f[d])
			delta -= b->len_f[d];
		else if (delta < -b->half_f[d])
			delta += b->len_f[d];
	}
	return delta;
}

/* Under wrap: coordinate p of axis d brought into [lo, hi), in binary32. */
float bounds_wrap1(const struct bounds *b, int d, double p);

/* Under reflect: coordinate p of axis d, outside [lo, hi], mirrored back
 * into the box (1 returned) and the velocity component v reversed; a move
 * longer than the box is clamped to the wall it crossed last. */
int bounds_mirror1(const struct bounds *b, int d, double *p);
void bounds_reflect1(const struct bounds *b, int d, double *p, float *v);

/* Whether coordinate p of axis d is outside the box that wrap ([lo, hi))
 * or reflect ([lo, hi]) keeps every boid in, in its binary32 values;
 * never under steer and none. */
static inline int bounds_outside(const struct bounds *b, int d, double p)
{
	return (b->mode == BOUNDS_WRAP && !(p >= b->lo_f[d] && p < b->hi_f[d])) ||
	       (b->mode == BOUNDS_REFLECT && !(p >= b->lo_f[d] && p <= b->hi_f[d]));
}

/* After a move: wrap positions around the torus, or reflect them (and the
 * velocity component) off the walls; steer and none leave them alone. */
void bounds_apply(const struct bounds *b, double pos[3], float vel[3]);

#endif
