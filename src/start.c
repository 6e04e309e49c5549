/* start.c: a flock's start read from a file: a frame of any boidsim
 * trajectory, through the trajectory reader, or a plain CSV of positions
 * and velocities (a header x,y[,z],vx,vy[,vz], then one boid a row, in id
 * order), so that a run can go on from another run's state or from
 * measured data. */
#include "config.h"
#include "start.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "obstacles.h"
#include "traj.h"

/* Speeds a start may have: a tolerance for the binary32 rounding of a
 * velocity written at exactly a limit. */
#define START_SPEED_TOL 1e-6

static const char *const PLAIN_HEADER[2] = {"x,y,vx,vy", "x,y,z,vx,vy,vz"};

/* Reads a plain CSV (its header line already read, line 1) into data. */
static int read_plain(FILE *fp, const struct scenario *sc, float *data, struct util_err *err)
{
	const size_t n = (size_t)sc->count;
	const int nf = 2 * sc->dims;
	char line[1024];
	size_t row = 0;
	long lno = 1;

	long at = ftell(fp);

	while (fgets(line, sizeof line, fp)) {
		char *p = line, *end;
		long next = ftell(fp);
		int f;

		lno++;
		/* fgets copied more than strlen sees (the file is seekable: a
		 * stream was copied into a temporary file, open_once) */
		if (at >= 0 && next >= 0 && (size_t)(next - at) != strlen(line)) {
			util_err_set(err, "%s:%ld:%zu: a NUL byte (the file is not text)",
				     sc->start_file, lno, strlen(line) + 1);
			return -1;
		}
		at = next;
		if (strchr(line, '\n') == NULL && !feof(fp)) {
			util_err_set(err, "%s:%ld: line too long", sc->start_file, lno);
			return -1;
		}
		if (line[0] == '\n' || (line[0] == '\r' && line[1] == '\n'))
			continue;
		if (row == n) {
			util_err_set(err, "%s:%ld: more than count (%zu) rows", sc->start_file, lno, n);
			return -1;
		}
		for (f = 0; f < nf; f++) {
			float v;
			int ok = traj_csv_value(p, &end, &v) == 0;

			if (f + 1 < nf)
				ok = ok && *end == ',';
			else
				ok = ok && (*end == '\0' || strcmp(end, "\n") == 0 ||
					    strcmp(end, "\r\n") == 0);
			if (!ok) {
				util_err_set(err, "%s:%ld:%ld: expected a number%s (the CSV grammar "
					     "of boidsim-trajectory(5))", sc->start_file, lno,
					     (long)(p - line) + 1,
					     f + 1 < nf ? " and a comma" : " ending the line");
				return -1;
			}
			data[(size_t)f * n + row] = v;
			p = end + 1;
		}
		row++;
	}
	if (ferror(fp)) {
		util_err_set(err, "%s: cannot read: %s", sc->start_file, strerror(errno));
		return -1;
	}
	if (row != n) {
		util_err_set(err, "%s: %zu rows, but count is %zu", sc->start_file, row, n);
		return -1;
	}
	return 0;
}

/* Reads the frame at sc->start_step (the last when UINT64_MAX) of a
 * trajectory into data: the boids (group 0), in id order. */
static int read_traj(struct scenario *sc, int fd, float *data, double *precision,
		     struct util_err *err)
{
	const size_t n = (size_t)sc->count;
	struct traj_reader *r = traj_reader_open_fd(fd, sc->start_file, err);
	const struct traj_header *h;
	float *fields[TRAJ_FIELDS_MAX] = {NULL};
	struct traj_agents ag = {0, NULL, NULL};
	uint64_t step = 0, first = 0, last = 0, frames = 0, boids = 0;
	int rc = -1, got = 0, f, more;

	if (r == NULL)
		return -1;
	h = traj_reader_header(r);
	if (h->dims != sc->dims) {
		util_err_set(err, "%s: a %dD trajectory, but the scenario is %dD", sc->start_file,
			     h->dims, sc->dims);
		goto out;
	}
	if (!h->has_agents && h->count != sc->count) {
		util_err_set(err, "%s: %llu boids, but count is %zu", sc->start_file,
			     (unsigned long long)h->count, n);
		goto out;
	}
	sc->start_hue = h->has_hue && sc->has_hue;
	for (f = 0; f < h->fields; f++)
		if (!(fields[f] = util_alloc((size_t)h->count, sizeof(float), err)))
			goto out;
	if (!(ag.id = util_alloc((size_t)h->count, sizeof(uint32_t), err)) ||
	    !(ag.group = util_alloc((size_t)h->count, sizeof(uint32_t), err)))
		goto out;
	while ((more = traj_read_frame_agents(r, &step, fields, &ag, err)) == 1) {
		uint64_t k;

		if (frames++ == 0)
			first = step;
		last = step;
		if (sc->start_step != UINT64_MAX && step != sc->start_step)
			continue;
		/* without start.step every frame may be the last: only its
		 * count must be the scenario's (checked after the loop) */
		got = 0;
		boids = 0;
		for (k = 0; k < ag.n; k++)
			boids += ag.group[k] == 0;
		if (boids != sc->count) {
			if (sc->start_step == UINT64_MAX)
				continue;
			util_err_set(err, "%s: the frame at step %llu has %llu boids, but count is %zu",
				     sc->start_file, (unsigned long long)step,
				     (unsigned long long)boids, n);
			goto out;
		}
		/* boids come first, in id order: row k is boid k's place */
		for (f = 0; f < 2 * sc->dims; f++)
			memcpy(data + (size_t)f * n, fields[f], n * sizeof(float));
		if (sc->start_hue)
			memcpy(data + (size_t)(2 * sc->dims) * n, fields[2 * sc->dims],
			       n * sizeof(float));
		got = 1;
		if (sc->start_step != UINT64_MAX)
			break;
	}
	if (more < 0)
		goto out;
	if (!got && frames > 0 && sc->start_step == UINT64_MAX) {
		util_err_set(err, "%s: the last frame (step %llu) has %llu boids, but count is %zu",
			     sc->start_file, (unsigned long long)last, (unsigned long long)boids, n);
		goto out;
	}
	if (!got) {
		if (frames == 0)
			util_err_set(err, "%s: the trajectory has no frame", sc->start_file);
		else
			util_err_set(err, "%s: no frame at step %llu (its frames are at steps %llu "
				     "to %llu)", sc->start_file, (unsigned long long)sc->start_step,
				     (unsigned long long)first, (unsigned long long)last);
		goto out;
	}
	sc->start_step = sc->start_step == UINT64_MAX ? last : sc->start_step;
	*precision = traj_reader_precision(r);
	rc = 0;
out:
	for (f = 0; f < TRAJ_FIELDS_MAX; f++)
		util_free(fields[f]);
	util_free(ag.id);
	util_free(ag.group);
	traj_reader_close(r);
	return rc;
}

/* The state read must be one the scenario could be in. A lossy
 * trajectory's velocities are within precision/2 per component. */
static int check_state(const struct scenario *sc, const float *data, double precision,
		       struct util_err *err)
{
	const size_t n = (size_t)sc->count;
	const int dims = sc->dims;
	const double slack = precision / 2 * sqrt((double)dims);
	const double lo = sc->model == MODEL_INERTIA ? 0 :
			  sc->speed_min * (1 - START_SPEED_TOL) - slack;
	/* inertia's directions are not unit vectors: any speed a scenario
	 * value may have */
	const double hi = sc->model == MODEL_INERTIA ? SCENARIO_VALUE_MAX :
			  sc->speed_max * (1 + START_SPEED_TOL) + slack;
	size_t i;
	int d, o;

	for (i = 0; i < n; i++) {
		double x[3] = {0, 0, 0}, q[3], v2 = 0, sp;
		int inside;

		for (d = 0; d < dims; d++) {
			float p = data[(size_t)d * n + i], v = data[(size_t)(dims + d) * n + i];

			if (!isfinite(p) || !isfinite(v)) {
				util_err_set(err, "%s: boid %zu has a non-finite value", sc->start_file, i);
				return -1;
			}
			if ((sc->mode == BOUNDS_WRAP && !(p >= sc->bmin[d] && p < sc->bmax[d])) ||
			    (sc->mode == BOUNDS_REFLECT && !(p >= sc->bmin[d] && p <= sc->bmax[d]))) {
				util_err_set(err, "%s: boid %zu is outside the bounds box (axis %d: %.9g)",
					     sc->start_file, i, d, p);
				return -1;
			}
			if (fabs(p) > SCENARIO_VALUE_MAX) {
				util_err_set(err, "%s: boid %zu is at %.9g on axis %d, beyond the %g "
					     "a coordinate may have", sc->start_file, i, p, d,
					     SCENARIO_VALUE_MAX);
				return -1;
			}
			x[d] = p;
			v2 += (double)v * v;
		}
		if (sc->start_hue) {
			float h = data[(size_t)(2 * dims) * n + i];

			if (!(h >= 0.0f && h < 1.0f)) {
				util_err_set(err, "%s: boid %zu has hue %.9g, not in [0, 1)",
					     sc->start_file, i, h);
				return -1;
			}
		}
		sp = sqrt(v2);
		if (sp > hi || (sp < lo && !(sp == 0.0 && sc->speed_min == 0.0))) {
			util_err_set(err, "%s: boid %zu has speed %.9g, outside [speed.min, "
				     "speed.max] ([%g, %g])", sc->start_file, i, sp, sc->speed_min,
				     sc->speed_max);
			return -1;
		}
		for (o = 0; o < sc->n_obstacles; o++) {
			obstacle_nearest(&sc->obstacles[o], dims, x, q, &inside);
			if (inside) {
				util_err_set(err, "%s: boid %zu is inside obstacle %d", sc->start_file,
					     i, o);
				return -1;
			}
		}
	}
	return 0;
}

/* The most of a start file that is not a regular file (a pipe) that is
 * copied, so that an endless stream (a device) ends with a message. */
#define START_STREAM_MAX (1ull << 30)

/* The start file, opened once (so that a pipe, or a file replaced while
 * it is read, is read as one file): its descriptor, at the start of a
 * regular file, or a stream copied first into an unnamed temporary file
 * (the format is told from the first line, which a stream cannot give
 * back). */
static int open_once(const struct scenario *sc, struct util_err *err)
{
	unsigned char buf[1 << 16];
	struct stat st;
	FILE *spool;
	ssize_t got;
	uint64_t total = 0;
	int fd = open(sc->start_file, O_RDONLY), copy, wrote = 1;

	if (fd < 0) {
		util_err_set(err, "%s: cannot open: %s (start.file)", sc->start_file, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
		return fd;
	if (!(spool = tmpfile())) {
		util_err_set(err, "%s: cannot make a temporary file to read it into: %s",
			     sc->start_file, strerror(errno));
		close(fd);
		return -1;
	}
	while ((got = read(fd, buf, sizeof buf)) > 0 || (got < 0 && errno == EINTR)) {
		if (got < 0)
			continue;
		total += (uint64_t)got;
		if (total > START_STREAM_MAX)
			break;
		if (fwrite(buf, 1, (size_t)got, spool) != (size_t)got) {
			wrote = 0;
			break;
		}
	}
	if (got != 0) {
		if (total > START_STREAM_MAX)
			util_err_set(err, "%s: more than 1 GiB from a file that is not a regular "
				     "file (start.file)", sc->start_file);
		else
			util_err_set(err, "%s: cannot %s: %s", sc->start_file,
				     wrote ? "read" : "copy it into a temporary file", strerror(errno));
		close(fd);
		fclose(spool);
		return -1;
	}
	close(fd);
	copy = fflush(spool) == 0 ? dup(fileno(spool)) : -1;
	fclose(spool);
	if (copy < 0 || lseek(copy, 0, SEEK_SET) != 0) {
		util_err_set(err, "%s: cannot read back its temporary copy: %s", sc->start_file,
			     strerror(errno));
		if (copy >= 0)
			close(copy);
		return -1;
	}
	return copy;
}

int start_load(struct scenario *sc, struct util_err *err)
{
	const size_t n = (size_t)sc->count;
	char head[64];
	FILE *fp = NULL;
	float *data = NULL;
	double precision = 0.0;
	ssize_t got;
	int rc = -1, plain, fd;

	if (sc->start_file == NULL)
		return 0;
	if ((fd = open_once(sc, err)) < 0)
		return -1;
	/* A plain CSV says so in its first line; anything else is read as a
	 * trajectory, which names what is wrong with it. */
	got = pread(fd, head, sizeof head - 1, 0);
	head[got > 0 ? got : 0] = '\0';
	head[strcspn(head, "\n")] = '\0';
	plain = strncmp(head, "x,", 2) == 0;
	if (plain) {
		head[strcspn(head, "\r")] = '\0';
		if (strcmp(head, PLAIN_HEADER[sc->dims - 2]) != 0) {
			util_err_set(err, "%s:1: expected the header %s (dimensions is %d)",
				     sc->start_file, PLAIN_HEADER[sc->dims - 2], sc->dims);
			goto out;
		}
	}
	sc->start_fields = 2 * sc->dims + (sc->has_hue ? 1 : 0);
	if (!(data = util_alloc(n, (size_t)sc->start_fields * sizeof(float), err)))
		goto out;
	if (plain && sc->start_step != UINT64_MAX) {
		util_err_set(err, "%s: start.step: a plain CSV holds one state, not frames",
			     sc->start_file);
		goto out;
	}
	if (plain) {
		char line[sizeof head];

		if (!(fp = fdopen(fd, "rb"))) {
			util_err_set(err, "%s: %s", sc->start_file, strerror(errno));
			goto out;
		}
		fd = -1;
		/* past the header, which was read above */
		if (!fgets(line, sizeof line, fp) || read_plain(fp, sc, data, err) != 0)
			goto out;
	} else {
		/* the reader owns the descriptor, whatever happens */
		got = read_traj(sc, fd, data, &precision, err);
		fd = -1;
		if (got != 0)
			goto out;
	}
	if (check_state(sc, data, precision, err) != 0)
		goto out;
	sc->start_data = data;
	data = NULL;
	rc = 0;
out:
	util_free(data);
	if (fp)
		fclose(fp);
	if (fd >= 0)
		close(fd);
	return rc;
}
