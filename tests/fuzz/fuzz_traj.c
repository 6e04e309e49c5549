/* fuzz_traj.c: libFuzzer target for the trajectory reader. The input bytes
 * are a trajectory file (binary, CSV or gzip'd CSV, told apart by the
 * reader from its first bytes), read as boidsim info, verify and convert
 * --salvage read it: every frame in order, going on after damage from the
 * next whole key frame, then every frame at random through the frame
 * index. A failure must be one line naming the file; a frame must fit the
 * header's bound; nothing may crash, leak or read out of bounds. Built and
 * run by .ci/run:
 *   clang-14 -fsanitize=fuzzer,address,undefined -I. -Isrc tests/fuzz/fuzz_traj.c
 *       src/traj_read.c src/traj_write.c src/outfile.c src/util.c -lz -lcrypto -lcjson -lm */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FUZZ_NO_SCENARIO 1
#include "fuzz_common.h"
#include "traj.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A frame read: its count within the header's bound. */
static void check_frame(const struct traj_reader *r)
{
	if (traj_reader_frame_n(r) > traj_reader_header(r)->count) {
		fprintf(stderr, "fuzz: a frame of %llu agents, above the header's %llu\n",
			(unsigned long long)traj_reader_frame_n(r),
			(unsigned long long)traj_reader_header(r)->count);
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct util_err err;
	struct traj_reader *r;
	char hex[TRAJ_DIGEST_HEX];
	const char *path;
	uint64_t step, k, n;
	int rc, rounds = 0;

	if (size > (1u << 20) || !(path = fuzz_write_input("traj", data, size)))
		return 0;
	r = traj_reader_open(path, &err);
	if (r == NULL) {
		fuzz_check_error(&err, path);
		return 0;
	}
	for (;;) {
		while ((rc = traj_read_next(r, &step, &err)) == 1)
			check_frame(r);
		if (rc == 0)
			break;
		fuzz_check_error(&err, path);
		/* as convert --salvage: on after damage; a cut ends the file */
		if (traj_reader_cut(r) || ++rounds > 64)
			break;
		rc = traj_reader_resync(r, &err);
		if (rc < 0)
			fuzz_check_error(&err, path);
		if (rc != 1)
			break;
	}
	traj_reader_digest(r, hex);
	traj_reader_close(r);

	/* random access, backwards, as convert --frames reads */
	r = traj_reader_open(path, &err);
	if (r == NULL) {
		fuzz_check_error(&err, path);
		return 0;
	}
	rc = traj_reader_load_index(r, &err);
	if (rc < 0)
		fuzz_check_error(&err, path);
	n = rc == 1 ? traj_reader_index_frames(r) : 0;
	for (k = n; k > 0 && n <= 64; k--) {
		rc = traj_read_next_at(r, k - 1, &step, &err);
		if (rc < 0) {
			fuzz_check_error(&err, path);
			break;
		}
		check_frame(r);
	}
	traj_reader_close(r);
	return 0;
}
