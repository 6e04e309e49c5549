/* cmd_traj.c: boidsim info, verify and convert: thin commands over the
 * trajectory reader and writer. */
#include "config.h"
#include "cmd.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "outfile.h"
#include "traj.h"
#include "util.h"

#define EXIT_USAGE 2
/* verify: the file ends before its end record, after whole frames (cut
 * inside a record, or no end record); convert: written, but part of the
 * input could not be read (cut short, or damaged frames skipped). */
#define EXIT_INCOMPLETE 3

int cmd_stdout_flush(void)
{
	/* (a write that failed earlier leaves the error flag, and errno may
	 * have moved on since) */
	if (fflush(stdout) == 0 && !ferror(stdout))
		return 0;
	fprintf(stderr, "boidsim: standard output: write failed%s%s\n", errno ? ": " : "",
		errno ? strerror(errno) : "");
	return -1;
}

/* Whether path is the file in ("-": standard input, when that is a file):
 * an output there would replace, at its end, the file it was read from,
 * with a selection of it or less. */
static int is_input(const char *in, const char *path)
{
	struct stat si, so;

	if (strcmp(path, "-") == 0 || stat(path, &so) != 0 || !S_ISREG(so.st_mode))
		return 0;
	if (strcmp(in, "-") == 0 ? fstat(STDIN_FILENO, &si) != 0 : stat(in, &si) != 0)
		return 0;
	return si.st_dev == so.st_dev && si.st_ino == so.st_ino;
}

/* convert's temporary file while it writes one, for its signal handler:
 * a copy stopped by a signal leaves nothing behind (it is made again by
 * the same command), then dies of the signal. unlink, signal and raise
 * are async-signal-safe. */
static char convert_tmp[4096];

static void convert_on_signal(int sig)
{
	if (convert_tmp[0] != '\0')
		unlink(convert_tmp);
	signal(sig, SIG_DFL);
	raise(sig);
}

void cmd_catch_signals(void (*handler)(int))
{
	static const int SIGS[] = {SIGINT, SIGTERM, SIGHUP};
	struct sigaction sa, old;
	size_t i;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = handler;
	/* a blocking write to a pipe is not cut short by a signal */
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof SIGS / sizeof SIGS[0]; i++)
		sigaddset(&sa.sa_mask, SIGS[i]);
	for (i = 0; i < sizeof SIGS / sizeof SIGS[0]; i++) {
		/* (SIGINT is taken even when ignored: a shell script's
		 * background jobs have it ignored, and their kill -INT is
		 * meant to stop them) */
		if (SIGS[i] == SIGHUP && sigaction(SIGHUP, NULL, &old) == 0 &&
		    old.sa_handler == SIG_IGN)
			continue;
		sigaction(SIGS[i], &sa, NULL);
	}
}

static void convert_catch(const char *tmp)
{
	if (tmp == NULL || strlen(tmp) >= sizeof convert_tmp)
		return;
	strcpy(convert_tmp, tmp);
	cmd_catch_signals(convert_on_signal);
}

/* The status for a trajectory that cannot be read: bad input, 2, as for a
 * scenario that cannot be read; 1 when memory ran out. */
static int input_status(const struct util_err *err)
{
	return err->not_input ? 1 : EXIT_USAGE;
}

static int usage_error(const char *cmd, const char *what, const char *arg)
{
	char line[sizeof ((struct util_err *)0)->msg + 256];

	snprintf(line, sizeof line, what, arg); /* one write of the line, as main.c's */
	fprintf(stderr, "boidsim %s: %s (see boidsim %s --help)\n", cmd, line, cmd);
	return EXIT_USAGE;
}

/* A frame's arrays, one per field, and its agents (any file: without
 * agents the reader gives ids 0..count-1, all boids), with room for cap
 * values each. */
struct frame_bufs {
	size_t cap;
	float *f[TRAJ_FIELDS_MAX];
	struct traj_agents a;
};

static void free_bufs(struct frame_bufs *b)
{
	int f;

	for (f = 0; f < TRAJ_FIELDS_MAX; f++)
		util_free(b->f[f]);
	util_free(b->a.id);
	util_free(b->a.group);
	memset(b, 0, sizeof *b);
}

/* Room for n values in each array. They grow with the frames read, not
 * with the header's count, which for agents is only a bound: a small
 * file claiming 10^8 agents costs nothing until it holds them. */
static int frame_room(const struct traj_header *h, struct frame_bufs *b, uint64_t n,
		      struct util_err *err)
{
	size_t cap = b->cap ? b->cap : 1024;
	int f;

	if (b->a.id && n <= b->cap)
		return 0;
	while (cap < n)
		cap *= 2;
	free_bufs(b);
	for (f = 0; f < h->fields; f++)
		if (!(b->f[f] = util_alloc_raw(cap, sizeof(float), err)))
			return -1;
	if (!(b->a.id = util_alloc_raw(cap, sizeof *b->a.id, err)) ||
	    !(b->a.group = util_alloc_raw(cap, sizeof *b->a.group, err)))
		return -1;
	b->cap = cap;
	return 0;
}

/* The next frame into b (or frame k through the index, when k is not
 * NULL): 1, 0 at the end, -1 as the reader says. */
static int read_into(struct traj_reader *r, const uint64_t *k, uint64_t *step,
		     struct frame_bufs *b, struct util_err *err)
{
	int rc = k ? traj_read_next_at(r, *k, step, err) : traj_read_next(r, step, err);

	if (rc != 1)
		return rc;
	if (frame_room(traj_reader_header(r), b, traj_reader_frame_n(r), err) != 0)
		return -1;
	traj_reader_copy_frame(r, b->f, &b->a);
	return 1;
}

/* An error message without the file name it starts with, to follow it. */
static const char *reason(const struct util_err *err, const char *name)
{
	size_t n = strlen(name);

	/* "NAME: what" loses the name; "NAME:LINE: what" keeps it with the line */
	return strncmp(err->msg, name, n) == 0 && err->msg[n] == ':' && err->msg[n + 1] == ' ' ?
	       err->msg + n + 2 : err->msg;
}

/* What the frames of a file with agents held: the fewest and most agents
 * in a frame, all of them, and the distinct predator ids (sorted). */
struct agent_stats {
	uint64_t frames, least, most, total;
	uint32_t *pred;
	size_t npred;
};

/* Adds a frame's predators (the last agents, in id order) to the ids seen. */
static int note_frame(struct agent_stats *s, const struct traj_agents *a, struct util_err *err)
{
	size_t first = (size_t)a->n, k, i, j, m, fresh = 0;
	uint32_t *merged;

	if (s->frames++ == 0 || a->n < s->least)
		s->least = a->n;
	if (a->n > s->most)
		s->most = a->n;
	s->total += a->n;
	while (first > 0 && a->group[first - 1] == TRAJ_GROUP_PREDATOR)
		first--;
	for (i = first, j = 0; i < (size_t)a->n; i++) {
		while (j < s->npred && s->pred[j] < a->id[i])
			j++;
		fresh += j == s->npred || s->pred[j] != a->id[i];
	}
	if (fresh == 0)
		return 0;
	m = s->npred + fresh;
	if (!(merged = util_alloc(m, sizeof *merged, err)))
		return -1;
	for (i = first, j = 0, k = 0; i < (size_t)a->n || j < s->npred;) {
		if (j == s->npred || (i < (size_t)a->n && a->id[i] < s->pred[j]))
			merged[k++] = a->id[i++];
		else if (i < (size_t)a->n && a->id[i] == s->pred[j])
			merged[k++] = s->pred[j++], i++;
		else
			merged[k++] = s->pred[j++];
	}
	util_free(s->pred);
	s->pred = merged;
	s->npred = k;
	return 0;
}

static const char *format_title(enum traj_format f)
{
	return f == TRAJ_BIN ? "boidsim binary trajectory" :
	       f == TRAJ_CSV ? "CSV" : "gzip'd CSV";
}

/* Reads every frame of r (with its agents into a, noted in s); returns 0
 * at a clean end, -1 (err filled) at the first damaged or cut frame. */
static int read_all(struct traj_reader *r, struct frame_bufs *b, struct agent_stats *s,
		    struct util_err *err)
{
	uint64_t step;
	int rc;

	while ((rc = read_into(r, NULL, &step, b, err)) == 1)
		if (note_frame(s, &b->a, err) != 0)
			return -1;
	return rc;
}

/* How the frames read were stored: lossless or lossy (and at what
 * precision), and how many frames of each codec. */
static void print_encoding(const struct traj_reader *r)
{
	uint64_t lossy = traj_reader_codec_frames(r, TRAJ_CODEC_QUANT) +
			 traj_reader_codec_frames(r, TRAJ_CODEC_QUANT_DELTA);
	const char *sep = "";
	uint32_t c;

	if (lossy == 0)
		printf("encoding:    lossless");
	else if (lossy == traj_reader_frames(r))
		printf("encoding:    lossy, precision %.17g", traj_reader_precision(r));
	else
		printf("encoding:    lossless and lossy (precision %.17g)", traj_reader_precision(r));
	printf("; ");
	for (c = 0; c < TRAJ_CODECS; c++) {
		uint64_t n = traj_reader_codec_frames(r, c);

		if (n == 0)
			continue;
		printf("%s%" PRIu64 " %s frame%s (%s)", sep, n,
		       traj_codec_is_key(c) ? "key" : "delta", n == 1 ? "" : "s", traj_codec_name(c));
		sep = ", ";
	}
	printf("%s\n", *sep ? "" : "no frames");
}

/* A binary copy's generator ends so (convert), after its input's own note
 * on how the sums were taken: its status 1 then says that its input was
 * not complete, which a signal may have caused or not. */
#define CONVERTED " (converted)"
#define BRUTE " (neighbours brute)"

static const char *status_text(const struct traj_header *h, enum traj_status st)
{
	const size_t g = strlen(h->generator), c = strlen(CONVERTED);

	if (st == TRAJ_COMPLETE)
		return "complete";
	if (g >= c && strcmp(h->generator + g - c, CONVERTED) == 0)
		return "interrupted: a copy of a run stopped by a signal, or of an incomplete, "
		       "cut or damaged file";
	return "interrupted by a signal";
}

static void print_steps(const struct traj_reader *r)
{
	uint64_t n = traj_reader_frames(r);

	if (n == 0)
		printf("no frames");
	else
		printf("%" PRIu64 " frame%s (steps %" PRIu64 " to %" PRIu64 ")", n,
		       n == 1 ? "" : "s", traj_reader_first_step(r), traj_reader_last_step(r));
}

int cmd_info(int argc, char **argv)
{
	static const struct option longs[] = {
		{"scenario", no_argument, NULL, 's'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0}};
	struct util_err err = {0};
	struct traj_reader *r;
	const struct traj_header *h;
	struct frame_bufs fb = {0};
	struct agent_stats as = {0};
	enum traj_status st;
	int c, only_scenario = 0, rc, status = 1;
	char digest[TRAJ_DIGEST_HEX];
	struct stat sb;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", longs, NULL)) != -1) {
		switch (c) {
		case 's':
			only_scenario = 1;
			break;
		case 'h':
			puts("Usage: boidsim info [--scenario] FILE\n"
			     "Describe a trajectory file (- for stdin); with --scenario print only\n"
			     "the scenario it embeds, which boidsim runs again as it is.");
			return 0;
		default:
			return usage_error("info", "unknown option %s", argv[optind - 1]);
		}
	}
	if (optind + 1 != argc)
		return usage_error("info", "%s", "expected one FILE");
	r = traj_reader_open(argv[optind], &err);
	if (r == NULL) {
		fprintf(stderr, "boidsim: %s\n", err.msg);
		return input_status(&err);
	}
	h = traj_reader_header(r);
	if (only_scenario) {
		if (h->scenario[0] == '\0') {
			fprintf(stderr, "boidsim: %s: a %s file embeds no scenario\n",
				argv[optind], format_title(h->format));
			status = EXIT_USAGE; /* the input's: nothing to print from it */
			goto out;
		}
		printf("%s\n", h->scenario);
		status = cmd_stdout_flush() == 0 ? 0 : 1;
		goto out;
	}
	rc = read_all(r, &fb, &as, &err);
	printf("file:        %s\n", argv[optind]);
	if (h->format == TRAJ_BIN)
		printf("format:      %s, version %d\nwritten by:  %s\n", format_title(h->format),
		       h->version, h->generator);
	else
		printf("format:      %s\n", format_title(h->format));
	printf("dimensions:  %d\n", h->dims);
	if (!h->has_agents) {
		printf("boids:       %" PRIu64 "\n", h->count);
	} else {
		/* Ids and groups; the count changes from frame to frame. */
		printf("agents:      boids and predators, with ids; at most %" PRIu64 " a frame\n",
		       h->count);
		if (traj_reader_frames(r) == 0)
			printf("per frame:   no frames\n");
		else
			printf("per frame:   %" PRIu64 " to %" PRIu64 " agents; %zu predator%s seen\n",
			       as.least, as.most, as.npred, as.npred == 1 ? "" : "s");
	}
	printf("fields:      ");
	for (c = 0; c < h->fields; c++)
		printf("%s%s", c ? ", " : "", traj_field_name(h->dims, c));
	printf("%s%s\n", h->has_agents ? ", id, group" : "",
	       h->has_hue ? " (hue in turns, from colour following)" : "");
	if (h->format == TRAJ_BIN)
		printf("seed:        %" PRIu64 "\n", h->seed);
	printf("frames:      ");
	print_steps(r);
	printf("\n");
	if (h->format == TRAJ_BIN) {
		print_encoding(r);
		printf("compressor:  %s\n", TRAJ_COMPRESSOR_NAMES[h->flags & TRAJ_FLAG_ZSTD
								   ? TRAJ_ZSTD : TRAJ_ZLIB]);
		printf("index:       %s\n", traj_reader_indexed(r) ? "yes, it matches the frames" :
		       h->version < 2 ? "no (version 1)" :
		       rc != 0 && traj_reader_cut(r) ? "no (the file is cut short)" :
		       rc != 0 ? "not reached (the file is damaged before it)" : "no");
	}
	printf("status:      ");
	if (rc != 0 && traj_reader_cut(r))
		printf("incomplete: %s\n", reason(&err, argv[optind]));
	else if (rc != 0)
		printf("damaged: %s\n", err.msg);
	else if (h->format != TRAJ_BIN)
		printf("readable (CSV cannot record whether the run completed)\n");
	else if (!traj_reader_ended(r, &st))
		printf("incomplete: no end record (the run was killed, or is still running)\n");
	else
		printf("%s\n", status_text(h, st));
	if (strcmp(argv[optind], "-") != 0 && stat(argv[optind], &sb) == 0) {
		double raw = (double)as.total *
			     (h->fields + (h->has_agents ? TRAJ_AGENT_FIELDS : 0)) * 4;

		printf("size:        %lld bytes; frames hold %.0f bytes of float32 data (%.2fx)\n",
		       (long long)sb.st_size, raw, sb.st_size > 0 ? raw / (double)sb.st_size : 0.0);
	}
	traj_reader_digest(r, digest);
	printf("digest:      sha256:%s\n", digest);
	status = rc == 0 || traj_reader_cut(r) ? 0 : input_status(&err);
	if (cmd_stdout_flush() != 0)
		status = 1;
	/* a damaged file's exit 2 (or 1) comes with its reason on standard
	 * error too, as every other command's does */
	if (rc != 0 && !traj_reader_cut(r))
		fprintf(stderr, "boidsim: %s\n", err.msg);
out:
	free_bufs(&fb);
	util_free(as.pred);
	traj_reader_close(r);
	return status;
}

int cmd_verify(int argc, char **argv)
{
	struct util_err err = {0};
	struct traj_reader *r;
	const struct traj_header *h;
	struct frame_bufs fb = {0};
	struct agent_stats as = {0};
	enum traj_status st;
	int c, rc, status = 1;

	for (c = 1; c < argc && strcmp(argv[c], "-h") != 0 && strcmp(argv[c], "--help") != 0; c++)
		;
	if (c < argc) {
		puts("Usage: boidsim verify FILE\n"
		     "Check a trajectory's structure, every frame's CRC and what the frames\n"
		     "hold. Exit 0 when the file is whole, 2 with the first bad frame named\n"
		     "when it is damaged or cannot be read, 3 when it ends early after whole\n"
		     "frames (cut short, or no end record: a killed run).");
		return 0;
	}
	for (c = 1; c < argc; c++)
		if (argv[c][0] == '-' && argv[c][1] != '\0')
			return usage_error("verify", "unknown option %s", argv[c]);
	if (argc != 2)
		return usage_error("verify", "%s", "expected one FILE");
	r = traj_reader_open(argv[1], &err);
	if (r == NULL) {
		struct stat st_in;

		fprintf(stderr, "boidsim: %s\n", err.msg);
		/* a file that is there, damaged from its header on */
		if (!err.not_input && (strcmp(argv[1], "-") == 0 ||
				       (stat(argv[1], &st_in) == 0 && S_ISREG(st_in.st_mode)))) {
			printf("%s: damaged after 0 whole frames\n", argv[1]);
			if (cmd_stdout_flush() != 0)
				return 1;
		}
		return input_status(&err);
	}
	h = traj_reader_header(r);
	rc = read_all(r, &fb, &as, &err);
	if (rc != 0 && traj_reader_cut(r)) {
		printf("%s: incomplete: %" PRIu64 " whole frames (%s)\n", argv[1],
		       traj_reader_frames(r), reason(&err, argv[1]));
		status = EXIT_INCOMPLETE;
		goto out;
	}
	if (rc != 0) {
		fprintf(stderr, "boidsim: %s\n", err.msg);
		printf("%s: damaged after %" PRIu64 " whole frames\n", argv[1],
		       traj_reader_frames(r));
		status = input_status(&err);
		goto out;
	}
	if (h->format == TRAJ_BIN && !traj_reader_ended(r, &st)) {
		printf("%s: incomplete: %" PRIu64 " whole frames and no end record "
		       "(the run was killed?)\n", argv[1], traj_reader_frames(r));
		status = EXIT_INCOMPLETE;
		goto out;
	}
	printf("%s: ok: ", argv[1]);
	print_steps(r);
	printf("%s%s\n", h->format != TRAJ_BIN ? "" : ", ",
	       h->format != TRAJ_BIN ? "" : status_text(h, st));
	status = 0;
out:
	if (cmd_stdout_flush() != 0)
		status = 1;
	free_bufs(&fb);
	util_free(as.pred);
	traj_reader_close(r);
	return status;
}

/* "START:STOP:STEP" by step number, each part optional. */
static int parse_frames(const char *s, uint64_t sel[3])
{
	const char *p = s;
	char *end;
	int i;

	sel[0] = 0;
	sel[1] = UINT64_MAX;
	sel[2] = 1;
	for (i = 0; i < 3; i++) {
		if (*p != ':' && *p != '\0') {
			if (*p < '0' || *p > '9')
				return -1;
			errno = 0;
			sel[i] = strtoull(p, &end, 10);
			if (errno)
				return -1;
			p = end;
		}
		if (i < 2 && *p == ':')
			p++;
		else if (*p != '\0' || (i < 2 && *p == '\0' && i == 0 && p == s))
			break;
	}
	return (*p == '\0' && sel[2] > 0 && sel[0] <= sel[1]) ? 0 : -1;
}

static int selected(uint64_t step, const uint64_t sel[3])
{
	return step >= sel[0] && step < sel[1] && (step - sel[0]) % sel[2] == 0;
}

struct id_range {
	uint32_t lo, hi;
};

static int range_cmp(const void *a, const void *b)
{
	const struct id_range *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* "0,5,10-20" for a file with agents, whose ids are sparse: any ids up to
 * 2^32-1, as sorted ranges that neither overlap nor touch. */
static int parse_id_ranges(const char *s, struct id_range **out, size_t *n, char *bad,
			   size_t badlen)
{
	struct id_range *rg = NULL;
	const char *p = s;
	size_t k = 0, cap = 0, i, m;

	while (*p) {
		char *end;
		unsigned long long a, b;

		if (*p < '0' || *p > '9')
			goto bad;
		errno = 0;
		a = strtoull(p, &end, 10);
		b = a;
		if (*end == '-') {
			p = end + 1;
			if (*p < '0' || *p > '9')
				goto bad;
			b = strtoull(p, &end, 10);
		}
		if (errno || b < a || b > UINT32_MAX) {
			snprintf(bad, badlen, "%s is not a range of ids 0 to %lu", s,
				 (unsigned long)UINT32_MAX);
			free(rg);
			return -1;
		}
		if (k == cap) {
			struct id_range *nr = realloc(rg, (cap = cap ? 2 * cap : 16) * sizeof *rg);

			if (nr == NULL)
				goto bad;
			rg = nr;
		}
		rg[k].lo = (uint32_t)a;
		rg[k++].hi = (uint32_t)b;
		p = end;
		if (*p == ',')
			p++;
		else if (*p)
			goto bad;
	}
	if (k == 0)
		goto bad;
	qsort(rg, k, sizeof *rg, range_cmp);
	for (i = 1, m = 0; i < k; i++) {
		if (rg[m].hi == UINT32_MAX || rg[i].lo <= rg[m].hi + 1) {
			if (rg[i].hi > rg[m].hi)
				rg[m].hi = rg[i].hi;
		} else {
			rg[++m] = rg[i];
		}
	}
	*out = rg;
	*n = m + 1;
	return 0;
bad:
	snprintf(bad, badlen, "expected ids and ranges such as 0,5,10-20");
	free(rg);
	return -1;
}

/* The ranges of ids, for a file without agents: each a boid of it. */
static int check_ids(const struct id_range *rg, size_t nr, uint64_t count, char *bad,
		     size_t badlen)
{
	if (rg[nr - 1].hi < count)
		return 0;
	snprintf(bad, badlen, "%lu is not a boid of this file (ids 0 to %llu)",
		 (unsigned long)rg[nr - 1].hi, (unsigned long long)count - 1);
	return -1;
}

/* The agents of a frame that --ids keeps: the boids listed, every predator. */
static void select_agents(const struct id_range *rg, size_t nr, int nf,
			  float *const in[TRAJ_FIELDS_MAX], const struct traj_agents *a,
			  float *const out[TRAJ_FIELDS_MAX], struct traj_agents *b)
{
	size_t i, j = 0, m = 0;
	int f;

	for (i = 0; i < (size_t)a->n; i++) {
		if (a->group[i] == TRAJ_GROUP_BOID) {
			while (j < nr && rg[j].hi < a->id[i])
				j++;
			if (j == nr || rg[j].lo > a->id[i])
				continue;
		}
		for (f = 0; f < nf; f++)
			out[f][m] = in[f][i];
		b->id[m] = a->id[i];
		b->group[m++] = a->group[i];
	}
	b->n = m;
}

int cmd_convert(int argc, char **argv)
{
	static const struct option longs[] = {
		{"output", required_argument, NULL, 'o'},
		{"format", required_argument, NULL, 'f'},
		{"frames", required_argument, NULL, 'F'},
		{"ids", required_argument, NULL, 'i'},
		{"quiet", no_argument, NULL, 'q'},
		{"salvage", no_argument, NULL, 's'},
		{"compressor", required_argument, NULL, 'z'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0}};
	const char *out = NULL, *format = NULL, *frames = NULL, *ids_arg = NULL;
	const char *compressor = NULL;
	enum traj_compressor zc = TRAJ_ZSTD;
	struct util_err err = {0};
	struct traj_reader *r = NULL;
	struct traj_writer *w = NULL;
	const struct traj_header *h;
	struct frame_bufs in = {0}, asub = {0};
	struct id_range *ranges = NULL;
	size_t nranges = 0;
	size_t nids = 0, k;
	uint64_t sel[3] = {0, UINT64_MAX, 1}, step, written = 0, kf, most = 0;
	enum traj_format fmt;
	enum traj_status st = TRAJ_COMPLETE;
	int c, rc, status = 1, indexed, salvage = 0, lost = 0, agents;
	char cut[UTIL_ERR_MAX] = ""; /* where a cut input ends, when it does */
	/* room for the version and both notes, so that " (converted)" is
	 * never cut off */
	char bad[128], generator[sizeof PACKAGE_VERSION + sizeof BRUTE + sizeof CONVERTED + 16];

	opterr = 0;
	while ((c = getopt_long(argc, argv, "o:qh", longs, NULL)) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		case 'f': format = optarg; break;
		case 'F': frames = optarg; break;
		case 'i': ids_arg = optarg; break;
		case 'q': cmd_ctx.verbosity = CTX_QUIET; break;
		case 's': salvage = 1; break;
		case 'z': compressor = optarg; break;
		case 'h':
			puts("Usage: boidsim convert IN -o OUT [--format bin|csv|csv.gz]\n"
			     "                      [--frames START:STOP:STEP] [--ids LIST] [--salvage]\n"
			     "                      [--compressor zstd|zlib] [-q]\n"
			     "Convert a trajectory between .bin, .csv and .csv.gz (- for stdin or\n"
			     "stdout). --frames keeps the frames whose step s has START <= s < STOP\n"
			     "and (s - START) a multiple of STEP; --ids keeps the boids listed, as\n"
			     "in 0,5,10-20, written as agents with their ids (from a file with\n"
			     "agents, every predator is kept). A file cut short converts to its whole\n"
			     "frames (exit 3); --salvage also skips damaged frames to the next whole\n"
			     "key frame (exit 3 when it did). --compressor: of a binary OUT's chunks\n"
			     "(default zstd; zlib for readers older than zstd chunks). -o is also\n"
			     "--output. -q, --quiet: no note on stderr (warnings about lost frames\n"
			     "are still given).");
			return 0;
		default:
			return usage_error("convert", "unknown option or missing value at %s",
					   argv[optind - 1]);
		}
	}
	if (optind + 1 != argc)
		return usage_error("convert", "%s", "expected one input FILE");
	if (out == NULL)
		return usage_error("convert", "%s", "-o OUT is required");
	if (format && traj_format_parse(format, &fmt) != 0)
		return usage_error("convert", "--format %s: expected " TRAJ_FORMAT_NAMES, format);
	if (!format && traj_format_guess(out, &fmt) != 0)
		return usage_error("convert", "%s: cannot tell the output format; use .bin, .csv "
				   "or .csv.gz, or --format", out);
	if (compressor && traj_compressor_parse(compressor, &zc) != 0) {
		snprintf(bad, sizeof bad, "%.40s: expected %s or %s", compressor,
			 TRAJ_COMPRESSOR_NAMES[0], TRAJ_COMPRESSOR_NAMES[1]);
		return usage_error("convert", "--compressor %s", bad);
	}
	if (frames && parse_frames(frames, sel) != 0)
		return usage_error("convert", "--frames %s: expected START:STOP:STEP step "
				   "numbers, STEP > 0", frames);
	{
		/* where an interrupted CSV goes (outfile.h) */
		char partial[4096];

		snprintf(partial, sizeof partial, "%s.partial", out);
		if (is_input(argv[optind], out))
			return usage_error("convert", "-o %s is the input file, which convert reads",
					   out);
		if (fmt != TRAJ_BIN && is_input(argv[optind], partial))
			return usage_error("convert", "-o %s clashes with the input file: its "
					   ".partial is where an interrupted conversion goes", out);
	}
	/* as a run does: a name with no room for its temporary file's is the
	 * caller's to change, found before anything is read */
	if (strcmp(out, "-") != 0 && outfile_name_fits(out, &err) != 0)
		return usage_error("convert", "-o %s", err.msg);
	r = traj_reader_open(argv[optind], &err);
	if (r == NULL) {
		fprintf(stderr, "boidsim: %s\n", err.msg);
		return input_status(&err);
	}
	h = traj_reader_header(r);
	if (ids_arg && (parse_id_ranges(ids_arg, &ranges, &nranges, bad, sizeof bad) != 0 ||
			(!h->has_agents && check_ids(ranges, nranges, h->count, bad, sizeof bad)))) {
		status = usage_error("convert", "--ids: %s", bad);
		goto out;
	}
	/* Some of the boids of a file without agents are sparse ids: they are
	 * written as agents (boids of group 0 with their own ids), which every
	 * reader reads back, in every format. Else the same flag and the same
	 * most agents a frame. */
	nids = (size_t)h->count;
	if (ranges && !h->has_agents)
		for (k = 0, nids = 0; k < nranges; k++)
			nids += (size_t)(ranges[k].hi - ranges[k].lo) + 1;
	agents = h->has_agents || ranges != NULL;
	snprintf(generator, sizeof generator, "boidsim %s%s" CONVERTED, PACKAGE_VERSION,
		 h->format == TRAJ_BIN && strstr(h->generator, BRUTE) ? BRUTE : "");
	w = traj_writer_open(out, fmt, h->dims, h->has_hue,
			     (agents ? TRAJ_FLAG_AGENTS : 0) | traj_compressor_flag(zc), nids,
			     h->seed, generator, h->scenario, TRAJ_LEVEL_DEFAULT, 0.0, &err);
	if (w == NULL) {
		fprintf(stderr, "boidsim: %s\n", err.msg);
		goto out;
	}
	/* as the run that made it would have (codec 5) */
	traj_writer_set_predict(w, h->dt);
	convert_catch(traj_writer_temp_path(w));
	/* A selection of frames from a file with an index reads only those
	 * frames (and the frames before each back to its key frame). */
	indexed = frames && !salvage ? traj_reader_load_index(r, &err) : 0;
	if (indexed < 0) {
		fprintf(stderr, "boidsim: %s\n", err.msg);
		status = input_status(&err);
		goto out;
	}
	for (kf = 0;; kf++) {
		if (indexed) {
			const struct traj_index_entry *e = traj_reader_index_entry(r, kf);

			if (e == NULL) {
				rc = 0;
				break;
			}
			if (!selected(e->step, sel))
				continue;
			rc = read_into(r, &kf, &step, &in, &err);
		} else {
			rc = read_into(r, NULL, &step, &in, &err);
		}
		if (rc < 0 && !indexed && traj_reader_cut(r)) {
			/* a killed run's last record: keep every whole frame (said
			 * below, once it is known whether there was one) */
			snprintf(cut, sizeof cut, "%s", err.msg);
			lost = 1;
			rc = 0;
			break;
		}
		if (rc < 0 && salvage) {
			fprintf(stderr, "boidsim: warning: %s; skipped to the next whole key frame\n",
				err.msg);
			lost = 1;
			rc = traj_reader_resync(r, &err);
			if (rc == 1)
				continue;
		}
		if (rc != 1)
			break;
		if (!selected(step, sel))
			continue;
		if (agents) {
			const struct frame_bufs *wa = &in;

			if (ranges) {
				if (frame_room(h, &asub, in.a.n, &err) != 0) {
					fprintf(stderr, "boidsim: %s\n", err.msg);
					goto out;
				}
				select_agents(ranges, nranges, h->fields, in.f, &in.a, asub.f, &asub.a);
				wa = &asub;
			}
			if (wa->a.n > most)
				most = wa->a.n;
			rc = traj_write_frame_agents(w, step, wa->f, &wa->a, &err);
		} else {
			rc = traj_write_frame(w, step, in.f, &err);
		}
		if (rc != 0) {
			fprintf(stderr, "boidsim: %s\n", err.msg);
			goto out;
		}
		written++;
	}
	if (rc != 0) {
		/* the input's: a failed write left the loop for out */
		fprintf(stderr, "boidsim: %s\n", err.msg);
		status = input_status(&err);
		goto out;
	}
	/* A binary input with no end record, cut between two frames (as a
	 * killed run leaves it): its whole frames are all there is, and a CSV
	 * of them, which cannot say so itself, must not pass for the run's. */
	if (!cut[0] && !lost && h->format == TRAJ_BIN && !traj_reader_ended(r, &st)) {
		snprintf(cut, sizeof cut, "%s: no end record (the run was killed, or is still "
			 "running)", argv[optind]);
		lost = 1;
	}
	/* A CSV's count is its frames', so one of no frames could not be read
	 * back: refused, where a binary file of none is a valid file. */
	if (written == 0 && fmt != TRAJ_BIN) {
		if (cut[0]) /* one line, the input's: where it is cut */
			fprintf(stderr, "boidsim: %s: no whole frame to convert%s; a CSV of none "
				"could not be read back%s\n", cut,
				frames || ids_arg ? " among those --frames or --ids select" : "",
				strcmp(out, "-") != 0 ? ", so nothing was written" : "");
		else
			fprintf(stderr, "boidsim: %s: no frames to write%s; a CSV of none could not "
				"be read back%s\n", out,
				frames || ids_arg ? " (--frames or --ids selected none)" : "",
				strcmp(out, "-") != 0 ? ", so nothing was written" : "");
		status = EXIT_USAGE;
		goto out;
	}
	if (cut[0])
		fprintf(stderr, "boidsim: warning: %s; converted the whole frames before it\n", cut);
	/* A binary copy of an unfinished run says so too, and so does one
	 * that lost frames of its input (a cut CSV, a damaged frame). */
	if (fmt == TRAJ_BIN && (lost || (h->format == TRAJ_BIN &&
					 (!traj_reader_ended(r, &st) || st != TRAJ_COMPLETE))))
		st = TRAJ_INTERRUPTED;
	if (fmt != TRAJ_BIN)
		st = TRAJ_COMPLETE;
	rc = traj_writer_close(w, st, &err);
	w = NULL;
	if (rc != 0) {
		fprintf(stderr, "boidsim: %s\n", err.msg);
		goto out;
	}
	if (strcmp(out, "-") != 0 && agents)
		ctx_log(&cmd_ctx, CTX_NORMAL, "wrote %s (%" PRIu64 " frames, at most %" PRIu64 " agents a "
			 "frame)", out, written, most);
	else if (strcmp(out, "-") != 0)
		ctx_log(&cmd_ctx, CTX_NORMAL, "wrote %s (%" PRIu64 " frames, %zu boids)", out, written, nids);
	status = lost ? EXIT_INCOMPLETE : 0;
out:
	traj_writer_abort(w, NULL);
	convert_tmp[0] = '\0';
	free_bufs(&in);
	free_bufs(&asub);
	free(ranges);
	traj_reader_close(r);
	return status;
}
