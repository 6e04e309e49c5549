/* traj_read.c: reads trajectories: the binary format (both versions, every
 * codec), with every CRC checked so a damaged or cut file is reported and
 * never misread, frame by frame or at random through the frame index; and
 * CSV or gzip'd CSV; keeps a content digest of what it read. */
#include "config.h"
#include "bounds.h"
#include "traj.h"
#include "detmath.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#define CSV_LINE_MAX 4096

enum index_state { INDEX_UNKNOWN = 0, INDEX_LOADED, INDEX_NONE, INDEX_DAMAGED };

struct traj_reader {
	size_t parallel_min; /* traj_reader_set_parallel_min */
	gzFile gz;          /* zlib reads gzip and passes anything else through */
	const char *name;
	char *path;         /* for random access; NULL for stdin or a descriptor */
	int regular_fd;     /* opened from a descriptor of a regular file, at its start */
	struct traj_header h;
	int nf;             /* fields stored: 2 * dims, + 1 with a hue, + 2 (id,
			     * group) with agents */
	int nff;            /* of which float fields: h.fields */
	size_t values;      /* count * nf: the most a frame holds */
	/* Decoded frames, float32 (then with agents the ids and groups, u32)
	 * little-endian as the digest takes them: the one read last is
	 * buf[which], of n agents; delta frames decode from it. */
	unsigned char *buf[2];
	size_t bcap[2];
	uint64_t n;
	int which, have_base;
	size_t raw_len;     /* bytes of the largest frame */
	int64_t *q;         /* lossy: the integers of the frame read last */
	size_t qcap;
	uint64_t size;      /* of a plain regular file; 0 when not known */
	int have_q;
	double qprec;
	unsigned char *tbuf, *zbuf;
	size_t tcap, zcap;
	size_t *coff;       /* chunk offsets in the payload */
	size_t coff_cap;
	int *crc_rc;
	size_t rc_cap;
	z_stream **zs;      /* one inflate stream per thread, reset for each chunk */
	ZSTD_DCtx **zd;     /* with TRAJ_FLAG_ZSTD, one context per thread */
	int nzs;
	uint64_t pos;       /* bytes of the file consumed so far */
	uint64_t data_start;
	uint64_t frames, first_step, last_step;
	uint64_t codec_frames[TRAJ_CODECS];
	double precision;
	int ended, after_index, indexed;
	/* The last failure was the input ending inside a record (a killed
	 * run, a full disk, a copy cut short), not damage. */
	int cut;
	/* ... and it ended inside a line (not after a whole one, as a gzip
	 * stream cut at a line's end does): the rows read before it in that
	 * frame do not make a whole frame. */
	int cut_in_line;
	/* Frames were skipped after damage (traj_reader_resync): the index and
	 * end record no longer describe what was read. */
	int salvaged, exhausted;
	uint64_t frame_off;  /* of the frame record being read */
	/* From the embedded scenario, when its bounds keep every position
	 * inside the box (modes wrap and reflect): the box, widened a little
	 * for rounding. */
	int finite, box;
	double box_lo[3], box_hi[3];
	uint64_t index_off;  /* of the frame index (random access) */
	enum traj_status status;
	struct traj_index_entry *seen; /* the frames read, for the index check */
	size_t seen_cap;
	/* Random access. */
	int fd;
	enum index_state idx_state;
	struct traj_index_entry *idx;
	uint64_t nidx;
	int tend_seen, random, cur_valid;
	enum traj_status tend_status;
	uint64_t cur;
	EVP_MD_CTX *md;
	/* CSV: the line read ahead, its number, and the first frame, read at
	 * open time to learn the count. */
	char line[CSV_LINE_MAX];
	int have_line;
	uint64_t line_no;
	float *first[TRAJ_FIELDS_MAX];
	uint64_t first_frame_step;
	int first_pending;
	/* CSV with agents: the frame's ids and groups, and the error that
	 * stopped the pass at open time over a pipe, reported when the copy
	 * of what it read runs out. */
	uint32_t *csv_id, *csv_group;
	float *csvf[TRAJ_FIELDS_MAX]; /* the frame read last, as parsed */
	char scan_err[UTIL_ERR_MAX];
	int scan_cut, scan_cut_in_line;
};

/* zlib's message for the last error, without the file name it starts
 * with; errno's for an I/O error. *e gets the code. */
static const char *gz_why(struct traj_reader *r, int *e)
{
	const char *why = gzerror(r->gz, e);
	size_t n = r->path ? strlen(r->path) : 0;

	if (*e == Z_ERRNO)
		return strerror(errno);
	return n && strncmp(why, r->path, n) == 0 && why[n] == ':' ? why + n + 2 : why;
}

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
	r->pos += got;
	if (got == n)
		return 1;
	return got == 0 ? 0 : -1;
}

/* pread all n bytes at off: 0, or -1 (a short read is an error too). */
static int read_at(struct traj_reader *r, void *p, size_t n, uint64_t off)
{
	size_t got = 0;

	while (got < n) {
		ssize_t k = pread(r->fd, (char *)p + got, n - got, (off_t)(off + got));

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		got += (size_t)k;
	}
	return 0;
}

/* The frame read last: its step, its count, its arrays (floats, then with
 * agents ids and groups). */
static void digest_frame(struct traj_reader *r, uint64_t step)
{
	unsigned char h[12];

	traj_put_u64(h, step);
	traj_put_u32(h + 8, (uint32_t)r->n);
	EVP_DigestUpdate(r->md, h, sizeof h);
	EVP_DigestUpdate(r->md, r->buf[r->which], (size_t)r->n * (size_t)r->nf * 4);
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
	size_t most;
	int f;

	/* Every size derived from the count must fit, up to the largest lossy
	 * stream (8 plane bytes and an exception per value). */
	r->nff = r->h.fields;
	r->nf = r->h.fields + (r->h.has_agents ? TRAJ_AGENT_FIELDS : 0);
	r->n = r->h.count;
	if (util_mul_size((size_t)r->h.count, (size_t)r->nf, &r->values) != 0 ||
	    util_mul_size(r->values, 8 + TRAJ_QUANT_EXCEPTION, &most) != 0 ||
	    most > SIZE_MAX / 2) {
		util_err_set(err, "%s: frame size overflows", r->name);
		return -1;
	}
	r->raw_len = r->values * sizeof(float);
	/* A binary header's count is only a bound: a binary frame's buffers
	 * grow as frames of that size actually decode. A CSV's is the size of
	 * a frame read. */
	if (r->h.format == TRAJ_BIN)
		return 0;
	if (!(r->buf[0] = util_alloc(r->raw_len, 1, err)))
		return -1;
	r->bcap[0] = r->raw_len;
	for (f = 0; f < r->nff; f++)
		if (!(r->csvf[f] = util_alloc((size_t)r->h.count, sizeof(float), err)))
			return -1;
	if (r->h.has_agents &&
	    (!(r->csv_id = util_alloc((size_t)r->h.count, sizeof *r->csv_id, err)) ||
	     !(r->csv_group = util_alloc((size_t)r->h.count, sizeof *r->csv_group, err))))
		return -1;
	return 0;
}

/* Bounds for positions: a scenario's bounds.min and bounds.max in the
 * modes that keep every position inside them. The tolerance covers the
 * rounding of the box to binary32; lossy frames add their precision. */
static void scenario_box(struct traj_reader *r, const cJSON *sc)
{
	const cJSON *b = cJSON_GetObjectItemCaseSensitive(sc, "bounds");
	const cJSON *mode = cJSON_GetObjectItemCaseSensitive(b, "mode");
	const cJSON *lo = cJSON_GetObjectItemCaseSensitive(b, "min");
	const cJSON *hi = cJSON_GetObjectItemCaseSensitive(b, "max");
	int d;

	/* A boidsim scenario (it has bounds) holds finite values only. */
	r->finite = cJSON_IsObject(b);
	if (!cJSON_IsString(mode) || (strcmp(mode->valuestring, "wrap") != 0 &&
				      strcmp(mode->valuestring, "reflect") != 0) ||
	    !cJSON_IsArray(lo) || !cJSON_IsArray(hi) || cJSON_GetArraySize(lo) != r->h.dims ||
	    cJSON_GetArraySize(hi) != r->h.dims)
		return;
	for (d = 0; d < r->h.dims; d++) {
		const cJSON *a = cJSON_GetArrayItem(lo, d), *z = cJSON_GetArrayItem(hi, d);
		double tol;
		float lf, hf;

		if (!cJSON_IsNumber(a) || !cJSON_IsNumber(z))
			return;
		/* the box the run kept its boids in */
		bounds_side32(a->valuedouble, z->valuedouble, &lf, &hf);
		tol = ldexp(detmath_fmax(fabs(lf), fabs(hf)), -20);
		r->box_lo[d] = lf - tol;
		r->box_hi[d] = hf + tol;
	}
	r->box = 1;
}

/* Whether a scenario's seed is the header's: a number (compared in
 * binary64, as JSON numbers are), or a string of decimal digits, as
 * boidsim writes seeds above 2^53, compared exactly. */
static int seed_matches(const cJSON *seed, uint64_t want)
{
	char digits[24];

	if (cJSON_IsNumber(seed))
		return seed->valuedouble == (double)want;
	snprintf(digits, sizeof digits, "%llu", (unsigned long long)want);
	return cJSON_IsString(seed) && strcmp(seed->valuestring, digits) == 0;
}

/* The embedded scenario is a JSON object without NUL, whose seed is the
 * header's. */
static int check_scenario(struct traj_reader *r, uint32_t jl, struct util_err *err)
{
	cJSON *sc, *seed;
	int rc = -1;

	if (strlen(r->h.scenario) != jl) {
		util_err_set(err, "%s: damaged header: a NUL byte in the embedded scenario", r->name);
		return -1;
	}
	/* with its NUL, which cJSON wants when nothing may follow the value */
	sc = cJSON_ParseWithLengthOpts(r->h.scenario, (size_t)jl + 1, NULL, 1);
	seed = cJSON_GetObjectItemCaseSensitive(sc, "seed");
	if (!cJSON_IsObject(sc))
		util_err_set(err, "%s: damaged header: the embedded scenario is not a JSON object",
			     r->name);
	else if (!seed_matches(seed, r->h.seed))
		util_err_set(err, "%s: damaged header: the embedded scenario's seed is not the "
			     "header's (%llu)", r->name, (unsigned long long)r->h.seed);
	else
		rc = 0;
	if (rc == 0) {
		const cJSON *dt = cJSON_GetObjectItemCaseSensitive(sc, "dt");

		scenario_box(r, sc);
		if (cJSON_IsNumber(dt) && dt->valuedouble > 0 && isfinite(dt->valuedouble))
			r->h.dt = dt->valuedouble;
	}
	cJSON_Delete(sc);
	return rc;
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
	if (r->h.version < TRAJ_VERSION_MIN || r->h.version > TRAJ_VERSION) {
		util_err_set(err, "%s: format version %d, this reader knows %d to %d", r->name,
			     r->h.version, TRAJ_VERSION_MIN, TRAJ_VERSION);
		return -1;
	}
	/* Version 1 knew no flag; version 2 knows TRAJ_FLAG_AGENTS; version 3
	 * TRAJ_FLAG_ZSTD too. */
	if ((r->h.flags & ~(r->h.version >= 3 ? TRAJ_FLAGS_KNOWN
				: r->h.version == 2 ? TRAJ_FLAG_AGENTS : 0u)) != 0) {
		util_err_set(err, "%s: header flags 0x%x are unknown to this reader", r->name,
			     (unsigned)r->h.flags);
		return -1;
	}
	r->h.has_agents = (r->h.flags & TRAJ_FLAG_AGENTS) != 0;
	/* With agents, the id and group fields come after the float fields. */
	if (r->h.has_agents && fields >= TRAJ_AGENT_FIELDS)
		fields -= TRAJ_AGENT_FIELDS;
	else if (r->h.has_agents)
		fields = 0;
	/* positions and velocities, and perhaps the hue */
	if ((r->h.dims != 2 && r->h.dims != 3) ||
	    (fields != (uint32_t)(2 * r->h.dims) && fields != (uint32_t)(2 * r->h.dims + 1)) ||
	    r->h.count == 0 || r->h.count > UINT32_MAX || gl > TRAJ_GENERATOR_MAX ||
	    jl > TRAJ_SCENARIO_MAX) {
		util_err_set(err, "%s: damaged header", r->name);
		return -1;
	}
	r->h.fields = (int)fields;
	r->h.has_hue = r->h.fields > 2 * r->h.dims;
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
	if (jl > 0 && check_scenario(r, jl, err) != 0)
		return -1;
	r->data_start = r->pos;
	return alloc_buffers(r, err);
}

/* What the frame read last holds: a step after the last one; and under a
 * boidsim scenario (a CSV has none) finite values, hues in [0, 1] and
 * positions inside the box when its bounds keep them there (lossy frames
 * within their precision more). */
static int check_frame(struct traj_reader *r, uint64_t nf, uint64_t step, int lossy,
		       struct util_err *err)
{
	const unsigned char *raw = r->buf[r->which];
	size_t n = (size_t)r->n, i;
	int f;

	if (r->frames > 0 && !r->random && step <= r->last_step) {
		util_err_set(err, "%s: frame %llu (step %llu): not after step %llu, the frame "
			     "before's", r->name, (unsigned long long)nf, (unsigned long long)step,
			     (unsigned long long)r->last_step);
		return -1;
	}
	for (f = 0; r->finite && f < r->nff; f++)
		for (i = 0; i < n; i++) {
			uint32_t u = traj_get_u32(raw + 4 * ((size_t)f * n + i));
			float v;
			double lo = -HUGE_VAL, hi = HUGE_VAL, tol = lossy ? r->precision : 0;

			memcpy(&v, &u, 4);
			if (f < r->h.dims && r->box) {
				lo = r->box_lo[f] - tol;
				hi = r->box_hi[f] + tol;
			} else if (f == 2 * r->h.dims) {
				lo = 0;
				hi = 1 + tol;
			}
			if (isfinite(v) && v >= lo && v <= hi)
				continue;
			util_err_set(err, "%s: frame %llu (step %llu): damaged values: %s of row %zu "
				     "is %.9g, %s", r->name, (unsigned long long)nf,
				     (unsigned long long)step, traj_field_name(r->h.dims, f), i,
				     (double)v, !isfinite(v) ? "not finite" :
				     f < r->h.dims ? "outside the scenario's box" : "outside [0, 1]");
			return -1;
		}
	return 0;
}

/* ---- CSV ---------------------------------------------------------------- */

/* Next line into r->line without its newline: 1, 0 at the end, -1 on error. */
static int csv_next_line(struct traj_reader *r, struct util_err *err)
{
	z_off_t at = gztell(r->gz);
	size_t len;

	if (gzgets(r->gz, r->line, sizeof r->line) == NULL) {
		int e;
		const char *why = gz_why(r, &e);

		if (e == Z_BUF_ERROR) {
			/* zlib's "unexpected end of file": the gzip stream stops
			 * without its end, so the last line read may be whole and
			 * yet the file is not. */
			r->cut = 1;
			r->cut_in_line = 0;
			util_err_set(err, "%s: gzip stream cut short after line %llu", r->name,
				     (unsigned long long)r->line_no);
			return -1;
		}
		if (e != Z_OK) {
			util_err_set(err, "%s: damaged after line %llu: %s", r->name,
				     (unsigned long long)r->line_no, why);
			return -1;
		}
		if (r->scan_err[0]) {
			r->cut = r->scan_cut;
			r->cut_in_line = r->scan_cut_in_line;
			util_err_set(err, "%s", r->scan_err);
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
		if ((uint64_t)(gztell(r->gz) - at) != len) {
			/* gzgets copied more than strlen sees */
			util_err_set(err, "%s:%llu:%zu: a NUL byte (the file is not text)", r->name,
				     (unsigned long long)r->line_no, len + 1);
			return -1;
		}
		r->cut = 1;
		r->cut_in_line = 1;
		util_err_set(err, "%s:%llu: file cut short in a line", r->name,
			     (unsigned long long)r->line_no);
		return -1;
	}
	r->line[len - 1] = '\0';
	return 1;
}

/* An unsigned decimal integer at p, at most max: digits only (no sign,
 * no blank, as strtoull alone would take). */
static int csv_uint(const char *p, char **end, uint64_t max, uint64_t *out)
{
	if (*p < '0' || *p > '9')
		return -1;
	errno = 0;
	*out = strtoull(p, end, 10);
	return errno || *out > max ? -1 : 0;
}

/* A value at p, in the grammar of boidsim-trajectory(5): an optional sign,
 * digits with an optional point (digits on at least one side), an optional
 * exponent; read in binary64, then rounded to binary32, so that it is the
 * value the Python reader gets too. No blank, hex, nan, inf or value that
 * rounds to an infinity. */
int traj_csv_value(const char *p, char **end, float *v)
{
	const char *q = p + (*p == '+' || *p == '-');
	size_t digits = strspn(q, "0123456789"), frac = 0;
	double d;

	q += digits;
	if (*q == '.') {
		frac = strspn(q + 1, "0123456789");
		q += 1 + frac;
	}
	if (digits + frac == 0)
		return -1;
	if (*q == 'e' || *q == 'E') {
		const char *e = q + 1 + (q[1] == '+' || q[1] == '-');
		size_t n = strspn(e, "0123456789");

		if (n == 0)
			return -1;
		q = e + n;
	}
	d = strtod(p, end);
	/* binary32's largest value and half an ulp above it round to it */
	if (*end != q || !(fabs(d) < 0x1.ffffffp+127))
		return -1;
	*v = (float)d;
	return 0;
}

/* Parses "step,id,v0,...,vk" from r->line; with agents (group not NULL)
 * "step,group,id,v0,...,vk", the group and id at most 2^32-1. */
static int csv_parse(struct traj_reader *r, uint64_t *step, uint64_t *group, uint64_t *id,
		     float *v, struct util_err *err)
{
	char *p = r->line, *end = p;
	int f, nf = r->h.fields;

	if (csv_uint(p, &end, UINT64_MAX, step) != 0 || *end != ',')
		goto bad;
	p = end + 1;
	if (group) {
		if (csv_uint(p, &end, UINT32_MAX, group) != 0 || *end != ',')
			goto bad;
		p = end + 1;
	}
	if (csv_uint(p, &end, group ? UINT32_MAX : UINT64_MAX, id) != 0)
		goto bad;
	for (f = 0; f < nf; f++) {
		if (*end != ',')
			goto bad;
		p = end + 1;
		if (traj_csv_value(p, &end, &v[f]) != 0)
			goto bad;
	}
	if (*end != '\0')
		goto bad;
	return 0;
bad:
	util_err_set(err, "%s:%llu:%zu: expected %d comma-separated numbers (see "
		     "boidsim-trajectory(5))", r->name, (unsigned long long)r->line_no,
		     (size_t)(p - r->line) + 1, nf + (group ? 3 : 2));
	return -1;
}

/* The step of r->line, for the pass over a CSV file with agents. */
static int csv_step(const char *line, uint64_t *step)
{
	char *end;

	if (*line < '0' || *line > '9')
		return -1;
	errno = 0;
	*step = strtoull(line, &end, 10);
	return *end == ',' && errno == 0 ? 0 : -1;
}

/* A failure of the local temporary copy of a pipe is the system's, not the
 * input's (util.h's not_input). */
static void spool_failed(struct util_err *err)
{
	if (err != NULL)
		err->not_input = 1;
}

/* CSV with agents: one pass over the frames (runs of lines with one step)
 * to learn the largest, which is the count the caller's arrays must hold;
 * then back to the first frame. A regular file is rewound; anything else
 * (a pipe) is copied as it is read into an unnamed temporary file, which
 * is then read instead. The pass stops at the first line that is not
 * sound: reading the frames meets it again (over a pipe, the copy ends
 * there, and the error is kept for when it runs out). */
static int csv_scan_agents(struct traj_reader *r, struct util_err *err)
{
	struct stat st;
	int rewind_ok = r->regular_fd ||
			(r->path != NULL && stat(r->path, &st) == 0 && S_ISREG(st.st_mode));
	FILE *spool = NULL;
	uint64_t most = 0, run = 0, step, cur = 0, start_line = r->line_no;
	int rc, fd;

	if (!rewind_ok && !(spool = tmpfile())) {
		util_err_set(err, "%s: cannot make a temporary file to read a pipe of agents: %s",
			     r->name, strerror(errno));
		spool_failed(err);
		return -1;
	}
	for (;;) {
		struct util_err scan = {0};

		rc = csv_next_line(r, &scan);
		if (rc < 0 && spool) {
			snprintf(r->scan_err, sizeof r->scan_err, "%s", scan.msg);
			r->scan_cut = r->cut;
			r->scan_cut_in_line = r->cut_in_line;
		}
		r->cut = 0;
		if (rc != 1)
			break;
		if (spool && fprintf(spool, "%s\n", r->line) < 0) {
			util_err_set(err, "%s: cannot copy into a temporary file: %s", r->name,
				     strerror(errno));
			spool_failed(err);
			fclose(spool);
			return -1;
		}
		if (csv_step(r->line, &step) != 0)
			break;
		if (run == 0 || step != cur)
			run = 0;
		cur = step;
		if (++run > most)
			most = run;
	}
	if (most == 0) {
		if (spool)
			fclose(spool);
		util_err_set(err, "%s: no frames after the header", r->name);
		return -1;
	}
	if (most > UINT32_MAX) {
		if (spool)
			fclose(spool);
		util_err_set(err, "%s: a frame of more than 2^32-1 agents", r->name);
		return -1;
	}
	r->h.count = most;
	r->line_no = start_line;
	if (!spool) {
		if (gzrewind(r->gz) != 0 || gzgets(r->gz, r->line, sizeof r->line) == NULL) {
			util_err_set(err, "%s: cannot read it again from the start", r->name);
			return -1;
		}
		return 0;
	}
	/* The copy holds the lines after the header. */
	fd = fflush(spool) == 0 ? dup(fileno(spool)) : -1;
	fclose(spool);
	if (fd < 0 || lseek(fd, 0, SEEK_SET) != 0) {
		util_err_set(err, "%s: cannot read back a temporary file: %s", r->name,
			     strerror(errno));
		spool_failed(err);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	gzclose(r->gz);
	r->gz = gzdopen(fd, "rb");
	if (r->gz == NULL) {
		close(fd);
		util_err_set(err, "%s: cannot read back a temporary file", r->name);
		spool_failed(err);
		return -1;
	}
	gzbuffer(r->gz, 1 << 17);
	return 0;
}

/* The header line (its first bytes already read as magic), then the first
 * frame, whose length is the count. */
static int open_csv(struct traj_reader *r, const unsigned char *magic, size_t got,
		    struct util_err *err)
{
	size_t cap = 1024, n = 0;
	int f, rc, agents, dims, hue;

	r->h.format = gzdirect(r->gz) ? TRAJ_CSV : TRAJ_CSV_GZ;
	memcpy(r->line, magic, got);
	if (gzgets(r->gz, r->line + got, (int)(sizeof r->line - got)) == NULL && got == 0) {
		util_err_set(err, "%s: empty file", r->name);
		return -1;
	}
	r->line_no = 1;
	/* step,[group,]id,x,y,[z,]vx,vy,[vz,][hue] */
	for (agents = 0; agents < 2 && !r->h.dims; agents++)
		for (dims = 2; dims <= 3 && !r->h.dims; dims++)
			for (hue = 0; hue < 2; hue++) {
				char want[80];

				strcpy(want, agents ? "step,group,id" : "step,id");
				for (f = 0; f < 2 * dims + hue; f++)
					sprintf(want + strlen(want), ",%s", traj_field_name(dims, f));
				strcat(want, "\n");
				if (strcmp(r->line, want) == 0) {
					r->h.dims = dims;
					r->h.has_hue = hue;
					r->h.has_agents = agents;
					break;
				}
			}
	if (!r->h.dims) {
		util_err_set(err, "%s: not a boidsim trajectory (neither the binary format "
			     "nor a boidsim CSV header)", r->name);
		return -1;
	}
	r->h.fields = 2 * r->h.dims + r->h.has_hue;
	r->h.flags = r->h.has_agents ? TRAJ_FLAG_AGENTS : 0;
	if (!(r->h.generator = strdup("")) || !(r->h.scenario = strdup("")))
		goto oom;
	if (r->h.has_agents) {
		if (csv_scan_agents(r, err) != 0)
			return -1;
		return alloc_buffers(r, err);
	}
	for (f = 0; f < r->h.fields; f++)
		if (!(r->first[f] = malloc(cap * sizeof(float))))
			goto oom;
	while ((rc = csv_next_line(r, err)) == 1) {
		uint64_t step, id;
		float v[TRAJ_FIELDS_MAX];

		if (csv_parse(r, &step, NULL, &id, v, err) != 0)
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
			for (f = 0; f < r->h.fields; f++) {
				float *nb = realloc(r->first[f], cap * sizeof(float));

				if (nb == NULL)
					goto oom;
				r->first[f] = nb;
			}
		}
		for (f = 0; f < r->h.fields; f++)
			r->first[f][n] = v[f];
		n++;
	}
	if (rc < 0 && !r->cut)
		return -1;
	if (rc < 0) {
		/* Cut in a line: when that line is of another step, the first
		 * frame is whole; else its count is not known, and no frame is
		 * whole. The read after them says where the file was cut. */
		char *e;
		uint64_t ps;
		int same = csv_uint(r->line, &e, UINT64_MAX, &ps) == 0 && (*e == ',' || !*e) &&
			   ps == r->first_frame_step;

		snprintf(r->scan_err, sizeof r->scan_err, "%s", err->msg);
		r->scan_cut = 1;
		r->scan_cut_in_line = 1;
		r->cut = 0;
		r->h.count = n ? n : 1;
		r->first_pending = n > 0 && !same;
		return alloc_buffers(r, err);
	}
	if (n == 0) {
		util_err_set(err, "%s: no frames after the header", r->name);
		return -1;
	}
	r->h.count = n;
	r->first_pending = 1;
	return alloc_buffers(r, err);
oom:
	util_err_no_memory(err);
	return -1;
}

static int read_csv_frame(struct traj_reader *r, uint64_t *step,
			  float *const fields[TRAJ_FIELDS_MAX], struct util_err *err)
{
	size_t n = (size_t)r->h.count, k;
	int f, nf = r->h.fields, rc;

	if (r->first_pending) {
		r->first_pending = 0;
		for (f = 0; f < nf; f++)
			memcpy(fields[f], r->first[f], n * sizeof(float));
		*step = r->first_frame_step;
		return 1;
	}
	for (k = 0; k < n; k++) {
		uint64_t s, id;
		float v[TRAJ_FIELDS_MAX];

		if (r->have_line) {
			r->have_line = 0;
		} else if ((rc = csv_next_line(r, err)) != 1) {
			if (rc == 0 && k == 0)
				return 0;
			r->cut |= rc == 0;
			if (rc == 0)
				util_err_set(err, "%s: file cut short in frame %llu", r->name,
					     (unsigned long long)r->frames);
			return -1;
		}
		if (csv_parse(r, &s, NULL, &id, v, err) != 0)
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

/* A CSV frame with agents: the run of lines with one step, into fields
 * and r->csv_id, r->csv_group; its count into *n. */
static int read_csv_agents_frame(struct traj_reader *r, uint64_t *step,
				 float *const fields[TRAJ_FIELDS_MAX], uint64_t *n,
				 struct util_err *err)
{
	size_t k = 0;
	int f, nf = r->h.fields, rc;

	for (;;) {
		uint64_t s, g, id;
		float v[TRAJ_FIELDS_MAX];

		if (r->have_line) {
			r->have_line = 0;
		} else if ((rc = csv_next_line(r, err)) != 1) {
			/* A gzip stream cut after a whole line ends the frame
			 * there, as the end of a plain file does (a frame's
			 * count is not known); the next read says where the
			 * file was cut. A cut inside a line takes its frame
			 * with it: that frame is not whole. */
			if (rc < 0 && !(r->cut && !r->cut_in_line && k > 0))
				return -1;
			if (k == 0)
				return 0;
			break;
		}
		if (csv_parse(r, &s, &g, &id, v, err) != 0)
			return -1;
		if (k > 0 && s != *step) {
			r->have_line = 1;
			break;
		}
		*step = s;
		if (g >= TRAJ_GROUPS) {
			util_err_set(err, "%s:%llu: group %llu (0 boid, 1 predator)", r->name,
				     (unsigned long long)r->line_no, (unsigned long long)g);
			return -1;
		}
		if (k > 0 && (g < r->csv_group[k - 1] ||
			      (g == r->csv_group[k - 1] && id <= r->csv_id[k - 1]))) {
			util_err_set(err, "%s:%llu: agents out of (group, id) order", r->name,
				     (unsigned long long)r->line_no);
			return -1;
		}
		if (k == r->h.count) {
			util_err_set(err, "%s:%llu: more agents in this frame than when the file "
				     "was opened", r->name, (unsigned long long)r->line_no);
			return -1;
		}
		for (f = 0; f < nf; f++)
			fields[f][k] = v[f];
		r->csv_id[k] = (uint32_t)id;
		r->csv_group[k] = (uint32_t)g;
		k++;
	}
	*n = k;
	return 1;
}

/* ---- binary frames ------------------------------------------------------ */

static int read_end(struct traj_reader *r, const unsigned char *tag, struct util_err *err)
{
	unsigned char e[TRAJ_END_LEN];

	memcpy(e, tag, 4);
	if (read_exact(r, e + 4, sizeof e - 4) != 1) {
		r->cut = 1;
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

static void get_entry(struct traj_index_entry *e, const unsigned char *b)
{
	e->step = traj_get_u64(b);
	e->offset = traj_get_u64(b + 8);
	e->codec = traj_get_u32(b + 16);
	e->back = traj_get_u32(b + 20);
}

/* The frame index met while reading frame by frame (tag already read):
 * its CRC, and every entry equal to what the frames read said. */
static int read_index_record(struct traj_reader *r, const unsigned char *tag,
			     struct util_err *err)
{
	unsigned char b[TRAJ_INDEX_ENTRY * 256];
	uint64_t n, k = 0;
	uLong crc;

	memcpy(b, tag, 4);
	if (read_exact(r, b + 4, 8) != 1)
		goto cut;
	crc = crc32(0L, b, 12);
	n = traj_get_u64(b + 4);
	if (n != r->frames) {
		util_err_set(err, "%s: damaged frame index: %llu entries for %llu frames",
			     r->name, (unsigned long long)n, (unsigned long long)r->frames);
		return -1;
	}
	while (k < n) {
		size_t m = n - k < 256 ? (size_t)(n - k) : 256, j;

		if (read_exact(r, b, m * TRAJ_INDEX_ENTRY) != 1)
			goto cut;
		crc = crc32(crc, b, (uInt)(m * TRAJ_INDEX_ENTRY));
		for (j = 0; j < m; j++, k++) {
			struct traj_index_entry e;

			get_entry(&e, b + j * TRAJ_INDEX_ENTRY);
			if (memcmp(&e, &r->seen[k], sizeof e) != 0) {
				util_err_set(err, "%s: damaged frame index: entry %llu differs from "
					     "frame %llu", r->name, (unsigned long long)k,
					     (unsigned long long)k);
				return -1;
			}
		}
	}
	if (read_exact(r, b, 4) != 1)
		goto cut;
	if (traj_get_u32(b) != (uint32_t)crc) {
		util_err_set(err, "%s: frame index CRC mismatch", r->name);
		return -1;
	}
	r->indexed = 1;
	r->after_index = 1;
	return 0;
cut:
	r->cut = 1;
	util_err_set(err, "%s: frame index cut short after %llu frames", r->name,
		     (unsigned long long)r->frames);
	return -1;
}

/* The largest stream a lossy frame of n agents can have: the prelude, 8
 * planes and an exception for every value. */
static uint64_t quant_stream_max(const struct traj_reader *r, uint64_t n)
{
	return TRAJ_QUANT_PRELUDE + (uint64_t)r->nf +
	       n * (uint64_t)r->nf * (8 + TRAJ_QUANT_EXCEPTION);
}

/* No honest payload is longer: chunks of at least TRAJ_CHUNK_MIN bytes,
 * each at most compressBound of its length, and the chunk table. */
static uint64_t payload_max(uint64_t raw)
{
	uint64_t chunks = (raw + TRAJ_CHUNK_MIN - 1) / TRAJ_CHUNK_MIN;

	return 8 + 17 * chunks + raw + (raw >> 12) + (raw >> 14) + (raw >> 25) + 13;
}

/* Deflate's largest expansion, 1032 to 1 (RFC 1951: a match of 258
 * bytes in at least 2 bits of a block), rounded up. */
#define TRAJ_INFLATE_RATIO 1040
/* Zstandard's: a block holds at most 128 KiB and takes at least 4 bytes
 * (RFC 8878, 3.1.1.2: a 3-byte block header and an RLE block's byte). */
#define TRAJ_ZSTD_RATIO 32768

/* Checks a frame header against the file's header: count (the header's,
 * or with agents at most that), codec, stream length R and payload length
 * Z. */
static int check_frame_header(struct traj_reader *r, const unsigned char *h, uint64_t nf,
			      struct util_err *err)
{
	uint32_t codec = traj_get_u32(h + 16), count = traj_get_u32(h + 12);
	uint64_t raw = traj_get_u64(h + 20), z = traj_get_u64(h + 28);
	int ok = (r->h.has_agents ? count <= r->h.count : count == r->h.count) &&
		 codec < TRAJ_CODECS && (r->h.version >= 2 || codec == TRAJ_CODEC_ZLIB_F32) &&
		 (r->h.version >= 3 || codec != TRAJ_CODEC_PREDICT);

	if (ok && codec <= TRAJ_CODEC_XOR)
		ok = raw == (uint64_t)count * (uint64_t)r->nf * 4;
	else if (ok && codec == TRAJ_CODEC_PREDICT)
		ok = raw == TRAJ_PREDICT_PRELUDE + (uint64_t)count * (uint64_t)r->nf * 4;
	else if (ok)
		ok = raw >= TRAJ_QUANT_PRELUDE + (uint64_t)r->nf &&
		     raw <= quant_stream_max(r, count);
	if (ok)
		ok = codec == TRAJ_CODEC_ZLIB_F32 ? z <= compressBound((uLong)raw)
						  : z >= 8 && z <= payload_max(raw);
	/* Deflate makes at most TRAJ_INFLATE_RATIO bytes of each byte it
	 * reads (Zstandard TRAJ_ZSTD_RATIO), so a small payload cannot claim a
	 * large stream (and make the reader allocate for it). */
	if (ok)
		ok = raw / (r->h.flags & TRAJ_FLAG_ZSTD && codec != TRAJ_CODEC_ZLIB_F32
			    ? TRAJ_ZSTD_RATIO : TRAJ_INFLATE_RATIO) <= z;
	if (!ok) {
		util_err_set(err, "%s: frame %llu: damaged frame header", r->name,
			     (unsigned long long)nf);
		return -1;
	}
	return 0;
}

/* Room for a stream per thread the next parallel loop may use. */
static int reserve_streams(struct traj_reader *r, struct util_err *err)
{
	int n = 1;
	z_stream **zs;
	ZSTD_DCtx **zd;

#ifdef _OPENMP
	n = omp_get_max_threads();
#endif
	if (n <= r->nzs)
		return 0;
	zs = calloc((size_t)n, sizeof *zs);
	zd = calloc((size_t)n, sizeof *zd);
	if (zs == NULL || zd == NULL) {
		free(zs);
		free(zd);
		util_err_no_memory(err);
		return -1;
	}
	/* > 0, not != 0: gcc then knows the size is not a negative count
	 * turned huge (on one thread nzs < n = 1 makes this dead code). */
	if (r->nzs > 0) {
		memcpy(zs, r->zs, (size_t)r->nzs * sizeof *zs);
		memcpy(zd, r->zd, (size_t)r->nzs * sizeof *zd);
	}
	free(r->zs);
	free(r->zd);
	r->zs = zs;
	r->zd = zd;
	r->nzs = n;
	return 0;
}

/* The calling thread's slot among the per-thread streams (reserve_streams
 * made one for every thread a parallel loop may use), or -1. */
static int thread_slot(const struct traj_reader *r)
{
	int tid = 0;

#ifdef _OPENMP
	tid = omp_get_thread_num();
#endif
	return tid < r->nzs ? tid : -1;
}

/* Exactly one whole zlib stream of len bytes, inflating to exactly
 * out_len bytes, with this thread's stream. */
static int inflate_exact(struct traj_reader *r, const unsigned char *in, size_t len,
			 unsigned char *out, size_t out_len)
{
	int tid = thread_slot(r), rc;
	z_stream *zs;

	if (tid < 0)
		return -1;
	zs = r->zs[tid];
	if (zs == NULL) {
		if (!(zs = calloc(1, sizeof *zs)))
			return -1;
		if (inflateInit(zs) != Z_OK) {
			free(zs);
			return -1;
		}
		r->zs[tid] = zs;
	} else if (inflateReset(zs) != Z_OK) {
		return -1;
	}
	zs->next_in = (Bytef *)(uintptr_t)in;
	zs->avail_in = (uInt)len;
	zs->next_out = out;
	zs->avail_out = (uInt)out_len;
	rc = inflate(zs, Z_FINISH);
	return rc == Z_STREAM_END && zs->avail_in == 0 && zs->avail_out == 0 ? 0 : -1;
}

/* Exactly one whole Zstandard frame of len bytes, decompressing to exactly
 * out_len bytes, or (len == out_len) the chunk's bytes themselves, with
 * this thread's context. */
static int unzstd_exact(struct traj_reader *r, const unsigned char *in, size_t len,
			unsigned char *out, size_t out_len)
{
	int tid;
	ZSTD_DCtx *zd;
	size_t got;

	if (len == out_len) {
		memcpy(out, in, len);
		return 0;
	}
	/* a frame never outgrows its chunk (the writer stores it instead),
	 * and its header gives its size */
	if (len > out_len || ZSTD_findFrameCompressedSize(in, len) != len ||
	    ZSTD_getFrameContentSize(in, len) != out_len)
		return -1;
	if ((tid = thread_slot(r)) < 0)
		return -1;
	zd = r->zd[tid];
	if (zd == NULL && !(zd = r->zd[tid] = ZSTD_createDCtx()))
		return -1;
	got = ZSTD_decompressDCtx(zd, out, out_len, in, len);
	return !ZSTD_isError(got) && got == out_len ? 0 : -1;
}

/* The chunked payload of codecs 1-4 into the stream T (raw bytes). */
static int unchunk(struct traj_reader *r, uint64_t raw, uint64_t z, uint64_t nf,
		   struct util_err *err)
{
	uint32_t csize = traj_get_u32(r->zbuf), n = traj_get_u32(r->zbuf + 4);
	uint64_t want = 0, off;
	size_t k;
	int bad = 0;
	long kk;

	/* A stream of 0 bytes (a frame of no agents) has no chunks. */
	if (csize < TRAJ_CHUNK_MIN || csize > TRAJ_CHUNK_MAX)
		goto damaged;
	want = (raw + csize - 1) / csize;
	if (n != want || 8 + 4 * (uint64_t)n > z)
		goto damaged;
	if (reserve_streams(r, err) != 0 ||
	    util_reserve(&r->coff, &r->coff_cap, (size_t)n * sizeof *r->coff, err) != 0 ||
	    util_reserve(&r->crc_rc, &r->rc_cap, (size_t)n * sizeof *r->crc_rc, err) != 0 ||
	    util_reserve(&r->tbuf, &r->tcap, (size_t)raw, err) != 0)
		return -1;
	off = 8 + 4 * (uint64_t)n;
	for (k = 0; k < n; k++) {
		r->coff[k] = (size_t)off;
		off += traj_get_u32(r->zbuf + 8 + 4 * k);
	}
	if (off != z)
		goto damaged;
	#pragma omp parallel for schedule(dynamic, 1) if (n > 1 && r->h.count >= r->parallel_min)
	for (kk = 0; kk < (long)n; kk++) {
		size_t lo = (size_t)kk * csize, len = (size_t)raw - lo < csize ? (size_t)raw - lo : csize;

		const unsigned char *in = r->zbuf + r->coff[kk];
		const size_t zlen = traj_get_u32(r->zbuf + 8 + 4 * (size_t)kk);

		r->crc_rc[kk] = r->h.flags & TRAJ_FLAG_ZSTD
				? unzstd_exact(r, in, zlen, r->tbuf + lo, len)
				: inflate_exact(r, in, zlen, r->tbuf + lo, len);
	}
	for (k = 0; k < n; k++)
		bad |= r->crc_rc[k];
	if (bad) {
		util_err_set(err, "%s: frame %llu: payload does not decompress", r->name,
			     (unsigned long long)nf);
		return -1;
	}
	return 0;
damaged:
	util_err_set(err, "%s: frame %llu: damaged chunk table", r->name, (unsigned long long)nf);
	return -1;
}

/* Codecs 1, 2 and 5: byte planes back into float32 bits (or the u32 of
 * ids and groups), XOR the previous frame's for codec 2 and 5 (whose
 * stream opens with its prelude); n agents. */
static void unshuffle(struct traj_reader *r, uint32_t codec, unsigned char *out,
		      const unsigned char *base, size_t n)
{
	const size_t t0 = codec == TRAJ_CODEC_PREDICT ? TRAJ_PREDICT_PRELUDE : 0;
	int f;

	if (codec == TRAJ_CODEC_SHUFFLE)
		base = NULL;
	for (f = 0; f < r->nf; f++) {
		const unsigned char *p = r->tbuf + t0 + (size_t)f * 4 * n;
		unsigned char *o = out + (size_t)f * 4 * n;
		const unsigned char *bs = base ? base + (size_t)f * 4 * n : NULL;
		size_t i;

		#pragma omp parallel for schedule(static) if (n >= r->parallel_min)
		for (i = 0; i < n; i++) {
			uint32_t u = (uint32_t)p[i] | (uint32_t)p[n + i] << 8 |
				     (uint32_t)p[2 * n + i] << 16 | (uint32_t)p[3 * n + i] << 24;

			if (bs)
				u ^= traj_get_u32(bs + 4 * i);
			traj_put_u32(o + 4 * i, u);
		}
	}
	/* Codec 5's positions were XORed with their prediction from the
	 * previous frame's and this frame's velocity, not with the previous
	 * frame's: one XOR takes the one off and puts the other on. */
	for (f = 0; codec == TRAJ_CODEC_PREDICT && f < r->h.dims; f++) {
		const double h = traj_get_f64(r->tbuf);
		unsigned char *o = out + (size_t)f * 4 * n;
		const unsigned char *v = out + (size_t)(r->h.dims + f) * 4 * n;
		const unsigned char *bs = base + (size_t)f * 4 * n;
		size_t i;

		#pragma omp parallel for schedule(static) if (n >= r->parallel_min)
		for (i = 0; i < n; i++) {
			uint32_t x = traj_get_u32(bs + 4 * i);

			traj_put_u32(o + 4 * i, traj_get_u32(o + 4 * i) ^ x ^
				     traj_predict(x, traj_get_u32(v + 4 * i), h));
		}
	}
}

/* Codecs 3 and 4: the prelude, the planes of zigzag differences (or of
 * the integers themselves, codec 3), the exceptions; n agents. The id and
 * group fields of agents are their integers, never exceptions. */
static int unquantise(struct traj_reader *r, uint32_t codec, uint64_t raw, unsigned char *out,
		      size_t n, uint64_t nf, struct util_err *err)
{
	const unsigned char *t = r->tbuf;
	size_t plane = TRAJ_QUANT_PRELUDE + (size_t)r->nf, s, x;
	size_t floats = n * (size_t)r->nff; /* exceptions only in these slots */
	double p = traj_get_f64(t);
	uint64_t nexc = traj_get_u64(t + 8), planes = 0, last = 0;
	int f, key = codec == TRAJ_CODEC_QUANT, bad = 0;

	for (f = 0; f < r->nf; f++) {
		if (t[TRAJ_QUANT_PRELUDE + f] > 8)
			goto damaged;
		planes += t[TRAJ_QUANT_PRELUDE + f];
	}
	if (!(p > 0 && p <= TRAJ_PRECISION_MAX) || nexc > floats ||
	    raw != plane + planes * n + nexc * TRAJ_QUANT_EXCEPTION)
		goto damaged;
	if (!key && !(r->have_q && r->qprec == p)) {
		util_err_set(err, "%s: frame %llu: a lossy delta frame without the lossy frame "
			     "of the same precision it depends on", r->name, (unsigned long long)nf);
		return -1;
	}
	/* A delta frame has the count of the frame before: only a key frame
	 * can need more room. */
	if (util_reserve_raw(&r->q, &r->qcap, n * (size_t)r->nf * sizeof *r->q, err) != 0)
		return -1;
	for (f = 0; f < r->nf; f++) {
		int k = t[TRAJ_QUANT_PRELUDE + f];
		const unsigned char *pl = t + plane;
		uint64_t *q = (uint64_t *)(r->q + (size_t)f * n);
		unsigned char *o = out + (size_t)f * 4 * n;
		size_t i;

		if (f >= r->nff) {
			/* id or group: the integer itself, exactly, a u32 */
			for (i = 0; i < n; i++) {
				uint64_t zz = 0, v;
				int b;

				for (b = 0; b < k; b++)
					zz |= (uint64_t)pl[(size_t)b * n + i] << (8 * b);
				v = key ? traj_unzigzag(zz) : q[i] + traj_unzigzag(zz);
				q[i] = v;
				bad |= v > UINT32_MAX;
				traj_put_u32(o + 4 * i, (uint32_t)v);
			}
			plane += (size_t)k * n;
			continue;
		}
		#pragma omp parallel for schedule(static) if (n >= r->parallel_min)
		for (i = 0; i < n; i++) {
			uint64_t zz = 0, v;
			int b;
			float y;
			uint32_t u;

			for (b = 0; b < k; b++)
				zz |= (uint64_t)pl[(size_t)b * n + i] << (8 * b);
			v = key ? traj_unzigzag(zz) : q[i] + traj_unzigzag(zz);
			q[i] = v;
			y = traj_dequantise((int64_t)v, p);
			memcpy(&u, &y, 4);
			traj_put_u32(o + 4 * i, u);
		}
		plane += (size_t)k * n;
	}
	if (bad) {
		r->have_q = 0;
		goto damaged;
	}
	for (x = 0; x < nexc; x++) {
		const unsigned char *e = t + plane + x * TRAJ_QUANT_EXCEPTION;
		uint64_t slot = traj_get_u64(e);

		if (slot >= floats || (x > 0 && slot <= last)) {
			r->have_q = 0;
			goto damaged;
		}
		last = slot;
		s = (size_t)slot;
		memcpy(out + 4 * s, e + 8, 4);
	}
	r->have_q = 1;
	r->qprec = p;
	r->precision = p;
	return 0;
damaged:
	util_err_set(err, "%s: frame %llu: damaged lossy frame", r->name, (unsigned long long)nf);
	return -1;
}

/* With agents: the decoded frame's groups are 0 or 1, and its agents in
 * strictly increasing (group, id) order. */
static int check_agents(struct traj_reader *r, const unsigned char *out, size_t n,
			uint64_t nf, struct util_err *err)
{
	const unsigned char *id = out + (size_t)r->nff * 4 * n, *group = id + 4 * n;
	uint32_t pg = 0, pi = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		uint32_t g = traj_get_u32(group + 4 * i), d = traj_get_u32(id + 4 * i);

		if (g >= TRAJ_GROUPS) {
			util_err_set(err, "%s: frame %llu: damaged agents: agent %zu has group %lu",
				     r->name, (unsigned long long)nf, i, (unsigned long)g);
			return -1;
		}
		if (i > 0 && (g < pg || (g == pg && d <= pi))) {
			util_err_set(err, "%s: frame %llu: damaged agents: agent %zu out of (group, "
				     "id) order", r->name, (unsigned long long)nf, i);
			return -1;
		}
		pg = g;
		pi = d;
	}
	return 0;
}

/* The payload of frame nf (in r->zbuf, its header h) checked and decoded
 * into the next buffer, which then becomes the frame read last. */
static int decode_frame(struct traj_reader *r, const unsigned char *h, uint64_t nf,
			struct util_err *err)
{
	uint32_t codec = traj_get_u32(h + 16), count = traj_get_u32(h + 12);
	uint64_t raw = traj_get_u64(h + 20), z = traj_get_u64(h + 28);
	unsigned char *out, *base;
	size_t n = (size_t)count;
	int rc = 0;

	if (util_reserve_raw(&r->buf[r->which ^ 1], &r->bcap[r->which ^ 1],
			     n * (size_t)r->nf * 4, err) != 0)
		goto fail;
	out = r->buf[r->which ^ 1];
	base = r->buf[r->which];

	if (traj_get_u32(h + 36) != (uint32_t)crc32_z(crc32(0L, h, 36), r->zbuf, (z_size_t)z)) {
		util_err_set(err, "%s: frame %llu (step %llu): CRC mismatch", r->name,
			     (unsigned long long)nf, (unsigned long long)traj_get_u64(h + 4));
		goto fail;
	}
	if (!traj_codec_is_key(codec) && !r->have_base) {
		util_err_set(err, "%s: frame %llu: a delta frame without the frame it depends on",
			     r->name, (unsigned long long)nf);
		goto fail;
	}
	if (!traj_codec_is_key(codec) && count != r->n) {
		util_err_set(err, "%s: frame %llu: a delta frame of %lu agents after a frame of "
			     "%llu", r->name, (unsigned long long)nf, (unsigned long)count,
			     (unsigned long long)r->n);
		goto fail;
	}
	if (codec == TRAJ_CODEC_ZLIB_F32) {
		if (reserve_streams(r, err) != 0)
			goto fail;
		if (inflate_exact(r, r->zbuf, (size_t)z, out, (size_t)raw) != 0) {
			util_err_set(err, "%s: frame %llu: payload does not decompress", r->name,
				     (unsigned long long)nf);
			goto fail;
		}
	} else if (unchunk(r, raw, z, nf, err) != 0) {
		goto fail;
	} else if (traj_codec_is_planes(codec)) {
		unshuffle(r, codec, out, base, n);
	} else {
		rc = unquantise(r, codec, raw, out, n, nf, err);
		if (rc != 0)
			goto fail;
	}
	if (r->h.has_agents && check_agents(r, out, n, nf, err) != 0)
		goto fail;
	if (codec <= TRAJ_CODEC_XOR || codec == TRAJ_CODEC_PREDICT)
		r->have_q = 0;
	r->which ^= 1;
	r->have_base = 1;
	r->n = count;
	return 0;
fail:
	r->have_base = 0;
	r->have_q = 0;
	return -1;
}

static int remember_frame(struct traj_reader *r, const unsigned char *h, uint64_t offset,
			  struct util_err *err)
{
	struct traj_index_entry *e;
	uint32_t codec = traj_get_u32(h + 16);

	if (r->frames == r->seen_cap) {
		size_t cap = r->seen_cap ? 2 * r->seen_cap : 256;
		struct traj_index_entry *n = util_alloc(cap, sizeof *n, err);

		if (n == NULL)
			return -1;
		if (r->frames)
			memcpy(n, r->seen, (size_t)r->frames * sizeof *n);
		util_free(r->seen);
		r->seen = n;
		r->seen_cap = cap;
	}
	e = &r->seen[r->frames];
	memset(e, 0, sizeof *e);
	e->step = traj_get_u64(h + 4);
	e->offset = offset;
	e->codec = codec;
	e->back = traj_codec_is_key(codec) ? 0 : r->seen[r->frames - 1].back + 1;
	return 0;
}

/* The payload of z bytes into r->zbuf: 1, 0 when the input ends first,
 * -1 on error. Room grows with what is read, never beyond what a plain
 * file still holds, so a false length costs no memory. */
static int read_payload(struct traj_reader *r, uint64_t z, struct util_err *err)
{
	size_t got = 0;

	if (r->size && z > r->size - r->pos) {
		r->pos = r->size;
		return 0;
	}
	while (got < z) {
		size_t want = z - got, cap = r->zcap;
		int rc;

		if (!r->size && got + want > cap) {
			/* a pipe or gzip: double as data comes, from 1 MiB */
			size_t grow = cap < (1u << 20) ? (1u << 20) : 2 * cap;

			if (grow > z)
				grow = (size_t)z;
			if (grow > cap) {
				unsigned char *nb = util_alloc_raw(grow, 1, err);

				if (nb == NULL)
					return -1;
				if (got)
					memcpy(nb, r->zbuf, got);
				util_free(r->zbuf);
				r->zbuf = nb;
				r->zcap = cap = grow;
			}
			want = cap - got;
		} else if (util_reserve_raw(&r->zbuf, &r->zcap, (size_t)z, err) != 0) {
			return -1;
		}
		rc = read_exact(r, r->zbuf + got, want);
		if (rc != 1)
			return 0;
		got += want;
	}
	return 1;
}

static int read_bin_frame(struct traj_reader *r, uint64_t *step, struct util_err *err)
{
	unsigned char h[TRAJ_FRAME_HEADER];
	unsigned long long nf = (unsigned long long)r->frames;
	uint64_t offset, z;
	int rc;

	for (;;) {
		offset = r->frame_off = r->pos;
		rc = read_exact(r, h, 4);
		if (rc == 0)
			return 0; /* a killed run: the file ends after a complete record */
		if (rc < 0)
			goto cut;
		/* After frames were skipped the index and end record cannot
		 * match what was read: the frames end there. */
		if (r->salvaged && (memcmp(h, TRAJ_END_TAG, 4) == 0 ||
				    memcmp(h, TRAJ_INDEX_TAG, 4) == 0))
			return 0;
		if (memcmp(h, TRAJ_END_TAG, 4) == 0)
			return read_end(r, h, err);
		if (memcmp(h, TRAJ_INDEX_TAG, 4) == 0 && r->h.version >= 2 && !r->after_index) {
			if (read_index_record(r, h, err) != 0)
				return -1;
			continue;
		}
		if (memcmp(h, TRAJ_FRAME_TAG, 4) != 0 || r->after_index) {
			util_err_set(err, "%s: frame %llu: bad record tag", r->name, nf);
			return -1;
		}
		break;
	}
	if (read_exact(r, h + 4, sizeof h - 4) != 1)
		goto cut;
	if (check_frame_header(r, h, nf, err) != 0)
		return -1;
	z = traj_get_u64(h + 28);
	rc = read_payload(r, z, err);
	if (rc < 0)
		return -1;
	if (rc == 0)
		goto cut;
	if (decode_frame(r, h, nf, err) != 0 || remember_frame(r, h, offset, err) != 0)
		return -1;
	r->codec_frames[traj_get_u32(h + 16)]++;
	*step = traj_get_u64(h + 4);
	return 1;
cut:
	r->cut = 1;
	util_err_set(err, "%s: file cut short in frame %llu", r->name, nf);
	return -1;
}

/* The frame read last (r->n agents), into the caller's arrays, and when a
 * is not NULL its agents (without the flag: ids 0..n-1, all boids). */
static void copy_out(const struct traj_reader *r, float *const fields[TRAJ_FIELDS_MAX],
		     struct traj_agents *a)
{
	size_t n = (size_t)r->n, i;
	const unsigned char *raw = r->buf[r->which];
	int f;

	for (f = 0; f < r->nff; f++) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
		memcpy(fields[f], raw + (size_t)f * 4 * n, n * sizeof(float));
#else
		for (i = 0; i < n; i++) {
			uint32_t u = traj_get_u32(raw + 4 * ((size_t)f * n + i));

			memcpy(&fields[f][i], &u, 4);
		}
#endif
	}
	if (a == NULL)
		return;
	a->n = r->n;
	for (i = 0; i < n; i++) {
		if (r->h.has_agents) {
			a->id[i] = traj_get_u32(raw + 4 * ((size_t)r->nff * n + i));
			a->group[i] = traj_get_u32(raw + 4 * ((size_t)(r->nff + 1) * n + i));
		} else {
			a->id[i] = (uint32_t)i;
			a->group[i] = TRAJ_GROUP_BOID;
		}
	}
}

/* A CSV frame of n agents, packed as the binary reader decodes them: the
 * float arrays, then with agents the ids and groups. */
static void pack_csv(struct traj_reader *r, float *const fields[TRAJ_FIELDS_MAX], size_t n)
{
	unsigned char *out = r->buf[r->which];
	size_t i, off = 0;
	int f;

	for (f = 0; f < r->nff; f++)
		for (i = 0; i < n; i++, off += 4) {
			uint32_t u;

			memcpy(&u, &fields[f][i], 4);
			traj_put_u32(out + off, u);
		}
	for (i = 0; r->h.has_agents && i < n; i++)
		traj_put_u32(out + 4 * ((size_t)r->nff * n + i), r->csv_id[i]);
	for (i = 0; r->h.has_agents && i < n; i++)
		traj_put_u32(out + 4 * ((size_t)(r->nff + 1) * n + i), r->csv_group[i]);
	r->n = n;
}

static int no_agents(struct traj_reader *r, struct util_err *err)
{
	util_err_set(err, "%s: the frames hold agents (ids and groups, counts that change): "
		     "read them with traj_read_frame_agents", r->name);
	return -1;
}

int traj_read_next(struct traj_reader *r, uint64_t *step, struct util_err *err)
{
	float *const *fields = r->csvf;
	int rc;

	if (r->ended || r->exhausted)
		return 0;
	r->cut = 0;
	if (r->random) {
		util_err_set(err, "%s: cannot read frame by frame after random access", r->name);
		return -1;
	}
	if (r->h.format == TRAJ_BIN) {
		rc = read_bin_frame(r, step, err);
		if (rc != 1)
			return rc;
	} else if (r->h.has_agents) {
		uint64_t n;

		rc = read_csv_agents_frame(r, step, fields, &n, err);
		if (rc != 1)
			return rc;
		pack_csv(r, fields, (size_t)n);
	} else {
		rc = read_csv_frame(r, step, fields, err);
		if (rc != 1)
			return rc;
		pack_csv(r, fields, (size_t)r->h.count);
	}
	if (check_frame(r, r->frames, *step, r->h.format == TRAJ_BIN && r->have_q, err) != 0)
		return -1;
	digest_frame(r, *step);
	if (r->frames == 0)
		r->first_step = *step;
	r->last_step = *step;
	r->frames++;
	return 1;
}

uint64_t traj_reader_frame_n(const struct traj_reader *r)
{
	return r->n;
}

void traj_reader_copy_frame(const struct traj_reader *r, float *const fields[TRAJ_FIELDS_MAX],
			    struct traj_agents *a)
{
	copy_out(r, fields, a);
}

int traj_read_frame_agents(struct traj_reader *r, uint64_t *step,
			   float *const fields[TRAJ_FIELDS_MAX], struct traj_agents *a,
			   struct util_err *err)
{
	int rc = traj_read_next(r, step, err);

	if (rc == 1)
		copy_out(r, fields, a);
	return rc;
}

int traj_read_frame(struct traj_reader *r, uint64_t *step,
		    float *const fields[TRAJ_FIELDS_MAX], struct util_err *err)
{
	if (r->h.has_agents)
		return no_agents(r, err);
	return traj_read_frame_agents(r, step, fields, NULL, err);
}

int traj_reader_cut(const struct traj_reader *r)
{
	return r->cut;
}

/* Whether the frame record at off is a key frame, sound and whole, after
 * the last step read: its header, its payload's CRC. */
static int sound_key_frame(struct traj_reader *r, uint64_t off, uint64_t size)
{
	unsigned char h[TRAJ_FRAME_HEADER];
	struct util_err scratch;
	uint64_t z;

	if (read_at(r, h, sizeof h, off) != 0 || memcmp(h, TRAJ_FRAME_TAG, 4) != 0 ||
	    !traj_codec_is_key(traj_get_u32(h + 16)) ||
	    check_frame_header(r, h, r->frames, &scratch) != 0 ||
	    (r->frames > 0 && traj_get_u64(h + 4) <= r->last_step))
		return 0;
	z = traj_get_u64(h + 28);
	if (z > size - off - TRAJ_FRAME_HEADER ||
	    util_reserve(&r->zbuf, &r->zcap, (size_t)z, &scratch) != 0 ||
	    read_at(r, r->zbuf, (size_t)z, off + TRAJ_FRAME_HEADER) != 0)
		return 0;
	return traj_get_u32(h + 36) == (uint32_t)crc32_z(crc32(0L, h, 36), r->zbuf, (z_size_t)z);
}

int traj_reader_resync(struct traj_reader *r, struct util_err *err)
{
	unsigned char buf[1 << 16];
	struct stat st;
	uint64_t off, size;

	if (r->h.format != TRAJ_BIN || r->path == NULL || !gzdirect(r->gz) || r->random) {
		util_err_set(err, "%s: frames after damage can be found only in a binary file that "
			     "is not a pipe or compressed", r->name);
		return -1;
	}
	if (r->fd < 0)
		r->fd = open(r->path, O_RDONLY);
	if (r->fd < 0 || fstat(r->fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		util_err_set(err, "%s: cannot read it at offsets: %s", r->name, strerror(errno));
		return -1;
	}
	size = (uint64_t)st.st_size;
	/* Overlapping windows, so that a tag across two is seen. */
	for (off = r->frame_off + 1; off + TRAJ_FRAME_HEADER <= size; off += sizeof buf - 3) {
		size_t len = size - off < sizeof buf ? (size_t)(size - off) : sizeof buf, i;

		if (read_at(r, buf, len, off) != 0)
			break;
		for (i = 0; i + 4 <= len; i++) {
			if (buf[i] != 'F' || memcmp(buf + i, TRAJ_FRAME_TAG, 4) != 0 ||
			    !sound_key_frame(r, off + i, size))
				continue;
			if (gzseek(r->gz, (z_off_t)(off + i), SEEK_SET) < 0) {
				util_err_set(err, "%s: cannot seek", r->name);
				return -1;
			}
			r->pos = off + i;
			r->have_base = r->have_q = 0;
			r->salvaged = 1;
			r->cut = 0;
			return 1;
		}
		if (len < sizeof buf)
			break;
	}
	r->salvaged = r->exhausted = 1;
	return 0;
}

/* ---- random access through the frame index ------------------------------ */

static int index_damaged(struct traj_reader *r, const char *what, struct util_err *err)
{
	util_err_set(err, "%s: damaged frame index: %s", r->name, what);
	r->idx_state = INDEX_DAMAGED;
	return -1;
}

/* Every entry points inside the frames, in file order, and its key frame
 * chain is whole. */
static int check_index(struct traj_reader *r, uint64_t index_off, uint64_t last_step,
		       struct util_err *err)
{
	uint64_t k;

	for (k = 0; k < r->nidx; k++) {
		const struct traj_index_entry *e = &r->idx[k];

		if (e->offset < (k ? r->idx[k - 1].offset + TRAJ_FRAME_HEADER : r->data_start) ||
		    e->offset + TRAJ_FRAME_HEADER > index_off)
			return index_damaged(r, "a frame offset out of place", err);
		if (k > 0 && e->step <= r->idx[k - 1].step)
			return index_damaged(r, "steps not increasing", err);
		if (e->codec >= TRAJ_CODECS || (e->back == 0) != traj_codec_is_key(e->codec) ||
		    (e->back > 0 && (k == 0 || r->idx[k - 1].back != e->back - 1)))
			return index_damaged(r, "a codec or key frame out of place", err);
	}
	if (r->nidx > 0 && r->idx[r->nidx - 1].step != last_step)
		return index_damaged(r, "the last step differs from the end record's", err);
	return 0;
}

int traj_reader_load_index(struct traj_reader *r, struct util_err *err)
{
	unsigned char e[TRAJ_END_LEN], *b = NULL;
	struct stat st;
	uint64_t n, size, off, k;
	size_t len;

	if (r->idx_state == INDEX_LOADED)
		return 1;
	if (r->idx_state == INDEX_DAMAGED) {
		util_err_set(err, "%s: damaged frame index", r->name);
		return -1;
	}
	if (r->idx_state == INDEX_NONE)
		return 0;
	r->idx_state = INDEX_NONE;
	/* Only a plain regular file can be read at offsets of the index. */
	if (r->h.format != TRAJ_BIN || r->h.version < 2 || r->path == NULL || !gzdirect(r->gz))
		return 0;
	r->fd = open(r->path, O_RDONLY);
	if (r->fd < 0 || fstat(r->fd, &st) != 0 || !S_ISREG(st.st_mode))
		return 0;
	size = (uint64_t)st.st_size;
	/* The end record last, its frame count giving the index's length. A
	 * file that does not end so (a killed run) has no index to use. */
	if (size < r->data_start + TRAJ_INDEX_FIXED + TRAJ_END_LEN ||
	    read_at(r, e, sizeof e, size - TRAJ_END_LEN) != 0 ||
	    memcmp(e, TRAJ_END_TAG, 4) != 0 || traj_get_u32(e + 24) != (uint32_t)crc32(0L, e, 24) ||
	    traj_get_u32(e + 4) > TRAJ_INTERRUPTED)
		return 0;
	n = traj_get_u64(e + 8);
	if (n > (size - r->data_start) / (TRAJ_INDEX_ENTRY + TRAJ_FRAME_HEADER))
		return 0;
	len = TRAJ_INDEX_FIXED + (size_t)n * TRAJ_INDEX_ENTRY;
	if (size - TRAJ_END_LEN - r->data_start < len)
		return 0;
	off = size - TRAJ_END_LEN - len;
	if (!(b = util_alloc(len, 1, err)))
		return -1;
	if (read_at(r, b, len, off) != 0 || memcmp(b, TRAJ_INDEX_TAG, 4) != 0 ||
	    traj_get_u64(b + 4) != n) {
		util_free(b);
		return 0;
	}
	if (traj_get_u32(b + len - 4) != (uint32_t)crc32_z(0L, b, len - 4)) {
		util_free(b);
		return index_damaged(r, "CRC mismatch", err);
	}
	if (!(r->idx = util_alloc(n ? (size_t)n : 1, sizeof *r->idx, err))) {
		util_free(b);
		return -1;
	}
	for (k = 0; k < n; k++)
		get_entry(&r->idx[k], b + 12 + k * TRAJ_INDEX_ENTRY);
	util_free(b);
	r->nidx = n;
	r->index_off = off;
	if (check_index(r, off, traj_get_u64(e + 16), err) != 0)
		return -1;
	r->tend_seen = 1;
	r->tend_status = (enum traj_status)traj_get_u32(e + 4);
	r->idx_state = INDEX_LOADED;
	return 1;
}

uint64_t traj_reader_index_frames(const struct traj_reader *r)
{
	return r->idx_state == INDEX_LOADED ? r->nidx : 0;
}

const struct traj_index_entry *traj_reader_index_entry(const struct traj_reader *r,
							uint64_t k)
{
	return r->idx_state == INDEX_LOADED && k < r->nidx ? &r->idx[k] : NULL;
}

int traj_read_frame_at_agents(struct traj_reader *r, uint64_t k, uint64_t *step,
			      float *const fields[TRAJ_FIELDS_MAX], struct traj_agents *a,
			      struct util_err *err)
{
	int rc = traj_read_next_at(r, k, step, err);

	if (rc == 1)
		copy_out(r, fields, a);
	return rc;
}

int traj_read_next_at(struct traj_reader *r, uint64_t k, uint64_t *step, struct util_err *err)
{
	unsigned char h[TRAJ_FRAME_HEADER];
	uint64_t j, start;
	int rc = traj_reader_load_index(r, err);

	if (rc == 0)
		util_err_set(err, "%s: no frame index (a killed run, a version 1 file, a pipe or "
			     "not a binary trajectory): read it frame by frame", r->name);
	if (rc != 1)
		return -1;
	if (!r->random) {
		/* The state of frame-by-frame reading is not the index's. */
		r->random = 1;
		r->cur_valid = 0;
	}
	if (k >= r->nidx)
		return 0;
	start = k - r->idx[k].back;
	if (r->cur_valid && r->cur >= start && r->cur <= k)
		start = r->cur + 1;
	else
		r->have_base = r->have_q = 0;
	for (j = start; j <= k; j++) {
		const struct traj_index_entry *e = &r->idx[j];
		uint64_t z;

		r->cur_valid = 0;
		if (read_at(r, h, sizeof h, e->offset) != 0 || memcmp(h, TRAJ_FRAME_TAG, 4) != 0 ||
		    traj_get_u64(h + 4) != e->step || traj_get_u32(h + 16) != e->codec) {
			util_err_set(err, "%s: frame %llu is not where the index says",
				     r->name, (unsigned long long)j);
			return -1;
		}
		if (check_frame_header(r, h, j, err) != 0)
			return -1;
		z = traj_get_u64(h + 28);
		/* The frames fill the file from the header to the index. */
		if (e->offset + TRAJ_FRAME_HEADER + z !=
		    (j + 1 < r->nidx ? r->idx[j + 1].offset : r->index_off)) {
			util_err_set(err, "%s: damaged frame index: frame %llu does not end where "
				     "the next record starts", r->name, (unsigned long long)j);
			return -1;
		}
		if (util_reserve(&r->zbuf, &r->zcap, (size_t)z, err) != 0)
			return -1;
		if (read_at(r, r->zbuf, (size_t)z, e->offset + TRAJ_FRAME_HEADER) != 0) {
			util_err_set(err, "%s: frame %llu: cut short", r->name, (unsigned long long)j);
			return -1;
		}
		if (decode_frame(r, h, j, err) != 0)
			return -1;
		r->cur = j;
		r->cur_valid = 1;
	}
	if (check_frame(r, k, r->idx[k].step, r->have_q, err) != 0)
		return -1;
	*step = r->idx[k].step;
	return 1;
}

int traj_read_frame_at(struct traj_reader *r, uint64_t k, uint64_t *step,
		       float *const fields[TRAJ_FIELDS_MAX], struct util_err *err)
{
	if (r->h.has_agents)
		return no_agents(r, err);
	return traj_read_frame_at_agents(r, k, step, fields, NULL, err);
}

/* ---- opening and the rest ----------------------------------------------- */

/* Opens path (NULL: fd, which it owns either way, at the start of a
 * regular file when regular is set, else a stream), named name. */
static struct traj_reader *reader_open(const char *path, int fd, int regular, const char *name,
				       struct util_err *err)
{
	struct traj_reader *r = calloc(1, sizeof *r);
	unsigned char magic[TRAJ_MAGIC_LEN];
	int got, sfd = fd;

	if (r == NULL) {
		util_err_no_memory(err);
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	r->parallel_min = CTX_PARALLEL_MIN_DEFAULT;
	r->fd = -1;
	r->name = name;
	r->regular_fd = !path && regular;
	if (path && !(r->path = strdup(path))) {
		util_err_no_memory(err);
		goto fail;
	}
	r->md = EVP_MD_CTX_new();
	if (r->md == NULL || !EVP_DigestInit_ex(r->md, EVP_sha256(), NULL)) {
		util_err_set(err, "cannot start SHA-256");
		goto fail;
	}
	r->gz = path ? gzopen(path, "rb") : fd < 0 ? NULL : gzdopen(fd, "rb");
	if (r->gz == NULL) {
		util_err_set(err, "%s: cannot open: %s", r->name, strerror(errno));
		goto fail;
	}
	fd = -1; /* the stream's now */
	gzbuffer(r->gz, 1 << 17);
	got = gzread(r->gz, magic, sizeof magic);
	if (got > 0)
		r->pos = (uint64_t)got;
	if (got == (int)sizeof magic && memcmp(magic, TRAJ_MAGIC, TRAJ_MAGIC_LEN) == 0) {
		struct stat st;

		/* what a plain regular file holds bounds what a frame may claim */
		if (gzdirect(r->gz) &&
		    ((r->path && stat(r->path, &st) == 0) ||
		     (r->regular_fd && fstat(sfd, &st) == 0)) && S_ISREG(st.st_mode))
			r->size = (uint64_t)st.st_size;
		if (open_bin(r, magic, err) != 0)
			goto fail;
	} else if (got < 0) {
		int e;
		const char *why = gz_why(r, &e);

		/* zlib's message for a damaged gzip stream; errno only for I/O */
		util_err_set(err, "%s: %s: %s", r->name,
			     e == Z_ERRNO ? "cannot read" : "damaged gzip stream", why);
		goto fail;
	} else if (open_csv(r, magic, (size_t)got, err) != 0) {
		goto fail;
	}
	return r;
fail:
	if (fd >= 0)
		close(fd);
	traj_reader_close(r);
	return NULL;
}

struct traj_reader *traj_reader_open(const char *path, struct util_err *err)
{
	if (strcmp(path, "-") == 0) {
		int fd = dup(STDIN_FILENO);

		if (fd < 0) {
			util_err_set(err, "<stdin>: cannot open: %s", strerror(errno));
			return NULL;
		}
		return reader_open(NULL, fd, 0, "<stdin>", err);
	}
	return reader_open(path, -1, 0, path, err);
}

struct traj_reader *traj_reader_open_fd(int fd, const char *name, struct util_err *err)
{
	struct stat st;

	return reader_open(NULL, fd, fstat(fd, &st) == 0 && S_ISREG(st.st_mode), name, err);
}

const struct traj_header *traj_reader_header(const struct traj_reader *r)
{
	return &r->h;
}

int traj_reader_ended(const struct traj_reader *r, enum traj_status *status)
{
	if (status)
		*status = r->ended ? r->status : r->tend_status;
	return r->ended || r->tend_seen;
}

uint64_t traj_reader_frames(const struct traj_reader *r)
{
	return r->frames;
}

uint64_t traj_reader_codec_frames(const struct traj_reader *r, uint32_t codec)
{
	return codec < TRAJ_CODECS ? r->codec_frames[codec] : 0;
}

double traj_reader_precision(const struct traj_reader *r)
{
	return r->precision;
}

int traj_reader_indexed(const struct traj_reader *r)
{
	return r->indexed || r->idx_state == INDEX_LOADED;
}

uint64_t traj_reader_first_step(const struct traj_reader *r)
{
	return r->first_step;
}

uint64_t traj_reader_last_step(const struct traj_reader *r)
{
	return r->last_step;
}

void traj_reader_set_parallel_min(struct traj_reader *r, size_t n)
{
	r->parallel_min = n;
}

void traj_reader_close(struct traj_reader *r)
{
	int f;

	if (r == NULL)
		return;
	if (r->gz)
		gzclose(r->gz);
	if (r->fd >= 0)
		close(r->fd);
	for (f = 0; f < r->nzs; f++)
		if (r->zs[f]) {
			inflateEnd(r->zs[f]);
			free(r->zs[f]);
		}
	free(r->zs);
	for (f = 0; f < r->nzs; f++)
		ZSTD_freeDCtx(r->zd[f]);
	free(r->zd);
	EVP_MD_CTX_free(r->md);
	free(r->path);
	free(r->h.generator);
	free(r->h.scenario);
	for (f = 0; f < TRAJ_FIELDS_MAX; f++) {
		free(r->first[f]);
		util_free(r->csvf[f]);
	}
	util_free(r->buf[0]);
	util_free(r->buf[1]);
	util_free(r->csv_id);
	util_free(r->csv_group);
	util_free(r->q);
	util_free(r->tbuf);
	util_free(r->zbuf);
	util_free(r->coff);
	util_free(r->crc_rc);
	util_free(r->seen);
	util_free(r->idx);
	free(r);
}
