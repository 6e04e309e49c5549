/* sim.h: one simulation: the flock, its neighbour search and the step loop. */
#ifndef BOIDSIM_SIM_H
#define BOIDSIM_SIM_H

#include <stdint.h>
#include "flock.h"
#include "grid.h"
#include "metrics.h"
#include "rules.h"
#include "scenario.h"
#include "util.h"

enum sim_search { SIM_GRID = 0, SIM_BRUTE };

/* Where the time of the steps went, for -v: seconds spent sorting into
 * cells, and gathering neighbours with the update (one fused loop); the
 * number of candidate pairs examined and of boid-steps done. */
struct sim_stats {
	double t_grid, t_step;
	uint64_t candidates, boid_steps;
};

/* Not copyable: rp.ip points into rp. */
struct sim {
	const struct scenario *sc;
	struct flock flock;
	struct grid grid;
	struct rules_params rp;
	enum sim_search search;
	uint64_t step;
	const struct scenario *cur; /* the parameters in force: sc or a stage */
	int next_stage;             /* the next entry of sc's schedule */
	unsigned char *seen; /* scratch for sim_check */
	struct sim_stats stats;
};

int sim_init(struct sim *s, const struct scenario *sc, enum sim_search search,
	     struct util_err *err);
void sim_free(struct sim *s);

/* Advances every boid by one synchronous step. */
void sim_step(struct sim *s);

/* The invariants that must hold after every step: the count and the set of
 * ids unchanged, every value finite, speeds within [speed.min, speed.max]
 * (to SIM_SPEED_TOL relative), positions inside the box under wrap and
 * reflect. Returns 0, or -1 naming the first violation. */
#define SIM_SPEED_TOL 1e-6
int sim_check(struct sim *s, struct util_err *err);

/* The order parameters of the current state (metrics.h). */
void sim_measure(struct sim *s, struct metrics *m, struct metrics_row *row);

#endif
