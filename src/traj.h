/* traj.h: trajectory files: the binary format (boidsim-trajectory(5)),
 * CSV and gzip'd CSV; a writer that never leaves a file that looks
 * complete, and a reader for the binary format. */
#ifndef BOIDSIM_TRAJ_H
#define BOIDSIM_TRAJ_H

#include <stdint.h>
#include "util.h"

/* Binary format, version 1; every integer little-endian. */
#define TRAJ_MAGIC "\x89" "BOID\r\n\x1a"   /* 8 bytes, as PNG's: catches text-mode mangling */
#define TRAJ_MAGIC_LEN 8
#define TRAJ_VERSION 1
#define TRAJ_HEADER_FIXED 44               /* bytes before the two strings */
#define TRAJ_FRAME_TAG "FRAM"
#define TRAJ_FRAME_HEADER 40
#define TRAJ_END_TAG "TEND"
#define TRAJ_END_LEN 28
#define TRAJ_CODEC_ZLIB_F32 0              /* zlib stream of float32 arrays */
#define TRAJ_ZLIB_LEVEL 1                  /* default of output.compression */
#define TRAJ_GENERATOR_MAX 4096
#define TRAJ_SCENARIO_MAX (16u << 20)

enum traj_format { TRAJ_BIN = 0, TRAJ_CSV, TRAJ_CSV_GZ };
enum traj_status { TRAJ_COMPLETE = 0, TRAJ_INTERRUPTED = 1 };

/* "bin", "csv", "csv.gz" */
int traj_format_parse(const char *name, enum traj_format *fmt);
/* From a file name's extension: .bin, .csv, .csv.gz */
int traj_format_guess(const char *path, enum traj_format *fmt);
const char *traj_format_name(enum traj_format fmt);

struct traj_writer;

/* Opens PATH for writing ("-" is stdout). A regular file is written under a
 * temporary name in the same directory and renamed over PATH only by
 * traj_writer_close, so a failed run never replaces a good file. */
struct traj_writer *traj_writer_open(const char *path, enum traj_format fmt,
				     int dims, uint64_t count, uint64_t seed,
				     const char *generator, const char *scenario_json,
				     int level, struct util_err *err);

/* fields[0..dims-1] positions, fields[dims..2*dims-1] velocities, each
 * count floats in id order. */
int traj_write_frame(struct traj_writer *w, uint64_t step, float *const fields[6],
		     struct util_err *err);

/* Ends the file (binary: the end record with status) and renames it into
 * place. An interrupted CSV cannot say so inside, so it is kept as
 * PATH.partial instead. Frees w, whatever happens. */
int traj_writer_close(struct traj_writer *w, enum traj_status status,
		      struct util_err *err);

/* CSV only: print these ids (count of them) instead of 0..count-1, for a
 * subset of the boids. The array must outlive the writer. */
void traj_writer_set_ids(struct traj_writer *w, const uint32_t *ids);

/* Removes the temporary file and frees w. */
void traj_writer_abort(struct traj_writer *w);

struct traj_header {
	enum traj_format format;   /* TRAJ_BIN, TRAJ_CSV or TRAJ_CSV_GZ */
	int version;               /* binary format version; 0 for CSV */
	int dims;
	uint64_t count;
	uint64_t seed;             /* binary only */
	uint32_t flags;
	char *generator;           /* binary only, else "" */
	char *scenario;            /* the embedded effective scenario; "" for CSV */
};

struct traj_reader;

/* Opens a trajectory of any format ("-" reads stdin): binary, CSV or
 * gzip'd CSV, told apart by their first bytes, not by the name. */
struct traj_reader *traj_reader_open(const char *path, struct util_err *err);
const struct traj_header *traj_reader_header(const struct traj_reader *r);

/* Reads the next frame into fields (each count floats). Returns 1 for a
 * frame, 0 at the end (the end record, or end of file exactly after a
 * frame, as a killed run leaves), -1 for a damaged or cut frame. */
int traj_read_frame(struct traj_reader *r, uint64_t *step, float *const fields[6],
		    struct util_err *err);

/* After traj_read_frame returned 0: whether an end record was found, and
 * its status. CSV has no end record. */
int traj_reader_ended(const struct traj_reader *r, enum traj_status *status);
uint64_t traj_reader_frames(const struct traj_reader *r);
/* The first and last step read. */
uint64_t traj_reader_first_step(const struct traj_reader *r);
uint64_t traj_reader_last_step(const struct traj_reader *r);

/* The content digest of the frames read so far: SHA-256 over, for each
 * frame, its step (u64 LE), its count (u32 LE) and its float32 arrays (LE,
 * field after field, id order), so it does not depend on the file format
 * or its compression. 64 hex digits and a NUL. */
#define TRAJ_DIGEST_HEX 65
void traj_reader_digest(const struct traj_reader *r, char hex[TRAJ_DIGEST_HEX]);

void traj_reader_close(struct traj_reader *r);

/* Little-endian encoding helpers shared by writer and reader. */
static inline void traj_put_u32(unsigned char *b, uint32_t v)
{
	b[0] = (unsigned char)v;
	b[1] = (unsigned char)(v >> 8);
	b[2] = (unsigned char)(v >> 16);
	b[3] = (unsigned char)(v >> 24);
}

static inline void traj_put_u64(unsigned char *b, uint64_t v)
{
	traj_put_u32(b, (uint32_t)v);
	traj_put_u32(b + 4, (uint32_t)(v >> 32));
}

static inline uint32_t traj_get_u32(const unsigned char *b)
{
	return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
	       (uint32_t)b[3] << 24;
}

static inline uint64_t traj_get_u64(const unsigned char *b)
{
	return (uint64_t)traj_get_u32(b) | (uint64_t)traj_get_u32(b + 4) << 32;
}

#endif
