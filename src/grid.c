/* grid.c: uniform-grid neighbour search. Each step the flock is sorted into
 * cell order by a parallel counting sort (boids of a cell by id), then every
 * boid gathers its neighbours from the adjacent cells. Threads split the
 * cells and each writes only its own boids: no atomics, no reductions. */
#include "config.h"
#include "grid.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

static const struct grid_kernels *grid_kernels_for(enum ctx_simd want);

int grid_init(struct grid *g, const struct scenario *sc, size_t n, const struct ctx *ctx,
	      struct util_err *err)
{
	memset(g, 0, sizeof *g);
	g->dims = sc->dims;
	g->periodic = sc->mode == BOUNDS_WRAP;
	g->radius = grid_radius(sc);
	g->reach = 1;
	{
		struct bounds b;
		int d;

		bounds_init(&b, sc);
		for (d = 0; d < 3; d++) {
			g->box_lo[d] = b.lo[d];
			g->box_hi[d] = b.hi[d];
		}
	}
	/* More cells than boids only adds empty cells to visit. */
	g->max_cells = n + 64;
#ifdef _OPENMP
	g->threads = omp_get_max_threads();
#else
	g->threads = 1;
#endif
	if (g->threads < 1)
		g->threads = 1;
	/* Sized for the most cells, but only the cells in use are written
	 * (each step, before they are read), so only those are resident. */
	g->kern = grid_kernels_for(ctx ? ctx->simd : CTX_SIMD_BEST);
	if (!(g->cell_start = util_alloc_raw(g->max_cells + 1, sizeof(uint32_t), err)) ||
	    !(g->key = util_alloc(n, sizeof(uint32_t), err)) ||
	    !(g->hist = util_alloc_raw(g->max_cells, sizeof(uint32_t) * (size_t)g->threads,
				       err)) ||
	    !(g->part = util_alloc((size_t)g->threads + 1, sizeof(uint32_t), err))) {
		grid_free(g);
		return -1;
	}
	return 0;
}

double grid_radius(const struct scenario *sc)
{
	return scenario_max_radius(sc) * GRID_CELL_SLACK;
}

void grid_free(struct grid *g)
{
	util_free(g->cell_start);
	util_free(g->key);
	util_free(g->hist);
	util_free(g->part);
	memset(g, 0, sizeof *g);
}

/* The box the cells cover: under wrap the bounds box, which they tile
 * exactly; otherwise the flock's current extent, so a flock that drifts
 * far away still gets a grid. */
static void choose_extent(struct grid *g, const struct flock *f)
{
	int d;

	for (d = 0; d < g->dims; d++) {
		double lo, hi;

		if (g->periodic) {
			lo = g->box_lo[d];
			hi = g->box_hi[d];
		} else {
			float mn = f->pos[d][0], mx = f->pos[d][0];
			const float *p = f->pos[d];
			size_t i, n = f->n;

			/* min and max are exact, so this reduction cannot depend
			 * on the thread count. */
			#pragma omp parallel for reduction(min:mn) reduction(max:mx) schedule(static) \
				if (n >= f->parallel_min)
			for (i = 0; i < n; i++) {
				mn = p[i] < mn ? p[i] : mn;
				mx = p[i] > mx ? p[i] : mx;
			}
			lo = mn;
			hi = mx;
		}
		g->lo[d] = lo;
		g->len[d] = hi - lo;
		if (!(g->len[d] > 0.0))
			g->len[d] = g->radius;
	}
}

/* Cells per axis for the current reach: as many as fit with edges no
 * smaller than radius / reach, then halved along the longest axis until
 * the total fits max_cells (larger cells only make the stencil see
 * farther). Returns 1 when it had to halve. */
static int choose_cells(struct grid *g)
{
	int halved = 0;
	const double edge = g->radius / g->reach;
	int d, dims = g->dims;
	double total;

	for (d = 0; d < dims; d++) {
		double cells = floor(g->len[d] / edge);

		if (cells < 1.0)
			cells = 1.0;
		if (cells > 2147483647.0)
			cells = 2147483647.0;
		g->n[d] = (uint32_t)cells;
	}
	for (;;) {
		int big = 0;

		total = 1.0;
		for (d = 0; d < dims; d++) {
			total *= g->n[d];
			if (g->n[d] > g->n[big])
				big = d;
		}
		if (total <= (double)g->max_cells)
			break;
		g->n[big] = (g->n[big] + 1) / 2;
		halved = 1;
	}
	g->ncells = (size_t)total;
	for (d = 0; d < dims; d++)
		g->inv[d] = g->n[d] / g->len[d];
	for (; d < 3; d++) {
		g->n[d] = 1;
		g->lo[d] = 0.0;
		g->inv[d] = 0.0;
	}
	return halved;
}

static inline uint32_t axis_index(const struct grid *g, int d, float x)
{
	double c = ((double)x - g->lo[d]) * g->inv[d];

	if (!(c >= 0.0)) /* also catches NaN, which would be a bug upstream */
		return 0;
	if (c >= (double)g->n[d])
		return g->n[d] - 1;
	return (uint32_t)c;
}

static inline size_t cell_of_slot(const struct grid *g, const struct flock *f, size_t i)
{
	size_t c = axis_index(g, 0, f->pos[0][i]);

	c += (size_t)g->n[0] * axis_index(g, 1, f->pos[1][i]);
	if (g->dims == 3)
		c += (size_t)g->n[0] * g->n[1] * axis_index(g, 2, f->pos[2][i]);
	return c;
}

/* Sorts one cell's slots by the ids they hold. Boids that stayed in their
 * cell are already in order, so the final gap (insertion sort) is nearly
 * linear; the larger gaps (a Shell sort: Ciura's sequence, extended by
 * factors of 2.25) keep the dense cells of a clustered flock from going
 * quadratic; cells of at most 16, the common case, take the final gap
 * alone. Ids are unique, so the result does not depend on the method. */
static void sort_cell(uint32_t *k, size_t m, const uint32_t *id)
{
	static const size_t GAPS[] = {
		5814680, 2584303, 1148579, 510479, 226880, 100836, 44816, 19918, 8852,
		3934, 1750, 701, 301, 132, 57, 23, 10, 4, 1};
	const size_t ngaps = sizeof GAPS / sizeof GAPS[0];
	size_t gi, i, j;

	for (gi = m <= 16 ? ngaps - 1 : 0; gi < ngaps; gi++) {
		const size_t h = GAPS[gi];

		for (i = h; i < m; i++) {
			uint32_t v = k[i], vid = id[v];

			for (j = i; j >= h && id[k[j - h]] > vid; j -= h)
				k[j] = k[j - h];
			k[j] = v;
		}
	}
}

void grid_build(struct grid *g, struct flock *f)
{
	const size_t n = f->n;
	const int dims = f->dims;
	uint64_t crowd = 0;
	int redo = 0;

	g->reach = 1;
	choose_extent(g, f);
	choose_cells(g);

	#pragma omp parallel num_threads(g->threads) if (n >= f->parallel_min)
	{
		int t = 0, nt = 1, d, pass;
		size_t i, c, lo, hi;
		uint32_t *h;

#ifdef _OPENMP
		t = omp_get_thread_num();
		nt = omp_get_num_threads();
#endif
		lo = n * (size_t)t / (size_t)nt;
		hi = n * (size_t)(t + 1) / (size_t)nt;
		/* Count the boids per cell of edge r; when crowded, count again
		 * per cell of edge r/2 (GRID_CROWDED). */
		for (pass = 0; pass < 2; pass++) {
			const size_t nc = g->ncells;

			h = g->hist + (size_t)t * nc;
			memset(h, 0, nc * sizeof *h);
			for (i = lo; i < hi; i++)
				h[cell_of_slot(g, f, i)]++;
			#pragma omp barrier
			if (pass == 1)
				break;
			/* sum of squared counts: an integer, the same in any order */
			#pragma omp for schedule(static) reduction(+:crowd)
			for (c = 0; c < nc; c++) {
				uint64_t m = 0;
				int tt;

				for (tt = 0; tt < nt; tt++)
					m += g->hist[(size_t)tt * nc + c];
				crowd += m * m;
			}
			/* Not where the cells of r/2 would not fit max_cells: the
			 * larger cells that would fit make reach 2 see farther than
			 * reach 1 (a large 3D box). */
			#pragma omp single
			{
				redo = crowd > (uint64_t)GRID_CROWDED * n;
				if (redo) {
					g->reach = 2;
					if (choose_cells(g)) {
						g->reach = 1;
						choose_cells(g);
						redo = 0;
					}
				}
			}
			if (!redo)
				break;
		}
		/* The exclusive scan of the counts, cell by cell and within a
		 * cell thread by thread, in parallel: each thread sums its block
		 * of cells, one thread scans the blocks' sums, and each thread
		 * scans its block from there. Integers: the same in any order. */
		{
			const size_t nc = g->ncells;
			const size_t c0 = nc * (size_t)t / (size_t)nt;
			const size_t c1 = nc * (size_t)(t + 1) / (size_t)nt;
			uint32_t start = 0;
			int tt;

			for (c = c0; c < c1; c++)
				for (tt = 0; tt < nt; tt++)
					start += g->hist[(size_t)tt * nc + c];
			g->part[t + 1] = start;
			#pragma omp barrier
			#pragma omp single
			{
				g->part[0] = 0;
				for (tt = 0; tt < nt; tt++)
					g->part[tt + 1] += g->part[tt];
			}
			start = g->part[t];
			for (c = c0; c < c1; c++) {
				g->cell_start[c] = start;
				for (tt = 0; tt < nt; tt++) {
					uint32_t cnt = g->hist[(size_t)tt * nc + c];

					g->hist[(size_t)tt * nc + c] = start;
					start += cnt;
				}
			}
			if (t == nt - 1)
				g->cell_start[nc] = start;
			#pragma omp barrier
		}
		/* The cell again rather than stored: cheaper than 4 bytes per boid
		 * of memory traffic. */
		for (i = lo; i < hi; i++) {
			uint32_t dest = h[cell_of_slot(g, f, i)]++;

			g->key[dest] = (uint32_t)i;
		}
		#pragma omp barrier
		#pragma omp for schedule(dynamic, 256)
		for (c = 0; c < g->ncells; c++)
			sort_cell(g->key + g->cell_start[c],
				  g->cell_start[c + 1] - g->cell_start[c], f->id);
		/* The arrays in locals, so that the stores, which could
		 * alias struct flock, do not make the loop reload them. */
		{
			const uint32_t *restrict key = g->key, *restrict id = f->id;
			uint32_t *restrict id_next = f->id_next;
			const float *restrict p[3], *restrict v[3];
			float *restrict pn[3], *restrict vn[3];

			for (d = 0; d < 3; d++) {
				p[d] = f->pos[d < dims ? d : 0];
				v[d] = f->vel[d < dims ? d : 0];
				pn[d] = f->pos_next[d < dims ? d : 0];
				vn[d] = f->vel_next[d < dims ? d : 0];
			}
			#pragma omp for schedule(static)
			for (i = 0; i < n; i++) {
				const size_t src = key[i];

				pn[0][i] = p[0][src];
				pn[1][i] = p[1][src];
				vn[0][i] = v[0][src];
				vn[1][i] = v[1][src];
				if (dims == 3) {
					pn[2][i] = p[2][src];
					vn[2][i] = v[2][src];
				}
				id_next[i] = id[src];
			}
		}
		/* A loop of its own, so the loop above is the same without. */
		if (f->has_hue) {
			#pragma omp for schedule(static)
			for (i = 0; i < n; i++) {
				size_t src = g->key[i];

				f->hue_next[0][i] = f->hue[0][src];
				f->hue_next[1][i] = f->hue[1][src];
				if (f->hue_fields == 3)
					f->hue_next[2][i] = f->hue[2][src];
			}
		}
	}
	flock_swap(f, 1);
}

/* On x86-64 the neighbour loop is compiled three times, for the baseline,
 * for AVX2 (with BMI1/2 and FMA) and for AVX-512 (F, BW, CD, DQ, VL, with
 * the same: 32 vector registers and mask registers), and grid_init picks
 * the most capable one the CPU can run, unless the environment says
 * BOIDSIM_SIMD=baseline or avx2. The four lanes are in the source and
 * contraction is off (-ffp-contract=off), so all do the same IEEE
 * operations and give the same bits; determinism.test compares them. */
#if defined(__x86_64__) && defined(__GNUC__) && defined(__has_attribute)
#if __has_attribute(target)
#define GRID_AVX512 1
#define GRID_AVX512_TARGET \
	__attribute__((target("avx512f,avx512bw,avx512cd,avx512dq,avx512vl,avx2,bmi,bmi2,fma")))
#define GRID_AVX2_TARGET __attribute__((target("avx2,bmi,bmi2,fma")))
#endif
#endif

/* The cells along one axis that can hold neighbours of cell c, offsets
 * -reach .. +reach in order; under wrap with fewer cells than that, each
 * cell once, in increasing order. */
static int axis_cells(const struct grid *g, int d, uint32_t c,
		      uint32_t out[2 * GRID_REACH_MAX + 1])
{
	const int reach = g->reach;
	uint32_t n = g->n[d];
	int m = 0, o;

	if (d >= g->dims) {
		out[0] = 0;
		return 1;
	}
	if (g->periodic && n < 2 * (uint32_t)reach + 1) {
		for (m = 0; m < (int)n; m++)
			out[m] = (uint32_t)m;
		return m;
	}
	for (o = -reach; o <= reach; o++) {
		int64_t x = (int64_t)c + o;

		if (g->periodic)
			out[m++] = (uint32_t)(x < 0 ? x + n : x >= n ? x - n : x);
		else if (x >= 0 && x < n)
			out[m++] = (uint32_t)x;
	}
	return m;
}

/* The slot ranges of the cells of the stencil around cell c, z then y then
 * x. */
static int stencil(const struct grid *g, size_t c, uint32_t start[GRID_STENCIL_MAX],
		   uint32_t end[GRID_STENCIL_MAX])
{
	uint32_t xs[2 * GRID_REACH_MAX + 1], ys[2 * GRID_REACH_MAX + 1], zs[2 * GRID_REACH_MAX + 1];
	uint32_t cx = (uint32_t)(c % g->n[0]);
	uint32_t cy = (uint32_t)(c / g->n[0] % g->n[1]);
	uint32_t cz = (uint32_t)(c / g->n[0] / g->n[1]);
	int nx = axis_cells(g, 0, cx, xs), ny = axis_cells(g, 1, cy, ys);
	int nz = axis_cells(g, 2, cz, zs), a, b, e, m = 0;

	for (a = 0; a < nz; a++)
		for (b = 0; b < ny; b++)
			for (e = 0; e < nx; e++) {
				size_t cc = ((size_t)zs[a] * g->n[1] + ys[b]) * g->n[0] + xs[e];

				start[m] = g->cell_start[cc];
				end[m] = g->cell_start[cc + 1];
				m++;
			}
	return m;
}

/* d = p_j - p_i (minimum image) and |d|^2, in binary32: the one definition
 * of distance used by every neighbour loop, so grid and brute force agree. */
static inline float pair_delta(const struct rules_params *rp, const struct flock *f,
			       size_t i, size_t j, float d[3])
{
	float d2 = 0.0f;
	int k;

	for (k = 0; k < rp->dims; k++) {
		d[k] = bounds_min_image(&rp->ip.box, k, f->pos[k][j] - f->pos[k][i]);
		d2 += d[k] * d[k];
	}
	return d2;
}

/* The update of RULES_BATCH boids at a time (rules_update_batch_*), at
 * the SIMD levels where it pays. */
typedef int batch_fn(const struct rules_params *p, const struct rules_acc acc[RULES_BATCH],
		     int nb, size_t k, const float *const pos[3], const float *const vel[3],
		     float *const pos_out[3], float *const vel_out[3]);

static inline void finish_hue(const struct flock *f, const struct rules_params *rp,
			      const struct rules_acc *acc, size_t k)
{
	if (rp->has_hue) {
		const float u[3] = {f->hue[0][k], f->hue[1][k],
				    f->hue_fields == 3 ? f->hue[2][k] : 0.0f};
		float uo[3];

		rules_hue_update(rp, acc, u, uo);
		f->hue_next[0][k] = uo[0];
		f->hue_next[1][k] = uo[1];
		if (f->hue_fields == 3)
			f->hue_next[2][k] = uo[2];
	}
}

static inline void finish_boid(const struct flock *f, const struct rules_params *rp,
			       const struct rules_acc *acc, size_t k, uint64_t step)
{
	float pos[3] = {0, 0, 0}, vel[3] = {0, 0, 0}, po[3], vo[3];
	int d;

	for (d = 0; d < f->dims; d++) {
		pos[d] = f->pos[d][k];
		vel[d] = f->vel[d][k];
	}
	rules_update(rp, acc, f->id[k], step, pos, vel, po, vo);
	for (d = 0; d < f->dims; d++) {
		f->pos_next[d][k] = po[d];
		f->vel_next[d][k] = vo[d];
	}
	finish_hue(f, rp, acc, k);
}

/* The boids of slots k .. k+nb-1 (nb <= RULES_BATCH), their
 * neighbourhoods in acc: together where the level has a batch update and
 * it applies, else one by one. */
static inline void finish_boids(const struct flock *f, const struct rules_params *rp,
				batch_fn *update_batch, const struct rules_acc acc[RULES_BATCH],
				int nb, size_t k, uint64_t step)
{
	int b;

	if (update_batch &&
	    update_batch(rp, acc, nb, k, (const float *const *)f->pos,
			       (const float *const *)f->vel, f->pos_next, f->vel_next)) {
		for (b = 0; b < nb; b++)
			finish_hue(f, rp, &acc[b], k + (size_t)b);
		return;
	}
	for (b = 0; b < nb; b++)
		finish_boid(f, rp, &acc[b], k + (size_t)b, step);
}

/* A run of consecutive slots of the stencil, with the periodic correction
 * (0 or -/+ the box side, per axis) for the pairs it holds. */
struct span {
	uint32_t start, end;
	float corr[3];
};

/* The stencil of cell c (cells z, then y, then x, offsets -reach ..
 * +reach) as runs of slots: the cells of a row are consecutive in
 * memory unless the row wraps, so most rows are one run, visited in the
 * same order as cell by cell. With at least 2 reach + 1 cells on
 * every periodic axis, the box is wider than twice any radius, and the
 * image of a neighbour across the box edge within the radius is the one in
 * the stencil's cell; its correction is applied as (p_j - p_i) + corr,
 * the same IEEE operation as the minimum image's (p_j - p_i) - L, so
 * distances and sums are bit for bit those of pair_delta. (Where the two
 * images could differ, both are farther than the radius.) Returns the
 * number of spans, or -1 when some periodic axis has too few cells. */
static int spans(const struct grid *g, const struct rules_params *rp, size_t c,
		 struct span sp[GRID_STENCIL_MAX])
{
	const int reach = g->reach;
	uint32_t cell[3][2 * GRID_REACH_MAX + 1], cc[3];
	uint32_t run_first[2 * GRID_REACH_MAX + 1], run_last[2 * GRID_REACH_MAX + 1];
	float corr[3][2 * GRID_REACH_MAX + 1], run_corr[2 * GRID_REACH_MAX + 1];
	int cnt[3], d, a, b, e, o, r, nrun = 0, m = 0;

	cc[0] = (uint32_t)(c % g->n[0]);
	cc[1] = (uint32_t)(c / g->n[0] % g->n[1]);
	cc[2] = (uint32_t)(c / g->n[0] / g->n[1]);
	for (d = 0; d < 3; d++) {
		const int64_t n = g->n[d];

		cnt[d] = 0;
		if (d >= g->dims) {
			cell[d][0] = 0;
			corr[d][0] = 0.0f;
			cnt[d] = 1;
			continue;
		}
		if (g->periodic && n < 2 * reach + 1)
			return -1;
		for (o = -reach; o <= reach; o++) {
			int64_t x = (int64_t)cc[d] + o;
			float cr = 0.0f;

			if (x < 0 || x >= n) {
				if (!g->periodic)
					continue;
				cr = x < 0 ? -rp->ip.box.len_f[d] : rp->ip.box.len_f[d];
				x = x < 0 ? x + n : x - n;
			}
			cell[d][cnt[d]] = (uint32_t)x;
			corr[d][cnt[d]++] = cr;
		}
	}
	/* The x offsets as runs of consecutive cells with one correction (a
	 * row that wraps has two); each row of the stencil is then one span
	 * per run, from its first cell's start to its last cell's end, the
	 * cells' slots being consecutive. */
	for (e = 0; e < cnt[0]; e++) {
		if (e > 0 && cell[0][e] == cell[0][e - 1] + 1 && corr[0][e] == corr[0][e - 1]) {
			run_last[nrun - 1] = cell[0][e];
			continue;
		}
		run_first[nrun] = run_last[nrun] = cell[0][e];
		run_corr[nrun++] = corr[0][e];
	}
	for (a = 0; a < cnt[2]; a++)
		for (b = 0; b < cnt[1]; b++) {
			const size_t row = ((size_t)cell[2][a] * g->n[1] + cell[1][b]) * g->n[0];

			for (r = 0; r < nrun; r++) {
				sp[m].start = g->cell_start[row + run_first[r]];
				sp[m].end = g->cell_start[row + run_last[r] + 1];
				sp[m].corr[0] = run_corr[r];
				sp[m].corr[1] = corr[1][b];
				sp[m].corr[2] = corr[2][a];
				m++;
			}
		}
	return m;
}

/* One boid's neighbourhood from its spans, RULES_LANES candidates at a
 * time (rules.h): lane l of a group holds slot j0 + l of the span, so the
 * lane a neighbour is summed in depends on the cell contents only. The
 * flock arrays are padded by RULES_LANES slots, so a group may read past
 * the last boid; those lanes, like the boid itself, are masked. DIMS,
 * MODEL and HUE are constants in each caller, so every combination gets
 * its own vectorised loop, and the loops without a hue load no hue. */
static inline __attribute__((always_inline)) void
gather_spans(const struct flock *f, const struct rules_params *rp, size_t k,
	     const struct span *sp, int nsp, const int DIMS, const enum model_kind MODEL,
	     const int HUE, struct rules_acc *acc)
{
	const float *px = f->pos[0], *py = f->pos[1], *pz = f->pos[DIMS == 3 ? 2 : 1];
	const float *vx = f->vel[0], *vy = f->vel[1], *vz = f->vel[DIMS == 3 ? 2 : 1];
	const float *hc = f->hue[0], *hs = f->hue[1], *hr = f->hue[2];
	const float xi = px[k], yi = py[k], zi = pz[k];
	rules_vi lane;
	struct rules_lanes ln;
	struct rules_self self;
	float vel[3] = {vx[k], vy[k], vz[k]};
	int s, l;

	for (l = 0; l < RULES_LANES; l++)
		lane[l] = l;
	rules_self_init(&self, rp, DIMS, vel);
	rules_lanes_init(&ln);
	for (s = 0; s < nsp; s++) {
		const float c0 = sp[s].corr[0], c1 = sp[s].corr[1], c2 = sp[s].corr[2];
		const size_t end = sp[s].end;
		size_t j0;

		for (j0 = sp[s].start; j0 < end; j0 += RULES_LANES) {
			/* lanes past the span's end, and the boid itself */
			const int m = end - j0 < RULES_LANES ? (int)(end - j0) : RULES_LANES;
			const int self_lane = k >= j0 && k < j0 + RULES_LANES ? (int)(k - j0) : -1;
			struct rules_cand cd;
			rules_vf x, y, z;

			memcpy(&x, px + j0, sizeof x);
			memcpy(&y, py + j0, sizeof y);
			memcpy(&cd.vx, vx + j0, sizeof cd.vx);
			memcpy(&cd.vy, vy + j0, sizeof cd.vy);
			cd.dx = (x - xi) + c0;
			cd.dy = (y - yi) + c1;
			cd.d2 = cd.dx * cd.dx + cd.dy * cd.dy;
			if (DIMS == 3) {
				memcpy(&z, pz + j0, sizeof z);
				memcpy(&cd.vz, vz + j0, sizeof cd.vz);
				cd.dz = (z - zi) + c2;
				cd.d2 = cd.d2 + cd.dz * cd.dz;
			}
			if (HUE) {
				memcpy(&cd.hc, hc + j0, sizeof cd.hc);
				memcpy(&cd.hs, hs + j0, sizeof cd.hs);
				if (rp->hue_spin)
					memcpy(&cd.hr, hr + j0, sizeof cd.hr);
			}
			cd.valid = (lane < m) & (lane != self_lane);
			rules_lanes_add(&ln, rp, MODEL, DIMS, HUE, &cd, &self);
		}
	}
	rules_lanes_reduce(&ln, DIMS, HUE, acc);
}

/* Pairs need __builtin_shufflevector (gcc 12, clang) to fill both halves
 * of a vector from one load; without it the loops take one boid at a
 * time. */
#if defined(GRID_AVX512) && defined(__has_builtin)
#if __has_builtin(__builtin_shufflevector)
#define GRID_PAIRS 1
#endif
#endif

#ifdef GRID_PAIRS
/* Two boids of one cell, slots k and k + 1, from their spans, as
 * gather_spans does each: the candidates are loaded once into both halves
 * of vectors of twice RULES_LANES lanes, and each half does the one-boid
 * loop's operations, so both sums have the same bits as gather_spans'. */
static inline __attribute__((always_inline)) void
gather_spans_x2(const struct flock *f, const struct rules_params *rp, size_t k,
		const struct span *sp, int nsp, const int DIMS, const enum model_kind MODEL,
		const int HUE, struct rules_acc acc[2])
{
	const float *px = f->pos[0], *py = f->pos[1], *pz = f->pos[DIMS == 3 ? 2 : 1];
	const float *vx = f->vel[0], *vy = f->vel[1], *vz = f->vel[DIMS == 3 ? 2 : 1];
	const float *hc = f->hue[0], *hs = f->hue[1], *hr = f->hue[2];
	const size_t L = RULES_LANES;
	rules_vf_x2 xi, yi, zi;
	rules_vi_x2 lane, self;
	struct rules_lanes_x2 ln;
	struct rules_self_x2 sf;
	_Static_assert(RULES_LANES == 4, "LOAD_X2 is written for 4 lanes");
	float vel[6] = {vx[k], vy[k], vz[k], vx[k + 1], vy[k + 1], vz[k + 1]};
	int s, l;

	for (l = 0; l < 2 * RULES_LANES; l++) {
		const size_t b = k + (size_t)(l / RULES_LANES);

		xi[l] = px[b];
		yi[l] = py[b];
		zi[l] = pz[b];
		lane[l] = l % RULES_LANES;
		self[l] = (int32_t)(l / RULES_LANES);
	}
	rules_self_init_x2(&sf, rp, DIMS, vel);
	rules_lanes_init_x2(&ln);
	for (s = 0; s < nsp; s++) {
		const float c0 = sp[s].corr[0], c1 = sp[s].corr[1], c2 = sp[s].corr[2];
		const size_t end = sp[s].end;
		size_t j0;

		for (j0 = sp[s].start; j0 < end; j0 += RULES_LANES) {
			/* lanes past the span's end, and each boid itself: the
			 * boid of lane l is slot k + l / RULES_LANES, so the lane
			 * is its own where j0 + l % RULES_LANES is that slot */
			const int m = end - j0 < L ? (int)(end - j0) : RULES_LANES;
			const int64_t dk = (int64_t)k - (int64_t)j0;
			const int32_t off = dk < -2 * RULES_LANES ? -2 * RULES_LANES :
					    dk > 2 * RULES_LANES ? 2 * RULES_LANES : (int32_t)dk;
			struct rules_cand_x2 cd;
			rules_vf_x2 x, y, z;

#define LOAD_X2(v, src)                                                     \
	do {                                                                 \
		rules_vf v4_;                                                \
		memcpy(&v4_, (src) + j0, sizeof v4_);                        \
		(v) = __builtin_shufflevector(v4_, v4_, 0, 1, 2, 3, 0, 1, 2, 3); \
	} while (0)
			LOAD_X2(x, px);
			LOAD_X2(y, py);
			LOAD_X2(cd.vx, vx);
			LOAD_X2(cd.vy, vy);
			cd.dx = (x - xi) + c0;
			cd.dy = (y - yi) + c1;
			cd.d2 = cd.dx * cd.dx + cd.dy * cd.dy;
			if (DIMS == 3) {
				LOAD_X2(z, pz);
				LOAD_X2(cd.vz, vz);
				cd.dz = (z - zi) + c2;
				cd.d2 = cd.d2 + cd.dz * cd.dz;
			}
			if (HUE) {
				LOAD_X2(cd.hc, hc);
				LOAD_X2(cd.hs, hs);
				if (rp->hue_spin)
					LOAD_X2(cd.hr, hr);
			}
#undef LOAD_X2
			cd.valid = (lane < m) & (lane != self + off);
			rules_lanes_add_x2(&ln, rp, MODEL, DIMS, HUE, &cd, &sf);
		}
	}
	rules_lanes_reduce_x2(&ln, DIMS, HUE, acc);
}
#endif

/* One instance of the loop per dimension, model and hue, so that none of
 * them is tested inside it; and per instruction set (above). */
#define GATHER_AS(M, SUMS)                                                            \
	case M:                                                                       \
		if (f->dims == 2) GATHER(2, SUMS);                                    \
		else GATHER(3, SUMS);                                                 \
		break
#define GATHER_MODEL(M) GATHER_AS(M, M)
#define GATHER_FAST_BODY                                                              \
	do {                                                                          \
		switch (rp->model) {                                                  \
			GATHER_MODEL(MODEL_REYNOLDS);                                 \
			GATHER_MODEL(MODEL_SIMPLE);                                   \
			GATHER_MODEL(MODEL_VICSEK);                                   \
			GATHER_MODEL(MODEL_COUZIN);                                   \
			/* blend's sums are simple's (rules_lanes.h) */              \
			GATHER_AS(MODEL_BLEND, MODEL_SIMPLE);                         \
			GATHER_MODEL(MODEL_SLERP);                                    \
			GATHER_MODEL(MODEL_INERTIA);                                  \
			GATHER_MODEL(MODEL_ACCELERATE);                               \
		}                                                                     \
	} while (0)
#define GATHER(D, M) (rp->has_hue ? SPANS(f, rp, k, sp, nsp, D, M, 1, acc) : \
				    SPANS(f, rp, k, sp, nsp, D, M, 0, acc))

typedef void gather_fn(const struct flock *f, const struct rules_params *rp, size_t k,
		       const struct span *sp, int nsp, struct rules_acc *acc);

/* A neighbour loop NAME for the instruction set TARGET, one boid at a time
 * (gather_spans) or two (gather_spans_x2). */
#define GATHER_FN(NAME, TARGET)                                                        \
	TARGET static void NAME(const struct flock *f, const struct rules_params *rp,  \
				size_t k, const struct span *sp, int nsp,              \
				struct rules_acc *acc)                                 \
	{                                                                              \
		GATHER_FAST_BODY;                                                      \
	}

#define SPANS gather_spans
GATHER_FN(gather_fast_base, )
#ifdef GRID_AVX512
GATHER_FN(gather_fast_avx512, GRID_AVX512_TARGET)
GATHER_FN(gather_fast_avx2, GRID_AVX2_TARGET)
/* Two boids at a time, with AVX-512 and with AVX2. Measured on baseline
 * x86-64 (16 registers of 4 floats, two per 8-float vector) pairs were
 * slower; with AVX2 (16 registers of 8 floats) they pay, together with
 * the batch update: 2D 1M, one thread, neighbours and update 1.71 s
 * against 2.60 s for the AVX2 loop without them (2.75 s baseline). */
#ifdef GRID_PAIRS
#undef SPANS
#define SPANS gather_spans_x2
GATHER_FN(gather_pair_avx512, GRID_AVX512_TARGET)
GATHER_FN(gather_pair_avx2, GRID_AVX2_TARGET)
#endif
#endif
#undef SPANS
#undef GATHER_FN
#undef GATHER
#undef GATHER_FAST_BODY
#undef GATHER_MODEL
#undef GATHER_AS

/* The loops of each level, in ctx_simd order (one table, with ctx.c's
 * names): one boid at a time, two (none on baseline x86-64, where pairs do
 * not pay), and the batch update. A level not compiled here (another
 * processor family) is the baseline's loops. */
struct grid_kernels {
	enum ctx_simd level;
	gather_fn *fast, *pair;
	batch_fn *batch;
};

#if defined GRID_AVX512 && defined GRID_PAIRS
#define PAIR(fn) fn
#else
#define PAIR(fn) NULL
#endif
static const struct grid_kernels KERNELS[CTX_SIMD_LEVELS] = {
#ifdef GRID_AVX512
	{CTX_SIMD_AVX512, gather_fast_avx512, PAIR(gather_pair_avx512), rules_update_batch_avx512},
	{CTX_SIMD_AVX2, gather_fast_avx2, PAIR(gather_pair_avx2), rules_update_batch_avx2},
#else
	{CTX_SIMD_BASELINE, gather_fast_base, NULL, NULL},
	{CTX_SIMD_BASELINE, gather_fast_base, NULL, NULL},
#endif
	{CTX_SIMD_BASELINE, gather_fast_base, NULL, NULL},
};
#undef PAIR

/* Whether this processor runs a level's loops: what each was compiled
 * for (GRID_AVX512_TARGET, GRID_AVX2_TARGET). */
static int cpu_runs(enum ctx_simd level)
{
#ifdef GRID_AVX512
	__builtin_cpu_init();
	if (level == CTX_SIMD_AVX512)
		return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
		       __builtin_cpu_supports("avx512cd") && __builtin_cpu_supports("avx512dq") &&
		       __builtin_cpu_supports("avx512vl") && cpu_runs(CTX_SIMD_AVX2);
	if (level == CTX_SIMD_AVX2)
		return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi") &&
		       __builtin_cpu_supports("bmi2") && __builtin_cpu_supports("fma");
#endif
	return level == CTX_SIMD_BASELINE;
}

/* The asked level, or the next below it that the processor runs. */
static const struct grid_kernels *grid_kernels_for(enum ctx_simd want)
{
	int l = want < 0 || want >= CTX_SIMD_LEVELS ? 0 : (int)want;

	while (l < CTX_SIMD_BASELINE && !cpu_runs((enum ctx_simd)l))
		l++;
	return &KERNELS[l];
}

enum ctx_simd grid_simd(const struct grid *g)
{
	return g->kern->level;
}

enum ctx_simd grid_simd_best(void)
{
	return grid_kernels_for(CTX_SIMD_BEST)->level;
}

/* The general loop, with the minimum image taken pair by pair, over slot
 * ranges: the stencil's cells for periodic axes of one or two cells (where
 * a cell can be its own neighbour on both sides), or every slot for brute
 * force. Lanes as in gather_spans, counted from each range's start. */
static void gather_ranges(const struct flock *f, const struct rules_params *rp, size_t k,
			  const uint32_t *start, const uint32_t *end, int nr,
			  struct rules_acc *acc)
{
	struct rules_lanes ln;
	struct rules_self self;
	float vel[3] = {0, 0, 0};
	int r, l, e;

	for (e = 0; e < f->dims; e++)
		vel[e] = f->vel[e][k];
	rules_self_init(&self, rp, f->dims, vel);
	rules_lanes_init(&ln);
	for (r = 0; r < nr; r++) {
		size_t j0;

		for (j0 = start[r]; j0 < end[r]; j0 += RULES_LANES) {
			struct rules_cand cd;

			memset(&cd, 0, sizeof cd);
			for (l = 0; l < RULES_LANES && j0 + (size_t)l < end[r]; l++) {
				const size_t j = j0 + (size_t)l;
				float d[3] = {0, 0, 0}, v[3] = {0, 0, 0};

				cd.d2[l] = pair_delta(rp, f, k, j, d);
				for (e = 0; e < f->dims; e++)
					v[e] = f->vel[e][j];
				cd.dx[l] = d[0];
				cd.dy[l] = d[1];
				cd.dz[l] = d[2];
				cd.vx[l] = v[0];
				cd.vy[l] = v[1];
				cd.vz[l] = v[2];
				if (rp->has_hue) {
					cd.hc[l] = f->hue[0][j];
					cd.hs[l] = f->hue[1][j];
					if (rp->hue_spin)
						cd.hr[l] = f->hue[2][j];
				}
				cd.valid[l] = j != k ? -1 : 0;
			}
			rules_lanes_add(&ln, rp, rp->model, f->dims, rp->has_hue, &cd, &self);
		}
	}
	rules_lanes_reduce(&ln, f->dims, rp->has_hue, acc);
}

/* Cells per unit of work handed to a thread: about 8 units per thread,
 * from 16 to 1024 cells. Large units keep a thread's cells, and the rows
 * around them it reads, together in its cache: measured, 2D and 3D 1M on
 * two threads, neighbours and update 0.60 and 1.29 s with units of 16
 * cells, 0.55 and 1.19 s with 1024. Results do not depend on the units
 * (each boid's sums and update are its own). */
static size_t chunk_cells(const struct grid *g)
{
	size_t c = g->ncells / ((size_t)g->threads * 8);

	return c < 16 ? 16 : c > 1024 ? 1024 : c;
}

uint64_t grid_step(const struct grid *g, const struct flock *f,
		   const struct rules_params *rp, uint64_t step)
{
	const size_t chunk = chunk_cells(g);
	const size_t nchunks = (g->ncells + chunk - 1) / chunk;
	const struct grid_kernels *kern = g->kern;
	uint64_t candidates = 0; /* an integer sum: exact in any order */
	size_t ch;

	#pragma omp parallel for schedule(dynamic, 1) reduction(+:candidates) \
		if (f->n >= f->parallel_min)
	for (ch = 0; ch < nchunks; ch++) {
		const size_t c1 = ch * chunk + chunk < g->ncells ?
				  ch * chunk + chunk : g->ncells;
		/* The slots of a chunk's cells are consecutive, so its boids are
		 * updated RULES_BATCH at a time across cell boundaries: the
		 * batch's square roots and divisions, which bound the update by
		 * their latency, then overlap. */
		struct rules_acc acc[RULES_BATCH + 1]; /* one over when a pair ends a batch */
		size_t c, k0 = g->cell_start[ch * chunk];
		int nb = 0;

		for (c = ch * chunk; c < c1; c++) {
			struct span sp[GRID_STENCIL_MAX];
			uint32_t st[GRID_STENCIL_MAX], en[GRID_STENCIL_MAX];
			size_t k, here = g->cell_start[c + 1] - g->cell_start[c];
			int nsp, s, ns = 0;

			if (here == 0)
				continue;
			nsp = spans(g, rp, c, sp);
			if (nsp < 0)
				ns = stencil(g, c, st, en);
			for (s = 0; s < nsp; s++)
				candidates += (uint64_t)here * (sp[s].end - sp[s].start);
			for (s = 0; s < ns; s++)
				candidates += (uint64_t)here * (en[s] - st[s]);
			for (k = g->cell_start[c]; k < g->cell_start[c + 1]; k++) {
				if (nsp < 0) {
					gather_ranges(f, rp, k, st, en, ns, &acc[nb]);
				} else if (kern->pair && k + 1 < g->cell_start[c + 1]) {
					kern->pair(f, rp, k, sp, nsp, &acc[nb]);
					k++;
					nb++;
				} else {
					kern->fast(f, rp, k, sp, nsp, &acc[nb]);
				}
				if (++nb >= RULES_BATCH) {
					finish_boids(f, rp, kern->batch, acc, RULES_BATCH, k0, step);
					k0 += RULES_BATCH;
					nb -= RULES_BATCH;
					if (nb > 0)
						acc[0] = acc[RULES_BATCH];
				}
			}
		}
		if (nb > 0)
			finish_boids(f, rp, kern->batch, acc, nb, k0, step);
	}
	return candidates;
}

void brute_step(const struct flock *f, const struct rules_params *rp, uint64_t step)
{
	const size_t n = f->n;
	const uint32_t all_start = 0, all_end = (uint32_t)n;
	size_t k;

	/* O(N^2): worth threads from a few hundred boids */
	#pragma omp parallel for schedule(dynamic, 64) if (n >= f->parallel_min / 16)
	for (k = 0; k < n; k++) {
		struct rules_acc acc;

		gather_ranges(f, rp, k, &all_start, &all_end, 1, &acc);
		finish_boid(f, rp, &acc, k, step);
	}
}

size_t grid_neighbours(const struct grid *g, const struct flock *f,
		       const struct rules_params *rp, size_t k, float r2,
		       uint32_t *out, size_t cap)
{
	uint32_t start[GRID_STENCIL_MAX], end[GRID_STENCIL_MAX];
	size_t c = cell_of_slot(g, f, k), m = 0, j;
	int ns = stencil(g, c, start, end), s;
	float d[3];

	for (s = 0; s < ns; s++)
		for (j = start[s]; j < end[s]; j++)
			if (j != k && pair_delta(rp, f, k, j, d) <= r2) {
				if (m < cap)
					out[m] = f->id[j];
				m++;
			}
	return m;
}

size_t brute_neighbours(const struct flock *f, const struct rules_params *rp,
			size_t k, float r2, uint32_t *out, size_t cap)
{
	size_t m = 0, j;
	float d[3];

	for (j = 0; j < f->n; j++)
		if (j != k && pair_delta(rp, f, k, j, d) <= r2) {
			if (m < cap)
				out[m] = f->id[j];
			m++;
		}
	return m;
}

/* Nearest neighbour by rings of cells around slot k's cell: ring q holds
 * the cells at Chebyshev distance q; a boid beyond ring q is at least
 * q * (smallest cell edge) away, which bounds the search. */
double grid_nearest2(const struct grid *g, const struct flock *f,
		     const struct rules_params *rp, size_t k)
{
	double best = INFINITY, edge = INFINITY;
	long c[3] = {0, 0, 0}, n[3] = {1, 1, 1}, q, qmax = 0;
	int d, dims = f->dims;
	float dd[3];
	size_t j;

	if (g == NULL) {
		for (j = 0; j < f->n; j++)
			if (j != k)
				best = fmin(best, pair_delta(rp, f, k, j, dd));
		return best;
	}
	for (d = 0; d < dims; d++) {
		n[d] = g->n[d];
		c[d] = axis_index(g, d, f->pos[d][k]);
		edge = fmin(edge, g->len[d] / g->n[d]);
		qmax = n[d] > qmax ? n[d] : qmax;
	}
	for (q = 0; q <= qmax; q++) {
		long o[3], lo[3], hi[3];

		if (q > 0 && best <= (double)(q - 1) * (q - 1) * edge * edge)
			break;
		for (d = 0; d < 3; d++) {
			lo[d] = d < dims ? -q : 0;
			hi[d] = d < dims ? q : 0;
		}
		for (o[2] = lo[2]; o[2] <= hi[2]; o[2]++)
			for (o[1] = lo[1]; o[1] <= hi[1]; o[1]++)
				for (o[0] = lo[0]; o[0] <= hi[0]; o[0]++) {
					long cc[3];
					size_t cell;
					int skip = 0;

					/* only the shell of the ring */
					if (labs(o[0]) != q && labs(o[1]) != q && labs(o[2]) != q)
						continue;
					for (d = 0; d < 3; d++) {
						cc[d] = c[d] + o[d];
						if (g->periodic && d < dims) {
							/* each cell once: offsets within one period */
							if (2 * labs(o[d]) > n[d] ||
							    (2 * o[d] == n[d]))
								skip = 1;
							cc[d] = ((cc[d] % n[d]) + n[d]) % n[d];
						} else if (cc[d] < 0 || cc[d] >= n[d]) {
							skip = 1;
						}
					}
					if (skip)
						continue;
					cell = ((size_t)cc[2] * n[1] + (size_t)cc[1]) * n[0] + (size_t)cc[0];
					for (j = g->cell_start[cell]; j < g->cell_start[cell + 1]; j++)
						if (j != k)
							best = fmin(best, pair_delta(rp, f, k, j, dd));
				}
	}
	return best;
}

static uint32_t find_root(uint32_t *parent, uint32_t x)
{
	while (parent[x] != x) {
		parent[x] = parent[parent[x]]; /* path halving */
		x = parent[x];
	}
	return x;
}

static void join(uint32_t *parent, uint32_t a, uint32_t b)
{
	a = find_root(parent, a);
	b = find_root(parent, b);
	if (a != b)
		parent[a < b ? b : a] = a < b ? a : b;
}

size_t grid_groups(const struct grid *g, const struct flock *f,
		   const struct rules_params *rp, float r2, uint32_t *parent)
{
	size_t k, j, groups = 0;
	float dd[3];

	for (k = 0; k < f->n; k++)
		parent[k] = (uint32_t)k;
	for (k = 0; k < f->n; k++) {
		if (g == NULL) {
			for (j = k + 1; j < f->n; j++)
				if (pair_delta(rp, f, k, j, dd) <= r2)
					join(parent, (uint32_t)k, (uint32_t)j);
		} else {
			uint32_t start[GRID_STENCIL_MAX], end[GRID_STENCIL_MAX];
			int ns = stencil(g, cell_of_slot(g, f, k), start, end), s;

			for (s = 0; s < ns; s++)
				for (j = start[s]; j < end[s]; j++)
					if (j > k && pair_delta(rp, f, k, j, dd) <= r2)
						join(parent, (uint32_t)k, (uint32_t)j);
		}
	}
	for (k = 0; k < f->n; k++)
		groups += find_root(parent, (uint32_t)k) == k;
	return groups;
}
