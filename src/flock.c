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

/* Boid id's initial state, in slot k: position uniform in [lo, hi]
 * (placed in the box by the bounds mode), heading uniform on the circle
 * or sphere (rng_direction), speed uniform in [speed.min, speed.max]
 * (speed.max for the constant-speed models), hue uniform; a pure function
 * of (seed, id). */
static void draw_boid(struct flock *f, const struct scenario *sc, const struct bounds *box,
		      size_t k, uint32_t id, const double lo[3], const double hi[3])
{
	uint32_t r[4];
	double h[3], speed, p;
	int d, dims = f->dims;

	f->id[k] = id;
	for (d = 0; d < dims; d++) {
		rng_draw4(sc->seed, RNG_INIT_POSITION, (uint32_t)d, id, 0, r);
		p = lo[d] + rng_unit(r[0], r[1]) * (hi[d] - lo[d]);
		f->pos[d][k] = bounds_place(box, d, p);
	}
	rng_direction(sc->seed, RNG_INIT_HEADING, 0, id, dims, h);
	rng_draw4(sc->seed, RNG_INIT_SPEED, 0, id, 0, r);
	speed = sc->speed_min + rng_unit(r[0], r[1]) * (sc->speed_max - sc->speed_min);
	/* Vicsek's and Couzin's particles all move at one speed. */
	if (sc->model == MODEL_VICSEK || sc->model == MODEL_COUZIN)
		speed = sc->speed_max;
	for (d = 0; d < dims; d++)
		f->vel[d][k] = (float)(h[d] * speed);
	/* Hue: u uniform in [0, 1) turns, as (cos 2 pi u, sin 2 pi u); the
	 * angle 2 pi u - pi is within detmath's range, and its cosine and sine
	 * are those of 2 pi u with their signs changed. */
	if (f->has_hue) {
		double s, c;

		rng_draw4(sc->seed, RNG_HUE, 0, id, 0, r);
		detmath_sincos(2.0 * DETMATH_PI * rng_unit(r[0], r[1]) - DETMATH_PI, &s, &c);
		f->hue[0][k] = (float)-c;
		f->hue[1][k] = (float)-s;
	}
}

void flock_reindex(struct flock *f)
{
	uint32_t id, r = 0;
	size_t k;

	for (id = 0; id < f->next_id; id++)
		f->rank[id] = UINT32_MAX;
	for (k = 0; k < f->n; k++)
		f->rank[f->id[k]] = 0;
	for (id = 0; id < f->next_id; id++)
		if (f->rank[id] == 0) {
			f->live[r] = id;
			f->rank[id] = r++;
		}
}

int flock_init(struct flock *f, const struct scenario *sc, struct util_err *err)
{
	size_t n = (size_t)sc->count, cap = (size_t)sc->capacity, i;
	int d, dims = sc->dims;
	struct bounds box;

	memset(f, 0, sizeof *f);
	f->dims = dims;
	f->n = n;
	f->cap = cap > n ? cap : n;
	f->next_id = (uint32_t)n;
	/* RULES_LANES slots of padding (zeros, never written): the neighbour
	 * loop reads whole groups of lanes and masks the slots past the end. */
	for (d = 0; d < dims; d++) {
		if (!(f->pos[d] = util_alloc(f->cap + RULES_LANES, sizeof(float), err)) ||
		    !(f->vel[d] = util_alloc(f->cap + RULES_LANES, sizeof(float), err)) ||
		    !(f->pos_next[d] = util_alloc(f->cap + RULES_LANES, sizeof(float), err)) ||
		    !(f->vel_next[d] = util_alloc(f->cap + RULES_LANES, sizeof(float), err)))
			goto fail;
	}
	f->has_hue = sc->has_hue;
	for (d = 0; d < 2 && f->has_hue; d++)
		if (!(f->hue[d] = util_alloc(f->cap + RULES_LANES, sizeof(float), err)) ||
		    !(f->hue_next[d] = util_alloc(f->cap + RULES_LANES, sizeof(float), err)))
			goto fail;
	if (!(f->id = util_alloc(f->cap, sizeof(uint32_t), err)) ||
	    !(f->id_next = util_alloc(f->cap, sizeof(uint32_t), err)))
		goto fail;
	if (sc->n_events > 0 &&
	    (!(f->live = util_alloc(f->cap, sizeof(uint32_t), err)) ||
	     !(f->rank = util_alloc((size_t)sc->ids_total, sizeof(uint32_t), err))))
		goto fail;
	bounds_init(&box, sc);

	#pragma omp parallel for schedule(static) if (n >= util_parallel_min)
	for (i = 0; i < n; i++)
		draw_boid(f, sc, &box, i, (uint32_t)i, sc->bmin, sc->bmax);
	if (f->rank)
		flock_reindex(f);
	return 0;
fail:
	flock_free(f);
	return -1;
}

/* Inside [lo, hi] on every axis. */
static int in_region(const struct flock *f, size_t k, const double lo[3], const double hi[3])
{
	int d;

	for (d = 0; d < f->dims; d++)
		if (!((double)f->pos[d][k] >= lo[d] && (double)f->pos[d][k] <= hi[d]))
			return 0;
	return 1;
}

size_t flock_apply_event(struct flock *f, const struct scenario *cur,
			 const struct scenario_event *ev)
{
	size_t k, j, done = 0;
	int d;

	if (ev->add) {
		struct bounds box;

		bounds_init(&box, cur);
		for (j = 0; j < ev->n; j++)
			draw_boid(f, cur, &box, f->n + j, f->next_id + (uint32_t)j, ev->rmin,
				  ev->rmax);
		f->n += ev->n;
		f->next_id += (uint32_t)ev->n;
		done = ev->n;
	} else {
		/* The highest ids first, never the last boid: rank, then slot,
		 * marks the ones to go (id_next is free scratch between steps). */
		uint32_t *slot_of = f->id_next, r;

		for (k = 0; k < f->n; k++)
			slot_of[f->rank[f->id[k]]] = (uint32_t)k;
		for (r = (uint32_t)f->n; r-- > 0 && done < ev->n && done + 1 < f->n;) {
			k = slot_of[r];
			if (ev->has_region && !in_region(f, k, ev->rmin, ev->rmax))
				continue;
			f->id[k] = UINT32_MAX;
			done++;
		}
		for (k = j = 0; k < f->n; k++) {
			if (f->id[k] == UINT32_MAX)
				continue;
			f->id[j] = f->id[k];
			for (d = 0; d < f->dims; d++) {
				f->pos[d][j] = f->pos[d][k];
				f->vel[d][j] = f->vel[d][k];
			}
			for (d = 0; d < 2 && f->has_hue; d++)
				f->hue[d][j] = f->hue[d][k];
			j++;
		}
		flock_shrink(f, j);
	}
	flock_reindex(f);
	return done;
}

void flock_shrink(struct flock *f, size_t n)
{
	size_t k;
	int d;

	/* The slots past the end are zero in both buffers, as at the start:
	 * the neighbour loop reads (and masks) the padding. */
	for (k = n; k < f->n; k++) {
		for (d = 0; d < f->dims; d++)
			f->pos[d][k] = f->vel[d][k] = f->pos_next[d][k] = f->vel_next[d][k] = 0.0f;
		for (d = 0; d < 2 && f->has_hue; d++)
			f->hue[d][k] = f->hue_next[d][k] = 0.0f;
	}
	f->n = n;
}

void flock_ids(const struct flock *f, uint32_t *out)
{
	size_t k;

	if (f->live) {
		memcpy(out, f->live, f->n * sizeof *out);
		return;
	}
	for (k = 0; k < f->n; k++)
		out[k] = (uint32_t)k;
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
	util_free(f->live);
	util_free(f->rank);
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
		uint32_t id = flock_rank(f, f->id[k]);

		for (d = 0; d < dims; d++) {
			out[d][id] = f->pos[d][k];
			out[dims + d][id] = f->vel[d][k];
		}
	}
	if (f->has_hue) {
		float *h = out[2 * dims];

		#pragma omp parallel for schedule(static) if (n >= util_parallel_min)
		for (k = 0; k < n; k++)
			h[flock_rank(f, f->id[k])] = flock_hue_turns(f->hue[0][k], f->hue[1][k]);
	}
}

void flock_hue_to_id_order(const struct flock *f, float *const out[2])
{
	size_t n = f->n, k;

	if (!f->has_hue)
		return;
	#pragma omp parallel for schedule(static) if (n >= util_parallel_min)
	for (k = 0; k < n; k++) {
		out[0][flock_rank(f, f->id[k])] = f->hue[0][k];
		out[1][flock_rank(f, f->id[k])] = f->hue[1][k];
	}
}
