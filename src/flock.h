/* flock.h: the boids' state as a structure of arrays (one 64-byte aligned
 * array per field), kept in the grid's cell order between steps. */
#ifndef BOIDSIM_FLOCK_H
#define BOIDSIM_FLOCK_H

#include <stddef.h>
#include <stdint.h>
#include "scenario.h"
#include "util.h"

/* The most fields a frame of the flock has: positions, velocities and the
 * hue, in 3D. */
#define FLOCK_FIELDS_MAX 7

struct flock {
	int dims;
	size_t n;
	/* Current state; pos[2] and vel[2] are NULL in 2D. Slot k holds the
	 * boid whose id is id[k]. */
	float *pos[3];
	float *vel[3];
	uint32_t *id;
	/* With colour following (has_hue): each boid's hue as a unit vector,
	 * hue[0] = cos(2 pi h) and hue[1] = sin(2 pi h) for the hue h in turns;
	 * NULL without. */
	int has_hue;
	float *hue[2];
	/* Spare buffers of the same shape: the next step, or the next order. */
	float *pos_next[3];
	float *vel_next[3];
	float *hue_next[2];
	uint32_t *id_next;
};

/* Allocates and draws the initial state from the seed: positions uniform in
 * the bounds box, headings uniform on the circle or sphere, speeds uniform
 * in [speed.min, speed.max], hues (with a hue key) uniform in [0, 1) turns.
 * Slots start in id order. */
int flock_init(struct flock *f, const struct scenario *sc, struct util_err *err);
void flock_free(struct flock *f);

/* Exchange the current and spare position, velocity and hue buffers (after
 * a step), and the id buffers too when with_ids is set (after a reorder). */
void flock_swap(struct flock *f, int with_ids);

/* The number of fields of a frame: 2 dims, plus 1 with a hue. */
int flock_fields(const struct flock *f);

/* Scatter the state into id order, as a trajectory frame: out[0..dims-1]
 * positions, then velocities, then (with a hue) out[2 dims] the hue in
 * turns (flock_hue_turns); each out[i] holds n floats. */
void flock_to_id_order(const struct flock *f, float *const out[FLOCK_FIELDS_MAX]);

/* The hue's unit vectors in id order, out[0] the cosines and out[1] the
 * sines, for checkpoints; nothing without a hue. */
void flock_hue_to_id_order(const struct flock *f, float *const out[2]);

/* The hue of unit vector (c, s) as a fraction of a turn in [0, 1):
 * atan2(s, c) / (2 pi) modulo 1, in binary64 (detmath_atan2) and rounded
 * to binary32 (a result that rounds to 1 is 0). */
float flock_hue_turns(float c, float s);

#endif
