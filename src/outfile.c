/* outfile.c: atomic text output files (temporary name, fsync, rename). */
#include "config.h"
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

/* Names tried before giving up, each of six letters or digits drawn anew
 * (mkstemp's alphabet: 62^6 names). */
#define OUTFILE_TRIES 100

/* What outfile_temp adds to a name's last component: ".NAME.tmp.XXXXXX";
 * NAME.partial and .NAME.lock add less. */
#define OUTFILE_TEMP_EXTRA 12

int outfile_name_fits(const char *path, struct util_err *err)
{
	const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
	char *dir = slash ? strndup(path, (size_t)(slash - path) + 1) : NULL;
	long max = pathconf(dir ? dir : ".", _PC_NAME_MAX);

	free(dir);
	max = max > 0 ? max : 255; /* (no such directory yet: the usual limit) */
	if ((long)strlen(base) + OUTFILE_TEMP_EXTRA <= max)
		return 0;
	util_err_set(err, "%s: a name of %zu bytes, where at most %ld fit: it is written as "
		     ".NAME.tmp.XXXXXX first, and the file system's names hold %ld bytes", path,
		     strlen(base), max - OUTFILE_TEMP_EXTRA, max);
	return -1;
}

int outfile_temp(const char *path, char **tmp, struct util_err *err)
{
	static const char ALNUM[] = "abcdefghijklmnopqrstuvwxyz"
				    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	const char *slash = strrchr(path, '/');
	size_t dirlen = slash ? (size_t)(slash - path) + 1 : 0;
	char *x;
	int fd = -1, tries, i;

	*tmp = malloc(strlen(path) + OUTFILE_TEMP_EXTRA + 20);
	if (*tmp == NULL) {
		util_err_set(err, "out of memory");
		return -1;
	}
	memcpy(*tmp, path, dirlen);
	sprintf(*tmp + dirlen, ".%s.tmp.XXXXXX", path + dirlen);
	x = *tmp + strlen(*tmp) - 6;
	/* mkstemp's names, created as a plain open would, with mode 0666 less
	 * the umask: mkstemp's 0600 would need the umask to be put right, and
	 * only umask() tells it, by changing it for the whole process for a
	 * moment (a file another thread of a program using the library made
	 * then would get 0666). */
	for (tries = 0; tries < OUTFILE_TRIES; tries++) {
		unsigned char r[6];

		if (getrandom(r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r) {
			/* (no entropy yet, or no such call: O_EXCL keeps a
			 * guessed name safe, so the clock will do) */
			struct timespec ts;
			uint64_t v;

			clock_gettime(CLOCK_REALTIME, &ts);
			v = ((uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15u) ^
			    ((uint64_t)getpid() << 32) ^ (uint64_t)tries * 0xbf58476d1ce4e5b9u;
			for (i = 0; i < 6; i++, v >>= 8)
				r[i] = (unsigned char)v;
		}
		for (i = 0; i < 6; i++)
			x[i] = ALNUM[r[i] % (sizeof ALNUM - 1)];
		fd = open(*tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
		if (fd >= 0 || errno != EEXIST)
			break;
	}
	if (fd < 0) {
		if (errno != ENAMETOOLONG || outfile_name_fits(path, err) == 0)
			util_err_set(err, "%s: cannot create: %s", path, strerror(errno));
		free(*tmp);
		*tmp = NULL;
		return -1;
	}
	/* Held as long as the file is open (flock(2): released when its
	 * writer closes it or dies), so that no other run removes it or takes
	 * it over while it is written (outfile_temp_busy), by whatever name it
	 * reached it. (A file system without locks: none.) */
	(void)flock(fd, LOCK_EX | LOCK_NB);
	return fd;
}

int outfile_temp_busy(const char *tmp)
{
	int fd, busy;

	if (tmp == NULL || tmp[0] == '\0')
		return 0;
	fd = open(tmp, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return 0;
	/* shared: it conflicts with the writer's exclusive lock, and works on
	 * a descriptor open for reading where locks are fcntl's (NFS) */
	busy = flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
	close(fd); /* (and with it the lock just taken, if it was) */
	return busy;
}

/* The largest lock file read back: a header and a few runs' journals. */
#define OUTFILE_LOCK_MAX 65536

/* p made absolute (against the working directory), to free; NULL when
 * out of memory or the directory is unknown. */
static char *absolute(const char *p)
{
	char *cwd, *r;

	if (p[0] == '/')
		return strdup(p);
	if ((cwd = getcwd(NULL, 0)) == NULL)
		return NULL;
	r = malloc(strlen(cwd) + strlen(p) + 2);
	if (r)
		sprintf(r, "%s/%s", cwd, p);
	free(cwd);
	return r;
}

/* The file a chain of symbolic links from path ends at, to free: the
 * name of one not there yet too (a checkpoint's link made before its
 * first checkpoint); NULL where path is no link, or out of memory. */
static char *link_target(const char *path)
{
	char *cur = NULL, buf[4096];
	struct stat st;
	int hops;

	for (hops = 0; hops < 40 && lstat(cur ? cur : path, &st) == 0 && S_ISLNK(st.st_mode);
	     hops++) {
		const char *at = cur ? cur : path, *slash = strrchr(at, '/');
		ssize_t n = readlink(at, buf, sizeof buf - 1);
		char *next;

		if (n <= 0)
			break;
		buf[n] = '\0';
		/* a relative target is relative to the link's directory */
		next = malloc(strlen(at) + (size_t)n + 2);
		if (next == NULL)
			break;
		if (buf[0] == '/' || slash == NULL)
			strcpy(next, buf);
		else
			sprintf(next, "%.*s%s", (int)(slash - at + 1), at, buf);
		free(cur);
		cur = next;
	}
	return cur;
}

/* The message of a lock held by another run, whose lock file begins with
 * the n bytes of text. */
static void in_use(const char *path, const char *text, size_t n, struct util_err *err)
{
	const size_t tag = strlen(OUTFILE_LOCK_TAG);
	char head[64];

	snprintf(head, sizeof head, "%.*s", n > tag ? (int)(n - tag) : 0, n > tag ? text + tag : "");
	head[strcspn(head, "\n")] = '\0';
	util_err_set(err, "%s: in use by another run%s%s%s; wait for it to end, or name another "
		     "file", path, head[0] ? " (process " : "", head, head[0] ? ")" : "");
}

int outfile_lock_probe(const char *path, struct util_err *err)
{
	char *name = outfile_lock_name(path), text[64];
	int fd, held = 0;
	ssize_t n;

	if (name == NULL)
		return 0;
	fd = open(name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	/* shared, as outfile_temp_busy's; released by the close */
	if (fd >= 0 && flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK) {
		n = pread(fd, text, sizeof text, 0);
		in_use(path, text, n > 0 ? (size_t)n : 0, err);
		held = 1;
	}
	if (fd >= 0)
		close(fd);
	free(name);
	return held ? -2 : 0;
}

char *outfile_lock_name(const char *path)
{
	char *real = NULL, *name;
	const char *p = path, *slash;
	size_t dirlen;

	/* a link to the checkpoint is the checkpoint: one lock for both */
	if ((real = link_target(path)) != NULL)
		p = real;
	slash = strrchr(p, '/');
	dirlen = slash ? (size_t)(slash - p) + 1 : 0;
	name = malloc(strlen(p) + 8);
	if (name) {
		memcpy(name, p, dirlen);
		sprintf(name + dirlen, ".%s.lock", p + dirlen);
	}
	free(real);
	return name;
}

int outfile_lock(const char *path, char **name, char **was, struct util_err *err)
{
	const size_t tag = strlen(OUTFILE_LOCK_TAG);
	char head[64], *old = NULL, *nl;
	struct stat held, named;
	int fd = -1, tries, rc = -1, len;
	ssize_t n = 0;

	*was = NULL;
	if ((*name = outfile_lock_name(path)) == NULL || (old = malloc(OUTFILE_LOCK_MAX + 64)) == NULL) {
		util_err_set(err, "out of memory");
		goto fail;
	}
	/* A run that ends removes its lock file: one opened just before, and
	 * locked just after, is a file no longer under the name; open again. */
	for (tries = 0; tries < OUTFILE_TRIES; tries++) {
		fd = open(*name, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0666);
		if (fd < 0) {
			const int e = errno;
			struct stat there;

			/* a link, a directory, another user's file: not ours; no
			 * file there (a directory not writable): the run cannot
			 * write its checkpoint either */
			if ((e == ELOOP || e == EISDIR || e == EACCES || e == EPERM) &&
			    lstat(*name, &there) == 0) {
				util_err_set(err, "%s: its lock file %s is not a run's lock that can "
					     "be taken (%s); move it away, or name another file",
					     path, *name, strerror(e));
				rc = -2;
			} else {
				util_err_set(err, "%s: cannot create its lock file %s: %s", path,
					     *name, strerror(e));
			}
			goto fail;
		}
		n = fstat(fd, &held) == 0 && S_ISREG(held.st_mode) ? pread(fd, old, OUTFILE_LOCK_MAX, 0)
								  : -1;
		if (n < 0 || (n > 0 && ((size_t)n < tag || memcmp(old, OUTFILE_LOCK_TAG, tag) != 0))) {
			util_err_set(err, "%s: its lock file %s is there and is not the lock "
				     "of a run (which a run would write and remove); move it away",
				     path, *name);
			rc = -2;
			goto fail;
		}
		old[n] = '\0';
		if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
			if (errno == ENOSYS || errno == ENOLCK || errno == EOPNOTSUPP) {
				/* a file system without locks: the run goes on without */
				if (n == 0)
					unlink(*name);
				rc = OUTFILE_NO_LOCK;
				goto fail;
			}
			if (errno != EWOULDBLOCK) {
				util_err_set(err, "%s: cannot lock its lock file %s: %s", path,
					     *name, strerror(errno));
				goto fail;
			}
			in_use(path, old, (size_t)n, err);
			rc = -2;
			goto fail;
		}
		if (stat(*name, &named) == 0 && held.st_dev == named.st_dev &&
		    held.st_ino == named.st_ino)
			break;
		close(fd);
		fd = -1;
	}
	if (fd < 0) {
		util_err_set(err, "%s: cannot lock its lock file %s: removed as often as it "
			     "was opened", path, *name);
		goto fail;
	}
	/* Who holds it, for the message of a run that finds it taken; the
	 * journal of a killed run that held it stays, until it is swept. */
	len = snprintf(head, sizeof head, OUTFILE_LOCK_TAG "%ld\n", (long)getpid());
	nl = n > 0 ? memchr(old, '\n', (size_t)n) : NULL;
	if (nl && nl + 1 < old + n) {
		size_t jn = (size_t)(old + n - (nl + 1));

		memmove(old, nl + 1, jn);
		errno = 0;
		/* the new header and the journal, then the length: never empty */
		memmove(old + len, old, jn);
		memcpy(old, head, (size_t)len);
		if (pwrite(fd, old, (size_t)len + jn, 0) != (ssize_t)((size_t)len + jn) ||
		    ftruncate(fd, (off_t)((size_t)len + jn)) != 0)
			goto write_failed;
		memmove(old, old + len, jn);
		*was = malloc(jn + 2); /* the journal, with its final NUL and one more */
		if (*was) {
			memcpy(*was, old, jn);
			(*was)[jn] = (*was)[jn + 1] = '\0';
		}
	} else if ((errno = 0, pwrite(fd, head, (size_t)len, 0) != len) || ftruncate(fd, len) != 0) {
		goto write_failed;
	}
	free(old);
	return fd;
write_failed:
	/* (left as it is: a lock whatever it holds now, which the next run
	 * takes over; a short write without an error is a full disk's) */
	util_err_set(err, "%s: cannot write its lock file %s: %s", path, *name,
		     strerror(errno ? errno : ENOSPC));
fail:
	if (fd >= 0)
		close(fd);
	free(old);
	free(*name);
	*name = NULL;
	return rc;
}

int outfile_lock_note(int fd, const char *path, const char *tmp)
{
	char *out, *t;
	int rc = -1;
	off_t end;

	if (fd < 0 || path == NULL || tmp == NULL)
		return -1;
	out = absolute(path);
	t = absolute(tmp);
	/* "OUTPUT\0TEMP\0" in one write (a pair is never half there): any
	 * byte but NUL may be in a name */
	if (out && t) {
		const size_t lo = strlen(out) + 1, lt = strlen(t) + 1;
		char *pair = malloc(lo + lt);

		if (pair && (end = lseek(fd, 0, SEEK_END)) >= 0) {
			memcpy(pair, out, lo);
			memcpy(pair + lo, t, lt);
			rc = pwrite(fd, pair, lo + lt, end) == (ssize_t)(lo + lt) ? 0 : -1;
		}
		free(pair);
	}
	free(out);
	free(t);
	return rc;
}

int outfile_same_file(const char *a, const char *b)
{
	struct stat sa, sb;
	int ea = stat(a, &sa) == 0, eb = stat(b, &sb) == 0, same;
	const char *ba = strrchr(a, '/'), *bb = strrchr(b, '/');
	char *da, *db, *ra = NULL, *rb = NULL;

	if (ea || eb)
		return ea && eb && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino &&
		       !S_ISCHR(sa.st_mode);
	da = ba ? strndup(a, (size_t)(ba - a) + 1) : strdup(".");
	db = bb ? strndup(b, (size_t)(bb - b) + 1) : strdup(".");
	if (da && db) {
		ra = realpath(da, NULL);
		rb = realpath(db, NULL);
	}
	if (ra && rb)
		same = strcmp(ra, rb) == 0 && strcmp(ba ? ba + 1 : a, bb ? bb + 1 : b) == 0;
	else /* a directory that is not there: the run fails on it anyway */
		same = strcmp(a, b) == 0;
	free(da);
	free(db);
	free(ra);
	free(rb);
	return same;
}

void outfile_lock_sweep(char *was, const char *const *outputs, int nout,
			const char *const *keep, int nkeep)
{
	const char *p = was;
	struct stat st;
	int i;

	if (was == NULL)
		return;
	/* pairs of NUL-ended names, to the journal's end (an empty name) */
	while (*p) {
		const char *out = p, *tmp = p + strlen(p) + 1;
		int mine = 0, kept = 0;

		if (*tmp == '\0')
			break;
		p = tmp + strlen(tmp) + 1;
		/* (one file by identity, from any working directory) */
		for (i = 0; i < nout; i++)
			mine = mine || (outputs[i] && outfile_same_file(outputs[i], out));
		if (!mine || !outfile_is_temp(tmp, out) || lstat(tmp, &st) != 0 ||
		    !S_ISREG(st.st_mode) || outfile_temp_busy(tmp))
			continue;
		for (i = 0; i < nkeep && !kept; i++)
			kept = keep[i] && keep[i][0] && outfile_same_file(tmp, keep[i]);
		if (!kept)
			unlink(tmp);
	}
	free(was);
}

int outfile_lock_reset(int fd)
{
	char head[64];
	int len;

	if (fd < 0)
		return 0;
	len = snprintf(head, sizeof head, OUTFILE_LOCK_TAG "%ld\n", (long)getpid());
	return ftruncate(fd, len) == 0 && pwrite(fd, head, (size_t)len, 0) == len ? 0 : -1;
}

void outfile_unlock(char *name, int fd, int keep)
{
	struct stat held, named;

	if (fd < 0)
		return;
	/* Removed while held (a run that opens it now finds it gone, above),
	 * and only while the name is still the file held. */
	if (!keep && fstat(fd, &held) == 0 && lstat(name, &named) == 0 &&
	    held.st_dev == named.st_dev && held.st_ino == named.st_ino)
		unlink(name);
	close(fd);
	free(name);
}

int outfile_is_temp(const char *tmp, const char *path)
{
	const char *slash = strrchr(path, '/');
	size_t dirlen = slash ? (size_t)(slash - path) + 1 : 0, base = strlen(path) - dirlen;
	const char *p;
	int i;

	if (strncmp(tmp, path, dirlen) != 0 || tmp[dirlen] != '.' ||
	    strncmp(tmp + dirlen + 1, path + dirlen, base) != 0 ||
	    strncmp(tmp + dirlen + 1 + base, ".tmp.", 5) != 0)
		return 0;
	for (i = 0, p = tmp + dirlen + 1 + base + 5; i < 6; i++, p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9')))
			return 0;
	return *p == '\0';
}

int outfile_drop_temp(const char *tmp, int keep, uint64_t size, struct util_err *err)
{
	/* What was written after the checkpoint may end in a cut frame or row. */
	if (tmp && !keep)
		unlink(tmp);
	else if (tmp && truncate(tmp, (off_t)size) != 0) {
		util_err_set(err, "%s: cannot cut to %llu bytes: %s", tmp,
			     (unsigned long long)size, strerror(errno));
		return -1;
	}
	return 0;
}

void outfile_sync_dir(const char *path)
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

/* Whether dir is this process's descriptor directory, /proc/PID/fd (or a
 * thread's, /proc/PID/task/TID/fd, which /proc/thread-self/fd is). */
static int proc_fd_dir(const char *dir)
{
	char *real = realpath(dir, NULL), pre[64];
	size_t n, len;
	int yes = 0;

	if (real == NULL)
		return 0;
	n = (size_t)snprintf(pre, sizeof pre, "/proc/%ld/", (long)getpid());
	len = strlen(real);
	if (strncmp(real, pre, n) == 0 && len >= n + 2 &&
	    strcmp(real + len - 3, "/fd") == 0 &&
	    (len == n + 2 || strncmp(real + n, "task/", 5) == 0))
		yes = 1;
	free(real);
	return yes;
}

int outfile_fd_of(const char *path)
{
	char cur[4096], link[4096];
	int hop;

	if (strlen(path) >= sizeof cur)
		return -1;
	strcpy(cur, path);
	/* each link in turn, as the kernel would follow them (a bounded
	 * number: a loop of links is not a descriptor) */
	for (hop = 0; hop < 16; hop++) {
		const char *slash = strrchr(cur, '/'), *base = slash ? slash + 1 : cur;
		struct stat st;
		ssize_t got;

		if (*base != '\0' && strspn(base, "0123456789") == strlen(base) &&
		    strlen(base) < 10) {
			char dir[4096];

			if (slash == NULL) {
				strcpy(dir, ".");
			} else if (slash == cur) {
				strcpy(dir, "/");
			} else {
				memcpy(dir, cur, (size_t)(slash - cur));
				dir[slash - cur] = '\0';
			}
			if (proc_fd_dir(dir))
				return atoi(base);
		}
		if (lstat(cur, &st) != 0 || !S_ISLNK(st.st_mode))
			return -1;
		got = readlink(cur, link, sizeof link - 1);
		if (got <= 0)
			return -1;
		link[got] = '\0';
		if (link[0] == '/') {
			strcpy(cur, link);
		} else {
			/* relative to the link's directory */
			size_t dl = slash ? (size_t)(slash - cur) + 1 : 0;

			if (dl + strlen(link) >= sizeof cur)
				return -1;
			memmove(cur + dl, link, strlen(link) + 1);
		}
	}
	return -1;
}

int outfile_open(struct outfile *o, const char *path, struct util_err *err)
{
	struct stat st;
	int fd;

	memset(o, 0, sizeof *o);
	if (strcmp(path, "-") == 0) {
		o->to_stdout = 1;
		o->fp = stdout;
		return 0;
	}
	if ((fd = outfile_fd_of(path)) >= 0 || (stat(path, &st) == 0 && !S_ISREG(st.st_mode))) {
		/* a descriptor, a device or a pipe: written as a stream, never
		 * renamed over (a descriptor as the shell opened it: appending
		 * where it appends) */
		if (fd >= 0)
			o->fp = (fd = dup(fd)) >= 0 ? fdopen(fd, "w") : NULL;
		else
			o->fp = fopen(path, "w");
		if (o->fp == NULL && fd >= 0)
			close(fd);
		if (o->fp == NULL) {
			util_err_set(err, "%s: cannot open: %s", path, strerror(errno));
			return -1;
		}
		o->to_stdout = 2;
		/* (for the messages) */
		if ((o->path = strdup(path)) == NULL) {
			fclose(o->fp);
			memset(o, 0, sizeof *o);
			util_err_set(err, "out of memory");
			return -1;
		}
		return 0;
	}
	o->path = strdup(path);
	if (o->path == NULL) {
		util_err_set(err, "out of memory");
		goto fail;
	}
	fd = outfile_temp(path, &o->tmp, err);
	if (fd < 0)
		goto fail;
	o->fp = fdopen(fd, "w");
	if (o->fp == NULL) {
		util_err_set(err, "%s: %s", path, strerror(errno));
		close(fd);
		unlink(o->tmp);
		goto fail;
	}
	return 0;
fail:
	free(o->path);
	free(o->tmp);
	memset(o, 0, sizeof *o);
	return -1;
}

int outfile_sync(struct outfile *o, struct util_err *err)
{
	struct stat st;

	if (fflush(o->fp) != 0 || (!o->to_stdout && fsync(fileno(o->fp)) != 0)) {
		util_err_set(err, "%s: write failed: %s", o->to_stdout == 1 ? "stdout" : o->path,
			     strerror(errno));
		return -1;
	}
	if (!o->to_stdout && fstat(fileno(o->fp), &st) != 0) {
		util_err_set(err, "%s: %s", o->path, strerror(errno));
		return -1;
	}
	o->synced = o->to_stdout ? 0 : (uint64_t)st.st_size;
	return 0;
}

int outfile_sum(struct outfile *o, uint64_t upto, uint32_t *crc, struct util_err *err)
{
	unsigned char buf[1 << 16];
	uLong sum = o->sum;
	ssize_t got;

	if (o->to_stdout) { /* a stream, which no run resumes from */
		*crc = 0;
		return 0;
	}
	while (o->sum_len < upto) {
		size_t want = upto - o->sum_len < sizeof buf ? (size_t)(upto - o->sum_len) : sizeof buf;

		got = pread(fileno(o->fp), buf, want, (off_t)o->sum_len);
		if (got <= 0) {
			util_err_set(err, "%s: cannot read back: %s", o->path,
				     got < 0 ? strerror(errno) : "file shorter than written");
			return -1;
		}
		sum = crc32_z(sum, buf, (size_t)got);
		o->sum_len += (uint64_t)got;
		o->sum = (uint32_t)sum;
	}
	*crc = o->sum;
	return 0;
}

int outfile_commit(struct outfile *o, struct util_err *err)
{
	int rc = -1;

	if (o->to_stdout) {
		rc = fflush(o->fp) == 0 ? 0 : -1;
		if (o->to_stdout == 2 && fclose(o->fp) != 0)
			rc = -1;
		if (rc != 0)
			util_err_set(err, "%s: write failed: %s",
				     o->to_stdout == 2 ? o->path : "stdout", strerror(errno));
		free(o->path);
		memset(o, 0, sizeof *o);
		return rc;
	}
	if (fflush(o->fp) != 0 || fsync(fileno(o->fp)) != 0) {
		util_err_set(err, "%s: write failed: %s", o->path, strerror(errno));
		goto out;
	}
	if (fclose(o->fp) != 0) {
		o->fp = NULL;
		util_err_set(err, "%s: write failed: %s", o->path, strerror(errno));
		goto out;
	}
	o->fp = NULL;
	if (rename(o->tmp, o->path) != 0) {
		/* Written whole and durable: kept under the temporary name. */
		util_err_set(err, "%s: cannot rename into place: %s; what was written is "
			     "kept in %s", o->path, strerror(errno), o->tmp);
		free(o->tmp);
		o->tmp = NULL;
		goto out;
	}
	free(o->tmp);
	o->tmp = NULL;
	outfile_sync_dir(o->path);
	rc = 0;
out:
	outfile_abort(o, NULL);
	return rc;
}

int outfile_commit_partial(struct outfile *o, struct util_err *err)
{
	char *partial;

	if (o->to_stdout)
		return outfile_commit(o, err);
	partial = malloc(strlen(o->path) + sizeof ".partial");
	if (partial == NULL) {
		util_err_set(err, "out of memory");
		outfile_abort(o, NULL);
		return -1;
	}
	sprintf(partial, "%s.partial", o->path);
	free(o->path);
	o->path = partial;
	return outfile_commit(o, err);
}

int outfile_abort(struct outfile *o, struct util_err *err)
{
	int rc;

	if (o->fp && o->to_stdout != 1)
		fclose(o->fp);
	rc = outfile_drop_temp(o->tmp, o->keep, o->keep_size, err);
	free(o->tmp);
	free(o->path);
	memset(o, 0, sizeof *o);
	return rc;
}

void outfile_keep(struct outfile *o, uint64_t size)
{
	o->keep = 1;
	o->keep_size = size;
}
