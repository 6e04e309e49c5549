/* fuzz_traj.h: the trajectory reader's fuzzing body, shared by fuzz_traj
 * (files as they are) and fuzz_trajraw (files whose CRCs and compressed
 * streams the harness makes). The file is read as boidsim info, verify and
 * convert --salvage read it: every frame in order, going on after damage
 * from the next whole key frame, then every frame at random through the
 * frame index. A failure must be one line naming the file; a frame must
 * fit the header's bound; nothing may crash, leak or read out of bounds. */
#ifndef BOIDSIM_FUZZ_TRAJ_H
#define BOIDSIM_FUZZ_TRAJ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define FUZZ_NO_SCENARIO 1
#include "fuzz_common.h"
#include "traj.h"

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

/* Reads the file of the input as info, verify, convert --salvage and
 * convert --frames do. */
static void fuzz_traj_read(const uint8_t *data, size_t size)
{
	struct util_err err;
	struct traj_reader *r;
	char hex[TRAJ_DIGEST_HEX];
	const char *path;
	uint64_t step, k, n;
	int rc, rounds = 0;

	if (size > (1u << 20) || !(path = fuzz_write_input("traj", data, size)))
		return;
	r = traj_reader_open(path, &err);
	if (r == NULL) {
		fuzz_check_error(&err, path);
		return;
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
		return;
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
}

#endif
