/* traj_write.c: writes trajectories (binary, CSV, gzip'd CSV) to a
 * temporary file that is renamed into place only when the run ends well;
 * binary frames are transformed, cut into chunks and compressed in parallel. */
#include "config.h"
#include "traj.h"
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>
#ifdef _OPENMP
#include <omp.h>
#endif

/* A block of CSV rows: its text, and for .csv.gz its deflate block and
 * the dictionary that block starts from. */
struct csv_block {
	char *text;
	unsigned char *z, *dict;
	size_t len, zlen, z_cap;
	uLong crc; /* the text's CRC-32 */
	int rc;    /* zlib's result */
};

/* deflate's window: what a block's dictionary holds of the text before */
#define TRAJ_GZ_DICT 32768u

/* The rows of a CSV block, and the most bytes a row takes: the step (20
 * digits), group and id (10 each), and each value at most 16 ("%.9g" of
 * a float: "-1.17549435e-38", "-nan"), with the separators. Fixed, so
 * that the deflate blocks of a .csv.gz do not depend on the threads. */
#define TRAJ_CSV_ROWS 16384
#define TRAJ_CSV_ROW_MAX (20 + 1 + 10 + 1 + 10 + TRAJ_FIELDS_MAX * (1 + 16) + 1)

/* One byte plane of the transformed stream: byte b of field f's values. */
struct plane {
	int f, b;
};

struct traj_writer {
	enum traj_format fmt;
	size_t parallel_min; /* traj_writer_set_parallel_min */
	int dims, nf;      /* nf = 2 * dims float fields, + 1 with a hue */
	int nfs;           /* fields stored: nf, + 2 (id, group) with agents */
	uint32_t flags;
	int agents;        /* TRAJ_FLAG_AGENTS */
	uint64_t count;    /* boids; with agents the most a frame may hold */
	uint64_t n, prev_n; /* agents in the frame being written, and in the last */
	FILE *fp;
	int gzip;          /* .csv.gz: the text goes out as one gzip stream */
	int to_stdout;
	char *path;        /* final name */
	char *tmp;         /* temporary name while writing */
	char *final;       /* where the file ended up */
	uint64_t frames, last_step;
	uint64_t pos;      /* bytes written so far: the offset of the next record */
	uLong sum;         /* CRC-32 of those bytes (the text, for .csv.gz) */
	uint64_t synced;   /* the file's size at the last traj_writer_sync */
	int keep;          /* traj_writer_keep: cut the file to keep_size, never remove it */
	int partial;       /* traj_writer_set_partial */
	uint64_t keep_size;
	int level;         /* the compressor's level for binary frames */
	int zstd;          /* TRAJ_FLAG_ZSTD: chunks are Zstandard frames */
	double precision;  /* > 0: lossy frames of this precision */
	double predict_dt; /* > 0: lossless delta frames predict positions (codec 5) */
	unsigned char prelude[TRAJ_PREDICT_PRELUDE]; /* codec 5: the stream's first bytes */
	uint32_t chunk, key_interval;
	uint64_t chain;    /* frames written since the last key frame, itself included */
	/* The frame being written (its fields) and the state delta frames
	 * need: the previous frame's bits, or its quantised integers. */
	float *const *cur;
	const uint32_t *cur_id, *cur_group; /* with agents */
	uint32_t *prev;     /* the previous frame's fields where they were copied */
	/* The previous frame's values of each stored field, float bits or u32,
	 * accessed by memcpy: a row of prev, or an array of own. */
	unsigned char *pv[TRAJ_STORED_FIELDS_MAX];
	/* traj_writer_fields: two sets of nf arrays of count floats, filled by
	 * the caller in turn, so that a frame written from one set stays as the
	 * next delta's base where it is, instead of being copied into prev (16
	 * MB a frame of 2D 1M, docs/PERFORMANCE.md, "2026-12-08"). */
	float *own[2][TRAJ_FIELDS_MAX];
	int own_next;       /* the set traj_writer_fields hands out next */
	int64_t *q, *qprev;
	size_t vcap;        /* values the frame buffers (prev, or q to exc) hold */
	uint64_t *zz;       /* lossy: zigzag differences, field after field */
	unsigned char *exc; /* lossy: 1 where a value is stored as an exception */
	/* The transformed stream T of the frame, its planes, and the chunks. */
	unsigned char *tbuf;
	size_t tcap, tlen, tbase;
	struct plane planes[TRAJ_STORED_FIELDS_MAX * 8];
	int nplanes;
	unsigned char *zbuf, *table;
	size_t zstride, zcap, table_cap, nchunk_cap;
	uint32_t *clen;
	uLong *ccrc;
	int *crc_rc;
	/* Two deflate streams per thread (zs[2 t] at the file's level, zs[2 t
	 * + 1] storing), reset for each chunk: a fresh stream per chunk costs
	 * its allocation and page faults every time, and switching one
	 * stream's level with deflateParams flushes data at the old level in
	 * zlib before 1.2.12, which would make the bytes depend on which
	 * chunks a thread compressed before. nzs counts threads. */
	z_stream **zs;
	ZSTD_CCtx **zc;    /* with zstd, one context per thread instead */
	int nzs;
	/* What the level's stream writes for a whole chunk of zeros (zero_len
	 * bytes; 0: not made yet), which is most chunks of some frames: the
	 * position planes of boids moved as predicted, ids and groups. */
	unsigned char *zero_z;
	size_t zero_cap;
	uint32_t zero_len, zero_zlen;
	struct traj_index_entry *idx; /* one per frame written */
	size_t nidx, idx_cap;
	const uint32_t *ids; /* CSV: the ids of a subset, or NULL */
	/* CSV: a frame's rows in blocks of TRAJ_CSV_ROWS, one block a thread
	 * at a time, formatted (and for .csv.gz compressed) there, then
	 * written in order; nblk blocks at a time. */
	struct csv_block *blk;
	int nblk;
	unsigned char *hz; /* .csv.gz: the deflate block of a put() */
	size_t hz_cap;
	/* .csv.gz: the text's last TRAJ_GZ_DICT bytes (hist_len of them),
	 * the dictionary of the next block */
	unsigned char *hist, *hist_tmp;
	size_t hist_len;
};

static const char *const CODEC_NAMES[TRAJ_CODECS] = {
	"zlib", "shuffle", "xor", "quant", "quant-delta", "predict"};

const char *const TRAJ_COMPRESSOR_NAMES[TRAJ_COMPRESSORS] = {"zstd", "zlib"};

uint32_t traj_compressor_flag(enum traj_compressor c)
{
	return c == TRAJ_ZSTD ? TRAJ_FLAG_ZSTD : 0;
}

int traj_compressor_parse(const char *name, enum traj_compressor *c)
{
	int i = util_name_index(name, TRAJ_COMPRESSOR_NAMES, TRAJ_COMPRESSORS);

	if (i < 0)
		return -1;
	*c = (enum traj_compressor)i;
	return 0;
}

const char *traj_codec_name(uint32_t codec)
{
	return codec < TRAJ_CODECS ? CODEC_NAMES[codec] : "unknown";
}

static const char *const FIELD_NAMES[2][TRAJ_FIELDS_MAX] = {
	{"x", "y", "vx", "vy", "hue"}, {"x", "y", "z", "vx", "vy", "vz", "hue"}};

const char *traj_field_name(int dims, int field)
{
	return field >= 0 && field <= 2 * dims ? FIELD_NAMES[dims == 3][field] : "?";
}

static const char *const FORMAT_NAMES[] = {"bin", "csv", "csv.gz"};

int traj_format_parse(const char *name, enum traj_format *fmt)
{
	int i = util_name_index(name, FORMAT_NAMES, 3);

	if (i < 0)
		return -1;
	*fmt = (enum traj_format)i;
	return 0;
}

const char *traj_format_name(enum traj_format fmt)
{
	return FORMAT_NAMES[fmt];
}

static int ends_with(const char *s, const char *suffix)
{
	size_t ls = strlen(s), lx = strlen(suffix);

	return ls > lx && strcmp(s + ls - lx, suffix) == 0;
}

int traj_format_guess(const char *path, enum traj_format *fmt)
{
	if (ends_with(path, ".csv.gz"))
		*fmt = TRAJ_CSV_GZ;
	else if (ends_with(path, ".csv"))
		*fmt = TRAJ_CSV;
	else if (ends_with(path, ".bin"))
		*fmt = TRAJ_BIN;
	else
		return -1;
	return 0;
}

static int gzip_block(struct traj_writer *w, int tid, const unsigned char *dict, size_t dlen,
		      const void *text, size_t len, unsigned char **out, size_t *cap,
		      size_t *olen);
static size_t gz_dict(const struct traj_writer *w, long kk, unsigned char *out);
static void gz_history(struct traj_writer *w, const void *p, size_t n);
static int reserve_streams(struct traj_writer *w, struct util_err *err);

/* Writes n bytes whose CRC-32 the caller has (crc, from crc32_z(0, p,
 * n)): the file's running CRC takes it with crc32_combine, so that a
 * frame's compressed chunks, summed by the threads that made them, are not
 * read a second time by one thread. For .csv.gz the bytes are text, which
 * goes out as a deflate block of its own (gzip_block). */
static int put_summed(struct traj_writer *w, const void *p, size_t n, uLong crc,
		      struct util_err *err)
{
	size_t zlen;
	int rc;

	w->pos += n;
	w->sum = crc32_combine(w->sum, crc, (z_off_t)n);
	if (w->gzip) {
		size_t dlen = gz_dict(w, 0, w->hist_tmp);

		if ((rc = gzip_block(w, 0, w->hist_tmp, dlen, p, n, &w->hz, &w->hz_cap, &zlen)) !=
		    Z_OK) {
			util_err_set(err, "%s: %s (zlib %d)", w->path,
				     rc == Z_MEM_ERROR ? "out of memory" : "compression failed", rc);
			return -1;
		}
		gz_history(w, p, n);
		p = w->hz;
		n = zlen;
	}
	if (fwrite(p, 1, n, w->fp) != n) {
		util_err_set(err, "%s: write failed: %s", w->path, strerror(errno));
		return -1;
	}
	return 0;
}

static int put(struct traj_writer *w, const void *p, size_t n, struct util_err *err)
{
	/* (crc32 of a NULL buffer would restart the CRC) */
	return put_summed(w, p, n, n > 0 ? crc32_z(0L, p, n) : 0L, err);
}


static int write_bin_header(struct traj_writer *w, uint64_t seed, const char *gen,
			    const char *json, struct util_err *err)
{
	size_t gl = strlen(gen), jl = strlen(json);
	unsigned char h[TRAJ_HEADER_FIXED], c[4];
	uLong crc;

	if (gl > TRAJ_GENERATOR_MAX || jl > TRAJ_SCENARIO_MAX) {
		util_err_set(err, "%s: header strings too long", w->path);
		return -1;
	}
	memcpy(h, TRAJ_MAGIC, TRAJ_MAGIC_LEN);
	h[8] = TRAJ_VERSION;
	h[9] = 0;
	h[10] = (unsigned char)w->dims;
	h[11] = 0;
	traj_put_u32(h + 12, w->flags);
	traj_put_u64(h + 16, w->count);
	traj_put_u64(h + 24, seed);
	traj_put_u32(h + 32, (uint32_t)w->nfs);
	traj_put_u32(h + 36, (uint32_t)gl);
	traj_put_u32(h + 40, (uint32_t)jl);
	crc = crc32(0L, h, sizeof h);
	crc = crc32(crc, (const Bytef *)gen, (uInt)gl);
	crc = crc32(crc, (const Bytef *)json, (uInt)jl);
	traj_put_u32(c, (uint32_t)crc);
	if (put(w, h, sizeof h, err) || put(w, gen, gl, err) || put(w, json, jl, err) ||
	    put(w, c, 4, err))
		return -1;
	return 0;
}

struct traj_writer *traj_writer_open(const char *path, enum traj_format fmt,
				     int dims, int hue, uint32_t flags, uint64_t count, uint64_t seed,
				     const char *generator, const char *scenario_json,
				     int level, double precision, struct util_err *err)
{
	struct traj_writer *w = calloc(1, sizeof *w);
	struct stat st;
	int fd = -1;

	if (w != NULL)
		w->parallel_min = CTX_PARALLEL_MIN_DEFAULT;
	if (w == NULL || !(w->path = strdup(path))) {
		util_err_set(err, "out of memory");
		free(w);
		return NULL;
	}
	w->fmt = fmt;
	w->level = level;
	w->dims = dims;
	w->nf = 2 * dims + (hue ? 1 : 0);
	w->agents = (flags & TRAJ_FLAG_AGENTS) != 0;
	w->nfs = w->nf + (w->agents ? TRAJ_AGENT_FIELDS : 0);
	/* (a CSV file has no chunks to compress) */
	w->flags = fmt == TRAJ_BIN ? flags : flags & ~TRAJ_FLAG_ZSTD;
	w->zstd = (w->flags & TRAJ_FLAG_ZSTD) != 0;
	w->count = count;
	w->n = count;
	w->chunk = TRAJ_CHUNK_SIZE;
	w->key_interval = TRAJ_KEY_INTERVAL;
	if (!(precision >= 0 && precision <= TRAJ_PRECISION_MAX) || level < 0 || level > 9) {
		util_err_set(err, "%s: bad precision %g or compression level %d", path,
			     precision, level);
		goto fail;
	}
	if ((flags & ~TRAJ_FLAGS_KNOWN) != 0) {
		util_err_set(err, "%s: unknown trajectory flags 0x%" PRIx32, path, flags);
		goto fail;
	}
	if (count == 0 || count > UINT32_MAX) {
		util_err_set(err, "%s: %" PRIu64 " %s: expected 1 to %" PRIu32, path, count,
			     w->agents ? "agents a frame at most" : "boids", UINT32_MAX);
		goto fail;
	}
	w->precision = precision;
	w->to_stdout = strcmp(path, "-") == 0;
	if (w->to_stdout) {
		fd = dup(STDOUT_FILENO);
		if (fd < 0) {
			util_err_set(err, "stdout: %s", strerror(errno));
			goto fail;
		}
	} else if ((fd = outfile_fd_of(path)) >= 0) {
		/* a descriptor's name (/dev/stdout): through the descriptor, as
		 * "-" (outfile.h) */
		w->to_stdout = 1;
		fd = dup(fd);
		if (fd < 0) {
			util_err_set(err, "%s: %s", path, strerror(errno));
			goto fail;
		}
	} else if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		/* A device or a pipe (/dev/null, a FIFO) is written as a stream:
		 * renaming a file over it would destroy the node. */
		w->to_stdout = 1;
		fd = open(path, O_WRONLY | O_CLOEXEC);
		if (fd < 0) {
			util_err_set(err, "%s: cannot open: %s", path, strerror(errno));
			goto fail;
		}
	} else if ((fd = outfile_temp(w->path, &w->tmp, err)) < 0) {
		goto fail;
	}
	w->gzip = fmt == TRAJ_CSV_GZ;
	w->fp = fdopen(fd, "wb");
	if (w->fp == NULL) {
		close(fd);
		util_err_set(err, "%s: %s", w->path, strerror(errno));
		goto fail;
	}
	setvbuf(w->fp, NULL, _IOFBF, 1 << 17);
	if (fmt == TRAJ_BIN) {
		size_t values, bytes;

		/* The largest stream a frame can make: lossy, every value an
		 * exception, 8 plane bytes and 12 exception bytes each. */
		if (util_mul_size((size_t)count, (size_t)w->nfs, &values) != 0 ||
		    util_mul_size(values, 8 + TRAJ_QUANT_EXCEPTION, &bytes) != 0 ||
		    bytes > SIZE_MAX / 2) {
			util_err_set(err, "%s: frame size overflows", w->path);
			goto fail;
		}
		/* The frame buffers grow with the frames written (frame_room):
		 * with agents the count is only a bound. */
		if (write_bin_header(w, seed, generator, scenario_json, err) != 0)
			goto fail;
	} else {
		char hdr[64];
		int f;

		strcpy(hdr, w->agents ? "step,group,id" : "step,id");
		for (f = 0; f < w->nf; f++)
			sprintf(hdr + strlen(hdr), ",%s", traj_field_name(dims, f));
		strcat(hdr, "\n");
		if (w->gzip) {
			/* RFC 1952: no name, no time; XFL as zlib sets it for
			 * the level; OS 3 (Unix) wherever it runs */
			unsigned char gh[10] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3};

			gh[8] = level == 9 ? 2 : level < 2 ? 4 : 0;
			if (!(w->hist = util_alloc_raw(TRAJ_GZ_DICT, 1, err)) ||
			    !(w->hist_tmp = util_alloc_raw(TRAJ_GZ_DICT, 1, err)))
				goto fail;
			if (fwrite(gh, 1, sizeof gh, w->fp) != sizeof gh) {
				util_err_set(err, "%s: write failed: %s", w->path, strerror(errno));
				goto fail;
			}
		}
		if (reserve_streams(w, err) != 0 || put(w, hdr, strlen(hdr), err) != 0)
			goto fail;
	}
	return w;
fail:
	traj_writer_abort(w, NULL);
	return NULL;
}

void traj_writer_set_chunk_size(struct traj_writer *w, uint32_t bytes)
{
	if (bytes >= TRAJ_CHUNK_MIN && bytes <= TRAJ_CHUNK_MAX)
		w->chunk = bytes;
}

void traj_writer_set_key_interval(struct traj_writer *w, uint32_t interval)
{
	if (interval >= 1)
		w->key_interval = interval;
}

void traj_writer_set_partial(struct traj_writer *w)
{
	w->partial = 1;
}

void traj_writer_set_predict(struct traj_writer *w, double dt)
{
	w->predict_dt = dt > 0 && isfinite(dt) ? dt : 0;
}

/* Bytes needed to hold v: the number of its planes that are not zero. */
static int byte_width(uint64_t v)
{
	int k = 0;

	while (v != 0) {
		k++;
		v >>= 8;
	}
	return k;
}

/* The writer's quantisation of one value: q = x/p (binary64) rounded to
 * the nearest integer, ties to even. It fails, making the value an
 * exception stored bit for bit, when x is not finite, when |x/p| > 2^53,
 * or when the reconstruction the reader will make is further than p/2 from
 * x (which rounding to binary32 can cause near the half-way points). The
 * difference of the two binary32 values is exact in binary64 here, and
 * doubling is exact, so the test is exact. */
static int quantise_one(float x, double p, int64_t *q)
{
	double t = (double)x / p, r;
	float y;

	if (!(fabs(t) <= TRAJ_QUANT_MAX))
		return -1;
	r = nearbyint(t);
	*q = (int64_t)r;
	y = traj_dequantise(*q, p);
	return 2.0 * fabs((double)y - (double)x) <= p ? 0 : -1;
}

/* The u32 value of integer field f (>= nf: id, then group) of agent i. */
static uint32_t int_field(const struct traj_writer *w, size_t f, size_t i)
{
	return f == (size_t)w->nf ? w->cur_id[i] : w->cur_group[i];
}

/* Lossy frames: quantises every value and lays out the stream's prelude
 * and exceptions; the planes are filled chunk by chunk later. The id and
 * group fields of agents are stored exactly: q is the value itself. */
static int quantise_frame(struct traj_writer *w, int key, struct util_err *err)
{
	size_t n = (size_t)w->n, f, nexc = 0;
	unsigned char *t;
	size_t len, off;
	int b;

	w->nplanes = 0;
	for (f = 0; f < (size_t)w->nfs; f++) {
		const float *x = f < (size_t)w->nf ? w->cur[f] : NULL;
		const int64_t *qp = w->qprev + f * n;
		int64_t *qc = w->q + f * n;
		uint64_t *z = w->zz + f * n, zmax = 0;
		unsigned char *ex = w->exc + f * n;
		size_t i, e = 0;

		if (x == NULL) {
			for (i = 0; i < n; i++) {
				int64_t qi = (int64_t)int_field(w, f, i);

				qc[i] = qi;
				z[i] = traj_zigzag(key ? (uint64_t)qi
						       : (uint64_t)qi - (uint64_t)qp[i]);
				if (z[i] > zmax)
					zmax = z[i];
				ex[i] = 0;
			}
			for (b = 0; b < byte_width(zmax); b++) {
				w->planes[w->nplanes].f = (int)f;
				w->planes[w->nplanes++].b = b;
			}
			continue;
		}
		#pragma omp parallel for schedule(static) reduction(max: zmax) reduction(+: e) \
			if (n >= w->parallel_min)
		for (i = 0; i < n; i++) {
			int64_t qi;
			int bad = quantise_one(x[i], w->precision, &qi) != 0;

			/* An exception leaves the integer where it was, so the
			 * next frame's difference stays small. */
			if (bad)
				qi = key ? 0 : qp[i];
			qc[i] = qi;
			z[i] = traj_zigzag(key ? (uint64_t)qi : (uint64_t)qi - (uint64_t)qp[i]);
			if (z[i] > zmax)
				zmax = z[i];
			ex[i] = (unsigned char)bad;
			e += (size_t)bad;
		}
		for (b = 0; b < byte_width(zmax); b++) {
			w->planes[w->nplanes].f = (int)f;
			w->planes[w->nplanes++].b = b;
		}
		nexc += e;
	}
	w->tbase = TRAJ_QUANT_PRELUDE + (size_t)w->nfs;
	len = w->tbase + (size_t)w->nplanes * n + nexc * TRAJ_QUANT_EXCEPTION;
	if (util_reserve(&w->tbuf, &w->tcap, len, err) != 0)
		return -1;
	t = w->tbuf;
	traj_put_f64(t, w->precision);
	traj_put_u64(t + 8, (uint64_t)nexc);
	for (f = 0; f < (size_t)w->nfs; f++)
		t[TRAJ_QUANT_PRELUDE + f] = 0;
	for (b = 0; b < w->nplanes; b++)
		t[TRAJ_QUANT_PRELUDE + w->planes[b].f]++;
	off = w->tbase + (size_t)w->nplanes * n;
	for (f = 0; nexc > 0 && f < (size_t)w->nf; f++) {
		size_t i;

		for (i = 0; i < n; i++)
			if (w->exc[f * n + i]) {
				uint32_t u;

				memcpy(&u, &w->cur[f][i], 4);
				traj_put_u64(t + off, (uint64_t)(f * n + i));
				traj_put_u32(t + off + 8, u);
				off += TRAJ_QUANT_EXCEPTION;
			}
	}
	w->tlen = len;
	return 0;
}

/* Fills T[a, e) where it falls in the planes: byte b of each value (the
 * float32 bits, XOR the previous frame's for a delta frame; or the
 * zigzag difference for a lossy frame), in id order, plane after plane. */
static void fill_planes(const struct traj_writer *w, size_t a, size_t e, int delta,
			unsigned char *dst)
{
	size_t n = (size_t)w->n, end = w->tbase + (size_t)w->nplanes * n, a0 = a;

	if (a < w->tbase)
		a = w->tbase;
	if (e > end)
		e = end;
	while (a < e) {
		size_t j = (a - w->tbase) / n, i0 = (a - w->tbase) % n, i1, i;
		unsigned char *out = dst + (a - a0) - i0; /* out[i0] is byte a */
		int f = w->planes[j].f, sh = 8 * w->planes[j].b;

		i1 = i0 + (e - a) < n ? i0 + (e - a) : n;
		if (w->precision > 0) {
			const uint64_t *z = w->zz + (size_t)f * n;

			for (i = i0; i < i1; i++)
				out[i] = (unsigned char)(z[i] >> sh);
		} else if (f < w->nf) {
			/* One loop per case, and simd: at -O2 gcc vectorizes
			 * neither the loop with the test inside nor, for its
			 * cost model, the one without. */
			const float *restrict x = w->cur[f];
			const unsigned char *restrict p = w->pv[f];

			if (delta) {
				#pragma omp simd
				for (i = i0; i < i1; i++) {
					uint32_t u, v;

					memcpy(&u, &x[i], 4);
					memcpy(&v, p + 4 * i, 4);
					out[i] = (unsigned char)((u ^ v) >> sh);
				}
			} else {
				#pragma omp simd
				for (i = i0; i < i1; i++) {
					uint32_t u;

					memcpy(&u, &x[i], 4);
					out[i] = (unsigned char)(u >> sh);
				}
			}
		} else {
			const unsigned char *p = w->pv[f];

			for (i = i0; i < i1; i++) {
				uint32_t u = int_field(w, (size_t)f, i), v;

				if (delta) {
					memcpy(&v, p + 4 * i, 4);
					u ^= v;
				}
				out[i] = (unsigned char)(u >> sh);
			}
		}
		a += i1 - i0;
	}
}

/* Whether a chunk's bytes look like noise, as the low bytes of the
 * mantissas do: over s samples (every 16th byte) with c(v) of value v,
 * sum c(v) (c(v) - 1), the pairs of equal samples, is at most twice its
 * expectation for uniform bytes, s (s - 1) / 256. That ratio r estimates
 * 256 sum p(v)^2, so r <= 2 means a collision entropy of at least 7 bits a
 * byte. Measured on the planes of 2D and 3D 1M frames and a flocked 100k
 * run (key and delta, level 1, Z_RLE, 256 KiB chunks): chunks with r below
 * 1.25 compressed to 98-100% of their size, those from 1.25 to 2 to 94-98%,
 * at about 80 MB/s, a third of the writer's time for 1% of the file; those
 * from 2 to 5 to 83-93%, and the exponent planes (r of 20 or more) to
 * 1-65%. Integers only, so the choice depends on the bytes alone. */
int traj_chunk_is_noise(const unsigned char *in, size_t len)
{
	uint32_t count[256] = {0};
	uint64_t s = 0, sum2 = 0;
	size_t i;
	int b;

	for (i = 0; i < len; i += 16, s++)
		count[in[i]]++;
	if (s < 1024) /* too few samples to tell */
		return 0;
	for (b = 0; b < 256; b++)
		sum2 += (uint64_t)count[b] * count[b];
	return 256 * (sum2 - s) <= 2 * s * (s - 1);
}

/* One chunk as one zlib stream, with this thread's stream (a reset stream
 * writes the same bytes as a new one). Run-length matching (Z_RLE) is what
 * pays on byte planes: measured, it is smaller than zlib's default matching
 * at any level, and two to three times faster. Chunks that look like noise
 * are stored (level 0): deflate would spend most of a frame's time on them
 * for 6% at most. */
static int deflate_chunk(struct traj_writer *w, const unsigned char *in, size_t len,
			 unsigned char *out, size_t cap, uint32_t *out_len, int tid)
{
	int level, rc;
	z_stream *zs;

	level = w->level > 0 && traj_chunk_is_noise(in, len) ? 0 : w->level;
	zs = w->zs[2 * tid + (level == 0)];
	if (zs == NULL) {
		zs = calloc(1, sizeof *zs);
		if (zs == NULL)
			return Z_MEM_ERROR;
		rc = deflateInit2(zs, level, Z_DEFLATED, 15, 8,
				  level > 0 ? Z_RLE : Z_DEFAULT_STRATEGY);
		if (rc != Z_OK) {
			free(zs);
			return rc;
		}
		w->zs[2 * tid + (level == 0)] = zs;
	} else if ((rc = deflateReset(zs)) != Z_OK) {
		return rc;
	}
	zs->next_in = (Bytef *)(uintptr_t)in;
	zs->avail_in = (uInt)len;
	zs->next_out = out;
	zs->avail_out = (uInt)cap;
	rc = deflate(zs, Z_FINISH);
	*out_len = (uint32_t)zs->total_out;
	return rc == Z_STREAM_END ? Z_OK : (rc == Z_OK ? Z_BUF_ERROR : rc);
}

/* One chunk as one Zstandard frame, with this thread's context, or the
 * chunk itself: at level 0, when it looks like noise (as for zlib), or when
 * no frame shorter than the chunk exists, so that a reader tells a stored
 * chunk by its length alone. ZSTD_compress2 starts each chunk afresh from
 * the context's parameters: the bytes depend on the chunk alone, whichever
 * thread made them. Measured on the planes of 2D 1M frames (docs/
 * PERFORMANCE.md, "Zstandard chunks"): level 1 compresses as zlib's
 * run-length deflate does, at 3.5 times its speed. No checksum in the
 * frame: the frame's CRC-32 covers the chunk. */
static int zstd_chunk(struct traj_writer *w, const unsigned char *in, size_t len,
		      unsigned char *out, size_t cap, uint32_t *out_len, int tid)
{
	ZSTD_CCtx *zc;
	size_t r;

	if (w->level > 0 && !traj_chunk_is_noise(in, len)) {
		zc = w->zc[tid];
		if (zc == NULL) {
			if (!(zc = ZSTD_createCCtx()))
				return Z_MEM_ERROR;
			if (ZSTD_isError(ZSTD_CCtx_setParameter(zc, ZSTD_c_compressionLevel, w->level)) ||
			    ZSTD_isError(ZSTD_CCtx_setParameter(zc, ZSTD_c_checksumFlag, 0)) ||
			    ZSTD_isError(ZSTD_CCtx_setParameter(zc, ZSTD_c_contentSizeFlag, 1))) {
				ZSTD_freeCCtx(zc);
				return Z_STREAM_ERROR;
			}
			w->zc[tid] = zc;
		}
		/* room for any frame (chunk_bound): with less, zstd may give
		 * up on a frame that would have been shorter than the chunk */
		r = ZSTD_compress2(zc, out, cap, in, len);
		if (ZSTD_isError(r))
			return ZSTD_getErrorCode(r) == ZSTD_error_dstSize_tooSmall ? Z_BUF_ERROR
										 : Z_STREAM_ERROR;
		if (r < len) {
			*out_len = (uint32_t)r;
			return Z_OK;
		}
	}
	if (len > cap)
		return Z_BUF_ERROR;
	memcpy(out, in, len);
	*out_len = (uint32_t)len;
	return Z_OK;
}

/* One chunk compressed as the file's flags say, by the calling thread. */
static int compress_chunk(struct traj_writer *w, const unsigned char *in, size_t len,
			  unsigned char *out, size_t cap, uint32_t *out_len)
{
	int tid = 0;

	/* A chunk of zeros: the stream made once (zero_stream), the same bytes
	 * as the compressor's, without its pass over the chunk (for deflate at
	 * ~1 ns a byte, a third of a millisecond a chunk). */
	if (len > 0 && len == w->zero_len && in[0] == 0 && memcmp(in, in + 1, len - 1) == 0) {
		if (w->zero_zlen > cap)
			return Z_BUF_ERROR;
		memcpy(out, w->zero_z, w->zero_zlen);
		*out_len = w->zero_zlen;
		return Z_OK;
	}
#ifdef _OPENMP
	tid = omp_get_thread_num();
#endif
	if (tid >= w->nzs)
		return Z_MEM_ERROR;
	return w->zstd ? zstd_chunk(w, in, len, out, cap, out_len, tid)
		       : deflate_chunk(w, in, len, out, cap, out_len, tid);
}

/* The bound of one compressed chunk of len bytes. */
static size_t chunk_bound(const struct traj_writer *w, size_t len)
{
	return w->zstd ? ZSTD_compressBound(len) : compressBound((uLong)len);
}

/* The stream of a whole chunk of zeros at the file's level, made by this
 * thread's stream as any chunk is (a reset stream writes what a new one
 * does, so the bytes are deflate's own wherever the chunk falls). */
static int zero_stream(struct traj_writer *w, struct util_err *err)
{
	unsigned char *zero;
	uint32_t zlen;
	int rc;

	if (w->level == 0 || w->zero_len == w->chunk)
		return 0;
	w->zero_len = 0;
	if (util_reserve_raw(&w->zero_z, &w->zero_cap, chunk_bound(w, w->chunk), err) != 0 ||
	    !(zero = util_alloc(w->chunk, 1, err)))
		return -1;
	rc = compress_chunk(w, zero, w->chunk, w->zero_z, w->zero_cap, &zlen);
	util_free(zero);
	if (rc != Z_OK) {
		util_err_set(err, "%s: compression failed (%s %d)", w->path,
			     w->zstd ? "zstd" : "zlib", rc);
		return -1;
	}
	w->zero_zlen = zlen;
	w->zero_len = w->chunk;
	return 0;
}

/* Room for a stream per thread the next parallel loop may use. */
static int reserve_streams(struct traj_writer *w, struct util_err *err)
{
	int n = 1;
	z_stream **zs;
	ZSTD_CCtx **zc;

#ifdef _OPENMP
	n = omp_get_max_threads();
#endif
	if (n <= w->nzs)
		return 0;
	zs = calloc(2 * (size_t)n, sizeof *zs);
	zc = calloc((size_t)n, sizeof *zc);
	if (zs == NULL || zc == NULL) {
		free(zs);
		free(zc);
		util_err_set(err, "out of memory");
		return -1;
	}
	/* > 0, not != 0: gcc then knows the size is not a negative count
	 * turned huge (on one thread nzs < n = 1 makes this dead code). */
	if (w->nzs > 0) {
		memcpy(zs, w->zs, 2 * (size_t)w->nzs * sizeof *zs);
		memcpy(zc, w->zc, (size_t)w->nzs * sizeof *zc);
	}
	free(w->zs);
	free(w->zc);
	w->zs = zs;
	w->zc = zc;
	w->nzs = n;
	return 0;
}

static int index_add(struct traj_writer *w, uint64_t step, uint32_t codec, uint32_t back,
		     struct util_err *err)
{
	if (w->nidx == w->idx_cap) {
		size_t cap = w->idx_cap ? 2 * w->idx_cap : 256;
		struct traj_index_entry *n = util_alloc(cap, sizeof *n, err);

		if (n == NULL)
			return -1;
		if (w->nidx)
			memcpy(n, w->idx, w->nidx * sizeof *n);
		util_free(w->idx);
		w->idx = n;
		w->idx_cap = cap;
	}
	w->idx[w->nidx].step = step;
	w->idx[w->nidx].offset = w->pos;
	w->idx[w->nidx].codec = codec;
	w->idx[w->nidx].back = back;
	w->nidx++;
	return 0;
}

/* Room for a frame of n agents in the buffers a frame is made from and
 * the next one's delta taken against. They grow only for a frame larger
 * than any before, which is a key frame (its count differs from the
 * previous frame's), so what they held is not needed. A lossless frame
 * whose every field is kept where it is (own) needs no prev. */
static int frame_room(struct traj_writer *w, size_t n, int keep_all, struct util_err *err)
{
	size_t need = n * (size_t)w->nfs, cap;

	if (w->precision <= 0 && keep_all)
		return 0;
	if (need <= w->vcap && (w->prev || w->q))
		return 0;
	cap = need > 2 * w->vcap ? need : 2 * w->vcap;
	if (cap == 0)
		cap = 1;
	util_free(w->prev);
	util_free(w->q);
	util_free(w->qprev);
	util_free(w->zz);
	util_free(w->exc);
	w->prev = NULL;
	w->q = w->qprev = NULL;
	w->zz = NULL;
	w->exc = NULL;
	w->vcap = 0;
	if (w->precision > 0 ? !(w->q = util_alloc_raw(cap, sizeof *w->q, err)) ||
	    !(w->qprev = util_alloc_raw(cap, sizeof *w->qprev, err)) ||
	    !(w->zz = util_alloc_raw(cap, sizeof *w->zz, err)) ||
	    !(w->exc = util_alloc_raw(cap, 1, err)) :
	    !(w->prev = util_alloc_raw(cap, sizeof *w->prev, err)))
		return -1;
	w->vcap = cap;
	return 0;
}

/* Codec 5: the previous frame's positions, which only this frame's
 * prediction needs, become the prediction (traj_predict), so that the
 * planes are made as codec 2's, XOR what prev holds. */
static void predict_positions(struct traj_writer *w, double h)
{
	const size_t n = (size_t)w->n;
	int d;

	for (d = 0; d < w->dims; d++) {
		unsigned char *restrict x = w->pv[d];
		const float *restrict v = w->cur[w->dims + d];
		size_t i;

		#pragma omp parallel for simd schedule(static) if (n >= w->parallel_min)
		for (i = 0; i < n; i++) {
			uint32_t u, p;

			memcpy(&u, &v[i], 4);
			memcpy(&p, x + 4 * i, 4);
			p = traj_predict(p, u, h);
			memcpy(x + 4 * i, &p, 4);
		}
	}
}

static int write_bin_frame(struct traj_writer *w, uint64_t step,
			   float *const fields[TRAJ_FIELDS_MAX], struct util_err *err)
{
	unsigned char h[TRAJ_FRAME_HEADER];
	size_t n = (size_t)w->n, nchunks, k, zlen, tab;
	/* A key frame on the interval (by frame index), and whenever the count
	 * changes: a delta frame has the count of the frame before it. */
	int key = w->frames % w->key_interval == 0 || w->n != w->prev_n;
	int lossy = w->precision > 0, bad = 0, f, b;
	/* the frame is in the arrays traj_writer_fields handed out: they stay
	 * as the next delta's base (the ids and groups of agents are copied) */
	int own = w->own[w->own_next][0] != NULL && !lossy, kept;
	uint32_t codec;
	uLong crc;

	for (f = 0; own && f < w->nf; f++)
		own = fields[f] == w->own[w->own_next][f];
	kept = own && w->nfs == w->nf;
	/* The set written last is this frame's base: written again, its
	 * prediction would overwrite the positions being written. */
	for (f = 0; !lossy && w->frames > 0 && f < w->nf; f++)
		if ((const unsigned char *)fields[f] == w->pv[f]) {
			util_err_set(err, "%s: step %" PRIu64 ": a frame in the arrays of the "
				     "frame before (traj_writer_fields hands out the next)",
				     w->path, step);
			return -1;
		}
	if (frame_room(w, n, kept, err) != 0)
		return -1;
	w->cur = fields;
	if (lossy) {
		codec = key ? TRAJ_CODEC_QUANT : TRAJ_CODEC_QUANT_DELTA;
		if (quantise_frame(w, key, err) != 0)
			return -1;
	} else {
		/* The step the positions moved over since the last frame: its
		 * steps times dt, exact at output.every 1. */
		const double h = (double)(step - w->last_step) * w->predict_dt;

		codec = key ? TRAJ_CODEC_SHUFFLE : TRAJ_CODEC_XOR;
		w->tbase = 0;
		if (!key && h > 0 && isfinite(h)) {
			codec = TRAJ_CODEC_PREDICT;
			w->tbase = TRAJ_PREDICT_PRELUDE;
			traj_put_f64(w->prelude, h);
			predict_positions(w, h);
		}
		w->nplanes = 0;
		for (f = 0; f < w->nfs; f++)
			for (b = 0; b < 4; b++) {
				w->planes[w->nplanes].f = f;
				w->planes[w->nplanes++].b = b;
			}
		w->tlen = w->tbase + (size_t)w->nplanes * n;
	}
	/* (no chunks at all for a stream of 0 bytes, a frame of no agents) */
	nchunks = (w->tlen + w->chunk - 1) / w->chunk;
	if (nchunks > UINT32_MAX) {
		util_err_set(err, "%s: a frame of %zu chunks is too many", w->path, nchunks);
		return -1;
	}
	w->zstride = chunk_bound(w, w->chunk < w->tlen ? w->chunk : w->tlen);
	tab = 8 + 4 * nchunks;
	/* zbuf has room for the worst case of every chunk, but deflate writes
	 * only the compressed bytes, so only those pages become resident. */
	if (util_reserve_raw(&w->zbuf, &w->zcap, nchunks * w->zstride, err) != 0 ||
	    util_reserve(&w->table, &w->table_cap, tab, err) != 0)
		return -1;
	/* (the stream of zeros only for frames of a whole chunk or more: a
	 * small flock's frames never use it) */
	if (reserve_streams(w, err) != 0 || (w->tlen >= w->chunk && zero_stream(w, err) != 0))
		return -1;
	/* Lossless chunks are made from the fields as they are compressed,
	 * in a chunk of scratch per thread, instead of a copy of the frame. */
	if (!lossy && util_reserve_raw(&w->tbuf, &w->tcap, (size_t)w->nzs * w->chunk, err) != 0)
		return -1;
	if (nchunks > w->nchunk_cap) {
		/* Per-chunk results. */
		util_free(w->clen);
		util_free(w->ccrc);
		util_free(w->crc_rc);
		w->nchunk_cap = 0;
		w->clen = util_alloc(nchunks, sizeof *w->clen, err);
		w->ccrc = util_alloc(nchunks, sizeof *w->ccrc, err);
		w->crc_rc = util_alloc(nchunks, sizeof *w->crc_rc, err);
		if (!w->clen || !w->ccrc || !w->crc_rc)
			return -1;
		w->nchunk_cap = nchunks;
	}
	/* Each chunk is filled and compressed by one thread, on its own: the
	 * bytes depend on the chunk size only. Small frames stay on this thread,
	 * as the engine's loops do. */
	{
		long kk, nk = (long)nchunks;

		#pragma omp parallel for schedule(dynamic, 1) \
			if (nk > 1 && n >= w->parallel_min)
		for (kk = 0; kk < nk; kk++) {
			size_t lo = (size_t)kk * w->chunk;
			size_t hi = lo + w->chunk < w->tlen ? lo + w->chunk : w->tlen;
			unsigned char *out = w->zbuf + (size_t)kk * w->zstride, *in;
			int tid = 0;

#ifdef _OPENMP
			tid = omp_get_thread_num();
#endif
			if (tid >= w->nzs) { /* cannot happen: nzs is the most threads */
				w->crc_rc[kk] = Z_MEM_ERROR;
				continue;
			}
			in = lossy ? w->tbuf + lo : w->tbuf + (size_t)tid * w->chunk;
			if (!lossy && lo < w->tbase)
				memcpy(in, w->prelude + lo, (hi < w->tbase ? hi : w->tbase) - lo);
			fill_planes(w, lo, hi, !key, in);
			w->crc_rc[kk] = compress_chunk(w, in, hi - lo, out, w->zstride, &w->clen[kk]);
			if (w->crc_rc[kk] == Z_OK)
				w->ccrc[kk] = crc32_z(0L, out, w->clen[kk]);
		}
	}
	traj_put_u32(w->table, w->chunk);
	traj_put_u32(w->table + 4, (uint32_t)nchunks);
	zlen = tab;
	for (k = 0; k < nchunks; k++) {
		if (w->crc_rc[k] != Z_OK)
			bad = w->crc_rc[k];
		traj_put_u32(w->table + 8 + 4 * k, w->clen[k]);
		zlen += w->clen[k];
	}
	if (bad) {
		util_err_set(err, "%s: compression failed (%s %d)", w->path,
			     w->zstd ? "zstd" : "zlib", bad);
		return -1;
	}
	memcpy(h, TRAJ_FRAME_TAG, 4);
	traj_put_u64(h + 4, step);
	traj_put_u32(h + 12, (uint32_t)n);
	traj_put_u32(h + 16, codec);
	traj_put_u64(h + 20, (uint64_t)w->tlen);
	traj_put_u64(h + 28, (uint64_t)zlen);
	crc = crc32(0L, h, 36);
	crc = crc32_z(crc, w->table, tab);
	for (k = 0; k < nchunks; k++)
		crc = crc32_combine(crc, w->ccrc[k], (z_off_t)w->clen[k]);
	traj_put_u32(h + 36, (uint32_t)crc);
	if (index_add(w, step, codec, key ? 0 : (uint32_t)w->chain, err) != 0)
		return -1;
	if (put(w, h, sizeof h, err) || put(w, w->table, tab, err))
		return -1;
	for (k = 0; k < nchunks; k++)
		if (put_summed(w, w->zbuf + k * w->zstride, w->clen[k], w->ccrc[k], err))
			return -1;
	/* What the next frame is a delta from. */
	if (lossy) {
		int64_t *t = w->qprev;

		w->qprev = w->q;
		w->q = t;
	} else {
		/* The fields in blocks, over the threads (a frame of a million
		 * boids is 16 MB or more), but for those kept where they are. */
		const size_t blk = 65536, nb = (n + blk - 1) / blk;
		const int f0 = own ? w->nf : 0;
		long j, nj = (long)((size_t)(w->nfs - f0) * nb);

		#pragma omp parallel for schedule(static) if (n >= w->parallel_min && nj > 1)
		for (j = 0; j < nj; j++) {
			const int fi = f0 + (int)((size_t)j / nb);
			const size_t lo = ((size_t)j % nb) * blk, m = lo + blk < n ? blk : n - lo;
			const void *src = fi < w->nf ? (const void *)fields[fi] :
					  fi == w->nf ? (const void *)w->cur_id :
							(const void *)w->cur_group;

			memcpy(w->prev + (size_t)fi * n + lo, (const uint32_t *)src + lo,
			       m * sizeof(uint32_t));
		}
		for (f = 0; f < w->nfs; f++)
			w->pv[f] = f < f0 ? (unsigned char *)fields[f]
					  : (unsigned char *)(w->prev + (size_t)f * n);
		if (own)
			w->own_next ^= 1;
	}
	w->chain = key ? 1 : w->chain + 1;
	w->prev_n = w->n;
	return 0;
}

/* A .csv.gz is one gzip member (RFC 1952) whose deflate stream (RFC 1951)
 * is cut into blocks, as pigz cuts it: the header line, then each block
 * of TRAJ_CSV_ROWS rows of a frame, each compressed by a new raw deflate
 * stream at the file's level, primed with the TRAJ_GZ_DICT bytes of text
 * before it and ended with a sync flush (byte-aligned, not final); then,
 * at traj_writer_close, an empty final block and the trailer (the text's
 * CRC-32, which w->sum already is, and its length). Each block depends on
 * the text alone, so the threads compress those of a frame at once and
 * the bytes do not depend on them; a file cut anywhere before the trailer
 * is a stream without its end, as a killed run's must be. */
static int gzip_block(struct traj_writer *w, int tid, const unsigned char *dict, size_t dlen,
		      const void *text, size_t len, unsigned char **out, size_t *cap,
		      size_t *olen)
{
	z_stream *zs = w->zs[2 * tid];
	uLong bound;
	int rc;

	if (len > UINT_MAX)
		return Z_BUF_ERROR;
	if (zs == NULL) {
		if (!(zs = calloc(1, sizeof *zs)))
			return Z_MEM_ERROR;
		/* -15: raw deflate; memory level 8, as gzopen's */
		if ((rc = deflateInit2(zs, w->level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY)) !=
		    Z_OK) {
			free(zs);
			return rc;
		}
		w->zs[2 * tid] = zs;
	} else if ((rc = deflateReset(zs)) != Z_OK) {
		return rc;
	}
	if (dlen > 0 && (rc = deflateSetDictionary(zs, dict, (uInt)dlen)) != Z_OK)
		return rc;
	/* deflateBound assumes one Z_FINISH: a sync flush's empty stored
	 * block and its alignment take a few bytes more */
	bound = deflateBound(zs, (uLong)len) + 16;
	if (bound > UINT_MAX)
		return Z_BUF_ERROR;
	if (*cap < bound) {
		unsigned char *p = malloc(bound);

		if (p == NULL)
			return Z_MEM_ERROR;
		free(*out);
		*out = p;
		*cap = bound;
	}
	zs->next_in = (Bytef *)(uintptr_t)text;
	zs->avail_in = (uInt)len;
	zs->next_out = *out;
	zs->avail_out = (uInt)bound;
	rc = deflate(zs, Z_SYNC_FLUSH);
	if (rc != Z_OK)
		return rc;
	if (zs->avail_in != 0 || zs->avail_out == 0) /* not all out: cannot happen */
		return Z_BUF_ERROR;
	*olen = (size_t)zs->total_out;
	return Z_OK;
}

/* The dictionary of block kk of this round: the last TRAJ_GZ_DICT bytes
 * (all there are, if fewer) of the text before it, from blocks kk-1,
 * kk-2, ... and the history before the round. Returns its length. */
static size_t gz_dict(const struct traj_writer *w, long kk, unsigned char *out)
{
	size_t got = 0, take;
	long j;

	for (j = kk - 1; j >= 0 && got < TRAJ_GZ_DICT; j--) {
		const struct csv_block *c = &w->blk[j];

		take = c->len < TRAJ_GZ_DICT - got ? c->len : TRAJ_GZ_DICT - got;
		memcpy(out + TRAJ_GZ_DICT - got - take, c->text + c->len - take, take);
		got += take;
	}
	take = w->hist_len < TRAJ_GZ_DICT - got ? w->hist_len : TRAJ_GZ_DICT - got;
	memcpy(out + TRAJ_GZ_DICT - got - take, w->hist + w->hist_len - take, take);
	got += take;
	memmove(out, out + TRAJ_GZ_DICT - got, got);
	return got;
}

/* n bytes of text written after the history: it keeps their end. */
static void gz_history(struct traj_writer *w, const void *p, size_t n)
{
	if (n >= TRAJ_GZ_DICT) {
		memcpy(w->hist, (const char *)p + n - TRAJ_GZ_DICT, TRAJ_GZ_DICT);
		w->hist_len = TRAJ_GZ_DICT;
		return;
	}
	if (w->hist_len + n > TRAJ_GZ_DICT) {
		const size_t drop = w->hist_len + n - TRAJ_GZ_DICT;

		memmove(w->hist, w->hist + drop, w->hist_len - drop);
		w->hist_len -= drop;
	}
	memcpy(w->hist + w->hist_len, p, n);
	w->hist_len += n;
}

/* Rows i0 .. i1-1 of a frame as CSV text into out (room for
 * TRAJ_CSV_ROW_MAX bytes a row); returns the bytes. "%.9g": every binary32
 * value reads back to the same bits. */
static size_t csv_rows(const struct traj_writer *w, uint64_t step,
		       float *const fields[TRAJ_FIELDS_MAX], size_t i0, size_t i1, char *out)
{
	char *p = out;
	size_t i;
	int f;

	for (i = i0; i < i1; i++) {
		if (w->agents)
			p += sprintf(p, "%" PRIu64 ",%" PRIu32 ",%" PRIu32, step, w->cur_group[i],
				     w->cur_id[i]);
		else
			p += sprintf(p, "%" PRIu64 ",%" PRIu64, step,
				     w->ids ? (uint64_t)w->ids[i] : (uint64_t)i);
		for (f = 0; f < w->nf; f++)
			p += sprintf(p, ",%.9g", (double)fields[f][i]);
		*p++ = '\n';
	}
	return (size_t)(p - out);
}

/* A frame's rows, TRAJ_CSV_ROWS a block: nblk blocks at a time formatted
 * (and gzipped) over the threads, then written in order. Formatting is
 * about a microsecond a row and deflate's level 6 four more, all on one
 * thread before: 5 s a frame of 2D 1M (docs/PERFORMANCE.md, "2026-12-08,
 * later still"). */
static int write_csv_frame(struct traj_writer *w, uint64_t step,
			   float *const fields[TRAJ_FIELDS_MAX], struct util_err *err)
{
	const size_t n = (size_t)w->n, nb = (n + TRAJ_CSV_ROWS - 1) / TRAJ_CSV_ROWS;
	size_t b0;
	int k;

	/* a block for each thread there may be (more, if the caller raised
	 * the thread count since the last frame: the blocks' rows stay) */
	if (nb > 0 && reserve_streams(w, err) != 0)
		return -1;
	if (nb > 0 && w->nblk < w->nzs) {
		struct csv_block *blk = util_alloc((size_t)w->nzs, sizeof *blk, err);

		if (blk == NULL)
			return -1;
		for (k = w->nblk; k < w->nzs; k++)
			if (!(blk[k].text = util_alloc_raw(TRAJ_CSV_ROWS, TRAJ_CSV_ROW_MAX, err)) ||
			    (w->gzip && !(blk[k].dict = util_alloc_raw(TRAJ_GZ_DICT, 1, err)))) {
				for (; k >= w->nblk; k--) {
					util_free(blk[k].text);
					util_free(blk[k].dict);
				}
				util_free(blk);
				return -1;
			}
		if (w->nblk > 0)
			memcpy(blk, w->blk, (size_t)w->nblk * sizeof *blk);
		util_free(w->blk);
		w->blk = blk;
		w->nblk = w->nzs;
	}
	for (b0 = 0; b0 < nb; b0 += (size_t)w->nblk) {
		const long nk = (long)(nb - b0 < (size_t)w->nblk ? nb - b0 : (size_t)w->nblk);
		long kk;

		/* the text first, as each block's dictionary is the text before
		 * it; then the blocks compressed */
		#pragma omp parallel if (nk > 1 && n >= w->parallel_min)
		{
			#pragma omp for schedule(static, 1)
			for (kk = 0; kk < nk; kk++) {
				struct csv_block *c = &w->blk[kk];
				const size_t i0 = (b0 + (size_t)kk) * TRAJ_CSV_ROWS;
				const size_t i1 = i0 + TRAJ_CSV_ROWS < n ? i0 + TRAJ_CSV_ROWS : n;

				c->len = csv_rows(w, step, fields, i0, i1, c->text);
				c->crc = crc32_z(0L, (const Bytef *)c->text, c->len);
				c->rc = Z_OK;
			}
			if (w->gzip) {
				#pragma omp for schedule(static, 1)
				for (kk = 0; kk < nk; kk++) {
					struct csv_block *c = &w->blk[kk];
					const size_t dlen = gz_dict(w, kk, c->dict);
					int tid = 0;

#ifdef _OPENMP
					tid = omp_get_thread_num();
#endif
					c->rc = tid < w->nzs ? gzip_block(w, tid, c->dict, dlen, c->text,
									  c->len, &c->z, &c->z_cap,
									  &c->zlen)
							     : Z_MEM_ERROR;
				}
			}
		}
		for (kk = 0; kk < nk; kk++) {
			const struct csv_block *c = &w->blk[kk];
			const void *p = w->gzip ? (const void *)c->z : (const void *)c->text;
			const size_t len = w->gzip ? c->zlen : c->len;

			if (c->rc != Z_OK) {
				util_err_set(err, "%s: %s (zlib %d)", w->path,
					     c->rc == Z_MEM_ERROR ? "out of memory"
								  : "compression failed",
					     c->rc);
				return -1;
			}
			w->pos += c->len;
			w->sum = crc32_combine(w->sum, c->crc, (z_off_t)c->len);
			if (fwrite(p, 1, len, w->fp) != len) {
				util_err_set(err, "%s: write failed: %s", w->path, strerror(errno));
				return -1;
			}
		}
		if (w->gzip)
			for (kk = 0; kk < nk; kk++)
				gz_history(w, w->blk[kk].text, w->blk[kk].len);
	}
	return 0;
}

static int write_frame(struct traj_writer *w, uint64_t step,
		       float *const fields[TRAJ_FIELDS_MAX], struct util_err *err)
{
	int rc = w->fmt == TRAJ_BIN ? write_bin_frame(w, step, fields, err)
				    : write_csv_frame(w, step, fields, err);

	if (rc == 0) {
		w->frames++;
		w->last_step = step;
		/* Hand each whole frame to the kernel, so that a killed run's file
		 * ends on a frame boundary. A gzip'd frame ends with a block's
		 * sync flush, so the stream decodes to there; a checkpoint needs
		 * no flush of its own, which would make the bytes of a run depend
		 * on where its checkpoints and its stops fell. */
		if (fflush(w->fp) != 0) {
			util_err_set(err, "%s: write failed: %s", w->path, strerror(errno));
			rc = -1;
		}
	}
	return rc;
}

float *const *traj_writer_fields(struct traj_writer *w, struct util_err *err)
{
	float **set = w->own[w->own_next];
	int f;

	for (f = 0; f < w->nf; f++)
		if (set[f] == NULL &&
		    !(set[f] = util_alloc((size_t)w->count, sizeof(float), err)))
			return NULL;
	return set;
}

int traj_write_frame(struct traj_writer *w, uint64_t step,
		     float *const fields[TRAJ_FIELDS_MAX], struct util_err *err)
{
	if (w->agents) {
		util_err_set(err, "%s: a trajectory with agents is written with "
			     "traj_write_frame_agents", w->path);
		return -1;
	}
	return write_frame(w, step, fields, err);
}

int traj_write_frame_agents(struct traj_writer *w, uint64_t step,
			    float *const fields[TRAJ_FIELDS_MAX], const struct traj_agents *a,
			    struct util_err *err)
{
	size_t i, n;

	if (!w->agents || a == NULL) {
		util_err_set(err, "%s: traj_write_frame_agents needs a trajectory opened with "
			     "TRAJ_FLAG_AGENTS, and the agents", w->path);
		return -1;
	}
	if (a->n > w->count) {
		util_err_set(err, "%s: step %" PRIu64 ": %" PRIu64 " agents, more than the %"
			     PRIu64 " the file was opened for", w->path, step, a->n, w->count);
		return -1;
	}
	n = (size_t)a->n;
	/* Strictly increasing (group, id): boids by id, then predators by id. */
	for (i = 0; i < n; i++) {
		if (a->group[i] >= TRAJ_GROUPS) {
			util_err_set(err, "%s: step %" PRIu64 ": agent %" PRIu32 " has group %"
				     PRIu32 " (0 boid, 1 predator)", w->path, step, a->id[i],
				     a->group[i]);
			return -1;
		}
		if (i > 0 && (a->group[i] < a->group[i - 1] ||
			      (a->group[i] == a->group[i - 1] && a->id[i] <= a->id[i - 1]))) {
			util_err_set(err, "%s: step %" PRIu64 ": agents out of (group, id) order at "
				     "%zu (group %" PRIu32 " id %" PRIu32 " after group %" PRIu32
				     " id %" PRIu32 ")", w->path, step, i, a->group[i], a->id[i],
				     a->group[i - 1], a->id[i - 1]);
			return -1;
		}
		if (a->group[i] == TRAJ_GROUP_PREDATOR && w->nf > 2 * w->dims &&
		    fields[w->nf - 1][i] != 0.0f) {
			util_err_set(err, "%s: step %" PRIu64 ": predator %" PRIu32 " has hue %g, "
				     "not 0", w->path, step, a->id[i], (double)fields[w->nf - 1][i]);
			return -1;
		}
	}
	w->n = a->n;
	w->cur_id = a->id;
	w->cur_group = a->group;
	return write_frame(w, step, fields, err);
}


/* The frame index, before the end record: for each frame its step, the
 * offset of its record, its codec and how far back its key frame is. */
static int write_index(struct traj_writer *w, struct util_err *err)
{
	unsigned char buf[TRAJ_INDEX_ENTRY * 256];
	size_t k, m = 0;
	uLong crc;

	memcpy(buf, TRAJ_INDEX_TAG, 4);
	traj_put_u64(buf + 4, (uint64_t)w->nidx);
	crc = crc32(0L, buf, 12);
	if (put(w, buf, 12, err) != 0)
		return -1;
	for (k = 0; k < w->nidx; k++) {
		unsigned char *e = buf + m;

		traj_put_u64(e, w->idx[k].step);
		traj_put_u64(e + 8, w->idx[k].offset);
		traj_put_u32(e + 16, w->idx[k].codec);
		traj_put_u32(e + 20, w->idx[k].back);
		m += TRAJ_INDEX_ENTRY;
		if (m == sizeof buf || k + 1 == w->nidx) {
			crc = crc32(crc, buf, (uInt)m);
			if (put(w, buf, m, err) != 0)
				return -1;
			m = 0;
		}
	}
	traj_put_u32(buf, (uint32_t)crc);
	return put(w, buf, 4, err);
}

void traj_writer_set_ids(struct traj_writer *w, const uint32_t *ids)
{
	w->ids = ids;
}

const char *traj_writer_temp_path(const struct traj_writer *w)
{
	return w->tmp;
}

void traj_writer_set_parallel_min(struct traj_writer *w, size_t n)
{
	w->parallel_min = n;
}

int traj_writer_sync(struct traj_writer *w, struct util_err *err)
{
	struct stat st;
	int fd = fileno(w->fp);

	if (fflush(w->fp) != 0 || (!w->to_stdout && fsync(fd) != 0)) {
		util_err_set(err, "%s: write failed: %s", w->path, strerror(errno));
		return -1;
	}
	if (!w->to_stdout && fstat(fd, &st) != 0) {
		util_err_set(err, "%s: %s", w->path, strerror(errno));
		return -1;
	}
	w->synced = w->to_stdout ? 0 : (uint64_t)st.st_size;
	return 0;
}

uint64_t traj_writer_synced(const struct traj_writer *w)
{
	return w->synced;
}

void traj_writer_mark(const struct traj_writer *w, uint64_t *bytes, uint32_t *crc)
{
	*bytes = w->pos;
	*crc = (uint32_t)w->sum;
}

static void writer_free(struct traj_writer *w)
{
	int t, f;

	for (t = 0; t < 2 * w->nzs; t++)
		if (w->zs[t]) {
			deflateEnd(w->zs[t]);
			free(w->zs[t]);
		}
	free(w->zs);
	for (t = 0; t < w->nzs; t++)
		ZSTD_freeCCtx(w->zc[t]);
	free(w->zc);
	util_free(w->zero_z);
	for (t = 0; t < w->nblk; t++) {
		util_free(w->blk[t].text);
		util_free(w->blk[t].dict);
		free(w->blk[t].z);
	}
	util_free(w->blk);
	free(w->hz);
	util_free(w->hist);
	util_free(w->hist_tmp);
	util_free(w->prev);
	for (t = 0; t < 2; t++)
		for (f = 0; f < TRAJ_FIELDS_MAX; f++)
			util_free(w->own[t][f]);
	util_free(w->q);
	util_free(w->qprev);
	util_free(w->zz);
	util_free(w->exc);
	util_free(w->tbuf);
	util_free(w->zbuf);
	util_free(w->table);
	util_free(w->clen);
	util_free(w->ccrc);
	util_free(w->crc_rc);
	util_free(w->idx);
	free(w->path);
	free(w->tmp);
	free(w->final);
	free(w);
}

int traj_writer_close(struct traj_writer *w, enum traj_status status,
		      struct util_err *err)
{
	int rc = -1, fd;
	const char *target;

	if (w->fmt == TRAJ_BIN) {
		unsigned char e[TRAJ_END_LEN];

		if (write_index(w, err) != 0)
			goto out;
		memcpy(e, TRAJ_END_TAG, 4);
		traj_put_u32(e + 4, (uint32_t)status);
		traj_put_u64(e + 8, w->frames);
		traj_put_u64(e + 16, w->last_step);
		traj_put_u32(e + 24, (uint32_t)crc32(0L, e, 24));
		if (put(w, e, sizeof e, err) != 0)
			goto out;
	}
	if (w->gzip) {
		/* the final empty block (fixed codes: BFINAL 1, BTYPE 01, the
		 * end code) and the trailer: the text's CRC-32 and length */
		unsigned char t[10] = {0x03, 0x00};

		traj_put_u32(t + 2, (uint32_t)w->sum);
		traj_put_u32(t + 6, (uint32_t)w->pos);
		if (fwrite(t, 1, sizeof t, w->fp) != sizeof t) {
			util_err_set(err, "%s: write failed: %s", w->path, strerror(errno));
			goto out;
		}
	}
	if (fflush(w->fp) != 0) {
		util_err_set(err, "%s: write failed: %s", w->path, strerror(errno));
		goto out;
	}
	fd = fileno(w->fp);
	/* Durable before it takes the final name. */
	if (!w->to_stdout && fsync(fd) != 0) {
		util_err_set(err, "%s: fsync failed: %s", w->path, strerror(errno));
		goto out;
	}
	if (fclose(w->fp) != 0) {
		w->fp = NULL;
		util_err_set(err, "%s: write failed: %s", w->path, strerror(errno));
		goto out;
	}
	w->fp = NULL;
	if (w->to_stdout) {
		rc = 0;
		goto out;
	}
	target = w->path;
	if (status != TRAJ_COMPLETE && (w->fmt != TRAJ_BIN || w->partial)) {
		w->final = malloc(strlen(w->path) + 9);
		if (w->final == NULL) {
			util_err_set(err, "out of memory");
			goto out;
		}
		sprintf(w->final, "%s.partial", w->path);
		target = w->final;
	}
	if (rename(w->tmp, target) != 0) {
		/* Written whole and durable: the data stays where it is, under
		 * the temporary name, which the message gives. */
		util_err_set(err, "%s: cannot rename into place: %s; what was written is "
			     "kept in %s", target, strerror(errno), w->tmp);
		free(w->tmp);
		w->tmp = NULL;
		goto out;
	}
	free(w->tmp);
	w->tmp = NULL;
	outfile_sync_dir(w->path);
	rc = 0;
out:
	if (rc != 0) {
		traj_writer_abort(w, NULL);
		return rc;
	}
	writer_free(w);
	return rc;
}

int traj_writer_abort(struct traj_writer *w, struct util_err *err)
{
	int rc;

	if (w == NULL)
		return 0;
	if (w->fp)
		fclose(w->fp);
	rc = outfile_drop_temp(w->tmp, w->keep, w->keep_size, err);
	writer_free(w);
	return rc;
}

void traj_writer_keep(struct traj_writer *w, uint64_t size)
{
	w->keep = 1;
	w->keep_size = size;
}
