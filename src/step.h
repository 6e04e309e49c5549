/* step.h: the step driver: every boid's neighbour sums over its stencil of
 * the grid's cells (or over every boid: brute force, the oracle), fused
 * with its update, writing f->pos_next / f->vel_next, with the compiled
 * loops of one SIMD level. */
#ifndef BOIDSIM_STEP_H
#define BOIDSIM_STEP_H

#include <stdint.h>
#include "ctx.h"
#include "flock.h"
#include "grid.h"
#include "rules.h"

/* The loops of one SIMD level (step.c's table). */
struct step_kernels;

/* The loops of level want, or of the next level below it that this
 * processor can run (CTX_SIMD_BEST: the best it can); every level gives
 * the same bits. The level they are (ctx_simd_name names it). */
const struct step_kernels *step_kernels(enum ctx_simd want);
enum ctx_simd step_level(const struct step_kernels *k);

/* One synchronous step for every boid: gathers neighbours from the stencil
 * of cells around each boid's cell, applies the rules and integrates.
 * Call grid_build first. Returns the number of candidates examined (pairs
 * whose distance was computed), for the statistics of -v. */
uint64_t step_grid(const struct step_kernels *k, const struct grid *g, const struct flock *f,
		   const struct rules_params *rp, uint64_t step);

/* The same for the boids of cells first .. end-1 only (the cells a part
 * of a split flock owns; the others are its halo, read, not written). */
uint64_t step_grid_cells(const struct step_kernels *k, const struct grid *g,
			 const struct flock *f, const struct rules_params *rp, uint64_t step,
			 size_t first, size_t end);

/* The O(N^2) oracle: the same step by visiting every pair, in slot order. */
void step_brute(const struct flock *f, const struct rules_params *rp, uint64_t step);

#endif
