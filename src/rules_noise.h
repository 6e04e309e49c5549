/* rules_noise.h: the compute-shader flock's value noise (seed 002's
 * noise1) and model inertia's speed factor from it, written once for a
 * binary64 scalar or a vector of them, each lane the same IEEE operations
 * in the same order. rules.c includes it for double (rules_noise002,
 * rules_inertia_factor) and rules_batch.h once per instruction set (the
 * batch update of model inertia with speed.variation: the eight sines of
 * a boid's noise took 44% of the compute-shader scenario's time lane by
 * lane, docs/PERFORMANCE.md). No include guard: included once per
 * instance; it undefines its macros at its end.
 *
 * Before including: NZ_T, the type; NZ_(name), the name of this
 * instance's copy; NZ_SIN(x) (detmath's sin), NZ_FLOOR(x) and
 * NZ_SEL(m, a, b) (a where m, else b) on NZ_T; NZ_TARGET, the target
 * attribute of its functions (empty: the file's). */

/* Seed 002's value noise of x in [0, 1]: hash(n) = frac(sin(n) 43758.5453),
 * interpolated between the lattice points n = 171 floor(x) + {0, 1, 57,
 * 58, 113, 114, 170, 171} with the smoothstep weight f = g^2 (3 - 2 g),
 * g = frac(x), the same on the three axes (its noise1 is called with the
 * scalar time broadcast to float3). In binary64 (the GPU's binary32 sin
 * is not reproducible anywhere else). */
NZ_TARGET static inline __attribute__((always_inline)) NZ_T NZ_(noise002)(NZ_T x)
{
	static const double L[8] = {0, 1, 57, 58, 113, 114, 170, 171};
	const NZ_T fl = NZ_FLOOR(x), g = x - fl, f = g * g * (3.0 - 2.0 * g), n = fl * 171.0;
	NZ_T h[8];
	int i;

	for (i = 0; i < 8; i++) {
		const NZ_T s = NZ_SIN(n + L[i]) * 43758.5453;

		h[i] = s - NZ_FLOOR(s);
	}
	/* lerp(a, b, f) = a + f (b - a), x first, then y, then z */
	for (i = 0; i < 4; i++)
		h[i] = h[2 * i] + f * (h[2 * i + 1] - h[2 * i]);
	for (i = 0; i < 2; i++)
		h[i] = h[2 * i] + f * (h[2 * i + 1] - h[2 * i]);
	return h[0] + f * (h[1] - h[0]);
}

/* Model inertia's speed factor at noise coordinate x: 1 + variation nu,
 * nu = 2 clamp(noise1(x), -1, 1) - 1 (seed 002's boidSpeed (1 + variation
 * noise)). The clamp as two selects: fmax(-1, .) then fmin(1, .), the
 * same values for the noise's finite arguments. */
NZ_TARGET static inline __attribute__((always_inline)) NZ_T
NZ_(inertia_factor)(NZ_T x, double variation)
{
	const NZ_T zero = {0};
	NZ_T nu = NZ_(noise002)(x);

	nu = NZ_SEL(nu < -1.0, zero - 1.0, nu);
	nu = NZ_SEL(nu > 1.0, zero + 1.0, nu);
	return 1.0 + (nu * 2.0 - 1.0) * variation;
}

#undef NZ_T
#undef NZ_
#undef NZ_SIN
#undef NZ_FLOOR
#undef NZ_SEL
#undef NZ_TARGET
