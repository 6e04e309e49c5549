/* fuzz_scenario.c: libFuzzer target for the scenario loader. The input
 * bytes are a scenario file, given to scenario_load_string exactly as read
 * (no terminating NUL, so any over-read is caught). A rejected input must
 * get one line naming the file; an accepted one must print an effective
 * scenario that loads back to itself. Built and run by .ci/run:
 *   clang-14 -fsanitize=fuzzer,address,undefined -I. -Isrc
 *       tests/fuzz/fuzz_scenario.c src/scenario.c src/util.c -lcjson -lm */
#include "config.h"

#include <stddef.h>
#include <stdint.h>

#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct scenario sc;
	struct util_err err;

	/* scenario_load_file refuses larger files before reading them */
	if (size > SCENARIO_FILE_MAX)
		return 0;
	if (scenario_load_string("fuzz.json", (const char *)data, size, NULL, 0, &sc, &err) != 0) {
		fuzz_check_error(&err, "fuzz.json");
		return 0;
	}
	fuzz_check_roundtrip(&sc);
	return 0;
}
