/* traj_read.c: reads trajectories frame by frame: the binary format, with
 * every CRC checked so a damaged or cut file is reported and never misread,
 * and CSV or gzip'd CSV; keeps a content digest of what it read. */
#include "config.h"
#include "traj.h"

#include <errno.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#define CSV_LINE_MAX 4096

struct traj_reader {
	gzFile gz;          /* zlib reads gzip and passes anything else through */
	const char *name;
	struct traj_header h;
	unsigned char *raw, *zbuf;
	size_t raw_len, zcap;
	uint64_t frames, first_step, last_step;
	int ended;
	enum traj_status status;
	EVP_MD_CTX *md;
	/* CSV: the line read ahead, its number, and the first frame, read at
	 * open time to learn the count. */
	char line[CSV_LINE_MAX];
	int have_line;
	uint64_t line_no;
	float *first[6];
	uint64_t first_frame_step;
	int first_pending;
};

/* Reads exactly n bytes: 1 when read, 0 at end of input before the first
 * byte, -1 when the input ends part way or fails. */
static int read_exact(struct traj_reader *r, void *p, size_t n)
{
	size_t got = 0;

	while (got < n) {
		unsigned chunk = n - got > (1u << 30) ? (1u << 30) : (unsigned)(n - got);
		int k = gzread(r->gz, (char *)p + got, chunk);

		if (k <= 0)
			break;
		got += (size_t)k;
	}
	if (got == n)
		return 1;
	return got == 0 ? 0 : -1;
}

static void digest_frame(struct traj_reader *r, uint64_t step, const unsigned char *raw,
			 size_t len)
{
	unsigned char h[12];

	traj_put_u64(h, step);
	traj_put_u32(h + 8, (uint32_t)r->h.count);
	EVP_DigestUpdate(r->md, h, sizeof h);
	EVP_DigestUpdate(r->md, raw, len);
}

void traj_reader_digest(const struct traj_reader *r, char hex[TRAJ_DIGEST_HEX])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned len = 0, i;
	EVP_MD_CTX *copy = EVP_MD_CTX_new();

	hex[0] = '\0';
	if (copy == NULL || !EVP_MD_CTX_copy_ex(copy, r->md) ||
	    !EVP_DigestFinal_ex(copy, md, &len)) {
		EVP_MD_CTX_free(copy);
		return;
	}
	for (i = 0; i < len && i < 32; i++)
		sprintf(hex + 2 * i, "%02x", md[i]);
	EVP_MD_CTX_free(copy);
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

static int alloc_buffers(struct traj_reader *r, struct util_err *err)
{
	size_t per = (size_t)(2 * r->h.dims) * sizeof(float);

	if (util_mul_size((size_t)r->h.count, per, &r->raw_len) != 0) {
		util_err_set(err, "%s: frame size overflows", r->name);
		return -1;
	}
	r->zcap = compressBound(r->raw_len);
	if (!(r->raw = util_alloc(r->raw_len, 1, err)) ||
	    (r->h.format == TRAJ_BIN && !(r->zbuf = util_alloc(r->zcap, 1, err))))
		return -1;
	return 0;
}

/* The binary header, after its 8-byte magic was read. */
static int open_bin(struct traj_reader *r, const unsigned char *magic, struct util_err *err)
{
	unsigned char h[TRAJ_HEADER_FIXED], c[4];
	uint32_t fields, gl, jl;
	uLong crc;

	memcpy(h, magic, TRAJ_MAGIC_LEN);
	if (read_exact(r, h + TRAJ_MAGIC_LEN, sizeof h - TRAJ_MAGIC_LEN) != 1) {
		util_err_set(err, "%s: header cut short", r->name);
		return -1;
	}
	r->h.format = TRAJ_BIN;
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
		return -1;
	}
	if (r->h.flags != 0) {
		util_err_set(err, "%s: header flags 0x%x are unknown to this reader", r->name,
			     (unsigned)r->h.flags);
		return -1;
	}
	if ((r->h.dims != 2 && r->h.dims != 3) || fields != (uint32_t)(2 * r->h.dims) ||
	    r->h.count == 0 || r->h.count > UINT32_MAX || gl > TRAJ_GENERATOR_MAX ||
	    jl > TRAJ_SCENARIO_MAX) {
		util_err_set(err, "%s: damaged header", r->name);
		return -1;
	}
	crc = crc32(0L, h, sizeof h);
	if (!(r->h.generator = read_string(r, gl, &crc)) ||
	    !(r->h.scenario = read_string(r, jl, &crc)) || read_exact(r, c, 4) != 1) {
		util_err_set(err, "%s: header cut short", r->name);
		return -1;
	}
	if (traj_get_u32(c) != (uint32_t)crc) {
		util_err_set(err, "%s: header CRC mismatch", r->name);
		return -1;
	}
	return alloc_buffers(r, err);
}

/* ---- CSV ---------------------------------------------------------------- */

/* Next line into r->line without its newline: 1, 0 at the end, -1 on error. */
static int csv_next_line(struct traj_reader *r, struct util_err *err)
{
	size_t len;

	if (gzgets(r->gz, r->line, sizeof r->line) == NULL) {
		int e;

		gzerror(r->gz, &e);
		if (e != Z_OK && e != Z_BUF_ERROR) {
			util_err_set(err, "%s: read error after line %llu", r->name,
				     (unsigned long long)r->line_no);
			return -1;
		}
		return 0;
	}
	r->line_no++;
	len = strlen(r->line);
	if (len == 0 || r->line[len - 1] != '\n') {
		if (len == sizeof r->line - 1) {
			util_err_set(err, "%s:%llu: line too long", r->name,
				     (unsigned long long)r->line_no);
			return -1;
		}
		util_err_set(err, "%s:%llu: file cut short in a line", r->name,
			     (unsigned long long)r->line_no);
		return -1;
	}
	r->line[len - 1] = '\0';
	return 1;
}

/* Parses "step,id,v0,...,vk" from r->line. */
static int csv_parse(struct traj_reader *r, uint64_t *step, uint64_t *id, float *v,
		     struct util_err *err)
{
	char *p = r->line, *end;
	int f, nf = 2 * r->h.dims;

	errno = 0;
	*step = strtoull(p, &end, 10);
	if (end == p || *end != ',' || errno)
		goto bad;
	p = end + 1;
	*id = strtoull(p, &end, 10);
	if (end == p || errno)
		goto bad;
	for (f = 0; f < nf; f++) {
		if (*end != ',')
			goto bad;
		p = end + 1;
		v[f] = strtof(p, &end);
		if (end == p)
			goto bad;
	}
	if (*end != '\0')
		goto bad;
	return 0;
bad:
	util_err_set(err, "%s:%llu: expected %d comma-separated numbers", r->name,
		     (unsigned long long)r->line_no, nf + 2);
	return -1;
}

/* The header line (its first bytes already read as magic), then the first
 * frame, whose length is the count. */
static int open_csv(struct traj_reader *r, const unsigned char *magic, size_t got,
		    struct util_err *err)
{
	size_t cap = 1024, n = 0;
	int f, rc;

	r->h.format = gzdirect(r->gz) ? TRAJ_CSV : TRAJ_CSV_GZ;
	memcpy(r->line, magic, got);
	if (gzgets(r->gz, r->line + got, (int)(sizeof r->line - got)) == NULL && got == 0) {
		util_err_set(err, "%s: empty file", r->name);
		return -1;
	}
	r->line_no = 1;
	if (strcmp(r->line, "step,id,x,y,vx,vy\n") == 0)
		r->h.dims = 2;
	else if (strcmp(r->line, "step,id,x,y,z,vx,vy,vz\n") == 0)
		r->h.dims = 3;
	else {
		util_err_set(err, "%s: not a boidsim trajectory (neither the binary format "
			     "nor a boidsim CSV header)", r->name);
		return -1;
	}
	if (!(r->h.generator = strdup("")) || !(r->h.scenario = strdup("")))
		goto oom;
	for (f = 0; f < 2 * r->h.dims; f++)
		if (!(r->first[f] = malloc(cap * sizeof(float))))
			goto oom;
	while ((rc = csv_next_line(r, err)) == 1) {
		uint64_t step, id;
		float v[6];

		if (csv_parse(r, &step, &id, v, err) != 0)
			return -1;
		if (n > 0 && step != r->first_frame_step) {
			r->have_line = 1;
			break;
		}
		if (id != n) {
			util_err_set(err, "%s:%llu: expected boid %zu, got %llu", r->name,
				     (unsigned long long)r->line_no, n, (unsigned long long)id);
			return -1;
		}
		r->first_frame_step = step;
		if (n == cap) {
			cap *= 2;
			for (f = 0; f < 2 * r->h.dims; f++) {
				float *nb = realloc(r->first[f], cap * sizeof(float));

				if (nb == NULL)
					goto oom;
				r->first[f] = nb;
			}
		}
		for (f = 0; f < 2 * r->h.dims; f++)
			r->first[f][n] = v[f];
		n++;
	}
	if (rc < 0)
		return -1;
	if (n == 0) {
		util_err_set(err, "%s: no frames after the header", r->name);
		return -1;
	}
	r->h.count = n;
	r->first_pending = 1;
	return alloc_buffers(r, err);
oom:
	util_err_set(err, "out of memory");
	return -1;
}

static int read_csv_frame(struct traj_reader *r, uint64_t *step, float *const fields[6],
			  struct util_err *err)
{
	size_t n = (size_t)r->h.count, k;
	int f, nf = 2 * r->h.dims, rc;

	if (r->first_pending) {
		r->first_pending = 0;
		for (f = 0; f < nf; f++)
			memcpy(fields[f], r->first[f], n * sizeof(float));
		*step = r->first_frame_step;
		return 1;
	}
	for (k = 0; k < n; k++) {
		uint64_t s, id;
		float v[6];

		if (r->have_line) {
			r->have_line = 0;
		} else if ((rc = csv_next_line(r, err)) != 1) {
			if (rc == 0 && k == 0)
				return 0;
			if (rc == 0)
				util_err_set(err, "%s: file cut short in frame %llu (%llu complete "
					     "frames)", r->name, (unsigned long long)r->frames,
					     (unsigned long long)r->frames);
			return -1;
		}
		if (csv_parse(r, &s, &id, v, err) != 0)
			return -1;
		if (k == 0)
			*step = s;
		if (s != *step || id != k) {
			util_err_set(err, "%s:%llu: expected step %llu boid %zu", r->name,
				     (unsigned long long)r->line_no, (unsigned long long)*step, k);
			return -1;
		}
		for (f = 0; f < nf; f++)
			fields[f][k] = v[f];
	}
	return 1;
}

/* ---- binary frames ------------------------------------------------------ */

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
	    traj_get_u64(e + 8) != r->frames || traj_get_u32(e + 4) > TRAJ_INTERRUPTED ||
	    (r->frames > 0 && traj_get_u64(e + 16) != r->last_step)) {
		util_err_set(err, "%s: damaged end record after %llu frames", r->name,
			     (unsigned long long)r->frames);
		return -1;
	}
	r->ended = 1;
	r->status = (enum traj_status)traj_get_u32(e + 4);
	return 0;
}

static int read_bin_frame(struct traj_reader *r, uint64_t *step, struct util_err *err)
{
	unsigned char h[TRAJ_FRAME_HEADER];
	unsigned long long nf = (unsigned long long)r->frames;
	uint64_t raw_len, zlen;
	uLongf out_len;
	int rc;

	rc = read_exact(r, h, 4);
	if (rc == 0)
		return 0; /* a killed run: the file ends after a complete frame */
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
	*step = traj_get_u64(h + 4);
	return 1;
cut:
	util_err_set(err, "%s: file cut short in frame %llu (%llu complete frames)",
		     r->name, nf, nf);
	return -1;
}

int traj_read_frame(struct traj_reader *r, uint64_t *step, float *const fields[6],
		    struct util_err *err)
{
	size_t n = (size_t)r->h.count, i, off = 0;
	int f, nf = 2 * r->h.dims, rc;

	if (r->ended)
		return 0;
	if (r->h.format == TRAJ_BIN) {
		rc = read_bin_frame(r, step, err);
		if (rc != 1)
			return rc;
		for (f = 0; f < nf; f++)
			for (i = 0; i < n; i++, off += 4) {
				uint32_t u = traj_get_u32(r->raw + off);

				memcpy(&fields[f][i], &u, 4);
			}
	} else {
		rc = read_csv_frame(r, step, fields, err);
		if (rc != 1)
			return rc;
		for (f = 0; f < nf; f++)
			for (i = 0; i < n; i++, off += 4) {
				uint32_t u;

				memcpy(&u, &fields[f][i], 4);
				traj_put_u32(r->raw + off, u);
			}
	}
	digest_frame(r, *step, r->raw, r->raw_len);
	if (r->frames == 0)
		r->first_step = *step;
	r->last_step = *step;
	r->frames++;
	return 1;
}

struct traj_reader *traj_reader_open(const char *path, struct util_err *err)
{
	struct traj_reader *r = calloc(1, sizeof *r);
	unsigned char magic[TRAJ_MAGIC_LEN];
	int is_stdin = strcmp(path, "-") == 0, fd, got;

	if (r == NULL) {
		util_err_set(err, "out of memory");
		return NULL;
	}
	r->name = is_stdin ? "<stdin>" : path;
	r->md = EVP_MD_CTX_new();
	if (r->md == NULL || !EVP_DigestInit_ex(r->md, EVP_sha256(), NULL)) {
		util_err_set(err, "cannot start SHA-256");
		goto fail;
	}
	fd = is_stdin ? dup(STDIN_FILENO) : -1;
	r->gz = is_stdin ? (fd < 0 ? NULL : gzdopen(fd, "rb")) : gzopen(path, "rb");
	if (r->gz == NULL) {
		util_err_set(err, "%s: cannot open: %s", r->name, strerror(errno));
		if (fd >= 0)
			close(fd);
		goto fail;
	}
	gzbuffer(r->gz, 1 << 17);
	got = gzread(r->gz, magic, sizeof magic);
	if (got == (int)sizeof magic && memcmp(magic, TRAJ_MAGIC, TRAJ_MAGIC_LEN) == 0) {
		if (open_bin(r, magic, err) != 0)
			goto fail;
	} else if (got < 0) {
		util_err_set(err, "%s: cannot read: %s", r->name, strerror(errno));
		goto fail;
	} else if (open_csv(r, magic, (size_t)got, err) != 0) {
		goto fail;
	}
	return r;
fail:
	traj_reader_close(r);
	return NULL;
}

const struct traj_header *traj_reader_header(const struct traj_reader *r)
{
	return &r->h;
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

uint64_t traj_reader_first_step(const struct traj_reader *r)
{
	return r->first_step;
}

uint64_t traj_reader_last_step(const struct traj_reader *r)
{
	return r->last_step;
}

void traj_reader_close(struct traj_reader *r)
{
	int f;

	if (r == NULL)
		return;
	if (r->gz)
		gzclose(r->gz);
	EVP_MD_CTX_free(r->md);
	free(r->h.generator);
	free(r->h.scenario);
	for (f = 0; f < 6; f++)
		free(r->first[f]);
	util_free(r->raw);
	util_free(r->zbuf);
	free(r);
}
