/* traj.h: trajectory files: the binary format (boidsim-trajectory(5)),
 * CSV and gzip'd CSV; a writer that never leaves a file that looks
 * complete, and a reader for every format, with random access by index. */
#ifndef BOIDSIM_TRAJ_H
#define BOIDSIM_TRAJ_H

#include <stdint.h>
#include <string.h>
#include "ctx.h"
#include "util.h"

/* Binary format, version 3 (versions 1 and 2 are still read; 3 adds
 * codec 5); every integer little-endian. boidsim-trajectory(5) is the specification. */
#define TRAJ_MAGIC "\x89" "BOID\r\n\x1a"   /* 8 bytes, as PNG's: catches text-mode mangling */
#define TRAJ_MAGIC_LEN 8
#define TRAJ_VERSION 3                     /* what the writer writes */
#define TRAJ_VERSION_MIN 1                 /* the oldest the reader reads */
#define TRAJ_HEADER_FIXED 44               /* bytes before the two strings */
#define TRAJ_FRAME_TAG "FRAM"
#define TRAJ_FRAME_HEADER 40
#define TRAJ_INDEX_TAG "FIDX"
#define TRAJ_INDEX_FIXED 16                /* tag, entry count, CRC */
#define TRAJ_INDEX_ENTRY 24                /* step, offset, codec, distance to key */
#define TRAJ_END_TAG "TEND"
#define TRAJ_END_LEN 28
#define TRAJ_LEVEL_DEFAULT 1               /* default of output.compression */
#define TRAJ_GENERATOR_MAX 4096
#define TRAJ_SCENARIO_MAX (16u << 20)
/* Fields per boid: positions and velocities (2 dims), then with colour
 * following one more, the hue in turns; at most 7, in 3D with a hue. These
 * are the float fields; a file with agents stores two more, id and group. */
#define TRAJ_FIELDS_MAX 7

/* Header flags. TRAJ_FLAG_AGENTS: every frame holds agents with explicit
 * ids and groups (boids and predators, a count that may change from frame
 * to frame): the header's count is the most agents a frame may hold, and
 * each agent has two more fields after the float ones, its id and group,
 * stored as u32. Any other bit is refused. */
#define TRAJ_FLAG_AGENTS 1u
/* TRAJ_FLAG_ZSTD (version 3 only): each chunk of a chunked payload is one
 * Zstandard frame, or the chunk's bytes themselves when its length is the
 * chunk's size; without it each chunk is one zlib stream. Binary files
 * only: a CSV writer drops it. */
#define TRAJ_FLAG_ZSTD 2u
#define TRAJ_FLAGS_KNOWN (TRAJ_FLAG_AGENTS | TRAJ_FLAG_ZSTD)

/* The compressors of binary frames' chunks, by name (output.compressor,
 * convert --compressor); the first is the default. */
enum traj_compressor { TRAJ_ZSTD, TRAJ_ZLIB, TRAJ_COMPRESSORS };
extern const char *const TRAJ_COMPRESSOR_NAMES[TRAJ_COMPRESSORS];
/* The header flag that a compressor sets. */
uint32_t traj_compressor_flag(enum traj_compressor c);
/* 0 and *c set when name is one of TRAJ_COMPRESSOR_NAMES; else -1. */
int traj_compressor_parse(const char *name, enum traj_compressor *c);
#define TRAJ_GROUP_BOID 0u
#define TRAJ_GROUP_PREDATOR 1u
#define TRAJ_GROUPS 2u
/* The integer fields of a file with agents, after the float ones. */
#define TRAJ_AGENT_FIELDS 2
#define TRAJ_STORED_FIELDS_MAX (TRAJ_FIELDS_MAX + TRAJ_AGENT_FIELDS)

/* The agents of a frame, for files with TRAJ_FLAG_AGENTS. */
struct traj_agents {
	uint64_t n;        /* agents in the frame */
	uint32_t *id;      /* n ids (reader: room for the header's count) */
	uint32_t *group;   /* n groups */
};

/* Frame codecs (the frame header's codec field). Key frames decode alone;
 * delta frames need the frame before them in the file decoded first. */
enum traj_codec {
	TRAJ_CODEC_ZLIB_F32 = 0,    /* key: one zlib stream of the float32 arrays (version 1) */
	TRAJ_CODEC_SHUFFLE = 1,     /* key: float32 byte planes, chunked zlib */
	TRAJ_CODEC_XOR = 2,         /* delta: as 1, bits XOR the previous frame's */
	TRAJ_CODEC_QUANT = 3,       /* key, lossy: integers of the precision, byte planes */
	TRAJ_CODEC_QUANT_DELTA = 4, /* delta, lossy: differences of those integers */
	TRAJ_CODEC_PREDICT = 5      /* delta: as 2, positions XOR their prediction (version 3) */
};
#define TRAJ_CODECS 6
static inline int traj_codec_is_key(uint32_t codec)
{
	return codec == TRAJ_CODEC_ZLIB_F32 || codec == TRAJ_CODEC_SHUFFLE ||
	       codec == TRAJ_CODEC_QUANT;
}
/* Codecs 1, 2 and 5: lossless byte planes of the u32 bits. */
static inline int traj_codec_is_planes(uint32_t codec)
{
	return codec == TRAJ_CODEC_SHUFFLE || codec == TRAJ_CODEC_XOR ||
	       codec == TRAJ_CODEC_PREDICT;
}
const char *traj_codec_name(uint32_t codec);

/* Codec 5: the stream opens with the step h (f64) its positions were
 * predicted over. The prediction of a position from the previous frame's
 * x and this frame's velocity v is x + v h, as the integrators move a boid
 * (binary64 from the binary32 values, rounded to binary32: integrate.c,
 * rules_batch.h's update), so that at output.every 1 most positions are
 * predicted exactly and their planes are zeros. Every operation is one
 * IEEE rounding (no contraction: -ffp-contract=off), so writer and reader
 * agree on every conforming machine; a NaN prediction, whose payload is
 * the one thing IEEE 754 leaves to the machine, is replaced by x. */
#define TRAJ_PREDICT_PRELUDE 8
static inline uint32_t traj_predict(uint32_t xbits, uint32_t vbits, double h)
{
	float x, v, p;
	uint32_t u;

	memcpy(&x, &xbits, 4);
	memcpy(&v, &vbits, 4);
	p = (float)((double)x + (double)v * h);
	if (p != p)
		return xbits;
	memcpy(&u, &p, 4);
	return u;
}

/* The transformed stream of codecs 1-5 is cut into chunks of this many
 * bytes (the last one shorter), each its own zlib stream, so that they are
 * compressed and decompressed in parallel. A constant, never the thread
 * count: the bytes written must not depend on the machine. 256 KiB is well
 * above zlib's 32 KiB window, so cutting costs almost nothing in size. */
#define TRAJ_CHUNK_SIZE (256u << 10)
#define TRAJ_CHUNK_MIN 64u                 /* the range a reader accepts */
#define TRAJ_CHUNK_MAX (1u << 30)
/* A key frame every this many frames bounds what random access and
 * recovery after damage must decode: at most 15 frames before the one
 * wanted. Measured: about 1% larger files than one key frame in 64. */
#define TRAJ_KEY_INTERVAL 16
/* Lossy frames: the prelude of the stream (precision f64, exception
 * count u64), then one plane count byte per field; an exception is a u64
 * slot and the u32 bits of the value. */
#define TRAJ_QUANT_EXCEPTION 12
#define TRAJ_QUANT_PRELUDE 16
#define TRAJ_PRECISION_MAX 1e9
/* Quantised integers stay within +-2^53, where binary64 holds every
 * integer exactly; a value beyond that is stored as an exception. */
#define TRAJ_QUANT_MAX 9007199254740992.0

/* The reconstruction of a quantised value, shared by writer (which checks
 * the bound with it) and reader: q to binary64 (exact for |q| <= 2^53),
 * times the precision in binary64, rounded to binary32, every rounding to
 * nearest even. Assignments and casts discard any excess precision (C11
 * 5.2.4.2.2), so this is the same on every conforming machine. */
static inline float traj_dequantise(int64_t q, double precision)
{
	double z = (double)q * precision;

	return (float)z;
}

/* Zigzag: small differences of either sign become small unsigned numbers,
 * whose high bytes are zero. Unsigned arithmetic: wraps, never overflows. */
static inline uint64_t traj_zigzag(uint64_t d)
{
	return (d << 1) ^ (0 - (d >> 63));
}

static inline uint64_t traj_unzigzag(uint64_t z)
{
	return (z >> 1) ^ (0 - (z & 1));
}

/* One entry of the frame index: also what the reader learns of each frame. */
struct traj_index_entry {
	uint64_t step;
	uint64_t offset;      /* of the frame record, from the start of the file */
	uint32_t codec;
	uint32_t back;        /* frames back to the key frame it needs (0: a key frame) */
};

enum traj_format { TRAJ_BIN = 0, TRAJ_CSV, TRAJ_CSV_GZ };
enum traj_status { TRAJ_COMPLETE = 0, TRAJ_INTERRUPTED = 1 };

/* The names of the fields of a frame of dims dimensions, with or without
 * a hue, as the CSV header has them: "x", "y", [ "z", ] "vx", ... "hue". */
const char *traj_field_name(int dims, int field);

/* A CSV value at p, in the grammar of boidsim-trajectory(5) (an optional
 * sign, decimal digits with an optional point, an optional exponent; no
 * blank, hexadecimal, nan or inf), read in binary64 and rounded to
 * binary32; one that rounds to an infinity is refused. Returns 0 with *end
 * just after it, or -1. For every reader of numbers in CSV (start.c's
 * plain CSV too), so that all take the same ones. */
int traj_csv_value(const char *p, char **end, float *v);

/* "bin", "csv", "csv.gz" */
int traj_format_parse(const char *name, enum traj_format *fmt);
/* The names traj_format_parse takes, for messages. */
#define TRAJ_FORMAT_NAMES "bin, csv or csv.gz"
/* From a file name's extension: .bin, .csv, .csv.gz */
int traj_format_guess(const char *path, enum traj_format *fmt);
const char *traj_format_name(enum traj_format fmt);

struct traj_writer;

/* Opens PATH for writing ("-" is stdout). A regular file is written under a
 * temporary name in the same directory and renamed over PATH only by
 * traj_writer_close, so a failed run never replaces a good file.
 * hue: 1 when every frame has the hue field after the velocities.
 * flags: 0 or TRAJ_FLAG_AGENTS; with it, count is the most agents a frame
 * may hold (>= 1), and frames are written with traj_write_frame_agents.
 * level: zlib level of binary frames (0 stores). precision: 0 writes the
 * float32 values losslessly; > 0 (at most TRAJ_PRECISION_MAX) quantises
 * binary frames to multiples of it, each value within precision/2. */
struct traj_writer *traj_writer_open(const char *path, enum traj_format fmt,
				     int dims, int hue, uint32_t flags, uint64_t count, uint64_t seed,
				     const char *generator, const char *scenario_json,
				     int level, double precision, struct util_err *err);

/* Whether the writer stores a lossless chunk of len bytes instead of
 * compressing it: its bytes look like noise (traj_write.c). Exposed for
 * the tests. */
int traj_chunk_is_noise(const unsigned char *in, size_t len);

/* Tuning, before the first frame; for tests, which need many chunks and
 * short key-frame chains in small files. TRAJ_CHUNK_MIN <= bytes <=
 * TRAJ_CHUNK_MAX, interval >= 1; other values are ignored. */
void traj_writer_set_chunk_size(struct traj_writer *w, uint32_t bytes);
void traj_writer_set_key_interval(struct traj_writer *w, uint32_t interval);
/* Lossless binary frames after the first of a chain predict positions as
 * x + v h (codec 5, traj_predict), h being the steps since the last frame
 * times dt, the run's time step; dt <= 0 (the default) writes codec 2
 * instead. Only how well the frames compress depends on dt, never what
 * they decode to. Before the first frame. */
void traj_writer_set_predict(struct traj_writer *w, double dt);
/* A binary file closed not complete takes the name NAME.partial, as a CSV
 * one always does, so that a run stopped by a signal never replaces the
 * file already under its output name (a run sets it; a conversion of a
 * damaged input, marked interrupted, keeps its name). */
void traj_writer_set_partial(struct traj_writer *w);

/* fields[0..dims-1] positions, fields[dims..2*dims-1] velocities, and
 * with a hue fields[2*dims] the hue; each count floats in id order.
 * Files without TRAJ_FLAG_AGENTS only (it fails on the others). */
int traj_write_frame(struct traj_writer *w, uint64_t step,
		     float *const fields[TRAJ_FIELDS_MAX], struct util_err *err);

/* Arrays for the next frame's fields, count floats each, owned by the
 * writer (freed by traj_writer_close or traj_writer_abort); NULL when
 * memory runs out. A frame written from them is kept where it is as the
 * base of the next frame's delta, where a frame in the caller's own arrays
 * is copied (a lossless binary file's frame of 2D 1M is 16 MB), and the
 * next call hands out the other of two sets. Their contents on return are
 * unspecified, and the caller may not touch a set once written until it is
 * handed out again. */
float *const *traj_writer_fields(struct traj_writer *w, struct util_err *err);

/* Files with TRAJ_FLAG_AGENTS only (a must not be NULL): fields hold a->n
 * floats each (0 <= a->n <= count), agents in increasing (group, id)
 * order, strictly, every group below TRAJ_GROUPS, and a predator's hue 0;
 * a frame that breaks these is refused. A frame whose count differs from
 * the previous frame's is written as a key frame. */
int traj_write_frame_agents(struct traj_writer *w, uint64_t step,
			    float *const fields[TRAJ_FIELDS_MAX], const struct traj_agents *a,
			    struct util_err *err);

/* Ends the file (binary: the end record with status) and renames it into
 * place. An interrupted CSV cannot say so inside, so it is kept as
 * PATH.partial instead. Frees w, whatever happens. */
int traj_writer_close(struct traj_writer *w, enum traj_status status,
		      struct util_err *err);

/* CSV without TRAJ_FLAG_AGENTS only: print these ids (count of them)
 * instead of 0..count-1, for a subset of the boids. The array must outlive
 * the writer. (With agents the ids come with each frame.) */
void traj_writer_set_ids(struct traj_writer *w, const uint32_t *ids);

/* The temporary file being written (NULL for stdout), and making all it
 * holds durable and readable (for checkpoints: a resumed run reads the
 * frames back from it). traj_writer_synced is the file's size at the last
 * sync (0 for a stream). */
const char *traj_writer_temp_path(const struct traj_writer *w);

/* From how many agents a frame is quantised and compressed on several
 * threads (ctx.h; CTX_PARALLEL_MIN_DEFAULT until set). The bytes do not
 * depend on it. */
void traj_writer_set_parallel_min(struct traj_writer *w, size_t n);
int traj_writer_sync(struct traj_writer *w, struct util_err *err);
uint64_t traj_writer_synced(const struct traj_writer *w);

/* The bytes of the file written so far (before gzip) and their CRC-32: a
 * resumed run, which writes the stopped run's frames again, must come to
 * the same mark, or the frames it read were not the stopped run's. */
void traj_writer_mark(const struct traj_writer *w, uint64_t *bytes, uint32_t *crc);

/* Removes the temporary file (or cuts a kept one, as outfile_abort) and
 * frees w; w may be NULL. Returns 0 or -1 as outfile_abort. */
int traj_writer_abort(struct traj_writer *w, struct util_err *err);
/* From now on a failure (of traj_writer_close too) or traj_writer_abort
 * leaves the temporary file, cut to size bytes (a size traj_writer_synced
 * gave), instead of removing it: what a checkpoint covers, for --resume. */
void traj_writer_keep(struct traj_writer *w, uint64_t size);

struct traj_header {
	enum traj_format format;   /* TRAJ_BIN, TRAJ_CSV or TRAJ_CSV_GZ */
	int version;               /* binary format version; 0 for CSV */
	int dims;
	int fields;                /* float fields: 2 dims, or 2 dims + 1 with a hue
				    * (the binary header's fields per boid is 2 more
				    * with agents: id and group) */
	int has_hue;
	int has_agents;            /* flags has TRAJ_FLAG_AGENTS (CSV: a group column) */
	uint64_t count;            /* boids; with agents the most a frame may hold
				    * (CSV: the most any frame holds) */
	uint64_t seed;             /* binary only */
	uint32_t flags;            /* 0 or TRAJ_FLAG_AGENTS, for CSV too */
	char *generator;           /* binary only, else "" */
	char *scenario;            /* the embedded effective scenario; "" for CSV */
	double dt;                 /* its dt when that is a number > 0, else 0 */
};

struct traj_reader;

/* Opens a trajectory of any format ("-" reads stdin): binary, CSV or
 * gzip'd CSV, told apart by their first bytes, not by the name. A CSV file
 * with agents is read through once at open time to learn the largest
 * frame (from a pipe, into an unnamed temporary file). */
struct traj_reader *traj_reader_open(const char *path, struct util_err *err);
/* The same from an open descriptor (a regular file at its start, or a
 * stream), which the reader owns from then on (closed even on failure);
 * name is what messages call it. Without a path, no random access
 * (traj_reader_load_index, traj_reader_resync) is offered. */
struct traj_reader *traj_reader_open_fd(int fd, const char *name, struct util_err *err);
const struct traj_header *traj_reader_header(const struct traj_reader *r);

/* Reads the next frame into fields (each count floats). Returns 1 for a
 * frame, 0 at the end (the end record, or end of file exactly after a
 * frame or the frame index, as a killed run leaves), -1 for a damaged or
 * cut frame. A frame index met on the way is checked against the frames
 * read. Files without TRAJ_FLAG_AGENTS only: on the others it fails,
 * saying to use traj_read_frame_agents. */
int traj_read_frame(struct traj_reader *r, uint64_t *step,
		    float *const fields[TRAJ_FIELDS_MAX], struct util_err *err);

/* Any file: as traj_read_frame, and when a is not NULL fills a->n, a->id
 * and a->group (each with room for the header's count); fields get a->n
 * floats each. A file without the flag gives n = count, ids 0..n-1 and
 * group 0. A frame with agents out of (group, id) order, or a group of
 * TRAJ_GROUPS or above, is damaged (-1). */
int traj_read_frame_agents(struct traj_reader *r, uint64_t *step,
			   float *const fields[TRAJ_FIELDS_MAX], struct traj_agents *a,
			   struct util_err *err);

/* Reading without the caller's arrays, whose size the header's count
 * (only a bound with agents) would set: traj_read_next reads the next
 * frame into the reader, as traj_read_frame_agents does (1, 0, -1), and
 * traj_read_next_at frame k as traj_read_frame_at_agents does; then
 * traj_reader_frame_n is its count and traj_reader_copy_frame copies it
 * into arrays of that many values (a as traj_read_frame_agents fills it,
 * or NULL). The reader's own buffers grow with the frames that decode. */
int traj_read_next(struct traj_reader *r, uint64_t *step, struct util_err *err);
int traj_read_next_at(struct traj_reader *r, uint64_t k, uint64_t *step, struct util_err *err);
uint64_t traj_reader_frame_n(const struct traj_reader *r);
void traj_reader_copy_frame(const struct traj_reader *r, float *const fields[TRAJ_FIELDS_MAX],
			    struct traj_agents *a);

/* Random access through the frame index at the end of a complete binary
 * file, which needs a regular file (not a pipe, not gzip'd). Returns 1 when
 * the index was found and is sound, 0 when there is none (a killed run, a
 * version 1 file, CSV, a pipe), -1 when it is damaged. Loads it once. */
int traj_reader_load_index(struct traj_reader *r, struct util_err *err);
/* After traj_reader_load_index returned 1: the number of frames, and the
 * entry of frame k (< that number). */
uint64_t traj_reader_index_frames(const struct traj_reader *r);
const struct traj_index_entry *traj_reader_index_entry(const struct traj_reader *r,
							uint64_t k);

/* Reads frame k (from 0, in file order) through the index, decoding from
 * its key frame on (or on from the frame read last, when that is on the
 * way). Returns 1, 0 when k is past the last frame, -1 on damage or when
 * the file has no index (err says which). Every CRC is checked. Frames
 * read this way are not in the digest, and traj_read_frame cannot be used
 * after it. Files without TRAJ_FLAG_AGENTS only, as traj_read_frame. */
int traj_read_frame_at(struct traj_reader *r, uint64_t k, uint64_t *step,
		       float *const fields[TRAJ_FIELDS_MAX], struct util_err *err);
/* Any file, filling a as traj_read_frame_agents does. */
int traj_read_frame_at_agents(struct traj_reader *r, uint64_t k, uint64_t *step,
			      float *const fields[TRAJ_FIELDS_MAX], struct traj_agents *a,
			      struct util_err *err);

/* After a read returned -1: 1 when the input ends inside a record (a file
 * cut short: a killed run, a full disk, a copy cut short; a gzip stream
 * without its end), so that every frame returned before is whole and
 * nothing after it was lost to damage; 0 when the file is damaged. */
int traj_reader_cut(const struct traj_reader *r);

/* After traj_read_frame returned -1 on a damaged frame of a binary file
 * (a regular file, not compressed, read frame by frame): looks past it
 * for the next key frame record that is whole (its header sound, its CRC
 * right, its step after the last one read) and goes on reading there.
 * Returns 1 when one was found, 0 when there is none (reading then ends),
 * -1 when the file cannot be searched so. The frame index and end record
 * are no longer checked (they describe the frames as written). */
int traj_reader_resync(struct traj_reader *r, struct util_err *err);

/* After traj_read_frame returned 0: whether an end record was found, and
 * its status. CSV has no end record. */
int traj_reader_ended(const struct traj_reader *r, enum traj_status *status);
uint64_t traj_reader_frames(const struct traj_reader *r);
/* How the frames read so far were stored: frames per codec, and the
 * precision of the last lossy frame (0 when none was lossy). Whether a
 * frame index was read and matched the frames. */
uint64_t traj_reader_codec_frames(const struct traj_reader *r, uint32_t codec);
double traj_reader_precision(const struct traj_reader *r);
int traj_reader_indexed(const struct traj_reader *r);
/* The first and last step read. */
uint64_t traj_reader_first_step(const struct traj_reader *r);
uint64_t traj_reader_last_step(const struct traj_reader *r);

/* The content digest of the frames read so far: SHA-256 over, for each
 * frame, its step (u64 LE), its count (u32 LE; with agents the frame's
 * own) and its decoded float32 arrays (LE, field after field, the hue too,
 * id order), then with agents the ids and the groups (u32 LE), so it does
 * not depend on the file format, codec or compression level. 64 hex digits
 * and a NUL. */
#define TRAJ_DIGEST_HEX 65
void traj_reader_digest(const struct traj_reader *r, char hex[TRAJ_DIGEST_HEX]);

void traj_reader_close(struct traj_reader *r);

/* From how many agents a frame is decoded on several threads (ctx.h;
 * CTX_PARALLEL_MIN_DEFAULT until set). */
void traj_reader_set_parallel_min(struct traj_reader *r, size_t n);

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

static inline void traj_put_f64(unsigned char *b, double v)
{
	uint64_t u;

	memcpy(&u, &v, 8);
	traj_put_u64(b, u);
}

static inline double traj_get_f64(const unsigned char *b)
{
	uint64_t u = traj_get_u64(b);
	double v;

	memcpy(&v, &u, 8);
	return v;
}

#endif
