/* main.c: the boidsim command line: parse options, load the scenario, run
 * the simulation and write the trajectory. The engine lives in the library. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "checkpoint.h"
#include "cmd.h"
#include "metrics.h"
#include "outfile.h"
#include "resume.h"
#include "scenario.h"
#include "sim.h"
#include "start.h"
#include "traj.h"
#include "util.h"

#define EXIT_USAGE 2
#define MAX_OVERRIDES 256

_Static_assert(FLOCK_FIELDS_MAX == TRAJ_FIELDS_MAX, "a frame of the flock is a trajectory frame");

static volatile sig_atomic_t stop_signal;

/* The first SIGINT or SIGTERM asks the run to stop after the current step;
 * both handlers go back to the default, so any second signal stops at once. */
static void on_signal(int sig)
{
	stop_signal = sig;
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
}

static void usage(FILE *out)
{
	fputs("Usage: boidsim [run] [OPTIONS] SCENARIO.json\n"
	      "       boidsim info|verify|convert ...   (see boidsim COMMAND --help)\n"
	      "Run a deterministic flocking simulation and write its trajectory.\n"
	      "\n"
	      "  -o, --output FILE      write the trajectory to FILE (.bin, .csv, .csv.gz;\n"
	      "                         - for stdout, with --format)\n"
	      "      --format FMT       bin, csv or csv.gz (default: from FILE's extension)\n"
	      "      --seed N           override the scenario's seed\n"
	      "      --steps N          override the number of steps\n"
	      "      --every K          write every K-th step (step 0 is always written)\n"
	      "      --set KEY=VALUE    override any scenario key by its dotted path\n"
	      "  -j, --threads N        use N threads (default: OMP_NUM_THREADS or all cores)\n"
	      "      --neighbours MODE  grid (default) or brute (O(N^2) reference)\n"
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
	      "128+N when stopped by signal N (130 for SIGINT, 143 for SIGTERM).\n"
	      "See boidsim(1), boidsim-scenario(5), boidsim-trajectory(5).\n", out);
}

static int usage_error(const char *fmt, const char *arg)
{
	fputs("boidsim: ", stderr);
	fprintf(stderr, fmt, arg);
	fputs(" (see boidsim --help)\n", stderr);
	return EXIT_USAGE;
}

/* -v: where the time of the step loop went, and the work per boid-step. */
static void report_stats(const struct sim_stats *st, double total, double t_out)
{
	double per = st->boid_steps ? 1.0 / (double)st->boid_steps : 0.0;

	util_msg(UTIL_VERBOSE, "time %.3f s: grid build %.3f s, neighbours and update %.3f s, "
		 "output %.3f s, other %.3f s; %.3g boid-steps/s; %.1f candidates per boid-step; "
		 "%s neighbour loop",
		 total, st->t_grid, st->t_step, t_out, total - st->t_grid - st->t_step - t_out,
		 total > 0 ? (double)st->boid_steps / total : 0.0, (double)st->candidates * per,
		 grid_simd());
}

static void progress(uint64_t step, uint64_t steps, size_t n, double t0, int done)
{
	double el = util_seconds() - t0, rate = el > 0 ? (double)step * n / el : 0;
	double left = step > 0 ? el * (double)(steps - step) / (double)step : 0;

	fprintf(stderr, "\rstep %" PRIu64 "/%" PRIu64 " %5.1f%%  %.3g boid-steps/s  %.0fs left ",
		step, steps, steps ? 100.0 * step / steps : 100.0, rate, left);
	if (done)
		fputc('\n', stderr);
}

struct options {
	const char *scenario;
	const char *output;
	const char *format;
	int threads;
	int check;
	int check_invariants;
	const char *metrics;
	uint64_t metrics_every;
	const char *checkpoint;
	uint64_t checkpoint_every;
	int resume;
	enum sim_search search;
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
	       OPT_CHECKPOINT, OPT_CHECKPOINT_EVERY, OPT_RESUME };
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
			o->output = optarg;
			break;
		case OPT_FORMAT:
			o->format = optarg;
			break;
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
			if (errno || *end || end == optarg || v < 1 || v > 4096)
				return usage_error("--threads %s: expected a whole number from 1 to 4096",
						   optarg);
			o->threads = (int)v;
			break;
		case OPT_NEIGHBOURS:
			if (strcmp(optarg, "grid") == 0)
				o->search = SIM_GRID;
			else if (strcmp(optarg, "brute") == 0)
				o->search = SIM_BRUTE;
			else
				return usage_error("--neighbours %s: expected grid or brute", optarg);
			break;
		case OPT_CHECK:
			o->check = 1;
			break;
		case OPT_INVARIANTS:
			o->check_invariants = 1;
			break;
		case OPT_METRICS:
			o->metrics = optarg;
			break;
		case OPT_METRICS_EVERY:
			errno = 0;
			v = strtol(optarg, &end, 10);
			if (errno || *end || end == optarg || v < 1)
				return usage_error("--metrics-every %s: expected a whole number from 1",
						   optarg);
			o->metrics_every = (uint64_t)v;
			break;
		case OPT_CHECKPOINT:
			o->checkpoint = optarg;
			break;
		case OPT_CHECKPOINT_EVERY:
			errno = 0;
			v = strtol(optarg, &end, 10);
			if (errno || *end || end == optarg || v < 1)
				return usage_error("--checkpoint-every %s: expected a whole number from 1",
						   optarg);
			o->checkpoint_every = (uint64_t)v;
			break;
		case OPT_RESUME:
			o->resume = 1;
			break;
		case 'q':
			util_verbosity = UTIL_QUIET;
			break;
		case 'v':
			util_verbosity = UTIL_VERBOSE;
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
			return usage_error("unknown option %s", argv[optind - 1]);
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
	o->scenario = argv[optind];
	return 0;
}

/* Whether two names given for outputs are one file: the same inode when
 * both exist (so also through a symbolic or a hard link), else the same
 * name in the same directory, which is what the writers' renames replace.
 * A character device (/dev/null) is written as a stream, never replaced,
 * and takes any number of writers. */
static int same_file(const char *a, const char *b)
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

/* Whether b is a name of a's temporary files (.NAME.tmp.XXXXXX in a's
 * directory, outfile_temp), which a run creates, renames and removes. */
static int is_temp_of(const char *b, const char *a)
{
	const char *sa = strrchr(a, '/'), *sb = strrchr(b, '/');
	char *da = sa ? strndup(a, (size_t)(sa - a) + 1) : strdup("./");
	char *db = sb ? strndup(b, (size_t)(sb - b) + 1) : strdup("./");
	int temp = 0;

	if (da && db && outfile_is_temp(sb ? sb + 1 : b, sa ? sa + 1 : a))
		temp = strcmp(da, db) == 0 || same_file(da, db);
	free(da);
	free(db);
	return temp;
}

/* No two of -o, --metrics and --checkpoint may be one file: the last to be
 * renamed into place would replace the others, and a completed run would
 * remove its checkpoint, the output with it. Nor may one be a name that
 * another's writing takes: NAME.partial, where an interrupted CSV or table
 * goes (and which a resumed run removes, for -o and --metrics), or one of
 * its temporary files. For that removal too, the checkpoint must not be a
 * device or a pipe. */
static int check_distinct(const struct options *o, enum traj_format fmt)
{
	const char *name[3] = {"-o", "--metrics", "--checkpoint"};
	const char *path[3] = {o->output, o->metrics, o->checkpoint};
	char msg[4 * 4096], partial[4096];
	struct stat st;
	int i, j;

	if (o->checkpoint && stat(o->checkpoint, &st) == 0 && !S_ISREG(st.st_mode))
		return usage_error("--checkpoint %s: expected a regular file, which a run "
				   "replaces and removes", o->checkpoint);
	for (i = 0; i < 3; i++)
		for (j = i + 1; j < 3; j++)
			if (path[i] && path[j] && strcmp(path[i], "-") != 0 &&
			    strcmp(path[j], "-") != 0 && same_file(path[i], path[j])) {
				snprintf(msg, sizeof msg, "%s %s and %s %s name the same file",
					 name[i], path[i], name[j], path[j]);
				return usage_error("%s", msg);
			}
	for (i = 0; i < 3; i++)
		for (j = 0; j < 3; j++) {
			if (i == j || !path[i] || !path[j] || strcmp(path[i], "-") == 0 ||
			    strcmp(path[j], "-") == 0)
				continue;
			snprintf(partial, sizeof partial, "%s.partial", path[i]);
			if ((i == 1 || (i == 0 && fmt != TRAJ_BIN)) && same_file(path[j], partial)) {
				snprintf(msg, sizeof msg, "%s %s and %s %s clash: %s is where an "
					 "interrupted run leaves the file of %s", name[i], path[i],
					 name[j], path[j], partial, name[i]);
				return usage_error("%s", msg);
			}
			if (is_temp_of(path[j], path[i])) {
				snprintf(msg, sizeof msg, "%s %s and %s %s clash: %s is a name of the "
					 "temporary files of %s", name[i], path[i], name[j], path[j],
					 path[j], name[i]);
				return usage_error("%s", msg);
			}
		}
	return 0;
}

/* The checkpoint of this step, after the outputs of the step are on disk;
 * cf holds what the outputs held before them (main's loop marks it). From
 * then on a failure leaves the outputs' temporary files as far as the
 * checkpoint covers, for --resume, and what a resumed run read is spent. */
static int save_checkpoint(const struct options *o, const struct sim *sim, const char *json,
			   const char *generator, struct traj_writer *w, struct outfile *mout,
			   struct checkpoint_files *cf, struct checkpoint_files *resumed,
			   struct util_err *err)
{
	cf->output = (char *)o->output;
	cf->output_tmp = w ? (char *)traj_writer_temp_path(w) : NULL;
	cf->metrics = (char *)o->metrics;
	cf->metrics_tmp = mout ? mout->tmp : NULL;
	if ((w && traj_writer_sync(w, err) != 0) || (mout && outfile_sync(mout, err) != 0) ||
	    (mout && outfile_sum(mout, cf->metrics_bytes, &cf->metrics_sum, err) != 0) ||
	    checkpoint_write(o->checkpoint, sim, json, generator, cf, err) != 0)
		return -1;
	if (w)
		traj_writer_keep(w, traj_writer_synced(w));
	if (mout)
		outfile_keep(mout, mout->synced);
	if (resumed->output_tmp && resumed->output_tmp[0] &&
	    !(cf->output_tmp && strcmp(resumed->output_tmp, cf->output_tmp) == 0))
		unlink(resumed->output_tmp);
	if (resumed->metrics_tmp && resumed->metrics_tmp[0] &&
	    !(cf->metrics_tmp && strcmp(resumed->metrics_tmp, cf->metrics_tmp) == 0))
		unlink(resumed->metrics_tmp);
	free(resumed->output_tmp);
	free(resumed->metrics_tmp);
	resumed->output_tmp = resumed->metrics_tmp = NULL;
	return 0;
}

/* A checkpoint write that was killed leaves its temporary file,
 * .NAME.tmp.XXXXXX beside the checkpoint: remove those of this name (read
 * from the directory, not globbed: the name may hold * or ?). */
static void remove_checkpoint_temps(const char *checkpoint)
{
	const char *slash = strrchr(checkpoint, '/');
	const char *base = slash ? slash + 1 : checkpoint;
	char *dir = slash ? strndup(checkpoint, (size_t)(slash - checkpoint) + 1) : strdup("./");
	char path[8192];
	struct dirent *e;
	DIR *dp;

	if (dir == NULL)
		return;
	if ((dp = opendir(dir)) != NULL) {
		while ((e = readdir(dp)) != NULL)
			if (outfile_is_temp(e->d_name, base)) {
				snprintf(path, sizeof path, "%s%s", dir, e->d_name);
				unlink(path);
			}
		closedir(dp);
	}
	free(dir);
}

/* After a resumed run completes: the stopped run's leftovers (a binary
 * trajectory leaves no .partial). */
static void remove_spent(const struct checkpoint_files *cf, const char *output,
			 enum traj_format fmt, const char *metrics)
{
	char buf[4096];

	if (cf->output_tmp && cf->output_tmp[0])
		unlink(cf->output_tmp);
	if (cf->metrics_tmp && cf->metrics_tmp[0])
		unlink(cf->metrics_tmp);
	if (output && fmt != TRAJ_BIN) {
		snprintf(buf, sizeof buf, "%s.partial", output);
		unlink(buf);
	}
	if (metrics) {
		snprintf(buf, sizeof buf, "%s.partial", metrics);
		unlink(buf);
	}
}

static int run(struct options *o)
{
	struct util_err err = {{0}};
	struct scenario sc;
	struct sim sim;
	struct traj_writer *w = NULL;
	enum traj_format fmt = TRAJ_BIN;
	float *frame[TRAJ_FIELDS_MAX] = {0};
	struct traj_agents agents = {0, NULL, NULL}, *ag = NULL;
	uint64_t cap;
	char *json = NULL, generator[64];
	int status = 1, d, rc, sim_ok = 0, tty, met_ok = 0, refused;
	struct checkpoint_files resumed = {0};
	uint64_t on_disk = UINT64_MAX; /* the step of the checkpoint on disk, if any */
	struct metrics met;
	struct outfile mout = {0};
	double t0, last = 0, t_out = 0;

	if (scenario_load_file(o->scenario, o->ov, o->n_ov, &sc, &err) != 0) {
		fprintf(stderr, "boidsim: %s\n", err.msg);
		return EXIT_USAGE;
	}
	if (start_load(&sc, &err) != 0) {
		fprintf(stderr, "boidsim: %s\n", err.msg);
		scenario_free(&sc);
		return EXIT_USAGE;
	}
	for (d = 0; d < sc.n_notes; d++)
		util_msg(UTIL_NORMAL, "%s", sc.notes[d]);
	if (o->format && traj_format_parse(o->format, &fmt) != 0) {
		status = usage_error("--format %s: expected bin, csv or csv.gz", o->format);
		goto out;
	}
	if ((o->resume || o->checkpoint_every) && !o->checkpoint) {
		status = usage_error("%s", "--resume and --checkpoint-every need --checkpoint FILE");
		goto out;
	}
	if (o->checkpoint && ((o->output && strcmp(o->output, "-") == 0) ||
			      (o->metrics && strcmp(o->metrics, "-") == 0))) {
		status = usage_error("%s", "checkpoints need outputs in files, not -");
		goto out;
	}
	if (o->metrics && o->output && strcmp(o->metrics, "-") == 0 &&
	    strcmp(o->output, "-") == 0) {
		status = usage_error("%s", "--metrics - and -o - cannot both use stdout");
		goto out;
	}
	if (o->output && !o->format) {
		if (strcmp(o->output, "-") == 0) {
			status = usage_error("%s", "-o - needs --format bin, csv or csv.gz");
			goto out;
		}
		if (traj_format_guess(o->output, &fmt) != 0) {
			status = usage_error("%s: cannot tell the format from the name; use .bin, "
					     ".csv or .csv.gz, or --format", o->output);
			goto out;
		}
	}
	if ((status = check_distinct(o, fmt)) != 0)
		goto out;
	status = 1;
	json = scenario_to_json(&sc);
	if (json == NULL) {
		fprintf(stderr, "boidsim: out of memory\n");
		goto out;
	}
	if (o->check) {
		printf("%s\n", json);
		status = fflush(stdout) == 0 ? 0 : 1;
		goto out;
	}
	rc = sim_init(&sim, &sc, o->search, &err);
	if (rc != 0) {
		fprintf(stderr, "boidsim: %s\n", err.msg);
		if (rc == -2)
			status = EXIT_USAGE; /* the scenario leaves no room to start */
		goto out;
	}
	sim_ok = 1;
	/* A run that keeps nothing is most often a forgotten -o: say so
	 * before the time is spent (after any error at the start, which
	 * would be the one line). */
	if (o->output == NULL && o->metrics == NULL)
		util_msg(UTIL_NORMAL, "no -o given: the run is simulated and nothing written "
			 "(give -o FILE, or --check to only validate)");
	snprintf(generator, sizeof generator, "boidsim %s", PACKAGE_VERSION);
	if (o->resume &&
	    (checkpoint_read(o->checkpoint, &sim, json, generator, &resumed, &err) != 0 ||
	     checkpoint_files_check(o->checkpoint, &resumed, o->output, o->metrics, &err) != 0)) {
		fprintf(stderr, "boidsim: %s\n", err.msg);
		status = EXIT_USAGE;
		goto out;
	}
	if (o->output) {
		/* With predators or a population schedule, frames hold agents:
		 * ids and groups, and a count that may change. */
		cap = sim_frame_capacity(&sc);
		for (d = 0; d < flock_fields(&sim.flock); d++)
			if (!(frame[d] = util_alloc((size_t)cap, sizeof(float), &err)))
				goto alloc_failed;
		if (sim_has_agents(&sc)) {
			ag = &agents;
			if (!(agents.id = util_alloc((size_t)cap, sizeof(uint32_t), &err)) ||
			    !(agents.group = util_alloc((size_t)cap, sizeof(uint32_t), &err)))
				goto alloc_failed;
		}
		w = traj_writer_open(o->output, fmt, sc.dims, sc.has_hue,
				     ag ? TRAJ_FLAG_AGENTS : 0, cap, sc.seed, generator, json,
				     sc.compression, sc.precision, &err);
		if (w == NULL) {
			fprintf(stderr, "boidsim: %s\n", err.msg);
			goto out;
		}
		if (o->resume) {
			char src[4096];

			if (resume_frames(&sc, json, &resumed, o->output, fmt, w, sim.step, frame,
					  ag, src, sizeof src, &refused, &err) != 0) {
				fprintf(stderr, "boidsim: %s\n", err.msg);
				status = refused ? EXIT_USAGE : 1;
				goto out;
			}
			util_msg(UTIL_VERBOSE, "resumed %llu frames from %s",
				 (unsigned long long)resume_written_before(sim.step, sc.every), src);
		}
	}
	if (o->metrics) {
		if (metrics_init(&met, (size_t)sc.capacity, &err) != 0) {
			fprintf(stderr, "boidsim: %s\n", err.msg);
			goto out;
		}
		met_ok = 1;
		if (outfile_open(&mout, o->metrics, &err) != 0) {
			fprintf(stderr, "boidsim: %s\n", err.msg);
			goto out;
		}
		if (metrics_write_header(mout.fp, sc.dims, sc.has_hue) != 0)
			goto metrics_failed;
		if (o->resume && resume_rows(&resumed, o->metrics, mout.fp, sim.step,
					     o->metrics_every ? o->metrics_every : sc.every, &refused,
					     &err) != 0) {
			fprintf(stderr, "boidsim: %s\n", err.msg);
			status = refused ? EXIT_USAGE : 1;
			goto out;
		}
	}
	tty = isatty(STDERR_FILENO) && util_verbosity >= UTIL_NORMAL;
	t0 = util_seconds();
	if (o->resume)
		on_disk = sim.step;
	for (;;) {
		/* One look at the signal per step, so that the frame, the row
		 * and the checkpoint of the step where it stops agree. */
		int stop = stop_signal != 0;
		int ck = o->checkpoint && sim.step != sc.steps &&
			 ((o->checkpoint_every && sim.step % o->checkpoint_every == 0) || stop);
		struct checkpoint_files cf = {0};

		if (o->check_invariants && sim_check(&sim, &err) != 0) {
			char msg[sizeof err.msg];

			memcpy(msg, err.msg, sizeof msg);
			util_err_set(&err, "invariant violated: %s", msg);
			goto failed;
		}
		/* What the outputs hold before this step's, for a checkpoint. */
		if (ck && w)
			traj_writer_mark(w, &cf.output_bytes, &cf.output_sum);
		if (ck && met_ok)
			cf.metrics_bytes = (uint64_t)ftell(mout.fp);
		/* Step 0, every K-th, the last, and wherever a signal stops us. */
		if (w && (sim.step % sc.every == 0 || sim.step == sc.steps || stop)) {
			double tw = util_seconds();

			if (ag)
				agents.n = sim_frame(&sim, frame, agents.id, agents.group);
			else
				flock_to_id_order(&sim.flock, frame);
			if ((ag ? traj_write_frame_agents(w, sim.step, frame, ag, &err) :
			     traj_write_frame(w, sim.step, frame, &err)) != 0)
				goto failed;
			t_out += util_seconds() - tw;
		}
		if (met_ok && (sim.step % (o->metrics_every ? o->metrics_every : sc.every) == 0 ||
			       sim.step == sc.steps || stop)) {
			struct metrics_row row;

			sim_measure(&sim, &met, &row);
			if (metrics_write_row(mout.fp, sc.dims, sim.step, sc.dt, &row) != 0)
				goto metrics_failed;
		}
		if (ck) {
			if (save_checkpoint(o, &sim, json, generator, w, met_ok ? &mout : NULL, &cf,
					    &resumed, &err) != 0)
				goto failed;
			on_disk = sim.step;
		}
		if (sim.step == sc.steps || stop)
			break;
		sim_step(&sim);
		if (tty && util_seconds() - last > 0.25) {
			last = util_seconds();
			progress(sim.step, sc.steps, sim.flock.n, t0, 0);
		}
	}
	if (tty)
		progress(sim.step, sc.steps, sim.flock.n, t0, 1);
	if (w) {
		enum traj_status st = stop_signal ? TRAJ_INTERRUPTED : TRAJ_COMPLETE;
		double tw = util_seconds();

		d = traj_writer_close(w, st, &err);
		w = NULL;
		if (d != 0)
			goto failed;
		t_out += util_seconds() - tw;
		if (strcmp(o->output, "-") != 0)
			util_msg(UTIL_NORMAL, "%s %s (%" PRIu64 " steps, %" PRIu64 " boids)",
				 stop_signal ? "interrupted; wrote what was done to" : "wrote",
				 st != TRAJ_COMPLETE && fmt != TRAJ_BIN ? "the .partial file" :
				 o->output, sim.step, (uint64_t)sim.flock.n);
	}
	report_stats(&sim.stats, util_seconds() - t0, t_out);
	if (met_ok && (stop_signal ? outfile_commit_partial(&mout, &err) :
			      outfile_commit(&mout, &err)) != 0)
		goto failed;
	if (!stop_signal && o->checkpoint) {
		/* Done: the checkpoint and what a resumed run read are spent. */
		if (o->resume)
			remove_spent(&resumed, o->output, fmt, o->metrics);
		unlink(o->checkpoint);
		remove_checkpoint_temps(o->checkpoint);
	}
	status = stop_signal ? 128 + stop_signal : 0;
	goto out;
alloc_failed:
	fprintf(stderr, "boidsim: %s\n", err.msg);
	goto out;
metrics_failed:
	util_err_set(&err, "%s: write failed: %s", o->metrics, strerror(errno));
failed:
	/* The outputs' temporary files were kept as far as the checkpoint
	 * covers (save_checkpoint): say how to go on from there. */
	if (on_disk != UINT64_MAX)
		fprintf(stderr, "boidsim: %s; the checkpoint %s keeps the run to step %" PRIu64
			": run the same command with --resume to continue\n", err.msg,
			o->checkpoint, on_disk);
	else
		fprintf(stderr, "boidsim: %s\n", err.msg);
out:
	checkpoint_files_free(&resumed);
	outfile_abort(&mout);
	if (met_ok)
		metrics_free(&met);
	traj_writer_abort(w);
	for (d = 0; d < TRAJ_FIELDS_MAX; d++)
		util_free(frame[d]);
	util_free(agents.id);
	util_free(agents.group);
	if (sim_ok)
		sim_free(&sim);
	free(json);
	scenario_free(&sc);
	return status;
}

int main(int argc, char **argv)
{
	struct options o;
	struct sigaction sa;
	int rc, i;

	memset(&o, 0, sizeof o);
	/* Subcommands, as in git, after any -q/-v; "run" is handled with the
	 * options below. */
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-q") == 0 || strcmp(argv[i], "--quiet") == 0)
			util_verbosity = UTIL_QUIET;
		else if (strcmp(argv[i], "-v") == 0 || strcmp(argv[i], "--verbose") == 0)
			util_verbosity = UTIL_VERBOSE;
		else
			break;
	}
	if (i < argc && strcmp(argv[i], "info") == 0)
		return cmd_info(argc - i, argv + i);
	if (i < argc && strcmp(argv[i], "verify") == 0)
		return cmd_verify(argc - i, argv + i);
	if (i < argc && strcmp(argv[i], "convert") == 0)
		return cmd_convert(argc - i, argv + i);
	rc = parse_args(argc, argv, &o);
	if (rc != 0) {
		rc = rc < 0 ? 0 : rc;
		goto out;
	}
#ifdef _OPENMP
	if (o.threads > 0)
		omp_set_num_threads(o.threads);
#endif
	/* First SIGINT/SIGTERM: finish the step, write it, and close the file
	 * marked as interrupted. SA_RESTART keeps a blocking write to a pipe
	 * from failing part way. */
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	rc = run(&o);
out:
	for (i = 0; i < o.n_ov; i++) {
		if (o.owned[i]) {
			free((char *)o.ov[i].label);
			free(o.owned[i]);
		}
	}
	return rc;
}
