/* check_reduce.c: the contract of reduce.h that a flock split over
 * processes relies on. A flock in cell order is cut at a slot into two
 * parts, each measured by its own thread, the two meeting only through a
 * reduce ops table (as two MPI ranks would); every fold and exact
 * reduction must then give the bits of the whole flock measured alone. A
 * table that sums the parts' sums instead of continuing the fold must not
 * (the reason folds exist). */
#include <math.h>
#include <pthread.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include "check_suites.h"
#include "metrics.h"
#include "reduce.h"
#include "sim.h"

#define PARTS 2
#define MAXV 16

/* The meeting place of the two parts. */
struct meet {
	pthread_barrier_t bar;
	double run[MAXV], total[MAXV], part[PARTS][MAXV];
	uint64_t u[PARTS][MAXV];
	float mn[PARTS][MAXV], mx[PARTS][MAXV];
	int naive; /* the wrong table: the parts' sums added */
};

struct part {
	struct meet *m;
	int p;
};

static void two_minmax(void *self, float *mn, float *mx, int n)
{
	struct part *q = self;
	int j;

	memcpy(q->m->mn[q->p], mn, (size_t)n * sizeof *mn);
	memcpy(q->m->mx[q->p], mx, (size_t)n * sizeof *mx);
	pthread_barrier_wait(&q->m->bar);
	for (j = 0; j < n; j++) {
		mn[j] = fminf(q->m->mn[0][j], q->m->mn[1][j]);
		mx[j] = fmaxf(q->m->mx[0][j], q->m->mx[1][j]);
	}
	pthread_barrier_wait(&q->m->bar);
}

static void two_sum_u64(void *self, uint64_t *v, int n)
{
	struct part *q = self;
	int j;

	memcpy(q->m->u[q->p], v, (size_t)n * sizeof *v);
	pthread_barrier_wait(&q->m->bar);
	for (j = 0; j < n; j++)
		v[j] = q->m->u[0][j] + q->m->u[1][j];
	pthread_barrier_wait(&q->m->bar);
}

/* Part 1 continues from part 0's running totals (barrier A), and both
 * take part 1's totals (barrier B): two barriers each, in the same order. */
static void two_fold_begin(void *self, double *acc, int n)
{
	struct part *q = self;

	if (q->p == 1 && !q->m->naive) {
		pthread_barrier_wait(&q->m->bar);
		memcpy(acc, q->m->run, (size_t)n * sizeof *acc);
	}
}

static void two_fold_end(void *self, double *acc, int n)
{
	struct part *q = self;
	int j;

	if (q->m->naive) {
		memcpy(q->m->part[q->p], acc, (size_t)n * sizeof *acc);
		pthread_barrier_wait(&q->m->bar);
		for (j = 0; j < n; j++)
			acc[j] = q->m->part[0][j] + q->m->part[1][j];
		pthread_barrier_wait(&q->m->bar);
		return;
	}
	if (q->p == 0) {
		memcpy(q->m->run, acc, (size_t)n * sizeof *acc);
		pthread_barrier_wait(&q->m->bar); /* A */
		pthread_barrier_wait(&q->m->bar); /* B */
		memcpy(acc, q->m->total, (size_t)n * sizeof *acc);
	} else {
		memcpy(q->m->total, acc, (size_t)n * sizeof *acc);
		pthread_barrier_wait(&q->m->bar); /* B */
	}
}

static const struct reduce_ops TWO_OPS = {two_minmax, two_sum_u64, two_fold_begin, two_fold_end};

struct job {
	struct flock f;
	struct metrics met;
	struct rules_params rp;
	struct metrics_row row;
	struct reduce red;
	struct part q;
};

static void *measure_part(void *arg)
{
	struct job *j = arg;

	metrics_compute(&j->met, &j->f, NULL, &j->rp, &j->row);
	return NULL;
}

/* The whole flock's rows and the parts', cut at slot cut. */
static void measure_split(const struct sim *s, size_t cut, int naive, struct metrics_row *whole,
			  struct metrics_row out[PARTS])
{
	struct meet m;
	struct job jobs[PARTS];
	pthread_t th[PARTS];
	struct util_err err;
	int p, d;

	memset(&m, 0, sizeof m);
	m.naive = naive;
	ck_assert_int_eq(pthread_barrier_init(&m.bar, NULL, PARTS), 0);
	for (p = 0; p < PARTS; p++) {
		size_t lo = p == 0 ? 0 : cut, hi = p == 0 ? cut : s->flock.n;

		memcpy(&jobs[p].f, &s->flock, sizeof jobs[p].f);
		jobs[p].f.n = hi - lo;
		for (d = 0; d < s->flock.dims; d++) {
			jobs[p].f.pos[d] += lo;
			jobs[p].f.vel[d] += lo;
		}
		for (d = 0; d < s->flock.hue_fields; d++)
			jobs[p].f.hue[d] += lo;
		jobs[p].f.parallel_min = (size_t)-1; /* one thread per part */
		jobs[p].q.m = &m;
		jobs[p].q.p = p;
		jobs[p].red.ops = &TWO_OPS;
		jobs[p].red.self = &jobs[p].q;
		jobs[p].f.reduce = &jobs[p].red;
		jobs[p].rp = s->rp;
		ck_assert_int_eq(metrics_init(&jobs[p].met, s->flock.n, &err), 0);
	}
	for (p = 0; p < PARTS; p++)
		ck_assert_int_eq(pthread_create(&th[p], NULL, measure_part, &jobs[p]), 0);
	for (p = 0; p < PARTS; p++) {
		pthread_join(th[p], NULL);
		out[p] = jobs[p].row;
		metrics_free(&jobs[p].met);
	}
	pthread_barrier_destroy(&m.bar);
	{
		struct metrics mw;
		struct flock f = s->flock;

		f.reduce = NULL;
		ck_assert_int_eq(metrics_init(&mw, s->flock.n, &err), 0);
		metrics_compute(&mw, &f, NULL, &s->rp, whole);
		metrics_free(&mw);
	}
}

/* The rows' folded values, bit for bit (nearest neighbours and groups
 * need the other part's boids, a halo, and are not folds). */
static int same_folds(const struct metrics_row *a, const struct metrics_row *b, int dims)
{
	int d, same = a->polarization == b->polarization && a->milling == b->milling &&
		      a->mean_speed == b->mean_speed && a->gyration == b->gyration &&
		      a->hue_order == b->hue_order;

	for (d = 0; d < dims; d++)
		same = same && a->centroid[d] == b->centroid[d];
	return same;
}

START_TEST(test_split_folds_match_whole)
{
	static const char *const TEXT[] = {
		"{\"count\": 3000, \"steps\": 30, \"seed\": 5, \"bounds\": {\"min\": [0, 0], "
		"\"max\": [60, 60], \"mode\": \"wrap\"}, \"hue\": {\"weight\": 0.3, \"radius\": 2}}",
		"{\"dimensions\": 3, \"count\": 3000, \"steps\": 30, \"seed\": 6, \"bounds\": "
		"{\"min\": [0, 0, 0], \"max\": [30, 30, 30], \"mode\": \"reflect\"}}",
	};
	struct scenario sc;
	struct sim s;
	struct util_err err;
	struct metrics_row whole, parts[PARTS], naive[PARTS];
	uint64_t k;
	int p;

	load_ok(TEXT[_i], &sc);
	ck_assert_int_eq(sim_init(&s, &sc, SIM_GRID, &test_ctx, &err), 0);
	for (k = 0; k < sc.steps; k++)
		sim_step(&s);
	grid_build(&s.grid, &s.flock); /* slots in cell order, as the parts hold them */
	measure_split(&s, s.flock.n / 3, 0, &whole, parts);
	for (p = 0; p < PARTS; p++)
		ck_assert_msg(same_folds(&parts[p], &whole, sc.dims),
			      "part %d: polarization %.17g, whole %.17g", p, parts[p].polarization,
			      whole.polarization);
	ck_assert(whole.polarization > 0.0 && whole.mean_speed > 0.0);
	/* The control: adding the parts' sums rounds differently. */
	measure_split(&s, s.flock.n / 3, 1, &whole, naive);
	ck_assert_msg(!same_folds(&naive[0], &whole, sc.dims),
		      "the parts' sums added gave the whole's bits: the test cannot tell");
	sim_free(&s);
	scenario_free(&sc);
}
END_TEST

Suite *reduce_suite(void)
{
	Suite *s = suite_create("reduce");
	TCase *tc = tcase_create("split");

	/* A part that skips a hook leaves the other waiting: fail, not hang. */
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, test_split_folds_match_whole, 0, 2);
	suite_add_tcase(s, tc);
	return s;
}
