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
/* Whether PATH's last component leaves room for its temporary file's
 * name in its directory's file system (pathconf's NAME_MAX; 255 where
 * that cannot be asked): 0, or -1 with err naming the longest that fits. */
int outfile_name_fits(const char *path, struct util_err *err);
/* Whether tmp, a temporary file of outfile_temp, is in use: its writer,
 * another process, holds it open (its flock(2), taken at its creation).
 * Such a file is no other run's to remove or take over. */
int outfile_temp_busy(const char *tmp);
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
 * directory, a file holding OUTFILE_LOCK_TAG, the process's id and a
 * line, then the journal: the temporary files of the runs that held it
 * (outfile_lock_note). A file of that name that is not such a lock is
 * neither written nor removed. Returns the lock's descriptor and sets
 * *name (to free, by outfile_unlock) and *was: NULL, or the journal of a
 * run that held the lock and was killed (for outfile_lock_sweep, which
 * frees it; it stays in the lock file until then); or -2 with
 * err set when another process holds it or the name is not a lock's (a
 * link, a directory, another user's file, anything but a regular file that
 * is empty or begins with OUTFILE_LOCK_TAG), -1 with err set when it
 * cannot be taken, or OUTFILE_NO_LOCK where the file system has no locks. */
#define OUTFILE_LOCK_TAG "boidsim lock "
/* (on a file system without locks: no lock, and no error) */
#define OUTFILE_NO_LOCK (-3)
int outfile_lock(const char *path, char **name, char **was, struct util_err *err);
/* Whether another run holds PATH's lock, without taking it or writing
 * anything (for --check): -2 with outfile_lock's message when it does,
 * else 0. */
int outfile_lock_probe(const char *path, struct util_err *err);
/* The name of PATH's lock file (to free; NULL when out of memory): beside
 * PATH, or beside the file PATH links to. */
char *outfile_lock_name(const char *path);
/* Adds tmp, the temporary file of the output path, to the journal of the
 * lock fd: a run that takes the lock over after this one was killed
 * removes it, unless its checkpoint names it. 0, or -1 when it could not
 * be noted (it may then be left behind, as before the journal). */
int outfile_lock_note(int fd, const char *path, const char *tmp);
/* The temporary files in the journal was, of a run that was killed,
 * removed: those of the outputs named (a resumed run's, whose frames it
 * writes again; compared as files, outfile_same_file) that are still
 * temporary files of their outputs by name (outfile_is_temp), regular
 * files and not in use (outfile_temp_busy), but none of keep (the
 * files its checkpoint names, which it reads; NULL or empty entries
 * allowed). Frees was. */
void outfile_lock_sweep(char *was, const char *const *outputs, int nout,
			const char *const *keep, int nkeep);
/* The lock fd's journal emptied (its header left): for a run that goes
 * on afresh, whose lock must not hand the journal of a killed run it
 * does not continue to its own --resume. 0, or -1 (errno set). */
int outfile_lock_reset(int fd);
/* Whether a and b name one file: both exist and are one (through links
 * too; not character devices, which every descriptor name is alike), or
 * neither does and they name one entry of one directory (x and ./x). */
int outfile_same_file(const char *a, const char *b);
/* Gives the claim up: closes fd (fd < 0: none), and removes the lock
 * file, unless keep (a journal not yet swept stays for a later run) or
 * the name no longer is the file held. */
void outfile_unlock(char *name, int fd, int keep);

/* After a rename into PATH's directory: makes the rename itself durable.
 * A failure loses nothing already written, so it is not reported. */
void outfile_sync_dir(const char *path);

#endif
