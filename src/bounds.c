/* bounds.c: box geometry and wall behaviour for the four bounds modes. */
#include "config.h"
#include "bounds.h"

#include <math.h>
#include <string.h>

void bounds_init(struct bounds *b, const struct scenario *sc)
{
	int d;

	memset(b, 0, sizeof *b);
	b->dims = sc->dims;
	b->mode = sc->mode;
	b->margin = sc->margin;
	for (d = 0; d < sc->dims; d++) {
		bounds_side32(sc->bmin[d], sc->bmax[d], &b->lo_f[d], &b->hi_f[d]);
		b->lo[d] = b->lo_f[d];
		b->hi[d] = b->hi_f[d];
		b->len[d] = b->hi[d] - b->lo[d];
		b->len_f[d] = (float)b->len[d];
		b->half_f[d] = 0.5f * b->len_f[d];
	}
}

void bounds_side32(double lo, double hi, float *lo_f, float *hi_f)
{
	*lo_f = (float)lo;
	*hi_f = (float)hi;
	/* A box narrower than binary32 can resolve still has a width. */
	if (!(*hi_f > *lo_f))
		*hi_f = nextafterf(*lo_f, INFINITY);
}

float bounds_wrap1(const struct bounds *b, int d, double p)
{
	float f;

	if (p < b->lo[d] || p >= b->hi[d]) {
		p = b->lo[d] + fmod(p - b->lo[d], b->len[d]);
		if (p < b->lo[d])
			p += b->len[d];
	}
	f = (float)p;
	/* Rounding to binary32 may land exactly on the far wall. */
	if (f >= b->hi_f[d] || f < b->lo_f[d])
		f = b->lo_f[d];
	return f;
}

float bounds_place(const struct bounds *b, int d, double p)
{
	if (b->mode == BOUNDS_WRAP)
		return bounds_wrap1(b, d, p);
	if (p < b->lo[d])
		p = b->lo[d];
	if (p > b->hi[d])
		p = b->hi[d];
	return (float)p;
}

int bounds_mirror1(const struct bounds *b, int d, double *p)
{
	int mirrored = 0;

	/* Mirror the overshoot back into the box; a move longer than the box
	 * is clamped to the wall it crossed last. */
	if (*p < b->lo[d]) {
		*p = 2.0 * b->lo[d] - *p;
		mirrored = 1;
	} else if (*p > b->hi[d]) {
		*p = 2.0 * b->hi[d] - *p;
		mirrored = 1;
	}
	if (*p < b->lo[d])
		*p = b->lo[d];
	if (*p > b->hi[d])
		*p = b->hi[d];
	return mirrored;
}

void bounds_reflect1(const struct bounds *b, int d, double *p, float *v)
{
	if (bounds_mirror1(b, d, p))
		*v = -*v;
}

void bounds_apply(const struct bounds *b, double pos[3], float vel[3])
{
	int d;

	switch (b->mode) {
	case BOUNDS_WRAP:
		for (d = 0; d < b->dims; d++)
			pos[d] = bounds_wrap1(b, d, pos[d]);
		break;
	case BOUNDS_REFLECT:
		for (d = 0; d < b->dims; d++)
			bounds_reflect1(b, d, &pos[d], &vel[d]);
		break;
	case BOUNDS_STEER:
	case BOUNDS_NONE:
		break;
	}
}
