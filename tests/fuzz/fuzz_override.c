/* fuzz_override.c: libFuzzer target for --set overrides. Each line of the
 * input (at most 8) is one override KEY=VALUE, applied in order to a fixed
 * valid 3D scenario with two obstacles, as boidsim --set does. A rejected
 * override must get one line naming it ("--set TEXT: ..."); an accepted
 * result must print an effective scenario that loads back to itself. Built
 * and run by .ci/run. */
#include "config.h"

#include <stddef.h>
#include <stdint.h>

#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char base[] =
	"{\"dimensions\": 3, \"count\": 60, \"steps\": 8, \"seed\": \"123\",\n"
	" \"radii\": {\"separation\": 1, \"alignment\": 2, \"cohesion\": 3},\n"
	" \"bounds\": {\"min\": [0, 0, 0], \"max\": [6, 6, 6], \"mode\": \"reflect\"},\n"
	" \"target\": {\"position\": [3, 3, 3]}, \"output\": {\"every\": 2},\n"
	" \"obstacles\": [{\"type\": \"sphere\", \"center\": [1, 1, 1], \"radius\": 0.5},\n"
	"   {\"type\": \"box\", \"min\": [4, 4, 4], \"max\": [5, 5, 5]}]}\n";

#define MAX_OV 8

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct scenario_override ov[MAX_OV];
	struct scenario sc;
	struct util_err err;
	char *text, *p, *nl, label[UTIL_ERR_MAX];
	int n = 0, i;

	if (size > 4096)
		return 0;
	/* a C string per line, as argv would give (an argument has no NUL) */
	if (memchr(data, '\0', size) != NULL)
		return 0;
	if (!(text = malloc(size + 1)))
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	/* (a last newline ends the last line; it does not start an empty one) */
	for (p = text; n < MAX_OV && *p != '\0'; p = nl + 1) {
		ov[n].text = p;
		ov[n].label = NULL;
		n++;
		if (!(nl = strchr(p, '\n')))
			break;
		*nl = '\0';
	}
	if (scenario_load_string("base.json", base, sizeof base - 1, ov, n, &sc, &err) != 0) {
		/* the failing override names itself; else the base is named */
		for (i = 0; i < n; i++) {
			snprintf(label, sizeof label, "--set %s:", ov[i].text);
			if (strncmp(err.msg, label, strlen(label)) == 0)
				break;
		}
		fuzz_check_error(&err, i < n ? label : "");
	} else {
		fuzz_check_roundtrip(&sc);
	}
	free(text);
	return 0;
}
