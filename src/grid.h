/* grid.h: the uniform-grid neighbour search: a counting sort of the flock
 * into cell order each step, and the parallel neighbour loop over cells. */
#ifndef BOIDSIM_GRID_H
#define BOIDSIM_GRID_H

#include <stddef.h>
#include <stdint.h>
#include "ctx.h"
#include "flock.h"
#include "rules.h"
#include "util.h"

/* Cells are at least the largest radius / reach wide (times the slack, so
 * that rounding of the cell index cannot hide a neighbour), and a boid's
 * neighbours are searched in the cells up to reach away along each axis: a
 * (2 reach + 1)^dims stencil. The reach is chosen at each step from the
 * state: 1, unless the flock is crowded, then 2. Smaller cells fit the
 * stencil closer to the ball of radius r (reach 2: 6.25 r^2 in 2D instead
 * of 9 r^2, 15.6 r^3 instead of 27 r^3 in 3D) but give more runs of slots
 * and more cells per boid, which costs more than it saves where cells hold
 * few boids. Measured (docs/PERFORMANCE.md), reach 2 is faster once a boid
 * finds, on average, more than about 12 boids in its own cell of edge r,
 * itself included, in 2D and 3D alike: a uniform flock with 20 neighbours
 * has about 7 (2D) or 6 (3D), a clumped one several times that. The
 * crowding, the sum over cells of the square of their counts divided by
 * the count, is an integer function of the positions, so the choice is
 * the same for any thread count and on resuming. The stencil is part of
 * the summation order, so the reach changes results in the last bits. */
#define GRID_REACH_MAX 2
#define GRID_CROWDED 12
#define GRID_STENCIL_MAX ((2 * GRID_REACH_MAX + 1) * (2 * GRID_REACH_MAX + 1) * \
			  (2 * GRID_REACH_MAX + 1))
#define GRID_CELL_SLACK 1.001

/* The compiled loops of one SIMD level (grid.c's table). */
struct grid_kernels;

struct grid {
	int dims;
	int periodic;            /* wrap: cells tile the box as a torus */
	double radius;           /* the largest radius with the slack: grid_radius() */
	int reach;               /* this step's: cells are at least radius / reach wide */
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
	uint32_t *part;          /* threads + 1: each thread's share of the boids, for the scan */
	int threads;
	const struct grid_kernels *kern; /* the loops grid_init chose */
};

/* The loops run are those of ctx->simd, or of the next level below it
 * that the processor can run (CTX_SIMD_BEST: the best it can); every
 * level gives the same bits. ctx may be NULL (the best). */
int grid_init(struct grid *g, const struct scenario *sc, size_t n, const struct ctx *ctx,
	      struct util_err *err);

/* The level of the loops g runs (ctx_simd_name), and the best this
 * processor can run. */
enum ctx_simd grid_simd(const struct grid *g);
enum ctx_simd grid_simd_best(void);

/* The largest interaction radius of a scenario, with the slack. */
double grid_radius(const struct scenario *sc);
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
