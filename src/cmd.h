/* cmd.h: the subcommands that work on trajectory files (info, verify,
 * convert); each takes its own argv (argv[0] is the subcommand's name) and
 * returns the process exit status. */
#ifndef BOIDSIM_CMD_H
#define BOIDSIM_CMD_H

#include "ctx.h"

/* The library's context of the process, set up by main (its log prints
 * "boidsim: MESSAGE" lines to stderr). */
extern struct ctx cmd_ctx;

/* Flushes standard output; when that or an earlier write to it failed,
 * says so in one line ("boidsim: standard output: write failed: ...")
 * and returns -1, else 0. */
int cmd_stdout_flush(void);

/* Installs handler for the signals that stop a command: SIGINT, SIGTERM
 * and SIGHUP, each blocked while any of them is handled; a SIGHUP that is
 * ignored (nohup) stays ignored. */
void cmd_catch_signals(void (*handler)(int));

int cmd_info(int argc, char **argv);
int cmd_verify(int argc, char **argv);
int cmd_convert(int argc, char **argv);

#endif
