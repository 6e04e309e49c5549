/* outfile.c: atomic text output files (temporary name, fsync, rename). */
#include "config.h"
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int outfile_temp(const char *path, char **tmp, struct util_err *err)
{
	const char *slash = strrchr(path, '/');
	size_t dirlen = slash ? (size_t)(slash - path) + 1 : 0;
	mode_t mask;
	int fd;

	*tmp = malloc(strlen(path) + 32);
	if (*tmp == NULL) {
		util_err_set(err, "out of memory");
		return -1;
	}
	memcpy(*tmp, path, dirlen);
	sprintf(*tmp + dirlen, ".%s.tmp.XXXXXX", path + dirlen);
	fd = mkstemp(*tmp);
	if (fd < 0) {
		util_err_set(err, "%s: cannot create: %s", path, strerror(errno));
		free(*tmp);
		*tmp = NULL;
		return -1;
	}
	/* mkstemp makes 0600; give the file the mode a plain open would. */
	mask = umask(0);
	umask(mask);
	(void)fchmod(fd, 0666 & ~mask);
	return fd;
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
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		/* a device or a pipe: written as a stream, never renamed over */
		o->fp = fopen(path, "w");
		if (o->fp == NULL) {
			util_err_set(err, "%s: cannot open: %s", path, strerror(errno));
			return -1;
		}
		o->to_stdout = 2;
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
	if (fflush(o->fp) != 0 || (!o->to_stdout && fsync(fileno(o->fp)) != 0)) {
		util_err_set(err, "%s: write failed: %s", o->to_stdout ? "stdout" : o->path,
			     strerror(errno));
		return -1;
	}
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
				     o->to_stdout == 2 ? "output" : "stdout", strerror(errno));
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
		util_err_set(err, "%s: cannot rename into place: %s", o->path, strerror(errno));
		goto out;
	}
	free(o->tmp);
	o->tmp = NULL;
	outfile_sync_dir(o->path);
	rc = 0;
out:
	outfile_abort(o);
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
		outfile_abort(o);
		return -1;
	}
	sprintf(partial, "%s.partial", o->path);
	free(o->path);
	o->path = partial;
	return outfile_commit(o, err);
}

void outfile_abort(struct outfile *o)
{
	if (o->fp && o->to_stdout != 1)
		fclose(o->fp);
	if (o->tmp)
		unlink(o->tmp);
	free(o->tmp);
	free(o->path);
	memset(o, 0, sizeof *o);
}
