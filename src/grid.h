/* grid.h: the uniform-grid neighbour search: a counting sort of the flock
 * into cell order each step, and the parallel neighbour loop over cells. */
#ifndef BOIDSIM_GRID_H
#define BOIDSIM_GRID_H

#include <stddef.h>
#include <stdint.h>
#include "flock.h"
#include "rules.h"
#include "util.h"

/* Cells are at least the largest radius / GRID_REACH wide (times the slack,
 * so that rounding of the cell index cannot hide a neighbour), and a boid's
 * neighbours are searched in the cells up to GRID_REACH away along each
 * axis: a (2 GRID_REACH + 1)^dims stencil. Smaller cells fit the stencil
 * closer to the ball of radius r (GRID_REACH 2: 6.25 r^2 in 2D instead of
 * 9 r^2), but give more runs of slots and more cells per boid; measured on
 * 1,000,000 boids in 2D, GRID_REACH 2 took 8% more time than 1
 * (docs/PERFORMANCE.md). The stencil is part of the summation order, so
 * changing GRID_REACH changes results. */
#define GRID_REACH 1
#define GRID_STENCIL_MAX ((2 * GRID_REACH + 1) * (2 * GRID_REACH + 1) * (2 * GRID_REACH + 1))
#define GRID_CELL_SLACK 1.001

struct grid {
	int dims;
	int periodic;            /* wrap: cells tile the box as a torus */
	double cell_min;         /* smallest cell edge: grid_cell_min() */
	double box_lo[3], box_hi[3]; /* the bounds box, in binary32 values */
	size_t max_cells;        /* cap on the number of cells (memory bound) */
	/* Geometry of the current step: the box it covers (the bounds box
	 * under wrap, the flock's extent otherwise) and the cells per axis. */
	double lo[3], len[3], inv[3];
	uint32_t n[3];
	size_t ncells;
	/* Boids of cell c are slots cell_start[c] .. cell_start[c+1]-1. */
	uint32_t *cell_start;    /* max_cells + 1 */
	uint32_t *key;           /* per slot of the new order: the previous slot */
	uint32_t *hist;          /* threads x max_cells counts */
	int threads;
};

int grid_init(struct grid *g, const struct scenario *sc, size_t n, struct util_err *err);

/* The smallest cell edge for a scenario's radii. */
double grid_cell_min(const struct scenario *sc);
void grid_free(struct grid *g);

/* Chooses this step's cells and reorders the flock into cell order, boids
 * of one cell by increasing id; the order is a function of the state only,
 * so the neighbour sums are the same for any thread count. */
void grid_build(struct grid *g, struct flock *f);

/* One synchronous step for every boid: gathers neighbours from the stencil
 * of cells around each boid's cell, applies the rules and integrates,
 * writing f->pos_next / f->vel_next. Call grid_build first. Returns the
 * number of candidates examined (pairs whose distance was computed), for
 * the statistics of -v. */
uint64_t grid_step(const struct grid *g, const struct flock *f,
		   const struct rules_params *rp, uint64_t step);

/* The O(N^2) oracle: the same step by visiting every pair, in slot order. */
void brute_step(const struct flock *f, const struct rules_params *rp, uint64_t step);

/* For tests: the ids of the boids within sqrt(r2) of slot k, in visiting
 * order; returns how many (at most cap are written). */
size_t grid_neighbours(const struct grid *g, const struct flock *f,
		       const struct rules_params *rp, size_t k, float r2,
		       uint32_t *out, size_t cap);
size_t brute_neighbours(const struct flock *f, const struct rules_params *rp,
			size_t k, float r2, uint32_t *out, size_t cap);

/* For the metrics, on a grid built for the current positions (or, with
 * g NULL, by brute force): the squared distance from slot k to its nearest
 * other boid (infinity when alone), and the number of groups: connected
 * components of the graph joining boids within sqrt(r2). parent is scratch
 * of f->n entries. Both are exact, so they do not depend on visiting order. */
double grid_nearest2(const struct grid *g, const struct flock *f,
		     const struct rules_params *rp, size_t k);
size_t grid_groups(const struct grid *g, const struct flock *f,
		   const struct rules_params *rp, float r2, uint32_t *parent);

#endif
