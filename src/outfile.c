/* outfile.c: atomic text output files (temporary name, fsync, rename). */
#include "config.h"
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int outfile_open(struct outfile *o, const char *path, struct util_err *err)
{
	const char *slash = strrchr(path, '/');
	size_t dirlen = slash ? (size_t)(slash - path) + 1 : 0;
	mode_t mask;
	int fd;

	memset(o, 0, sizeof *o);
	if (strcmp(path, "-") == 0) {
		o->to_stdout = 1;
		o->fp = stdout;
		return 0;
	}
	o->path = strdup(path);
	o->tmp = malloc(strlen(path) + 32);
	if (o->path == NULL || o->tmp == NULL) {
		util_err_set(err, "out of memory");
		goto fail;
	}
	memcpy(o->tmp, path, dirlen);
	sprintf(o->tmp + dirlen, ".%s.tmp.XXXXXX", path + dirlen);
	fd = mkstemp(o->tmp);
	if (fd < 0) {
		util_err_set(err, "%s: cannot create: %s", path, strerror(errno));
		goto fail;
	}
	mask = umask(0);
	umask(mask);
	(void)fchmod(fd, 0666 & ~mask);
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

int outfile_commit(struct outfile *o, struct util_err *err)
{
	int rc = -1;

	if (o->to_stdout) {
		rc = fflush(stdout) == 0 ? 0 : -1;
		if (rc != 0)
			util_err_set(err, "stdout: write failed: %s", strerror(errno));
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
	rc = 0;
out:
	outfile_abort(o);
	return rc;
}

void outfile_abort(struct outfile *o)
{
	if (o->fp && !o->to_stdout)
		fclose(o->fp);
	if (o->tmp)
		unlink(o->tmp);
	free(o->tmp);
	free(o->path);
	memset(o, 0, sizeof *o);
}
