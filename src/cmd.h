/* cmd.h: the subcommands that work on trajectory files (info, verify,
 * convert); each takes its own argv (argv[0] is the subcommand's name) and
 * returns the process exit status. */
#ifndef BOIDSIM_CMD_H
#define BOIDSIM_CMD_H

#include "ctx.h"

/* The library's context of the process, set up by main (its log prints
 * "boidsim: MESSAGE" lines to stderr). */
extern struct ctx cmd_ctx;

int cmd_info(int argc, char **argv);
int cmd_verify(int argc, char **argv);
int cmd_convert(int argc, char **argv);

#endif
