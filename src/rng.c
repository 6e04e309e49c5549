/* rng.c: Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as
 * 1, 2, 3", SC'11) from the Random123 library, keyed by the seed. */
#include "config.h"
#include "rng.h"

#include <math.h>

#include <Random123/philox.h>

void rng_draw4(uint64_t seed, enum rng_purpose purpose, uint32_t index,
	       uint32_t id, uint64_t step, uint32_t out[4])
{
	philox4x32_key_t key = {{(uint32_t)seed, (uint32_t)(seed >> 32)}};
	philox4x32_ctr_t ctr = {{((uint32_t)purpose << 24) | (index & 0xFFFFFFu), id,
				 (uint32_t)step, (uint32_t)(step >> 32)}};
	philox4x32_ctr_t r = philox4x32(ctr, key);

	out[0] = r.v[0];
	out[1] = r.v[1];
	out[2] = r.v[2];
	out[3] = r.v[3];
}

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
