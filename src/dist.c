/* dist.c: one run split over MPI processes in slabs of cells (dist.h). */
#include "config.h"
#include "dist.h"

#include <limits.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "flock.h"
#include "grid.h"
#include "metrics.h"
#include "reduce.h"
#include "sim.h"
#include "step.h"

#define DIST_TAG_FOLD 17
/* The most parts a row's boids go to as halo. */
#define HALO_MAX (2 * GRID_REACH_MAX + 1)

struct dist {
	MPI_Comm comm;
	int part, parts;
	struct reduce red;
};

/* A simulation's split: its slabs, its exchange buffers and, on part 0,
 * the whole flock: its live ids and disabled boids, and its boids when
 * gathered (for frames, metrics, predators, population events and
 * checkpoints). */
struct dist_sim {
	struct dist *d;
	int pending;           /* after a step: own boids are slots own0 .. own1-1 */
	size_t own0, own1;
	uint32_t *row_start;   /* parts + 1: the first row of each part's slab */
	uint32_t *counts;      /* per cell */
	size_t counts_cap;
	uint64_t *rowcnt;      /* per row, for the slabs */
	size_t rowcnt_cap;
	uint32_t *sbuf, *rbuf; /* records (dist_words words a boid) */
	size_t scap, rcap;
	int *scnt, *sdsp, *rcnt, *rdsp;
	int *hdst, *hcnt;      /* halo_table: per row of the slab */
	size_t hdst_cap, hcnt_cap;
	/* Balance by time: each part's speed, smoothed (parts; 0: none
	 * measured yet), the last speeds gathered, and this part's last step
	 * phase: its seconds and the boids it stepped. */
	double *weight, *rate;
	double t_work;
	size_t n_work;
	double t_exchange;     /* this step's, in the exchanges */
	int whole_ok, wgrid_ok;
	uint64_t whole_at;     /* step + 1 of the state part 0's whole holds, 0: none */
	size_t n_all;          /* the boids of the run, on every part */
	struct flock whole;
	struct grid wgrid;     /* part 0's, for the metrics */
};

/* ---- the reductions (reduce.h) over MPI ---- */

static void mpi_minmax_f32(void *self, float *mn, float *mx, int n)
{
	struct dist *d = self;

	MPI_Allreduce(MPI_IN_PLACE, mn, n, MPI_FLOAT, MPI_MIN, d->comm);
	MPI_Allreduce(MPI_IN_PLACE, mx, n, MPI_FLOAT, MPI_MAX, d->comm);
}

static void mpi_sum_u64(void *self, uint64_t *v, int n)
{
	struct dist *d = self;

	MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_UINT64_T, MPI_SUM, d->comm);
}

/* A fold in part order: each part continues from the running totals of
 * the parts before it, and the last part's totals go to every part. */
static void mpi_fold_begin(void *self, double *acc, int n)
{
	struct dist *d = self;

	if (d->part > 0)
		MPI_Recv(acc, n, MPI_DOUBLE, d->part - 1, DIST_TAG_FOLD, d->comm, MPI_STATUS_IGNORE);
}

static void mpi_fold_end(void *self, double *acc, int n)
{
	struct dist *d = self;

	if (d->part + 1 < d->parts)
		MPI_Send(acc, n, MPI_DOUBLE, d->part + 1, DIST_TAG_FOLD, d->comm);
	MPI_Bcast(acc, n, MPI_DOUBLE, d->parts - 1, d->comm);
}

static const struct reduce_ops MPI_REDUCE = {mpi_minmax_f32, mpi_sum_u64, mpi_fold_begin,
					     mpi_fold_end};

struct dist *dist_open(const void *comm, struct util_err *err)
{
	struct dist *d = calloc(1, sizeof *d);

	if (d == NULL) {
		util_err_set(err, "out of memory");
		return NULL;
	}
	/* A communicator of its own, so that its messages never meet the
	 * caller's. */
	if (MPI_Comm_dup(*(const MPI_Comm *)comm, &d->comm) != MPI_SUCCESS) {
		util_err_set(err, "MPI_Comm_dup failed");
		free(d);
		return NULL;
	}
	MPI_Comm_rank(d->comm, &d->part);
	MPI_Comm_size(d->comm, &d->parts);
	d->red.ops = &MPI_REDUCE;
	d->red.self = d;
	return d;
}

void dist_close(struct dist *d)
{
	if (d == NULL)
		return;
	MPI_Comm_free(&d->comm);
	free(d);
}

int dist_part(const struct dist *d)
{
	return d->part;
}

int dist_parts(const struct dist *d)
{
	return d->parts;
}

const struct reduce *dist_reduce(const struct dist *d)
{
	return &d->red;
}

/* ---- boids as records: id, positions, velocities, hue fields ---- */

static size_t dist_words(const struct flock *f)
{
	return 1 + 2 * (size_t)f->dims + (size_t)f->hue_fields;
}

static void pack(const struct flock *f, size_t k, uint32_t *r)
{
	int d, w = 1;

	r[0] = f->id[k];
	for (d = 0; d < f->dims; d++)
		memcpy(&r[w++], &f->pos[d][k], 4);
	for (d = 0; d < f->dims; d++)
		memcpy(&r[w++], &f->vel[d][k], 4);
	for (d = 0; d < f->hue_fields; d++)
		memcpy(&r[w++], &f->hue[d][k], 4);
}

static void unpack(struct flock *f, size_t k, const uint32_t *r)
{
	int d, w = 1;

	f->id[k] = r[0];
	for (d = 0; d < f->dims; d++)
		memcpy(&f->pos[d][k], &r[w++], 4);
	for (d = 0; d < f->dims; d++)
		memcpy(&f->vel[d][k], &r[w++], 4);
	for (d = 0; d < f->hue_fields; d++)
		memcpy(&f->hue[d][k], &r[w++], 4);
}

/* Slot from of flock src into slot to of flock dst (the same shape). */
static void copy_boid(struct flock *dst, size_t to, const struct flock *src, size_t from)
{
	int d;

	dst->id[to] = src->id[from];
	for (d = 0; d < src->dims; d++) {
		dst->pos[d][to] = src->pos[d][from];
		dst->vel[d][to] = src->vel[d][from];
	}
	for (d = 0; d < src->hue_fields; d++)
		dst->hue[d][to] = src->hue[d][from];
}

static void move_slot(struct flock *f, size_t to, size_t from)
{
	copy_boid(f, to, f, from);
}

/* Slots from .. from+m-1 to to .. to+m-1 (they may overlap), a field at a
 * time: the boids that stay move in long runs, which a copy per boid and
 * field would make the split run's largest serial cost. */
static void move_run(struct flock *f, size_t to, size_t from, size_t m)
{
	int d;

	if (to == from || m == 0)
		return;
	memmove(&f->id[to], &f->id[from], m * sizeof *f->id);
	for (d = 0; d < f->dims; d++) {
		memmove(&f->pos[d][to], &f->pos[d][from], m * sizeof *f->pos[d]);
		memmove(&f->vel[d][to], &f->vel[d][from], m * sizeof *f->vel[d]);
	}
	for (d = 0; d < f->hue_fields; d++)
		memmove(&f->hue[d][to], &f->hue[d][from], m * sizeof *f->hue[d]);
}

/* After a step: the own boids to the front, the halo dropped. */
static void compact(struct sim *s)
{
	struct dist_sim *ds = s->be;
	struct flock *f = &s->flock;

	if (!ds->pending)
		return;
	move_run(f, 0, ds->own0, ds->own1 - ds->own0);
	f->n = ds->own1 - ds->own0;
	ds->pending = 0;
}

/* ---- slabs ---- */

static uint32_t rows_of(const struct grid *g)
{
	return g->n[g->dims - 1];
}

/* Balance by time: every part's speed in its last step phase (boids
 * stepped per second, which a slower processor or a denser slab lowers)
 * goes to every part, and each part's weight moves half way to it. The
 * speeds are the gathered bits themselves and the arithmetic is the same
 * on every part, so every part computes the same slabs. */
static void update_weights(struct dist_sim *ds)
{
	const int parts = ds->d->parts;
	double mine = 0.0;
	int q;

	if (ds->n_work > 0 && ds->t_work > 0.0)
		mine = (double)ds->n_work / ds->t_work;
	MPI_Allgather(&mine, 1, MPI_DOUBLE, ds->rate, 1, MPI_DOUBLE, ds->d->comm);
	for (q = 0; q < parts; q++)
		if (ds->rate[q] > 0.0)
			ds->weight[q] = ds->weight[q] > 0.0 ? 0.5 * (ds->weight[q] + ds->rate[q])
							    : ds->rate[q];
}

/* Part p's slab: rows row_start[p] .. row_start[p+1]-1, whole rows, so
 * that a clumped flock keeps every part busy: the rows' counts are summed
 * over the parts (integers, the same on every part), and part p's slab
 * starts at the first row before which lie at least its share of the
 * boids: p/P of them, or by time the parts' weights before p over all of
 * them (a part that stepped nothing, or none yet, counts a tenth of the
 * largest weight, so that it gets boids to measure). Which part steps a
 * boid changes nothing of its result (its neighbours come with the halo),
 * so the bytes are those of any other split. */
static int set_slabs(struct sim *s, struct util_err *err)
{
	struct dist_sim *ds = s->be;
	const struct grid *g = &s->grid;
	const struct flock *f = &s->flock;
	const uint32_t rows = rows_of(g);
	const uint64_t parts = (uint64_t)ds->d->parts;
	uint64_t total = 0, below = 0;
	uint64_t p = 1;
	uint32_t r;
	size_t k;
	double wmax = 0.0, wsum = 0.0, wbelow = 0.0;

	if (s->ctx.balance == CTX_BALANCE_TIME)
		for (p = 0; p < parts; p++)
			wmax = ds->weight[p] > wmax ? ds->weight[p] : wmax;
	for (p = 0; p < parts && wmax > 0.0; p++) {
		ds->rate[p] = ds->weight[p] > 0.1 * wmax ? ds->weight[p] : 0.1 * wmax;
		wsum += ds->rate[p];
	}
	p = 1;

	if (rows > INT_MAX) {
		util_err_set(err, "a split run has at most %d rows of cells", INT_MAX);
		return -1;
	}
	if (util_reserve(&ds->rowcnt, &ds->rowcnt_cap, ((size_t)rows + 1) * sizeof(uint64_t),
			 err) != 0)
		return -1;
	memset(ds->rowcnt, 0, (size_t)rows * sizeof(uint64_t));
	for (k = 0; k < f->n; k++)
		ds->rowcnt[grid_row(g, f, k)]++;
	reduce_sum_u64(f->reduce, ds->rowcnt, (int)rows);
	for (r = 0; r < rows; r++)
		total += ds->rowcnt[r];
	ds->row_start[0] = 0;
	if (wmax > 0.0)
		wbelow = ds->rate[0];
	for (r = 0; r <= rows; r++) {
		while (p < parts && (wmax > 0.0 ? (double)below >= wbelow / wsum * (double)total
						: below * parts >= total * p)) {
			if (wmax > 0.0)
				wbelow += ds->rate[p];
			ds->row_start[p++] = r;
		}
		if (r < rows)
			below += ds->rowcnt[r];
	}
	ds->row_start[parts] = rows;
	return 0;
}

static int owner(const struct dist_sim *ds, uint32_t row)
{
	int lo = 0, hi = ds->d->parts - 1;

	while (lo < hi) { /* the last part whose slab starts at or before row */
		int mid = (lo + hi + 1) / 2;

		if (ds->row_start[mid] <= row)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

/* Whether part q's halo holds row: within reach rows of its slab, around
 * the box under wrap (where with few rows every row is within reach). */
static int in_halo(const struct dist_sim *ds, const struct grid *g, int q, uint32_t row)
{
	const uint32_t a = ds->row_start[q], b = ds->row_start[q + 1], n = rows_of(g);
	const uint32_t reach = (uint32_t)g->reach;

	if (a == b || (row >= a && row < b))
		return 0;
	if (!g->periodic)
		return (uint64_t)row + reach >= a && row < (uint64_t)b + reach;
	return (a + n - row) % n <= reach || (row + n - (b - 1)) % n <= reach;
}

/* The parts other than this one whose halo holds row, into q (at most
 * HALO_MAX; returns how many): only the owners of the rows
 * within reach of it can, so a boid costs the few rows of the stencil, not
 * every part. */
static int halo_parts(const struct dist_sim *ds, const struct grid *g, uint32_t row,
		      int q[HALO_MAX])
{
	const int64_t n = rows_of(g), reach = g->reach;
	int64_t r;
	int m = 0, i, o;

	for (r = (int64_t)row - reach; r <= (int64_t)row + reach; r++) {
		int64_t rr = r;

		if (g->periodic)
			rr = ((r % n) + n) % n;
		else if (r < 0 || r >= n)
			continue;
		o = owner(ds, (uint32_t)rr);
		for (i = 0; i < m && q[i] != o; i++)
			;
		if (i == m && o != ds->d->part && in_halo(ds, g, o, row))
			q[m++] = o;
	}
	return m;
}

/* The halo's destinations of every row of this part's slab (halo_parts),
 * once a step rather than once a boid: a boid's are those of its row. */
static int halo_table(struct dist_sim *ds, const struct grid *g, struct util_err *err)
{
	const uint32_t a = ds->row_start[ds->d->part], b = ds->row_start[ds->d->part + 1];
	uint32_t r;

	if (util_reserve_raw(&ds->hdst, &ds->hdst_cap,
			     ((size_t)(b - a) * HALO_MAX + 1) * sizeof *ds->hdst, err) != 0 ||
	    util_reserve_raw(&ds->hcnt, &ds->hcnt_cap, ((size_t)(b - a) + 1) * sizeof *ds->hcnt,
			     err) != 0)
		return -1;
	for (r = a; r < b; r++)
		ds->hcnt[r - a] = halo_parts(ds, g, r, ds->hdst + (size_t)(r - a) * HALO_MAX);
	return 0;
}

/* Sends records out by destination (with halo, every part whose halo holds
 * the slot's row, from halo_table, every boid being in this part's slab;
 * otherwise the owner of its row, when another part) and appends what is
 * received after the boids kept. */
static int exchange(struct sim *s, int halo, struct util_err *err)
{
	struct dist_sim *ds = s->be;
	struct flock *f = &s->flock;
	const struct grid *g = &s->grid;
	const int parts = ds->d->parts, me = ds->d->part;
	const size_t w = dist_words(f);
	size_t k, kept = 0, total = 0, got = 0;
	int q;

	const uint32_t row0 = ds->row_start[me];
	size_t run = 0; /* the first slot of the run of boids kept, not yet moved */

	for (q = 0; q < parts; q++)
		ds->scnt[q] = 0;
	/* Count, then place: every record of one destination together. */
	for (k = 0; k < f->n; k++) {
		uint32_t row = grid_row(g, f, k);

		if (halo) {
			const int *hq = ds->hdst + (size_t)(row - row0) * HALO_MAX;
			int m = ds->hcnt[row - row0], i;

			for (i = 0; i < m; i++)
				ds->scnt[hq[i]]++;
		} else if ((q = owner(ds, row)) != me) {
			ds->scnt[q]++;
		}
	}
	for (q = 0; q < parts; q++) {
		ds->sdsp[q] = (int)total;
		total += (size_t)ds->scnt[q] * w;
	}
	if (util_reserve_raw(&ds->sbuf, &ds->scap, (total + 1) * sizeof(uint32_t), err) != 0)
		return -1;
	{
		int *at = ds->rdsp; /* scratch until the counts come back */

		for (q = 0; q < parts; q++)
			at[q] = ds->sdsp[q];
		for (k = 0; k < f->n; k++) {
			uint32_t row = grid_row(g, f, k);

			if (halo) {
				const int *hq = ds->hdst + (size_t)(row - row0) * HALO_MAX;
				int m = ds->hcnt[row - row0], i;

				for (i = 0; i < m; i++) {
					pack(f, k, ds->sbuf + at[hq[i]]);
					at[hq[i]] += (int)w;
				}
			} else if ((q = owner(ds, row)) != me) {
				pack(f, k, ds->sbuf + at[q]);
				at[q] += (int)w;
				move_run(f, kept, run, k - run);
				kept += k - run;
				run = k + 1;
			}
		}
	}
	if (halo) {
		kept = f->n;
	} else {
		move_run(f, kept, run, f->n - run);
		kept += f->n - run;
	}
	for (q = 0; q < parts; q++)
		ds->scnt[q] *= (int)w;
	MPI_Alltoall(ds->scnt, 1, MPI_INT, ds->rcnt, 1, MPI_INT, ds->d->comm);
	for (q = 0; q < parts; q++) {
		ds->rdsp[q] = (int)got;
		got += (size_t)ds->rcnt[q];
	}
	if (kept + got / w > f->cap) {
		util_err_set(err, "a part holds more boids than the flock");
		return -1;
	}
	if (util_reserve_raw(&ds->rbuf, &ds->rcap, (got + 1) * sizeof(uint32_t), err) != 0)
		return -1;
	MPI_Alltoallv(ds->sbuf, ds->scnt, ds->sdsp, MPI_UINT32_T, ds->rbuf, ds->rcnt, ds->rdsp,
		      MPI_UINT32_T, ds->d->comm);
	s->stats.sent_step += (uint64_t)total * sizeof(uint32_t);
	for (k = 0; k < got / w; k++)
		unpack(f, kept + k, ds->rbuf + k * w);
	f->n = kept + got / w;
	return 0;
}

/* The slabs of this step's cells, and every boid sent to its own. */
static int migrate(struct sim *s, struct util_err *err)
{
	struct dist_sim *ds = s->be;
	double t0;

	if (set_slabs(s, err) != 0)
		return -1;
	t0 = util_seconds();
	if (exchange(s, 0, err) != 0)
		return -1;
	ds->t_exchange += util_seconds() - t0;
	return 0;
}

/* This step's cells from the whole flock, and every boid in its slab:
 * the extent (through reduce.h) gives the cells of reach 1; the boids go
 * to the slabs of those cells, each cell then whole in one part, so the
 * crowding rule's sum of squared counts is the sum of the parts' own sums,
 * two integers (not the cells' counts); when crowded, the cells of reach 2
 * and their slabs, and the boids go there. */
static int plan(struct sim *s, struct util_err *err)
{
	struct dist_sim *ds = s->be;
	struct grid *g = &s->grid;
	struct flock *f = &s->flock;
	uint64_t sums[2] = {0, f->n};
	size_t k, c, first, cells;

	if (s->ctx.balance == CTX_BALANCE_TIME)
		update_weights(ds);
	grid_geometry(g, f);
	if (migrate(s, err) != 0)
		return -1;
	first = ds->row_start[ds->d->part] * (g->ncells / rows_of(g));
	cells = (ds->row_start[ds->d->part + 1] - ds->row_start[ds->d->part]) *
		(g->ncells / rows_of(g));
	if (util_reserve(&ds->counts, &ds->counts_cap, (cells + 1) * sizeof(uint32_t), err) != 0)
		return -1;
	memset(ds->counts, 0, cells * sizeof(uint32_t));
	for (k = 0; k < f->n; k++)
		ds->counts[grid_cell(g, f, k) - first]++;
	for (c = 0; c < cells; c++)
		sums[0] += (uint64_t)ds->counts[c] * ds->counts[c];
	sums[1] = f->n;
	reduce_sum_u64(f->reduce, sums, 2);
	if (grid_choose_reach(g, sums[0], sums[1]) && migrate(s, err) != 0)
		return -1;
	return 0;
}

/* The cells that hold this part's boids and halo: the rows of its slab
 * and those within reach of it (around the box under wrap), as at most 3
 * ascending ranges of cells; returns how many. */
static int slab_cells(const struct dist_sim *ds, const struct grid *g, size_t per_row,
		      size_t cells[3][2])
{
	const int64_t n = rows_of(g), reach = g->reach;
	const int64_t lo = (int64_t)ds->row_start[ds->d->part] - reach;
	const int64_t hi = (int64_t)ds->row_start[ds->d->part + 1] + reach;
	int64_t r[3][2];
	int nr = 0, i;

	if (!g->periodic) {
		r[nr][0] = lo < 0 ? 0 : lo;
		r[nr++][1] = hi > n ? n : hi;
	} else if (hi - lo >= n) {
		r[nr][0] = 0;
		r[nr++][1] = n;
	} else if (lo < 0) {
		r[nr][0] = 0;
		r[nr++][1] = hi;
		r[nr][0] = n + lo;
		r[nr++][1] = n;
	} else if (hi > n) {
		r[nr][0] = 0;
		r[nr++][1] = hi - n;
		r[nr][0] = lo;
		r[nr++][1] = n;
	} else {
		r[nr][0] = lo;
		r[nr++][1] = hi;
	}
	for (i = 0; i < nr; i++) {
		cells[i][0] = (size_t)r[i][0] * per_row;
		cells[i][1] = (size_t)r[i][1] * per_row;
	}
	return nr;
}

/* The own boids to their slabs, the halo around them, all in cell order. */
static int distribute(struct sim *s, size_t *first, size_t *end, struct util_err *err)
{
	struct dist_sim *ds = s->be;
	struct grid *g = &s->grid;
	size_t per_row;
	double t0;

	compact(s);
	ds->t_exchange = 0;
	if (plan(s, err) != 0)
		return -1;
	t0 = util_seconds();
	if (halo_table(ds, g, err) != 0 || exchange(s, 1, err) != 0)
		return -1;
	ds->t_exchange += util_seconds() - t0;
	per_row = g->ncells / rows_of(g);
	{
		size_t cells[3][2];
		int nr = slab_cells(ds, g, per_row, cells);

		grid_sort(g, &s->flock, (const size_t(*)[2])cells, nr);
	}
	*first = ds->row_start[ds->d->part] * per_row;
	*end = ds->row_start[ds->d->part + 1] * per_row;
	return 0;
}

/* ---- the backend ---- */

static void dist_free_be(struct sim *s)
{
	struct dist_sim *ds = s->be;

	if (ds == NULL)
		return;
	grid_free(&s->grid);
	if (ds->whole_ok)
		flock_free(&ds->whole);
	if (ds->wgrid_ok)
		grid_free(&ds->wgrid);
	util_free(ds->row_start);
	util_free(ds->counts);
	util_free(ds->rowcnt);
	util_free(ds->sbuf);
	util_free(ds->rbuf);
	util_free(ds->hdst);
	util_free(ds->hcnt);
	free(ds->scnt);
	free(ds->weight);
	free(ds);
	s->be = NULL;
}

static int dist_init_be(struct sim *s, struct util_err *err)
{
	struct dist_sim *ds;
	struct flock *f = &s->flock;
	int parts;

	if (s->ctx.fail == NULL) {
		util_err_set(err, "a run split over MPI processes needs the caller's ctx.fail");
		return -1;
	}
	if (s->search != SIM_GRID) {
		util_err_set(err, "--neighbours brute: a run split over MPI processes uses the grid");
		return -3;
	}
	/* MPI counts words in an int: a gather of the whole flock must fit. */
	if ((uint64_t)f->cap * dist_words(f) > (uint64_t)INT_MAX) {
		util_err_set(err, "count: a run split over MPI processes holds at most %llu boids "
			     "of this kind yet", (unsigned long long)(INT_MAX / dist_words(f)));
		return -3;
	}
	if (!(ds = calloc(1, sizeof *ds))) {
		util_err_set(err, "out of memory");
		return -1;
	}
	s->be = ds;
	ds->d = s->ctx.dist;
	parts = ds->d->parts;
	if (!(ds->row_start = util_alloc((size_t)parts + 1, sizeof(uint32_t), err)) ||
	    !(ds->scnt = calloc((size_t)parts * 4, sizeof(int))) ||
	    !(ds->weight = calloc((size_t)parts * 2, sizeof(double))) ||
	    grid_init(&s->grid, s->sc, f->cap, err) != 0) {
		if (ds->scnt == NULL || ds->weight == NULL)
			util_err_set(err, "out of memory");
		dist_free_be(s);
		return -1;
	}
	ds->sdsp = ds->scnt + parts;
	ds->rcnt = ds->sdsp + parts;
	ds->rdsp = ds->rcnt + parts;
	ds->rate = ds->weight + parts;
	/* Every part drew its share of the flock (by id, sim.c), which the
	 * first step sends to its slab; part 0 makes room for the whole flock
	 * when it first needs it (make_whole). */
	ds->n_all = (size_t)s->sc->count;
	return 0;
}

/* Part 0's whole flock and its grid, at the first gather or checkpoint
 * read: a run without frames, metrics, predators, events, checks or
 * checkpoints never holds it. Drawn as at the start, which is its state
 * until the first gather or event (an event gathers first). */
static int make_whole(struct sim *s, struct util_err *err)
{
	struct dist_sim *ds = s->be;
	int rc;

	if (ds->whole_ok || ds->d->part != 0)
		return 0;
	rc = flock_init(&ds->whole, s->sc, s->ctx.parallel_min, err);
	if (rc != 0)
		return -1;
	ds->whole_ok = 1;
	if (grid_init(&ds->wgrid, s->sc, ds->whole.cap, err) != 0)
		return -1;
	ds->wgrid.radius = grid_radius(s->cur);
	ds->wgrid_ok = 1;
	return 0;
}

static void dist_stage(struct sim *s, const struct scenario *st)
{
	struct dist_sim *ds = s->be;

	s->grid.radius = grid_radius(st);
	if (ds->wgrid_ok)
		ds->wgrid.radius = grid_radius(st);
}

/* Out of memory in an exchange or a gather leaves this part unable to go
 * on while the others wait in a collective call: the caller ends the whole
 * run (ctx.fail, which does not return). Returns 0. */
static size_t part_fail(struct sim *s, const struct util_err *err)
{
	s->ctx.fail(s->ctx.fail_user, err->msg);
	return 0;
}

/* Every part's boids to part 0, into the whole flock's slots in part
 * order; returns how many the whole flock has there (0 elsewhere). */
static size_t collect(struct sim *s)
{
	struct dist_sim *ds = s->be;
	struct flock *f = &s->flock;
	struct util_err err;
	const size_t w = dist_words(f);
	const int parts = ds->d->parts, recv = ds->d->part == 0;
	int mine, q;
	size_t k, total = 0;

	/* A frame and a row of the same step (or the predators after them)
	 * gather once: the state changes only with the step. */
	if (ds->whole_at == s->step + 1)
		return recv ? ds->whole.n : 0;
	ds->whole_at = s->step + 1;
	compact(s);
	if (make_whole(s, &err) != 0)
		return part_fail(s, &err);
	mine = (int)(f->n * w);
	if (util_reserve_raw(&ds->sbuf, &ds->scap, (f->n * w + 1) * sizeof(uint32_t), &err) != 0)
		return part_fail(s, &err);
	for (k = 0; k < f->n; k++)
		pack(f, k, ds->sbuf + k * w);
	MPI_Gather(&mine, 1, MPI_INT, ds->rcnt, 1, MPI_INT, 0, ds->d->comm);
	if (recv) {
		for (q = 0; q < parts; q++) {
			ds->rdsp[q] = (int)total;
			total += (size_t)ds->rcnt[q];
		}
		if (util_reserve_raw(&ds->rbuf, &ds->rcap, (total + 1) * sizeof(uint32_t), &err) != 0)
			return part_fail(s, &err);
	}
	MPI_Gatherv(ds->sbuf, mine, MPI_UINT32_T, ds->rbuf, ds->rcnt, ds->rdsp, MPI_UINT32_T, 0,
		    ds->d->comm);
	if (!recv) {
		s->stats.sent_gather += (uint64_t)mine * sizeof(uint32_t);
		return 0;
	}
	for (k = 0; k < total / w; k++)
		unpack(&ds->whole, k, ds->rbuf + k * w);
	ds->whole.n = total / w;
	return total / w;
}

/* Part 0's whole flock back to the parts, each its share by id (as at the
 * start; the next step sends each boid to its slab), and the count. */
static size_t scatter(struct sim *s)
{
	struct dist_sim *ds = s->be;
	struct flock *f = &s->flock;
	struct util_err err;
	const size_t w = dist_words(f);
	const int parts = ds->d->parts;
	uint64_t n_all = 0;
	int mine, q;
	size_t k;

	if (ds->d->part == 0) {
		const struct flock *wh = &ds->whole;
		int *at = ds->rdsp;

		if (util_reserve_raw(&ds->sbuf, &ds->scap, (wh->n * w + 1) * sizeof(uint32_t),
				     &err) != 0)
			return part_fail(s, &err);
		for (q = 0; q < parts; q++)
			ds->scnt[q] = 0;
		for (k = 0; k < wh->n; k++)
			ds->scnt[wh->id[k] % (uint32_t)parts] += (int)w;
		for (q = 0, mine = 0; q < parts; q++) {
			ds->sdsp[q] = mine;
			at[q] = mine;
			mine += ds->scnt[q];
		}
		for (k = 0; k < wh->n; k++) {
			q = (int)(wh->id[k] % (uint32_t)parts);
			pack(wh, k, ds->sbuf + at[q]);
			at[q] += (int)w;
		}
		n_all = wh->n;
	}
	MPI_Bcast(&n_all, 1, MPI_UINT64_T, 0, ds->d->comm);
	MPI_Scatter(ds->scnt, 1, MPI_INT, &mine, 1, MPI_INT, 0, ds->d->comm);
	if (util_reserve_raw(&ds->rbuf, &ds->rcap, ((size_t)mine + 1) * sizeof(uint32_t), &err) != 0)
		return part_fail(s, &err);
	MPI_Scatterv(ds->sbuf, ds->scnt, ds->sdsp, MPI_UINT32_T, ds->rbuf, mine, MPI_UINT32_T, 0,
		     ds->d->comm);
	if (ds->d->part == 0) /* what it sent the others */
		s->stats.sent_gather += (n_all * w - (uint64_t)ds->scnt[0]) * sizeof(uint32_t);
	for (k = 0; k < (size_t)mine / w; k++)
		unpack(f, k, ds->rbuf + k * w);
	f->n = (size_t)mine / w;
	ds->n_all = (size_t)n_all;
	ds->pending = 0;
	return f->n;
}

static void dist_step(struct sim *s)
{
	struct dist_sim *ds = s->be;
	struct util_err err;
	size_t first = 0, end = 0;
	double t0 = util_seconds(), t1;
	int d;

	/* The predators are few and every part has them; what they see is the
	 * whole flock, in an order of its own (predators.c), so part 0
	 * gathers it, steps them as one process does and sends them out. */
	if (s->pred.n > 0) {
		collect(s);
		if (ds->d->part == 0)
			predators_step(&s->pred, s->cur, &s->rp.ip, &ds->whole);
		for (d = 0; d < s->flock.dims; d++) {
			MPI_Bcast(s->pred.pos_next[d], s->pred.n, MPI_FLOAT, 0, ds->d->comm);
			MPI_Bcast(s->pred.vel_next[d], s->pred.n, MPI_FLOAT, 0, ds->d->comm);
		}
	}
	if (distribute(s, &first, &end, &err) != 0) {
		part_fail(s, &err);
		return;
	}
	t1 = util_seconds();
	s->stats.t_exchange += ds->t_exchange;
	ds->t_exchange = 0;
	s->stats.candidates += step_grid_cells(s->kern, &s->grid, &s->flock, &s->rp, s->step,
					       first, end);
	ds->own0 = s->grid.cell_start[first];
	ds->own1 = s->grid.cell_start[end];
	ds->pending = 1;
	ds->n_work = ds->own1 - ds->own0;
	ds->t_work = util_seconds() - t1;
	s->stats.boid_steps += ds->n_work;
	s->stats.t_grid += t1 - t0;
	s->stats.t_step += ds->t_work;
}

static void dist_measure(struct sim *s, struct metrics *m, struct metrics_row *row)
{
	struct dist_sim *ds = s->be;

	memset(row, 0, sizeof *row);
	collect(s);
	if (ds->d->part != 0)
		return;
	/* The whole flock, measured as one process measures it: grid_build
	 * puts it in the same cell order whatever order it arrives in. */
	grid_build(&ds->wgrid, &ds->whole);
	metrics_compute(m, &ds->whole, &ds->wgrid, &s->rp, row);
}

static size_t dist_frame(struct sim *s, float *const out[FLOCK_FIELDS_MAX], uint32_t *ids,
			 uint32_t *groups)
{
	struct dist_sim *ds = s->be;
	const struct flock *w = &ds->whole;
	const int dims = s->flock.dims; /* (the whole flock exists after the gather) */
	size_t n = collect(s), k;
	int d;

	if (ds->d->part != 0)
		return (size_t)s->sc->count;
	for (k = 0; k < n; k++) {
		const uint32_t r = flock_rank(w, w->id[k]);

		for (d = 0; d < dims; d++) {
			out[d][r] = w->pos[d][k];
			out[dims + d][r] = w->vel[d][k];
		}
		if (w->has_hue)
			out[2 * dims][r] = flock_hue_turns(w->hue[0][k], w->hue[1][k]);
	}
	return sim_frame_agents(s, w, n, out, ids, groups);
}

/* Population events act on the whole flock by id and rank (flock.c):
 * part 0 gathers it, applies them, and sends every part its share. */
static void dist_events(struct sim *s)
{
	struct dist_sim *ds = s->be;

	if (!(s->next_event < s->sc->n_events && s->sc->events[s->next_event].step <= s->step))
		return;
	collect(s);
	if (ds->d->part == 0)
		sim_events_on(s, &ds->whole);
	else /* the same events, passed */
		while (s->next_event < s->sc->n_events &&
		       s->sc->events[s->next_event].step <= s->step)
			s->next_event++;
	scatter(s);
}

static int dist_whole(struct sim *s, const struct flock **f, struct util_err *err)
{
	struct dist_sim *ds = s->be;

	(void)err;
	collect(s);
	*f = ds->d->part == 0 ? &ds->whole : NULL;
	return 0;
}

/* A checkpoint read by every part into s->flock: the whole flock, with its
 * live ids and disabled boids, becomes part 0's whole, and each part
 * keeps its share. */
static int dist_loaded(struct sim *s, struct util_err *err)
{
	struct dist_sim *ds = s->be;
	struct flock *w = &ds->whole, *f = &s->flock;
	const uint32_t parts = (uint32_t)ds->d->parts, me = (uint32_t)ds->d->part;
	size_t k, kept = 0;

	if (make_whole(s, err) != 0)
		return -1;
	if (me == 0) {
		for (k = 0; k < f->n; k++)
			copy_boid(w, k, f, k);
		w->n = f->n;
		w->next_id = f->next_id;
		w->n_parked = f->n_parked;
		if (f->n_parked > 0) {
			memcpy(w->park_id, f->park_id, f->n_parked * sizeof *w->park_id);
			memcpy(w->park, f->park, f->n_parked * FLOCK_PARK_FIELDS * sizeof *w->park);
		}
		if (w->rank)
			flock_reindex(w);
	}
	/* (on every part: they all skip the gather of this step, or none) */
	ds->whole_at = s->step + 1;
	ds->n_all = f->n;
	for (k = 0; k < f->n; k++)
		if (f->id[k] % parts == me) {
			if (kept != k)
				move_slot(f, kept, k);
			kept++;
		}
	f->n = kept;
	ds->pending = 0;
	return 0;
}

static size_t dist_count(const struct sim *s)
{
	const struct dist_sim *ds = s->be;

	return ds->n_all;
}

static const struct sim_ops DIST_OPS = {
	"dist",	     dist_init_be, dist_free_be, dist_stage,  dist_step,  dist_measure,
	dist_frame,  dist_events,  dist_whole,	 dist_loaded, dist_count,
};

const struct sim_ops *dist_sim_ops(void)
{
	return &DIST_OPS;
}
