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

void rng_direction(uint64_t seed, enum rng_purpose purpose, uint32_t index0, uint32_t id,
		   int dims, double u[3])
{
	double h[3] = {0, 0, 0}, h2, n;
	uint32_t r[4], attempt;
	int d;

	for (attempt = index0;; attempt++) {
		rng_draw4(seed, purpose, attempt, id, 0, r);
		h2 = 0;
		for (d = 0; d < dims; d++) {
			h[d] = 2.0 * ((double)r[d] * 0x1p-32) - 1.0;
			h2 += h[d] * h[d];
		}
		if (h2 <= 1.0 && h2 > 1e-6)
			break;
	}
	n = sqrt(h2);
	for (d = 0; d < 3; d++)
		u[d] = d < dims ? h[d] / n : 0.0;
}
