/* fuzz_trajraw.c: libFuzzer target for the trajectory reader behind its
 * CRCs. fuzz_traj's inputs are files as they are, and nearly every
 * mutation of a binary one stops at a CRC or in zlib, before the codecs,
 * the planes, the predictor and the quantiser are reached. Here the input
 * is a binary trajectory in a raw form: each frame record's payload is
 * its decoded stream (the frame header's r bytes, boidsim-trajectory(5)),
 * which this harness compresses (codec 0: one zlib stream; the others: a
 * chunk table of RAW_CHUNK-byte chunks, zlib streams or, with header flag
 * 2, Zstandard frames or stored), setting z and every CRC (header,
 * frames, index, end record) and moving the index's offsets with the
 * frames. The file made is read as fuzz_traj.h reads. Records it cannot
 * follow, and input that is not a binary trajectory, go as they are.
 * tests/fuzz/make-trajraw-corpus makes the seeds from real files. Built
 * and run by .ci/run. */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#include "fuzz_traj.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Small chunks: many per frame, so that the chunk table's paths run. */
#define RAW_CHUNK 256u
/* Frame records whose index entries are moved (the reader's own bound on
 * random access in fuzz_traj.h is 64 frames). */
#define RAW_FRAMES_MAX 512

struct out {
	unsigned char *p;
	size_t n, cap;
	int failed;
};

/* Room for n more bytes at o->p + o->n, or NULL (o->failed). */
static unsigned char *room(struct out *o, size_t n)
{
	if (o->failed)
		return NULL;
	if (o->cap - o->n < n) {
		size_t cap = o->cap ? o->cap : 4096;
		unsigned char *q;

		while (cap - o->n < n)
			cap *= 2;
		if (!(q = realloc(o->p, cap))) {
			o->failed = 1;
			return NULL;
		}
		o->p = q;
		o->cap = cap;
	}
	return o->p + o->n;
}

static void put(struct out *o, const void *p, size_t n)
{
	unsigned char *at = room(o, n);

	if (at == NULL)
		return;
	if (n)
		memcpy(at, p, n);
	o->n += n;
}

static void put_crc(struct out *o, uLong crc)
{
	unsigned char c[4];

	traj_put_u32(c, (uint32_t)crc);
	put(o, c, 4);
}

/* Appends len raw bytes to z as one zlib stream (level 1); its length,
 * or 0 when it cannot. */
static size_t put_stream(struct out *z, const unsigned char *raw, size_t len)
{
	uLongf zl = compressBound((uLong)len);
	unsigned char *at = room(z, zl);

	if (at == NULL || compress2(at, &zl, raw, (uLong)len, 1) != Z_OK)
		return 0;
	z->n += zl;
	return zl;
}

/* Appends len raw bytes to z as one Zstandard frame (level 1), or as
 * they are when no frame is shorter, as the writer does; their length, or
 * 0 when it cannot. */
static size_t put_zstd(struct out *z, const unsigned char *raw, size_t len)
{
	size_t zl = ZSTD_compressBound(len);
	unsigned char *at = room(z, zl);

	if (at == NULL)
		return 0;
	zl = ZSTD_compress(at, zl, raw, len, 1);
	if (ZSTD_isError(zl))
		return 0;
	if (zl >= len) {
		memcpy(at, raw, len);
		zl = len;
	}
	z->n += zl;
	return zl;
}

/* The frame's payload for its codec from its raw bytes, into z (empty):
 * 0 when made. zstd: the header's flag 2. */
static int compress_payload(uint32_t codec, const unsigned char *raw, size_t len,
			    int zstd, struct out *z)
{
	const size_t nchunks = (len + RAW_CHUNK - 1) / RAW_CHUNK;
	unsigned char head[8] = {0};
	size_t k, table, zl;

	if (codec == TRAJ_CODEC_ZLIB_F32 || codec >= TRAJ_CODECS)
		return put_stream(z, raw, len) > 0 ? 0 : -1;
	traj_put_u32(head, RAW_CHUNK);
	traj_put_u32(head + 4, (uint32_t)nchunks);
	put(z, head, 8);
	table = z->n;
	for (k = 0; k < nchunks; k++)
		put(z, head, 4); /* each chunk's length, set below */
	for (k = 0; k < nchunks; k++) {
		const size_t lo = k * RAW_CHUNK, n = len - lo < RAW_CHUNK ? len - lo : RAW_CHUNK;

		if ((zl = zstd ? put_zstd(z, raw + lo, n) : put_stream(z, raw + lo, n)) == 0)
			return -1;
		traj_put_u32(z->p + table + 4 * k, (uint32_t)zl);
	}
	return z->failed ? -1 : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t size)
{
	struct out o = {0}, z = {0};
	uint64_t from[RAW_FRAMES_MAX], to[RAW_FRAMES_MAX];
	size_t at, gl, jl, nmoved = 0;

	if (size > (1u << 18))
		return 0;
	if (size < TRAJ_HEADER_FIXED + 4 || memcmp(d, TRAJ_MAGIC, TRAJ_MAGIC_LEN) != 0) {
		fuzz_traj_read(d, size);
		return 0;
	}
	gl = traj_get_u32(d + 36);
	jl = traj_get_u32(d + 40);
	if (gl > size || jl > size || TRAJ_HEADER_FIXED + gl + jl + 4 > size) {
		fuzz_traj_read(d, size);
		return 0;
	}
	at = TRAJ_HEADER_FIXED + gl + jl;
	put(&o, d, at);
	put_crc(&o, crc32(0L, d, (uInt)at));
	at += 4;
	while (at + 4 <= size && !o.failed) {
		if (memcmp(d + at, TRAJ_FRAME_TAG, 4) == 0 && size - at >= TRAJ_FRAME_HEADER) {
			unsigned char h[TRAJ_FRAME_HEADER];
			const uint64_t raw = traj_get_u64(d + at + 20);

			if (raw > size - at - TRAJ_FRAME_HEADER)
				break;
			memcpy(h, d + at, TRAJ_FRAME_HEADER);
			z.n = 0;
			if (compress_payload(traj_get_u32(h + 16), d + at + TRAJ_FRAME_HEADER,
					     (size_t)raw, (traj_get_u32(d + 12) & TRAJ_FLAG_ZSTD) != 0,
					     &z) != 0)
				break;
			traj_put_u64(h + 28, (uint64_t)z.n);
			traj_put_u32(h + 36, (uint32_t)crc32_z(crc32(0L, h, 36), z.p, z.n));
			if (nmoved < RAW_FRAMES_MAX) {
				from[nmoved] = at;
				to[nmoved++] = o.n;
			}
			put(&o, h, sizeof h);
			put(&o, z.p, z.n);
			at += TRAJ_FRAME_HEADER + (size_t)raw;
		} else if (memcmp(d + at, TRAJ_INDEX_TAG, 4) == 0 && size - at >= 12) {
			const uint64_t n = traj_get_u64(d + at + 4);
			size_t len, k, m, start;

			if (n > (size - at - 12) / TRAJ_INDEX_ENTRY ||
			    size - at - 12 - n * TRAJ_INDEX_ENTRY < 4)
				break;
			len = 12 + (size_t)n * TRAJ_INDEX_ENTRY;
			start = o.n;
			put(&o, d + at, len);
			for (k = 0; k < n && !o.failed; k++) {
				unsigned char *off = o.p + start + 12 + k * TRAJ_INDEX_ENTRY + 8;

				for (m = 0; m < nmoved; m++)
					if (from[m] == traj_get_u64(off)) {
						traj_put_u64(off, to[m]);
						break;
					}
			}
			if (!o.failed)
				put_crc(&o, crc32_z(0L, o.p + start, len));
			at += len + 4;
		} else if (memcmp(d + at, TRAJ_END_TAG, 4) == 0 && size - at >= TRAJ_END_LEN) {
			put(&o, d + at, TRAJ_END_LEN - 4);
			if (!o.failed)
				put_crc(&o, crc32(0L, o.p + o.n - (TRAJ_END_LEN - 4), TRAJ_END_LEN - 4));
			at += TRAJ_END_LEN;
		} else {
			break;
		}
	}
	/* the rest as it is */
	put(&o, d + at, size - at);
	if (!o.failed)
		fuzz_traj_read(o.p, o.n);
	free(o.p);
	free(z.p);
	return 0;
}
