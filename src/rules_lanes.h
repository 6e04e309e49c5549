/* rules_lanes.h: the per-candidate sums of the neighbour loops, written
 * once for RL_BOIDS boids at a time. rules.h includes it three times (hence
 * no include guard): with RL_BOIDS 1, giving rules_cand, rules_lanes,
 * rules_self and rules_lanes_add etc. on vectors of RULES_LANES floats;
 * with RL_BOIDS 2 and 4, giving the same names ending in _x2 and _x4 on
 * vectors of 2 and 4 x RULES_LANES floats, boid b in lanes b RULES_LANES
 * .. (b + 1) RULES_LANES - 1. Each lane does the same IEEE operations in
 * all three, so a boid's sums have the same bits whether it is summed
 * alone, in a pair or in a quad; the boids share the candidates' loads
 * and divide the instructions where the vectors are wide enough (the
 * AVX2 and AVX-512 loops, step.c).
 *
 * Before including: RL_BOIDS, RL_VF and RL_VI (float and int32 vectors of
 * RL_BOIDS x RULES_LANES lanes), RL_(name), the name of an instance, and
 * RL_TARGET, the instruction set its functions are compiled for (empty:
 * the file's; gcc splits vector operations wider than a function's own
 * instruction set into pieces before inlining it). */

/* RULES_LANES candidates j for each boid: d = p_j - p_i (minimum image)
 * and d2 = |d|^2 in binary32, v = v_j; valid is false (0) for padding and
 * for the boid itself, true (-1) otherwise. In 2D, dz and vz are zero. hc
 * and hs, the hue vectors, are read only with a hue, and hr, the colour
 * rate, only with a colour velocity. */
struct RL_(rules_cand) {
	RL_VI valid;
	RL_VF dx, dy, dz, d2, vx, vy, vz;
	RL_VF hc, hs, hr; /* hr, the colour rate, with a colour velocity only */
};

struct RL_(rules_lanes) {
	RL_VF sep[3], ali[3], coh[3];
	RL_VI n_sep, n_ali, n_coh; /* minus the counts (masks are -1) */
	RL_VF hue[2], hue_r;
	RL_VI n_hue;
};

/* The boids whose neighbourhoods are summed: their velocities, for the
 * field of view, in each boid's lanes. */
struct RL_(rules_self) {
	RL_VF vi[3], vi2;
	RL_VI blind;       /* lanes of a boid that sees all round, or stands still */
	int see_all;       /* every lane blind */
	int front;         /* view cone of at most 180 degrees */
};

/* Member by member, not memset: the sums then live in registers, and the
 * hue's, unused without a hue, are not written (a memset of the quads'
 * 832 bytes was a rep stos of 4% of a 2D run). */
RL_TARGET static inline __attribute__((always_inline)) void
RL_(rules_lanes_init)(struct RL_(rules_lanes) *a)
{
	const RL_VF zf = {0};
	const RL_VI zi = {0};
	int k;

	for (k = 0; k < 3; k++)
		a->sep[k] = a->ali[k] = a->coh[k] = zf;
	a->n_sep = a->n_ali = a->n_coh = a->n_hue = zi;
	a->hue[0] = a->hue[1] = a->hue_r = zf;
}

/* vel: RL_BOIDS velocities of 3 floats each, one after the other. */
RL_TARGET static inline __attribute__((always_inline)) void
RL_(rules_self_init)(struct RL_(rules_self) *s, const struct rules_params *p, const int dims,
		     const float *vel)
{
	int b, k, l;

	s->see_all = 1;
	for (b = 0; b < RL_BOIDS; b++) {
		float vi[3] = {0.0f, 0.0f, 0.0f}, vi2 = 0.0f;
		int blind;

		for (k = 0; k < dims; k++) {
			vi[k] = vel[3 * b + k];
			vi2 += vel[3 * b + k] * vel[3 * b + k];
		}
		blind = p->all_round || vi2 == 0.0f;
		s->see_all &= blind;
		for (l = b * RULES_LANES; l < (b + 1) * RULES_LANES; l++) {
			for (k = 0; k < 3; k++)
				s->vi[k][l] = vi[k];
			s->vi2[l] = vi2;
			s->blind[l] = blind ? -1 : 0;
		}
	}
	s->front = p->cos_half_view >= 0.0f;
}

/* Adds RULES_LANES candidates for each boid. Which sums a neighbour enters
 * is the model's (rules.c, section "Neighbours"). Every test is a mask and
 * every term a select: terms of unselected candidates (the direction of a
 * coincident boid, 1/0) are computed and discarded. hue (a constant in the
 * fast loops, so that without a hue nothing of it is compiled in) adds the
 * hue vectors of the neighbours seen within r_hue, whatever the model. */
RL_TARGET static inline __attribute__((always_inline)) void
RL_(rules_lanes_add)(struct RL_(rules_lanes) *a, const struct rules_params *p,
		     const enum model_kind model, const int dims, const int hue,
		     const struct RL_(rules_cand) *c, const struct RL_(rules_self) *s)
{
	const RL_VF zero = {0};
	const RL_VF dx = c->dx, dy = c->dy, dz = dims == 3 ? c->dz : zero, d2 = c->d2;
	const RL_VF vx = c->vx, vy = c->vy, vz = dims == 3 ? c->vz : zero;
	RL_VI valid = c->valid;
	/* Field of view: the angle between v_i and d is at most view_angle/2,
	 * that is dot >= |d||v_i| cos(view/2), squared to avoid two roots. */
	if (model != MODEL_VICSEK && !s->see_all) {
		RL_VF dot = dx * s->vi[0] + dy * s->vi[1];
		RL_VF q, lim;

		if (dims == 3)
			dot = dot + dz * s->vi[2];
		q = dot * dot;
		lim = p->cos2_half_view * d2 * s->vi2;
		valid &= s->blind | (s->front ? (dot >= 0.0f) & (q >= lim)
					      : (dot >= 0.0f) | (q <= lim));
	}
	if (hue) {
		const RL_VI mh = valid & (d2 <= p->r2_hue);

		a->hue[0] += rules_vsel(mh, c->hc);
		a->hue[1] += rules_vsel(mh, c->hs);
		a->n_hue += mh;
		if (p->hue_spin)
			a->hue_r += rules_vsel(mh, c->hr);
	}
	switch (model) {
	case MODEL_REYNOLDS:
	case MODEL_SIMPLE:
	case MODEL_BLEND:
	case MODEL_ACCELERATE: {
		/* Reynolds (1987) section 4: separation along p_i - p_j weighted
		 * by 1/|d| (so the sum of (p_i - p_j)/|d|^2), alignment averages
		 * v_j, cohesion averages d. The pseudocode boids (simple) and
		 * the OpenGL flock (blend; seed 000's CalSeparation, CalAlignment,
		 * CalCohesion: distance <= radius) sum p_i - p_j unweighted. The
		 * JavaFX flock (accelerate; seed 004, section 5.3) sums the unit
		 * vectors (p_i - p_j)/|d| over 0 < |d| <= r_sep (the update
		 * scales their mean by r_sep). */
		const int plain = model == MODEL_SIMPLE || model == MODEL_BLEND;
		const RL_VI ms = valid & (d2 <= p->r2_sep) & (plain ? valid : d2 > 0.0f);
		const RL_VI ma = valid & (d2 <= p->r2_ali), mc = valid & (d2 <= p->r2_coh);
		RL_VF w = plain ? zero + 1.0f : 1.0f / d2;

		if (model == MODEL_ACCELERATE) {
			int l;

			for (l = 0; l < RL_BOIDS * RULES_LANES; l++)
				w[l] = sqrtf(d2[l]);
			w = 1.0f / w;
		}

		a->sep[0] -= rules_vsel(ms, dx * w);
		a->sep[1] -= rules_vsel(ms, dy * w);
		a->ali[0] += rules_vsel(ma, vx);
		a->ali[1] += rules_vsel(ma, vy);
		a->coh[0] += rules_vsel(mc, dx);
		a->coh[1] += rules_vsel(mc, dy);
		if (dims == 3) {
			a->sep[2] -= rules_vsel(ms, dz * w);
			a->ali[2] += rules_vsel(ma, vz);
			a->coh[2] += rules_vsel(mc, dz);
		}
		a->n_sep += ms;
		a->n_ali += ma;
		a->n_coh += mc;
		break;
	}
	case MODEL_INERTIA: {
		/* The compute-shader flock (seed 002, CSMain): every boid with
		 * dist < R, dist = max(|d|, 1e-6) and R = radii.alignment, adds
		 * (p_i - p_j)(1/dist - 1/R) to separation, v_j to alignment and
		 * d to cohesion. */
		const RL_VI m = valid & (d2 < p->r2_ali);
		RL_VF w, lo = zero + 1e-6f;
		int l;

		/* max(|d|, 1e-6) as a select, not fmaxf: the same value for
		 * every |d| (never NaN), without a call per candidate */
		for (l = 0; l < RL_BOIDS * RULES_LANES; l++)
			w[l] = sqrtf(d2[l]);
		{
			const RL_VI big = w > lo;

			w = (RL_VF)(((RL_VI)w & big) | ((RL_VI)lo & ~big));
		}
		w = 1.0f / w - p->inv_r_ali;
		a->sep[0] -= rules_vsel(m, dx * w);
		a->sep[1] -= rules_vsel(m, dy * w);
		a->ali[0] += rules_vsel(m, vx);
		a->ali[1] += rules_vsel(m, vy);
		a->coh[0] += rules_vsel(m, dx);
		a->coh[1] += rules_vsel(m, dy);
		if (dims == 3) {
			a->sep[2] -= rules_vsel(m, dz * w);
			a->ali[2] += rules_vsel(m, vz);
			a->coh[2] += rules_vsel(m, dz);
		}
		a->n_ali += m;
		break;
	}
	case MODEL_SLERP: {
		/* The first Unity flock (seed 001, BoidController): boids with
		 * |d| <= r_coh (its neighbourDistance) add d to cohesion and
		 * their speed |v_j| to ali[0] (its groupSpeed); those of them
		 * with |d| < r_sep (its 2.0) add p_i - p_j to separation. */
		const RL_VI mc = valid & (d2 <= p->r2_coh), ms = mc & (d2 < p->r2_sep);
		const RL_VF vn2 = vx * vx + vy * vy + vz * vz;
		RL_VF sp;
		int l;

		for (l = 0; l < RL_BOIDS * RULES_LANES; l++)
			sp[l] = sqrtf(vn2[l]);
		a->sep[0] -= rules_vsel(ms, dx);
		a->sep[1] -= rules_vsel(ms, dy);
		a->coh[0] += rules_vsel(mc, dx);
		a->coh[1] += rules_vsel(mc, dy);
		if (dims == 3) {
			a->sep[2] -= rules_vsel(ms, dz);
			a->coh[2] += rules_vsel(mc, dz);
		}
		a->ali[0] += rules_vsel(mc, sp);
		a->n_sep += ms;
		a->n_coh += mc;
		break;
	}
	case MODEL_VICSEK:
	case MODEL_COUZIN: {
		/* Vicsek et al. (1995): the unit headings of all within r.
		 * Couzin et al. (2002): three exclusive zones; repulsion and
		 * attraction sum unit directions, orientation unit headings. */
		RL_VF hv = zero + p->inv_speed, rd = zero;
		RL_VI ma;
		int l;

		if (!p->uniform_speed) {
			const RL_VF vn2 = vx * vx + vy * vy + vz * vz;

			for (l = 0; l < RL_BOIDS * RULES_LANES; l++)
				hv[l] = sqrtf(vn2[l]);
			hv = rules_vsel(vn2 > 0.0f, 1.0f / hv);
		}
		if (model == MODEL_VICSEK) {
			ma = valid & (d2 <= p->r2_ali);
		} else {
			const RL_VI apart = valid & (d2 > 0.0f);
			const RL_VI ms = apart & (d2 <= p->r2_sep);
			const RL_VI mc = apart & (d2 > p->r2_ali) & (d2 > p->r2_sep) &
					 (d2 <= p->r2_coh);

			ma = apart & (d2 > p->r2_sep) & (d2 <= p->r2_ali);
			for (l = 0; l < RL_BOIDS * RULES_LANES; l++)
				rd[l] = sqrtf(d2[l]);
			rd = 1.0f / rd;
			a->sep[0] += rules_vsel(ms, dx * rd);
			a->sep[1] += rules_vsel(ms, dy * rd);
			a->coh[0] += rules_vsel(mc, dx * rd);
			a->coh[1] += rules_vsel(mc, dy * rd);
			if (dims == 3) {
				a->sep[2] += rules_vsel(ms, dz * rd);
				a->coh[2] += rules_vsel(mc, dz * rd);
			}
			a->n_sep += ms;
			a->n_coh += mc;
		}
		a->ali[0] += rules_vsel(ma, vx * hv);
		a->ali[1] += rules_vsel(ma, vy * hv);
		if (dims == 3)
			a->ali[2] += rules_vsel(ma, vz * hv);
		a->n_ali += ma;
		break;
	}
	}
}

/* Each boid's lanes' sums into one, lane 0 first: a fixed order. The sums
 * come by value: read lane by lane through a pointer, the loop's own
 * struct stayed in memory, and gcc 12 stored every sum to it at every
 * group of candidates (11 stores a group in the AVX2 pairs' loop, 2 with
 * the copy; its neighbours and update 8% faster). */
RL_TARGET static inline __attribute__((always_inline)) void
RL_(rules_lanes_reduce)(const struct RL_(rules_lanes) sums, const int dims, const int hue,
			struct rules_acc acc[RL_BOIDS])
{
	const struct RL_(rules_lanes) *a = &sums;
	int b, k, l;

	for (b = 0; b < RL_BOIDS; b++) {
		const int l0 = b * RULES_LANES, l1 = (b + 1) * RULES_LANES;

		rules_acc_init(&acc[b]);
		for (k = 0; k < dims; k++)
			for (l = l0; l < l1; l++) {
				acc[b].sep[k] += a->sep[k][l];
				acc[b].ali[k] += a->ali[k][l];
				acc[b].coh[k] += a->coh[k][l];
			}
		for (l = l0; l < l1; l++) {
			acc[b].n_sep -= (uint32_t)a->n_sep[l];
			acc[b].n_ali -= (uint32_t)a->n_ali[l];
			acc[b].n_coh -= (uint32_t)a->n_coh[l];
		}
		for (l = l0; hue && l < l1; l++) {
			acc[b].hue[0] += a->hue[0][l];
			acc[b].hue[1] += a->hue[1][l];
			acc[b].n_hue -= (uint32_t)a->n_hue[l];
			acc[b].hue_r += a->hue_r[l];
		}
	}
}
