/* checkpoint.c: writes and reads checkpoints: magic, version, dims, count,
 * step, the effective scenario, the program version, the output files and
 * what each held before the step's outputs (bytes and CRC-32), the
 * wandering target; with a population schedule the next id and the live
 * ids in increasing order, and where it disables boids their count, then
 * each one's id and state (positions, velocities, hue fields), the first
 * disabled first; the positions and velocities in id order, with
 * colour following the hue vectors (cosines, then sines, then with a
 * colour velocity the rates) in id order; with
 * predators their positions and velocities; CRC-32. Which optional parts
 * are there follows from the scenario, which must match, so checkpoints
 * of scenarios without them are as they always were. */
#include "config.h"
#include "checkpoint.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "outfile.h"
#include "traj.h"

struct sink {
	FILE *fp;
	uLong crc;
	int bad;
};

static void put(struct sink *k, const void *p, size_t n)
{
	if (n == 0) /* crc32 of a NULL buffer would restart the CRC */
		return;
	if (fwrite(p, 1, n, k->fp) != n)
		k->bad = 1;
	k->crc = crc32_z(k->crc, p, n);
}

static void put_u32(struct sink *k, uint32_t v)
{
	unsigned char b[4];

	traj_put_u32(b, v);
	put(k, b, 4);
}

static void put_u64(struct sink *k, uint64_t v)
{
	unsigned char b[8];

	traj_put_u64(b, v);
	put(k, b, 8);
}

static void put_str(struct sink *k, const char *s)
{
	size_t n = s ? strlen(s) : 0;

	put_u32(k, (uint32_t)n);
	put(k, s, n);
}

/* Whether field d of a disabled boid's state (flock.h) is the flock's:
 * its positions and velocities, then its hue fields. */
static int park_field_used(const struct flock *f, int d)
{
	return d < 6 ? d % 3 < f->dims : d - 6 < f->hue_fields;
}

int checkpoint_write(const char *path, const struct sim *s, const struct flock *f,
		     const char *scenario_json, const char *generator,
		     const struct checkpoint_files *files, struct util_err *err)
{
	struct outfile o;
	struct sink k = {NULL, 0, 0};
	float *buf[FLOCK_FIELDS_MAX + 3] = {0};
	size_t n = f->n, i;
	int d, rc = -1, nf = flock_fields(f), nh = f->hue_fields;

	if (outfile_open(&o, path, err) != 0)
		return -1;
	for (d = 0; d < nf + nh; d++)
		if (!(buf[d] = util_alloc(n, sizeof(float), err)))
			goto out;
	flock_to_id_order(f, buf);
	flock_hue_to_id_order(f, buf + nf);
	k.fp = o.fp;
	k.crc = crc32(0L, Z_NULL, 0);
	put(&k, CHECKPOINT_MAGIC, 8);
	put_u32(&k, CHECKPOINT_VERSION);
	put_u32(&k, (uint32_t)f->dims);
	put_u64(&k, (uint64_t)n);
	put_u64(&k, s->step);
	put_str(&k, scenario_json);
	put_str(&k, generator);
	put_str(&k, files->output);
	put_str(&k, files->output_tmp);
	put_str(&k, files->metrics);
	put_str(&k, files->metrics_tmp);
	put_u64(&k, files->output_bytes);
	put_u32(&k, files->output_sum);
	put_u64(&k, files->metrics_bytes);
	put_u32(&k, files->metrics_sum);
	for (d = 0; d < 3; d++) {
		uint64_t u;

		memcpy(&u, &s->rp.target[d], 8);
		put_u64(&k, u);
	}
	if (f->rank) {
		put_u32(&k, f->next_id);
		for (i = 0; i < n; i++)
			put_u32(&k, f->live[i]);
	}
	if (s->sc->park_max > 0) {
		put_u64(&k, (uint64_t)f->n_parked);
		for (i = 0; i < f->n_parked; i++) {
			put_u32(&k, f->park_id[i]);
			for (d = 0; d < FLOCK_PARK_FIELDS; d++)
				if (park_field_used(f, d))
					put(&k, &f->park[i * FLOCK_PARK_FIELDS + (size_t)d], 4);
		}
	}
	/* positions, velocities, then the hue's vectors (not its turns) and rates */
	for (d = 0; d < nf + nh; d++)
		for (i = 0; i < n && (d < 2 * f->dims || d >= nf); i++) {
			uint32_t u;

			memcpy(&u, &buf[d][i], 4);
			put_u32(&k, u);
		}
	for (d = 0; d < 2 * f->dims; d++) {
		const float *src = d < f->dims ? s->pred.pos[d] : s->pred.vel[d - f->dims];

		for (i = 0; i < (size_t)s->pred.n; i++) {
			uint32_t u;

			memcpy(&u, &src[i], 4);
			put_u32(&k, u);
		}
	}
	put_u32(&k, (uint32_t)k.crc);
	if (k.bad) {
		util_err_set(err, "%s: write failed: %s", path, strerror(errno));
		goto out;
	}
	rc = outfile_commit(&o, err);
out:
	if (rc != 0)
		outfile_abort(&o, NULL);
	for (d = 0; d < FLOCK_FIELDS_MAX + 3; d++)
		util_free(buf[d]);
	return rc;
}

struct source {
	unsigned char *p, *end;
	int bad, nul; /* nul: a string held a NUL byte, which C would cut it at */
};

static const unsigned char *take(struct source *r, size_t n)
{
	const unsigned char *q = r->p;

	if ((size_t)(r->end - r->p) < n) {
		r->bad = 1;
		return NULL;
	}
	r->p += n;
	return q;
}

static uint32_t get_u32(struct source *r)
{
	const unsigned char *q = take(r, 4);

	return q ? traj_get_u32(q) : 0;
}

static uint64_t get_u64(struct source *r)
{
	const unsigned char *q = take(r, 8);

	return q ? traj_get_u64(q) : 0;
}

static char *get_str(struct source *r)
{
	uint32_t n = get_u32(r);
	const unsigned char *q;
	char *s;

	if (n > CHECKPOINT_STRING_MAX)
		r->bad = 1; /* (not skipped: what follows would be read askew) */
	if (r->bad || !(q = take(r, n)))
		return NULL;
	if (memchr(q, '\0', n) != NULL) {
		r->nul = 1;
		return NULL;
	}
	if (!(s = malloc((size_t)n + 1)))
		return NULL;
	memcpy(s, q, n);
	s[n] = '\0';
	return s;
}

/* A value the run cannot reach: not finite, or outside the box that
 * wrap or reflect bounds keep every boid and predator in. */
static int bad_value(const struct bounds *b, int d, float p, float v)
{
	if (!isfinite(p) || !isfinite(v))
		return 1;
	return bounds_outside(b, d, p);
}

/* The state read, checked as a scenario is, so that a damaged or crafted
 * checkpoint is refused instead of being simulated. */
static int state_check(const char *path, const struct sim *s, struct util_err *err)
{
	const struct flock *f = &s->flock;
	const struct bounds *b = &s->rp.ip.box;
	size_t i;
	int d;

	for (i = 0; i < f->n; i++) {
		int bad = f->has_hue && !(isfinite(f->hue[0][i]) && isfinite(f->hue[1][i]) &&
					  (f->hue_fields < 3 || isfinite(f->hue[2][i])));

		for (d = 0; d < f->dims; d++)
			bad |= bad_value(b, d, f->pos[d][i], f->vel[d][i]);
		if (bad) {
			util_err_set(err, "%s: checkpoint damaged (boid %u: a position outside the box "
				     "or a value not finite)", path, f->id[i]);
			return -1;
		}
	}
	for (i = 0; i < f->n_parked; i++)
		for (d = 0; d < f->dims; d++)
			if (bad_value(b, d, f->park[i * FLOCK_PARK_FIELDS + (size_t)d],
				      f->park[i * FLOCK_PARK_FIELDS + 3 + (size_t)d])) {
				util_err_set(err, "%s: checkpoint damaged (disabled boid %u: a position "
					     "outside the box or a value not finite)", path,
					     f->park_id[i]);
				return -1;
			}
	for (i = 0; i < (size_t)s->pred.n; i++)
		for (d = 0; d < f->dims; d++)
			if (bad_value(b, d, s->pred.pos[d][i], s->pred.vel[d][i])) {
				util_err_set(err, "%s: checkpoint damaged (predator %zu: a position "
					     "outside the box or a value not finite)", path, i);
				return -1;
			}
	return 0;
}

/* The disabled boids: at most as many as the schedule can have disabled
 * by now, each id given, not live and not twice (marked in rank while
 * read, then unmarked), each value finite. */
static int read_parked(struct source *r, struct flock *f, uint64_t most, uint32_t next)
{
	const uint32_t MARK = UINT32_MAX - 1;
	uint64_t np = get_u64(r);
	size_t i;
	int d, bad = r->bad || np > most;

	for (i = 0; i < np && !bad; i++) {
		uint32_t id = get_u32(r);

		if (id >= next || f->rank[id] != UINT32_MAX) {
			bad = 1;
			break;
		}
		f->rank[id] = MARK;
		f->park_id[i] = id;
		for (d = 0; d < FLOCK_PARK_FIELDS; d++) {
			uint32_t u = park_field_used(f, d) ? get_u32(r) : 0;
			float v;

			memcpy(&v, &u, 4);
			f->park[i * FLOCK_PARK_FIELDS + (size_t)d] = v;
			bad |= !isfinite(v);
		}
		f->n_parked = i + 1;
	}
	for (i = 0; i < f->n_parked; i++)
		f->rank[f->park_id[i]] = UINT32_MAX;
	bad |= r->bad;
	if (bad)
		f->n_parked = 0;
	return bad ? -1 : 0;
}

/* The fields before the state. */
struct head {
	uint32_t version, dims;
	uint64_t n, step;
	char *json, *gen;
};

/* A checkpoint's bytes, whole: its magic and CRC-32 checked; *size of
 * them (the caller frees). NULL with err set when it is not one. */
static unsigned char *load(const char *path, long *size, struct util_err *err)
{
	FILE *fp = fopen(path, "rb");
	unsigned char *data = NULL;

	if (fp == NULL) {
		util_err_set(err, "%s: cannot open checkpoint: %s", path, strerror(errno));
		return NULL;
	}
	if (fseek(fp, 0, SEEK_END) != 0 || (*size = ftell(fp)) < 12 || fseek(fp, 0, SEEK_SET) != 0 ||
	    !(data = malloc((size_t)*size)) || fread(data, 1, (size_t)*size, fp) != (size_t)*size) {
		util_err_set(err, "%s: not a readable checkpoint", path);
		goto fail;
	}
	if (memcmp(data, CHECKPOINT_MAGIC, 8) != 0) {
		util_err_set(err, "%s: not a boidsim checkpoint", path);
		goto fail;
	}
	if (traj_get_u32(data + *size - 4) != (uint32_t)crc32_z(crc32(0L, Z_NULL, 0), data,
								(size_t)*size - 4)) {
		util_err_set(err, "%s: checkpoint damaged (CRC mismatch)", path);
		goto fail;
	}
	fclose(fp);
	return data;
fail:
	free(data);
	fclose(fp);
	return NULL;
}

/* r over the size bytes of data (from load), then the header and the
 * files (checkpoint_write's order) read into h and files; r->bad or
 * r->nul when they are not there whole. */
static void read_head(struct source *r, unsigned char *data, long size, struct head *h,
		      struct checkpoint_files *files)
{
	r->p = data + 8;
	r->end = data + size - 4;
	r->bad = r->nul = 0;
	h->version = get_u32(r);
	h->dims = get_u32(r);
	h->n = get_u64(r);
	h->step = get_u64(r);
	h->json = get_str(r);
	h->gen = get_str(r);
	files->output = get_str(r);
	files->output_tmp = get_str(r);
	files->metrics = get_str(r);
	files->metrics_tmp = get_str(r);
	files->output_bytes = get_u64(r);
	files->output_sum = get_u32(r);
	files->metrics_bytes = get_u64(r);
	files->metrics_sum = get_u32(r);
}

int checkpoint_peek(const char *path, struct checkpoint_files *files, struct util_err *err)
{
	struct head h;
	struct source r;
	unsigned char *data;
	long size;

	memset(files, 0, sizeof *files);
	if (!(data = load(path, &size, err)))
		return -1;
	read_head(&r, data, size, &h, files);
	free(h.json);
	free(h.gen);
	free(data);
	if (h.version != CHECKPOINT_VERSION || r.bad || r.nul) {
		checkpoint_files_free(files);
		util_err_set(err, "%s: checkpoint of another format version, or damaged", path);
		return -1;
	}
	return 0;
}

int checkpoint_read(const char *path, struct sim *s, const char *scenario_json,
		    const char *generator, struct checkpoint_files *files,
		    struct util_err *err)
{
	struct flock *f = &s->flock;
	unsigned char *data;
	struct source r;
	struct head h;
	long size;
	size_t i;
	double tgt[3];
	int d, rc = -1;

	memset(files, 0, sizeof *files);
	memset(&h, 0, sizeof h);
	if (!(data = load(path, &size, err)))
		return -1;
	read_head(&r, data, size, &h, files);
	/* (without a population schedule the flock is the scenario's count; not
	 * f->n, which in a split run is this part's share) */
	if (h.version != CHECKPOINT_VERSION || h.dims != (uint32_t)f->dims ||
	    h.n > (uint64_t)f->cap || (!f->rank && h.n != s->sc->count)) {
		util_err_set(err, "%s: checkpoint of another format version or flock size", path);
		goto out;
	}
	s->step = h.step;
	if (r.nul)
		goto nul;
	if (r.bad) {
		/* a string longer than any a run writes, or the file cut short */
		util_err_set(err, "%s: checkpoint damaged (its names and scenario)", path);
		goto out;
	}
	if (h.json == NULL || h.gen == NULL ||
	    (scenario_json && strcmp(h.json, scenario_json) != 0)) {
		util_err_set(err, "%s: checkpoint of another scenario (the effective scenario, "
			     "after overrides, must be the same)", path);
		goto out;
	}
	if (strcmp(h.gen, generator) != 0) {
		util_err_set(err, "%s: checkpoint written by %s, this is %s: a run resumes with "
			     "the version and the --neighbours that wrote its checkpoint", path, h.gen,
			     generator);
		goto out;
	}
	if (s->step > s->sc->steps) {
		util_err_set(err, "%s: checkpoint damaged (step %llu beyond the run's %llu)", path,
			     (unsigned long long)s->step, (unsigned long long)s->sc->steps);
		goto out;
	}
	for (d = 0; d < 3; d++) {
		uint64_t u = get_u64(&r);

		memcpy(&tgt[d], &u, 8);
	}
	memcpy(s->rp.target, tgt, sizeof tgt);
	/* The ids: slot k holds the boid of rank k, as after flock_init. */
	if (h.n < (uint64_t)f->n)
		flock_shrink(f, (size_t)h.n);
	f->n = (size_t)h.n;
	if (f->rank) {
		/* What the schedule allows at this step: exactly its ids so
		 * far, and at most its bound of boids (none is allowed: a
		 * schedule may take them all), all live ids increasing and
		 * below the next. */
		uint32_t next = get_u32(&r);
		uint64_t ids, most, parked;

		scenario_population_at(s->sc, s->step, &ids, &most, &parked);
		if (next != ids || h.n > most)
			r.bad = 1;
		for (i = 0; i < f->n && !r.bad; i++) {
			f->id[i] = get_u32(&r);
			if (f->id[i] >= next || (i > 0 && f->id[i] <= f->id[i - 1]))
				r.bad = 1;
		}
		if (r.bad) {
			util_err_set(err, "%s: checkpoint damaged (ids)", path);
			goto out;
		}
		f->next_id = next;
		flock_reindex(f);
		if (s->sc->park_max > 0 && read_parked(&r, f, parked, next) != 0) {
			util_err_set(err, "%s: checkpoint damaged (disabled boids)", path);
			goto out;
		}
	} else {
		for (i = 0; i < f->n; i++)
			f->id[i] = (uint32_t)i;
	}
	for (d = 0; d < 2 * f->dims + f->hue_fields; d++) {
		float *dst = d < f->dims ? f->pos[d] : d < 2 * f->dims ? f->vel[d - f->dims] :
			     f->hue[d - 2 * f->dims];

		for (i = 0; i < f->n; i++) {
			uint32_t u = get_u32(&r);

			memcpy(&dst[i], &u, 4);
		}
	}
	for (d = 0; d < 2 * f->dims; d++) {
		float *dst = d < f->dims ? s->pred.pos[d] : s->pred.vel[d - f->dims];

		for (i = 0; i < (size_t)s->pred.n; i++) {
			uint32_t u = get_u32(&r);

			memcpy(&dst[i], &u, 4);
		}
	}
	/* The parameters in force at the step, then the run's invariants
	 * there (speeds too), which every state a run reaches keeps. */
	if (!r.bad) {
		struct util_err why;

		sim_enter_stages(s);
		/* The target a run can have here: the one in force (a stage's,
		 * or the scenario's), or a wandering one's start or a point of
		 * its region; anything else (a crafted one, far or not finite)
		 * would turn every boid's steering into NaN. */
		for (d = 0; d < 3; d++) {
			const struct scenario *sc0 = s->sc;
			int ok = sc0->has_wander && d < f->dims ?
					 tgt[d] == sc0->target[d] ||
						 (tgt[d] >= sc0->wander_min[d] &&
						  tgt[d] <= sc0->wander_max[d]) :
					 tgt[d] == s->cur->target[d];

			if (!ok) {
				util_err_set(err, "%s: checkpoint damaged (the target)", path);
				goto out;
			}
		}
		if (state_check(path, s, err) != 0)
			goto out;
		if (sim_check(s, &why) != 0) {
			util_err_set(err, "%s: checkpoint damaged (%s)", path, why.msg);
			goto out;
		}
	}
	/* The population events up to this step are in the state. */
	for (s->next_event = 0; s->next_event < s->sc->n_events &&
	     s->sc->events[s->next_event].step <= s->step; s->next_event++)
		;
	if (r.bad || r.p != r.end) {
		util_err_set(err, "%s: checkpoint damaged (wrong length)", path);
		goto out;
	}
	rc = 0;
	goto out;
nul:
	util_err_set(err, "%s: checkpoint damaged (a NUL byte in a string)", path);
out:
	if (rc != 0)
		checkpoint_files_free(files);
	free(h.json);
	free(h.gen);
	free(data);
	return rc;
}

void checkpoint_files_free(struct checkpoint_files *files)
{
	free(files->output);
	free(files->output_tmp);
	free(files->metrics);
	free(files->metrics_tmp);
	memset(files, 0, sizeof *files);
}

/* One output: given now as it was then, and its temporary name its own. */
static int file_check(const char *path, const char *opt, const char *then, const char *tmp,
		      const char *now, struct util_err *err)
{
	char a[200], b[200];

	if (then && !then[0])
		then = NULL;
	if (!then != !now || (then && strcmp(then, now) != 0)) {
		snprintf(a, sizeof a, then ? "%s %s" : "no %s", opt, then);
		snprintf(b, sizeof b, now ? "%s %s" : "no %s", opt, now);
		util_err_set(err, "%s: checkpoint of a run with %s, not %s (resume with the "
			     "same command)", path, a, b);
		return -1;
	}
	if (tmp && tmp[0] && (!now || !outfile_is_temp(tmp, now))) {
		util_err_set(err, "%s: checkpoint damaged (the temporary file of %s is not "
			     "named after it)", path, opt);
		return -1;
	}
	return 0;
}

int checkpoint_files_check(const char *path, const struct checkpoint_files *files,
			   const char *output, const char *metrics, struct util_err *err)
{
	if (file_check(path, "-o", files->output, files->output_tmp, output, err) != 0 ||
	    file_check(path, "--metrics", files->metrics, files->metrics_tmp, metrics, err) != 0)
		return -1;
	return 0;
}
