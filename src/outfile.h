/* outfile.h: a text output file that appears under its name only when it
 * is complete: written to a temporary file in the same directory, synced,
 * then renamed over the name. "-" is stdout. */
#ifndef BOIDSIM_OUTFILE_H
#define BOIDSIM_OUTFILE_H

#include <stdio.h>
#include "util.h"

struct outfile {
	FILE *fp;
	char *path, *tmp;
	int to_stdout;
};

int outfile_open(struct outfile *o, const char *path, struct util_err *err);
/* Flush, sync, close and rename into place; o is closed either way. */
int outfile_commit(struct outfile *o, struct util_err *err);
/* Close and remove the temporary file. Safe on a closed or zeroed o. */
void outfile_abort(struct outfile *o);

#endif
