/* fuzz_start.c: libFuzzer target for start.file, the start a run reads
 * from a file: a plain CSV of positions and velocities, or a frame of any
 * trajectory (start.c, through the trajectory reader). The first two bytes
 * of the input choose the scenario that names the file (below); the rest
 * is the file. A refused file must get one line naming it; an accepted
 * one must give a state the scenario could be in (finite, in the box
 * under wrap and reflect, speeds within the limits, outside the
 * obstacle), checked here again in double precision; nothing may crash,
 * leak or read out of bounds. Built and run by .ci/run. */
#include "config.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_common.h"
#include "start.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *what, size_t i)
{
	fprintf(stderr, "fuzz: accepted a start whose boid %zu %s\n", i, what);
	abort();
}

/* What start_load promises of an accepted state (start.h). */
static void check_accepted(const struct scenario *sc)
{
	const size_t n = (size_t)sc->count;
	const int dims = sc->dims;
	size_t i;
	int d;

	if (sc->start_data == NULL || sc->start_fields < 2 * dims) {
		fprintf(stderr, "fuzz: accepted a start without its data\n");
		abort();
	}
	for (i = 0; i < n; i++) {
		double v2 = 0, r2 = 0;

		for (d = 0; d < dims; d++) {
			double p = sc->start_data[(size_t)d * n + i];
			double v = sc->start_data[(size_t)(dims + d) * n + i];

			if (!isfinite(p) || !isfinite(v))
				fail("is not finite", i);
			if (sc->mode != BOUNDS_STEER && sc->mode != BOUNDS_NONE &&
			    !(p >= sc->bmin[d] && p <= sc->bmax[d]))
				fail("is outside the box", i);
			v2 += v * v;
			r2 += p * p;
		}
		/* the speed limits, with start.c's tolerance of 1e-6 */
		if (sc->model != MODEL_INERTIA && sqrt(v2) > sc->speed_max * (1 + 1e-5))
			fail("is faster than speed.max", i);
		/* the obstacle of the variants that have one: a unit ball at 0 */
		if (sc->n_obstacles > 0 && r2 < 1.0 * (1 - 1e-6))
			fail("is inside the obstacle", i);
		if (sc->start_hue) {
			double h = sc->start_data[(size_t)(2 * dims) * n + i];

			if (!(h >= 0 && h < 1))
				fail("has a hue outside [0, 1)", i);
		}
	}
}

/* Byte 0 chooses the scenario: bit 0 3D, bits 1-2 the bounds mode, bit 3
 * colour following (hue), bit 4 the inertia model (any speed; none for
 * steer), bit 5 a
 * unit ball at the origin, bit 6 a start.step of byte 1 % 8; byte 1 % 64
 * + 1 is the count (the seed corpus's trajectories have 50 and 60). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const MODES[] = {"wrap", "reflect", "steer", "none"};
	char json[1024], step[32] = "";
	const char *path;
	struct scenario sc;
	struct util_err err;
	int v, dims, count, mode;

	if (size < 2 || size > (1u << 20) || !(path = fuzz_write_input("start", data + 2, size - 2)))
		return 0;
	v = data[0];
	dims = v & 1 ? 3 : 2;
	count = data[1] % 64 + 1;
	/* (inertia has no forces to steer with: none instead) */
	mode = (v >> 1) & 3;
	if (v & 16 && mode == BOUNDS_STEER)
		mode = BOUNDS_NONE;
	if (v & 64)
		snprintf(step, sizeof step, ", \"step\": %d", data[1] % 8);
	snprintf(json, sizeof json,
		 "{\"dimensions\": %d, \"count\": %d, \"steps\": 1, \"seed\": 1,%s\n"
		 " \"speed\": {\"min\": 0, \"max\": 4},\n"
		 " \"bounds\": {\"min\": [-100, -100%s], \"max\": [100, 100%s], \"mode\": \"%s\"},\n"
		 " %s\"start\": {\"file\": \"%s\"%s}%s}\n",
		 dims, count, v & 16 ? " \"model\": \"inertia\"," : "", dims == 3 ? ", -100" : "",
		 dims == 3 ? ", 100" : "", MODES[mode],
		 v & 8 ? "\"hue\": {\"weight\": 0.05, \"alignment\": 0.05}, " : "", path, step,
		 v & 32 ? (dims == 3 ? ",\n \"obstacles\": [{\"type\": \"sphere\", \"center\": "
				       "[0, 0, 0], \"radius\": 1}]" :
				       ",\n \"obstacles\": [{\"type\": \"sphere\", \"center\": "
				       "[0, 0], \"radius\": 1}]") : "");
	if (scenario_load_string("fuzz.json", json, strlen(json), NULL, 0, &sc, &err) != 0) {
		fprintf(stderr, "fuzz: the harness's scenario does not load: %s\n%s", err.msg, json);
		abort();
	}
	if (start_load(&sc, &err) != 0)
		fuzz_check_error(&err, path);
	else
		check_accepted(&sc);
	scenario_free(&sc);
	return 0;
}
