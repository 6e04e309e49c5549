/* grid.c: the uniform grid, the spatial index of the neighbour search.
 * Each step the flock is sorted into cell order by a parallel counting sort
 * (boids of a cell by id); the step driver (step.c) then visits each
 * boid's stencil of cells, and the metrics query nearest neighbours and
 * groups here. Threads split the boids and each writes only its own slots:
 * no atomics. */
#include "config.h"
#include "grid.h"
#include "detmath.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

/* The gather at the end of a build (below) stores past the cache, a whole
 * line at a time: each thread fills 64 bytes of every destination array on
 * its stack and writes the line with x86's non-temporal MOVNTDQ. The next
 * read of it is the neighbour loop's, over arrays (20 MB at a million boids
 * in 2D) larger than this cache level, and a plain store reads the line
 * before writing it (write-allocate), a third of the gather's traffic.
 * Values stored past the cache one by one (MOVNTI, 4 bytes) depend on the
 * CPU's write-combining buffers to make lines of them: measured on a Zen 5
 * VM 0.126 -> 0.106 s for the build against plain stores, on a Zen 4 VM 4x
 * slower than plain stores, where whole lines are the fastest of the three
 * (docs/PERFORMANCE.md, 2026-12-04; the lines are not measured on a Zen 5
 * yet). The bits
 * are moved, not computed, so results are the same; elsewhere the stores
 * are plain. Such stores are weakly ordered: grid_stream_fence orders
 * them before the end of the parallel region makes them visible to other
 * threads. */
#define GRID_LINE 16 /* values of 4 bytes in a line of 64 */
static inline int grid_line_aligned(const void *p)
{
	return ((uintptr_t)p & 63) == 0;
}
#ifdef __SSE2__
#include <emmintrin.h>
/* 64 bytes, src and dst aligned to 64 */
static inline void grid_stream_line(void *dst, const void *src)
{
	const __m128i *in = src;
	__m128i *out = dst;

	_mm_stream_si128(out, _mm_load_si128(in));
	_mm_stream_si128(out + 1, _mm_load_si128(in + 1));
	_mm_stream_si128(out + 2, _mm_load_si128(in + 2));
	_mm_stream_si128(out + 3, _mm_load_si128(in + 3));
}
static inline void grid_stream_fence(void)
{
	_mm_sfence();
}
#else
static inline void grid_stream_line(void *dst, const void *src)
{
	memcpy(dst, src, 64);
}
static inline void grid_stream_fence(void)
{
}
#endif

int grid_init(struct grid *g, const struct scenario *sc, size_t n, struct util_err *err)
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
	float emin[3], emax[3];
	int d;

	if (!g->periodic) {
		for (d = 0; d < g->dims; d++) {
			float mn = INFINITY, mx = -INFINITY;
			const float *p = f->pos[d];
			size_t i, n = f->n;

			/* min and max are exact, so this reduction cannot depend
			 * on the thread count, nor, through reduce.h, on how the
			 * flock is split. */
			#pragma omp parallel for reduction(min:mn) reduction(max:mx) schedule(static) \
				if (n >= f->parallel_min)
			for (i = 0; i < n; i++) {
				mn = p[i] < mn ? p[i] : mn;
				mx = p[i] > mx ? p[i] : mx;
			}
			emin[d] = mn;
			emax[d] = mx;
		}
		reduce_minmax_f32(f->reduce, emin, emax, g->dims);
	}
	for (d = 0; d < g->dims; d++) {
		double lo, hi;

		if (g->periodic) {
			lo = g->box_lo[d];
			hi = g->box_hi[d];
		} else if (emin[d] <= emax[d]) {
			lo = emin[d];
			hi = emax[d];
		} else { /* no boid anywhere */
			lo = hi = 0.0;
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

/* Sorts one cell's slots by the ids they hold. Boids that stayed in their
 * cell are already in order, so the final gap (insertion sort) is nearly
 * linear; the larger gaps (a Shell sort: Ciura's sequence, extended by
 * factors of 2.25) keep the dense cells of a clustered flock from going
 * quadratic; cells of at most 16 take the final gap alone, and of two
 * to eight, most cells, a network (below). Ids are unique, so the result
 * does not depend on the method. */
static void sort_cell(uint32_t *k, size_t m, const uint32_t *id)
{
	static const size_t GAPS[] = {
		5814680, 2584303, 1148579, 510479, 226880, 100836, 44816, 19918, 8852,
		3934, 1750, 701, 301, 132, 57, 23, 10, 4, 1};
	const size_t ngaps = sizeof GAPS / sizeof GAPS[0];
	size_t gi, i, j;

	/* Two to eight boids, most cells: a sorting network on (id, slot)
	 * pairs, padded with the largest value, without a branch on the data
	 * (Knuth, TAOCP vol. 3, 5.3.4: 19 comparators for 8; checked on every
	 * 0-1 input), unrolled so that the pairs stay in registers and each
	 * comparator is two conditional moves. About half the cells have an
	 * entrant each step, too irregular for an insertion sort's branches:
	 * pinned, 2D 1M, 11 steps, the grid build 0.204 -> 0.194 s on one
	 * thread, 0.130 -> 0.125 s on two (docs/PERFORMANCE.md). */
	if (m >= 2 && m <= 8) {
		uint64_t e0, e1, e2, e3, e4, e5, e6, e7;

#define GRID_CE(a, b)                                            \
	do {                                                     \
		const uint64_t lo_ = a < b ? a : b, hi_ = a < b ? b : a; \
		a = lo_;                                         \
		b = hi_;                                         \
	} while (0)
#define GRID_E(i) (i < m ? (uint64_t)id[k[i]] << 32 | k[i] : UINT64_MAX)
		e0 = GRID_E(0), e1 = GRID_E(1), e2 = GRID_E(2), e3 = GRID_E(3);
		e4 = GRID_E(4), e5 = GRID_E(5), e6 = GRID_E(6), e7 = GRID_E(7);
		GRID_CE(e0, e2); GRID_CE(e1, e3); GRID_CE(e4, e6); GRID_CE(e5, e7);
		GRID_CE(e0, e4); GRID_CE(e1, e5); GRID_CE(e2, e6); GRID_CE(e3, e7);
		GRID_CE(e0, e1); GRID_CE(e2, e3); GRID_CE(e4, e5); GRID_CE(e6, e7);
		GRID_CE(e2, e4); GRID_CE(e3, e5); GRID_CE(e1, e4); GRID_CE(e3, e6);
		GRID_CE(e1, e2); GRID_CE(e3, e4); GRID_CE(e5, e6);
#undef GRID_E
#undef GRID_CE
		{
			const uint64_t e[8] = {e0, e1, e2, e3, e4, e5, e6, e7};

			for (i = 0; i < m; i++)
				k[i] = (uint32_t)e[i];
		}
		return;
	}
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

int grid_choose_reach(struct grid *g, uint64_t crowd, uint64_t n)
{
	/* Not where the cells of r/2 would not fit max_cells: the larger cells
	 * that would fit make reach 2 see farther than reach 1 (a large 3D
	 * box). */
	if (crowd > (uint64_t)GRID_CROWDED * n) {
		g->reach = 2;
		if (choose_cells(g)) {
			g->reach = 1;
			choose_cells(g);
			return 0;
		}
		return 1;
	}
	return 0;
}

void grid_geometry(struct grid *g, const struct flock *f)
{
	g->reach = 1;
	choose_extent(g, f);
	choose_cells(g);
}

/* plan: choose the geometry (grid_build), or keep the one set (grid_sort).
 * cells: NULL, or the nr ranges of cells (ascending, disjoint) that hold
 * every boid: only those are counted, scanned and sorted. */
static void build(struct grid *g, struct flock *f, int plan, const size_t (*cells)[2], int nr)
{
	const size_t n = f->n;
	const int dims = f->dims;
	uint64_t crowd = 0;
	int redo = 0;

	if (plan)
		grid_geometry(g, f);

	#pragma omp parallel num_threads(g->threads) if (n >= f->parallel_min)
	{
		int t = 0, nt = 1, d, pass, r;
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
			if (cells == NULL)
				memset(h, 0, nc * sizeof *h);
			for (r = 0; cells && r < nr; r++)
				memset(h + cells[r][0], 0, (cells[r][1] - cells[r][0]) * sizeof *h);
			for (i = lo; i < hi; i++)
				h[grid_cell(g, f, i)]++;
			#pragma omp barrier
			if (pass == 1 || !plan)
				break;
			/* sum of squared counts: an integer, the same in any order (and,
			 * through reduce.h, for a flock split into parts that hold whole
			 * cells) */
			#pragma omp for schedule(static) reduction(+:crowd)
			for (c = 0; c < nc; c++) {
				uint64_t m = 0;
				int tt;

				for (tt = 0; tt < nt; tt++)
					m += g->hist[(size_t)tt * nc + c];
				crowd += m * m;
			}
			/* master, not single: the reduction may be a call into MPI,
			 * which a funneled process makes from its main thread only */
			#pragma omp master
			{
				uint64_t sums[2] = {crowd, n}; /* over the whole flock */

				reduce_sum_u64(f->reduce, sums, 2);
				redo = grid_choose_reach(g, sums[0], sums[1]);
			}
			#pragma omp barrier
			if (!redo)
				break;
		}
		/* Given ranges, one thread scans them: they are a slab's cells,
		 * few against its boids, and the cells between them stay as they
		 * were (no boid, and no step reads them). cell_start just past a
		 * range is set, for the last cell's end. */
		if (cells) {
			#pragma omp single
			{
				uint32_t start = 0;
				int tt;

				for (r = 0; r < nr; r++) {
					for (c = cells[r][0]; c < cells[r][1]; c++) {
						g->cell_start[c] = start;
						for (tt = 0; tt < nt; tt++) {
							uint32_t cnt = g->hist[(size_t)tt * g->ncells + c];

							g->hist[(size_t)tt * g->ncells + c] = start;
							start += cnt;
						}
					}
					g->cell_start[cells[r][1]] = start;
				}
			}
		}
		/* The exclusive scan of the counts, cell by cell and within a
		 * cell thread by thread, in parallel: each thread sums its block
		 * of cells, one thread scans the blocks' sums, and each thread
		 * scans its block from there. Integers: the same in any order. */
		else {
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
			uint32_t dest = h[grid_cell(g, f, i)]++;

			g->key[dest] = (uint32_t)i;
		}
		#pragma omp barrier
		if (cells == NULL) {
			#pragma omp for schedule(dynamic, 256)
			for (c = 0; c < g->ncells; c++)
				sort_cell(g->key + g->cell_start[c],
					  g->cell_start[c + 1] - g->cell_start[c], f->id);
		}
		for (r = 0; cells && r < nr; r++) {
			#pragma omp for schedule(dynamic, 256)
			for (c = cells[r][0]; c < cells[r][1]; c++)
				sort_cell(g->key + g->cell_start[c],
					  g->cell_start[c + 1] - g->cell_start[c], f->id);
		}
		/* The arrays in locals, so that the stores, which could
		 * alias struct flock, do not make the loop reload them. */
		{
			const uint32_t *restrict key = g->key, *restrict id = f->id;
			uint32_t *restrict id_next = f->id_next;
			const float *restrict p[3], *restrict v[3];
			float *restrict pn[3], *restrict vn[3];
			const size_t nl = (n + GRID_LINE - 1) / GRID_LINE;
			size_t b;
			int lines = grid_line_aligned(id_next);

			for (d = 0; d < 3; d++) {
				p[d] = f->pos[d < dims ? d : 0];
				v[d] = f->vel[d < dims ? d : 0];
				pn[d] = f->pos_next[d < dims ? d : 0];
				vn[d] = f->vel_next[d < dims ? d : 0];
			}
			for (d = 0; d < dims; d++)
				lines &= grid_line_aligned(pn[d]) && grid_line_aligned(vn[d]);
			/* nowait: nothing in this region reads what it writes;
			 * the region's end is the barrier, after the fence */
			#pragma omp for schedule(static) nowait
			for (b = 0; b < nl; b++) {
				const size_t i0 = b * GRID_LINE;
				_Alignas(64) float tp[3][GRID_LINE], tv[3][GRID_LINE];
				_Alignas(64) uint32_t ti[GRID_LINE];
				size_t j;

				/* the flock's last, partial line (and every line,
				 * should an array not start on one) */
				if (n - i0 < GRID_LINE || !lines) {
					for (i = i0; i < n && i < i0 + GRID_LINE; i++) {
						const size_t src = key[i];

						for (d = 0; d < dims; d++) {
							pn[d][i] = p[d][src];
							vn[d][i] = v[d][src];
						}
						id_next[i] = id[src];
					}
					continue;
				}
				/* (in 2D, index 2 reads axis 0 again, unused) */
				for (j = 0; j < GRID_LINE; j++) {
					const size_t src = key[i0 + j];

					tp[0][j] = p[0][src];
					tp[1][j] = p[1][src];
					tp[2][j] = p[2][src];
					tv[0][j] = v[0][src];
					tv[1][j] = v[1][src];
					tv[2][j] = v[2][src];
					ti[j] = id[src];
				}
				for (d = 0; d < dims; d++) {
					grid_stream_line(&pn[d][i0], tp[d]);
					grid_stream_line(&vn[d][i0], tv[d]);
				}
				grid_stream_line(&id_next[i0], ti);
			}
		}
		/* A loop of its own, so the loop above is the same without. */
		if (f->has_hue) {
			#pragma omp for schedule(static) nowait
			for (i = 0; i < n; i++) {
				size_t src = g->key[i];

				f->hue_next[0][i] = f->hue[0][src];
				f->hue_next[1][i] = f->hue[1][src];
				if (f->hue_fields == 3)
					f->hue_next[2][i] = f->hue[2][src];
			}
		}
		grid_stream_fence();
	}
	flock_swap(f, 1);
}

void grid_build(struct grid *g, struct flock *f)
{
	build(g, f, 1, NULL, 0);
}

void grid_sort(struct grid *g, struct flock *f, const size_t (*cells)[2], int nr)
{
	build(g, f, 0, cells, nr);
}

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

int grid_stencil(const struct grid *g, size_t c, uint32_t start[GRID_STENCIL_MAX],
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

size_t grid_neighbours(const struct grid *g, const struct flock *f,
		       const struct rules_params *rp, size_t k, float r2,
		       uint32_t *out, size_t cap)
{
	uint32_t start[GRID_STENCIL_MAX], end[GRID_STENCIL_MAX];
	size_t c = grid_cell(g, f, k), m = 0, j;
	int ns = grid_stencil(g, c, start, end), s;
	float d[3];

	for (s = 0; s < ns; s++)
		for (j = start[s]; j < end[s]; j++)
			if (j != k && grid_pair_delta(rp, f, k, j, d) <= r2) {
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
		if (j != k && grid_pair_delta(rp, f, k, j, d) <= r2) {
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
				best = detmath_fmin(best, grid_pair_delta(rp, f, k, j, dd));
		return best;
	}
	for (d = 0; d < dims; d++) {
		n[d] = g->n[d];
		c[d] = grid_axis(g, d, f->pos[d][k]);
		edge = detmath_fmin(edge, g->len[d] / g->n[d]);
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
							best = detmath_fmin(best, grid_pair_delta(rp, f, k, j, dd));
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
				if (grid_pair_delta(rp, f, k, j, dd) <= r2)
					join(parent, (uint32_t)k, (uint32_t)j);
		} else {
			uint32_t start[GRID_STENCIL_MAX], end[GRID_STENCIL_MAX];
			int ns = grid_stencil(g, grid_cell(g, f, k), start, end), s;

			for (s = 0; s < ns; s++)
				for (j = start[s]; j < end[s]; j++)
					if (j > k && grid_pair_delta(rp, f, k, j, dd) <= r2)
						join(parent, (uint32_t)k, (uint32_t)j);
		}
	}
	for (k = 0; k < f->n; k++)
		groups += find_root(parent, (uint32_t)k) == k;
	return groups;
}
