/* predators.c: the predators: a second group of agents that chase the
 * boids (Reynolds 1999, "pursuit" without prediction: steer toward the
 * quarry's present position), moving at one speed with a limited turn. */
#include "config.h"
#include "predators.h"

#include <math.h>
#include <string.h>

#include "bounds.h"
#include "detmath.h"
#include "rng.h"
#include "rules.h"

/* What one block of boids tells one predator: its nearest boid within
 * range (d2 = INFINITY when none) and the sum of the displacements to all
 * of its boids, in binary64. */
struct predators_part {
	double sum[3];
	float d[3], d2;
	uint32_t id;
	uint32_t n;
};

int predators_init(struct predators *pr, const struct scenario *sc, size_t capacity,
		   struct util_err *err)
{
	struct bounds box;
	int i, d;

	memset(pr, 0, sizeof *pr);
	pr->n = sc->n_predators;
	pr->dims = sc->dims;
	if (pr->n == 0)
		return 0;
	for (d = 0; d < sc->dims; d++)
		if (!(pr->pos[d] = util_alloc((size_t)pr->n, sizeof(float), err)) ||
		    !(pr->vel[d] = util_alloc((size_t)pr->n, sizeof(float), err)) ||
		    !(pr->pos_next[d] = util_alloc((size_t)pr->n, sizeof(float), err)) ||
		    !(pr->vel_next[d] = util_alloc((size_t)pr->n, sizeof(float), err)))
			goto fail;
	pr->part_blocks = (capacity + PREDATORS_BLOCK - 1) / PREDATORS_BLOCK;
	if (!(pr->part = util_alloc(pr->part_blocks * (size_t)pr->n, sizeof *pr->part, err)) ||
	    (sc->pred_chase == PREDATOR_CENTRE &&
	     !(pr->slot_of = util_alloc(capacity, sizeof(uint32_t), err))))
		goto fail;
	bounds_init(&box, sc);
	for (i = 0; i < pr->n; i++) {
		uint32_t r[4];
		double h[3];

		for (d = 0; d < sc->dims; d++) {
			rng_draw4(sc->seed, RNG_PREDATOR, (uint32_t)d, (uint32_t)i, 0, r);
			pr->pos[d][i] = bounds_place(&box, d, sc->pred_min[d] + rng_unit(r[0], r[1]) *
						     (sc->pred_max[d] - sc->pred_min[d]));
		}
		rng_direction(sc->seed, RNG_PREDATOR, 3, (uint32_t)i, sc->dims, h);
		for (d = 0; d < sc->dims; d++)
			pr->vel[d][i] = (float)(h[d] * sc->pred_speed);
	}
	return 0;
fail:
	predators_free(pr);
	return -1;
}

void predators_free(struct predators *pr)
{
	int d;

	for (d = 0; d < 3; d++) {
		util_free(pr->pos[d]);
		util_free(pr->vel[d]);
		util_free(pr->pos_next[d]);
		util_free(pr->vel_next[d]);
	}
	util_free(pr->part);
	util_free(pr->slot_of);
	memset(pr, 0, sizeof *pr);
}

/* Boids lo to hi-1 seen from predator i: in slot order, or with map in id
 * order (map[r]: the slot of the boid of rank r). Displacements are
 * nearest images in binary32, as the boids' own neighbour search has them. */
static void scan_block(const struct predators *pr, const struct bounds *box,
		       const struct flock *f, const uint32_t *map, int i, size_t lo,
		       size_t hi, float range2, struct predators_part *out)
{
	size_t j;
	int d, dims = pr->dims;

	memset(out, 0, sizeof *out);
	out->d2 = INFINITY;
	out->id = UINT32_MAX;
	for (j = lo; j < hi; j++) {
		const size_t k = map ? map[j] : j;
		float dd[3] = {0, 0, 0}, d2 = 0.0f;

		for (d = 0; d < dims; d++) {
			dd[d] = bounds_min_image(box, d, f->pos[d][k] - pr->pos[d][i]);
			out->sum[d] += dd[d];
			d2 += dd[d] * dd[d];
		}
		/* the nearest; of equals, the lowest id */
		if (d2 <= range2 && (d2 < out->d2 || (d2 == out->d2 && f->id[k] < out->id))) {
			out->d2 = d2;
			out->id = f->id[k];
			memcpy(out->d, dd, sizeof dd);
		}
	}
	out->n = (uint32_t)(hi - lo);
}

void predators_step(struct predators *pr, const struct scenario *cur,
		    const struct integrate_params *ip, const struct flock *f)
{
	const size_t blocks = (f->n + PREDATORS_BLOCK - 1) / PREDATORS_BLOCK;
	const float range = (float)cur->pred_range, range2 = range * range;
	double cos_t = -1.0, sin_t = 0.0, turn = cur->pred_max_turn * ip->dt;
	long b;
	int i, d, dims = pr->dims;

	if (pr->n == 0)
		return;
	/* A turn of half a circle or more per step is no limit at all. */
	if (turn > 0.0 && turn < 180.0)
		detmath_sincos(turn * DETMATH_PI / 180.0, &sin_t, &cos_t);
	if (pr->slot_of) {
		size_t k;

		#pragma omp parallel for schedule(static) if (f->n >= f->parallel_min)
		for (k = 0; k < f->n; k++)
			pr->slot_of[flock_rank(f, f->id[k])] = (uint32_t)k;
	}
	#pragma omp parallel for schedule(static) private(i) if (f->n >= f->parallel_min)
	for (b = 0; b < (long)blocks; b++) {
		size_t lo = (size_t)b * PREDATORS_BLOCK;
		size_t hi = lo + PREDATORS_BLOCK < f->n ? lo + PREDATORS_BLOCK : f->n;

		for (i = 0; i < pr->n; i++)
			scan_block(pr, &ip->box, f, pr->slot_of, i, lo, hi, range2,
				   &pr->part[(size_t)b * (size_t)pr->n + (size_t)i]);
	}
	for (i = 0; i < pr->n; i++) {
		double u[3] = {0, 0, 0}, w[3] = {0, 0, 0}, h[3], x[3] = {0, 0, 0};
		float p[3] = {0, 0, 0}, v[3] = {0, 0, 0};
		const struct predators_part *best = NULL;
		double cnt = 0;
		size_t k;
		int has_u, has_w = 0;

		for (d = 0; d < dims; d++) {
			u[d] = pr->vel[d][i];
			p[d] = pr->pos[d][i];
		}
		has_u = rules_normalize(u, dims);
		/* The quarry: the nearest boid within range, or the centre of
		 * the flock as the predator sees it (the mean of the nearest
		 * images, which is the centroid when there is no wrap). */
		for (k = 0; k < blocks; k++) {
			const struct predators_part *q = &pr->part[k * (size_t)pr->n + (size_t)i];

			if (cur->pred_chase == PREDATOR_CENTRE) {
				for (d = 0; d < dims; d++)
					w[d] += q->sum[d];
				cnt += q->n;
			} else if (q->d2 < INFINITY &&
				   (best == NULL || q->d2 < best->d2 ||
				    (q->d2 == best->d2 && q->id < best->id))) {
				best = q;
			}
		}
		if (cur->pred_chase == PREDATOR_CENTRE) {
			for (d = 0; d < dims; d++)
				w[d] /= cnt;
		} else if (best) {
			for (d = 0; d < dims; d++)
				w[d] = best->d[d];
		}
		has_w = rules_normalize(w, dims);
		/* No quarry in range (or on it): hold the heading. */
		if (!has_w)
			memcpy(w, u, sizeof w);
		if (!has_u && !has_w)
			w[0] = 1.0;
		if (has_u && cos_t > -1.0)
			rules_turn_limit(cos_t, sin_t, dims, u, w, h);
		else
			memcpy(h, w, sizeof h);
		rules_normalize(h, dims);
		for (d = 0; d < dims; d++) {
			v[d] = (float)(h[d] * cur->pred_speed);
			x[d] = (double)p[d] + (double)v[d] * ip->dt;
		}
		integrate_finish(ip, p, x, v);
		for (d = 0; d < dims; d++) {
			pr->pos_next[d][i] = (float)x[d];
			pr->vel_next[d][i] = v[d];
		}
	}
}

void predators_swap(struct predators *pr)
{
	int d;

	for (d = 0; d < pr->dims && pr->n > 0; d++) {
		float *p = pr->pos[d], *v = pr->vel[d];

		pr->pos[d] = pr->pos_next[d];
		pr->pos_next[d] = p;
		pr->vel[d] = pr->vel_next[d];
		pr->vel_next[d] = v;
	}
}
