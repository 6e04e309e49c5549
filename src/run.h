/* run.h: one run of a scenario with its outputs, from step 0 or from a
 * checkpoint to the last step or a stop: what `boidsim SCENARIO -o FILE`
 * does, as one call. The caller (the command line, a test, another
 * program) parses its own options, and hears of progress and messages
 * through callbacks; nothing here prints, exits or reads the environment. */
#ifndef BOIDSIM_RUN_H
#define BOIDSIM_RUN_H

#include <stddef.h>
#include <stdint.h>
#include "ctx.h"
#include "scenario.h"
#include "sim.h"
#include "util.h"

/* How a run ended (run_scenario's value): the process exit statuses of
 * boidsim(1), except RUN_BAD_OPTIONS, which the command line also ends
 * with status 2 (with a pointer to --help). A run stopped by the caller
 * ends RUN_OK with run_result.stopped set. */
enum run_status { RUN_OK = 0, RUN_FAILED = 1, RUN_BAD_INPUT = 2, RUN_BAD_OPTIONS = 3 };

struct run_progress {
	uint64_t step, steps;
	size_t n;          /* boids alive */
	double seconds;    /* since the first step */
	int done;          /* the last call, after the loop */
};

struct run_opts {
	const char *scenario;               /* its file name */
	const struct scenario_override *ov; /* --set and the options that are keys */
	int n_ov;
	const char *output;                 /* -o, NULL: none; "-": stdout */
	const char *format;                 /* NULL: from the name */
	const char *metrics;                /* --metrics */
	uint64_t metrics_every;             /* 0: output.every */
	const char *checkpoint;
	uint64_t checkpoint_every;
	int resume;
	int check;            /* only validate: run_result.json, no run */
	int check_invariants;
	enum sim_search search;
	const char *generator; /* the trajectory's generator string */
	/* Asked once per step, before the step's outputs: nonzero (a signal
	 * number, say) stops the run there, as interrupted. May be NULL. */
	int (*stop)(void *user);
	/* Called about 4 times a second during the loop and once after it;
	 * may be NULL. */
	void (*progress)(void *user, const struct run_progress *p);
	void *user;
};

struct run_result {
	uint64_t step;        /* the last step done */
	size_t n;             /* boids alive at the end */
	int stopped;          /* the stop callback's value that ended the run, or 0 */
	char *json;           /* with check: the effective scenario (free() it) */
	struct sim_stats stats;
	double seconds;       /* the step loop's, outputs included */
	double t_out;         /* of it, writing the trajectory */
	enum ctx_simd simd;   /* the neighbour loop's level */
	/* Of a split run (ctx.agree) that failed before its first step: every
	 * part failed alike (uniform), or this part set up well and another
	 * did not (others: err says so). */
	int uniform, others;
	int started;          /* the setup was over: the steps began */
};

/* Runs o under ctx. Returns a run_status; on anything but RUN_OK err holds
 * the one line to show (without the program's name). res is filled as far
 * as the run got. */
int run_scenario(const struct run_opts *o, const struct ctx *ctx, struct run_result *res,
		 struct util_err *err);

#endif
