/* grid.h: the uniform grid, the neighbour search's spatial index: a
 * counting sort of the flock into cell order each step, the stencil of
 * cells around a cell, and the queries of the metrics. The step driver
 * that visits it is step.h. */
#ifndef BOIDSIM_GRID_H
#define BOIDSIM_GRID_H

#include <stddef.h>
#include <stdint.h>
#include "flock.h"
#include "rules.h"
#include "bounds.h"
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
};

int grid_init(struct grid *g, const struct scenario *sc, size_t n, struct util_err *err);

/* The largest interaction radius of a scenario, with the slack. */
double grid_radius(const struct scenario *sc);
void grid_free(struct grid *g);

/* Chooses this step's cells and reorders the flock into cell order, boids
 * of one cell by increasing id; the order is a function of the state only,
 * so the neighbour sums are the same for any thread count. */
void grid_build(struct grid *g, struct flock *f);

/* grid_build's phases apart, for a flock split over processes (dist.c):
 * the cells of reach 1 for the flock's extent (through f->reduce); the
 * crowding rule, given the sum of squared counts of those cells and the
 * number of boids, which sets reach 2 and its cells when crowded (returns
 * 1 then); and the reorder into the cells set, boids of a cell by id:
 * with cells (nr ranges [cells[i][0], cells[i][1]), ascending and
 * disjoint, that hold every boid), only their cells are counted, scanned
 * and sorted, so that a slab's sort costs its own cells, not the box's;
 * NULL: every cell. */
void grid_geometry(struct grid *g, const struct flock *f);
int grid_choose_reach(struct grid *g, uint64_t crowd, uint64_t n);
void grid_sort(struct grid *g, struct flock *f, const size_t (*cells)[2], int nr);

/* The cell index of coordinate x along axis d, clamped to the cells (the
 * extent is the flock's, so only rounding reaches past it). Inline: the
 * sort and the split run call these once or twice per boid and pass. */
static inline uint32_t grid_axis(const struct grid *g, int d, float x)
{
	double c = ((double)x - g->lo[d]) * g->inv[d];

	if (!(c >= 0.0)) /* also catches NaN, which would be a bug upstream */
		return 0;
	if (c >= (double)g->n[d])
		return g->n[d] - 1;
	return (uint32_t)c;
}

/* The cell of slot k. */
static inline size_t grid_cell(const struct grid *g, const struct flock *f, size_t k)
{
	size_t c = grid_axis(g, 0, f->pos[0][k]);

	c += (size_t)g->n[0] * grid_axis(g, 1, f->pos[1][k]);
	if (g->dims == 3)
		c += (size_t)g->n[0] * g->n[1] * grid_axis(g, 2, f->pos[2][k]);
	return c;
}

/* The cell of slot k along the last axis (a row in 2D, a plane in 3D:
 * cells of one such index are consecutive in cell order). */
static inline uint32_t grid_row(const struct grid *g, const struct flock *f, size_t k)
{
	return grid_axis(g, g->dims - 1, f->pos[g->dims - 1][k]);
}

/* The slot ranges of the cells of the stencil around cell c (z, then y,
 * then x, offsets -reach .. +reach; under wrap with fewer cells than that,
 * each cell once): returns how many. */
int grid_stencil(const struct grid *g, size_t c, uint32_t start[GRID_STENCIL_MAX],
		 uint32_t end[GRID_STENCIL_MAX]);

/* d = p_j - p_i (minimum image) and |d|^2, in binary32: the one definition
 * of distance used by every neighbour loop, so grid and brute force agree. */
static inline float grid_pair_delta(const struct rules_params *rp, const struct flock *f,
				    size_t i, size_t j, float d[3])
{
	float d2 = 0.0f;
	int k;

	for (k = 0; k < rp->dims; k++) {
		d[k] = bounds_min_image(&rp->ip.box, k, f->pos[k][j] - f->pos[k][i]);
		d2 += d[k] * d[k];
	}
	return d2;
}

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
