/* flock.h: the boids' state as a structure of arrays (one 64-byte aligned
 * array per field), kept in the grid's cell order between steps. */
#ifndef BOIDSIM_FLOCK_H
#define BOIDSIM_FLOCK_H

#include <stddef.h>
#include <stdint.h>
#include "reduce.h"
#include "scenario.h"
#include "util.h"

/* The most fields a frame of the flock has: positions, velocities and the
 * hue, in 3D. */
#define FLOCK_FIELDS_MAX 7

/* The relative tolerance of a speed against its limits: binary32
 * velocities of a boid at speed.max are not exactly at it. */
#define FLOCK_SPEED_TOL 1e-6

struct flock {
	int dims;
	size_t n;
	/* From this many boids its loops run on several threads (ctx.h);
	 * the reductions over the whole flock, of which this may be a part
	 * (reduce.h; NULL: the flock is whole). */
	size_t parallel_min;
	const struct reduce *reduce;
	/* Room for the most boids alive at once (the population schedule's
	 * capacity; n otherwise). */
	size_t cap;
	/* Ids are given in order and never reused: next_id is the next. With a
	 * population schedule, live holds the n live ids in increasing order
	 * and rank[id] the place of id among them (UINT32_MAX for a removed
	 * id); without one both are NULL and the ids are 0..n-1. */
	uint32_t next_id;
	uint32_t *live, *rank;
	/* Current state; pos[2] and vel[2] are NULL in 2D. Slot k holds the
	 * boid whose id is id[k]. */
	float *pos[3];
	float *vel[3];
	uint32_t *id;
	/* With colour following (has_hue): each boid's hue as a unit vector,
	 * hue[0] = cos(2 pi h) and hue[1] = sin(2 pi h) for the hue h in turns;
	 * NULL without. With a colour velocity also hue[2], its rate in
	 * radians per unit time (rules_hue_update); hue_fields counts them (0,
	 * 2 or 3). */
	int has_hue, hue_fields;
	float *hue[3];
	/* Spare buffers of the same shape: the next step, or the next order;
	 * between steps, free scratch. */
	float *pos_next[3];
	float *vel_next[3];
	float *hue_next[3];
	uint32_t *id_next;
	/* Disabled boids (population disable), in the order they were
	 * disabled: n_parked ids, and their state, FLOCK_PARK_FIELDS floats a
	 * boid (positions, velocities, hue fields; unused ones 0). */
	size_t n_parked;
	uint32_t *park_id;
	float *park;
	/* The one allocation that pos, vel, hue, id and their _next hold
	 * slices of (flock_init_part). */
	void *block;
};

#define FLOCK_PARK_FIELDS 9

/* Allocates and draws the initial state from the seed: positions uniform in
 * the bounds box, headings uniform on the circle or sphere, speeds uniform
 * in [speed.min, speed.max], hues (with a hue key) uniform in [0, 1) turns.
 * Slots start in id order. Returns 0, -1 (out of memory), or -2 when the
 * start region's obstacles leave no room (the scenario's fault: callers
 * exit 2). */
int flock_init(struct flock *f, const struct scenario *sc, size_t parallel_min,
	       struct util_err *err);

/* The same for part part of a flock split into parts (dist.c): only the
 * boids whose id is part modulo parts, in id order, as if the whole flock
 * had been drawn and the others dropped; so the memory it touches is its
 * share's. The room (cap) is still the whole flock's. With obstacles, a
 * start without room fails on every part alike (all boids are tried). */
int flock_init_part(struct flock *f, const struct scenario *sc, size_t parallel_min,
		    uint32_t part, uint32_t parts, struct util_err *err);
void flock_free(struct flock *f);

/* What flock_init's start would find, without the flock's memory: -2
 * with its "no room to start" line in err when some boid falls inside
 * the obstacles at every attempt, else 0 (a start from a file has its
 * checks in start.h). Takes about the start's time: every boid is drawn. */
int flock_check_room(const struct scenario *sc, size_t parallel_min, struct util_err *err);

/* Attempts at a starting place outside every obstacle, before giving up. */
#define FLOCK_PLACE_TRIES 1000

/* Applies population event ev (scenario.h) at a step: adds boids drawn as
 * at the start (by their new ids) in its region, with the speeds of the
 * parameters in force (cur), or removes the boids with the highest ids (in
 * its region, when it has one), down to none; disables them as it
 * removes them, keeping their ids and state aside; enables the last
 * disabled, with the ids and state they had. Slots keep their order;
 * added and enabled boids go last. Returns the number of boids it acted
 * on; *inside, how many of the boids it added were drawn inside an
 * obstacle at every attempt (the last is kept: the integrator pushes them
 * out at their next step). */
size_t flock_apply_event(struct flock *f, const struct scenario *cur,
			 const struct scenario_event *ev, size_t *inside);

/* Keeps the first n slots (n at most f->n), zeroing the rest. */
void flock_shrink(struct flock *f, size_t n);

/* Rebuilds live and rank (with a population schedule) from the ids in the
 * slots, after they were set from outside (a checkpoint). */
void flock_reindex(struct flock *f);

/* The place of boid id in id order (its row in a trajectory frame). */
static inline uint32_t flock_rank(const struct flock *f, uint32_t id)
{
	return f->rank ? f->rank[id] : id;
}

/* The live ids in increasing order, n of them. */
void flock_ids(const struct flock *f, uint32_t *out);

/* Exchange the current and spare position, velocity and hue buffers (after
 * a step), and the id buffers too when with_ids is set (after a reorder). */
void flock_swap(struct flock *f, int with_ids);

/* The number of fields of a frame: 2 dims, plus 1 with a hue. */
int flock_fields(const struct flock *f);

/* The state in id order (flock_rank), as a trajectory frame: out[0..dims-1]
 * positions, then velocities, then (with a hue) out[2 dims] the hue in
 * turns (flock_hue_turns); each out[i] holds n floats. Between steps only:
 * it uses the spare id buffer (id_next) as scratch. */
void flock_to_id_order(const struct flock *f, float *const out[FLOCK_FIELDS_MAX]);

/* The hue's state in id order, out[0] the cosines, out[1] the sines and,
 * with a colour velocity, out[2] the rates, for checkpoints (hue_fields
 * arrays); nothing without a hue. */
void flock_hue_to_id_order(const struct flock *f, float *const out[3]);

/* The hue of unit vector (c, s) as a fraction of a turn in [0, 1):
 * atan2(s, c) / (2 pi) modulo 1, in binary64 (detmath_atan2) and rounded
 * to binary32 (a result that rounds to 1 is 0). */
float flock_hue_turns(float c, float s);

#endif
