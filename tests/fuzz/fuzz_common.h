/* fuzz_common.h: checks shared by the libFuzzer targets (tests/fuzz/). */
#ifndef BOIDSIM_FUZZ_COMMON_H
#define BOIDSIM_FUZZ_COMMON_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef FUZZ_NO_SCENARIO
#include "scenario.h"
#endif
#include "util.h"

#ifndef FUZZ_NEWLINE_CHECK
#define FUZZ_NEWLINE_CHECK 1
#endif

static int fuzz_write_file(const char *name, const unsigned char *p, size_t n)
{
	FILE *f = fopen(name, "wb");

	if (f == NULL)
		return -1;
	if (n && fwrite(p, 1, n, f) != n) {
		fclose(f);
		return -1;
	}
	return fclose(f);
}

/* The file an input is written to for a reader that reads paths: one
 * name, made the first time (/tmp/fuzz_TAG.XXXXXX) and removed at exit. */
static char fuzz_input_path[64];

static void fuzz_remove_input(void)
{
	unlink(fuzz_input_path);
}

/* The input as that file; its name, or NULL when it cannot be written. */
static const char *fuzz_write_input(const char *tag, const unsigned char *p, size_t n)
{
	if (!fuzz_input_path[0]) {
		int fd;

		snprintf(fuzz_input_path, sizeof fuzz_input_path, "/tmp/fuzz_%s.XXXXXX", tag);
		fd = mkstemp(fuzz_input_path);
		if (fd < 0) {
			fuzz_input_path[0] = '\0';
			return NULL;
		}
		close(fd);
		atexit(fuzz_remove_input);
	}
	return fuzz_write_file(fuzz_input_path, p, n) == 0 ? fuzz_input_path : NULL;
}

/* A failure report is one non-empty line that starts with what it names. */
static void fuzz_check_error(const struct util_err *err, const char *prefix)
{
	size_t n = strlen(prefix);

	if (err->msg[0] == '\0' || (FUZZ_NEWLINE_CHECK && strchr(err->msg, '\n') != NULL) ||
	    strncmp(err->msg, prefix, n) != 0) {
		fprintf(stderr, "fuzz: bad error message (want one line starting with "
			"\"%s\"): [%s]\n", prefix, err->msg);
		abort();
	}
}

#ifndef FUZZ_NO_SCENARIO
/* A loaded scenario's effective JSON loads back into the same scenario
 * (compared through its JSON, which lists every field). Frees sc. */
static void fuzz_check_roundtrip(struct scenario *sc)
{
	struct scenario again;
	struct util_err err;
	char *json = scenario_to_json(sc), *json2;

	if (json == NULL) {
		fprintf(stderr, "fuzz: scenario_to_json failed\n");
		abort();
	}
	if (scenario_load_string("effective", json, strlen(json), NULL, 0, &again, &err) != 0) {
		fprintf(stderr, "fuzz: the effective scenario does not reload: %s\n%s\n",
			err.msg, json);
		abort();
	}
	json2 = scenario_to_json(&again);
	if (json2 == NULL || strcmp(json, json2) != 0) {
		fprintf(stderr, "fuzz: the effective scenario reloads differently:\n%s\n---\n%s\n",
			json, json2 ? json2 : "(null)");
		abort();
	}
	free(json);
	free(json2);
	scenario_free(&again);
	scenario_free(sc);
}
#endif

#endif
