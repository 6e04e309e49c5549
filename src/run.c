/* run.c: one run with its outputs: the options' checks, the step loop, the
 * trajectory, the metrics table and checkpoints, and the resume of a
 * stopped run (resume.c checks what it reads). */
#include "config.h"
#include "run.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "checkpoint.h"
#include "flock.h"
#include "metrics.h"
#include "outfile.h"
#include "resume.h"
#include "start.h"
#include "traj.h"

_Static_assert(FLOCK_FIELDS_MAX == TRAJ_FIELDS_MAX, "a frame of the flock is a trajectory frame");

/* How often the progress callback is called, in seconds. */
#define RUN_PROGRESS_PERIOD 0.25

/* Whether two names given for outputs are one file: the same inode when
 * both exist (so also through a symbolic or a hard link), else the same
 * name in the same directory, which is what the writers' renames replace.
 * A character device (/dev/null) is written as a stream, never replaced,
 * and takes any number of writers. */
/* An option that cannot work: one line in err, RUN_BAD_OPTIONS. */
static int bad_option(struct util_err *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int bad_option(struct util_err *err, const char *fmt, ...)
{
	char msg[UTIL_ERR_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	util_err_set(err, "%s", msg);
	return RUN_BAD_OPTIONS;
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
		temp = strcmp(da, db) == 0 || outfile_same_file(da, db);
	free(da);
	free(db);
	return temp;
}

/* The descriptor an output name is written through: 1 for -, N for a
 * name of descriptor N (outfile_fd_of), -1 for a file or none. */
static int stream_fd(const char *path)
{
	if (path == NULL)
		return -1;
	return strcmp(path, "-") == 0 ? 1 : outfile_fd_of(path);
}

/* No two of -o, --metrics and --checkpoint may be one file: the last to be
 * renamed into place would replace the others, and a completed run would
 * remove its checkpoint, the output with it. Nor may one be a name that
 * another's writing takes: NAME.partial, where an interrupted trajectory or
 * table goes (and which a resumed run removes, for -o and --metrics), or one of
 * its temporary files. For that removal too, the checkpoint must not be a
 * device or a pipe. */
static int check_distinct(const struct run_opts *o, const struct scenario *sc,
			  struct util_err *err)
{
	const char *name[3] = {"-o", "--metrics", "--checkpoint"};
	const char *path[3] = {o->output, o->metrics, o->checkpoint};
	/* What the run reads: an output there would replace it at the end. */
	const char *in_name[2] = {"the scenario", "start.file"};
	const char *in[2] = {o->scenario, sc->start_file};
	char msg[4 * 4096], partial[4096];
	struct stat st, in_st;
	int i, j;

	/* A name too long for its temporary file fails at once (outfile_temp
	 * would say so too, but as a failure to create it). */
	for (i = 0; i < 3; i++)
		if (path[i] && strcmp(path[i], "-") != 0 && outfile_name_fits(path[i], err) != 0) {
			snprintf(msg, sizeof msg, "%s %s", name[i], err->msg);
			return bad_option(err, "%s", msg);
		}
	if (o->checkpoint && (stream_fd(o->checkpoint) >= 0 ||
			      (stat(o->checkpoint, &st) == 0 && !S_ISREG(st.st_mode))))
		return bad_option(err, "--checkpoint %s: expected a regular file, which a run "
				  "replaces and removes", o->checkpoint);
	/* A scenario read from standard input that is a file (boidsim - <
	 * FILE) has no name to compare: the file itself is compared. */
	if (o->scenario && strcmp(o->scenario, "-") == 0 && fstat(STDIN_FILENO, &in_st) == 0 &&
	    S_ISREG(in_st.st_mode))
		for (i = 0; i < 3; i++) {
			if (!path[i] || strcmp(path[i], "-") == 0)
				continue;
			snprintf(partial, sizeof partial, "%s.partial", path[i]);
			for (j = 0; j < 2; j++) {
				const char *pj = j == 0 ? path[i] : partial;

				if ((j == 1 && i == 2) ||
				    stat(pj, &st) != 0 || st.st_dev != in_st.st_dev ||
				    st.st_ino != in_st.st_ino)
					continue;
				if (j == 0)
					return bad_option(err, "%s %s is the scenario (standard input), "
							  "which the run reads", name[i], path[i]);
				return bad_option(err, "%s %s and the scenario (standard input) clash: "
						  "%s is where an interrupted run leaves the file of %s",
						  name[i], path[i], partial, name[i]);
			}
		}
	for (i = 0; i < 3; i++)
		for (j = 0; j < 2; j++) {
			if (!path[i] || !in[j] || strcmp(path[i], "-") == 0 || strcmp(in[j], "-") == 0)
				continue;
			if (outfile_same_file(path[i], in[j])) {
				snprintf(msg, sizeof msg, "%s %s is %s, which the run reads",
					 name[i], path[i], in_name[j]);
				return bad_option(err, "%s", msg);
			}
			/* where an interrupted trajectory or table of it goes */
			snprintf(partial, sizeof partial, "%s.partial", path[i]);
			if (i < 2 && outfile_same_file(partial, in[j])) {
				snprintf(msg, sizeof msg, "%s %s and %s %s clash: %s is where an "
					 "interrupted run leaves the file of %s", name[i], path[i],
					 in_name[j], in[j], partial, name[i]);
				return bad_option(err, "%s", msg);
			}
		}
	for (i = 0; i < 3; i++)
		for (j = i + 1; j < 3; j++)
			if (path[i] && path[j] && strcmp(path[i], "-") != 0 &&
			    strcmp(path[j], "-") != 0 && outfile_same_file(path[i], path[j])) {
				snprintf(msg, sizeof msg, "%s %s and %s %s name the same file",
					 name[i], path[i], name[j], path[j]);
				return bad_option(err, "%s", msg);
			}
	for (i = 0; i < 3; i++)
		for (j = 0; j < 3; j++) {
			if (i == j || !path[i] || !path[j] || strcmp(path[i], "-") == 0 ||
			    strcmp(path[j], "-") == 0)
				continue;
			snprintf(partial, sizeof partial, "%s.partial", path[i]);
			if (i < 2 && outfile_same_file(path[j], partial)) {
				snprintf(msg, sizeof msg, "%s %s and %s %s clash: %s is where an "
					 "interrupted run leaves the file of %s", name[i], path[i],
					 name[j], path[j], partial, name[i]);
				return bad_option(err, "%s", msg);
			}
			if (is_temp_of(path[j], path[i])) {
				snprintf(msg, sizeof msg, "%s %s and %s %s clash: %s is a name of the "
					 "temporary files of %s", name[i], path[i], name[j], path[j],
					 path[j], name[i]);
				return bad_option(err, "%s", msg);
			}
		}
	/* Nor the checkpoint's lock file, which the run removes at its end
	 * (outfile_lock). */
	if (o->checkpoint) {
		char *lock = outfile_lock_name(o->checkpoint);

		for (i = 0; i < 2 && lock; i++)
			if (path[i] && strcmp(path[i], "-") != 0 && outfile_same_file(path[i], lock)) {
				snprintf(msg, sizeof msg, "%s %s is the lock file of --checkpoint %s, "
					 "which a run removes at its end; name another file",
					 name[i], path[i], o->checkpoint);
				free(lock);
				return bad_option(err, "%s", msg);
			}
		free(lock);
	}
	return 0;
}

/* A run replaces and then removes its checkpoint: a file there that is
 * not one (a mistyped -o, a result) is not the run's to remove. */
static int check_checkpoint_file(const struct run_opts *o, struct util_err *err)
{
	struct stat st;
	struct checkpoint_files cf;
	struct util_err perr;

	if (o->checkpoint && !o->resume && stat(o->checkpoint, &st) == 0 && st.st_size > 0) {
		unsigned char head[sizeof CHECKPOINT_MAGIC - 1];
		FILE *fp = fopen(o->checkpoint, "rb");
		int is_ck = fp && fread(head, 1, sizeof head, fp) == sizeof head &&
			    memcmp(head, CHECKPOINT_MAGIC, sizeof head) == 0;

		if (fp)
			fclose(fp);
		if (!is_ck)
			return bad_option(err, "--checkpoint %s: the file is there and is not a "
					  "checkpoint, which a run would replace and then remove; "
					  "name another file", o->checkpoint);
		/* Nor is the checkpoint of a stopped run with other outputs: its
		 * --resume needs it. (One that does not read whole cannot be
		 * resumed, and is replaced.) */
		if (checkpoint_peek(o->checkpoint, &cf, &perr) == 0) {
			int same = checkpoint_files_check(o->checkpoint, &cf, o->output, o->metrics,
							  &perr) == 0;
			char then[2][512];

			snprintf(then[0], sizeof then[0], "%s", cf.output && cf.output[0] ?
				 cf.output : "none");
			snprintf(then[1], sizeof then[1], "%s", cf.metrics && cf.metrics[0] ?
				 cf.metrics : "none");
			checkpoint_files_free(&cf);
			if (!same)
				return bad_option(err, "--checkpoint %s: the checkpoint of a stopped "
						  "run with other outputs (-o %s, --metrics %s), which "
						  "its --resume needs; remove it, or name another file",
						  o->checkpoint, then[0], then[1]);
			/* Nor, without --resume, that of a stopped run of these
			 * outputs: starting again would replace the checkpoint and
			 * what the stopped run computed. */
			return bad_option(err, "--checkpoint %s: the checkpoint of a stopped run "
					  "of these outputs: add --resume to go on from it, or "
					  "remove it to start again", o->checkpoint);
		}
	}
	return 0;
}

/* The scenario's notes (keys its model does not use), and with o, a run
 * that keeps nothing, which is most often a forgotten -o: said once the
 * setup has gone well, before the time is spent, so that a run that fails
 * to start says one line, its error. */
static void say_notes(const struct ctx *ctx, const struct scenario *sc,
		      const struct run_opts *o)
{
	int d;

	for (d = 0; d < sc->n_notes; d++)
		ctx_log(ctx, CTX_NORMAL, "%s", sc->notes[d]);
	if (o && o->output == NULL && o->metrics == NULL)
		ctx_log(ctx, CTX_NORMAL, "no -o given: the run is simulated and nothing written "
			"(give -o FILE, or --check to only validate)");
}

/* Whether a file can take the name PATH (PATH.partial for a stopped run)
 * by a rename: -1 with err set when a directory holds it. Standard
 * output and descriptors are not renamed into. */
static int target_taken(const char *path, int stopped, struct util_err *err)
{
	char name[4096];
	struct stat st;

	if (strcmp(path, "-") == 0 || outfile_fd_of(path) >= 0)
		return 0;
	snprintf(name, sizeof name, "%s%s", path, stopped ? ".partial" : "");
	if (lstat(name, &st) == 0 && S_ISDIR(st.st_mode)) {
		util_err_set(err, "%s: cannot rename into place: a directory has the name", name);
		return -1;
	}
	return 0;
}

/* The status of the setup of every part of a split run (ctx.agree): the
 * worst; res->uniform says whether all had the same. */
static int agree_digest(const struct ctx *ctx, int status, uint64_t digest, int *same,
			struct run_result *res)
{
	int uniform = 1, all, alike = 1;

	if (ctx == NULL || ctx->agree == NULL) {
		if (same)
			*same = 1;
		return status;
	}
	all = ctx->agree(ctx->agree_user, status, digest, &uniform, &alike);
	res->uniform = uniform;
	if (same)
		*same = alike;
	return all;
}

static int agree(const struct ctx *ctx, int status, struct run_result *res)
{
	return agree_digest(ctx, status, 0, NULL, res);
}

static int digest_add(EVP_MD_CTX *md, const char *s)
{
	/* (with its NUL: "a" then "bc" is not "ab" then "c") */
	return EVP_DigestUpdate(md, s ? s : "", (s ? strlen(s) : 0) + 1);
}

/* What every part of a split run must have read alike, so that parts given
 * different scenario files, start files, options or programs (nodes whose
 * copies differ) do not make one run of them: the effective scenario, the
 * start that start.file gave, the options that shape the run and its
 * outputs, and the generator (the program's version). start.file counts
 * by its contents, not its path: scenario_to_json writes the path as
 * realpath gave it, which differs between nodes that mount one shared
 * folder at different places. The first 8 bytes of their SHA-256; 0 on
 * failure (the parts then compare nothing). */
static uint64_t run_digest(const struct run_opts *o, const struct scenario *sc)
{
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	unsigned char h[EVP_MAX_MD_SIZE];
	unsigned int hl = 0;
	char num[128];
	struct scenario pathless = *sc;
	char nopath[1] = "", *json;
	uint64_t v = 0;
	int i, ok;

	/* (start.step stays in, with the file's place left empty) */
	if (pathless.start_file)
		pathless.start_file = nopath;
	json = scenario_to_json(&pathless);
	if (md == NULL || json == NULL) {
		EVP_MD_CTX_free(md);
		free(json);
		return 0;
	}
	snprintf(num, sizeof num, "%" PRIu64 " %" PRIu64 " %d %d %d", o->metrics_every,
		 o->checkpoint_every, o->resume, o->check_invariants, (int)o->search);
	ok = EVP_DigestInit_ex(md, EVP_sha256(), NULL) && digest_add(md, json) &&
	     digest_add(md, o->output) && digest_add(md, o->format) &&
	     digest_add(md, o->metrics) && digest_add(md, o->checkpoint) &&
	     digest_add(md, o->generator) && digest_add(md, num) &&
	     (sc->start_data == NULL ||
	      EVP_DigestUpdate(md, sc->start_data, (size_t)sc->count * (size_t)sc->start_fields *
						       sizeof(float))) &&
	     EVP_DigestFinal_ex(md, h, &hl) && hl >= 8;
	EVP_MD_CTX_free(md);
	free(json);
	for (i = 0; ok && i < 8; i++)
		v = v << 8 | h[i];
	return v;
}

/* What part 0 alone did in a step of a split run (a checkpoint, a check),
 * rc its 0 or -1, the same for every part: a part whose own went well
 * fails with the others, and leaves the saying to the one that failed. */
static int agree_step(const struct ctx *ctx, int rc, struct run_result *res,
		      struct util_err *err)
{
	if (ctx == NULL || ctx->agree == NULL)
		return rc;
	if (agree(ctx, rc ? RUN_FAILED : RUN_OK, res) != RUN_OK && rc == 0) {
		res->others = 1;
		util_err_set(err, "another process of the run failed");
		return -1;
	}
	return rc;
}

/* The invariants (sim_check) of the whole flock, on part 0 of a split run. */
static int check_state(const struct ctx *ctx, struct sim *sim, struct run_result *res,
		       struct util_err *err)
{
	const struct flock *f;
	int rc = sim_whole(sim, &f, err);

	if (rc == 0 && f && sim_check_flock(sim, f, err) != 0) {
		char msg[sizeof err->msg];

		memcpy(msg, err->msg, sizeof msg);
		util_err_set(err, "invariant violated: %s", msg);
		rc = -1;
	}
	return agree_step(ctx, rc, res, err);
}

/* The scenario leaves no room to start (flock.h's -2): its obstacles',
 * named as a scenario error is. */
static void no_room(const struct run_opts *o, struct util_err *err)
{
	char why[UTIL_ERR_MAX];

	snprintf(why, sizeof why, "%s", err->msg);
	util_err_set(err, "%s: obstacles: %s",
		     strcmp(o->scenario, "-") == 0 ? "<stdin>" : o->scenario, why);
}

/* The checkpoint of this step, after the outputs of the step are on disk;
 * cf holds what the outputs held before them (the loop marks it). From
 * then on a failure leaves the outputs' temporary files as far as the
 * checkpoint covers, for --resume, and what a resumed run read is spent.
 * Of a split run, part 0 writes it, with the flock gathered there. */
static int write_checkpoint(const struct run_opts *o, const struct sim *sim,
			    const struct flock *f, const char *json, const char *generator,
			    struct traj_writer *w, struct outfile *mout,
			    struct checkpoint_files *cf, struct checkpoint_files *resumed,
			    struct util_err *err)
{
	cf->output = (char *)o->output;
	cf->output_tmp = w ? (char *)traj_writer_temp_path(w) : NULL;
	cf->metrics = (char *)o->metrics;
	cf->metrics_tmp = mout ? mout->tmp : NULL;
	if ((w && traj_writer_sync(w, err) != 0) || (mout && outfile_sync(mout, err) != 0) ||
	    (mout && outfile_sum(mout, cf->metrics_bytes, &cf->metrics_sum, err) != 0) ||
	    checkpoint_write(o->checkpoint, sim, f, json, generator, cf, err) != 0)
		return -1;
	if (w)
		traj_writer_keep(w, traj_writer_synced(w));
	if (mout)
		outfile_keep(mout, mout->synced);
	/* (never one in use: another run's, outfile_temp_busy) */
	if (resumed->output_tmp && resumed->output_tmp[0] &&
	    !(cf->output_tmp && strcmp(resumed->output_tmp, cf->output_tmp) == 0) &&
	    !outfile_temp_busy(resumed->output_tmp))
		unlink(resumed->output_tmp);
	if (resumed->metrics_tmp && resumed->metrics_tmp[0] &&
	    !(cf->metrics_tmp && strcmp(resumed->metrics_tmp, cf->metrics_tmp) == 0) &&
	    !outfile_temp_busy(resumed->metrics_tmp))
		unlink(resumed->metrics_tmp);
	free(resumed->output_tmp);
	free(resumed->metrics_tmp);
	resumed->output_tmp = resumed->metrics_tmp = NULL;
	return 0;
}

static int save_checkpoint(const struct run_opts *o, const struct ctx *ctx, struct sim *sim,
			   const char *json, const char *generator, struct traj_writer *w,
			   struct outfile *mout, struct checkpoint_files *cf,
			   struct checkpoint_files *resumed, struct run_result *res,
			   struct util_err *err)
{
	const struct flock *f;
	int rc = sim_whole(sim, &f, err);

	if (rc == 0 && f)
		rc = write_checkpoint(o, sim, f, json, generator, w, mout, cf, resumed, err);
	return agree_step(ctx, rc, res, err);
}

/* A checkpoint write that was killed leaves its temporary file,
 * .NAME.tmp.XXXXXX beside the checkpoint: remove those of this name (read
 * from the directory, not globbed: the name may hold * or ?). */
static void remove_checkpoint_temps(const char *checkpoint, const struct timespec *started)
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
				struct stat st;

				/* only those last written before this run began: a
				 * newer one is another live run's (the same command
				 * started twice at once), not a killed run's */
				snprintf(path, sizeof path, "%s%s", dir, e->d_name);
				if (lstat(path, &st) == 0 && S_ISREG(st.st_mode) &&
				    (st.st_mtim.tv_sec < started->tv_sec ||
				     (st.st_mtim.tv_sec == started->tv_sec &&
				      st.st_mtim.tv_nsec < started->tv_nsec)))
					unlink(path);
			}
		closedir(dp);
	}
	free(dir);
}

/* After a resumed run completes: the stopped run's leftovers, its
 * temporary files and the .partial files it read (only those: a .partial
 * it did not read, beside a temporary file it did, is not the stopped
 * run's to remove). */
static void remove_spent(const struct checkpoint_files *cf, const char *const partial[2])
{
	int i;

	if (cf->output_tmp && cf->output_tmp[0] && !outfile_temp_busy(cf->output_tmp))
		unlink(cf->output_tmp);
	if (cf->metrics_tmp && cf->metrics_tmp[0] && !outfile_temp_busy(cf->metrics_tmp))
		unlink(cf->metrics_tmp);
	for (i = 0; i < 2; i++)
		if (partial[i])
			unlink(partial[i]);
}

/* Whether src, what a resumed run read, is name's .partial file: its name
 * in buf, else NULL. */
static const char *read_partial(const char *src, const char *name, char *buf, size_t cap)
{
	snprintf(buf, cap, "%s.partial", name);
	return src && strcmp(src, buf) == 0 ? buf : NULL;
}

/* The options' own checks, once the scenario is known; the format of -o
 * in *fmt. */
static int check_options(const struct run_opts *o, const struct scenario *sc,
			 enum traj_format *fmt, struct util_err *err)
{
	if (o->format && traj_format_parse(o->format, fmt) != 0)
		return bad_option(err, "--format %s: expected " TRAJ_FORMAT_NAMES, o->format);
	if ((o->resume || o->checkpoint_every) && !o->checkpoint)
		return bad_option(err, "%s", "--resume and --checkpoint-every need --checkpoint FILE");
	/* (an every with nothing to write is a forgotten --metrics) */
	if (o->metrics_every && !o->metrics)
		return bad_option(err, "%s", "--metrics-every needs --metrics FILE");
	/* - and a descriptor's name (/dev/stdout) are written alike, as
	 * streams (outfile.h) */
	if (o->checkpoint && (stream_fd(o->output) >= 0 || stream_fd(o->metrics) >= 0))
		return bad_option(err, "%s", "checkpoints need outputs in files, not - or a "
				  "descriptor such as /dev/stdout");
	if (stream_fd(o->metrics) >= 0 && stream_fd(o->metrics) == stream_fd(o->output))
		return bad_option(err, "--metrics %s and -o %s cannot both use one descriptor "
				  "(standard output)", o->metrics, o->output);
	if (o->output && !o->format) {
		if (strcmp(o->output, "-") == 0)
			return bad_option(err, "%s", "-o - needs --format " TRAJ_FORMAT_NAMES);
		if (traj_format_guess(o->output, fmt) != 0)
			return bad_option(err, "%s: cannot tell the format from the name; use .bin, "
					  ".csv or .csv.gz, or --format", o->output);
	}
	return check_distinct(o, sc, err);
}


int run_scenario(const struct run_opts *o, const struct ctx *ctx, struct run_result *res,
		 struct util_err *err)
{
	struct scenario sc;
	struct sim sim;
	struct traj_writer *w = NULL;
	enum traj_format fmt = TRAJ_BIN;
	float *frame[TRAJ_FIELDS_MAX] = {0};
	struct traj_agents agents = {0, NULL, NULL}, *ag = NULL;
	const char *generator = o->generator ? o->generator : "boidsim";
	uint64_t cap, every_m;
	char *json = NULL;
	int status = RUN_FAILED, d, rc, sim_ok = 0, met_ok = 0, refused, stopped = 0, agreed = 0;
	/* Of a run split over processes, part 0 alone writes; every part
	 * takes part in its frames and rows (dist.h). */
	const int writer = ctx == NULL || ctx->part == 0;
	size_t agents_n = 0;
	struct checkpoint_files resumed = {0};
	/* -o's and --metrics' .partial files, when a resumed run read them */
	char partial_buf[2][4096];
	const char *partial[2] = {NULL, NULL};
	uint64_t on_disk = UINT64_MAX; /* the step of the checkpoint on disk, if any */
	struct metrics met;
	struct outfile mout = {0};
	struct util_err aerr = {0};
	double t0, last = 0, t_out = 0;
	struct timespec started;
	char *lock_name = NULL, *lock_was = NULL;
	int lock_fd = -1;

	memset(res, 0, sizeof *res);
	/* (the file system's clock, which stamps the files a run writes) */
	clock_gettime(CLOCK_REALTIME, &started);
	/* Every part of a split run reads the scenario and the start file;
	 * only part 0 has standard input, and a pipe is read once. */
	if (ctx && ctx->parts > 1 && strcmp(o->scenario, "-") == 0) {
		util_err_set(err, "-: a run split over processes reads the scenario in every "
			     "process, and only the first has standard input; give its file");
		agree(ctx, RUN_BAD_INPUT, res);
		return RUN_BAD_INPUT;
	}
	/* Nor standard output (- or a descriptor's name): under mpirun the
	 * first process's goes through mpirun's forwarding, which drops a
	 * write error (a full disk: status 0 and a file cut short) and dies
	 * of a closed pipe. */
	if (ctx && ctx->parts > 1 && (stream_fd(o->output) >= 0 || stream_fd(o->metrics) >= 0)) {
		util_err_set(err, "%s %s: a run split over processes writes its outputs to files "
			     "(mpirun's forwarding of standard output loses write errors); give a "
			     "file", stream_fd(o->output) >= 0 ? "-o" : "--metrics",
			     stream_fd(o->output) >= 0 ? o->output : o->metrics);
		agree(ctx, RUN_BAD_INPUT, res);
		return RUN_BAD_INPUT;
	}
	if (scenario_load_file(o->scenario, o->ov, o->n_ov, &sc, err) != 0) {
		agree(ctx, RUN_BAD_INPUT, res);
		return RUN_BAD_INPUT;
	}
	if (ctx && ctx->parts > 1 && sc.start_file) {
		struct stat st;

		if (stat(sc.start_file, &st) == 0 && !S_ISREG(st.st_mode)) {
			util_err_set(err, "%s: start.file is not a regular file, and a run split "
				     "over processes reads it in every process; give a file",
				     sc.start_file);
			agree(ctx, RUN_BAD_INPUT, res);
			scenario_free(&sc);
			return RUN_BAD_INPUT;
		}
	}
	if (start_load(&sc, err) != 0) {
		agree(ctx, RUN_BAD_INPUT, res);
		scenario_free(&sc);
		return RUN_BAD_INPUT;
	}
	if ((status = check_options(o, &sc, &fmt, err)) != 0)
		goto out;
	/* Two runs sharing a checkpoint would replace each other's, and the
	 * first to end would remove the other's: the second is refused
	 * before it looks at the file (which may be the first's, of a run
	 * still going, not of a stopped one). Of a split run, part 0 alone
	 * writes checkpoints, and so takes the lock and looks. */
	if (writer && o->checkpoint && !o->check &&
	    (lock_fd = outfile_lock(o->checkpoint, &lock_name, &lock_was, err)) < 0) {
		char why[UTIL_ERR_MAX];

		if (lock_fd == OUTFILE_NO_LOCK) {
			ctx_log(ctx, CTX_VERBOSE, "--checkpoint %s: its file system has no locks: "
				"no other run is kept from sharing it", o->checkpoint);
		} else {
			snprintf(why, sizeof why, "%s", err->msg);
			util_err_set(err, "--checkpoint %s", why);
			status = lock_fd == -2 ? RUN_BAD_INPUT : RUN_FAILED;
			goto out;
		}
	}
	/* --check takes no lock, but says what the run would: that another
	 * holds it (its checkpoint is not a stopped run's). */
	if (writer && o->checkpoint && o->check && outfile_lock_probe(o->checkpoint, err) != 0) {
		char why[UTIL_ERR_MAX];

		snprintf(why, sizeof why, "%s", err->msg);
		util_err_set(err, "--checkpoint %s", why);
		status = RUN_BAD_INPUT;
		goto out;
	}
	if (writer && (status = check_checkpoint_file(o, err)) != 0)
		goto out;
	/* A run that goes on afresh continues no killed run: the journal of
	 * one is not its own --resume's to sweep (its files stay). */
	if (!o->resume && lock_was) {
		if (outfile_lock_reset(lock_fd) != 0) {
			util_err_set(err, "%s: cannot write: %s", lock_name, strerror(errno));
			status = RUN_FAILED;
			goto out;
		}
		free(lock_was);
		lock_was = NULL;
	}
	status = RUN_FAILED;
	every_m = o->metrics_every ? o->metrics_every : sc.every;
	json = scenario_to_json(&sc);
	if (json == NULL) {
		util_err_set(err, "out of memory");
		goto out;
	}
	if (o->check) {
		struct ctx def;

		/* every boid drawn as the run would, so that --check finds what
		 * the start would (flock.h) */
		if (ctx == NULL)
			ctx_init(&def);
		if (flock_check_room(&sc, (ctx ? ctx : &def)->parallel_min, err) != 0) {
			no_room(o, err);
			status = RUN_BAD_INPUT;
			goto out;
		}
		say_notes(ctx, &sc, NULL);
		res->json = json;
		json = NULL;
		status = RUN_OK;
		goto out;
	}
	/* Every part read the same (run_digest), or none goes on: before the
	 * parts' first exchange, which different scenarios could leave
	 * waiting for ever. A part that failed before this agrees at out. */
	if (ctx && ctx->parts > 1) {
		int same = 1;

		agreed = 1;
		status = agree_digest(ctx, RUN_OK, run_digest(o, &sc), &same, res);
		if (status != RUN_OK) {
			res->others = 1;
			util_err_set(err, "another process of the run could not start it");
			goto out;
		}
		if (!same) {
			status = RUN_BAD_INPUT;
			res->uniform = 1;
			util_err_set(err, "the processes of this split run read different scenarios, "
				     "start files, options or programs (every process must be given "
				     "the same)");
			goto out;
		}
		agreed = 0;
		status = RUN_FAILED;
	}
	rc = sim_init(&sim, &sc, o->search, ctx, err);
	if (rc != 0) {
		if (rc == -2)
			no_room(o, err);
		if (rc == -2 || rc == -3)
			status = RUN_BAD_INPUT;
		goto out;
	}
	sim_ok = 1;
	res->simd = sim_simd(&sim);
	/* Every part of a split run reads the checkpoint (the whole flock) and
	 * keeps its share (sim_loaded); part 0 alone takes up the outputs, and
	 * compares the checkpoint's scenario with its own: the others read
	 * what it read (run_digest), but their start.file's path may differ
	 * (another mount of the folder), which the scenario's text holds. */
	if (o->resume &&
	    (checkpoint_read(o->checkpoint, &sim, writer ? json : NULL, generator, &resumed,
			     err) != 0 ||
	     checkpoint_files_check(o->checkpoint, &resumed, o->output, o->metrics, err) != 0)) {
		status = RUN_BAD_INPUT;
		goto out;
	}
	/* The temporary files of a run of these outputs that held the lock
	 * and was killed before it wrote a checkpoint (outfile_lock's
	 * journal): nothing names them but the journal, and this run writes
	 * their frames again. (Those of a killed run that this does not
	 * continue stay: every complete frame there can be read.) */
	/* The run that wrote the checkpoint, still writing its temporary
	 * files (through another name of the checkpoint: a link, a copy),
	 * is not this one's to take over. */
	if (o->resume && writer &&
	    (outfile_temp_busy(resumed.output_tmp) || outfile_temp_busy(resumed.metrics_tmp))) {
		util_err_set(err, "--checkpoint %s: the run that wrote it is still going (its "
			     "temporary file %s is in use); wait for it to end", o->checkpoint,
			     outfile_temp_busy(resumed.output_tmp) ? resumed.output_tmp :
			     resumed.metrics_tmp);
		status = RUN_BAD_INPUT;
		goto out;
	}
	if (o->resume) {
		const char *outs[2] = {o->output, o->metrics};
		const char *keep[2] = {resumed.output_tmp, resumed.metrics_tmp};

		outfile_lock_sweep(lock_was, outs, 2, keep, 2);
		lock_was = NULL;
	}
	/* (a checkpoint that was read: what fails now is memory, not input) */
	if (o->resume && sim_loaded(&sim, err) != 0)
		goto out;
	if (o->output) {
		/* With predators or a population schedule, frames hold agents:
		 * ids and groups, and a count that may change. */
		cap = sim_frame_capacity(&sc);
		/* The writer hands out the arrays a frame is gathered into
		 * (traj_writer_fields); these are for a process without one (a
		 * split run's other ranks) and for reading a resumed run's
		 * frames back. */
		for (d = 0; (!writer || o->resume) && d < flock_fields(&sim.flock); d++)
			if (!(frame[d] = util_alloc((size_t)cap, sizeof(float), err)))
				goto out;
		if (sim_has_agents(&sc)) {
			ag = &agents;
			if (!(agents.id = util_alloc((size_t)cap, sizeof(uint32_t), err)) ||
			    !(agents.group = util_alloc((size_t)cap, sizeof(uint32_t), err)))
				goto out;
		}
		if (writer) {
			w = traj_writer_open(o->output, fmt, sc.dims, sc.has_hue,
					     (ag ? TRAJ_FLAG_AGENTS : 0) |
					     traj_compressor_flag((enum traj_compressor)sc.compressor),
					     cap, sc.seed, generator, json,
					     sc.compression, sc.precision, err);
			if (w == NULL)
				goto out;
			/* (so that a run that takes the lock over, were this one
			 * killed, removes it) */
			outfile_lock_note(lock_fd, o->output, traj_writer_temp_path(w));
			traj_writer_set_parallel_min(w, sim.ctx.parallel_min);
			traj_writer_set_predict(w, sc.dt);
			traj_writer_set_partial(w);
		}
		if (o->resume && writer) {
			char src[4096];

			if (resume_frames(&sc, json, &resumed, o->output, fmt, w, sim.step, frame,
					  ag, src, sizeof src, &refused, err) != 0) {
				status = refused ? RUN_BAD_INPUT : RUN_FAILED;
				goto resume_failed;
			}
			ctx_log(ctx, CTX_VERBOSE, "resumed %llu frames from %s",
				(unsigned long long)resume_written_before(sim.step, sc.every), src);
			partial[0] = read_partial(src, o->output, partial_buf[0], sizeof partial_buf[0]);
		}
	}
	if (o->metrics) {
		if (metrics_init(&met, (size_t)sc.capacity, err) != 0)
			goto out;
		met_ok = 1;
		if (writer && outfile_open(&mout, o->metrics, err) != 0)
			goto out;
		if (writer && mout.tmp)
			outfile_lock_note(lock_fd, o->metrics, mout.tmp);
		if (writer && metrics_write_header(mout.fp, sc.dims, sc.has_hue) != 0)
			goto metrics_failed;
		if (o->resume && writer) {
			char src[4096];

			/* (the source resume_rows reads) */
			partial[1] = read_partial(resume_source(resumed.metrics_tmp, o->metrics, 1,
								src, sizeof src),
						  o->metrics, partial_buf[1], sizeof partial_buf[1]);
			if (resume_rows(&resumed, o->metrics, mout.fp, sim.step, every_m, &refused,
					err) != 0) {
				status = refused ? RUN_BAD_INPUT : RUN_FAILED;
				goto resume_failed;
			}
		}
	}
	/* Every part set up, or none goes on (one that failed says why). */
	agreed = 1;
	if ((status = agree(ctx, RUN_OK, res)) != RUN_OK) {
		res->others = 1;
		util_err_set(err, "another process of the run could not start it");
		goto out;
	}
	say_notes(ctx, &sc, o);
	status = RUN_FAILED;
	res->started = 1;
	t0 = util_seconds();
	if (o->resume)
		on_disk = sim.step;
	for (;;) {
		/* One look at the stop per step, so that the frame, the row and
		 * the checkpoint of the step where it stops agree. */
		int stop = o->stop ? o->stop(o->user) : 0;
		int ck = o->checkpoint && sim.step != sc.steps &&
			 ((o->checkpoint_every && sim.step % o->checkpoint_every == 0) || stop);
		struct checkpoint_files cf = {0};

		if (o->check_invariants && check_state(ctx, &sim, res, err) != 0)
			goto failed;
		/* What the outputs hold before this step's, for a checkpoint. */
		if (ck && w)
			traj_writer_mark(w, &cf.output_bytes, &cf.output_sum);
		if (ck && met_ok && writer)
			cf.metrics_bytes = (uint64_t)ftell(mout.fp);
		/* Step 0, every K-th, the last, and wherever a stop is asked. */
		if (o->output && (sim.step % sc.every == 0 || sim.step == sc.steps || stop)) {
			double tw = util_seconds();
			/* the writer's arrays: the frame stays there as the next
			 * one's base, not copied */
			float *const *out = w ? traj_writer_fields(w, err) : frame;

			if (out == NULL)
				goto failed;
			agents.n = agents_n = sim_frame(&sim, out, ag ? agents.id : NULL,
							ag ? agents.group : NULL);
			if (w && (ag ? traj_write_frame_agents(w, sim.step, out, ag, err) :
				  traj_write_frame(w, sim.step, out, err)) != 0)
				goto failed;
			t_out += util_seconds() - tw;
		}
		if (met_ok && (sim.step % every_m == 0 || sim.step == sc.steps || stop)) {
			struct metrics_row row;

			sim_measure(&sim, &met, &row);
			if (writer && metrics_write_row(mout.fp, sc.dims, sim.step, sc.dt, &row) != 0)
				goto metrics_failed;
		}
		if (ck) {
			if (save_checkpoint(o, ctx, &sim, json, generator, w,
					    met_ok && writer ? &mout : NULL, &cf, &resumed, res,
					    err) != 0)
				goto failed;
			on_disk = sim.step;
		}
		if (stop)
			stopped = stop;
		if (sim.step == sc.steps || stop)
			break;
		sim_step(&sim);
		if (o->progress && util_seconds() - last > RUN_PROGRESS_PERIOD) {
			struct run_progress p = {sim.step, sc.steps, sim_count(&sim), 0, 0};

			last = util_seconds();
			p.seconds = last - t0;
			o->progress(o->user, &p);
		}
	}
	res->step = sim.step;
	res->n = sim_count(&sim);
	res->stopped = stopped;
	if (o->progress) {
		struct run_progress p = {sim.step, sc.steps, sim_count(&sim), util_seconds() - t0,
				     1};

		o->progress(o->user, &p);
	}
	/* The metrics are made durable and their name is tried before the
	 * trajectory takes its own: a full disk or a directory there would
	 * otherwise fail them after the trajectory had replaced its file, a
	 * failed run that replaced a previous one (and with a checkpoint,
	 * --resume would find the run's trajectory gone). */
	if (w && met_ok && writer &&
	    (outfile_sync(&mout, err) != 0 || target_taken(o->metrics, stopped, err) != 0))
		goto failed;
	if (w) {
		enum traj_status st = stopped ? TRAJ_INTERRUPTED : TRAJ_COMPLETE;
		double tw = util_seconds();

		d = traj_writer_close(w, st, err);
		w = NULL;
		if (d != 0) {
			/* The metrics are whole: without a checkpoint to resume
			 * from, they still take their name (its error, if any, is
			 * the trajectory's second). */
			struct util_err merr = {0};

			if (met_ok && writer && on_disk == UINT64_MAX &&
			    (stopped ? outfile_commit_partial(&mout, &merr) :
				       outfile_commit(&mout, &merr)) != 0)
				ctx_log(ctx, CTX_NORMAL, "%s", merr.msg);
			goto failed;
		}
		t_out += util_seconds() - tw;
		if (strcmp(o->output, "-") != 0)
			ctx_log(ctx, CTX_NORMAL, "%s %s%s (%" PRIu64 " steps, %" PRIu64 " boids)",
				stopped ? "interrupted; wrote what was done to" : "wrote",
				o->output, st != TRAJ_COMPLETE ? ".partial" : "", sim.step,
				(uint64_t)agents_n - (uint64_t)sim.pred.n);
	}
	res->stats = sim.stats;
	res->seconds = util_seconds() - t0;
	res->t_out = t_out;
	if (met_ok && writer && (stopped ? outfile_commit_partial(&mout, err) :
					outfile_commit(&mout, err)) != 0)
		goto failed;
	if (!stopped && o->checkpoint && writer) {
		/* Done: the checkpoint and what a resumed run read are spent. */
		if (o->resume)
			remove_spent(&resumed, partial);
		unlink(o->checkpoint);
		remove_checkpoint_temps(o->checkpoint, &started);
	}
	status = RUN_OK;
	goto out;
metrics_failed:
	util_err_set(err, "%s: write failed: %s", o->metrics, strerror(errno));
	goto failed;
resume_failed:
	/* A resume that could not write again what the checkpoint covers
	 * (a full disk) leaves that checkpoint as good as it was. */
	if (refused)
		goto out;
	on_disk = sim.step;
failed:
	/* The outputs' temporary files were kept as far as the checkpoint
	 * covers (save_checkpoint): say how to go on from there. */
	if (on_disk != UINT64_MAX) {
		char msg[sizeof err->msg];

		memcpy(msg, err->msg, sizeof msg);
		util_err_set(err, "%s; the checkpoint %s keeps the run to step %" PRIu64
			     ": run the same command with --resume to continue", msg,
			     o->checkpoint, on_disk);
	}
out:
	if (!agreed) /* a setup that failed, or --check */
		agree(ctx, status, res);
	checkpoint_files_free(&resumed);
	if (outfile_abort(&mout, &aerr) != 0)
		ctx_log(ctx, CTX_VERBOSE, "%s", aerr.msg);
	if (traj_writer_abort(w, &aerr) != 0)
		ctx_log(ctx, CTX_VERBOSE, "%s", aerr.msg);
	if (met_ok)
		metrics_free(&met);
	for (d = 0; d < TRAJ_FIELDS_MAX; d++)
		util_free(frame[d]);
	util_free(agents.id);
	util_free(agents.group);
	if (sim_ok)
		sim_free(&sim);
	/* (a journal not swept, of a run refused before it started, stays for
	 * the --resume it may have been refused for) */
	outfile_unlock(lock_name, lock_fd, lock_was != NULL && !res->started);
	free(lock_was);
	free(json);
	scenario_free(&sc);
	return status;
}
