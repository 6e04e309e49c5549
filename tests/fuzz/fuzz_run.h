/* fuzz_run.h: what the checkpoint and --resume targets share: the run a
 * checkpoint is read into, made from the scenario embedded in it. */
#ifndef BOIDSIM_FUZZ_RUN_H
#define BOIDSIM_FUZZ_RUN_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "scenario.h"
#include "traj.h"
#include "util.h"

/* The run when the checkpoint names none that fits. */
static const char fuzz_fallback_scenario[] =
	"{\"count\": 12, \"steps\": 40, \"seed\": 4,\n"
	" \"bounds\": {\"min\": [0, 0], \"max\": [10, 10], \"mode\": \"wrap\"}}\n";

/* What a run read for fuzzing may hold: small enough to step in
 * microseconds. */
#define FUZZ_CAPACITY_MAX 256

/* Where a checkpoint's strings start: after its magic, version, dims,
 * count and step (checkpoint.c). */
#define FUZZ_CKPT_STRINGS 32

/* The string at *at of a checkpoint (a 32-bit length, then its bytes),
 * NUL-terminated, to free; NULL when the input ends first. */
static char *fuzz_ckpt_string(const unsigned char *d, size_t size, size_t *at)
{
	uint32_t n;
	char *s;

	if (*at > size || size - *at < 4)
		return NULL;
	n = traj_get_u32(d + *at);
	*at += 4;
	if (size - *at < n || !(s = malloc((size_t)n + 1)))
		return NULL;
	memcpy(s, d + *at, n);
	s[n] = '\0';
	*at += n;
	return s;
}

/* Loads into sc the scenario json when it loads, fits the limits and
 * starts from no file, else the fallback. Returns 1 for json's, 0 for the
 * fallback's. */
static int fuzz_run_scenario(const char *json, struct scenario *sc)
{
	struct util_err err;

	if (json != NULL &&
	    scenario_load_string("checkpoint", json, strlen(json), NULL, 0, sc, &err) == 0) {
		if (sc->start_file == NULL && sc->capacity <= FUZZ_CAPACITY_MAX)
			return 1;
		scenario_free(sc);
	}
	if (scenario_load_string("fallback", fuzz_fallback_scenario,
				 sizeof fuzz_fallback_scenario - 1, NULL, 0, sc, &err) != 0) {
		fprintf(stderr, "fuzz: the fallback scenario does not load: %s\n", err.msg);
		abort();
	}
	return 0;
}

/* The generator the run says it is: the checkpoint's own when it names a
 * boidsim (so that a version bump does not stop the corpus there), else
 * this one (so that the message for another is tried too). */
static void fuzz_generator(const char *gen, char *out, size_t cap)
{
	snprintf(out, cap, "%s",
		 gen && strncmp(gen, "boidsim ", 8) == 0 ? gen : "boidsim " PACKAGE_VERSION);
}

#endif
