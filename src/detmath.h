/* detmath.h: the few elementary functions the update path needs, evaluated
 * with a fixed sequence of IEEE operations so they give the same bits on
 * every CPU and C library (libm may pick FMA variants at run time). */
#ifndef BOIDSIM_DETMATH_H
#define BOIDSIM_DETMATH_H

/* sin and cos of x for |x| <= 4 (radians), to within 1e-15 absolute. */
void detmath_sincos(double x, double *s, double *c);

/* The angle of (x, y) in radians, in [-pi, pi], as the C library's atan2
 * to within 1e-15 absolute, except that a zero y counts as positive (so
 * (-1, -0) gives pi) and (0, 0) gives 0. */
double detmath_atan2(double y, double x);

/* Natural logarithm of x > 0, to within 4e-16 relative. */
double detmath_log(double x);

/* sin of x for |x| <= 1e9, by reduction to [-pi, pi] with 2 pi in three
 * parts (Cody and Waite), to within about 1e-16 |x| absolute. */
double detmath_sin(double x);

/* e^x for |x| <= 700, to within 1e-15 relative; 0 below -745, infinity
 * above 709. */
double detmath_exp(double x);

/* A standard normal deviate from two uniforms u1 in (0, 1], u2 in [0, 1)
 * (Box-Muller). */
double detmath_normal(double u1, double u2);

#define DETMATH_PI 3.14159265358979323846

/* The larger and the smaller of a and b, b when they are equal, and the
 * one that is a number when the other is a NaN. C11's fmax and fmin
 * (7.12.12) leave the sign of a zero result from -0 and +0 to the
 * library, and libraries differ: glibc 2.36 gives fmax(+0, -0) = -0 on
 * x86-64 and +0 on aarch64 (FMAXNM), and s390x differs again, which would
 * let one CPU's bytes differ from another's. These are the same
 * everywhere, and inline (no call through the PLT). */
static inline double detmath_fmax(double a, double b)
{
	/* (written so: a > b ? a : b is one maxsd on x86-64, and the test of
	 * b for a NaN a branch always taken the same way; a > b || b != b
	 * put a branch on the data in the hot loops, 4% of an obstacle run) */
	return b != b ? a : a > b ? a : b;
}

static inline double detmath_fmin(double a, double b)
{
	return b != b ? a : a < b ? a : b;
}

static inline float detmath_fmaxf(float a, float b)
{
	return b != b ? a : a > b ? a : b;
}

#endif
