/* detmath_kernels.h: sincos, sin, atan2, log and normal deviates of
 * detmath.c, written once for a binary64 scalar or a vector of them (the
 * compiler's vector extension), each lane the same IEEE operations in the
 * same order, so that a vector's lanes have the bits of the scalar
 * function. detmath.c includes it for double; rules_batch.h once per
 * instruction set, so that the batch updates turn RB_W boids at once
 * instead of one after the other (atan2's three square roots and
 * divisions in a chain, and the polynomials, took 40% of a slerp run lane
 * by lane: docs/PERFORMANCE.md). No include guard: included once per
 * instance.
 *
 * Before including: DM_T, the type; DM_M, the type of a comparison of two
 * DM_T; DM_(name), the name of this instance's copy; DM_SQRT(x),
 * DM_ABS(x), DM_FLOOR(x) and DM_SEL(m, a, b) (a where m, else b) on DM_T;
 * DM_TARGET, the target attribute of its functions (empty: the file's).
 * And for log either DM_FREXP(x, e), frexp with the exponent as a DM_T in
 * *e, or DM_I, the 64-bit integer type of DM_T's shape, for this file's
 * frexp of positive normal numbers. */

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

/* sin x for |x| <= 1e9: x = k 2 pi + r, |r| <= pi (Cody and Waite's
 * reduction, 2 pi in three parts: W. J. Cody and W. Waite, Software Manual
 * for the Elementary Functions, 1980, ch. 8), then sincos of r. */
DM_TARGET static inline __attribute__((always_inline)) DM_T DM_(sin)(DM_T x)
{
	/* 2 pi = HI + MID + LO: HI with its low 25 bits zero, so that k HI
	 * is exact for |k| < 2^25 (|x| < 2e8), MID the rest of the binary64
	 * 2 pi, LO what that misses. */
	static const double HI = 0x1.921fb54p+2;
	static const double MID = 6.28318530717958623200e+00 - 0x1.921fb54p+2;
	static const double LO = 2.44929359829470635445e-16;
	const DM_T k = DM_FLOOR(x / (2.0 * DETMATH_PI) + 0.5);
	DM_T s, c;

	DM_(sincos)(((x - k * HI) - k * MID) - k * LO, &s, &c);
	return s;
}

#ifdef DM_I
/* frexp for positive, normal, finite x only (a vector's log is only given
 * the uniforms of the noise, in [2^-53, 1]), from the bits: the mantissa
 * with the exponent field of 0.5, the exponent field as a binary64 by the
 * 2^52 trick (both exact). */
DM_TARGET static inline __attribute__((always_inline)) DM_T DM_(frexp_normal)(DM_T x, DM_T *e)
{
	DM_I b, eb;
	DM_T m, ef;

	memcpy(&b, &x, sizeof b);
	eb = ((b >> 52) & 0x7ff) | 0x4330000000000000;
	b = (b & (int64_t)0x800fffffffffffffu) | 0x3fe0000000000000;
	memcpy(&m, &b, sizeof m);
	memcpy(&ef, &eb, sizeof ef);
	*e = (ef - 0x1p52) - 1022.0;
	return m;
}
#define DM_FREXP(x, e) DM_(frexp_normal)(x, e)
#endif

/* log x for x > 0: x = m 2^e with m in [sqrt(1/2), sqrt(2)); log m =
 * 2 atanh(z), z = (m - 1)/(m + 1), |z| <= 0.1716, series to z^27 (A&S
 * 4.1.28), its first term (0 + 1/27) z^2 taken as (1/27) z^2, the same
 * value. */
DM_TARGET static inline __attribute__((always_inline)) DM_T DM_(log)(DM_T x)
{
	static const double LN2 = 0.693147180559945309417;
	DM_T m, e, z, z2, sum;
	DM_M low;
	int k;

	m = DM_FREXP(x, &e);
	low = m < 0.70710678118654752440;
	m = DM_SEL(low, m * 2.0, m);
	e = DM_SEL(low, e - 1.0, e);
	z = (m - 1.0) / (m + 1.0);
	z2 = z * z;
	sum = (1.0 / 27) * z2;
	for (k = 25; k >= 3; k -= 2)
		sum = (sum + 1.0 / k) * z2;
	return 2.0 * z * (1.0 + sum) + e * LN2;
}
#undef DM_FREXP

/* A standard normal deviate from u1 in (0, 1], u2 in [0, 1) (Box-Muller:
 * G. E. P. Box and M. E. Muller, Ann. Math. Statist. 29 (1958) 610). */
DM_TARGET static inline __attribute__((always_inline)) DM_T DM_(normal)(DM_T u1, DM_T u2)
{
	DM_T s, c;

	DM_(sincos)(2.0 * DETMATH_PI * u2 - DETMATH_PI, &s, &c);
	return DM_SQRT(-2.0 * DM_(log)(u1)) * c;
}
