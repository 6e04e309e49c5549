/* detmath.c: deterministic sin, cos, atan2 and log from + - * / and sqrt
 * only.
 * Every operation is IEEE-754 correctly rounded and the order is fixed, so
 * the results are identical wherever boidsim runs. Used only for noise,
 * turning angles and the hue written to trajectories, where a last-bit
 * difference from libm does not matter but a difference between machines
 * would. */
#include "config.h"
#include "detmath.h"

#include <math.h>

/* Taylor series of sin and cos for |y| <= 1 (Abramowitz & Stegun 4.3.65,
 * 4.3.66), Horner form, terms to y^17 and y^18: truncation below 1e-17. */
static void sincos_small(double y, double *s, double *c)
{
	double y2 = y * y;

	*s = y * (1.0 + y2 * (-1.0 / 6 + y2 * (1.0 / 120 + y2 * (-1.0 / 5040 +
	     y2 * (1.0 / 362880 + y2 * (-1.0 / 39916800 + y2 * (1.0 / 6227020800.0 +
	     y2 * (-1.0 / 1307674368000.0 + y2 * (1.0 / 355687428096000.0)))))))));
	*c = 1.0 + y2 * (-0.5 + y2 * (1.0 / 24 + y2 * (-1.0 / 720 + y2 * (1.0 / 40320 +
	     y2 * (-1.0 / 3628800 + y2 * (1.0 / 479001600 + y2 * (-1.0 / 87178291200.0 +
	     y2 * (1.0 / 20922789888000.0 + y2 * (-1.0 / 6402373705728000.0)))))))));
}

void detmath_sincos(double x, double *s, double *c)
{
	double sh, ch;

	/* Halve twice (exact), then the double-angle formulas twice. */
	sincos_small(x * 0.25, &sh, &ch);
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
static double atan_unit(double t)
{
	double t2;
	int k;

	for (k = 0; k < 3; k++)
		t = t / (1.0 + sqrt(1.0 + t * t));
	t2 = t * t;
	return 8.0 * (t * (1.0 + t2 * (-1.0 / 3 + t2 * (1.0 / 5 + t2 * (-1.0 / 7 +
	       t2 * (1.0 / 9 + t2 * (-1.0 / 11 + t2 * (1.0 / 13 + t2 * (-1.0 / 15 +
	       t2 * (1.0 / 17 + t2 * (-1.0 / 19)))))))))));
}

double detmath_atan2(double y, double x)
{
	double ax = fabs(x), ay = fabs(y), a;

	if (ax == 0.0 && ay == 0.0)
		return 0.0;
	/* The octant first: the ratio of the smaller to the larger is in
	 * [0, 1]; then the quadrant by reflections (pi rounded once). */
	if (ay <= ax)
		a = atan_unit(ay / ax);
	else
		a = DETMATH_PI / 2 - atan_unit(ax / ay);
	if (x < 0.0)
		a = DETMATH_PI - a;
	return y < 0.0 ? -a : a;
}

double detmath_log(double x)
{
	/* x = m 2^e with m in [sqrt(1/2), sqrt(2)); log m = 2 atanh(z),
	 * z = (m - 1)/(m + 1), |z| <= 0.1716, series to z^27. */
	static const double LN2 = 0.693147180559945309417;
	double m, z, z2, sum;
	int e, k;

	m = frexp(x, &e);
	if (m < 0.70710678118654752440) {
		m *= 2.0;
		e--;
	}
	z = (m - 1.0) / (m + 1.0);
	z2 = z * z;
	sum = 0.0;
	for (k = 27; k >= 3; k -= 2)
		sum = (sum + 1.0 / k) * z2;
	return 2.0 * z * (1.0 + sum) + e * LN2;
}

double detmath_sin(double x)
{
	/* 2 pi = HI + MID + LO: HI with its low 25 bits zero, so that k HI
	 * is exact for |k| < 2^25 (|x| < 2e8), MID the rest of the binary64
	 * 2 pi, LO what that misses. */
	static const double HI = 0x1.921fb54p+2;
	static const double MID = 6.28318530717958623200e+00 - 0x1.921fb54p+2;
	static const double LO = 2.44929359829470635445e-16;
	double k = floor(x / (2.0 * DETMATH_PI) + 0.5), r, s, c;

	r = ((x - k * HI) - k * MID) - k * LO;
	detmath_sincos(r, &s, &c);
	return s;
}

double detmath_exp(double x)
{
	/* x = k ln 2 + r, |r| <= ln 2 / 2 (ln 2 in two parts, the first
	 * with its low bits zero so that k LN2_HI is exact), then the Taylor
	 * series of e^r to r^18 (truncation below 1e-19), times 2^k. */
	static const double LN2_HI = 0x1.62e42fefap-1, LN2_LO = 0x1.cf79abc9e3b3ap-40;
	double k, r, sum = 1.0;
	int i;

	if (!(x >= -745.0))
		return 0.0; /* below the least subnormal (and NaN) */
	if (x > 709.0)
		return INFINITY;
	k = floor(x / 0.693147180559945309417 + 0.5);
	r = (x - k * LN2_HI) - k * LN2_LO;
	for (i = 18; i >= 1; i--)
		sum = 1.0 + sum * r / i;
	return ldexp(sum, (int)k);
}

double detmath_normal(double u1, double u2)
{
	double s, c;

	detmath_sincos(2.0 * DETMATH_PI * u2 - DETMATH_PI, &s, &c);
	return sqrt(-2.0 * detmath_log(u1)) * c;
}
