/* metrics.c: order parameters computed from the flock's state. Sums are
 * taken in double, serially in slot order or in fixed blocks, so they are
 * the same for any thread count. */
#include "config.h"
#include "metrics.h"
#include "reduce.h"

#include <math.h>
#include <string.h>

#include "detmath.h"

double metrics_polarization(const struct flock *f)
{
	double sum[3] = {0, 0, 0}, s2 = 0;
	size_t k;
	int d;

	uint64_t count = f->n;

	reduce_sum_u64(f->reduce, &count, 1);
	if (count == 0)
		return 0.0;
	reduce_fold_begin(f->reduce, sum, f->dims);
	for (k = 0; k < f->n; k++) {
		double v2 = 0, inv;

		for (d = 0; d < f->dims; d++)
			v2 += (double)f->vel[d][k] * f->vel[d][k];
		if (v2 == 0.0)
			continue;
		inv = 1.0 / sqrt(v2);
		for (d = 0; d < f->dims; d++)
			sum[d] += f->vel[d][k] * inv;
	}
	reduce_fold_end(f->reduce, sum, f->dims);
	for (d = 0; d < f->dims; d++)
		s2 += sum[d] * sum[d];
	return sqrt(s2) / (double)count;
}

int metrics_init(struct metrics *m, size_t n, struct util_err *err)
{
	memset(m, 0, sizeof *m);
	if (!(m->parent = util_alloc(n, sizeof *m->parent, err)) ||
	    !(m->nn = util_alloc(n, sizeof *m->nn, err))) {
		metrics_free(m);
		return -1;
	}
	return 0;
}

void metrics_free(struct metrics *m)
{
	util_free(m->parent);
	util_free(m->nn);
	memset(m, 0, sizeof *m);
}

/* The centroid. On a torus the arithmetic mean is meaningless (a flock
 * straddling an edge would be placed mid-box), so under wrap each axis
 * takes the circular mean of Bai and Breen, "Calculating center of mass in
 * an unbounded 2D environment", J. Graphics Tools 13(4), 2008: positions
 * become angles on a circle, the mean of their unit vectors is taken back
 * to a position. */
/* Sums over the flock are folds in slot order (reduce.h), n the number of
 * boids of the whole flock. */
static void centroid(const struct flock *f, const struct bounds *b, double n, double c[3])
{
	double acc[6] = {0, 0, 0, 0, 0, 0}; /* per axis: the sum, or cos and sin sums */
	int d;
	size_t k;

	for (d = 0; d < 3; d++)
		c[d] = 0.0;
	reduce_fold_begin(f->reduce, acc, 2 * f->dims);
	for (d = 0; d < f->dims; d++) {
		if (b->mode != BOUNDS_WRAP) {
			for (k = 0; k < f->n; k++)
				acc[2 * d] += f->pos[d][k];
		} else {
			double si, co, t;

			for (k = 0; k < f->n; k++) {
				/* angle in [-pi, pi) */
				t = ((double)f->pos[d][k] - b->lo[d]) / b->len[d] * 2.0 * DETMATH_PI -
				    DETMATH_PI;
				detmath_sincos(t, &si, &co);
				acc[2 * d] += co;
				acc[2 * d + 1] += si;
			}
		}
	}
	reduce_fold_end(f->reduce, acc, 2 * f->dims);
	for (d = 0; d < f->dims; d++) {
		if (b->mode != BOUNDS_WRAP) {
			c[d] = acc[2 * d] / n;
		} else {
			/* detmath's, not libm's: the metrics file is an output whose
			 * bytes must not depend on the C library either */
			double t = detmath_atan2(acc[2 * d + 1], acc[2 * d]);

			c[d] = b->lo[d] + (t + DETMATH_PI) / (2.0 * DETMATH_PI) * b->len[d];
		}
	}
}

void metrics_compute(struct metrics *m, const struct flock *f, const struct grid *g,
		     const struct rules_params *rp, struct metrics_row *row)
{
	const struct bounds *b = &rp->ip.box;
	/* The sums, folded in slot order: polarization and milling vectors,
	 * speed, squared distance from the centroid, nearest-neighbour
	 * distance, and the hue's vector. */
	enum { POL = 0, MILL = 3, SPEED = 6, R2 = 7, NN = 8, HUE = 9, NSUMS = 11 };
	double acc[NSUMS] = {0};
	double *pol = acc + POL, *mill = acc + MILL, n;
	uint64_t count = f->n;
	size_t k;
	int d, dims = f->dims;

	memset(row, 0, sizeof *row);
	reduce_sum_u64(f->reduce, &count, 1);
	n = (double)count;
	centroid(f, b, n, row->centroid);
	/* nearest neighbours in parallel, each slot its own entry */
	#pragma omp parallel for schedule(dynamic, 256) if (f->n >= f->parallel_min)
	for (k = 0; k < f->n; k++)
		m->nn[k] = sqrt(grid_nearest2(g, f, rp, k));
	reduce_fold_begin(f->reduce, acc, NSUMS);
	for (k = 0; k < f->n; k++) {
		double v[3] = {0, 0, 0}, r[3] = {0, 0, 0}, v2 = 0, rr = 0, sp;
		int off = 0; /* whether r is more than the centroid's rounding */

		for (d = 0; d < dims; d++) {
			v[d] = f->vel[d][k];
			v2 += v[d] * v[d];
			r[d] = (double)f->pos[d][k] - row->centroid[d];
			if (b->mode == BOUNDS_WRAP) { /* nearest image of the offset */
				if (r[d] > 0.5 * b->len[d])
					r[d] -= b->len[d];
				else if (r[d] < -0.5 * b->len[d])
					r[d] += b->len[d];
			}
			rr += r[d] * r[d];
			/* Within the binary32 spacing of the position, the offset
			 * is the centroid's rounding, not a direction: a lone boid
			 * under wrap is 1e-15 from its circular mean, whose unit
			 * vector would give it a milling of 1. */
			off |= fabs(r[d]) > ldexp(fabs((double)f->pos[d][k]) +
						  fabs(row->centroid[d]), -24);
		}
		sp = sqrt(v2);
		acc[SPEED] += sp;
		acc[R2] += rr;
		acc[NN] += isfinite(m->nn[k]) ? m->nn[k] : 0.0;
		if (sp > 0.0) {
			for (d = 0; d < dims; d++)
				pol[d] += v[d] / sp;
			/* milling: r_ic x v_i with both unit vectors (Couzin 2002) */
			if (rr > 0.0 && off) {
				double ir = 1.0 / sqrt(rr), iv = 1.0 / sp;

				mill[2] += (r[0] * v[1] - r[1] * v[0]) * ir * iv;
				if (dims == 3) {
					mill[0] += (r[1] * v[2] - r[2] * v[1]) * ir * iv;
					mill[1] += (r[2] * v[0] - r[0] * v[2]) * ir * iv;
				}
			}
		}
	}
	if (f->has_hue)
		for (k = 0; k < f->n; k++) {
			acc[HUE] += f->hue[0][k];
			acc[HUE + 1] += f->hue[1][k];
		}
	reduce_fold_end(f->reduce, acc, NSUMS);
	row->polarization = sqrt(pol[0] * pol[0] + pol[1] * pol[1] + pol[2] * pol[2]) / n;
	row->milling = sqrt(mill[0] * mill[0] + mill[1] * mill[1] + mill[2] * mill[2]) / n;
	row->mean_speed = acc[SPEED] / n;
	row->gyration = sqrt(acc[R2] / n);
	row->nn_distance = count > 1 ? acc[NN] / n : 0.0;
	/* Connected components join boids of different parts: a split
	 * flock needs its own (a union-find over the halo's links). */
	row->groups = grid_groups(g, f, rp, rp->r2_max, m->parent);
	if (f->has_hue) {
		row->has_hue = 1;
		row->hue_order = sqrt(acc[HUE] * acc[HUE] + acc[HUE + 1] * acc[HUE + 1]) / n;
	}
	if (count == 0) {
		/* No boid (a population schedule took them all): every mean
		 * is over nothing; NAN, not 0/0, whose sign is the CPU's. */
		row->polarization = row->milling = row->mean_speed = NAN;
		row->gyration = row->nn_distance = row->hue_order = NAN;
		for (d = 0; d < 3; d++)
			row->centroid[d] = NAN;
		row->groups = 0;
	}
}

/* %.9g, but a NaN is "nan" whatever its sign and the C library. */
static int put_value(FILE *fp, double v)
{
	return isnan(v) ? fprintf(fp, ",nan") : fprintf(fp, ",%.9g", v);
}

int metrics_write_header(FILE *fp, int dims, int has_hue)
{
	return fprintf(fp, "step,time,polarization,milling,mean_speed,centroid_x,centroid_y%s,"
		       "gyration,nn_distance,groups%s\n", dims == 3 ? ",centroid_z" : "",
		       has_hue ? ",hue_order" : "") < 0 ? -1 : 0;
}

int metrics_write_row(FILE *fp, int dims, uint64_t step, double dt,
		      const struct metrics_row *row)
{
	const double v[] = {row->polarization, row->milling, row->mean_speed,
			    row->centroid[0], row->centroid[1], row->centroid[2],
			    row->gyration, row->nn_distance};
	int rc = fprintf(fp, "%llu,%.17g", (unsigned long long)step, (double)step * dt), i;

	for (i = 0; rc >= 0 && i < (int)(sizeof v / sizeof v[0]); i++)
		if (i != 5 || dims == 3)
			rc = put_value(fp, v[i]);
	if (rc >= 0)
		rc = fprintf(fp, ",%llu", (unsigned long long)row->groups);
	if (rc >= 0 && row->has_hue)
		rc = put_value(fp, row->hue_order);
	if (rc >= 0)
		rc = fprintf(fp, "\n");
	return rc < 0 ? -1 : 0;
}
