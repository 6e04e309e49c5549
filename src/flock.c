/* flock.c: allocation of the structure-of-arrays state and its seeded
 * initial condition. */
#include "config.h"
#include "flock.h"
#include "bounds.h"
#include "detmath.h"
#include "rng.h"
#include "rules.h"

#include <math.h>
#include <string.h>

int flock_init(struct flock *f, const struct scenario *sc, struct util_err *err)
{
	size_t n = (size_t)sc->count, i;
	int d, dims = sc->dims;
	struct bounds box;

	memset(f, 0, sizeof *f);
	f->dims = dims;
	f->n = n;
	/* RULES_LANES slots of padding (zeros, never written): the neighbour
	 * loop reads whole groups of lanes and masks the slots past the end. */
	for (d = 0; d < dims; d++) {
		if (!(f->pos[d] = util_alloc(n + RULES_LANES, sizeof(float), err)) ||
		    !(f->vel[d] = util_alloc(n + RULES_LANES, sizeof(float), err)) ||
		    !(f->pos_next[d] = util_alloc(n + RULES_LANES, sizeof(float), err)) ||
		    !(f->vel_next[d] = util_alloc(n + RULES_LANES, sizeof(float), err)))
			goto fail;
	}
	f->has_hue = sc->has_hue;
	for (d = 0; d < 2 && f->has_hue; d++)
		if (!(f->hue[d] = util_alloc(n + RULES_LANES, sizeof(float), err)) ||
		    !(f->hue_next[d] = util_alloc(n + RULES_LANES, sizeof(float), err)))
			goto fail;
	if (!(f->id = util_alloc(n, sizeof(uint32_t), err)) ||
	    !(f->id_next = util_alloc(n, sizeof(uint32_t), err)))
		goto fail;
	bounds_init(&box, sc);

	#pragma omp parallel for schedule(static) if (n >= util_parallel_min)
	for (i = 0; i < n; i++) {
		uint32_t r[4], id = (uint32_t)i;
		double h[3] = {0, 0, 0}, h2 = 0, speed, p;
		uint32_t attempt;
		int k;

		f->id[i] = id;
		/* Positions: uniform in the box. */
		for (k = 0; k < dims; k++) {
			rng_draw4(sc->seed, RNG_INIT_POSITION, (uint32_t)k, id, 0, r);
			p = sc->bmin[k] + rng_unit(r[0], r[1]) * (sc->bmax[k] - sc->bmin[k]);
			f->pos[k][i] = bounds_place(&box, k, p);
		}
		/* Heading: uniform on the circle/sphere by rejection from the cube,
		 * which needs no trigonometry (libm-independent results). */
		for (attempt = 0;; attempt++) {
			rng_draw4(sc->seed, RNG_INIT_HEADING, attempt, id, 0, r);
			h2 = 0;
			for (k = 0; k < dims; k++) {
				h[k] = 2.0 * ((double)r[k] * 0x1p-32) - 1.0;
				h2 += h[k] * h[k];
			}
			if (h2 <= 1.0 && h2 > 1e-6)
				break;
		}
		rng_draw4(sc->seed, RNG_INIT_SPEED, 0, id, 0, r);
		speed = sc->speed_min + rng_unit(r[0], r[1]) * (sc->speed_max - sc->speed_min);
		/* Vicsek's and Couzin's particles all move at one speed. */
		if (sc->model == MODEL_VICSEK || sc->model == MODEL_COUZIN)
			speed = sc->speed_max;
		for (k = 0; k < dims; k++)
			f->vel[k][i] = (float)(h[k] / sqrt(h2) * speed);
		/* Hue: u uniform in [0, 1) turns, as (cos 2 pi u, sin 2 pi u);
		 * the angle 2 pi u - pi is within detmath's range, and its
		 * cosine and sine are those of 2 pi u with their signs changed. */
		if (f->has_hue) {
			double s, c;

			rng_draw4(sc->seed, RNG_HUE, 0, id, 0, r);
			detmath_sincos(2.0 * DETMATH_PI * rng_unit(r[0], r[1]) - DETMATH_PI, &s, &c);
			f->hue[0][i] = (float)-c;
			f->hue[1][i] = (float)-s;
		}
	}
	return 0;
fail:
	flock_free(f);
	return -1;
}

void flock_free(struct flock *f)
{
	int d;

	for (d = 0; d < 3; d++) {
		util_free(f->pos[d]);
		util_free(f->vel[d]);
		util_free(f->pos_next[d]);
		util_free(f->vel_next[d]);
	}
	for (d = 0; d < 2; d++) {
		util_free(f->hue[d]);
		util_free(f->hue_next[d]);
	}
	util_free(f->id);
	util_free(f->id_next);
	memset(f, 0, sizeof *f);
}

void flock_swap(struct flock *f, int with_ids)
{
	int d;
	uint32_t *t;

	for (d = 0; d < f->dims; d++) {
		float *p = f->pos[d], *v = f->vel[d];

		f->pos[d] = f->pos_next[d];
		f->pos_next[d] = p;
		f->vel[d] = f->vel_next[d];
		f->vel_next[d] = v;
	}
	for (d = 0; d < 2 && f->has_hue; d++) {
		float *h = f->hue[d];

		f->hue[d] = f->hue_next[d];
		f->hue_next[d] = h;
	}
	if (with_ids) {
		t = f->id;
		f->id = f->id_next;
		f->id_next = t;
	}
}

int flock_fields(const struct flock *f)
{
	return 2 * f->dims + (f->has_hue ? 1 : 0);
}

float flock_hue_turns(float c, float s)
{
	double t = detmath_atan2((double)s, (double)c) / (2.0 * DETMATH_PI);
	float h;

	if (t < 0.0)
		t += 1.0;
	h = (float)t;
	/* 1 (a hair below a whole turn, rounded up) is 0; so is -0 */
	return h < 1.0f && h != 0.0f ? h : 0.0f;
}

void flock_to_id_order(const struct flock *f, float *const out[FLOCK_FIELDS_MAX])
{
	size_t n = f->n, k;
	int d, dims = f->dims;

	#pragma omp parallel for schedule(static) private(d) if (n >= util_parallel_min)
	for (k = 0; k < n; k++) {
		uint32_t id = f->id[k];

		for (d = 0; d < dims; d++) {
			out[d][id] = f->pos[d][k];
			out[dims + d][id] = f->vel[d][k];
		}
	}
	if (f->has_hue) {
		float *h = out[2 * dims];

		#pragma omp parallel for schedule(static) if (n >= util_parallel_min)
		for (k = 0; k < n; k++)
			h[f->id[k]] = flock_hue_turns(f->hue[0][k], f->hue[1][k]);
	}
}

void flock_hue_to_id_order(const struct flock *f, float *const out[2])
{
	size_t n = f->n, k;

	if (!f->has_hue)
		return;
	#pragma omp parallel for schedule(static) if (n >= util_parallel_min)
	for (k = 0; k < n; k++) {
		out[0][f->id[k]] = f->hue[0][k];
		out[1][f->id[k]] = f->hue[1][k];
	}
}
