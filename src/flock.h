/* flock.h: the boids' state as a structure of arrays (one 64-byte aligned
 * array per field), kept in the grid's cell order between steps. */
#ifndef BOIDSIM_FLOCK_H
#define BOIDSIM_FLOCK_H

#include <stddef.h>
#include <stdint.h>
#include "scenario.h"
#include "util.h"

struct flock {
	int dims;
	size_t n;
	/* Current state; pos[2] and vel[2] are NULL in 2D. Slot k holds the
	 * boid whose id is id[k]. */
	float *pos[3];
	float *vel[3];
	uint32_t *id;
	/* Spare buffers of the same shape: the next step, or the next order. */
	float *pos_next[3];
	float *vel_next[3];
	uint32_t *id_next;
};

/* Allocates and draws the initial state from the seed: positions uniform in
 * the bounds box, headings uniform on the circle or sphere, speeds uniform
 * in [speed.min, speed.max]. Slots start in id order. */
int flock_init(struct flock *f, const struct scenario *sc, struct util_err *err);
void flock_free(struct flock *f);

/* Exchange the current and spare position and velocity buffers (after a
 * step), and the id buffers too when with_ids is set (after a reorder). */
void flock_swap(struct flock *f, int with_ids);

/* Scatter the state into id order: out[0..dims-1] positions, then
 * velocities; each out[i] holds n floats. */
void flock_to_id_order(const struct flock *f, float *const out[6]);

#endif
