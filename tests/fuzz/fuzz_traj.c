/* fuzz_traj.c: libFuzzer target for the trajectory reader. The input bytes
 * are a trajectory file (binary, CSV or gzip'd CSV, told apart by the
 * reader from its first bytes), read as fuzz_traj.h says. Most mutations
 * of a binary file stop at a CRC; fuzz_trajraw gets past them. Built and
 * run by .ci/run. */
#include "config.h"

#include <stddef.h>
#include <stdint.h>

#include "fuzz_traj.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_traj_read(data, size);
	return 0;
}
