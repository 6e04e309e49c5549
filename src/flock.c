/* flock.c: allocation of the structure-of-arrays state and its seeded
 * initial condition. */
#include "config.h"
#include "flock.h"
#include "bounds.h"
#include "detmath.h"
#include "rng.h"
#include "integrate.h"
#include "rules.h"

#include <math.h>
#include <string.h>


/* Whether x is inside one of the scenario's obstacles. */
static int in_obstacle(const struct scenario *sc, const double x[3])
{
	struct integrate_params ip;

	if (sc->n_obstacles == 0)
		return 0;
	integrate_params_init(&ip, sc);
	return integrate_inside(&ip, x) >= 0;
}

/* A uniformly random rotation (Shoemake, "Uniform random rotations",
 * Graphics Gems III, 1992) as a unit quaternion (w, x, y, z), from three
 * uniforms; the angles 2 pi u - pi keep detmath's range, and negate the
 * sines and cosines of 2 pi u, which only flips signs of the quaternion's
 * parts symmetrically. */
static void random_rotation(const double u[3], double q[4])
{
	double s1, c1, s2, c2, a = sqrt(1.0 - u[0]), b = sqrt(u[0]);

	detmath_sincos(2.0 * DETMATH_PI * u[1] - DETMATH_PI, &s1, &c1);
	detmath_sincos(2.0 * DETMATH_PI * u[2] - DETMATH_PI, &s2, &c2);
	q[0] = b * c2;
	q[1] = a * s1;
	q[2] = a * c1;
	q[3] = b * s2;
}

/* The start heading h (unit) spread by the fraction s toward a uniformly
 * random rotation, as seed 002's Quaternion.Slerp(rotation, Random.rotation,
 * 0.3) and the forward axis of the result: in 3D the rotation taking +z
 * to h, slerped (the shorter way) toward the random one, applied to +z; in
 * 2D the same on the circle, by angles. */
static void spread_heading(const struct scenario *sc, uint32_t id, double h[3])
{
	uint32_t r[4];
	double u[3], s = sc->start_spread;
	int k;

	rng_draw4(sc->seed, RNG_INIT_HEADING, 1u << 20, id, 0, r);
	u[0] = rng_unit(r[0], r[1]);
	u[1] = rng_unit(r[2], r[3]);
	rng_draw4(sc->seed, RNG_INIT_HEADING, (1u << 20) + 1, id, 0, r);
	u[2] = rng_unit(r[0], r[1]);
	if (sc->dims == 2) {
		double a = detmath_atan2(h[1], h[0]), dphi = 2.0 * DETMATH_PI * u[1] - DETMATH_PI;

		/* the random angle is uniform; the difference wrapped to [-pi, pi) */
		dphi = dphi - a;
		if (dphi >= DETMATH_PI)
			dphi -= 2.0 * DETMATH_PI;
		else if (dphi < -DETMATH_PI)
			dphi += 2.0 * DETMATH_PI;
		detmath_sincos(a + s * dphi - (a + s * dphi > DETMATH_PI ? 2.0 * DETMATH_PI :
			       a + s * dphi < -DETMATH_PI ? -2.0 * DETMATH_PI : 0.0), &h[1], &h[0]);
		return;
	}
	{
		double qh[4], qr[4], q[4], dot = 0, th, sn, w0, w1, c;
		const double ax[3] = {-h[1], h[0], 0.0};

		/* +z to h: about z x h by the angle between them (half-angle form) */
		c = sqrt(0.5 * (1.0 + h[2]));
		if (c > 1e-12) {
			qh[0] = c;
			for (k = 0; k < 3; k++)
				qh[k + 1] = ax[k] / (2.0 * c);
		} else {
			qh[0] = 0, qh[1] = 1, qh[2] = 0, qh[3] = 0; /* h = -z: half a turn about x */
		}
		random_rotation(u, qr);
		for (k = 0; k < 4; k++)
			dot += qh[k] * qr[k];
		if (dot < 0.0) {
			for (k = 0; k < 4; k++)
				qr[k] = -qr[k];
			dot = -dot;
		}
		sn = sqrt(detmath_fmax(0.0, 1.0 - dot * dot));
		th = detmath_atan2(sn, dot);
		if (sn > 1e-12) {
			double s0, c0, s1, c1;

			detmath_sincos((1.0 - s) * th, &s0, &c0);
			detmath_sincos(s * th, &s1, &c1);
			w0 = s0 / sn;
			w1 = s1 / sn;
		} else {
			w0 = 1.0 - s;
			w1 = s;
		}
		for (k = 0; k < 4; k++)
			q[k] = w0 * qh[k] + w1 * qr[k];
		/* q applied to +z: the third column of its rotation matrix */
		h[0] = 2.0 * (q[1] * q[3] + q[0] * q[2]);
		h[1] = 2.0 * (q[2] * q[3] - q[0] * q[1]);
		h[2] = 1.0 - 2.0 * (q[1] * q[1] + q[2] * q[2]);
		rules_normalize(h, 3);
	}
}

/* Boid id's initial state, in slot k: position uniform in [lo, hi]
 * (placed in the box by the bounds mode), or, at the start (start set),
 * where the scenario's start says (a box, a ball, a point); never inside
 * an obstacle (redrawn, up to FLOCK_PLACE_TRIES times); heading uniform
 * on the circle or sphere (rng_direction), or start.heading spread by
 * start.spread; speed uniform in [start speed low, high] (speed.min and
 * speed.max by default; speed.max for the constant-speed models), hue
 * uniform; a pure function of (seed, id). Returns 0, or -1 when every
 * attempt fell inside an obstacle (the last is kept). */
static int draw_boid(struct flock *f, const struct scenario *sc, const struct bounds *box,
		     size_t k, uint32_t id, const double lo[3], const double hi[3], int start)
{
	uint32_t r[4], used = 0, took, attempt;
	double h[3], speed, p, x[3] = {0, 0, 0};
	int d, dims = f->dims, placed = 0;

	f->id[k] = id;
	for (attempt = 0; attempt < FLOCK_PLACE_TRIES && !placed; attempt++) {
		if (start && sc->start_shape == START_BALL) {
			double u[3];

			/* each attempt from the indices after the last one's */
			rng_ball(sc->seed, RNG_INIT_POSITION, 8 + used, id, dims, u, &took);
			used += took;
			for (d = 0; d < dims; d++)
				x[d] = sc->start_center[d] + sc->start_radius * u[d];
		} else if (start && sc->start_shape == START_POINT) {
			for (d = 0; d < dims; d++)
				x[d] = sc->start_center[d];
		} else {
			for (d = 0; d < dims; d++) {
				/* the first attempt's counter is 0: step 0, as it always was */
				rng_draw4(sc->seed, RNG_INIT_POSITION, (uint32_t)d, id, attempt, r);
				x[d] = lo[d] + rng_unit(r[0], r[1]) * (hi[d] - lo[d]);
			}
		}
		for (d = 0; d < dims; d++) {
			p = x[d];
			f->pos[d][k] = bounds_place(box, d, p);
			x[d] = f->pos[d][k];
		}
		placed = !in_obstacle(sc, x);
	}
	if (start && sc->has_start_heading) {
		for (d = 0; d < 3; d++)
			h[d] = d < dims ? sc->start_heading[d] : 0.0;
		rules_normalize(h, dims);
		if (sc->start_spread > 0.0)
			spread_heading(sc, id, h);
	} else {
		rng_direction(sc->seed, RNG_INIT_HEADING, 0, id, dims, h);
	}
	rng_draw4(sc->seed, RNG_INIT_SPEED, 0, id, 0, r);
	/* start.speed at the start; boids added later as the defaults */
	{
		const double lo = start ? sc->start_speed_lo : sc->speed_min;
		const double hi = start ? sc->start_speed_hi : sc->speed_max;

		speed = lo + rng_unit(r[0], r[1]) * (hi - lo);
	}
	/* Vicsek's and Couzin's particles all move at one speed; inertia's
	 * velocity is its unit direction at speed.max. */
	if (sc->model == MODEL_VICSEK || sc->model == MODEL_COUZIN || sc->model == MODEL_INERTIA)
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
	/* Its rate (a colour velocity), uniform in hue.spin's [low, high]
	 * turns per unit time, in radians. */
	if (f->hue_fields == 3) {
		rng_draw4(sc->seed, RNG_HUE, 1, id, 0, r);
		f->hue[2][k] = (float)(2.0 * DETMATH_PI *
				       (sc->hue_spin_lo + rng_unit(r[0], r[1]) *
					(sc->hue_spin_hi - sc->hue_spin_lo)));
	}
	return placed ? 0 : -1;
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

/* The hue fields a boid has: cos and sin, and with hue.spin a rate. */
static int hue_fields(const struct scenario *sc)
{
	return !sc->has_hue ? 0 : sc->hue_spin_on ? 3 : 2;
}

/* How many boids of the start find no room, each drawn as flock_init
 * draws it (draw_boid: a pure function of the seed and its id) into a
 * scratch slot and dropped: every id but those of part (of parts) when
 * parts > 1, every id otherwise. */
static uint64_t count_crowded(const struct scenario *sc, const struct bounds *box,
			      uint32_t part, uint32_t parts, size_t parallel_min)
{
	const size_t all = (size_t)sc->count;
	uint64_t crowded = 0;
	size_t i;

	(void)parallel_min; /* (read by the pragma alone: unused without OpenMP) */
	#pragma omp parallel reduction(+:crowded) if (all >= parallel_min)
	{
		float pos[3], vel[3], hue[3];
		uint32_t id;
		struct flock s;
		int d;

		memset(&s, 0, sizeof s);
		s.dims = sc->dims;
		s.has_hue = sc->has_hue;
		s.hue_fields = hue_fields(sc);
		for (d = 0; d < 3; d++) {
			s.pos[d] = &pos[d];
			s.vel[d] = &vel[d];
			s.hue[d] = &hue[d];
		}
		s.id = &id;
		#pragma omp for schedule(static)
		for (i = 0; i < all; i++)
			if (parts <= 1 || i % parts != part)
				crowded += draw_boid(&s, sc, box, 0, (uint32_t)i, sc->start_min,
						     sc->start_max, 1) != 0;
	}
	return crowded;
}

static void crowded_error(struct util_err *err, uint64_t crowded)
{
	util_err_set(err, "no room to start: %llu boids fell inside obstacles in each of %d "
		     "tries (the start region, start or the box, is covered)",
		     (unsigned long long)crowded, FLOCK_PLACE_TRIES);
}

int flock_check_room(const struct scenario *sc, size_t parallel_min, struct util_err *err)
{
	struct bounds box;
	uint64_t crowded;

	if (sc->n_obstacles == 0 || sc->start_data)
		return 0;
	bounds_init(&box, sc);
	crowded = count_crowded(sc, &box, 0, 1, parallel_min);
	if (crowded == 0)
		return 0;
	crowded_error(err, crowded);
	return -2;
}

int flock_init(struct flock *f, const struct scenario *sc, size_t parallel_min,
	       struct util_err *err)
{
	return flock_init_part(f, sc, parallel_min, 0, 1, err);
}

int flock_init_part(struct flock *f, const struct scenario *sc, size_t parallel_min,
		    uint32_t part, uint32_t parts, struct util_err *err)
{
	const size_t all = (size_t)sc->count, cap = (size_t)sc->capacity;
	/* the ids part, part + parts, ...: slot i holds id part + i parts */
	const size_t n = all / parts + (part < all % parts);
	size_t i, stride, slices;
	uint64_t crowded = 0;
	int d, dims = sc->dims;
	struct bounds box;
	char *at;

	memset(f, 0, sizeof *f);
	f->dims = dims;
	f->n = n;
	f->parallel_min = parallel_min;
	f->cap = cap > all ? cap : all;
	f->next_id = (uint32_t)all;
	f->has_hue = sc->has_hue;
	f->hue_fields = hue_fields(sc);
	/* Every per-boid array is a slice of one block, so that the block's
	 * whole huge pages (util_alloc_huge) cover all of them but the block's
	 * two ends; separate arrays of a few MiB each would leave a partial
	 * huge page at each array's end on small pages. Huge pages only where
	 * every slice is in use to its end: with room for more boids (a
	 * population schedule's capacity, a part of a split run) the huge page
	 * holding a slice's last boid would be resident whole, up to 2 MiB a
	 * slice beyond the part in use. RULES_LANES slots of padding end each
	 * slice (zeros, never written): the neighbour loop reads whole groups
	 * of lanes and masks the slots past the end. */
	if (util_mul_size(f->cap + RULES_LANES, sizeof(float), &stride) != 0 ||
	    stride > SIZE_MAX - UTIL_ALIGN) {
		util_err_set(err, "room for %zu boids overflows", f->cap);
		goto fail;
	}
	stride = (stride + UTIL_ALIGN - 1) / UTIL_ALIGN * UTIL_ALIGN;
	slices = (size_t)(4 * dims + 2 * f->hue_fields + 2);
	f->block = f->cap == n ? util_alloc_huge(slices, stride, err) : util_alloc(slices, stride, err);
	if (f->block == NULL)
		goto fail;
	at = f->block;
	for (d = 0; d < dims; d++) {
		f->pos[d] = (float *)(void *)at;
		f->vel[d] = (float *)(void *)(at += stride);
		f->pos_next[d] = (float *)(void *)(at += stride);
		f->vel_next[d] = (float *)(void *)(at += stride);
		at += stride;
	}
	for (d = 0; d < f->hue_fields; d++) {
		f->hue[d] = (float *)(void *)at;
		f->hue_next[d] = (float *)(void *)(at += stride);
		at += stride;
	}
	f->id = (uint32_t *)(void *)at;
	f->id_next = (uint32_t *)(void *)(at + stride);
	if (sc->n_events > 0 &&
	    (!(f->live = util_alloc(f->cap, sizeof(uint32_t), err)) ||
	     !(f->rank = util_alloc((size_t)sc->ids_total, sizeof(uint32_t), err))))
		goto fail;
	if (sc->park_max > 0 &&
	    (!(f->park_id = util_alloc((size_t)sc->park_max, sizeof(uint32_t), err)) ||
	     !(f->park = util_alloc((size_t)sc->park_max, FLOCK_PARK_FIELDS * sizeof(float), err))))
		goto fail;
	bounds_init(&box, sc);

	#pragma omp parallel for schedule(static) reduction(+:crowded) if (n >= f->parallel_min)
	for (i = 0; i < n; i++)
		crowded += draw_boid(f, sc, &box, i, (uint32_t)(part + i * parts), sc->start_min,
				     sc->start_max, 1) != 0;
	/* A start from a file (start.h): its state, checked when it was read;
	 * the draws above gave what the file does not hold (a hue). */
	if (sc->start_data) {
		const float *sd = sc->start_data;

		crowded = 0;
		#pragma omp parallel for schedule(static) private(d) if (n >= f->parallel_min)
		for (i = 0; i < n; i++) {
			const size_t id = f->id[i];

			for (d = 0; d < 2 * dims; d++)
				(d < dims ? f->pos[d] : f->vel[d - dims])[i] = sd[(size_t)d * all + id];
			if (sc->start_hue) {
				double s, c, t = sd[(size_t)(2 * dims) * all + id];

				/* cos and sin of 2 pi t from those of 2 pi t - pi */
				detmath_sincos(2.0 * DETMATH_PI * t - DETMATH_PI, &s, &c);
				f->hue[0][i] = (float)-c;
				f->hue[1][i] = (float)-s;
			}
		}
	}
	/* A part counts the others' boids that find no room too, so that
	 * every part fails alike, with the whole flock's count, and without a
	 * collective call (a part whose setup failed before this would never
	 * make it). */
	if (parts > 1 && sc->n_obstacles > 0 && !sc->start_data)
		crowded += count_crowded(sc, &box, part, parts, parallel_min);
	if (crowded > 0) {
		crowded_error(err, crowded);
		flock_free(f);
		return -2;
	}
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

/* Slot k's state into (park) or out of (unpark) disabled place p. */
static void park_copy(struct flock *f, size_t k, size_t p, int unpark)
{
	float *st = f->park + p * FLOCK_PARK_FIELDS;
	int d;

	for (d = 0; d < f->dims; d++) {
		float *x = &f->pos[d][k], *v = &f->vel[d][k];

		if (unpark) {
			*x = st[d];
			*v = st[3 + d];
		} else {
			st[d] = *x;
			st[3 + d] = *v;
		}
	}
	for (d = 0; d < f->hue_fields; d++) {
		if (unpark)
			f->hue[d][k] = st[6 + d];
		else
			st[6 + d] = f->hue[d][k];
	}
	if (unpark)
		f->id[k] = f->park_id[p];
	else
		f->park_id[p] = f->id[k];
}

/* A boid enabled again under limits a schedule has changed since it was
 * disabled comes back at a speed within them, its heading kept (binary64,
 * as the models' clamp); inertia's velocity is not bounded (rules.c), and
 * a boid standing still has no heading to keep. */
static void within_speeds(struct flock *f, size_t k, const struct scenario *cur)
{
	double v2 = 0.0, sp, want;
	int d;

	if (cur->model == MODEL_INERTIA)
		return;
	for (d = 0; d < f->dims; d++)
		v2 += (double)f->vel[d][k] * (double)f->vel[d][k];
	sp = sqrt(v2);
	/* (within the tolerance, the state is kept as it was, bit for bit) */
	want = sp > cur->speed_max * (1.0 + FLOCK_SPEED_TOL) ? cur->speed_max :
	       sp < cur->speed_min * (1.0 - FLOCK_SPEED_TOL) ? cur->speed_min : sp;
	if (want == sp || sp == 0.0)
		return;
	for (d = 0; d < f->dims; d++)
		f->vel[d][k] = (float)((double)f->vel[d][k] * (want / sp));
}

size_t flock_apply_event(struct flock *f, const struct scenario *cur,
			 const struct scenario_event *ev, size_t *inside)
{
	size_t k, j, done = 0;
	int d;

	*inside = 0;
	if (ev->kind == EVENT_ADD) {
		struct bounds box;

		bounds_init(&box, cur);
		for (j = 0; j < ev->n; j++)
			*inside += draw_boid(f, cur, &box, f->n + j, f->next_id + (uint32_t)j,
					     ev->rmin, ev->rmax, 0) != 0;
		f->n += ev->n;
		f->next_id += (uint32_t)ev->n;
		done = ev->n;
	} else if (ev->kind == EVENT_ENABLE) {
		/* The last disabled first, as a slider moved back up; the
		 * scenario's check bounds n by what can have been disabled. */
		for (; done < ev->n && f->n_parked > 0; done++) {
			park_copy(f, f->n, --f->n_parked, 1);
			within_speeds(f, f->n++, cur);
		}
	} else {
		/* The highest ids first, down to no boid at all: rank, then
		 * slot, marks the ones to go (id_next is free scratch between
		 * steps). Disabled boids are kept in that order. */
		uint32_t *slot_of = f->id_next, r;

		for (k = 0; k < f->n; k++)
			slot_of[f->rank[f->id[k]]] = (uint32_t)k;
		for (r = (uint32_t)f->n; r-- > 0 && done < ev->n;) {
			k = slot_of[r];
			if (ev->has_region && !in_region(f, k, ev->rmin, ev->rmax))
				continue;
			if (ev->kind == EVENT_DISABLE)
				park_copy(f, k, f->n_parked++, 0);
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
			for (d = 0; d < f->hue_fields; d++)
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
		for (d = 0; d < f->hue_fields; d++)
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
	util_free(f->block);
	util_free(f->live);
	util_free(f->rank);
	util_free(f->park_id);
	util_free(f->park);
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
	for (d = 0; d < f->hue_fields; d++) {
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
	uint32_t *slot = f->id_next;
	size_t n = f->n, r;
	int fi, dims = f->dims;

	/* Each row's slot first (one scatter of 4-byte indices), then every
	 * field gathered row by row: the stores stream in order and only the
	 * loads wander, where the direct scatter of each field wandered its
	 * stores. Measured, 2D 1M, 2 threads, output every step: 215 -> 190 ms
	 * over 32 frames (docs/PERFORMANCE.md, 2026-12-06). id_next is spare
	 * between steps (flock.h). */
	#pragma omp parallel private(fi) if (n >= f->parallel_min)
	{
		#pragma omp for schedule(static)
		for (r = 0; r < n; r++)
			slot[flock_rank(f, f->id[r])] = (uint32_t)r;
		/* the implied barrier: every slot is in before a gather */
		for (fi = 0; fi < 2 * dims; fi++) {
			const float *src = fi < dims ? f->pos[fi] : f->vel[fi - dims];
			float *dst = out[fi];

			#pragma omp for schedule(static) nowait
			for (r = 0; r < n; r++)
				dst[r] = src[slot[r]];
		}
		if (f->has_hue) {
			const float *c = f->hue[0], *s = f->hue[1];
			float *h = out[2 * dims];

			#pragma omp for schedule(static) nowait
			for (r = 0; r < n; r++)
				h[r] = flock_hue_turns(c[slot[r]], s[slot[r]]);
		}
	}
}

void flock_hue_to_id_order(const struct flock *f, float *const out[3])
{
	size_t n = f->n, k;
	int d, nh = f->hue_fields;

	#pragma omp parallel for schedule(static) private(d) if (n >= f->parallel_min)
	for (k = 0; k < n; k++)
		for (d = 0; d < nh; d++)
			out[d][flock_rank(f, f->id[k])] = f->hue[d][k];
}
