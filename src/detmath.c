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

#define DM_T double
#define DM_M int
#define DM_(name) detmath_k_##name
#define DM_SQRT(x) sqrt(x)
#define DM_ABS(x) fabs(x)
#define DM_SEL(m, a, b) ((m) ? (a) : (b))
#define DM_FLOOR(x) floor(x)
#define DM_TARGET
/* the C library's frexp: exact, and defined for every argument */
static inline double detmath_frexp(double x, double *e)
{
	int ie;
	double m = frexp(x, &ie);

	*e = ie;
	return m;
}
#define DM_FREXP(x, e) detmath_frexp(x, e)
#include "detmath_kernels.h"

void detmath_sincos(double x, double *s, double *c)
{
	detmath_k_sincos(x, s, c);
}

double detmath_atan2(double y, double x)
{
	return detmath_k_atan2(y, x);
}

double detmath_log(double x)
{
	return detmath_k_log(x);
}

double detmath_sin(double x)
{
	return detmath_k_sin(x);
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
	return detmath_k_normal(u1, u2);
}
