/* detmath_kernels.h: sincos and atan2 of detmath.c, written once for a
 * binary64 scalar or a vector of them (the compiler's vector extension),
 * each lane the same IEEE operations in the same order, so that a vector's
 * lanes have the bits of the scalar function. detmath.c includes it for
 * double; rules_batch.h once per instruction set, so that the slerp
 * model's batch update turns RB_W boids at once instead of one after the
 * other (atan2's three square roots and divisions in a chain, and the
 * polynomials, took 40% of a slerp run lane by lane: docs/PERFORMANCE.md).
 * No include guard: included once per instance.
 *
 * Before including: DM_T, the type; DM_M, the type of a comparison of two
 * DM_T; DM_(name), the name of this instance's copy; DM_SQRT(x), DM_ABS(x)
 * and DM_SEL(m, a, b) (a where m, else b) on DM_T; DM_TARGET, the target
 * attribute of its functions (empty: the file's). */

/* Taylor series of sin and cos for |y| <= 1 (Abramowitz & Stegun 4.3.65,
 * 4.3.66), Horner form, terms to y^17 and y^18: truncation below 1e-17. */
DM_TARGET static inline __attribute__((always_inline)) void
DM_(sincos_small)(DM_T y, DM_T *s, DM_T *c)
{
	const DM_T y2 = y * y;

	*s = y * (1.0 + y2 * (-1.0 / 6 + y2 * (1.0 / 120 + y2 * (-1.0 / 5040 +
	     y2 * (1.0 / 362880 + y2 * (-1.0 / 39916800 + y2 * (1.0 / 6227020800.0 +
	     y2 * (-1.0 / 1307674368000.0 + y2 * (1.0 / 355687428096000.0)))))))));
	*c = 1.0 + y2 * (-0.5 + y2 * (1.0 / 24 + y2 * (-1.0 / 720 + y2 * (1.0 / 40320 +
	     y2 * (-1.0 / 3628800 + y2 * (1.0 / 479001600 + y2 * (-1.0 / 87178291200.0 +
	     y2 * (1.0 / 20922789888000.0 + y2 * (-1.0 / 6402373705728000.0)))))))));
}

/* sin and cos for |x| <= 4: halve twice (exact), the series, then the
 * double-angle formulas twice. */
DM_TARGET static inline __attribute__((always_inline)) void
DM_(sincos)(DM_T x, DM_T *s, DM_T *c)
{
	DM_T sh, ch;

	DM_(sincos_small)(x * 0.25, &sh, &ch);
	*s = 2.0 * sh * ch;
	*c = (ch - sh) * (ch + sh);
	sh = *s;
	ch = *c;
	*s = 2.0 * sh * ch;
	*c = (ch - sh) * (ch + sh);
}

/* atan(t) for 0 <= t <= 1: three exact-formula halvings,
 * atan(t) = 2 atan(t / (1 + sqrt(1 + t^2))), bring t to at most
 * tan(pi/32) < 0.0985, where the Taylor series (A&S 4.4.42) to t^19 is
 * exact to below 1e-20; the factor 8 is exact. */
DM_TARGET static inline __attribute__((always_inline)) DM_T DM_(atan_unit)(DM_T t)
{
	DM_T t2;
	int k;

	for (k = 0; k < 3; k++)
		t = t / (1.0 + DM_SQRT(1.0 + t * t));
	t2 = t * t;
	return 8.0 * (t * (1.0 + t2 * (-1.0 / 3 + t2 * (1.0 / 5 + t2 * (-1.0 / 7 +
	       t2 * (1.0 / 9 + t2 * (-1.0 / 11 + t2 * (1.0 / 13 + t2 * (-1.0 / 15 +
	       t2 * (1.0 / 17 + t2 * (-1.0 / 19)))))))))));
}

/* atan2(y, x), 0 at the origin. The octant first: the ratio of the smaller
 * to the larger of |x| and |y| is in [0, 1] (one division, of the pair the
 * octant picks); then the quadrant by reflections (pi rounded once). */
DM_TARGET static inline __attribute__((always_inline)) DM_T DM_(atan2)(DM_T y, DM_T x)
{
	/* (zero: +0 in the lanes that take it, where |x| = 0) */
	const DM_T ax = DM_ABS(x), ay = DM_ABS(y), zero = ax - ax;
	const DM_M low = ay <= ax;
	const DM_T u = DM_(atan_unit)(DM_SEL(low, ay, ax) / DM_SEL(low, ax, ay));
	DM_T a = DM_SEL(low, u, DETMATH_PI / 2 - u);

	a = DM_SEL(x < 0.0, DETMATH_PI - a, a);
	a = DM_SEL(y < 0.0, -a, a);
	return DM_SEL((ax == 0.0) & (ay == 0.0), zero, a);
}
