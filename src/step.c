/* step.c: the step driver: for every boid, the neighbour sums over its
 * stencil of the grid's cells (grid.c), or over every boid (brute force,
 * the oracle), fused with its update (rules.c), with the loops of the SIMD
 * level chosen. Threads split the cells and each writes only its own boids:
 * no atomics, and each boid's sums are its own, in an order fixed by the
 * cells' contents, so the result does not depend on the thread count. */
#include "config.h"
#include "step.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

/* On x86-64 the neighbour loop is compiled three times, for the baseline,
 * for AVX2 (with BMI1/2 and FMA) and for AVX-512 (F, BW, CD, DQ, VL, with
 * the same: 32 vector registers and mask registers), and the caller's
 * context picks the level (ctx.h: the most capable the CPU can run, unless
 * it asks for a lower one). The four lanes are in the source and
 * contraction is off (-ffp-contract=off), so all do the same IEEE
 * operations and give the same bits; determinism.test compares them. */
#if defined(__x86_64__) && defined(__GNUC__) && defined(__has_attribute)
#if __has_attribute(target)
#define GRID_AVX512 1
#define GRID_AVX512_TARGET \
	__attribute__((target("avx512f,avx512bw,avx512cd,avx512dq,avx512vl,avx2,bmi,bmi2,fma")))
#define GRID_AVX2_TARGET __attribute__((target("avx2,bmi,bmi2,fma")))
#include <immintrin.h>
#endif
#endif

/* The update of RULES_BATCH boids at a time (rules_update_batch_*), at
 * the SIMD levels where it pays. */
typedef int batch_fn(const struct rules_params *p, const struct rules_acc acc[RULES_BATCH],
		     int nb, size_t k, const uint32_t *id, uint64_t step, const float *const pos[3],
		     const float *const vel[3], float *const pos_out[3], float *const vel_out[3]);

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
	    update_batch(rp, acc, nb, k, f->id, step, (const float *const *)f->pos,
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
		 const uint32_t cc[3], struct span sp[GRID_STENCIL_MAX])
{
	const int reach = g->reach;
	uint32_t cell[3][2 * GRID_REACH_MAX + 1];
	uint32_t run_first[2 * GRID_REACH_MAX + 1], run_last[2 * GRID_REACH_MAX + 1];
	float corr[3][2 * GRID_REACH_MAX + 1], run_corr[2 * GRID_REACH_MAX + 1];
	int cnt[3], d, a, b, e, o, r, nrun = 0, m = 0;

	/* A cell at least reach cells from every face (nearly all of a large
	 * grid): each row of the stencil is one run with no correction, the
	 * spans the general path below makes for it, at a fraction of the
	 * cost (that path was most of this driver's 9% of a 2D run). */
	if (cc[0] >= (uint32_t)reach && cc[0] + (uint32_t)reach < g->n[0] &&
	    cc[1] >= (uint32_t)reach && cc[1] + (uint32_t)reach < g->n[1] &&
	    (g->dims == 2 || (cc[2] >= (uint32_t)reach && cc[2] + (uint32_t)reach < g->n[2]))) {
		const int rz = g->dims == 3 ? reach : 0;
		const size_t n0 = g->n[0], n01 = n0 * g->n[1];

		for (a = -rz; a <= rz; a++)
			for (b = -reach; b <= reach; b++) {
				const size_t row = c + (size_t)((ptrdiff_t)a * (ptrdiff_t)n01 +
								(ptrdiff_t)b * (ptrdiff_t)n0);

				sp[m].start = g->cell_start[row - (size_t)reach];
				sp[m].end = g->cell_start[row + (size_t)reach + 1];
				sp[m].corr[0] = sp[m].corr[1] = sp[m].corr[2] = 0.0f;
				m++;
			}
		return m;
	}
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
gather_spans(const struct flock *f, const struct rules_params *rp, size_t k, int nb,
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

	(void)nb; /* one boid: the loops' common signature */
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
	rules_lanes_reduce(ln, DIMS, HUE, acc);
}

#ifdef GRID_AVX512
/* NB boids of one cell, slots k .. k + NB - 1, from their spans, as
 * gather_spans does each: the candidates are loaded once into the NB
 * quarters (halves) of vectors of NB x RULES_LANES lanes, and each does
 * the one-boid loop's operations, so every sum has the same bits as
 * gather_spans'. Only the first nb (<= NB) boids are real: the lanes of
 * the others repeat the last real one, and their sums are not used. */
#define GATHER_SPANS_XN(NB, SUF, BCAST, TARGET)                                            \
	TARGET static inline __attribute__((always_inline)) void gather_spans_##SUF(         \
		const struct flock *f, const struct rules_params *rp, size_t k, int nb,     \
		const struct span *sp, int nsp, const int DIMS, const enum model_kind MODEL, \
		const int HUE, struct rules_acc acc[NB])                                    \
	{                                                                                   \
		const float *px = f->pos[0], *py = f->pos[1], *pz = f->pos[DIMS == 3 ? 2 : 1]; \
		const float *vx = f->vel[0], *vy = f->vel[1], *vz = f->vel[DIMS == 3 ? 2 : 1]; \
		const float *hc = f->hue[0], *hs = f->hue[1], *hr = f->hue[2];               \
		const size_t L = RULES_LANES;                                               \
		rules_vf_##SUF xi, yi, zi;                                                  \
		rules_vi_##SUF lane, self;                                                  \
		struct rules_lanes_##SUF ln;                                                \
		struct rules_self_##SUF sf;                                                 \
		float vel[3 * NB];                                                          \
		int s, l;                                                                   \
                                                                                            \
		for (l = 0; l < NB; l++) {                                                  \
			const size_t b = k + (size_t)(l < nb ? l : nb - 1);                 \
                                                                                            \
			vel[3 * l] = vx[b];                                                 \
			vel[3 * l + 1] = vy[b];                                             \
			vel[3 * l + 2] = vz[b];                                             \
		}                                                                           \
		for (l = 0; l < NB * RULES_LANES; l++) {                                    \
			const int o = l / RULES_LANES < nb ? l / RULES_LANES : nb - 1;      \
                                                                                            \
			xi[l] = px[k + (size_t)o];                                          \
			yi[l] = py[k + (size_t)o];                                          \
			zi[l] = pz[k + (size_t)o];                                          \
			lane[l] = l % RULES_LANES;                                          \
			self[l] = (int32_t)o;                                               \
		}                                                                           \
		rules_self_init_##SUF(&sf, rp, DIMS, vel);                                  \
		rules_lanes_init_##SUF(&ln);                                                \
		for (s = 0; s < nsp; s++) {                                                 \
			const float c0 = sp[s].corr[0], c1 = sp[s].corr[1], c2 = sp[s].corr[2]; \
			const size_t end = sp[s].end;                                       \
			size_t j0;                                                          \
                                                                                            \
			for (j0 = sp[s].start; j0 < end; j0 += RULES_LANES) {               \
				/* lanes past the span's end, and each boid itself: the  \
				 * boid of lane l is slot k + self[l], so the lane is    \
				 * its own where j0 + l % RULES_LANES is that slot */    \
				const int m = end - j0 < L ? (int)(end - j0) : RULES_LANES; \
				const int64_t dk = (int64_t)k - (int64_t)j0;                \
				const int32_t off = dk < -NB * RULES_LANES ? -NB * RULES_LANES : \
						    dk > NB * RULES_LANES ? NB * RULES_LANES :   \
									   (int32_t)dk;  \
				struct rules_cand_##SUF cd;                                 \
				rules_vf_##SUF x, y, z;                                     \
                                                                                            \
				x = BCAST(px);                                              \
				y = BCAST(py);                                              \
				cd.vx = BCAST(vx);                                          \
				cd.vy = BCAST(vy);                                          \
				cd.dx = (x - xi) + c0;                                      \
				cd.dy = (y - yi) + c1;                                      \
				cd.d2 = cd.dx * cd.dx + cd.dy * cd.dy;                      \
				if (DIMS == 3) {                                            \
					z = BCAST(pz);                                      \
					cd.vz = BCAST(vz);                                  \
					cd.dz = (z - zi) + c2;                              \
					cd.d2 = cd.d2 + cd.dz * cd.dz;                      \
				}                                                           \
				if (HUE) {                                                  \
					cd.hc = BCAST(hc);                                  \
					cd.hs = BCAST(hs);                                  \
					if (rp->hue_spin)                                   \
						cd.hr = BCAST(hr);                          \
				}                                                           \
				cd.valid = (lane < m) & (lane != self + off);               \
				rules_lanes_add_##SUF(&ln, rp, MODEL, DIMS, HUE, &cd, &sf); \
			}                                                                   \
		}                                                                           \
		rules_lanes_reduce_##SUF(ln, DIMS, HUE, acc);                              \
	}

/* RULES_LANES candidates from slot j0 of src, in every half (quarter). */
_Static_assert(RULES_LANES == 4, "BCAST_X2 and BCAST_X4 are written for 4 lanes");
/* (one vbroadcastf128 from memory: a shufflevector of a load was a load
 * and a vperm2f128 a field, and AVX2's neighbours and update 9% slower) */
#define BCAST_X2(src) ((rules_vf_x2)_mm256_broadcast_ps((const __m128 *)((src) + j0)))
/* (gcc 12 builds the four-fold shuffle through the stack) */
#define BCAST_X4(src) ((rules_vf_x4)_mm512_broadcast_f32x4(_mm_loadu_ps((src) + j0)))
GATHER_SPANS_XN(2, x2, BCAST_X2, GRID_AVX2_TARGET)
GATHER_SPANS_XN(4, x4, BCAST_X4, GRID_AVX512_TARGET)
#undef BCAST_X2
#undef BCAST_X4
#undef GATHER_SPANS_XN
#endif

#ifdef GRID_AVX512
/* The reduction of kernel_quad and kernel_pair, rules_lanes_reduce's
 * in vectors: each boid's four lanes added lane 0 first ((((0 + l0) + l1)
 * + l2) + l3, the same order), with in-lane permutes; the counts, integers,
 * in any order. sum[i] holds sep 0-2, ali 0-2, coh 0-2; cnt[i] n_sep,
 * n_ali, n_coh as the generic loop keeps them (minus one a lane). The
 * generic reduction read its sums back lane by lane: about a fifth of a
 * quad's time in a 2D run. */
#define KERNEL_REDUCE(W, VF, VI, PRE, CAST_PS, CAST_SI)                              \
	do {                                                                          \
		float fs_[9][W];                                                      \
		int32_t is_[3][W];                                                    \
		int i_, b_;                                                           \
                                                                                      \
		for (i_ = 0; i_ < 9; i_++) {                                          \
			VF v_ = sum[i_], s_ = PRE##_add_ps(PRE##_setzero_ps(),          \
							  PRE##_permute_ps(v_, 0x00));  \
                                                                                      \
			s_ = PRE##_add_ps(s_, PRE##_permute_ps(v_, 0x55));             \
			s_ = PRE##_add_ps(s_, PRE##_permute_ps(v_, 0xaa));             \
			s_ = PRE##_add_ps(s_, PRE##_permute_ps(v_, 0xff));             \
			PRE##_storeu_ps(fs_[i_], s_);                                 \
		}                                                                     \
		for (i_ = 0; i_ < 3; i_++) {                                          \
			VI v_ = cnt[i_], s_;                                          \
                                                                                      \
			s_ = PRE##_add_epi32(v_, CAST_SI(PRE##_permute_ps(CAST_PS(v_), 0x4e))); \
			s_ = PRE##_add_epi32(s_, CAST_SI(PRE##_permute_ps(CAST_PS(s_), 0xb1))); \
			memcpy(is_[i_], &s_, sizeof s_);                              \
		}                                                                     \
		for (b_ = 0; b_ < W / RULES_LANES; b_++) {                             \
			struct rules_acc *a_ = &acc[b_];                              \
                                                                                      \
			rules_acc_init(a_);                                           \
			for (i_ = 0; i_ < DIMS; i_++) {                               \
				a_->sep[i_] = fs_[i_][RULES_LANES * b_];              \
				a_->ali[i_] = fs_[3 + i_][RULES_LANES * b_];          \
				a_->coh[i_] = fs_[6 + i_][RULES_LANES * b_];          \
			}                                                             \
			a_->n_sep = 0u - (uint32_t)is_[0][RULES_LANES * b_];          \
			a_->n_ali = 0u - (uint32_t)is_[1][RULES_LANES * b_];          \
			a_->n_coh = 0u - (uint32_t)is_[2][RULES_LANES * b_];          \
		}                                                                     \
	} while (0)

/* gather_spans_x4 for a model without a hue (first written for Reynolds'
 * model seeing all round, the default and the bench's; see MODEL below),
 * with AVX-512's masked adds: a sum's
 * lanes whose mask is clear are left as they are, where the generic code
 * adds the +0 of a select. The two agree bit for bit: a lane's sum starts
 * at +0 and an IEEE sum is -0 only from -0 + -0, so it is never -0, and
 * s + (+0) = s, s - (+0) = s for every other s. The rest is the same
 * operations in the same order (d, d2, the masks, 1/d2, then each sum),
 * and the same reduction. Masked, each sum costs its add alone: no mask
 * turned into a vector and no AND; and a lane's validity comes from its
 * slot, counted up by 4, not from scalar bounds each group. The 2D loop
 * body: 61 instructions in gather_spans_x4, 39 here (gcc 12; six of them
 * register copies around the masked integer subtractions).
 * SAME_AC: alignment and cohesion have one radius (the defaults, and most
 * scenarios), so their masks are one and so are their counts: a compare
 * and a count fewer a group, the same bits. Pinned, one thread, 1M,
 * neighbours and update: 2D 0.420-0.435 -> 0.408-0.414 s, 3D 0.546-0.668
 * -> 0.529-0.565 s; at the AVX2 level (kernel_pair) 2D 0.762-0.779 ->
 * 0.722-0.738 s, 3D 1.077-1.202 -> 1.021-1.027 s (docs/PERFORMANCE.md).
 * MODEL: Reynolds, or another model's masks and sums (rules_lanes.h) in
 * the same loop: simple and blend (separation sums d unweighted, with no
 * test of d2 > 0), accelerate (d / |d|), inertia (one mask, |d| < r_ali,
 * and d (1/max(|d|, 1e-6) - 1/r_ali)), slerp (d within r_coh, d within
 * r_sep, the speeds |v_j|), Vicsek (unit headings; UNIFORM: of one
 * speed, v_j / speed.max) and Couzin (three exclusive zones, unit
 * directions and headings). FOV: a field of view narrower than all round,
 * rules_lanes_add's test of it in the same operations, boids standing
 * still seeing all round. Each the generic loop's operations in the same
 * order, so the same bits. Pinned, one thread, 1e5 boids, neighbours and
 * update, generic loop -> kernel: 2D 1.16x (Vicsek, whose update is
 * scalar) to 1.57x (simple), 3D 1.2x to 1.6x (docs/PERFORMANCE.md). */
#define RQ_PLAIN(M) ((M) == MODEL_SIMPLE || (M) == MODEL_BLEND)
/* the models whose separation sums d itself */
#define RQ_UNIT_W(M) (RQ_PLAIN(M) || (M) == MODEL_SLERP || (M) == MODEL_VICSEK)
/* the models whose alignment sums unit headings */
#define RQ_HEADING(M) ((M) == MODEL_VICSEK || (M) == MODEL_COUZIN)
/* The kernel itself is written once, in step_kernel.h, for both levels. */
#define KN_(name) name##_quad
#define KN_TARGET GRID_AVX512_TARGET
#define KN_NB 4
#define KN_VF __m512
#define KN_VI __m512i
#define KN_M __mmask16
#define KN_SET1(x) _mm512_set1_ps(x)
#define KN_IZERO _mm512_setzero_si512()
#define KN_ADD _mm512_add_ps
#define KN_SUB _mm512_sub_ps
#define KN_MUL _mm512_mul_ps
#define KN_DIV _mm512_div_ps
#define KN_SQRT _mm512_sqrt_ps
#define KN_MAX _mm512_max_ps
#define KN_BCAST(p) _mm512_broadcast_f32x4(_mm_loadu_ps((p) + j0))
#define KN_OWN(p) _mm512_permutexvar_ps(self, _mm512_broadcast_f32x4(_mm_loadu_ps((p) + k)))
#define KN_CMP(m, a, b, P) _mm512_mask_cmp_ps_mask(m, a, b, P)
#define KN_CMPU(a, b, P) _mm512_cmp_ps_mask(a, b, P)
#define KN_MAND(a, b) ((__mmask16)((a) & (b)))
#define KN_MOR(a, b) ((__mmask16)((a) | (b)))
#define KN_MNONE ((__mmask16)0)
#define KN_MALL ((__mmask16)0xffff)
#define KN_MADD(s, m, t) _mm512_mask_add_ps(s, m, s, t)
#define KN_MSUB(s, m, t) _mm512_mask_sub_ps(s, m, s, t)
#define KN_MDIVZ(m, a, b) _mm512_maskz_div_ps(m, a, b)
/* the generic loop's counts: minus one a lane (its masks are -1) */
#define KN_COUNT(n, m) _mm512_mask_sub_epi32(n, m, n, _mm512_set1_epi32(1))
/* boid b of the quad in lanes 4b .. 4b+3; past nb, the last real one */
#define KN_SELF_VARS                                                                   \
	const __m512i lane = _mm512_set_epi32(3, 2, 1, 0, 3, 2, 1, 0, 3, 2, 1, 0, 3, 2, 1, 0); \
	const int o1 = nb > 1 ? 1 : 0, o2 = nb > 2 ? 2 : nb - 1, o3 = nb > 3 ? 3 : nb - 1; \
	const __m512i self = _mm512_set_epi32(o3, o3, o3, o3, o2, o2, o2, o2, o1, o1, o1,  \
					      o1, 0, 0, 0, 0);                           \
	const __m512i kself = _mm512_add_epi32(_mm512_set1_epi32((int32_t)k), self);     \
	const __m512i four = _mm512_set1_epi32(RULES_LANES)
/* the slot of each lane, j0 + l mod 4: a lane is valid below the span's
 * end and where it is not its boid's own slot (lane < m and lane != self +
 * off in gather_spans_x4; slots fit in 32 bits, as cell_start's do) */
#define KN_SPAN_VARS                                                                   \
	const __m512i endv = _mm512_set1_epi32((int32_t)end);                          \
	__m512i jv = _mm512_add_epi32(_mm512_set1_epi32((int32_t)sp[s].start), lane)
#define KN_VALID (_mm512_cmplt_epu32_mask(jv, endv) & _mm512_cmpneq_epi32_mask(jv, kself))
#define KN_NEXT (jv = _mm512_add_epi32(jv, four))
#define KN_REDUCE KERNEL_REDUCE(16, __m512, __m512i, _mm512, _mm512_castsi512_ps,      \
				_mm512_castps_si512)
#include "step_kernel.h"

/* kernel_quad's loop for AVX2, two boids in 8 lanes (gather_spans_x2's
 * operations for the same case). AVX2 has no mask registers, so each sum
 * keeps the generic AND of its mask; what is saved is the scalar bounds
 * of each group: a lane's validity comes from its slot, counted up by 4,
 * compared as unsigned through a bias of 2^31 (AVX2 compares signed). */
#define KN_(name) name##_pair
#define KN_TARGET GRID_AVX2_TARGET
#define KN_NB 2
#define KN_VF __m256
#define KN_VI __m256i
#define KN_M __m256
#define KN_SET1(x) _mm256_set1_ps(x)
#define KN_IZERO _mm256_setzero_si256()
#define KN_ADD _mm256_add_ps
#define KN_SUB _mm256_sub_ps
#define KN_MUL _mm256_mul_ps
#define KN_DIV _mm256_div_ps
#define KN_SQRT _mm256_sqrt_ps
#define KN_MAX _mm256_max_ps
#define KN_BCAST(p) _mm256_broadcast_ps((const __m128 *)((p) + j0))
#define KN_OWN(p) _mm256_permutevar8x32_ps(_mm256_castps128_ps256(_mm_loadu_ps((p) + k)), self)
#define KN_CMP(m, a, b, P) _mm256_and_ps(m, _mm256_cmp_ps(a, b, P))
#define KN_CMPU(a, b, P) _mm256_cmp_ps(a, b, P)
#define KN_MAND _mm256_and_ps
#define KN_MOR _mm256_or_ps
#define KN_MNONE _mm256_setzero_ps()
#define KN_MALL _mm256_castsi256_ps(_mm256_set1_epi32(-1))
#define KN_MADD(s, m, t) _mm256_add_ps(s, _mm256_and_ps(m, t))
#define KN_MSUB(s, m, t) _mm256_sub_ps(s, _mm256_and_ps(m, t))
#define KN_MDIVZ(m, a, b) _mm256_and_ps(m, _mm256_div_ps(a, b))
/* the generic loop's counts: its masks are -1 a lane */
#define KN_COUNT(n, m) _mm256_add_epi32(n, _mm256_castps_si256(m))
#define KN_SELF_VARS                                                                   \
	const __m256i bias = _mm256_set1_epi32(INT32_MIN);                             \
	const __m256i four = _mm256_set1_epi32(RULES_LANES);                           \
	const __m256i lane = _mm256_set_epi32(3, 2, 1, 0, 3, 2, 1, 0);                 \
	const int o1 = nb > 1 ? 1 : 0;                                                 \
	const __m256i self = _mm256_set_epi32(o1, o1, o1, o1, 0, 0, 0, 0);             \
	const __m256i kself = _mm256_xor_si256(_mm256_add_epi32(_mm256_set1_epi32((int32_t)k), \
								 self), bias)
#define KN_SPAN_VARS                                                                   \
	const __m256i endv = _mm256_xor_si256(_mm256_set1_epi32((int32_t)end), bias);  \
	__m256i jv = _mm256_xor_si256(_mm256_add_epi32(_mm256_set1_epi32(              \
		(int32_t)sp[s].start), lane), bias)
#define KN_VALID _mm256_castsi256_ps(_mm256_andnot_si256(_mm256_cmpeq_epi32(jv, kself),  \
							 _mm256_cmpgt_epi32(endv, jv)))
#define KN_NEXT (jv = _mm256_add_epi32(jv, four))
#define KN_REDUCE KERNEL_REDUCE(8, __m256, __m256i, _mm256, _mm256_castsi256_ps,       \
				_mm256_castps_si256)
#include "step_kernel.h"
#undef KERNEL_REDUCE
#undef RQ_PLAIN
#undef RQ_UNIT_W
#undef RQ_HEADING
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
#define GATHER(D, M) (rp->has_hue ? SPANS(f, rp, k, nb, sp, nsp, D, M, 1, acc) : \
				    SPANS(f, rp, k, nb, sp, nsp, D, M, 0, acc))

/* The neighbourhoods of nb boids from slot k, into acc[0 .. nb - 1] (a
 * loop of more boids than nb writes its other sums after them). */
typedef void gather_fn(const struct flock *f, const struct rules_params *rp, size_t k,
		       int nb, const struct span *sp, int nsp, struct rules_acc *acc);

/* A neighbour loop NAME for the instruction set TARGET, one boid at a time
 * (gather_spans), two (gather_spans_x2) or four (gather_spans_x4). */
#define GATHER_FN(NAME, TARGET)                                                        \
	TARGET static void NAME(const struct flock *f, const struct rules_params *rp,  \
				size_t k, int nb, const struct span *sp, int nsp,      \
				struct rules_acc *acc)                                 \
	{                                                                              \
		GATHER_FAST_BODY;                                                      \
	}

#define SPANS gather_spans
GATHER_FN(gather_fast_base, )
#ifdef GRID_AVX512
GATHER_FN(gather_fast_generic_avx512, GRID_AVX512_TARGET)
GATHER_FN(gather_fast_generic_avx2, GRID_AVX2_TARGET)
/* Two boids at a time, with AVX-512 and with AVX2. Measured on baseline
 * x86-64 (16 registers of 4 floats, two per 8-float vector) pairs were
 * slower; with AVX2 (16 registers of 8 floats) they pay, together with
 * the batch update: 2D 1M, one thread, neighbours and update 1.71 s
 * against 2.60 s for the AVX2 loop without them (2.75 s baseline). */
#undef SPANS
#define SPANS gather_spans_x2
GATHER_FN(gather_pair_generic_avx512, GRID_AVX512_TARGET)
GATHER_FN(gather_pair_generic_avx2, GRID_AVX2_TARGET)
/* Four at a time with AVX-512 only, one 16-float register per vector: the
 * same instructions as a pair's, on twice the lanes (Zen 5 runs 512-bit
 * operations at the 256-bit rate). With AVX2 a quad's vectors take two
 * registers each, of sixteen, and spill. */
#undef SPANS
#define SPANS gather_spans_x4
GATHER_FN(gather_quad_generic_avx512, GRID_AVX512_TARGET)

/* Every model without a hue takes a kernel for one to four boids (with
 * its field of view, where it has one): at the AVX-512 level
 * kernel_quad, a quad with its last boid repeated costing what a pair or a single boid does there (512-bit
 * operations at the 256-bit rate on Zen 5), the same bits; at the AVX2
 * level kernel_pair for pairs and single boids. Measured, pinned, 2D 1M
 * neighbours and update with the AVX-512 pairs through the quad: 0.380 ->
 * 0.367 s, 3D 0.899 -> 0.861 s. */
#define KERNEL_DIMS(KERNEL, M, SAME, UNIFORM, FOV)                                      \
	do {                                                                           \
		if (f->dims == 2)                                                      \
			KERNEL(f, rp, k, nb, sp, nsp, 2, M, SAME, UNIFORM, FOV, acc);  \
		else                                                                   \
			KERNEL(f, rp, k, nb, sp, nsp, 3, M, SAME, UNIFORM, FOV, acc);  \
	} while (0)
/* alignment's and cohesion's radii one (all round only) or not */
#define KERNEL_AC(KERNEL, M, FOV)                                                      \
	do {                                                                           \
		if (!(FOV) && rp->r2_ali == rp->r2_coh)                                \
			KERNEL_DIMS(KERNEL, M, 1, 0, FOV);                             \
		else                                                                   \
			KERNEL_DIMS(KERNEL, M, 0, 0, FOV);                             \
	} while (0)
/* Vicsek and Couzin: velocities of one speed or not */
#define KERNEL_SPEED(KERNEL, M, FOV)                                                   \
	do {                                                                           \
		if (rp->uniform_speed)                                                 \
			KERNEL_DIMS(KERNEL, M, 0, 1, FOV);                             \
		else                                                                   \
			KERNEL_DIMS(KERNEL, M, 0, 0, FOV);                             \
	} while (0)
/* Each model's kernel, all round (FOV 0) or with a field of view (Vicsek's
 * model sees all round); returns from the function. */
#define KERNEL_MODELS(KERNEL, FOV)                                                     \
	do {                                                                           \
		switch (rp->model) {                                                   \
		case MODEL_REYNOLDS:                                                   \
			KERNEL_AC(KERNEL, MODEL_REYNOLDS, FOV);                        \
			return 1;                                                      \
		case MODEL_SIMPLE: /* blend's sums are simple's */                     \
		case MODEL_BLEND:                                                      \
			KERNEL_AC(KERNEL, MODEL_SIMPLE, FOV);                          \
			return 1;                                                      \
		case MODEL_ACCELERATE:                                                 \
			KERNEL_AC(KERNEL, MODEL_ACCELERATE, FOV);                      \
			return 1;                                                      \
		case MODEL_INERTIA:                                                    \
			KERNEL_DIMS(KERNEL, MODEL_INERTIA, 0, 0, FOV);                 \
			return 1;                                                      \
		case MODEL_SLERP:                                                      \
			KERNEL_DIMS(KERNEL, MODEL_SLERP, 0, 0, FOV);                   \
			return 1;                                                      \
		case MODEL_COUZIN:                                                     \
			KERNEL_SPEED(KERNEL, MODEL_COUZIN, FOV);                       \
			return 1;                                                      \
		case MODEL_VICSEK:                                                     \
			if (!(FOV)) {                                                  \
				KERNEL_SPEED(KERNEL, MODEL_VICSEK, 0);                 \
				return 1;                                              \
			}                                                              \
			break;                                                         \
		}                                                                      \
		return 0;                                                              \
	} while (0)
/* NAME: the kernels of one instruction set, in one function (each kernel
 * inlined once, whichever loop calls it: the text and the build stay
 * small); 1 where a kernel took the boids, 0 where the generic loop must. */
#define KERNELS_FN(NAME, KERNEL, TARGET)                                               \
	TARGET static __attribute__((noinline)) int NAME(const struct flock *f,       \
							 const struct rules_params *rp, \
							 size_t k, int nb,             \
							 const struct span *sp, int nsp, \
							 struct rules_acc *acc)        \
	{                                                                              \
		if (rp->has_hue)                                                       \
			return 0;                                                      \
		if (rp->all_round)                                                     \
			KERNEL_MODELS(KERNEL, 0);                                      \
		KERNEL_MODELS(KERNEL, 1);                                              \
	}
KERNELS_FN(kernels_avx512, kernel_quad, GRID_AVX512_TARGET)
KERNELS_FN(kernels_avx2, kernel_pair, GRID_AVX2_TARGET)
#define GATHER_REYNOLDS(NAME, GENERIC, KERNELS, TARGET)                                \
	TARGET static void NAME(const struct flock *f,                                 \
					    const struct rules_params *rp, size_t k,  \
					    int nb, const struct span *sp, int nsp,    \
					    struct rules_acc *acc)                     \
	{                                                                              \
		if (!KERNELS(f, rp, k, nb, sp, nsp, acc))                              \
			GENERIC(f, rp, k, nb, sp, nsp, acc);                           \
	}
GATHER_REYNOLDS(gather_quad_avx512, gather_quad_generic_avx512, kernels_avx512,
		GRID_AVX512_TARGET)
GATHER_REYNOLDS(gather_fast_avx512, gather_fast_generic_avx512, kernels_avx512,
		GRID_AVX512_TARGET)
GATHER_REYNOLDS(gather_pair_avx512, gather_pair_generic_avx512, kernels_avx512,
		GRID_AVX512_TARGET)
GATHER_REYNOLDS(gather_pair_avx2, gather_pair_generic_avx2, kernels_avx2, GRID_AVX2_TARGET)
GATHER_REYNOLDS(gather_fast_avx2, gather_fast_generic_avx2, kernels_avx2, GRID_AVX2_TARGET)
#undef GATHER_REYNOLDS
#undef KERNELS_FN
#undef KERNEL_MODELS
#undef KERNEL_DIMS
#undef KERNEL_AC
#undef KERNEL_SPEED
#endif
#undef SPANS
#undef GATHER_FN
#undef GATHER
#undef GATHER_FAST_BODY
#undef GATHER_MODEL
#undef GATHER_AS

/* The loops of each level, in ctx_simd order (one table, with ctx.c's
 * names): one boid at a time, two (none on baseline x86-64, where pairs do
 * not pay), four (AVX-512 only), and the batch update. A level not
 * compiled here (another processor family) is the baseline's loops. */
struct step_kernels {
	enum ctx_simd level;
	gather_fn *fast, *pair, *quad;
	batch_fn *batch;
};

static const struct step_kernels KERNELS[CTX_SIMD_LEVELS] = {
#ifdef GRID_AVX512
	{CTX_SIMD_AVX512, gather_fast_avx512, gather_pair_avx512, gather_quad_avx512,
	 rules_update_batch_avx512},
	{CTX_SIMD_AVX2, gather_fast_avx2, gather_pair_avx2, NULL, rules_update_batch_avx2},
#else
	{CTX_SIMD_BASELINE, gather_fast_base, NULL, NULL, NULL},
	{CTX_SIMD_BASELINE, gather_fast_base, NULL, NULL, NULL},
#endif
	{CTX_SIMD_BASELINE, gather_fast_base, NULL, NULL, NULL},
};

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
const struct step_kernels *step_kernels(enum ctx_simd want)
{
	int l = want < 0 || want >= CTX_SIMD_LEVELS ? 0 : (int)want;

	while (l < CTX_SIMD_BASELINE && !cpu_runs((enum ctx_simd)l))
		l++;
	return &KERNELS[l];
}

enum ctx_simd step_level(const struct step_kernels *k)
{
	return k->level;
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

				cd.d2[l] = grid_pair_delta(rp, f, k, j, d);
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
	rules_lanes_reduce(ln, f->dims, rp->has_hue, acc);
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

uint64_t step_grid(const struct step_kernels *kern, const struct grid *g,
		   const struct flock *f, const struct rules_params *rp, uint64_t step)
{
	return step_grid_cells(kern, g, f, rp, step, 0, g->ncells);
}

uint64_t step_grid_cells(const struct step_kernels *kern, const struct grid *g,
			 const struct flock *f, const struct rules_params *rp, uint64_t step,
			 size_t first, size_t end)
{
	const size_t chunk = chunk_cells(g);
	const size_t nchunks = (end - first + chunk - 1) / chunk;
	uint64_t candidates = 0; /* an integer sum: exact in any order */
	size_t ch;

	#pragma omp parallel for schedule(dynamic, 1) reduction(+:candidates) \
		if (f->n >= f->parallel_min)
	for (ch = 0; ch < nchunks; ch++) {
		const size_t c0 = first + ch * chunk;
		const size_t c1 = c0 + chunk < end ? c0 + chunk : end;
		/* The slots of a chunk's cells are consecutive, so its boids are
		 * updated RULES_BATCH at a time across cell boundaries: the
		 * batch's square roots and divisions, which bound the update by
		 * their latency, then overlap. */
		/* three over when a quad ends a batch (its fourth sums unused
		 * when it holds three boids) */
		struct rules_acc acc[RULES_BATCH + 3];
		size_t c, k0 = g->cell_start[c0];
		int nb = 0, b;

		/* the cell's coordinates, advanced with c rather than divided */
		uint32_t cc[3] = {(uint32_t)(c0 % g->n[0]), (uint32_t)(c0 / g->n[0] % g->n[1]),
				  (uint32_t)(c0 / g->n[0] / g->n[1])};

		for (c = c0; c < c1; c++, cc[0]++) {
			struct span sp[GRID_STENCIL_MAX];
			uint32_t st[GRID_STENCIL_MAX], en[GRID_STENCIL_MAX];
			size_t k, here = g->cell_start[c + 1] - g->cell_start[c];
			int nsp, s, ns = 0;

			if (cc[0] == g->n[0]) {
				cc[0] = 0;
				if (++cc[1] == g->n[1]) {
					cc[1] = 0;
					cc[2]++;
				}
			}
			if (here == 0)
				continue;
			nsp = spans(g, rp, c, cc, sp);
			if (nsp < 0)
				ns = grid_stencil(g, c, st, en);
			for (s = 0; s < nsp; s++)
				candidates += (uint64_t)here * (sp[s].end - sp[s].start);
			for (s = 0; s < ns; s++)
				candidates += (uint64_t)here * (en[s] - st[s]);
			for (k = g->cell_start[c]; k < g->cell_start[c + 1]; k++) {
				const size_t left = g->cell_start[c + 1] - k;

				/* Three boids left take a quad too: its fourth
				 * quarter repeats the third, at a pair's cost. */
				if (nsp < 0) {
					gather_ranges(f, rp, k, st, en, ns, &acc[nb]);
				} else if (kern->quad && left >= 3) {
					const int q = left >= 4 ? 4 : 3;

					kern->quad(f, rp, k, q, sp, nsp, &acc[nb]);
					k += (size_t)q - 1;
					nb += q - 1;
				} else if (kern->pair && left >= 2) {
					kern->pair(f, rp, k, 2, sp, nsp, &acc[nb]);
					k++;
					nb++;
				} else {
					kern->fast(f, rp, k, 1, sp, nsp, &acc[nb]);
				}
				if (++nb >= RULES_BATCH) {
					finish_boids(f, rp, kern->batch, acc, RULES_BATCH, k0, step);
					k0 += RULES_BATCH;
					nb -= RULES_BATCH;
					for (b = 0; b < nb; b++)
						acc[b] = acc[RULES_BATCH + b];
				}
			}
		}
		if (nb > 0)
			finish_boids(f, rp, kern->batch, acc, nb, k0, step);
	}
	return candidates;
}

void step_brute(const struct flock *f, const struct rules_params *rp, uint64_t step)
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
