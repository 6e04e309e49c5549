/* predators.h: the predators, a second group of agents: their state, the
 * choice of quarry and their motion. The boids' flight is in rules.c. */
#ifndef BOIDSIM_PREDATORS_H
#define BOIDSIM_PREDATORS_H

#include <stddef.h>
#include <stdint.h>
#include "flock.h"
#include "integrate.h"
#include "scenario.h"
#include "util.h"

/* The boids are scanned in blocks of this many, a constant (never the
 * thread count), and the blocks' partial results combined in block order.
 * The nearest boid is exact in any order; the flock's centre is summed in
 * id order, so that it is the same for any number of threads, on the grid
 * and by brute force. */
#define PREDATORS_BLOCK 16384

struct predators_part;

struct predators {
	int n, dims;
	/* Predator i's state; the arrays have n entries (pos[2], vel[2] NULL
	 * in 2D), in predator order, which is their id order. */
	float *pos[3], *vel[3];
	float *pos_next[3], *vel_next[3];
	/* Scratch: one partial result per block of boids per predator, and
	 * (chasing the centre) the slot of each boid in id order. */
	struct predators_part *part;
	size_t part_blocks;
	uint32_t *slot_of;
};

/* Draws the predators from the seed: positions uniform in predators.region,
 * headings uniform, at predators.speed. Nothing to do (n = 0) without. */
int predators_init(struct predators *pr, const struct scenario *sc, size_t capacity,
		   struct util_err *err);
void predators_free(struct predators *pr);

/* One step of every predator from the flock's current state (before the
 * boids move: both see the other as it was): each turns toward its
 * quarry, by at most predators.max_turn dt, and moves at predators.speed,
 * into pos_next and vel_next; walls and obstacles as for boids. */
void predators_step(struct predators *pr, const struct scenario *cur,
		    const struct integrate_params *ip, const struct flock *f);

/* Exchange the current and next state (after the boids' step). */
void predators_swap(struct predators *pr);

#endif
