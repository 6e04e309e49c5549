/* outfile.h: a text output file that appears under its name only when it
 * is complete: written to a temporary file in the same directory, synced,
 * then renamed over the name. "-" is stdout. */
#ifndef BOIDSIM_OUTFILE_H
#define BOIDSIM_OUTFILE_H

#include <stdint.h>
#include <stdio.h>
#include "util.h"

struct outfile {
	FILE *fp;
	char *path, *tmp;
	int to_stdout;            /* 1: stdout; 2: a device or pipe, opened by name */
	uint64_t synced;          /* the file's size at the last outfile_sync */
	uint64_t sum_len;         /* the bytes outfile_sum has read, and their CRC-32 */
	uint32_t sum;
	int keep;                 /* outfile_keep: cut to keep_size, never removed */
	uint64_t keep_size;
};

int outfile_open(struct outfile *o, const char *path, struct util_err *err);
/* When PATH names a descriptor of this process (/dev/stdout, /dev/fd/N,
 * /proc/self/fd/N, through any links), its number; otherwise -1. Such a
 * name is written through the descriptor, as "-" is through standard
 * output: renaming a file over it would replace the link (/dev/stdout
 * itself, for root) and never reach what the descriptor holds. */
int outfile_fd_of(const char *path);
/* Flush and fsync what is written so far (for checkpoints). */
int outfile_sync(struct outfile *o, struct util_err *err);
/* After outfile_sync: the CRC-32 of the file's first upto bytes (at least
 * as many as the last call's), read back from where the last call stopped,
 * so each byte is read once however many checkpoints there are; 0 for
 * stdout or a device. */
int outfile_sum(struct outfile *o, uint64_t upto, uint32_t *crc, struct util_err *err);
/* Flush, sync, close and rename into place; o is closed either way. */
int outfile_commit(struct outfile *o, struct util_err *err);
/* The same under the name PATH.partial, for a run that was stopped: a
 * table that ends early must not look complete. */
int outfile_commit_partial(struct outfile *o, struct util_err *err);
/* Close and remove the temporary file. Safe on a closed or zeroed o.
 * Returns 0, or -1 (err filled, when not NULL) when a kept temporary file
 * could not be cut to what the checkpoint covers (outfile_drop_temp). */
int outfile_abort(struct outfile *o, struct util_err *err);
/* From now on a failed commit or outfile_abort leaves the temporary file,
 * cut to size bytes (a size outfile_sync reached), instead of removing it:
 * what a checkpoint covers, for --resume. */
void outfile_keep(struct outfile *o, uint64_t size);

/* The steps every output file of boidsim shares (this one and the
 * trajectory writer): creates PATH's temporary file, ".NAME.tmp.XXXXXX" in
 * the same directory (so that the final rename is atomic), with the mode a
 * plain open would give; returns its descriptor and sets *tmp (to free),
 * or -1 with err set. */
int outfile_temp(const char *path, char **tmp, struct util_err *err);
/* Whether tmp is a name outfile_temp could have given PATH's temporary
 * file: for a name read from a file, which must not make boidsim touch
 * any other file. */
int outfile_is_temp(const char *tmp, const char *path);
/* A failed output's temporary file (NULL: none): removed, or with keep
 * cut to size bytes and left, for a run resumed from a checkpoint. A
 * failure to cut loses nothing the checkpoint covers (a resumed run cuts
 * the file itself), so it is only reported: -1, with err filled when not
 * NULL. */
int outfile_drop_temp(const char *tmp, int keep, uint64_t size, struct util_err *err);
/* A run's claim on PATH (its checkpoint), which no other run may share
 * while it lasts: an advisory lock (flock(2)) on ".NAME.lock" in PATH's
 * directory, a file holding OUTFILE_LOCK_TAG and the process's id. A
 * file of that name that is not such a lock is neither written nor
 * removed. Returns the lock's descriptor and sets *name (to free, by
 * outfile_unlock); or -2 with err set when another process holds it, or
 * -1 with err set when it cannot be taken. */
#define OUTFILE_LOCK_TAG "boidsim lock "
int outfile_lock(const char *path, char **name, struct util_err *err);
/* Gives the claim up: removes the lock file and closes fd (fd < 0: none). */
void outfile_unlock(char *name, int fd);

/* After a rename into PATH's directory: makes the rename itself durable.
 * A failure loses nothing already written, so it is not reported. */
void outfile_sync_dir(const char *path);

#endif
