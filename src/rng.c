/* rng.c: draws built on rng_draw4 (rng.h): uniform points in the ball and
 * directions. */
#include "config.h"
#include "rng.h"

#include <math.h>

/* Points uniform in the cube [-1, 1)^dims until one falls in the unit
 * ball, farther than 1e-3 from its centre when away is set; returns |h|^2. */
static double in_ball(uint64_t seed, enum rng_purpose purpose, uint32_t index0, uint32_t id,
		      int dims, int away, double h[3], uint32_t *used)
{
	double h2;
	uint32_t r[4], attempt;
	int d;

	for (attempt = index0;; attempt++) {
		rng_draw4(seed, purpose, attempt, id, 0, r);
		h2 = 0;
		for (d = 0; d < 3; d++) {
			h[d] = d < dims ? 2.0 * ((double)r[d] * 0x1p-32) - 1.0 : 0.0;
			h2 += h[d] * h[d];
		}
		if (h2 <= 1.0 && (!away || h2 > 1e-6))
			break;
	}
	*used = attempt - index0 + 1;
	return h2;
}

void rng_ball(uint64_t seed, enum rng_purpose purpose, uint32_t index0, uint32_t id,
	      int dims, double u[3], uint32_t *used)
{
	in_ball(seed, purpose, index0, id, dims, 0, u, used);
}

void rng_direction(uint64_t seed, enum rng_purpose purpose, uint32_t index0, uint32_t id,
		   int dims, double u[3])
{
	double h[3], n;
	uint32_t used;
	int d;

	n = sqrt(in_ball(seed, purpose, index0, id, dims, 1, h, &used));
	for (d = 0; d < 3; d++)
		u[d] = d < dims ? h[d] / n : 0.0;
}
