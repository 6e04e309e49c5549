/* rng.h: counter-based random numbers: every draw is a pure function of
 * (seed, purpose, boid id, step, draw index), never of thread scheduling. */
#ifndef BOIDSIM_RNG_H
#define BOIDSIM_RNG_H

#include <stdint.h>

#include <Random123/philox.h>

/* What a draw is for; part of the counter so that streams never overlap. */
enum rng_purpose {
	RNG_INIT_POSITION = 1,
	RNG_INIT_HEADING = 2,
	RNG_INIT_SPEED = 3,
	RNG_NOISE = 4,          /* the models' angular noise, per boid and step */
	RNG_SPEED_VARIATION = 5,/* a boid's own cruise speed */
	RNG_SPEED_NOISE = 6,    /* its smooth speed fluctuation, per period */
	RNG_WANDER = 7,         /* the wandering target's jumps, per step */
	RNG_HUE = 8,            /* a boid's initial hue */
	RNG_PREDATOR = 9,       /* a predator's initial position and heading */
	RNG_TURN_SPEED = 10,    /* slerp: the new speed of a boid turning back, per step */
	RNG_NOISE_OFFSET = 11,  /* inertia: a boid's offset into the speed noise */
};

/* Four independent 32-bit words for (seed, purpose, id, step, index).
 * index must be below 2^24. Philox4x32-10 (Salmon et al., "Parallel
 * random numbers: as easy as 1, 2, 3", SC'11) from the Random123 library,
 * keyed by the seed; inline, so that a loop of draws over a vector's lanes
 * can be compiled into vector instructions (integer arithmetic: the same
 * words whatever the compiler does). */
static inline __attribute__((always_inline)) void rng_draw4(uint64_t seed, enum rng_purpose purpose, uint32_t index,
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

/* A double uniform in [0, 1) with 53 random bits from two words. */
static inline double rng_unit(uint32_t hi, uint32_t lo)
{
	uint64_t bits = ((uint64_t)hi << 21) ^ (uint64_t)(lo >> 11);

	return (double)(bits & ((UINT64_C(1) << 53) - 1)) * 0x1p-53;
}

/* A direction uniform on the circle (dims 2) or sphere (3), as a unit
 * vector in binary64: points uniform in the cube [-1, 1)^dims, drawn with
 * indices index0, index0 + 1, ..., until one falls inside the unit ball
 * (and not at its centre). Rejection needs no trigonometry, so the result
 * does not depend on a libm. */
void rng_direction(uint64_t seed, enum rng_purpose purpose, uint32_t index0, uint32_t id,
		   int dims, double u[3]);

/* A point uniform in the unit ball (dims 3) or disc (2), by the same
 * rejection; *used is the number of indices it took. */
void rng_ball(uint64_t seed, enum rng_purpose purpose, uint32_t index0, uint32_t id,
	      int dims, double u[3], uint32_t *used);

#endif
