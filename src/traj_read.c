/* traj_read.c: reads the binary trajectory format frame by frame, checking
 * every CRC, so a damaged or cut file is reported, never misread. */
#include "config.h"
#include "traj.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

struct traj_reader {
	FILE *fp;
	int is_stdin;
	const char *name;
	struct traj_header h;
	unsigned char *raw, *zbuf;
	size_t raw_len, zcap;
	uint64_t frames;
	int ended;
	enum traj_status status;
};

/* Reads exactly n bytes: 1 when read, 0 at end of file before the first
 * byte, -1 when the file ends part way (or on an I/O error). */
static int read_exact(struct traj_reader *r, void *p, size_t n)
{
	size_t got = fread(p, 1, n, r->fp);

	if (got == n)
		return 1;
	if (got == 0 && feof(r->fp))
		return 0;
	return -1;
}

static char *read_string(struct traj_reader *r, uint32_t len, uLong *crc)
{
	char *s = malloc((size_t)len + 1);

	if (s == NULL)
		return NULL;
	if (len > 0 && read_exact(r, s, len) != 1) {
		free(s);
		return NULL;
	}
	s[len] = '\0';
	*crc = crc32(*crc, (const Bytef *)s, len);
	return s;
}

struct traj_reader *traj_reader_open(const char *path, struct util_err *err)
{
	struct traj_reader *r = calloc(1, sizeof *r);
	unsigned char h[TRAJ_HEADER_FIXED], c[4];
	uint32_t fields, gl, jl;
	uLong crc;
	size_t per;

	if (r == NULL) {
		util_err_set(err, "out of memory");
		return NULL;
	}
	r->is_stdin = strcmp(path, "-") == 0;
	r->name = r->is_stdin ? "<stdin>" : path;
	r->fp = r->is_stdin ? stdin : fopen(path, "rb");
	if (r->fp == NULL) {
		util_err_set(err, "%s: cannot open: %s", path, strerror(errno));
		free(r);
		return NULL;
	}
	if (read_exact(r, h, sizeof h) != 1 || memcmp(h, TRAJ_MAGIC, TRAJ_MAGIC_LEN) != 0) {
		util_err_set(err, "%s: not a boidsim binary trajectory (bad magic)", r->name);
		goto fail;
	}
	r->h.version = h[8] | h[9] << 8;
	r->h.dims = h[10] | h[11] << 8;
	r->h.flags = traj_get_u32(h + 12);
	r->h.count = traj_get_u64(h + 16);
	r->h.seed = traj_get_u64(h + 24);
	fields = traj_get_u32(h + 32);
	gl = traj_get_u32(h + 36);
	jl = traj_get_u32(h + 40);
	if (r->h.version != TRAJ_VERSION) {
		util_err_set(err, "%s: format version %d, this reader knows %d", r->name,
			     r->h.version, TRAJ_VERSION);
		goto fail;
	}
	if ((r->h.dims != 2 && r->h.dims != 3) || fields != (uint32_t)(2 * r->h.dims) ||
	    r->h.count == 0 || r->h.count > UINT32_MAX || gl > TRAJ_GENERATOR_MAX ||
	    jl > TRAJ_SCENARIO_MAX) {
		util_err_set(err, "%s: damaged header", r->name);
		goto fail;
	}
	crc = crc32(0L, h, sizeof h);
	if (!(r->h.generator = read_string(r, gl, &crc)) ||
	    !(r->h.scenario = read_string(r, jl, &crc)) || read_exact(r, c, 4) != 1) {
		util_err_set(err, "%s: header cut short", r->name);
		goto fail;
	}
	if (traj_get_u32(c) != (uint32_t)crc) {
		util_err_set(err, "%s: header CRC mismatch", r->name);
		goto fail;
	}
	per = (size_t)fields * sizeof(float);
	if (util_mul_size((size_t)r->h.count, per, &r->raw_len) != 0) {
		util_err_set(err, "%s: frame size overflows", r->name);
		goto fail;
	}
	r->zcap = compressBound(r->raw_len);
	if (!(r->raw = util_alloc(r->raw_len, 1, err)) || !(r->zbuf = util_alloc(r->zcap, 1, err)))
		goto fail;
	return r;
fail:
	traj_reader_close(r);
	return NULL;
}

const struct traj_header *traj_reader_header(const struct traj_reader *r)
{
	return &r->h;
}

static int read_end(struct traj_reader *r, const unsigned char *tag, struct util_err *err)
{
	unsigned char e[TRAJ_END_LEN];

	memcpy(e, tag, 4);
	if (read_exact(r, e + 4, sizeof e - 4) != 1) {
		util_err_set(err, "%s: end record cut short after %llu frames", r->name,
			     (unsigned long long)r->frames);
		return -1;
	}
	if (traj_get_u32(e + 24) != (uint32_t)crc32(0L, e, 24) ||
	    traj_get_u64(e + 8) != r->frames || traj_get_u32(e + 4) > TRAJ_INTERRUPTED) {
		util_err_set(err, "%s: damaged end record after %llu frames", r->name,
			     (unsigned long long)r->frames);
		return -1;
	}
	r->ended = 1;
	r->status = (enum traj_status)traj_get_u32(e + 4);
	return 0;
}

int traj_read_frame(struct traj_reader *r, uint64_t *step, float *const fields[6],
		    struct util_err *err)
{
	unsigned char h[TRAJ_FRAME_HEADER];
	unsigned long long nf = (unsigned long long)r->frames;
	uint64_t raw_len, zlen;
	uLongf out_len;
	size_t n = (size_t)r->h.count, off = 0;
	int f, rc;

	if (r->ended)
		return 0;
	rc = read_exact(r, h, 4);
	if (rc == 0)
		return 0; /* killed run: ends after a complete frame */
	if (rc < 0)
		goto cut;
	if (memcmp(h, TRAJ_END_TAG, 4) == 0)
		return read_end(r, h, err);
	if (memcmp(h, TRAJ_FRAME_TAG, 4) != 0) {
		util_err_set(err, "%s: frame %llu: bad record tag", r->name, nf);
		return -1;
	}
	if (read_exact(r, h + 4, sizeof h - 4) != 1)
		goto cut;
	raw_len = traj_get_u64(h + 20);
	zlen = traj_get_u64(h + 28);
	if (traj_get_u32(h + 12) != r->h.count || traj_get_u32(h + 16) != TRAJ_CODEC_ZLIB_F32 ||
	    raw_len != r->raw_len || zlen > r->zcap) {
		util_err_set(err, "%s: frame %llu: damaged frame header", r->name, nf);
		return -1;
	}
	if (read_exact(r, r->zbuf, (size_t)zlen) != 1)
		goto cut;
	if (traj_get_u32(h + 36) !=
	    (uint32_t)crc32_z(crc32(0L, h, 36), r->zbuf, (z_size_t)zlen)) {
		util_err_set(err, "%s: frame %llu (step %llu): CRC mismatch", r->name, nf,
			     (unsigned long long)traj_get_u64(h + 4));
		return -1;
	}
	out_len = (uLongf)r->raw_len;
	if (uncompress(r->raw, &out_len, r->zbuf, (uLong)zlen) != Z_OK ||
	    out_len != r->raw_len) {
		util_err_set(err, "%s: frame %llu: payload does not decompress", r->name, nf);
		return -1;
	}
	for (f = 0; f < 2 * r->h.dims; f++) {
		size_t i;

		for (i = 0; i < n; i++, off += 4) {
			uint32_t u = traj_get_u32(r->raw + off);

			memcpy(&fields[f][i], &u, 4);
		}
	}
	*step = traj_get_u64(h + 4);
	r->frames++;
	return 1;
cut:
	util_err_set(err, "%s: file cut short in frame %llu (%llu complete frames)",
		     r->name, nf, nf);
	return -1;
}

int traj_reader_ended(const struct traj_reader *r, enum traj_status *status)
{
	if (status)
		*status = r->status;
	return r->ended;
}

uint64_t traj_reader_frames(const struct traj_reader *r)
{
	return r->frames;
}

void traj_reader_close(struct traj_reader *r)
{
	if (r == NULL)
		return;
	if (r->fp && !r->is_stdin)
		fclose(r->fp);
	free(r->h.generator);
	free(r->h.scenario);
	util_free(r->raw);
	util_free(r->zbuf);
	free(r);
}
