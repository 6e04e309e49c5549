/* main.c: the boidsim command line: parse the options, set up the
 * library's context from the process (signals, BOIDSIM_SIMD, -q, -v, the
 * terminal), and hand the run to run_scenario (run.h). */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdatomic.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "cmd.h"
#include "ctx.h"
#include "run.h"
#include "scenario.h"
#include "traj.h"
#include "util.h"
#ifdef HAVE_MPI
#include <mpi.h>
#include "dist.h"
#endif

#define EXIT_USAGE 2
/* The most threads, -j or OMP_NUM_THREADS. */
#define MAIN_THREADS_MAX 4096
#define MAIN_STR(x) #x
#define MAIN_XSTR(x) MAIN_STR(x)
#define MAX_OVERRIDES 256

/* The library's context for the whole process (cmd.h). */
struct ctx cmd_ctx;

static volatile sig_atomic_t stop_signal;
/* When the first signal came (CLOCK_MONOTONIC), written before
 * stop_signal; {0, 0} while it is being written, which is within the
 * grace (sa_mask blocks the handlers in the thread that runs one, but a
 * second signal may reach another thread of the team). */
static volatile struct timespec first_signal;

/* Seconds after the first signal in which another is taken as the same
 * request: timeout(1) sends its signal to the process and then to its
 * process group, which holds the process too. */
#define MAIN_SIGNAL_GRACE 1.0

/* SIGPIPE: the reader of a pipe the run writes to has gone (| head). Its
 * default action would end the run before it removes the temporary files
 * of its other outputs (-o FILE under --metrics -, or the reverse): it is
 * noted instead, the write fails (EPIPE), the run removes them, and main
 * then ends by SIGPIPE itself, quietly, as boidsim(1) says. */
static volatile sig_atomic_t got_sigpipe;

static void on_sigpipe(int sig)
{
	(void)sig;
	got_sigpipe = 1;
}

/* The first SIGINT, SIGTERM or SIGHUP asks the run to stop after the
 * current step; one within a second of it is the same request (its
 * status, the latest signal's, is the exit status); a second one, from a
 * second on, stops it at once (the default action). clock_gettime,
 * signal and raise are async-signal-safe. */
static void on_signal(int sig)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	if (!stop_signal) {
		first_signal.tv_sec = now.tv_sec;
		first_signal.tv_nsec = now.tv_nsec;
		atomic_thread_fence(memory_order_seq_cst);
		stop_signal = sig;
		return;
	}
	atomic_thread_fence(memory_order_seq_cst);
	if ((first_signal.tv_sec == 0 && first_signal.tv_nsec == 0) ||
	    (double)(now.tv_sec - first_signal.tv_sec) +
			    1e-9 * (double)(now.tv_nsec - first_signal.tv_nsec) <
		    MAIN_SIGNAL_GRACE) {
		stop_signal = sig;
		return;
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

static void usage(FILE *out)
{
	fputs("Usage: boidsim [run] [OPTIONS] SCENARIO.json\n"
	      "       boidsim info|verify|convert ...   (see boidsim COMMAND --help)\n"
	      "Run a deterministic flocking simulation and write its trajectory.\n"
	      "\n"
	      "  -o, --output FILE      write the trajectory to FILE (.bin, .csv, .csv.gz;\n"
	      "                         - for stdout, with --format)\n"
	      "      --format FMT       " TRAJ_FORMAT_NAMES " (default: from FILE's extension)\n"
	      "      --seed N           override the scenario's seed\n"
	      "      --steps N          override the number of steps\n"
	      "      --every K          write every K-th step (step 0 is always written)\n"
	      "      --set KEY=VALUE    override any scenario key by its dotted path\n"
	      "  -j, --threads N        use N threads (default: OMP_NUM_THREADS or all cores)\n"
	      "      --neighbours MODE  grid (default) or brute (O(N^2) reference);\n"
	      "                         also spelt --neighbors\n"
	      "      --balance MODE     under mpirun: slabs by time (default) or boids\n"
	      "      --check            validate and print the effective scenario; run nothing\n"
	      "      --check-invariants check counts, finiteness, speeds and box every step\n"
	      "      --metrics FILE     write order parameters as CSV (- for stdout)\n"
	      "      --metrics-every K  a metrics row every K-th step (default: with frames)\n"
	      "      --checkpoint FILE  where checkpoints go (and --resume reads)\n"
	      "      --checkpoint-every K  write a checkpoint every K-th step (and on a signal)\n"
	      "      --resume           continue from the checkpoint, as if never stopped\n"
	      "  -q, --quiet            no progress line or notes\n"
	      "  -v, --verbose          more notes on stderr\n"
	      "  -h, --help             show this help\n"
	      "  -V, --version          show the version\n"
	      "\n"
	      "Exit status: 0 success, 1 runtime or I/O failure, 2 usage or scenario error,\n"
	      "128+N when stopped by signal N (130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP).\n"
	      "See boidsim(1), boidsim-scenario(5), boidsim-trajectory(5).\n", out);
}

static int usage_error(const char *fmt, const char *arg)
{
	char what[4096];

	/* One write of the whole line: under mpirun, a process that exits at
	 * once can lose the pieces after the first ("boidsim: " alone was
	 * seen, mpi.test's usage error in 3 processes). */
	snprintf(what, sizeof what, fmt, arg);
	fprintf(stderr, "boidsim: %s (see boidsim --help)\n", what);
	return EXIT_USAGE;
}

/* An option getopt_long refused: the start of more than one long option
 * (--ch: --check, --check-invariants, --checkpoint) says which it could
 * be; anything else is unknown. */
static int option_error(const struct option *longs, const char *arg)
{
	char names[1024] = "";
	size_t len = 0, used = 0;
	int i, hits = 0;

	if (strncmp(arg, "--", 2) == 0 && arg[2] != '\0') {
		len = strcspn(arg + 2, "=");
		/* an option named whole (or by a prefix of it alone), with a
		 * value it does not take */
		for (i = 0, hits = 0; longs[i].name; i++)
			hits += strncmp(longs[i].name, arg + 2, len) == 0;
		for (i = 0; longs[i].name; i++)
			if ((strlen(longs[i].name) == len || hits == 1) &&
			    strncmp(longs[i].name, arg + 2, len) == 0 && arg[2 + len] == '=' &&
			    longs[i].has_arg == no_argument) {
				char what[256];

				snprintf(what, sizeof what, "--%s takes no value, got %s",
					 longs[i].name, arg);
				return usage_error("%s", what);
			}
		for (i = 0, hits = 0; longs[i].name; i++)
			if (strncmp(longs[i].name, arg + 2, len) == 0 && used < sizeof names) {
				used += (size_t)snprintf(names + used, sizeof names - used, "%s--%s",
							 hits ? ", " : "", longs[i].name);
				hits++;
			}
	}
	if (hits < 2)
		return usage_error("unknown option %s", arg);
	{
		char what[2048];

		snprintf(what, sizeof what, "%.*s is the start of more than one option: %s",
			 (int)(len + 2), arg, names);
		return usage_error("%s", what);
	}
}

/* -v: where the time of the step loop went, and the work per boid-step. */
static void report_stats(const struct run_result *r, enum sim_search search)
{
	struct sim_stats all = r->stats;
	const struct sim_stats *st = &all;
	double per, total = r->seconds;

#ifdef HAVE_MPI
	/* Of a split run: the work of every process, the slowest's times. */
	if (cmd_ctx.parts > 1) {
		uint64_t u[4] = {all.candidates, all.boid_steps, all.sent_step, all.sent_gather};
		uint64_t most = all.boid_steps;
		double t[4] = {all.t_grid, all.t_step, all.t_exchange, total};

		MPI_Allreduce(MPI_IN_PLACE, u, 4, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
		MPI_Allreduce(MPI_IN_PLACE, &most, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
		MPI_Allreduce(MPI_IN_PLACE, t, 4, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
		all.candidates = u[0];
		all.boid_steps = u[1];
		all.sent_step = u[2];
		all.sent_gather = u[3];
		all.t_grid = t[0];
		all.t_step = t[1];
		all.t_exchange = t[2];
		total = t[3];
		ctx_log(&cmd_ctx, CTX_VERBOSE, "%d MPI processes: %.0f bytes sent a step between them "
			"(boids leaving their slabs and halos), %.3f s exchanging (the slowest); "
			"%" PRIu64 " bytes gathered for frames and metrics; the busiest stepped "
			"%.1f%% of the boid-steps (slabs by %s)",
			cmd_ctx.parts, r->step ? (double)all.sent_step / (double)r->step : 0.0,
			all.t_exchange, all.sent_gather,
			u[1] ? 100.0 * (double)most / (double)u[1] : 0.0,
			cmd_ctx.balance == CTX_BALANCE_BOIDS ? "boids" : "time");
	}
#endif
	per = st->boid_steps ? 1.0 / (double)st->boid_steps : 0.0;

	ctx_log(&cmd_ctx, CTX_VERBOSE, "time %.3f s: grid build %.3f s, neighbours and update %.3f s, "
		"output %.3f s, other %.3f s; %.3g boid-steps/s; %.1f candidates per boid-step; "
		"%s neighbour loop",
		total, st->t_grid, st->t_step, r->t_out, total - st->t_grid - st->t_step - r->t_out,
		total > 0 ? (double)st->boid_steps / total : 0.0, (double)st->candidates * per,
		search == SIM_BRUTE ? "brute-force" : ctx_simd_name(r->simd));
}

struct options {
	struct run_opts ro;
	int threads;
	struct scenario_override ov[MAX_OVERRIDES];
	char *owned[MAX_OVERRIDES];
	int n_ov;
};

static int add_override(struct options *o, const char *text, const char *label)
{
	if (o->n_ov == MAX_OVERRIDES)
		return -1;
	o->ov[o->n_ov].text = text;
	o->ov[o->n_ov].label = label;
	o->n_ov++;
	return 0;
}

/* --seed/--steps/--every are overrides of their keys, validated the same way. */
static int add_keyed(struct options *o, const char *key, const char *opt, const char *val)
{
	size_t len = strlen(key) + strlen(val) + 4;
	char *text = malloc(len), *label = malloc(strlen(opt) + strlen(val) + 2);

	if (text == NULL || label == NULL || o->n_ov == MAX_OVERRIDES) {
		free(text);
		free(label);
		return -1;
	}
	/* A seed is always passed as a string so all 64 bits survive. */
	if (strcmp(key, "seed") == 0 && strchr(val, '"') == NULL)
		snprintf(text, len, "%s=\"%s\"", key, val);
	else
		snprintf(text, len, "%s=%s", key, val);
	sprintf(label, "%s %s", opt, val);
	o->owned[o->n_ov] = text;
	add_override(o, text, label);
	return 0;
}

static int parse_args(int argc, char **argv, struct options *o)
{
	enum { OPT_FORMAT = 256, OPT_SEED, OPT_STEPS, OPT_EVERY, OPT_SET,
	       OPT_NEIGHBOURS, OPT_CHECK, OPT_INVARIANTS, OPT_METRICS, OPT_METRICS_EVERY,
	       OPT_CHECKPOINT, OPT_CHECKPOINT_EVERY, OPT_RESUME, OPT_BALANCE };
	static const struct option longs[] = {
		{"output", required_argument, NULL, 'o'},
		{"format", required_argument, NULL, OPT_FORMAT},
		{"seed", required_argument, NULL, OPT_SEED},
		{"steps", required_argument, NULL, OPT_STEPS},
		{"every", required_argument, NULL, OPT_EVERY},
		{"set", required_argument, NULL, OPT_SET},
		{"threads", required_argument, NULL, 'j'},
		{"neighbours", required_argument, NULL, OPT_NEIGHBOURS},
		{"neighbors", required_argument, NULL, OPT_NEIGHBOURS},
		{"check", no_argument, NULL, OPT_CHECK},
		{"check-invariants", no_argument, NULL, OPT_INVARIANTS},
		{"metrics", required_argument, NULL, OPT_METRICS},
		{"metrics-every", required_argument, NULL, OPT_METRICS_EVERY},
		{"checkpoint", required_argument, NULL, OPT_CHECKPOINT},
		{"checkpoint-every", required_argument, NULL, OPT_CHECKPOINT_EVERY},
		{"resume", no_argument, NULL, OPT_RESUME},
		{"balance", required_argument, NULL, OPT_BALANCE},
		{"quiet", no_argument, NULL, 'q'},
		{"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{NULL, 0, NULL, 0}};
	int c;
	char *end;
	long v;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:j:qvhV", longs, NULL)) != -1) {
		switch (c) {
		case 'o':
			o->ro.output = optarg;
			break;
		case OPT_FORMAT: {
			enum traj_format fmt;

			/* here, and not after the arguments: "--format -o x.bin"
			 * would otherwise be about x.bin */
			if (traj_format_parse(optarg, &fmt) != 0)
				return usage_error("--format %s: expected " TRAJ_FORMAT_NAMES, optarg);
			o->ro.format = optarg;
			break;
		}
		case OPT_SEED:
			if (add_keyed(o, "seed", "--seed", optarg) != 0)
				return usage_error("too many overrides at %s", optarg);
			break;
		case OPT_STEPS:
			if (add_keyed(o, "steps", "--steps", optarg) != 0)
				return usage_error("too many overrides at %s", optarg);
			break;
		case OPT_EVERY:
			if (add_keyed(o, "output.every", "--every", optarg) != 0)
				return usage_error("too many overrides at %s", optarg);
			break;
		case OPT_SET:
			if (strchr(optarg, '=') == NULL)
				return usage_error("--set %s: expected KEY=VALUE", optarg);
			if (add_override(o, optarg, NULL) != 0)
				return usage_error("too many overrides at %s", optarg);
			break;
		case 'j':
			errno = 0;
			v = strtol(optarg, &end, 10);
			if (errno || *end || end == optarg || v < 1 || v > MAIN_THREADS_MAX)
				return usage_error("--threads %s: expected a whole number from 1 to "
						   MAIN_XSTR(MAIN_THREADS_MAX), optarg);
			o->threads = (int)v;
			break;
		case OPT_NEIGHBOURS:
			if (strcmp(optarg, "grid") == 0)
				o->ro.search = SIM_GRID;
			else if (strcmp(optarg, "brute") == 0)
				o->ro.search = SIM_BRUTE;
			else
				return usage_error("--neighbours %s: expected grid or brute", optarg);
			break;
		case OPT_BALANCE:
			if (strcmp(optarg, "time") == 0)
				cmd_ctx.balance = CTX_BALANCE_TIME;
			else if (strcmp(optarg, "boids") == 0)
				cmd_ctx.balance = CTX_BALANCE_BOIDS;
			else
				return usage_error("--balance %s: expected time or boids", optarg);
			break;
		case OPT_CHECK:
			o->ro.check = 1;
			break;
		case OPT_INVARIANTS:
			o->ro.check_invariants = 1;
			break;
		case OPT_METRICS:
			o->ro.metrics = optarg;
			break;
		case OPT_METRICS_EVERY:
			errno = 0;
			v = strtol(optarg, &end, 10);
			if (errno || *end || end == optarg || v < 1)
				return usage_error("--metrics-every %s: expected a whole number from 1",
						   optarg);
			o->ro.metrics_every = (uint64_t)v;
			break;
		case OPT_CHECKPOINT:
			o->ro.checkpoint = optarg;
			break;
		case OPT_CHECKPOINT_EVERY:
			errno = 0;
			v = strtol(optarg, &end, 10);
			if (errno || *end || end == optarg || v < 1)
				return usage_error("--checkpoint-every %s: expected a whole number from 1",
						   optarg);
			o->ro.checkpoint_every = (uint64_t)v;
			break;
		case OPT_RESUME:
			o->ro.resume = 1;
			break;
		case 'q':
			cmd_ctx.verbosity = CTX_QUIET;
			break;
		case 'v':
			cmd_ctx.verbosity = CTX_VERBOSE;
			break;
		case 'h':
			usage(stdout);
			return -1;
		case 'V':
			printf("boidsim %s\n", PACKAGE_VERSION);
			return -1;
		case ':':
			return usage_error("option %s needs a value", argv[optind - 1]);
		default:
			return option_error(longs, argv[optind - 1]);
		}
	}
	/* "boidsim run SCENARIO" is the explicit form of "boidsim SCENARIO";
	 * a scenario file named run is given as ./run. */
	if (optind < argc && strcmp(argv[optind], "run") == 0)
		optind++;
	if (optind >= argc)
		return usage_error("%s", "no scenario file given");
	if (optind + 1 < argc)
		return usage_error("unexpected argument %s", argv[optind + 1]);
	o->ro.scenario = argv[optind];
	return 0;
}

static int stop_requested(void *user)
{
	int stop = stop_signal;

	(void)user;
#ifdef HAVE_MPI
	/* Every process stops at the same step: the first signal any of
	 * them had (mpirun passes SIGINT and SIGTERM on to all). */
	if (cmd_ctx.parts > 1)
		MPI_Allreduce(MPI_IN_PLACE, &stop, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
#endif
	return stop;
}

static void show_progress(void *user, const struct run_progress *p)
{
	double rate = p->seconds > 0 ? (double)p->step * p->n / p->seconds : 0;
	double left = p->step > 0 ? p->seconds * (double)(p->steps - p->step) / (double)p->step : 0;

	(void)user;
	fprintf(stderr, "\rstep %" PRIu64 "/%" PRIu64 " %5.1f%%  %.3g boid-steps/s  %.0fs left ",
		p->step, p->steps, p->steps ? 100.0 * p->step / p->steps : 100.0, rate, left);
	if (p->done)
		fputc('\n', stderr);
}

/* The library's messages, as the program's. */
static void log_line(void *user, int level, const char *msg)
{
	(void)user;
	(void)level;
	fprintf(stderr, "boidsim: %s\n", msg);
}

/* What the environment chooses for the library: BOIDSIM_SIMD, a level's
 * name (empty: unset). Any other value is a usage error of a run, said by
 * simd_bad: a typo must not make a comparison of levels pass unseen. */
static const char *setup_ctx(struct ctx *c)
{
	const char *simd = getenv("BOIDSIM_SIMD");
	enum ctx_simd level;

	c->log = log_line;
	if (simd == NULL || simd[0] == '\0')
		return NULL;
	if (ctx_simd_parse(simd, &level) != 0)
		return simd;
	c->simd = level;
	return NULL;
}

#ifdef HAVE_MPI
static struct dist *dist;
static int mpi_started;

static int agree_status(void *user, int status, uint64_t digest, int *uniform, int *same)
{
	int v[2] = {status, -status};
	/* the largest digest and the largest complement: equal everywhere
	 * when the largest is the complement of the complement's */
	uint64_t d[2] = {digest, ~digest};

	(void)user;
	MPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	MPI_Allreduce(MPI_IN_PLACE, d, 2, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
	*uniform = v[0] == -v[1];
	*same = d[0] == ~d[1];
	return v[0];
}

/* A part that cannot go on in a step (ctx.fail): the others wait for it,
 * so it says why and ends them all. */
static void fail_run(void *user, const char *msg)
{
	(void)user;
	fprintf(stderr, "boidsim: %s\n", msg);
	MPI_Abort(MPI_COMM_WORLD, 1);
}

/* Under mpirun (or srun), MPI and, with more than one process, the split
 * of the run (dist.h); a plain start runs as it always has, without MPI.
 * The library calls MPI from the thread that called it only. */
static int start_mpi(int *argc, char ***argv)
{
	struct util_err err = {0};
	int provided, size;

	if (!getenv("OMPI_COMM_WORLD_SIZE") && !getenv("PMIX_RANK") && !getenv("PMI_RANK"))
		return 0;
	if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
		fprintf(stderr, "boidsim: MPI did not start\n");
		return -1;
	}
	mpi_started = 1;
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size == 1)
		return 0;
	if (provided < MPI_THREAD_FUNNELED) {
		fprintf(stderr, "boidsim: this MPI gives no thread support (MPI_THREAD_FUNNELED), "
			"which OpenMP threads need\n");
		return -1;
	}
	if (!(dist = dist_open(&(MPI_Comm){MPI_COMM_WORLD}, &err))) {
		fprintf(stderr, "boidsim: %s\n", err.msg);
		return -1;
	}
	cmd_ctx.dist = dist;
	cmd_ctx.reduce = dist_reduce(dist);
	cmd_ctx.part = dist_part(dist);
	cmd_ctx.parts = dist_parts(dist);
	cmd_ctx.agree = agree_status;
	cmd_ctx.fail = fail_run;
	if (cmd_ctx.part != 0) /* one voice: part 0's */
		cmd_ctx.log = NULL;
	return 0;
}

static void stop_mpi(void)
{
	dist_close(dist);
	if (mpi_started)
		MPI_Finalize();
}
#endif

/* The rank a launcher (mpirun, srun) gave this process, known before MPI
 * starts; 0 without one. */
static long launcher_rank(void)
{
	static const char *const names[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"};
	size_t i;

	for (i = 0; i < sizeof names / sizeof *names; i++)
		if (getenv(names[i]))
			return strtol(getenv(names[i]), NULL, 10);
	return 0;
}

/* Every process of a split run parses the same options: the others keep
 * quiet (mute 1) so that --help, --version and a usage error are said once,
 * by process 0; mute 0 restores their output. */
static void mute_others(int mute)
{
	static int saved[2] = {-1, -1};
	FILE *null;
	int i;

	fflush(stdout);
	fflush(stderr);
	/* (fcntl.h's open would bring POSIX's struct flock with it) */
	if (mute && launcher_rank() > 0 && (null = fopen("/dev/null", "w")) != NULL) {
		for (i = 0; i < 2; i++) {
			saved[i] = dup(1 + i);
			dup2(fileno(null), 1 + i);
		}
		fclose(null);
	} else if (!mute) {
		for (i = 0; i < 2; i++)
			if (saved[i] >= 0) {
				dup2(saved[i], 1 + i);
				close(saved[i]);
				saved[i] = -1;
			}
	}
}

/* The status of a usage error found before MPI starts, which process 0
 * alone says (mute_others): the others end with 0, since a launcher stops
 * the whole job when the first process fails, and process 0 might not
 * have written its line yet. The job's status is then process 0's. */
static int usage_status(int rc)
{
	return launcher_rank() > 0 ? 0 : rc;
}

static int run(struct options *o)
{
	struct run_result res;
	struct util_err err = {0};
	char generator[64];
	int status;

	/* Brute force sums the neighbours in another order, so other bits: its
	 * files say so, and a checkpoint of one resumes only as one. */
	snprintf(generator, sizeof generator, "boidsim %s%s", PACKAGE_VERSION,
		 o->ro.search == SIM_BRUTE ? " (neighbours brute)" : "");
	o->ro.ov = o->ov;
	o->ro.n_ov = o->n_ov;
	o->ro.generator = generator;
	o->ro.stop = stop_requested;
	if (isatty(STDERR_FILENO) && cmd_ctx.verbosity >= CTX_NORMAL && cmd_ctx.part == 0)
		o->ro.progress = show_progress;
	status = run_scenario(&o->ro, &cmd_ctx, &res, &err);
	if (cmd_ctx.parts > 1 && status != RUN_OK) {
		/* A failure before the first step: every process learnt the
		 * worst status (ctx.agree) and ends with it; the ones that
		 * failed say why, part 0 alone when all failed alike (the same
		 * scenario, the same options). A failure in the steps may be
		 * one process's alone, while the others wait for it: it says
		 * why and ends them all. */
		int setup = !res.started;

		if (!res.others && (cmd_ctx.part == 0 || !res.uniform || !setup))
			fprintf(stderr, "boidsim: %s%s\n", err.msg,
				status == RUN_BAD_OPTIONS ? " (see boidsim --help)" : "");
#ifdef HAVE_MPI
		if (!setup)
			MPI_Abort(MPI_COMM_WORLD, 1);
#endif
		return status == RUN_FAILED ? 1 : EXIT_USAGE;
	}
	if (status == RUN_BAD_OPTIONS)
		return usage_error("%s", err.msg);
	if (status != RUN_OK && got_sigpipe) {
		/* its temporary files removed, the run ends as SIGPIPE would
		 * have ended it */
		signal(SIGPIPE, SIG_DFL);
		raise(SIGPIPE);
	}
	if (status != RUN_OK) {
		fprintf(stderr, "boidsim: %s\n", err.msg);
		return status;
	}
	if (o->ro.check && cmd_ctx.part != 0) {
		free(res.json);
		return 0;
	}
	if (o->ro.check) {
		printf("%s\n", res.json);
		free(res.json);
		return cmd_stdout_flush() == 0 ? 0 : 1;
	}
	report_stats(&res, o->ro.search);
	return res.stopped ? 128 + res.stopped : 0;
}

#ifdef _OPENMP
/* The outermost team's threads in OMP_NUM_THREADS (s), read as the
 * OpenMP specification defines it (5.2, section 21.1.2: a list of
 * positive integers separated by commas, one a level of nesting; a
 * plus sign allowed, as the runtime's strtoul reads them): the
 * first, MAIN_THREADS_MAX + 1 for any larger, 0 for a value of spaces
 * only (as unset), -1 for anything else. The runtime's own reading
 * ignores such a value with a warning, or wraps a large one round. */
static long env_threads(const char *s)
{
	long first = 0;
	int items = 0;

	for (;;) {
		unsigned long n = 0;
		int digits = 0;

		while (isspace((unsigned char)*s))
			s++;
		if (*s == '\0' && items == 0)
			return 0;
		if (*s == '+') /* (strtoul's sign, which the runtime accepts) */
			s++;
		for (; isdigit((unsigned char)*s); s++, digits++)
			if (n <= MAIN_THREADS_MAX)
				n = 10 * n + (unsigned long)(*s - '0');
		if (digits == 0 || n == 0)
			return -1;
		if (items++ == 0)
			first = n > MAIN_THREADS_MAX ? MAIN_THREADS_MAX + 1 : (long)n;
		while (isspace((unsigned char)*s))
			s++;
		if (*s == '\0')
			return first;
		if (*s++ != ',')
			return -1;
	}
}

/* The OpenMP runtime reads OMP_NUM_THREADS in its library's constructor,
 * before main, and prints a line of its own for a value it cannot parse,
 * so that a bad value got two lines, the runtime's and boidsim's. A
 * function in the program's .preinit_array runs before any shared
 * library's constructor (ELF, glibc's loader): there a value env_threads
 * cannot parse is set aside for boidsim's one line (env_threads_bad) and
 * hidden from the runtime, which then reads no value (with -j the value
 * does not matter, and without it boidsim exits with its line). */
static const char *threads_set_aside;

#if defined(__ELF__) && defined(__GLIBC__)
/* (the C library is not set up yet: no getenv, no malloc; envp is the
 * array the environment will be, and its strings stay where they are) */
static void set_threads_aside(int argc, char **argv, char **envp)
{
	static const char NAME[] = "OMP_NUM_THREADS=";
	size_t i;

	(void)argc;
	(void)argv;
	for (i = 0; envp && envp[i]; i++)
		if (strncmp(envp[i], NAME, sizeof NAME - 1) == 0)
			break;
	if (!envp || !envp[i] || env_threads(envp[i] + sizeof NAME - 1) >= 0)
		return;
	threads_set_aside = envp[i] + sizeof NAME - 1;
	for (; envp[i]; i++)
		envp[i] = envp[i + 1];
}

__attribute__((section(".preinit_array"), used))
static void (*const main_preinit)(int, char **, char **) = set_threads_aside;
#endif

/* Whether the arguments of a subcommand (argv[0]) ask for its help. */
static int asks_help(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
		if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)
			return 1;
	return 0;
}

/* Whether OMP_NUM_THREADS is not a number of threads, or asks for more
 * than -j allows (without it, more cores than that are used up to the
 * limit): every thread has buffers of its own, and the runtime itself
 * fails to start a team of 100,000. Says so in one line (what, the
 * fix). */
static int env_threads_bad(const char *fix)
{
	const char *v = threads_set_aside ? threads_set_aside : getenv("OMP_NUM_THREADS");
	long n = v ? env_threads(v) : 0;

	/* no value: the runtime's default, all cores, which is capped */
	if (n == 0) {
		if (omp_get_max_threads() > MAIN_THREADS_MAX)
			omp_set_num_threads(MAIN_THREADS_MAX);
		return 0;
	}
	if (n > 0 && n <= MAIN_THREADS_MAX) {
		/* what was read is what runs (the runtime refuses a whole list
		 * for one bad item, and would take all cores) */
		omp_set_num_threads((int)n);
		return 0;
	}
	mute_others(1);
	/* the value as given, but on one line */
	fputs("boidsim: OMP_NUM_THREADS=", stderr);
	for (; *v; v++)
		fputc(iscntrl((unsigned char)*v) ? '?' : *v, stderr);
	if (n < 0)
		fprintf(stderr, ": expected a number of threads from 1 to %d (or a list of them, "
			"one for each level of nesting); %s\n", MAIN_THREADS_MAX, fix);
	else
		fprintf(stderr, ": more than %d threads; %s\n", MAIN_THREADS_MAX, fix);
	mute_others(0);
	return 1;
}
#endif

/* The one line for a BOIDSIM_SIMD that names no level; 1 if it did. */
static int simd_bad(const char *value)
{
	int i;

	if (value == NULL)
		return 0;
	mute_others(1);
	fprintf(stderr, "boidsim: BOIDSIM_SIMD=%s: expected ", value);
	for (i = 0; i < CTX_SIMD_LEVELS; i++)
		fprintf(stderr, "%s%s", i == 0 ? "" : i + 1 < CTX_SIMD_LEVELS ? ", " : " or ",
			ctx_simd_name((enum ctx_simd)i));
	fprintf(stderr, ", or no value\n");
	mute_others(0);
	return 1;
}

static int run_main(int argc, char **argv)
{
	struct options o;
	const char *simd;
	int rc, i;

	memset(&o, 0, sizeof o);
	ctx_init(&cmd_ctx);
	simd = setup_ctx(&cmd_ctx);
	/* Subcommands, as in git, after any -q/-v; "run" is handled with the
	 * options below. */
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-q") == 0 || strcmp(argv[i], "--quiet") == 0)
			cmd_ctx.verbosity = CTX_QUIET;
		else if (strcmp(argv[i], "-v") == 0 || strcmp(argv[i], "--verbose") == 0)
			cmd_ctx.verbosity = CTX_VERBOSE;
		else
			break;
	}
#ifdef _OPENMP
	/* (the help needs no threads) */
	if (i < argc && (strcmp(argv[i], "info") == 0 || strcmp(argv[i], "verify") == 0 ||
			 strcmp(argv[i], "convert") == 0) && !asks_help(argc - i, argv + i) &&
	    env_threads_bad("set it to 1 to " MAIN_XSTR(MAIN_THREADS_MAX) " or unset it"))
		return usage_status(EXIT_USAGE);
#endif
	if (i < argc && strcmp(argv[i], "info") == 0)
		return cmd_info(argc - i, argv + i);
	if (i < argc && strcmp(argv[i], "verify") == 0)
		return cmd_verify(argc - i, argv + i);
	if (i < argc && strcmp(argv[i], "convert") == 0)
		return cmd_convert(argc - i, argv + i);
	mute_others(1);
	rc = parse_args(argc, argv, &o);
	mute_others(0);
	if (rc != 0) {
		rc = rc < 0 ? 0 : usage_status(rc);
		goto out;
	}
	if (simd_bad(simd)) {
		rc = usage_status(EXIT_USAGE);
		goto out;
	}
#ifdef _OPENMP
	if (o.threads > 0)
		omp_set_num_threads(o.threads);
	/* OMP_NUM_THREADS, as -j: every thread has buffers of its own, and
	 * the runtime itself fails to start a team of 100,000 */
	else if (env_threads_bad("give -j N")) {
		rc = usage_status(EXIT_USAGE);
		goto out;
	}
#endif
	/* First SIGINT, SIGTERM or SIGHUP: finish the step, write it, and
	 * close the file marked as interrupted. */
	cmd_catch_signals(on_signal);
	{
		/* (an ignored SIGPIPE stays ignored: the write fails with a line) */
		struct sigaction sa, old;

		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_sigpipe;
		sigemptyset(&sa.sa_mask);
		if (sigaction(SIGPIPE, NULL, &old) == 0 && old.sa_handler != SIG_IGN)
			sigaction(SIGPIPE, &sa, NULL);
	}
#ifdef HAVE_MPI
	if (start_mpi(&argc, &argv) != 0) {
		rc = 1;
		goto out;
	}
#endif
	rc = run(&o);
#ifdef HAVE_MPI
	stop_mpi();
#endif
out:
	for (i = 0; i < o.n_ov; i++) {
		if (o.owned[i]) {
			free((char *)o.ov[i].label);
			free(o.owned[i]);
		}
	}
	return rc;
}

int main(int argc, char **argv)
{
	int rc = run_main(argc, argv);

	/* What went to standard output and was not checked on the way (the
	 * help, the version): a full disk is an error, said once. A status
	 * already set has its line. */
	if (rc == 0 && cmd_stdout_flush() != 0)
		rc = 1;
	return rc;
}
