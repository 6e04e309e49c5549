/* reduce.c: the reductions' hooks, and their implementation for one process. */
#include "config.h"
#include "reduce.h"

#include <stddef.h>

static void serial_minmax_f32(void *self, float *mn, float *mx, int n)
{
	(void)self;
	(void)mn;
	(void)mx;
	(void)n;
}

static void serial_sum_u64(void *self, uint64_t *v, int n)
{
	(void)self;
	(void)v;
	(void)n;
}

static void serial_fold(void *self, double *acc, int n)
{
	(void)self;
	(void)acc;
	(void)n;
}

static const struct reduce_ops SERIAL_OPS = {
	serial_minmax_f32, serial_sum_u64, serial_fold, serial_fold,
};
static const struct reduce SERIAL = {&SERIAL_OPS, NULL};

const struct reduce *reduce_serial(void)
{
	return &SERIAL;
}

void reduce_minmax_f32(const struct reduce *r, float *mn, float *mx, int n)
{
	r = r ? r : &SERIAL;
	r->ops->minmax_f32(r->self, mn, mx, n);
}

void reduce_sum_u64(const struct reduce *r, uint64_t *v, int n)
{
	r = r ? r : &SERIAL;
	r->ops->sum_u64(r->self, v, n);
}

void reduce_fold_begin(const struct reduce *r, double *acc, int n)
{
	r = r ? r : &SERIAL;
	r->ops->fold_begin(r->self, acc, n);
}

void reduce_fold_end(const struct reduce *r, double *acc, int n)
{
	r = r ? r : &SERIAL;
	r->ops->fold_end(r->self, acc, n);
}
