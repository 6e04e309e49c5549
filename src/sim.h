/* sim.h: one simulation: the flock, its neighbour search and the step loop. */
#ifndef BOIDSIM_SIM_H
#define BOIDSIM_SIM_H

#include <stdint.h>
#include "ctx.h"
#include "flock.h"
#include "grid.h"
#include "metrics.h"
#include "predators.h"
#include "rules.h"
#include "scenario.h"
#include "util.h"

enum sim_search { SIM_GRID = 0, SIM_BRUTE };

/* Where the time of the steps went, for -v: seconds spent sorting into
 * cells, and gathering neighbours with the update (one fused loop); the
 * number of candidate pairs examined and of boid-steps done; of a run split
 * over processes (dist.h), the bytes this process sent to the others in
 * the steps (boids leaving its slab, its halo to the others) and in the
 * gathers of frames and metrics, and the seconds it spent exchanging. */
struct sim_stats {
	double t_grid, t_step, t_exchange;
	uint64_t candidates, boid_steps;
	uint64_t sent_step, sent_gather;
};

struct sim;
struct step_kernels;

/* The backends: what reads or orders the whole flock (the neighbour step,
 * the measurement, the frame in id order) behind one table, as CoMD puts
 * its potentials and halo exchange. Two run in one process: the grid, and
 * brute force (the oracle). A distributed backend replaces the step with a
 * halo exchange around it, the measurement with a reduction and the frame
 * with a gather, the rest of the simulation unchanged. */
struct sim_ops {
	const char *name;
	/* 0, -1 (err filled), or -2 when the scenario cannot run on it. */
	int (*init)(struct sim *s, struct util_err *err);
	void (*free)(struct sim *s);
	/* New parameters in force (a schedule's stage). */
	void (*stage)(struct sim *s, const struct scenario *st);
	/* The neighbour sums and update of every boid into the flock's next
	 * arrays, counting candidates, boid-steps and time into s->stats. */
	void (*step)(struct sim *s);
	void (*measure)(struct sim *s, struct metrics *m, struct metrics_row *row);
	size_t (*frame)(struct sim *s, float *const out[FLOCK_FIELDS_MAX], uint32_t *ids,
			uint32_t *groups);
	/* The population events due at the current step (sim_apply_events). */
	void (*events)(struct sim *s);
	/* The whole flock, with its live ids and disabled boids, for a
	 * checkpoint or a check: s->flock itself, or a gather to part 0 (NULL
	 * on the other parts). 0, or -1 with err filled. */
	int (*whole)(struct sim *s, const struct flock **f, struct util_err *err);
	/* s->flock was set whole from outside (a checkpoint): take it up. */
	int (*loaded)(struct sim *s, struct util_err *err);
	/* The number of boids of the whole run. */
	size_t (*count)(const struct sim *s);
};

struct sim {
	struct ctx ctx;             /* the caller's (a copy) */
	const struct sim_ops *ops;  /* the backend (sim.c, dist.c) */
	void *be;                   /* its state */
	const struct step_kernels *kern; /* the loops of ctx.simd's level */
	const struct scenario *sc;
	struct flock flock;
	struct predators pred;
	struct grid grid;
	struct rules_params rp;
	enum sim_search search;
	uint64_t step;
	const struct scenario *cur; /* the parameters in force: sc or a stage */
	int next_stage;             /* the next entry of sc's schedule */
	int next_event;             /* the next entry of sc's population schedule */
	unsigned char *seen; /* scratch for sim_check */
	struct sim_stats stats;
};

/* Returns 0, -1, -2 when the scenario leaves no room to start
 * (flock_init), or -3 when the backend cannot run it (a split run: the
 * brute-force search, a flock too large to gather). ctx
 * may be NULL (ctx_init's defaults); it is copied. */
int sim_init(struct sim *s, const struct scenario *sc, enum sim_search search,
	     const struct ctx *ctx, struct util_err *err);
void sim_free(struct sim *s);

/* Advances every boid and predator by one synchronous step; then, at a
 * step of the population schedule, adds and removes boids, so that the
 * state at that step (its frame) holds the new population. */
void sim_step(struct sim *s);

/* For a state loaded at s->step (a checkpoint's): the parameter stages in
 * force there (those of steps before it), as the steps that led there
 * entered them, so that what the run measures and checks at that step is
 * what it would have without the stop. Keeps the wandering target. */
void sim_enter_stages(struct sim *s);

/* Applies the population events due at or before the current step that
 * are not applied yet (after sim_init or a checkpoint, none are). */
void sim_apply_events(struct sim *s);

/* The same, acting on flock f (the whole flock of a split run). */
void sim_events_on(struct sim *s, struct flock *f);

/* The invariants that must hold after every step: every live id once and
 * only live ids, every value finite, speeds within [speed.min, speed.max]
 * (predators: at predators.speed), to SIM_SPEED_TOL relative, positions
 * inside the box under wrap and reflect. Returns 0, or -1 naming the first
 * violation. */
#define SIM_SPEED_TOL FLOCK_SPEED_TOL
int sim_check(struct sim *s, struct util_err *err);

/* The same of flock f, the whole flock of s's run (sim_whole). */
int sim_check_flock(struct sim *s, const struct flock *f, struct util_err *err);

/* The whole flock of the run (ops.whole): every part of a split run calls
 * it; *f is NULL on the parts other than 0. */
int sim_whole(struct sim *s, const struct flock **f, struct util_err *err);

/* The number of boids in the whole run (s->flock.n is a part's). */
size_t sim_count(const struct sim *s);

/* After s->flock and the predators were set from outside, whole (a
 * checkpoint read by every part): the backend takes the state up. */
int sim_loaded(struct sim *s, struct util_err *err);

/* Whether the run's frames hold agents with ids and groups (trajectory
 * flag "agents"): with predators or a population schedule. The most
 * agents a frame can hold. */
int sim_has_agents(const struct scenario *sc);
uint64_t sim_frame_capacity(const struct scenario *sc);

/* The current state as a trajectory frame: the boids in id order
 * (flock_to_id_order), then the predators in order; with ids and groups
 * (trajectory groups 0 and 1) when they are not NULL. Predators have hue
 * 0. Every out[f], ids and groups needs room for sim_frame_capacity().
 * Returns the number of agents. */
size_t sim_frame(struct sim *s, float *const out[FLOCK_FIELDS_MAX], uint32_t *ids,
		 uint32_t *groups);

/* The part of a frame after the boids' fields: with ids, the live ids of
 * flock f (the whole flock) in its first n places, groups 0 there, and
 * the predators after them. Returns n plus the predators. */
size_t sim_frame_agents(const struct sim *s, const struct flock *f, size_t n,
			float *const out[FLOCK_FIELDS_MAX], uint32_t *ids, uint32_t *groups);

/* The order parameters of the current state (metrics.h). */
void sim_measure(struct sim *s, struct metrics *m, struct metrics_row *row);

/* The SIMD level of the neighbour loop (ctx_simd_name), and the backend's
 * name ("grid", "brute"). */
enum ctx_simd sim_simd(const struct sim *s);
const char *sim_backend(const struct sim *s);

#endif
