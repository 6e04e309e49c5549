/* reduce.h: the reductions over the whole flock whose result must not
 * depend on how the flock is split, behind one ops table. In one process
 * the flock is whole and each is the identity (reduce_serial); a run split
 * over processes (MPI) supplies its own, and the engine calls the same
 * hooks at the same places.
 *
 * Two kinds, by what makes them reproducible:
 *  - exact: min and max of binary32 values and sums of integers, the same
 *    in any order and any grouping (the grid's extent, the crowding that
 *    picks its reach, the number of boids);
 *  - folds: floating-point sums in slot order (the metrics), which are
 *    reproducible only in one order. Slot order is cell order, cells by
 *    increasing index (x fastest, the last axis slowest), so a split into
 *    slabs along the last axis keeps it: a part's slots are consecutive in
 *    the global order, and the fold is each part's sum continued from the
 *    previous part's running total. The caller runs
 *        reduce_fold_begin(r, acc, n);   running totals of the parts before
 *        for each slot in order: acc[j] += ...
 *        reduce_fold_end(r, acc, n);     the totals of the whole flock
 *    and gets the bits of the serial loop. */
#ifndef BOIDSIM_REDUCE_H
#define BOIDSIM_REDUCE_H

#include <stdint.h>

struct reduce_ops {
	/* In place, over every part: mn[j] the least of the parts' mn[j],
	 * mx[j] the greatest. */
	void (*minmax_f32)(void *self, float *mn, float *mx, int n);
	/* In place: v[j] the sum of the parts' v[j]. */
	void (*sum_u64)(void *self, uint64_t *v, int n);
	/* acc[j] (zero on entry) becomes the running totals of the parts
	 * before this one; ... the totals of all parts. */
	void (*fold_begin)(void *self, double *acc, int n);
	void (*fold_end)(void *self, double *acc, int n);
};

struct reduce {
	const struct reduce_ops *ops;
	void *self;
};

/* The whole flock in one process: every reduction is the identity. */
const struct reduce *reduce_serial(void);

/* The hooks, with r NULL taken as reduce_serial(). */
void reduce_minmax_f32(const struct reduce *r, float *mn, float *mx, int n);
void reduce_sum_u64(const struct reduce *r, uint64_t *v, int n);
void reduce_fold_begin(const struct reduce *r, double *acc, int n);
void reduce_fold_end(const struct reduce *r, double *acc, int n);

#endif
