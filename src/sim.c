/* sim.c: the step loop: reorder into cells, gather neighbours, integrate. */
#include "config.h"
#include "sim.h"

#include <math.h>
#include <string.h>

#include "rng.h"

int sim_init(struct sim *s, const struct scenario *sc, enum sim_search search,
	     struct util_err *err)
{
	memset(s, 0, sizeof *s);
	s->sc = sc;
	s->cur = sc;
	s->search = search;
	rules_params_init(&s->rp, sc);
	if (flock_init(&s->flock, sc, err) != 0)
		return -1;
	if (search == SIM_GRID && grid_init(&s->grid, sc, s->flock.n, err) != 0) {
		flock_free(&s->flock);
		return -1;
	}
	return 0;
}

void sim_free(struct sim *s)
{
	flock_free(&s->flock);
	if (s->search == SIM_GRID)
		grid_free(&s->grid);
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
	if (s->search == SIM_GRID)
		s->grid.cell_min = grid_cell_min(st);
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
	double t0, t1;

	while (s->next_stage < s->sc->n_stages &&
	       s->sc->stages[s->next_stage].step <= s->step)
		enter_stage(s, &s->sc->stages[s->next_stage++].sc);
	if (s->sc->has_wander && s->step > 0)
		wander(s);
	rules_set_step(&s->rp, s->step);
	t0 = util_seconds();
	if (s->search == SIM_GRID) {
		grid_build(&s->grid, &s->flock);
		t1 = util_seconds();
		s->stats.candidates += grid_step(&s->grid, &s->flock, &s->rp, s->step);
	} else {
		t1 = t0;
		brute_step(&s->flock, &s->rp, s->step);
		s->stats.candidates += (uint64_t)s->flock.n * s->flock.n;
	}
	s->stats.t_grid += t1 - t0;
	s->stats.t_step += util_seconds() - t1;
	s->stats.boid_steps += s->flock.n;
	flock_swap(&s->flock, 0);
	s->step++;
}

int sim_check(struct sim *s, struct util_err *err)
{
	const struct flock *f = &s->flock;
	const struct bounds *b = &s->rp.box;
	double lo = s->cur->speed_min * (1.0 - SIM_SPEED_TOL);
	double hi = s->cur->speed_max * (1.0 + SIM_SPEED_TOL);
	size_t k;
	int d;

	if (s->seen == NULL && !(s->seen = util_alloc(f->n, 1, err)))
		return -1;
	memset(s->seen, 0, f->n);
	for (k = 0; k < f->n; k++) {
		double v2 = 0, sp;
		uint32_t id = f->id[k];

		if (id >= f->n || s->seen[id]) {
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
			if ((b->mode == BOUNDS_WRAP && !(p >= b->lo_f[d] && p < b->hi_f[d])) ||
			    (b->mode == BOUNDS_REFLECT && !(p >= b->lo_f[d] && p <= b->hi_f[d]))) {
				util_err_set(err, "step %llu: boid %u is outside the box "
					     "(axis %d: %.9g)", (unsigned long long)s->step,
					     id, d, p);
				return -1;
			}
			v2 += (double)v * v;
		}
		sp = sqrt(v2);
		/* A boid may stand still only when speed.min allows it. */
		if (sp > hi || (sp < lo && !(sp == 0.0 && s->cur->speed_min == 0.0))) {
			util_err_set(err, "step %llu: boid %u has speed %.9g outside [%g, %g]",
				     (unsigned long long)s->step, id, sp,
				     s->cur->speed_min, s->cur->speed_max);
			return -1;
		}
	}
	return 0;
}

void sim_measure(struct sim *s, struct metrics *m, struct metrics_row *row)
{
	/* A grid for the current positions. The order it leaves is a function
	 * of the state, the same the next step would make, so measuring
	 * changes no result. Brute force keeps its slot order untouched. */
	if (s->search == SIM_GRID) {
		grid_build(&s->grid, &s->flock);
		metrics_compute(m, &s->flock, &s->grid, &s->rp, row);
	} else {
		metrics_compute(m, &s->flock, NULL, &s->rp, row);
	}
}
