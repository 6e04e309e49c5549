/* traj_write.c: writes trajectories (binary, CSV, gzip'd CSV) to a
 * temporary file that is renamed into place only when the run ends well. */
#include "config.h"
#include "traj.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

struct traj_writer {
	enum traj_format fmt;
	int dims;
	uint64_t count;
	FILE *fp;          /* binary and CSV */
	gzFile gz;         /* gzip'd CSV */
	int gz_fd;         /* a second descriptor of the gzip'd file, to fsync it */
	int to_stdout;
	char *path;        /* final name */
	char *tmp;         /* temporary name while writing */
	char *final;       /* where the file ended up */
	uint64_t frames, last_step;
	unsigned char *raw, *zbuf;
	size_t raw_len, zcap;
	int level;         /* zlib level of binary frames */
	char *text;        /* CSV formatting buffer */
	const uint32_t *ids; /* CSV: the ids of a subset, or NULL */
	size_t text_cap;
};

static const char *const FORMAT_NAMES[] = {"bin", "csv", "csv.gz"};

int traj_format_parse(const char *name, enum traj_format *fmt)
{
	int i;

	for (i = 0; i < 3; i++)
		if (strcmp(name, FORMAT_NAMES[i]) == 0) {
			*fmt = (enum traj_format)i;
			return 0;
		}
	return -1;
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

static int put(struct traj_writer *w, const void *p, size_t n, struct util_err *err)
{
	if (w->gz) {
		while (n > 0) {
			unsigned chunk = n > (1u << 30) ? (1u << 30) : (unsigned)n;

			if (gzwrite(w->gz, p, chunk) != (int)chunk) {
				int e;
				const char *m = gzerror(w->gz, &e);

				util_err_set(err, "%s: write failed: %s", w->path,
					     e == Z_ERRNO ? strerror(errno) : m);
				return -1;
			}
			p = (const char *)p + chunk;
			n -= chunk;
		}
		return 0;
	}
	if (fwrite(p, 1, n, w->fp) != n) {
		util_err_set(err, "%s: write failed: %s", w->path, strerror(errno));
		return -1;
	}
	return 0;
}

/* mkstemp in the target's directory, so the final rename is atomic. */
static int open_temp(struct traj_writer *w, struct util_err *err)
{
	const char *slash = strrchr(w->path, '/');
	size_t dirlen = slash ? (size_t)(slash - w->path) + 1 : 0;
	const char *base = w->path + dirlen;
	mode_t mask;
	int fd;

	w->tmp = malloc(strlen(w->path) + 32);
	if (w->tmp == NULL) {
		util_err_set(err, "out of memory");
		return -1;
	}
	memcpy(w->tmp, w->path, dirlen);
	sprintf(w->tmp + dirlen, ".%s.tmp.XXXXXX", base);
	fd = mkstemp(w->tmp);
	if (fd < 0) {
		util_err_set(err, "%s: cannot create: %s", w->path, strerror(errno));
		free(w->tmp);
		w->tmp = NULL;
		return -1;
	}
	/* mkstemp makes 0600; give the file the mode a plain open would. */
	mask = umask(0);
	umask(mask);
	(void)fchmod(fd, 0666 & ~mask);
	return fd;
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
	traj_put_u32(h + 12, 0);
	traj_put_u64(h + 16, w->count);
	traj_put_u64(h + 24, seed);
	traj_put_u32(h + 32, (uint32_t)(2 * w->dims));
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
				     int dims, uint64_t count, uint64_t seed,
				     const char *generator, const char *scenario_json,
				     int level, struct util_err *err)
{
	struct traj_writer *w = calloc(1, sizeof *w);
	int fd = -1;

	if (w != NULL)
		w->gz_fd = -1;
	if (w == NULL || !(w->path = strdup(path))) {
		util_err_set(err, "out of memory");
		free(w);
		return NULL;
	}
	w->fmt = fmt;
	w->level = level;
	w->dims = dims;
	w->count = count;
	w->to_stdout = strcmp(path, "-") == 0;
	if (w->to_stdout) {
		fd = dup(STDOUT_FILENO);
		if (fd < 0) {
			util_err_set(err, "stdout: %s", strerror(errno));
			goto fail;
		}
	} else if ((fd = open_temp(w, err)) < 0) {
		goto fail;
	}
	if (fmt == TRAJ_CSV_GZ) {
		w->gz_fd = fd;
		fd = dup(fd);
		w->gz = fd < 0 ? NULL : gzdopen(fd, "wb6");
		if (w->gz == NULL) {
			if (fd >= 0)
				close(fd);
			util_err_set(err, "%s: cannot start gzip stream", w->path);
			goto fail;
		}
		gzbuffer(w->gz, 1 << 17);
	} else {
		w->fp = fdopen(fd, "wb");
		if (w->fp == NULL) {
			close(fd);
			util_err_set(err, "%s: %s", w->path, strerror(errno));
			goto fail;
		}
		setvbuf(w->fp, NULL, _IOFBF, 1 << 17);
	}
	if (fmt == TRAJ_BIN) {
		if (util_mul_size((size_t)count, (size_t)(2 * dims) * sizeof(float),
				  &w->raw_len) != 0) {
			util_err_set(err, "%s: frame size overflows", w->path);
			goto fail;
		}
		w->zcap = compressBound(w->raw_len);
		if (!(w->raw = util_alloc(w->raw_len, 1, err)) ||
		    !(w->zbuf = util_alloc(w->zcap, 1, err)))
			goto fail;
		if (write_bin_header(w, seed, generator, scenario_json, err) != 0)
			goto fail;
	} else {
		const char *hdr = dims == 3 ? "step,id,x,y,z,vx,vy,vz\n" : "step,id,x,y,vx,vy\n";

		w->text_cap = 1 << 16;
		if (!(w->text = malloc(w->text_cap))) {
			util_err_set(err, "out of memory");
			goto fail;
		}
		if (put(w, hdr, strlen(hdr), err) != 0)
			goto fail;
	}
	return w;
fail:
	traj_writer_abort(w);
	return NULL;
}

static int write_bin_frame(struct traj_writer *w, uint64_t step, float *const fields[6],
			   struct util_err *err)
{
	unsigned char h[TRAJ_FRAME_HEADER];
	size_t n = (size_t)w->count, f, i, off = 0;
	uLongf zlen = (uLongf)w->zcap;
	uLong crc;
	int rc;

	/* float32 arrays, little-endian, field after field. */
	for (f = 0; f < (size_t)(2 * w->dims); f++) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
		memcpy(w->raw + off, fields[f], n * sizeof(float));
		off += n * sizeof(float);
#else
		for (i = 0; i < n; i++, off += 4) {
			uint32_t u;

			memcpy(&u, &fields[f][i], 4);
			traj_put_u32(w->raw + off, u);
		}
#endif
	}
	(void)i;
	rc = compress2(w->zbuf, &zlen, w->raw, (uLong)w->raw_len, w->level);
	if (rc != Z_OK) {
		util_err_set(err, "%s: compression failed (zlib %d)", w->path, rc);
		return -1;
	}
	memcpy(h, TRAJ_FRAME_TAG, 4);
	traj_put_u64(h + 4, step);
	traj_put_u32(h + 12, (uint32_t)w->count);
	traj_put_u32(h + 16, TRAJ_CODEC_ZLIB_F32);
	traj_put_u64(h + 20, (uint64_t)w->raw_len);
	traj_put_u64(h + 28, (uint64_t)zlen);
	crc = crc32(0L, h, 36);
	crc = crc32_z(crc, w->zbuf, (z_size_t)zlen);
	traj_put_u32(h + 36, (uint32_t)crc);
	if (put(w, h, sizeof h, err) || put(w, w->zbuf, (size_t)zlen, err))
		return -1;
	return 0;
}

static int write_csv_frame(struct traj_writer *w, uint64_t step, float *const fields[6],
			   struct util_err *err)
{
	size_t n = (size_t)w->count, i, len = 0;
	int f, nf = 2 * w->dims;

	for (i = 0; i < n; i++) {
		/* %.9g: every binary32 value reads back to the same bits. */
		if (w->text_cap - len < 256) {
			if (put(w, w->text, len, err) != 0)
				return -1;
			len = 0;
		}
		len += (size_t)snprintf(w->text + len, w->text_cap - len,
					"%" PRIu64 ",%" PRIu64, step,
					w->ids ? (uint64_t)w->ids[i] : (uint64_t)i);
		for (f = 0; f < nf; f++)
			len += (size_t)snprintf(w->text + len, w->text_cap - len, ",%.9g",
						(double)fields[f][i]);
		w->text[len++] = '\n';
	}
	return put(w, w->text, len, err);
}

int traj_write_frame(struct traj_writer *w, uint64_t step, float *const fields[6],
		     struct util_err *err)
{
	int rc = w->fmt == TRAJ_BIN ? write_bin_frame(w, step, fields, err)
				    : write_csv_frame(w, step, fields, err);

	if (rc == 0) {
		w->frames++;
		w->last_step = step;
		/* Hand each whole frame to the kernel, so that a killed run's file
		 * ends on a frame boundary (a gzip stream cannot be cut usefully). */
		if (w->fp && fflush(w->fp) != 0) {
			util_err_set(err, "%s: write failed: %s", w->path, strerror(errno));
			rc = -1;
		}
	}
	return rc;
}

/* Make the rename itself durable; failure here loses nothing already
 * written, so it is not an error. */
static void sync_dir(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *dir = slash ? strndup(path, (size_t)(slash - path) + 1) : strdup(".");
	int fd;

	if (dir == NULL)
		return;
	fd = open(dir, O_RDONLY | O_DIRECTORY);
	if (fd >= 0) {
		(void)fsync(fd);
		close(fd);
	}
	free(dir);
}

void traj_writer_set_ids(struct traj_writer *w, const uint32_t *ids)
{
	w->ids = ids;
}

static void writer_free(struct traj_writer *w)
{
	if (w->gz_fd >= 0)
		close(w->gz_fd);
	util_free(w->raw);
	util_free(w->zbuf);
	free(w->text);
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

		memcpy(e, TRAJ_END_TAG, 4);
		traj_put_u32(e + 4, (uint32_t)status);
		traj_put_u64(e + 8, w->frames);
		traj_put_u64(e + 16, w->last_step);
		traj_put_u32(e + 24, (uint32_t)crc32(0L, e, 24));
		if (put(w, e, sizeof e, err) != 0)
			goto out;
	}
	if (w->gz) {
		int zr = gzclose(w->gz);

		w->gz = NULL;
		if (zr != Z_OK) {
			util_err_set(err, "%s: write failed: %s", w->path,
				     zr == Z_ERRNO ? strerror(errno) : "gzip error");
			goto out;
		}
		if (!w->to_stdout && fsync(w->gz_fd) != 0) {
			util_err_set(err, "%s: fsync failed: %s", w->path, strerror(errno));
			goto out;
		}
	} else {
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
	}
	if (w->to_stdout) {
		rc = 0;
		goto out;
	}
	target = w->path;
	if (status != TRAJ_COMPLETE && w->fmt != TRAJ_BIN) {
		w->final = malloc(strlen(w->path) + 9);
		if (w->final == NULL) {
			util_err_set(err, "out of memory");
			goto out;
		}
		sprintf(w->final, "%s.partial", w->path);
		target = w->final;
	}
	if (rename(w->tmp, target) != 0) {
		util_err_set(err, "%s: cannot rename %s into place: %s", w->path, w->tmp,
			     strerror(errno));
		goto out;
	}
	free(w->tmp);
	w->tmp = NULL;
	sync_dir(w->path);
	rc = 0;
out:
	if (rc != 0) {
		traj_writer_abort(w);
		return rc;
	}
	writer_free(w);
	return rc;
}

void traj_writer_abort(struct traj_writer *w)
{
	if (w == NULL)
		return;
	if (w->gz)
		gzclose(w->gz);
	if (w->fp)
		fclose(w->fp);
	if (w->tmp)
		unlink(w->tmp);
	writer_free(w);
}
