/* step_kernel.h: the neighbour kernel of step.c, written once for KN_NB
 * boids at a time in vectors of KN_NB x RULES_LANES floats: step.c
 * includes it for AVX-512 (kernel_quad: four boids, masks in mask
 * registers, masked adds) and for AVX2 (kernel_pair: two boids, masks as
 * vectors, each term ANDed with its mask). Every lane does the generic
 * loop's operations (rules_lanes.h) in the same order, so the sums have
 * its bits; a lane whose mask is clear keeps its sum (AVX-512) or adds
 * the +0 of the AND (AVX2), the same, since a sum is never -0 (step.c).
 * No include guard: included once per instance.
 *
 * Before including: KN_(name), the instance's name; KN_TARGET; KN_NB;
 * KN_VF, KN_VI and KN_M (float, int32 and mask types); on floats KN_SET1,
 * KN_ADD, KN_SUB, KN_MUL, KN_DIV, KN_SQRT, KN_MAX; KN_IZERO;
 * KN_BCAST(p), candidates p[j0 .. j0 + 3] in every boid's lanes;
 * KN_OWN(p), each boid's p[k + o] in its lanes (self holds o a lane);
 * KN_CMP(m, a, b, P), m and (a P b); KN_CMPU(a, b, P), a P b; KN_MAND,
 * KN_MOR, KN_MNONE (no lane) and KN_MALL (every lane) on masks;
 * KN_MADD(s, m, t) and KN_MSUB(s, m, t), s + t and
 * s - t in the lanes of m; KN_MDIVZ(m, a, b), a / b in the lanes of m and 0
 * elsewhere; KN_COUNT(n, m), the generic's count (minus one a lane of m);
 * KN_SELF_VARS, declaring self (o of each lane: its boid, past nb the
 * last real one), kself and lane; KN_SPAN_VARS, declaring jv and endv
 * for span s; KN_VALID, the lanes below the span's end and not the boid's
 * own slot; KN_NEXT, jv to the next group; KN_REDUCE, KERNEL_REDUCE for
 * this instance. The file undefines them at its end. */

KN_TARGET static inline __attribute__((always_inline)) void
KN_(kernel)(const struct flock *f, const struct rules_params *rp, size_t k, int nb,
	    const struct span *sp, int nsp, const int DIMS, const enum model_kind MODEL,
	    const int SAME_AC, const int UNIFORM, const int FOV, struct rules_acc acc[KN_NB])
{
	const float *px = f->pos[0], *py = f->pos[1], *pz = f->pos[DIMS == 3 ? 2 : 1];
	const float *vx = f->vel[0], *vy = f->vel[1], *vz = f->vel[DIMS == 3 ? 2 : 1];
	const KN_VF zero = KN_SET1(0.0f), one = KN_SET1(1.0f);
	const KN_VF r2s = KN_SET1(rp->r2_sep), r2a = KN_SET1(rp->r2_ali);
	const KN_VF r2c = KN_SET1(rp->r2_coh);
	const KN_VF lo6 = KN_SET1(1e-6f), inv_ra = KN_SET1(rp->inv_r_ali);
	const KN_VF inv_sp = KN_SET1(rp->inv_speed);
	KN_SELF_VARS;
	const KN_VF xi = KN_OWN(px), yi = KN_OWN(py), zi = DIMS == 3 ? KN_OWN(pz) : zero;
	/* the field of view (FOV): each boid's velocity in its lanes, |v_i|^2
	 * as rules_self_init sums it, and the lanes of boids standing still,
	 * which see all round */
	const KN_VF vix = FOV ? KN_OWN(vx) : zero, viy = FOV ? KN_OWN(vy) : zero;
	const KN_VF viz = FOV && DIMS == 3 ? KN_OWN(vz) : zero;
	const KN_VF vi2 = DIMS == 3 ? KN_ADD(KN_ADD(KN_MUL(vix, vix), KN_MUL(viy, viy)),
					     KN_MUL(viz, viz)) :
				      KN_ADD(KN_MUL(vix, vix), KN_MUL(viy, viy));
	const KN_M blind = FOV ? KN_CMPU(vi2, zero, _CMP_EQ_OQ) : KN_MALL;
	const KN_VF cos2 = KN_SET1(rp->cos2_half_view);
	const int front = rp->cos_half_view >= 0.0f;
	KN_VF sep0 = zero, sep1 = zero, sep2 = zero, ali0 = zero, ali1 = zero, ali2 = zero;
	KN_VF coh0 = zero, coh1 = zero, coh2 = zero;
	KN_VI nsep = KN_IZERO, nali = nsep, ncoh = nsep;
	int s;

	for (s = 0; s < nsp; s++) {
		const KN_VF c0 = KN_SET1(sp[s].corr[0]), c1 = KN_SET1(sp[s].corr[1]);
		const KN_VF c2 = KN_SET1(sp[s].corr[2]);
		const size_t end = sp[s].end;
		size_t j0;
		KN_SPAN_VARS;

		for (j0 = sp[s].start; j0 < end; j0 += RULES_LANES) {
			KN_M valid = KN_VALID;
			const KN_VF dx = KN_ADD(KN_SUB(KN_BCAST(px), xi), c0);
			const KN_VF dy = KN_ADD(KN_SUB(KN_BCAST(py), yi), c1);
			const KN_VF wx = KN_BCAST(vx), wy = KN_BCAST(vy);
			KN_VF d2 = KN_ADD(KN_MUL(dx, dx), KN_MUL(dy, dy));
			KN_VF dz = zero, w, tx, ty, tz = zero; /* t: separation's term */
			KN_M ms, ma, mc;

			if (DIMS == 3) {
				dz = KN_ADD(KN_SUB(KN_BCAST(pz), zi), c2);
				d2 = KN_ADD(d2, KN_MUL(dz, dz));
			}
			if (FOV) {
				/* rules_lanes_add's test: the angle between v_i and d
				 * at most view_angle / 2, as dot >= |d||v_i| cos, squared */
				KN_VF dot = KN_ADD(KN_MUL(dx, vix), KN_MUL(dy, viy)), q, lim;
				KN_M ahead, seen;

				if (DIMS == 3)
					dot = KN_ADD(dot, KN_MUL(dz, viz));
				q = KN_MUL(dot, dot);
				lim = KN_MUL(KN_MUL(cos2, d2), vi2);
				ahead = KN_CMPU(dot, zero, _CMP_GE_OQ);
				seen = front ? KN_CMP(ahead, q, lim, _CMP_GE_OQ) :
					       KN_MOR(ahead, KN_CMPU(q, lim, _CMP_LE_OQ));
				valid = KN_MAND(valid, KN_MOR(blind, seen));
			}
			if (MODEL == MODEL_INERTIA) {
				/* one mask, |d| < r_ali; w = 1/max(|d|, 1e-6) - 1/r_ali
				 * (max(w, lo) is w > lo ? w : lo, the generic select) */
				ms = ma = mc = KN_CMP(valid, d2, r2a, _CMP_LT_OQ);
				w = KN_SUB(KN_DIV(one, KN_MAX(KN_SQRT(d2), lo6)), inv_ra);
			} else if (MODEL == MODEL_SLERP) {
				mc = KN_CMP(valid, d2, r2c, _CMP_LE_OQ);
				ms = KN_CMP(mc, d2, r2s, _CMP_LT_OQ);
				ma = KN_MNONE;
				w = one;
			} else if (MODEL == MODEL_VICSEK) {
				ma = KN_CMP(valid, d2, r2a, _CMP_LE_OQ);
				ms = mc = KN_MNONE;
				w = one;
			} else if (MODEL == MODEL_COUZIN) {
				/* three exclusive zones of those apart; unit directions */
				const KN_M apart = KN_CMP(valid, d2, zero, _CMP_GT_OQ);
				const KN_M out = KN_CMP(apart, d2, r2s, _CMP_GT_OQ);

				ms = KN_CMP(apart, d2, r2s, _CMP_LE_OQ);
				ma = KN_CMP(out, d2, r2a, _CMP_LE_OQ);
				mc = KN_CMP(KN_CMP(out, d2, r2a, _CMP_GT_OQ), d2, r2c, _CMP_LE_OQ);
				w = KN_DIV(one, KN_SQRT(d2));
			} else {
				ms = KN_CMP(valid, d2, r2s, _CMP_LE_OQ);
				if (!RQ_PLAIN(MODEL))
					ms = KN_CMP(ms, d2, zero, _CMP_GT_OQ);
				ma = KN_CMP(valid, d2, r2a, _CMP_LE_OQ);
				mc = SAME_AC ? ma : KN_CMP(valid, d2, r2c, _CMP_LE_OQ);
				/* the weight of d: 1 (x 1 is exact, so d itself),
				 * 1/|d|^2, or 1/|d| (one IEEE root, as sqrtf) */
				w = RQ_PLAIN(MODEL) ? one : MODEL == MODEL_ACCELERATE ?
					KN_DIV(one, KN_SQRT(d2)) : KN_DIV(one, d2);
			}
			tx = RQ_UNIT_W(MODEL) ? dx : KN_MUL(dx, w);
			ty = RQ_UNIT_W(MODEL) ? dy : KN_MUL(dy, w);
			if (DIMS == 3)
				tz = RQ_UNIT_W(MODEL) ? dz : KN_MUL(dz, w);
			/* separation subtracts its term, cohesion adds d; Couzin's
			 * repulsion and attraction both add d / |d| */
#define KN_SEP(a, t) (MODEL == MODEL_COUZIN ? KN_MADD(a, ms, t) : KN_MSUB(a, ms, t))
#define KN_COH(a, t, d) KN_MADD(a, mc, MODEL == MODEL_COUZIN ? t : d)
			if (MODEL != MODEL_VICSEK) {
				sep0 = KN_SEP(sep0, tx);
				sep1 = KN_SEP(sep1, ty);
				coh0 = KN_COH(coh0, tx, dx);
				coh1 = KN_COH(coh1, ty, dy);
				if (DIMS == 3) {
					sep2 = KN_SEP(sep2, tz);
					coh2 = KN_COH(coh2, tz, dz);
				}
			}
#undef KN_SEP
#undef KN_COH
			if (MODEL == MODEL_SLERP) {
				/* slerp's ali[0]: the speeds |v_j| of those within r_coh */
				KN_VF vn2 = KN_ADD(KN_MUL(wx, wx), KN_MUL(wy, wy));

				if (DIMS == 3) {
					const KN_VF wz = KN_BCAST(vz);

					vn2 = KN_ADD(vn2, KN_MUL(wz, wz));
				}
				ali0 = KN_MADD(ali0, mc, KN_SQRT(vn2));
			} else {
				/* v_j, or for Vicsek and Couzin the unit heading
				 * v_j/|v_j| (0 for a boid standing still, as the
				 * generic select) */
				KN_VF hx = wx, hy = wy, hz = DIMS == 3 ? KN_BCAST(vz) : zero, hv = inv_sp;

				if (RQ_HEADING(MODEL) && !UNIFORM) {
					KN_VF vn2 = KN_ADD(KN_MUL(wx, wx), KN_MUL(wy, wy));

					if (DIMS == 3)
						vn2 = KN_ADD(vn2, KN_MUL(hz, hz));
					hv = KN_MDIVZ(KN_CMPU(vn2, zero, _CMP_GT_OQ), one,
						      KN_SQRT(vn2));
				}
				if (RQ_HEADING(MODEL)) {
					hx = KN_MUL(wx, hv);
					hy = KN_MUL(wy, hv);
					if (DIMS == 3)
						hz = KN_MUL(hz, hv);
				}
				ali0 = KN_MADD(ali0, ma, hx);
				ali1 = KN_MADD(ali1, ma, hy);
				if (DIMS == 3)
					ali2 = KN_MADD(ali2, ma, hz);
			}
			/* the generic loop's counts, of the sums each model keeps */
			if (MODEL != MODEL_INERTIA && MODEL != MODEL_VICSEK)
				nsep = KN_COUNT(nsep, ms);
			if (MODEL != MODEL_SLERP)
				nali = KN_COUNT(nali, ma);
			if (!SAME_AC && MODEL != MODEL_INERTIA && MODEL != MODEL_VICSEK)
				ncoh = KN_COUNT(ncoh, mc);
			KN_NEXT;
		}
	}
	{
		const KN_VF sum[9] = {sep0, sep1, sep2, ali0, ali1, ali2, coh0, coh1, coh2};
		const KN_VI cnt[3] = {nsep, nali, SAME_AC ? nali : ncoh};

		KN_REDUCE;
	}
}

/* The instance's parameters, for the next one. */
#undef KN_
#undef KN_TARGET
#undef KN_NB
#undef KN_VF
#undef KN_VI
#undef KN_M
#undef KN_SET1
#undef KN_IZERO
#undef KN_ADD
#undef KN_SUB
#undef KN_MUL
#undef KN_DIV
#undef KN_SQRT
#undef KN_MAX
#undef KN_BCAST
#undef KN_OWN
#undef KN_CMP
#undef KN_CMPU
#undef KN_MAND
#undef KN_MOR
#undef KN_MNONE
#undef KN_MALL
#undef KN_MADD
#undef KN_MSUB
#undef KN_MDIVZ
#undef KN_COUNT
#undef KN_SELF_VARS
#undef KN_SPAN_VARS
#undef KN_VALID
#undef KN_NEXT
#undef KN_REDUCE
