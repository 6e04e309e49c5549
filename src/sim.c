/* sim.c: the step loop: reorder into cells, gather neighbours, integrate. */
#include "config.h"
#include "sim.h"

#include <math.h>
#include <string.h>

#include "detmath.h"
#include "rng.h"
#include "step.h"
#ifdef HAVE_MPI
#include "dist.h"
#endif

static int grid_ops_init(struct sim *s, struct util_err *err)
{
	return grid_init(&s->grid, s->sc, s->flock.cap, err);
}

static void grid_ops_free(struct sim *s)
{
	grid_free(&s->grid);
}

/* The grid's cells follow the largest radius. */
static void grid_ops_stage(struct sim *s, const struct scenario *st)
{
	s->grid.radius = grid_radius(st);
}

static void grid_ops_step(struct sim *s)
{
	double t0 = util_seconds(), t1;

	grid_build(&s->grid, &s->flock);
	t1 = util_seconds();
	predators_step(&s->pred, s->cur, &s->rp.ip, &s->flock);
	s->stats.candidates += step_grid(s->kern, &s->grid, &s->flock, &s->rp, s->step);
	s->stats.boid_steps += s->flock.n;
	s->stats.t_grid += t1 - t0;
	s->stats.t_step += util_seconds() - t1;
}

/* A grid for the current positions. The order it leaves is a function of
 * the state, the same the next step would make, so measuring changes no
 * result. */
static void grid_ops_measure(struct sim *s, struct metrics *m, struct metrics_row *row)
{
	grid_build(&s->grid, &s->flock);
	metrics_compute(m, &s->flock, &s->grid, &s->rp, row);
}

static int brute_ops_init(struct sim *s, struct util_err *err)
{
	(void)s;
	(void)err;
	return 0;
}

static void brute_ops_free(struct sim *s)
{
	(void)s;
}

static void brute_ops_stage(struct sim *s, const struct scenario *st)
{
	(void)s;
	(void)st;
}

static void brute_ops_step(struct sim *s)
{
	double t0 = util_seconds();

	predators_step(&s->pred, s->cur, &s->rp.ip, &s->flock);
	step_brute(&s->flock, &s->rp, s->step);
	s->stats.candidates += (uint64_t)s->flock.n * s->flock.n;
	s->stats.boid_steps += s->flock.n;
	s->stats.t_step += util_seconds() - t0;
}

/* Brute force keeps its slot order untouched. */
static void brute_ops_measure(struct sim *s, struct metrics *m, struct metrics_row *row)
{
	metrics_compute(m, &s->flock, NULL, &s->rp, row);
}

static size_t frame_serial(struct sim *s, float *const out[FLOCK_FIELDS_MAX],
			   uint32_t *ids, uint32_t *groups);
static void events_serial(struct sim *s);

static int whole_serial(struct sim *s, const struct flock **f, struct util_err *err)
{
	(void)err;
	*f = &s->flock;
	return 0;
}

static size_t count_serial(const struct sim *s)
{
	return s->flock.n;
}

static int loaded_serial(struct sim *s, struct util_err *err)
{
	(void)s;
	(void)err;
	return 0;
}

/* In enum sim_search order. */
static const struct sim_ops SIM_OPS[] = {
	{"grid", grid_ops_init, grid_ops_free, grid_ops_stage, grid_ops_step, grid_ops_measure,
	 frame_serial, events_serial, whole_serial, loaded_serial,
	 count_serial},
	{"brute", brute_ops_init, brute_ops_free, brute_ops_stage, brute_ops_step,
	 brute_ops_measure, frame_serial, events_serial, whole_serial, loaded_serial,
	 count_serial},
};

int sim_init(struct sim *s, const struct scenario *sc, enum sim_search search,
	     const struct ctx *ctx, struct util_err *err)
{
	int rc;

	memset(s, 0, sizeof *s);
	if (ctx)
		s->ctx = *ctx;
	else
		ctx_init(&s->ctx);
	s->sc = sc;
	s->cur = sc;
	s->search = search;
	s->ops = &SIM_OPS[search];
#ifdef HAVE_MPI
	if (s->ctx.dist)
		s->ops = dist_sim_ops();
#endif
	s->kern = step_kernels(s->ctx.simd);
	rules_params_init(&s->rp, sc);
#ifdef HAVE_MPI
	/* Split: each part draws its share only (dist.c sends it to its slab). */
	if (s->ctx.dist)
		rc = flock_init_part(&s->flock, sc, s->ctx.parallel_min,
				     (uint32_t)dist_part(s->ctx.dist),
				     (uint32_t)dist_parts(s->ctx.dist), err);
	else
#endif
		rc = flock_init(&s->flock, sc, s->ctx.parallel_min, err);
	if (rc != 0)
		return rc;
	s->flock.reduce = s->ctx.reduce;
	rc = predators_init(&s->pred, sc, s->flock.cap, err) != 0 ? -1 : s->ops->init(s, err);
	if (rc != 0) {
		predators_free(&s->pred);
		flock_free(&s->flock);
	}
	return rc;
}

void sim_free(struct sim *s)
{
	flock_free(&s->flock);
	predators_free(&s->pred);
	s->ops->free(s);
	util_free(s->seen);
	s->seen = NULL;
}

/* The scheduled parameters from this step on. Only parameters change (the
 * schedule cannot touch the count, box or seed); the wandering target keeps
 * its place, and the grid's cells follow the largest radius. */
static void enter_stage(struct sim *s, const struct scenario *st)
{
	double target[3];

	memcpy(target, s->rp.target, sizeof target);
	rules_params_init(&s->rp, st);
	if (s->sc->has_wander)
		memcpy(s->rp.target, target, sizeof target);
	s->ops->stage(s, st);
	s->cur = st;
}

/* The wandering target jumps, at each step with probability 1/interval, to
 * a point uniform in its region; a pure function of (seed, step). */
static void wander(struct sim *s)
{
	const struct scenario *sc = s->sc;
	uint32_t r[4], q[4];
	int d;

	rng_draw4(sc->seed, RNG_WANDER, 0, 0, s->step, r);
	if (!(rng_unit(r[0], r[1]) * sc->wander_interval < 1.0))
		return;
	for (d = 0; d < sc->dims; d++) {
		rng_draw4(sc->seed, RNG_WANDER, 1 + (uint32_t)d, 0, s->step, q);
		s->rp.target[d] = sc->wander_min[d] +
				  rng_unit(q[0], q[1]) * (sc->wander_max[d] - sc->wander_min[d]);
	}
}

void sim_step(struct sim *s)
{
	while (s->next_stage < s->sc->n_stages &&
	       s->sc->stages[s->next_stage].step <= s->step)
		enter_stage(s, &s->sc->stages[s->next_stage++].sc);
	if (s->sc->has_wander && s->step > 0)
		wander(s);
	rules_set_step(&s->rp, s->step);
	s->rp.n_pred = s->pred.n;
	memcpy(s->rp.pred_pos, s->pred.pos, sizeof s->rp.pred_pos);
	s->ops->step(s);
	flock_swap(&s->flock, 0);
	predators_swap(&s->pred);
	s->step++;
	sim_apply_events(s);
}

void sim_enter_stages(struct sim *s)
{
	while (s->next_stage < s->sc->n_stages && s->sc->stages[s->next_stage].step < s->step)
		enter_stage(s, &s->sc->stages[s->next_stage++].sc);
}

void sim_apply_events(struct sim *s)
{
	s->ops->events(s);
}

static void events_serial(struct sim *s)
{
	sim_events_on(s, &s->flock);
}

void sim_events_on(struct sim *s, struct flock *f)
{
	while (s->next_event < s->sc->n_events &&
	       s->sc->events[s->next_event].step <= s->step) {
		const struct scenario_event *ev = &s->sc->events[s->next_event++];
		size_t inside, done = flock_apply_event(f, s->cur, ev, &inside);

		static const char *const did[] = {"added", "removed", "disabled", "enabled"};

		ctx_log(&s->ctx, CTX_VERBOSE, "step %llu: %s %zu boids (now %zu)",
			 (unsigned long long)s->step, did[ev->kind], done, f->n);
		/* not silently: a region that obstacles cover is the scenario's
		 * mistake, though not one the scenario's check can see */
		if (inside)
			ctx_log(&s->ctx, CTX_NORMAL, "step %llu: population[%d]: %zu of the %zu "
				"boids added fell inside obstacles in each of %d tries (the region "
				"is covered); they start there and are pushed out at their next "
				"step", (unsigned long long)s->step, s->next_event - 1, inside,
				done, FLOCK_PLACE_TRIES);
	}
}

int sim_check(struct sim *s, struct util_err *err)
{
	return sim_check_flock(s, &s->flock, err);
}

int sim_whole(struct sim *s, const struct flock **f, struct util_err *err)
{
	return s->ops->whole(s, f, err);
}

int sim_loaded(struct sim *s, struct util_err *err)
{
	return s->ops->loaded(s, err);
}

size_t sim_count(const struct sim *s)
{
	return s->ops->count(s);
}

int sim_check_flock(struct sim *s, const struct flock *f, struct util_err *err)
{
	const struct bounds *b = &s->rp.ip.box;
	double lo = s->cur->model == MODEL_INERTIA ? 0.0 :
		    s->cur->speed_min * (1.0 - SIM_SPEED_TOL);
	/* inertia's direction is not a unit vector (rules.c): no upper bound */
	double hi = s->cur->model == MODEL_INERTIA ? INFINITY :
		    s->cur->speed_max * (1.0 + SIM_SPEED_TOL);
	size_t k;
	int d;

	/* slerp keeps the mean of its neighbours' speeds and draws a new one
	 * only at the return radius (boidsim-scenario(5)): a schedule's new
	 * limits bound the speeds it draws, not those it keeps, so its bound
	 * is every limit in force so far */
	double smin = s->cur->speed_min, smax = s->cur->speed_max;

	if (s->cur->model == MODEL_SLERP) {
		int i;

		smin = detmath_fmin(smin, s->sc->speed_min);
		smax = detmath_fmax(smax, s->sc->speed_max);
		for (i = 0; i < s->next_stage; i++) {
			smin = detmath_fmin(smin, s->sc->stages[i].sc.speed_min);
			smax = detmath_fmax(smax, s->sc->stages[i].sc.speed_max);
		}
		lo = smin * (1.0 - SIM_SPEED_TOL);
		hi = smax * (1.0 + SIM_SPEED_TOL);
	}
	if (s->seen == NULL && !(s->seen = util_alloc((size_t)s->sc->ids_total, 1, err)))
		return -1;
	memset(s->seen, 0, f->next_id);
	for (k = 0; k < f->n; k++) {
		double v2 = 0, sp;
		uint32_t id = f->id[k];

		if (id >= f->next_id || s->seen[id] || flock_rank(f, id) >= f->n) {
			util_err_set(err, "step %llu: slot %zu holds id %u twice or out of range",
				     (unsigned long long)s->step, k, id);
			return -1;
		}
		s->seen[id] = 1;
		for (d = 0; d < f->dims; d++) {
			float p = f->pos[d][k], v = f->vel[d][k];

			if (!isfinite(p) || !isfinite(v)) {
				util_err_set(err, "step %llu: boid %u has a non-finite value",
					     (unsigned long long)s->step, id);
				return -1;
			}
			if (bounds_outside(b, d, p)) {
				util_err_set(err, "step %llu: boid %u is outside the box "
					     "(axis %d: %.9g)", (unsigned long long)s->step,
					     id, d, p);
				return -1;
			}
			v2 += (double)v * v;
		}
		sp = sqrt(v2);
		/* A boid may stand still only when speed.min allows it. */
		if (sp > hi || (sp < lo && !(sp == 0.0 && smin == 0.0))) {
			util_err_set(err, "step %llu: boid %u has speed %.9g outside [%g, %g]",
				     (unsigned long long)s->step, id, sp, smin, smax);
			return -1;
		}
	}
	for (k = 0; k < (size_t)s->pred.n; k++) {
		double v2 = 0, sp;

		for (d = 0; d < f->dims; d++) {
			float p = s->pred.pos[d][k], v = s->pred.vel[d][k];

			if (!isfinite(p) || !isfinite(v)) {
				util_err_set(err, "step %llu: predator %zu has a non-finite value",
					     (unsigned long long)s->step, k);
				return -1;
			}
			v2 += (double)v * v;
		}
		sp = sqrt(v2);
		if (fabs(sp - s->cur->pred_speed) > SIM_SPEED_TOL * s->cur->pred_speed) {
			util_err_set(err, "step %llu: predator %zu has speed %.9g, not %g",
				     (unsigned long long)s->step, k, sp, s->cur->pred_speed);
			return -1;
		}
	}
	return 0;
}

void sim_measure(struct sim *s, struct metrics *m, struct metrics_row *row)
{
	s->ops->measure(s, m, row);
}

enum ctx_simd sim_simd(const struct sim *s)
{
	return step_level(s->kern);
}

const char *sim_backend(const struct sim *s)
{
	return s->ops->name;
}

int sim_has_agents(const struct scenario *sc)
{
	return sc->n_predators > 0 || sc->n_events > 0;
}

uint64_t sim_frame_capacity(const struct scenario *sc)
{
	return sc->capacity + (uint64_t)sc->n_predators;
}

size_t sim_frame(struct sim *s, float *const out[FLOCK_FIELDS_MAX], uint32_t *ids,
		 uint32_t *groups)
{
	return s->ops->frame(s, out, ids, groups);
}

static size_t frame_serial(struct sim *s, float *const out[FLOCK_FIELDS_MAX],
			   uint32_t *ids, uint32_t *groups)
{
	flock_to_id_order(&s->flock, out);
	return sim_frame_agents(s, &s->flock, s->flock.n, out, ids, groups);
}

size_t sim_frame_agents(const struct sim *s, const struct flock *f, size_t n,
			float *const out[FLOCK_FIELDS_MAX], uint32_t *ids, uint32_t *groups)
{
	int d, i, dims = f->dims;

	if (ids)
		flock_ids(f, ids);
	if (groups)
		memset(groups, 0, n * sizeof *groups);
	for (i = 0; i < s->pred.n; i++) {
		for (d = 0; d < dims; d++) {
			out[d][n + (size_t)i] = s->pred.pos[d][i];
			out[dims + d][n + (size_t)i] = s->pred.vel[d][i];
		}
		if (f->has_hue)
			out[2 * dims][n + (size_t)i] = 0.0f;
		if (ids)
			ids[n + (size_t)i] = (uint32_t)i;
		if (groups)
			groups[n + (size_t)i] = 1; /* TRAJ_GROUP_PREDATOR */
	}
	return n + (size_t)s->pred.n;
}
