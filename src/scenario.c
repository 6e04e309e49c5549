/* scenario.c: reads a JSON scenario, applies --set overrides, validates every
 * field against the schema below, and writes the effective scenario back. */
#include "config.h"
#include "scenario.h"
#include "obstacles.h"
#include "traj.h"
#include "detmath.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- schema -------------------------------------------------------------
 * Every key a scenario may hold. Unknown keys are errors, so that a typo is
 * never silently ignored. */
struct skey {
	const char *name;
	const struct skey *sub; /* non-NULL: the value is an object of these */
	int kind;               /* SKEY_ARRAY: an array of such objects;
				 * SKEY_FREE: an object checked elsewhere */
};

#define SKEY_ARRAY 1
#define SKEY_FREE 2

/* Room for a double in %.17g, sign and exponent included. */
#define NUM_TEXT_MAX 32

static const struct skey RADII_KEYS[] = {
	{"separation", NULL, 0}, {"alignment", NULL, 0}, {"cohesion", NULL, 0},
	{"avoid", NULL, 0}, {"flee", NULL, 0}, {NULL, NULL, 0}};
static const struct skey WEIGHT_KEYS[] = {
	{"separation", NULL, 0}, {"alignment", NULL, 0}, {"cohesion", NULL, 0},
	{"target", NULL, 0}, {"bounds", NULL, 0}, {"avoid", NULL, 0}, {"flee", NULL, 0},
	{NULL, NULL, 0}};
static const struct skey NOISE_KEYS[] = {{"amplitude", NULL, 0}, {"period", NULL, 0}, {NULL, NULL, 0}};
static const struct skey SPEED_KEYS[] = {
	{"min", NULL, 0}, {"max", NULL, 0}, {"variation", NULL, 0}, {"noise", NOISE_KEYS, 0}, {NULL, NULL, 0}};
static const struct skey WANDER_KEYS[] = {
	{"min", NULL, 0}, {"max", NULL, 0}, {"interval", NULL, 0}, {NULL, NULL, 0}};
static const struct skey WAYPOINT_KEYS[] = {{"step", NULL, 0}, {"position", NULL, 0}, {NULL, NULL, 0}};
static const struct skey ATTRACTOR_KEYS[] = {
	{"position", NULL, 0}, {"waypoints", WAYPOINT_KEYS, SKEY_ARRAY}, {"strength", NULL, 0},
	{"range", NULL, 0}, {NULL, NULL, 0}};
/* "type", then each type's keys in OBSTACLE_TYPES' order (which says
 * which are whose). */
static const struct skey OBSTACLE_KEYS[] = {
	{"type", NULL, 0}, {"center", NULL, 0}, {"radius", NULL, 0}, {"min", NULL, 0},
	{"max", NULL, 0}, {"from", NULL, 0}, {"to", NULL, 0}, {"points", NULL, 0},
	{NULL, NULL, 0}};
static const struct skey SCHEDULE_KEYS[] = {
	{"step", NULL, 0}, {"set", NULL, SKEY_FREE}, {NULL, NULL, 0}};
static const struct skey BOUNDS_KEYS[] = {
	{"min", NULL, 0}, {"max", NULL, 0}, {"mode", NULL, 0}, {"margin", NULL, 0}, {NULL, NULL, 0}};
static const struct skey TARGET_KEYS[] = {
	{"position", NULL, 0}, {"radius", NULL, 0}, {"wander", WANDER_KEYS, 0}, {NULL, NULL, 0}};
static const struct skey REGION_KEYS[] = {{"min", NULL, 0}, {"max", NULL, 0}, {NULL, NULL, 0}};
static const struct skey PREDATOR_KEYS[] = {
	{"count", NULL, 0}, {"speed", NULL, 0}, {"chase", NULL, 0}, {"range", NULL, 0},
	{"max_turn", NULL, 0}, {"region", REGION_KEYS, 0}, {NULL, NULL, 0}};
static const struct skey EVENT_KEYS[] = {
	{"step", NULL, 0}, {"add", NULL, 0}, {"remove", NULL, 0}, {"disable", NULL, 0},
	{"enable", NULL, 0}, {"region", REGION_KEYS, 0}, {NULL, NULL, 0}};
static const struct skey RETURN_KEYS[] = {
	{"center", NULL, 0}, {"radius", NULL, 0}, {"weight", NULL, 0}, {NULL, NULL, 0}};
static const struct skey START_KEYS[] = {
	{"shape", NULL, 0}, {"min", NULL, 0}, {"max", NULL, 0}, {"center", NULL, 0},
	{"radius", NULL, 0}, {"heading", NULL, 0}, {"spread", NULL, 0}, {"speed", NULL, 0},
	{"file", NULL, 0}, {"step", NULL, 0}, {NULL, NULL, 0}};
static const struct skey HUE_KEYS[] = {{"weight", NULL, 0}, {"radius", NULL, 0},
				       {"alignment", NULL, 0}, {"spin", NULL, 0},
				       {NULL, NULL, 0}};
static const struct skey OUTPUT_KEYS[] = {
	{"every", NULL, 0}, {"compressor", NULL, 0}, {"compression", NULL, 0},
	{"precision", NULL, 0}, {NULL, NULL, 0}};
static const struct skey ROOT_KEYS[] = {
	{"description", NULL, 0}, {"dimensions", NULL, 0}, {"count", NULL, 0},
	{"steps", NULL, 0}, {"dt", NULL, 0}, {"seed", NULL, 0},
	{"radii", RADII_KEYS, 0}, {"weights", WEIGHT_KEYS, 0}, {"speed", SPEED_KEYS, 0},
	{"max_force", NULL, 0}, {"bounds", BOUNDS_KEYS, 0}, {"target", TARGET_KEYS, 0},
	{"output", OUTPUT_KEYS, 0}, {"model", NULL, 0}, {"noise", NULL, 0}, {"view_angle", NULL, 0},
	{"max_turn", NULL, 0}, {"attractors", ATTRACTOR_KEYS, SKEY_ARRAY},
	{"schedule", SCHEDULE_KEYS, SKEY_ARRAY}, {"obstacles", OBSTACLE_KEYS, SKEY_ARRAY},
	{"hue", HUE_KEYS, 0}, {"predators", PREDATOR_KEYS, 0},
	{"population", EVENT_KEYS, SKEY_ARRAY}, {"return", RETURN_KEYS, 0},
	{"turn_rate", NULL, 0}, {"start", START_KEYS, 0}, {"move_with", NULL, 0},
	{NULL, NULL, 0}};

static const char *const MODEL_NAMES[SCENARIO_MODELS] = {
	"reynolds", "simple", "vicsek", "couzin", "blend", "slerp", "inertia", "accelerate"};
/* move_with: the velocity a Vicsek particle moves with (scenario.move_new) */
static const char *const MOVE_NAMES[] = {"old_velocity", "new_velocity"};

/* The keys each model ignores, so that giving one is reported. */
static const char *const UNUSED_REYNOLDS[] = {"noise", "return", "turn_rate", "move_with",
					     NULL};
static const char *const UNUSED_SIMPLE[] = {"noise", "max_force", "return", "turn_rate",
					   "move_with", NULL};
static const char *const UNUSED_VICSEK[] = {
	"radii.separation", "radii.cohesion", "weights", "max_force", "speed.min",
	"view_angle", "max_turn", "target", "attractors", "radii.avoid", "radii.flee",
	"predators", "return", "turn_rate", NULL};
static const char *const UNUSED_COUZIN[] = {
	"weights", "max_force", "speed.min", "target", "attractors", "radii.avoid", "return",
	"turn_rate", "move_with", NULL};
/* blend flies at speed.max; its return rule is the return key. */
static const char *const UNUSED_BLEND[] = {
	"noise", "max_force", "max_turn", "turn_rate", "speed.min", "speed.variation",
	"speed.noise", "weights.target", "target", "move_with", NULL};
/* slerp's rule has no weights: it sums positions, the target and the
 * separation as they are; radii.cohesion is its one neighbour range. */
static const char *const UNUSED_SLERP[] = {
	"noise", "max_force", "max_turn", "weights", "radii.alignment", "speed.variation",
	"return.weight",
	"speed.noise.amplitude", "attractors", "radii.avoid", "radii.flee", "predators",
	"move_with", NULL};
/* inertia has one neighbour range, radii.alignment, and no weights. */
static const char *const UNUSED_INERTIA[] = {
	"noise", "max_force", "max_turn", "weights", "radii.separation", "radii.cohesion",
	"speed.min", "speed.noise.amplitude", "target.radius", "return", "attractors",
	"radii.avoid", "radii.flee", "predators", "move_with", NULL};
static const char *const UNUSED_ACCELERATE[] = {
	"noise", "max_force", "max_turn", "turn_rate", "return", "weights.target",
	"target", "move_with", NULL};
static const char *const *const UNUSED[SCENARIO_MODELS] = {
	UNUSED_REYNOLDS, UNUSED_SIMPLE, UNUSED_VICSEK, UNUSED_COUZIN,
	UNUSED_BLEND, UNUSED_SLERP, UNUSED_INERTIA, UNUSED_ACCELERATE};

const char *scenario_model_name(enum model_kind m)
{
	return MODEL_NAMES[m];
}

static const char *const MODE_NAMES[] = {"wrap", "reflect", "steer", "none"};

const char *scenario_mode_name(enum bounds_mode m)
{
	return MODE_NAMES[m];
}

/* ---- error context ------------------------------------------------------
 * An error at a JSON path is attributed to the --set override that wrote
 * that path, or else to the file. */
struct load_ctx {
	const char *file;
	const struct scenario_override *ov;
	int n_ov;
	struct util_err *err;
	int stage; /* a schedule's stage: the run's population is not its own */
};

static int path_has_prefix(const char *path, const char *prefix, size_t plen)
{
	if (strncmp(path, prefix, plen) != 0)
		return 0;
	return path[plen] == '\0' || path[plen] == '.' || path[plen] == '[';
}

static void fail(const struct load_ctx *c, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* The last override that wrote path (or a parent of it; with inside, also
 * a part of it), or -1. */
static int owner(const struct load_ctx *c, const char *path, int inside)
{
	int i;

	for (i = c->n_ov - 1; i >= 0; i--) {
		const char *t = c->ov[i].text;
		const char *eq = strchr(t, '=');
		size_t plen = eq ? (size_t)(eq - t) : strlen(t);

		if (path_has_prefix(path, t, plen) ||
		    (inside && plen > strlen(path) && path_has_prefix(t, path, strlen(path))))
			return i;
	}
	return -1;
}

/* What the messages name for override i (or the file, i < 0): what the
 * user typed; buf (of n bytes) may hold it. */
static const char *source_name(const struct load_ctx *c, int i, char *buf, size_t n)
{
	if (i < 0)
		return c->file;
	if (c->ov[i].label)
		return c->ov[i].label;
	snprintf(buf, n, "--set %s", c->ov[i].text);
	return buf;
}

/* The error of path, named after override i (or the file, i < 0). */
static void fail_as(const struct load_ctx *c, int i, const char *path, const char *what)
{
	char buf[UTIL_ERR_MAX / 2];

	util_err_set(c->err, "%s: %s: %s", source_name(c, i, buf, sizeof buf), path, what);
}

static void fail(const struct load_ctx *c, const char *path, const char *fmt, ...)
{
	char what[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	/* (also an override of a part of path: --set radii.separation.x=3,
	 * where the file has no radii, made radii.separation an object) */
	fail_as(c, owner(c, path, 1), path, what);
}

/* A check of path against other keys (bounds.max[0] against bounds.min[0];
 * other2 NULL or a second one): the latest override of any of them is the
 * one to blame, so that --set bounds.min[0]=40 is named when it passes the
 * file's bounds.max[0]. */
static void fail_pair(const struct load_ctx *c, const char *path, const char *other,
		      const char *other2, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static void fail_pair(const struct load_ctx *c, const char *path, const char *other,
		      const char *other2, const char *fmt, ...)
{
	char what[256];
	va_list ap;
	int a = owner(c, path, 0), b = owner(c, other, 1), e = other2 ? owner(c, other2, 1) : -1;

	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	if (b > a)
		a = b;
	if (e > a)
		a = e;
	fail_as(c, a, path, what);
}

/* ---- "did you mean" ------------------------------------------------------ */
static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i, j;
	size_t row[64];

	if (la >= 63 || lb >= 63)
		return (size_t)-1;
	for (j = 0; j <= lb; j++)
		row[j] = j;
	for (i = 1; i <= la; i++) {
		size_t diag = row[0];

		row[0] = i;
		for (j = 1; j <= lb; j++) {
			size_t up = row[j];
			size_t cost = tolower((unsigned char)a[i - 1]) !=
				      tolower((unsigned char)b[j - 1]);
			size_t best = diag + cost;

			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

static const char *suggest(const char *name, const struct skey *keys)
{
	const char *best = NULL;
	size_t best_d = (size_t)-1;

	for (; keys->name; keys++) {
		size_t d = edit_distance(name, keys->name);

		if (d < best_d) {
			best_d = d;
			best = keys->name;
		}
	}
	if (best != NULL && (best_d <= 2 || best_d * 3 <= strlen(best)))
		return best;
	return NULL;
}

/* ---- structure: unknown and duplicate keys ------------------------------ */
static int check_object(const struct load_ctx *c, const cJSON *obj,
			const struct skey *keys, const char *path)
{
	const cJSON *it, *prev;
	char sub[256];

	if (!cJSON_IsObject(obj)) {
		fail(c, path[0] ? path : "(root)", "must be an object");
		return -1;
	}
	for (it = obj->child; it; it = it->next) {
		const struct skey *k;

		snprintf(sub, sizeof sub, "%s%s%s", path, path[0] ? "." : "",
			 it->string);
		for (prev = obj->child; prev != it; prev = prev->next)
			if (strcmp(prev->string, it->string) == 0) {
				fail(c, sub, "duplicate key");
				return -1;
			}
		for (k = keys; k->name; k++)
			if (strcmp(k->name, it->string) == 0)
				break;
		if (k->name == NULL) {
			const char *s = suggest(it->string, keys);

			if (s)
				fail(c, sub, "unknown key (did you mean \"%s\"?)", s);
			else
				fail(c, sub, "unknown key");
			return -1;
		}
		if (k->kind == SKEY_ARRAY) {
			const cJSON *e;
			char el[300];
			int i = 0;

			if (!cJSON_IsArray(it)) {
				fail(c, sub, "expected an array of objects");
				return -1;
			}
			cJSON_ArrayForEach(e, it) {
				snprintf(el, sizeof el, "%s[%d]", sub, i++);
				if (check_object(c, e, k->sub, el) != 0)
					return -1;
			}
		} else if (k->kind == SKEY_FREE) {
			const cJSON *a, *b;
			char key[300];

			if (!cJSON_IsObject(it)) {
				fail(c, sub, "must be an object");
				return -1;
			}
			/* its keys are checked where they are read, but a
			 * repeated one would be read twice, the last winning */
			for (a = it->child; a; a = a->next)
				for (b = it->child; b != a; b = b->next)
					if (strcmp(a->string, b->string) == 0) {
						snprintf(key, sizeof key, "%s.%s", sub, a->string);
						fail(c, key, "duplicate key");
						return -1;
					}
		} else if (k->sub && check_object(c, it, k->sub, sub) != 0) {
			return -1;
		}
	}
	return 0;
}

/* ---- typed readers ------------------------------------------------------ */
static const cJSON *lookup(const cJSON *root, const char *path)
{
	char buf[128];
	const cJSON *node = root;
	char *save = NULL, *tok;

	snprintf(buf, sizeof buf, "%s", path);
	for (tok = strtok_r(buf, ".", &save); tok && node;
	     tok = strtok_r(NULL, ".", &save))
		node = cJSON_GetObjectItemCaseSensitive(node, tok);
	return node;
}

/* The shortest text (15 to 17 significant digits) that reads back as v,
 * bit for bit, in buf: what the messages show of a number, so that a
 * limit and a value are never printed alike when they differ (%g made 2 pi
 * and the 6.28319 that passes it both 6.28319), and what the effective
 * scenario writes. */
static const char *num_text(double v, char buf[NUM_TEXT_MAX])
{
	int prec;

	for (prec = 15; prec < 17; prec++) {
		double back;

		snprintf(buf, NUM_TEXT_MAX, "%.*g", prec, v);
		back = strtod(buf, NULL);
		if (memcmp(&back, &v, sizeof v) == 0)
			return buf;
	}
	snprintf(buf, NUM_TEXT_MAX, "%.17g", v);
	return buf;
}
/* (a buffer of its own for each use, alive to the end of the block) */
#define NUM(v) num_text((v), (char[NUM_TEXT_MAX]){0})

/* A finite number in [lo, hi] (lo excluded when lo_open). */
static int check_real(const struct load_ctx *c, const cJSON *n, const char *path,
		      double lo, int lo_open, double hi, double *out)
{
	double v;

	if (!cJSON_IsNumber(n)) {
		fail(c, path, "expected a number");
		return -1;
	}
	v = n->valuedouble;
	if (!isfinite(v)) {
		fail(c, path, "must be a finite number");
		return -1;
	}
	if (lo_open ? !(v > lo) : !(v >= lo)) {
		fail(c, path, "must be %s %s, got %s",
		     lo_open ? "greater than" : "at least", NUM(lo), NUM(v));
		return -1;
	}
	if (lo_open && lo == 0 && v < SCENARIO_VALUE_MIN) {
		fail(c, path, "must be at least %s, got %s (binary32 squares of smaller "
		     "values underflow)", NUM(SCENARIO_VALUE_MIN), NUM(v));
		return -1;
	}
	if (v > hi) {
		fail(c, path, "must be at most %s, got %s", NUM(hi), NUM(v));
		return -1;
	}
	*out = v;
	return 0;
}

static int read_real(const struct load_ctx *c, const cJSON *root, const char *path,
		     double lo, int lo_open, double hi, double def, double *out)
{
	const cJSON *n = lookup(root, path);

	if (n == NULL) {
		*out = def;
		return 0;
	}
	return check_real(c, n, path, lo, lo_open, hi, out);
}

/* A number x (the interval [x, x]) or an array [low, high] with low <=
 * high, each in [lo, hi]; *out_lo and *out_hi are left alone when the key
 * is missing. */
static int read_interval(const struct load_ctx *c, const cJSON *root, const char *path, double lo,
			 double hi, double *out_lo, double *out_hi)
{
	const cJSON *n = lookup(root, path);
	char p0[64], p1[64];
	double v[2];

	if (n == NULL)
		return 0;
	if (!cJSON_IsArray(n)) {
		if (check_real(c, n, path, lo, 0, hi, &v[0]))
			return -1;
		*out_lo = *out_hi = v[0];
		return 0;
	}
	snprintf(p0, sizeof p0, "%s[0]", path);
	snprintf(p1, sizeof p1, "%s[1]", path);
	if (cJSON_GetArraySize(n) != 2) {
		fail(c, path, "expected a number or an array [low, high]");
		return -1;
	}
	if (check_real(c, cJSON_GetArrayItem(n, 0), p0, lo, 0, hi, &v[0]) ||
	    check_real(c, cJSON_GetArrayItem(n, 1), p1, lo, 0, hi, &v[1]))
		return -1;
	if (v[1] < v[0]) {
		fail_pair(c, p1, p0, NULL, "must be at least %s (%s)", p0, NUM(v[0]));
		return -1;
	}
	*out_lo = v[0];
	*out_hi = v[1];
	return 0;
}

/* An integer in [lo, hi]; JSON numbers are doubles, so hi <= SCENARIO_INT_MAX. */
static int read_uint(const struct load_ctx *c, const cJSON *root, const char *path,
		     uint64_t lo, uint64_t hi, int required, uint64_t def,
		     uint64_t *out)
{
	const cJSON *n = lookup(root, path);
	double v;

	if (n == NULL) {
		if (required) {
			fail(c, path, "required key is missing");
			return -1;
		}
		*out = def;
		return 0;
	}
	if (!cJSON_IsNumber(n)) {
		fail(c, path, "expected an integer");
		return -1;
	}
	v = n->valuedouble;
	if (!isfinite(v) || v != floor(v)) {
		fail(c, path, "expected an integer, got %s", NUM(v));
		return -1;
	}
	if (v < (double)lo || v > (double)hi) {
		fail(c, path, "must be between %" PRIu64 " and %" PRIu64 ", got %s",
		     lo, hi, NUM(v));
		return -1;
	}
	*out = (uint64_t)v;
	return 0;
}

static int read_vec(const struct load_ctx *c, const cJSON *root, const char *path,
		    int dims, int required, double *out)
{
	const cJSON *n = lookup(root, path), *e;
	char sub[160];
	int i = 0;

	if (n == NULL) {
		if (required) {
			fail(c, path, "required key is missing");
			return -1;
		}
		return 1;
	}
	if (!cJSON_IsArray(n) || cJSON_GetArraySize(n) != dims) {
		fail_pair(c, path, "dimensions", NULL,
			  "expected an array of %d numbers (dimensions is %d)", dims, dims);
		return -1;
	}
	cJSON_ArrayForEach(e, n) {
		snprintf(sub, sizeof sub, "%s[%d]", path, i);
		if (check_real(c, e, sub, -SCENARIO_VALUE_MAX, 0,
			       SCENARIO_VALUE_MAX, &out[i]) != 0)
			return -1;
		i++;
	}
	return 0;
}

/* The seed is 64-bit: a JSON number below 2^53 (exact as text), or a
 * string of decimal digits for the full range. */
static int read_seed(const struct load_ctx *c, const cJSON *root, uint64_t *out)
{
	const cJSON *n = lookup(root, "seed");

	if (n == NULL) {
		*out = 1;
		return 0;
	}
	if (cJSON_IsString(n)) {
		const char *s = n->valuestring;
		char *end;
		unsigned long long v;

		errno = 0;
		if (!isdigit((unsigned char)s[0]))
			goto bad;
		v = strtoull(s, &end, 10);
		if (errno != 0 || *end != '\0')
			goto bad;
		*out = v;
		return 0;
bad:
		fail(c, "seed", "expected decimal digits for a 64-bit seed, got \"%s\"", s);
		return -1;
	}
	if (cJSON_IsNumber(n) && n->valuedouble > (double)SCENARIO_INT_MAX) {
		fail(c, "seed", "integers from 2^53 up are not exact in JSON numbers; "
		     "give the seed as a string of digits");
		return -1;
	}
	return read_uint(c, root, "seed", 0, SCENARIO_INT_MAX, 0, 1, out);
}

/* ---- overrides ---------------------------------------------------------- */
static int valid_utf8(const unsigned char *s, size_t len, size_t *bad);
static int nul_escape(const char *t, size_t len, size_t *at);
static int json_lax(const char *t, size_t len, size_t *at, const char **why);

/* label: what the user typed when it was not --set (--seed 7), or NULL;
 * where: what the messages name, when not "--set TEXT" (a schedule's
 * "FILE: schedule[i].set.KEY"). */
static int apply_override(const struct load_ctx *c, cJSON *root, const char *text,
			  const char *label, const char *where)
{
	const char *eq = strchr(text, '=');
	char path[256], *seg, *save = NULL, who[UTIL_ERR_MAX / 2];
	cJSON *node = root, *value;
	const char *why;
	size_t plen;

	size_t bad;

	if (where)
		snprintf(who, sizeof who, "%s", where);
	else
		snprintf(who, sizeof who, "--set %s", text);

	if (eq == NULL || eq == text) {
		util_err_set(c->err, "%s: expected KEY=VALUE", who);
		return -1;
	}
	if (!valid_utf8((const unsigned char *)text, strlen(text), &bad)) {
		util_err_set(c->err, "--set %.*s: invalid UTF-8 at byte %zu", (int)bad, text, bad + 1);
		return -1;
	}
	plen = (size_t)(eq - text);
	if (plen >= sizeof path) {
		util_err_set(c->err, "%s: key too long", who);
		return -1;
	}
	memcpy(path, text, plen);
	path[plen] = '\0';
	if (path[0] == '.' || path[plen - 1] == '.' || strstr(path, "..") != NULL) {
		util_err_set(c->err, "%s: malformed key", who);
		return -1;
	}
	value = cJSON_ParseWithOpts(eq + 1, NULL, 1);
	if (value && nul_escape(eq + 1, strlen(eq + 1), &bad)) {
		cJSON_Delete(value);
		if (label)
			util_err_set(c->err, "%s: \\u0000 in a string at byte %zu of the value: "
				     "NUL is not allowed", label, bad + 1);
		else
			util_err_set(c->err, "%s: \\u0000 in a string at byte %zu: NUL is "
				     "not allowed", who, (size_t)(eq + 1 - text) + bad + 1);
		return -1;
	}
	/* JSON as a file must be (json_lax): --set count=050 is refused as the
	 * same text in the file is */
	if (value && json_lax(eq + 1, strlen(eq + 1), &bad, &why)) {
		cJSON_Delete(value);
		util_err_set(c->err, "%s: %s, at byte %zu of the value", label ? label : who, why,
			     bad + 1);
		return -1;
	}
	if (value == NULL) /* a bare word such as reflect */
		value = cJSON_CreateString(eq + 1);
	if (value == NULL) {
		util_err_set(c->err, "%s: out of memory", who);
		return -1;
	}
	for (seg = strtok_r(path, ".", &save); seg; seg = strtok_r(NULL, ".", &save)) {
		char *br = strchr(seg, '[');
		int last = (save == NULL || *save == '\0');
		cJSON *child;

		if (seg[0] == '\0' || br == seg) {
			util_err_set(c->err, "%s: malformed key", who);
			goto fail;
		}
		if (br) { /* name[index]: one element of an array */
			char *end;
			long idx;
			cJSON *arr;
			int name;

			errno = 0;
			idx = strtol(br + 1, &end, 10);
			*br = '\0';
			if (end == br + 1 || strcmp(end, "]") != 0 || idx < 0 || errno == ERANGE ||
			    idx > INT_MAX) {
				util_err_set(c->err, "%s: malformed index", who);
				goto fail;
			}
			/* the key's whole path so far, as the text gave it
			 * (bounds.max, not max) */
			name = (int)((size_t)(seg - path) + strlen(seg));
			arr = cJSON_GetObjectItemCaseSensitive(node, seg);
			if (arr && !cJSON_IsArray(arr)) {
				util_err_set(c->err, "%s: %.*s is not an array", who, name, text);
				goto fail;
			}
			if (arr == NULL || idx >= cJSON_GetArraySize(arr)) {
				util_err_set(c->err, "%s: %.*s has no element %ld", who, name, text,
					     idx);
				goto fail;
			}
			if (last) {
				cJSON_ReplaceItemInArray(arr, (int)idx, value);
				return 0;
			}
			/* name[index].key: into an element that is an object
			 * (attractors[0].strength) */
			node = cJSON_GetArrayItem(arr, (int)idx);
			if (!cJSON_IsObject(node)) {
				util_err_set(c->err, "%s: %.*s[%ld] is not an object", who,
					     name, text, idx);
				goto fail;
			}
			continue;
		}
		child = cJSON_GetObjectItemCaseSensitive(node, seg);
		if (last) {
			if (child)
				cJSON_ReplaceItemInObjectCaseSensitive(node, seg, value);
			else
				cJSON_AddItemToObject(node, seg, value);
			return 0;
		}
		if (child == NULL) {
			child = cJSON_AddObjectToObject(node, seg);
			if (child == NULL) {
				util_err_set(c->err, "%s: out of memory", who);
				goto fail;
			}
		} else if (!cJSON_IsObject(child)) {
			util_err_set(c->err, "%s: %.*s is not an object", who,
				     (int)((size_t)(seg - path) + strlen(seg)), text);
			goto fail;
		}
		node = child;
	}
fail:
	cJSON_Delete(value);
	return -1;
}

/* ---- validation --------------------------------------------------------- */
/* The table of a key's names: an array of names, or of structs whose first
 * member is one (its entries stride bytes apart). */
#define NAMES(t) (const void *)(t), sizeof(t)[0], sizeof(t) / sizeof(t)[0]

/* The index of the string at n (path for messages) among the count names
 * of a table (NAMES); else an error that lists them, from that table, so
 * that the names a key takes are written once. */
static int name_node(const struct load_ctx *c, const cJSON *n, const char *path,
		     const void *table, size_t stride, size_t count, size_t *out)
{
	char list[256] = "";
	size_t i;

	for (i = 0; i < count; i++) {
		const char *name = *(const char *const *)(const void *)((const char *)table +
									 i * stride);

		if (cJSON_IsString(n) && strcmp(n->valuestring, name) == 0) {
			*out = i;
			return 0;
		}
		snprintf(list + strlen(list), sizeof list - strlen(list), "%s\"%s\"",
			 i == 0 ? "" : i + 1 == count ? " or " : ", ", name);
	}
	if (cJSON_IsString(n))
		fail(c, path, "expected %s%s, got \"%s\"", count > 2 ? "one of " : "", list,
		     n->valuestring);
	else
		fail(c, path, "expected %s%s", count > 2 ? "one of " : "", list);
	return -1;
}

/* The index among a table's names (NAMES) of the string at path, or dflt
 * when the key is absent. */
static int read_name(const struct load_ctx *c, const cJSON *root, const char *path,
		     const void *table, size_t stride, size_t count, size_t dflt, size_t *out)
{
	const cJSON *n = lookup(root, path);

	*out = dflt;
	return n ? name_node(c, n, path, table, stride, count, out) : 0;
}

static int validate(const struct load_ctx *c, const cJSON *root, struct scenario *sc);

#define VM_REAL SCENARIO_VALUE_MAX
#define STR_(x) #x
#define STR(x) STR_(x)

/* A vector of dims finite numbers at node (path for messages). */
static int vec_node(const struct load_ctx *c, const cJSON *n, const char *path, int dims,
		    double *out)
{
	const cJSON *e;
	char sub[320];
	int i = 0;

	if (!cJSON_IsArray(n) || cJSON_GetArraySize(n) != dims) {
		fail_pair(c, path, "dimensions", NULL,
			  "expected an array of %d numbers (dimensions is %d)", dims, dims);
		return -1;
	}
	cJSON_ArrayForEach(e, n) {
		snprintf(sub, sizeof sub, "%s[%d]", path, i);
		if (check_real(c, e, sub, -SCENARIO_VALUE_MAX, 0, SCENARIO_VALUE_MAX, &out[i]) != 0)
			return -1;
		i++;
	}
	return 0;
}

/* An integer in [lo, hi] at node. */
static int uint_node(const struct load_ctx *c, const cJSON *n, const char *path, uint64_t lo,
		     uint64_t hi, uint64_t *out)
{
	double v;

	if (!cJSON_IsNumber(n) || !isfinite(n->valuedouble) ||
	    n->valuedouble != floor(n->valuedouble)) {
		fail(c, path, "expected an integer");
		return -1;
	}
	v = n->valuedouble;
	if (v < (double)lo || v > (double)hi) {
		fail(c, path, "must be between %" PRIu64 " and %" PRIu64 ", got %s", lo, hi,
		     NUM(v));
		return -1;
	}
	*out = (uint64_t)v;
	return 0;
}

static int parse_attractors(const struct load_ctx *c, const cJSON *root, struct scenario *sc)
{
	const cJSON *list = lookup(root, "attractors"), *a;
	int i = 0;

	if (list == NULL)
		return 0;
	if (cJSON_GetArraySize(list) > SCENARIO_ATTRACTORS_MAX) {
		fail(c, "attractors", "at most %d attractors", SCENARIO_ATTRACTORS_MAX);
		return -1;
	}
	sc->attractors = calloc((size_t)cJSON_GetArraySize(list) + 1, sizeof *sc->attractors);
	if (sc->attractors == NULL) {
		util_err_set(c->err, "out of memory");
		return -1;
	}
	cJSON_ArrayForEach(a, list) {
		struct scenario_attractor *at = &sc->attractors[i];
		const cJSON *pos = cJSON_GetObjectItemCaseSensitive(a, "position");
		const cJSON *wp = cJSON_GetObjectItemCaseSensitive(a, "waypoints"), *w;
		char path[64], sub[128];
		int k = 0;

		snprintf(path, sizeof path, "attractors[%d]", i);
		sc->n_attractors = ++i;
		snprintf(sub, sizeof sub, "%s.strength", path);
		if (!cJSON_GetObjectItemCaseSensitive(a, "strength")) {
			fail(c, sub, "required key is missing");
			return -1;
		}
		if (check_real(c, cJSON_GetObjectItemCaseSensitive(a, "strength"), sub,
			       -SCENARIO_VALUE_MAX, 0, SCENARIO_VALUE_MAX, &at->strength) != 0)
			return -1;
		snprintf(sub, sizeof sub, "%s.range", path);
		if (!cJSON_GetObjectItemCaseSensitive(a, "range")) {
			fail(c, sub, "required key is missing");
			return -1;
		}
		if (check_real(c, cJSON_GetObjectItemCaseSensitive(a, "range"), sub, 0, 1,
			       SCENARIO_VALUE_MAX, &at->range) != 0)
			return -1;
		if ((pos == NULL) == (wp == NULL)) {
			fail(c, path, "give either position or waypoints");
			return -1;
		}
		at->n_points = pos ? 1 : cJSON_GetArraySize(wp);
		if (at->n_points < 1 || at->n_points > SCENARIO_WAYPOINTS_MAX) {
			fail(c, path, "waypoints: expected 1 to %d waypoints", SCENARIO_WAYPOINTS_MAX);
			return -1;
		}
		at->steps = calloc((size_t)at->n_points, sizeof *at->steps);
		at->pos = calloc((size_t)at->n_points, sizeof *at->pos);
		if (at->steps == NULL || at->pos == NULL) {
			util_err_set(c->err, "out of memory");
			return -1;
		}
		if (pos) {
			snprintf(sub, sizeof sub, "%s.position", path);
			if (vec_node(c, pos, sub, sc->dims, at->pos[0]) != 0)
				return -1;
			continue;
		}
		cJSON_ArrayForEach(w, wp) {
			const cJSON *st = cJSON_GetObjectItemCaseSensitive(w, "step");
			const cJSON *wpos = cJSON_GetObjectItemCaseSensitive(w, "position");

			snprintf(sub, sizeof sub, "%s.waypoints[%d].step", path, k);
			if (st == NULL || wpos == NULL) {
				fail(c, sub, "each waypoint needs step and position");
				return -1;
			}
			if (uint_node(c, st, sub, 0, SCENARIO_INT_MAX, &at->steps[k]) != 0)
				return -1;
			if (k > 0 && at->steps[k] <= at->steps[k - 1]) {
				char q[sizeof sub];

				snprintf(q, sizeof q, "%s.waypoints[%d].step", path, k - 1);
				fail_pair(c, sub, q, NULL, "waypoint steps must increase");
				return -1;
			}
			snprintf(sub, sizeof sub, "%s.waypoints[%d].position", path, k);
			if (vec_node(c, wpos, sub, sc->dims, at->pos[k]) != 0)
				return -1;
			k++;
		}
	}
	return 0;
}

/* The keys of each type of obstacle besides "type": n of OBSTACLE_KEYS
 * from its entry first (the schema's check takes them all): another
 * type's key in an obstacle is an error, as an unknown key is, not
 * silently dropped. */
static const struct {
	const char *type;
	int first, n;
} OBSTACLE_TYPES[] = {{"sphere", 1, 2}, {"box", 3, 2}, {"segment", 5, 2}, {"polyline", 7, 1}};

static int obstacle_keys(const struct load_ctx *c, const cJSON *o, const char *type,
			 const char *path)
{
	const size_t nt = sizeof OBSTACLE_TYPES / sizeof OBSTACLE_TYPES[0];
	const cJSON *it;
	size_t t;
	char sub[200], list[64];

	for (t = 0; t < nt && strcmp(OBSTACLE_TYPES[t].type, type) != 0; t++)
		;
	if (t == nt) /* (said by the caller) */
		return 0;
	for (it = o->child; it; it = it->next) {
		const struct skey *k = OBSTACLE_KEYS + OBSTACLE_TYPES[t].first;
		int j, len;

		for (j = 0; j < OBSTACLE_TYPES[t].n && strcmp(it->string, k[j].name) != 0; j++)
			;
		if (strcmp(it->string, OBSTACLE_KEYS[0].name) == 0 || j < OBSTACLE_TYPES[t].n)
			continue;
		len = snprintf(list, sizeof list, "%s", OBSTACLE_KEYS[0].name);
		for (j = 0; j < OBSTACLE_TYPES[t].n; j++)
			len += snprintf(list + len, sizeof list - (size_t)len, ", %s", k[j].name);
		snprintf(sub, sizeof sub, "%s.%s", path, it->string);
		fail(c, sub, "not a key of a %s (its keys: %s)", type, list);
		return -1;
	}
	return 0;
}

/* One obstacle (a polyline becomes several segments). */
static int add_obstacle(const struct load_ctx *c, struct scenario *sc, const cJSON *o,
			const char *path)
{
	const cJSON *type = cJSON_GetObjectItemCaseSensitive(o, "type");
	char sub[160];
	size_t t;
	int k;

#define OB_FIELD(name, var)                                                        \
	do {                                                                       \
		const cJSON *n_ = cJSON_GetObjectItemCaseSensitive(o, name);       \
		snprintf(sub, sizeof sub, "%s.%s", path, name);                    \
		if (n_ == NULL) {                                                  \
			fail(c, sub, "required key is missing");                   \
			return -1;                                                 \
		}                                                                  \
		if (vec_node(c, n_, sub, sc->dims, var) != 0)                      \
			return -1;                                                 \
	} while (0)
	struct obstacle ob;

	memset(&ob, 0, sizeof ob);
	snprintf(sub, sizeof sub, "%s.type", path);
	if (name_node(c, type, sub, NAMES(OBSTACLE_TYPES), &t) != 0)
		return -1;
	if (obstacle_keys(c, o, type->valuestring, path) != 0)
		return -1;
	if (strcmp(type->valuestring, "polyline") == 0) {
		const cJSON *pts = cJSON_GetObjectItemCaseSensitive(o, "points"), *e;
		double prev[3] = {0, 0, 0}, cur[3] = {0, 0, 0};
		int i = 0;

		snprintf(sub, sizeof sub, "%s.points", path);
		if (sc->dims != 2) {
			fail(c, sub, "polylines are 2D only");
			return -1;
		}
		if (!cJSON_IsArray(pts) || cJSON_GetArraySize(pts) < 2) {
			fail(c, sub, "expected an array of at least 2 points");
			return -1;
		}
		cJSON_ArrayForEach(e, pts) {
			char el[200];

			snprintf(el, sizeof el, "%s.points[%d]", path, i);
			if (vec_node(c, e, el, 2, cur) != 0)
				return -1;
			if (i++ > 0) {
				if (sc->n_obstacles == SCENARIO_OBSTACLES_MAX) {
					fail(c, "obstacles", "at most %d obstacle pieces",
					     SCENARIO_OBSTACLES_MAX);
					return -1;
				}
				ob.kind = OBSTACLE_SEGMENT;
				memcpy(ob.a, prev, sizeof prev);
				memcpy(ob.b, cur, sizeof cur);
				sc->obstacles[sc->n_obstacles++] = ob;
			}
			memcpy(prev, cur, sizeof cur);
		}
		return 0;
	}
	if (strcmp(type->valuestring, "sphere") == 0) {
		const cJSON *r = cJSON_GetObjectItemCaseSensitive(o, "radius");

		ob.kind = OBSTACLE_SPHERE;
		OB_FIELD("center", ob.a);
		snprintf(sub, sizeof sub, "%s.radius", path);
		if (r == NULL) {
			fail(c, sub, "required key is missing");
			return -1;
		}
		if (check_real(c, r, sub, 0, 1, SCENARIO_VALUE_MAX, &ob.radius) != 0)
			return -1;
	} else if (strcmp(type->valuestring, "box") == 0) {
		ob.kind = OBSTACLE_BOX;
		OB_FIELD("min", ob.a);
		OB_FIELD("max", ob.b);
		for (k = 0; k < sc->dims; k++)
			if (!(ob.b[k] > ob.a[k])) {
				char q[sizeof sub];

				snprintf(sub, sizeof sub, "%s.max[%d]", path, k);
				snprintf(q, sizeof q, "%s.min[%d]", path, k);
				fail_pair(c, sub, q, NULL, "must be greater than min[%d]", k);
				return -1;
			}
	} else if (strcmp(type->valuestring, "segment") == 0) {
		snprintf(sub, sizeof sub, "%s.type", path);
		if (sc->dims != 2) {
			fail(c, sub, "segments are 2D only");
			return -1;
		}
		ob.kind = OBSTACLE_SEGMENT;
		OB_FIELD("from", ob.a);
		OB_FIELD("to", ob.b);
	}
#undef OB_FIELD
	if (sc->n_obstacles == SCENARIO_OBSTACLES_MAX) {
		fail(c, "obstacles", "at most %d obstacle pieces", SCENARIO_OBSTACLES_MAX);
		return -1;
	}
	sc->obstacles[sc->n_obstacles++] = ob;
	return 0;
}

static int parse_obstacles(const struct load_ctx *c, const cJSON *root, struct scenario *sc)
{
	const cJSON *list = lookup(root, "obstacles"), *o;
	char path[64];
	int i = 0;

	if (list == NULL)
		return 0;
	sc->obstacles = calloc(SCENARIO_OBSTACLES_MAX, sizeof *sc->obstacles);
	if (sc->obstacles == NULL) {
		util_err_set(c->err, "out of memory");
		return -1;
	}
	cJSON_ArrayForEach(o, list) {
		snprintf(path, sizeof path, "obstacles[%d]", i++);
		if (add_obstacle(c, sc, o, path) != 0)
			return -1;
	}
	return 0;
}

static const char *const CHASE_NAMES[] = {"nearest", "centre"};

/* A region {min, max}: node (NULL: absent, returns 1), named path in
 * messages; min <= max (a point adds boids at one place). Under wrap and
 * reflect it must lie in the box, where boids live. */
static int read_region(const struct load_ctx *c, const cJSON *node, const char *path,
		       const struct scenario *sc, double *lo, double *hi)
{
	const cJSON *mn = cJSON_GetObjectItemCaseSensitive(node, "min");
	const cJSON *mx = cJSON_GetObjectItemCaseSensitive(node, "max");
	char p[128];
	int d;

	if (node == NULL)
		return 1;
	snprintf(p, sizeof p, "%s.%s", path, mn ? "max" : "min");
	if (mn == NULL || mx == NULL) {
		fail(c, p, "required key is missing");
		return -1;
	}
	snprintf(p, sizeof p, "%s.min", path);
	if (vec_node(c, mn, p, sc->dims, lo) != 0)
		return -1;
	snprintf(p, sizeof p, "%s.max", path);
	if (vec_node(c, mx, p, sc->dims, hi) != 0)
		return -1;
	for (d = 0; d < sc->dims; d++) {
		snprintf(p, sizeof p, "%s.max[%d]", path, d);
		if (hi[d] < lo[d]) {
			char q[64];

			snprintf(q, sizeof q, "%s.min[%d]", path, d);
			fail_pair(c, p, q, NULL, "must be at least %s.min[%d] (%s)", path, d,
				  NUM(lo[d]));
			return -1;
		}
		if ((sc->mode == BOUNDS_WRAP || sc->mode == BOUNDS_REFLECT) &&
		    (lo[d] < sc->bmin[d] || hi[d] > sc->bmax[d])) {
			if (lo[d] < sc->bmin[d])
				snprintf(p, sizeof p, "%s.min[%d]", path, d);
			fail_pair(c, p, "bounds.min", "bounds.max",
				  "the region must lie inside the bounds box under %s "
				  "(axis %d: %s to %s)", scenario_mode_name(sc->mode), d,
				  NUM(sc->bmin[d]), NUM(sc->bmax[d]));
			return -1;
		}
	}
	return 0;
}

/* A point that must lie in the box under wrap and reflect, where boids
 * live; pad: how far around it (a ball's radius, named pad_path), which
 * is the key blamed when the point itself is inside. */
static int check_inside(const struct load_ctx *c, const char *path, const struct scenario *sc,
			const double x[3], double pad, const char *pad_path)
{
	int d;

	if (sc->mode != BOUNDS_WRAP && sc->mode != BOUNDS_REFLECT)
		return 0;
	for (d = 0; d < sc->dims; d++) {
		if (x[d] < sc->bmin[d] || x[d] > sc->bmax[d]) {
			fail_pair(c, path, "bounds.min", "bounds.max",
				  "must lie inside the bounds box under %s (axis %d: %s to %s)",
				  scenario_mode_name(sc->mode), d, NUM(sc->bmin[d]), NUM(sc->bmax[d]));
			return -1;
		}
		if (x[d] - pad < sc->bmin[d] || x[d] + pad > sc->bmax[d]) {
			fail_pair(c, pad_path, path, "bounds",
				  "the ball of this radius around %s must lie inside the bounds "
				  "box under %s (axis %d: %s to %s)", path,
				  scenario_mode_name(sc->mode), d, NUM(sc->bmin[d]), NUM(sc->bmax[d]));
			return -1;
		}
	}
	return 0;
}

/* return: center (the origin by default), radius, weight. */
static int parse_return(const struct load_ctx *c, const cJSON *root, struct scenario *sc)
{
	int rc;

	if (lookup(root, "return") == NULL)
		return 0;
	sc->has_return = 1;
	rc = read_vec(c, root, "return.center", sc->dims, 0, sc->return_center);
	if (rc < 0)
		return -1;
	return read_real(c, root, "return.radius", 0, 0, VM_REAL, 0.0, &sc->return_radius) ||
	       read_real(c, root, "return.weight", 0, 0, VM_REAL, 1.0, &sc->w_return) ? -1 : 0;
}

static const char *const START_SHAPES[] = {"box", "ball", "point"};

/* start.file, and start.step; no other start key goes with them. The path
 * is taken from the scenario file's directory (the current one for
 * standard input) and resolved, so that the effective scenario names the
 * file from anywhere; its content is read by start_load (start.h). */
static int parse_start_file(const struct load_ctx *c, const cJSON *root, struct scenario *sc)
{
	static const char *const ALONE[] = {"shape", "min", "max", "center", "radius",
					    "heading", "spread", "speed", NULL};
	const cJSON *f = lookup(root, "start.file"), *st = lookup(root, "start");
	const char *const *k, *slash;
	char *joined;
	size_t dl;

	for (k = ALONE; *k; k++)
		if (cJSON_GetObjectItemCaseSensitive(st, *k)) {
			char p[32];

			snprintf(p, sizeof p, "start.%s", *k);
			fail(c, p, "not with start.file (the file gives the start)");
			return -1;
		}
	if (!cJSON_IsString(f) || f->valuestring[0] == '\0') {
		fail(c, "start.file", "expected the name of a trajectory or CSV file");
		return -1;
	}
	if (lookup(root, "start.step") &&
	    read_uint(c, root, "start.step", 0, SCENARIO_INT_MAX, 0, 0, &sc->start_step))
		return -1;
	slash = strrchr(c->file, '/');
	dl = f->valuestring[0] == '/' || slash == NULL || strcmp(c->file, "<stdin>") == 0 ? 0 :
	     (size_t)(slash - c->file) + 1;
	joined = malloc(dl + strlen(f->valuestring) + 1);
	if (joined == NULL) {
		util_err_set(c->err, "out of memory");
		return -1;
	}
	memcpy(joined, c->file, dl);
	strcpy(joined + dl, f->valuestring);
	sc->start_file = realpath(joined, NULL);
	/* A name that opens but resolves to no path, as the shell's <(...)
	 * gives (/dev/fd/N, a link to "pipe:[...]"), is kept as it is,
	 * absolute: it names the stream for this process only. */
	if (sc->start_file == NULL && errno == ENOENT && joined[0] == '/' &&
	    access(joined, R_OK) == 0) {
		sc->start_file = joined;
		return 0;
	}
	if (sc->start_file == NULL) {
		fail(c, "start.file", "%s: %s", joined, strerror(errno));
		free(joined);
		return -1;
	}
	free(joined);
	return 0;
}

/* start: shape, min/max (box), center/radius (ball, point), heading,
 * spread, speed (a number, or [lo, hi]). */
static int parse_start(const struct load_ctx *c, const cJSON *root, struct scenario *sc)
{
	const cJSON *n = lookup(root, "start.shape"), *sp;
	double h2 = 0.0;
	size_t i;
	int d, rc;

	memcpy(sc->start_min, sc->bmin, sizeof sc->start_min);
	memcpy(sc->start_max, sc->bmax, sizeof sc->start_max);
	sc->start_speed_lo = sc->speed_min;
	sc->start_speed_hi = sc->speed_max;
	sc->start_shape = START_BOX;
	sc->has_start = lookup(root, "start") != NULL;
	sc->start_step = UINT64_MAX;
	if (lookup(root, "start.file"))
		return parse_start_file(c, root, sc);
	if (lookup(root, "start.step")) {
		fail(c, "start.step", "only with start.file");
		return -1;
	}
	if (n) {
		if (name_node(c, n, "start.shape", NAMES(START_SHAPES), &i) != 0)
			return -1;
		sc->start_shape = (enum start_shape)i;
	}
	if (sc->start_shape == START_BOX) {
		const cJSON *st = lookup(root, "start");

		if (st && (cJSON_GetObjectItemCaseSensitive(st, "min") ||
			   cJSON_GetObjectItemCaseSensitive(st, "max")) &&
		    read_region(c, st, "start", sc, sc->start_min, sc->start_max) != 0)
			return -1;
		if (lookup(root, "start.center") || lookup(root, "start.radius")) {
			fail(c, lookup(root, "start.center") ? "start.center" : "start.radius",
			     "only for start.shape \"ball\" or \"point\"");
			return -1;
		}
	} else {
		if (lookup(root, "start.min") || lookup(root, "start.max")) {
			fail(c, lookup(root, "start.min") ? "start.min" : "start.max",
			     "only for start.shape \"box\"");
			return -1;
		}
		if (read_vec(c, root, "start.center", sc->dims, 1, sc->start_center) != 0)
			return -1;
		if (sc->start_shape == START_BALL) {
			if (read_real(c, root, "start.radius", 0, 1, VM_REAL, 0, &sc->start_radius))
				return -1;
			if (lookup(root, "start.radius") == NULL) {
				fail(c, "start.radius", "required key is missing");
				return -1;
			}
		} else if (lookup(root, "start.radius")) {
			fail(c, "start.radius", "only for start.shape \"ball\"");
			return -1;
		}
		if (check_inside(c, "start.center", sc, sc->start_center, sc->start_radius,
				 "start.radius") != 0)
			return -1;
	}
	rc = read_vec(c, root, "start.heading", sc->dims, 0, sc->start_heading);
	if (rc < 0)
		return -1;
	sc->has_start_heading = rc == 0;
	for (d = 0; d < sc->dims; d++)
		h2 += sc->start_heading[d] * sc->start_heading[d];
	if (sc->has_start_heading && !(h2 > 0.0)) {
		fail(c, "start.heading", "must not be the zero vector");
		return -1;
	}
	if (read_real(c, root, "start.spread", 0, 0, 1, 0.0, &sc->start_spread))
		return -1;
	if (lookup(root, "start.spread") && !sc->has_start_heading) {
		fail(c, "start.spread", "needs start.heading, the direction it spreads around");
		return -1;
	}
	sp = lookup(root, "start.speed");
	if (sp && read_interval(c, root, "start.speed", 0, VM_REAL, &sc->start_speed_lo,
				&sc->start_speed_hi))
		return -1;
	if (sp && (sc->start_speed_lo < sc->speed_min || sc->start_speed_hi > sc->speed_max)) {
		fail_pair(c, "start.speed", "speed.min", "speed.max",
			  "must lie within [speed.min, speed.max] ([%s, %s])", NUM(sc->speed_min),
			  NUM(sc->speed_max));
		return -1;
	}
	return 0;
}

/* predators: count, speed, chase, range, max_turn, region; and the boids'
 * radii.flee and weights.flee. Vicsek's particles know no predator. */
static int model_uses(enum model_kind m, const char *path);

static int parse_predators(const struct load_ctx *c, const cJSON *root, struct scenario *sc)
{
	const cJSON *chase = lookup(root, "predators.chase");
	uint64_t n;
	double diag = 0;
	int d, rc;

	if (read_real(c, root, "radii.flee", 0, 1, SCENARIO_VALUE_MAX, sc->r_ali, &sc->r_flee) ||
	    read_real(c, root, "weights.flee", 0, 0, SCENARIO_VALUE_MAX, 2.0, &sc->w_flee))
		return -1;
	/* (the models that know no predator: the key is noted and ignored) */
	if (lookup(root, "predators") == NULL || !model_uses(sc->model, "predators"))
		return 0;
	for (d = 0; d < sc->dims; d++)
		diag += (sc->bmax[d] - sc->bmin[d]) * (sc->bmax[d] - sc->bmin[d]);
	if (read_uint(c, root, "predators.count", 1, SCENARIO_PREDATORS_MAX, 0, 1, &n) ||
	    read_real(c, root, "predators.speed", 0, 1, SCENARIO_VALUE_MAX, sc->speed_max,
		      &sc->pred_speed) ||
	    read_real(c, root, "predators.range", 0, 1, SCENARIO_VALUE_MAX, sqrt(diag),
		      &sc->pred_range) ||
	    read_real(c, root, "predators.max_turn", 0, 0, SCENARIO_VALUE_MAX, 0.0,
		      &sc->pred_max_turn))
		return -1;
	sc->n_predators = (int)n;
	sc->pred_chase = PREDATOR_NEAREST;
	if (chase) {
		size_t i;

		if (name_node(c, chase, "predators.chase", NAMES(CHASE_NAMES), &i) != 0)
			return -1;
		sc->pred_chase = (enum predator_chase)i;
	}
	rc = read_region(c, lookup(root, "predators.region"), "predators.region", sc,
			 sc->pred_min, sc->pred_max);
	if (rc < 0)
		return -1;
	if (rc > 0) {
		memcpy(sc->pred_min, sc->bmin, sizeof sc->pred_min);
		memcpy(sc->pred_max, sc->bmax, sizeof sc->pred_max);
	}
	return 0;
}

/* The population event kinds, by their keys (boidsim-scenario(5)). */
static const char *const EVENT_NAMES[] = {"add", "remove", "disable", "enable"};

const char *scenario_event_name(enum scenario_event_kind k)
{
	return EVENT_NAMES[k];
}

/* population: [{step, add | remove | disable | enable, region}], steps not
 * decreasing. A removal or disabling without a region must leave a boid
 * even were every one in a region to find none; an enabling may ask for no
 * more than can have been disabled; the ids given must fit in 32 bits.
 * capacity bounds the boids alive at once, park_max those disabled. */
static int parse_population(const struct load_ctx *c, const cJSON *root, struct scenario *sc)
{
	const cJSON *list = lookup(root, "population"), *e;
	uint64_t high = sc->count, parked = 0, prev = 0;
	int i = 0, k;

	sc->capacity = sc->ids_total = sc->count;
	sc->park_max = 0;
	if (list == NULL)
		return 0;
	if (!cJSON_IsArray(list) || cJSON_GetArraySize(list) < 1 ||
	    cJSON_GetArraySize(list) > SCENARIO_EVENTS_MAX) {
		fail(c, "population", "expected an array of 1 to %d events", SCENARIO_EVENTS_MAX);
		return -1;
	}
	sc->events = calloc((size_t)cJSON_GetArraySize(list), sizeof *sc->events);
	if (sc->events == NULL) {
		util_err_set(c->err, "out of memory");
		return -1;
	}
	cJSON_ArrayForEach(e, list) {
		struct scenario_event *ev = &sc->events[i];
		const cJSON *st = cJSON_GetObjectItemCaseSensitive(e, "step"), *num = NULL;
		char path[64], sub[96];
		int rc, found = 0;

		snprintf(path, sizeof path, "population[%d]", i);
		sc->n_events = ++i;
		snprintf(sub, sizeof sub, "%s.step", path);
		if (st == NULL) {
			fail(c, sub, "required key is missing");
			return -1;
		}
		/* Step 0 is the initial count; a step beyond the run is never
		 * reached, so that a scenario can be run shorter with --steps. */
		if (uint_node(c, st, sub, 1, SCENARIO_INT_MAX, &ev->step) != 0)
			return -1;
		if (ev->step < prev) {
			char q[64];

			snprintf(q, sizeof q, "population[%d].step", i - 2);
			fail_pair(c, sub, q, NULL,
				  "population steps must not decrease (previous %" PRIu64 ")", prev);
			return -1;
		}
		prev = ev->step;
		for (k = EVENT_ADD; k <= EVENT_ENABLE; k++) {
			const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, EVENT_NAMES[k]);

			if (v) {
				found++;
				num = v;
				ev->kind = (enum scenario_event_kind)k;
			}
		}
		if (found != 1) {
			fail(c, path, "give one of add, remove, disable or enable");
			return -1;
		}
		snprintf(sub, sizeof sub, "%s.%s", path, EVENT_NAMES[ev->kind]);
		if (uint_node(c, num, sub, 1, SCENARIO_COUNT_MAX, &ev->n) != 0)
			return -1;
		snprintf(sub, sizeof sub, "%s.region", path);
		if (ev->kind == EVENT_ENABLE && cJSON_GetObjectItemCaseSensitive(e, "region")) {
			fail(c, sub, "enable brings back the last disabled boids where they "
			     "were: it takes no region");
			return -1;
		}
		rc = read_region(c, cJSON_GetObjectItemCaseSensitive(e, "region"), sub, sc,
				 ev->rmin, ev->rmax);
		if (rc < 0)
			return -1;
		ev->has_region = rc == 0;
		if (!ev->has_region) {
			memcpy(ev->rmin, sc->bmin, sizeof ev->rmin);
			memcpy(ev->rmax, sc->bmax, sizeof ev->rmax);
		}
		snprintf(sub, sizeof sub, "%s.%s", path, EVENT_NAMES[ev->kind]);
		if (ev->kind == EVENT_ADD) {
			if (ev->n > SCENARIO_COUNT_MAX - sc->ids_total) {
				fail(c, sub, "more than %u boids in all: ids are 32-bit",
				     SCENARIO_COUNT_MAX);
				return -1;
			}
			sc->ids_total += ev->n;
			high += ev->n;
		} else if (ev->kind == EVENT_ENABLE) {
			if (ev->n > parked) {
				fail(c, sub, "more than can be disabled before it (%" PRIu64 ")",
				     parked);
				return -1;
			}
			parked -= ev->n;
			high += ev->n;
		} else {
			/* A removal in a region takes what it finds there; one
			 * without takes at most every boid (the count slider of
			 * seed 000 goes down to 0). */
			if (!ev->has_region && ev->n > high) {
				fail(c, sub, "more boids than there are before it (at most %" PRIu64
				     ")", high);
				return -1;
			}
			if (!ev->has_region)
				high -= ev->n;
			if (ev->kind == EVENT_DISABLE) {
				parked += ev->n;
				if (parked > sc->park_max)
					sc->park_max = parked;
			}
		}
		if (high > sc->capacity)
			sc->capacity = high;
	}
	return 0;
}

/* The keys a schedule may change: parameters, never the flock's size,
 * dimensions, box, seed or time step. Attractors and obstacles too: the
 * seed programs' mouse tools moved and retuned them, and drew and erased
 * obstacles, during a run. */
static const char *const SCHEDULABLE[] = {
	"radii", "weights", "speed.min", "speed.max", "speed.variation", "max_force",
	"noise", "view_angle", "max_turn", "target.position", "target.radius",
	"bounds.margin", "hue.weight", "hue.radius", "hue.alignment", "attractors", "obstacles",
	"turn_rate", "return", NULL};

/* Gives every number under item the shortest text that reads back as the
 * same double, bit for bit (a raw node, which cJSON prints as it is).
 * cJSON prints a number with 15 digits when those read back within a
 * relative DBL_EPSILON of it: 2^53 - 1 would come back as 9007199254740990,
 * 0.30000000000000004 as 0.3, and -0 as 0; a scenario printed so would not
 * run as the one that was loaded. 0, or -1 out of memory. */
static int exact_numbers(cJSON *item)
{
	cJSON *c;

	for (; item; item = item->next) {
		if (cJSON_IsNumber(item)) {
			char buf[NUM_TEXT_MAX], *text;

			/* (infinities and NaN never get here: the loader refuses
			 * them, and the printer would write null) */
			num_text(item->valuedouble, buf);
			if ((text = malloc(strlen(buf) + 1)) == NULL)
				return -1;
			strcpy(text, buf);
			item->type = cJSON_Raw | (item->type & cJSON_StringIsConst);
			item->valuestring = text;
		} else if ((c = item->child) != NULL && exact_numbers(c) != 0) {
			return -1;
		}
	}
	return 0;
}

/* cJSON_Print(Unformatted) of item, its numbers exact (exact_numbers), on
 * a copy: item itself is left as it is. NULL out of memory. */
static char *print_exact(const cJSON *item, int formatted)
{
	cJSON *copy = cJSON_Duplicate(item, 1);
	char *text = NULL;

	if (copy && exact_numbers(copy) == 0)
		text = formatted ? cJSON_Print(copy) : cJSON_PrintUnformatted(copy);
	cJSON_Delete(copy);
	return text;
}

/* Sets object o's key to v unless it has it (creating o under parent when
 * absent); 0, or -1 out of memory. */
static int default_number(cJSON *parent, const char *obj, const char *key, double v)
{
	cJSON *o = cJSON_GetObjectItemCaseSensitive(parent, obj);

	if (o == NULL && !(o = cJSON_AddObjectToObject(parent, obj)))
		return -1;
	if (cJSON_GetObjectItemCaseSensitive(o, key))
		return 0;
	return cJSON_AddNumberToObject(o, key, v) ? 0 : -1;
}

static int fix_defaults(cJSON *work, const struct scenario *sc)
{
	if (sc->n_predators > 0 && (default_number(work, "predators", "speed", sc->pred_speed) ||
				    default_number(work, "radii", "flee", sc->r_flee)))
		return -1;
	if (sc->n_obstacles > 0 && default_number(work, "radii", "avoid", sc->r_avoid))
		return -1;
	return 0;
}

static int model_uses(enum model_kind m, const char *path);

static int parse_schedule(const struct load_ctx *c, const cJSON *root, struct scenario *sc)
{
	const cJSON *list = lookup(root, "schedule"), *e;
	cJSON *work;
	uint64_t prev = 0;
	int i = 0;

	if (list == NULL)
		return 0;
	if (cJSON_GetArraySize(list) > SCENARIO_STAGES_MAX) {
		fail(c, "schedule", "at most %d entries", SCENARIO_STAGES_MAX);
		return -1;
	}
	sc->stages = calloc((size_t)cJSON_GetArraySize(list) + 1, sizeof *sc->stages);
	work = cJSON_Duplicate(root, 1);
	if (sc->stages == NULL || work == NULL) {
		cJSON_Delete(work);
		util_err_set(c->err, "out of memory");
		return -1;
	}
	cJSON_DeleteItemFromObjectCaseSensitive(work, "schedule");
	/* The population and the start are the run's, not a stage's. */
	cJSON_DeleteItemFromObjectCaseSensitive(work, "population");
	cJSON_DeleteItemFromObjectCaseSensitive(work, "start");
	/* The hue radius defaults to the alignment radius at the start: a
	 * schedule changes it only through hue.radius, so that the effective
	 * scenario, which names it, runs the same stages. */
	if (sc->has_hue) {
		cJSON *hue = cJSON_GetObjectItemCaseSensitive(work, "hue");

		if (hue && !cJSON_GetObjectItemCaseSensitive(hue, "radius") &&
		    !cJSON_AddNumberToObject(hue, "radius", sc->r_hue)) {
			cJSON_Delete(work);
			util_err_set(c->err, "out of memory");
			return -1;
		}
	}
	/* Likewise the defaults that follow other parameters: a stage keeps
	 * the values of the start (predators.speed follows speed.max,
	 * radii.flee and radii.avoid radii.alignment), as the effective
	 * scenario names them. */
	if (fix_defaults(work, sc) != 0) {
		cJSON_Delete(work);
		util_err_set(c->err, "out of memory");
		return -1;
	}
	sc->schedule_json = print_exact(list, 0);
	if (sc->schedule_json == NULL) {
		cJSON_Delete(work);
		util_err_set(c->err, "out of memory");
		return -1;
	}
	cJSON_ArrayForEach(e, list) {
		const cJSON *st = cJSON_GetObjectItemCaseSensitive(e, "step");
		const cJSON *set = cJSON_GetObjectItemCaseSensitive(e, "set"), *kv;
		struct scenario_stage *stage = &sc->stages[i];
		char path[64], file[UTIL_ERR_MAX / 2], where[UTIL_ERR_MAX / 2];
		char src_buf[UTIL_ERR_MAX / 4];
		const char *hue_refusal, *src;
		struct load_ctx sub = *c;

		/* the stage's errors are the file's, or an override's that wrote
		 * this entry or a part of it */
		snprintf(path, sizeof path, "schedule[%d]", i);
		src = source_name(c, owner(c, path, 1), src_buf, sizeof src_buf);
		snprintf(path, sizeof path, "schedule[%d].step", i);
		if (st == NULL || set == NULL) {
			fail(c, path, "each entry needs step and set");
			goto fail;
		}
		/* A step beyond the run is allowed (never reached), so that a
		 * scenario can be run shorter with --steps. */
		if (uint_node(c, st, path, 1, SCENARIO_INT_MAX, &stage->step) != 0)
			goto fail;
		if (i > 0 && stage->step <= prev) {
			char q[64];

			snprintf(q, sizeof q, "schedule[%d].step", i - 1);
			fail_pair(c, path, q, NULL, "schedule steps must increase");
			goto fail;
		}
		prev = stage->step;
		for (kv = set->child; kv; kv = kv->next) {
			const cJSON *prev_kv;
			const char *const *ok;
			char *val, *text;
			struct scenario_override ov;

			for (ok = SCHEDULABLE; *ok; ok++)
				if (path_has_prefix(kv->string, *ok, strlen(*ok)))
					break;
			snprintf(path, sizeof path, "schedule[%d].set", i);
			/* an element of a list the model ignores: the effective
			 * scenario leaves the list out, and could not load again */
			if (*ok && strchr(kv->string, '[') && !model_uses(sc->model, kv->string)) {
				fail(c, path, "\"%s\": not used by model %s", kv->string,
				     MODEL_NAMES[sc->model]);
				goto fail;
			}
			/* one value, one key: "radii.cohesion" beside "radii" would
			 * have the later one win, unseen */
			for (prev_kv = set->child; prev_kv != kv; prev_kv = prev_kv->next)
				if (path_has_prefix(kv->string, prev_kv->string,
						    strlen(prev_kv->string)) ||
				    path_has_prefix(prev_kv->string, kv->string, strlen(kv->string))) {
					fail(c, path, "\"%s\" and \"%s\" overlap (give each value "
					     "once)", prev_kv->string, kv->string);
					goto fail;
				}
			if (*ok == NULL) {
				fail(c, path, "\"%s\" cannot change during a run (the keys that "
				     "can are under schedule in boidsim-scenario(5))", kv->string);
				goto fail;
			}
			val = print_exact(kv, 0);
			text = val ? malloc(strlen(kv->string) + strlen(val) + 2) : NULL;
			if (text == NULL) {
				free(val);
				util_err_set(c->err, "out of memory");
				goto fail;
			}
			sprintf(text, "%s=%s", kv->string, val);
			free(val);
			ov.text = text;
			ov.label = NULL;
			snprintf(file, sizeof file, "%s: schedule[%d].set", src, i);
			if (snprintf(where, sizeof where, "%s.%s", file, kv->string) < 0)
				snprintf(where, sizeof where, "%s", file); /* (an encoding error) */
			sub.file = file;
			sub.ov = &ov;
			sub.n_ov = 0;
			if (apply_override(&sub, work, text, NULL, where) != 0) {
				free(text);
				goto fail;
			}
			free(text);
		}
		snprintf(file, sizeof file, "%s: schedule[%d]", src, i);
		sub.file = file;
		sub.ov = NULL;
		sub.n_ov = 0;
		sub.stage = 1;
		if (validate(&sub, work, &stage->sc) != 0)
			goto fail;
		/* The hue is state: a schedule can tune it, not start it. */
		hue_refusal = stage->sc.has_hue != sc->has_hue ?
				      "hue.weight and hue.radius only in a scenario that has a hue key" :
			      stage->sc.hue_spin_on != sc->hue_spin_on ?
				      "hue.alignment only in a scenario whose hue has alignment or spin" :
				      NULL;
		sc->n_stages = ++i;
		if (hue_refusal) {
			snprintf(path, sizeof path, "schedule[%d].set", i - 1);
			fail(c, path, "a schedule can change %s", hue_refusal);
			goto fail;
		}
	}
	cJSON_Delete(work);
	return 0;
fail:
	/* the stage being read, not yet counted in n_stages (its parts, as
	 * validate left them, are its own) */
	if (sc->stages && sc->n_stages < cJSON_GetArraySize(list))
		scenario_free(&sc->stages[sc->n_stages].sc);
	cJSON_Delete(work);
	return -1;
}

/* One note for each key given that the model ignores. */
static int note_unused(const struct load_ctx *c, const cJSON *root, struct scenario *sc)
{
	const char *const *k;

	for (k = UNUSED[sc->model]; *k; k++) {
		char note[UTIL_ERR_MAX], buf[UTIL_ERR_MAX / 2];

		if (lookup(root, *k) == NULL || sc->n_notes == SCENARIO_NOTES_MAX)
			continue;
		/* named after what gave the key, as an error is */
		snprintf(note, sizeof note, "%s: %s: not used by model %s",
			 source_name(c, owner(c, *k, 1), buf, sizeof buf), *k,
			 MODEL_NAMES[sc->model]);
		if (!(sc->notes[sc->n_notes] = strdup(note))) {
			util_err_set(c->err, "out of memory");
			return -1;
		}
		sc->n_notes++;
	}
	return 0;
}

static int validate(const struct load_ctx *c, const cJSON *root, struct scenario *sc)
{
	const double VM = SCENARIO_VALUE_MAX;
	const cJSON *n;
	uint64_t dims, need, level, per;
	uint64_t phys;
	size_t mode, model, move, compressor;
	double side_min;
	int d, rc;

	memset(sc, 0, sizeof *sc);
	if (check_object(c, root, ROOT_KEYS, "") != 0)
		return -1;
	n = lookup(root, "description");
	if (n && !cJSON_IsString(n)) {
		fail(c, "description", "expected a string");
		return -1;
	}
	if (read_uint(c, root, "dimensions", 2, 3, 0, 2, &dims) != 0)
		return -1;
	sc->dims = (int)dims;
	if (read_uint(c, root, "count", 0, SCENARIO_COUNT_MAX, 1, 0, &sc->count) ||
	    read_uint(c, root, "steps", 0, SCENARIO_INT_MAX, 1, 0, &sc->steps) ||
	    read_real(c, root, "dt", 0, 1, VM, 1.0, &sc->dt) ||
	    read_seed(c, root, &sc->seed) ||
	    read_real(c, root, "radii.separation", 0, 1, VM, 1.0, &sc->r_sep) ||
	    read_real(c, root, "radii.alignment", 0, 1, VM, 3.0, &sc->r_ali) ||
	    read_real(c, root, "radii.cohesion", 0, 1, VM, 3.0, &sc->r_coh) ||
	    read_real(c, root, "weights.separation", 0, 0, VM, 1.5, &sc->w_sep) ||
	    read_real(c, root, "weights.alignment", 0, 0, VM, 1.0, &sc->w_ali) ||
	    read_real(c, root, "weights.cohesion", 0, 0, VM, 1.0, &sc->w_coh) ||
	    read_real(c, root, "weights.target", 0, 0, VM, 1.0, &sc->w_target) ||
	    read_real(c, root, "weights.bounds", 0, 0, VM, 1.0, &sc->w_bounds) ||
	    read_real(c, root, "speed.min", 0, 0, VM, 0.0, &sc->speed_min) ||
	    read_real(c, root, "speed.max", 0, 1, VM, 1.0, &sc->speed_max) ||
	    read_real(c, root, "max_force", 0, 1, VM, 0.05, &sc->max_force) ||
	    read_uint(c, root, "output.every", 1, SCENARIO_INT_MAX, 0, 1, &sc->every) ||
	    read_uint(c, root, "output.compression", 0, 9, 0, TRAJ_LEVEL_DEFAULT, &level) ||
	    read_real(c, root, "output.precision", 0, 1, VM, 0.0, &sc->precision) ||
	    read_name(c, root, "bounds.mode", NAMES(MODE_NAMES), BOUNDS_WRAP, &mode) ||
	    read_name(c, root, "output.compressor", NAMES(TRAJ_COMPRESSOR_NAMES), 0,
		      &compressor))
		return -1;
	sc->compression = (int)level;
	sc->compressor = (int)compressor;
	sc->mode = (enum bounds_mode)mode;
	if (read_name(c, root, "model", NAMES(MODEL_NAMES), MODEL_REYNOLDS, &model) ||
	    read_name(c, root, "move_with", NAMES(MOVE_NAMES), 0, &move) ||
	    read_real(c, root, "noise", 0, 0, 2 * 3.14159265358979323846, 0.0, &sc->noise) ||
	    read_real(c, root, "view_angle", 0, 1, 360, 360, &sc->view_angle) ||
	    read_real(c, root, "max_turn", 0, 1, VM, 0.0, &sc->max_turn))
		return -1;
	sc->model = (enum model_kind)model;
	sc->move_new = move == 1;
	if (sc->mode == BOUNDS_STEER && sc->model != MODEL_REYNOLDS &&
	    sc->model != MODEL_SIMPLE && sc->model != MODEL_ACCELERATE) {
		fail(c, "bounds.mode", "steer needs a model with forces (reynolds, simple or "
		     "accelerate); model %s has none", MODEL_NAMES[sc->model]);
		return -1;
	}
	if (sc->speed_min > sc->speed_max) {
		fail_pair(c, "speed.min", "speed.max", NULL, "must not exceed speed.max (%s)",
			  NUM(sc->speed_max));
		return -1;
	}
	if (read_vec(c, root, "bounds.min", sc->dims, 1, sc->bmin) != 0 ||
	    read_vec(c, root, "bounds.max", sc->dims, 1, sc->bmax) != 0)
		return -1;
	side_min = VM * 2;
	for (d = 0; d < sc->dims; d++) {
		char p[32];

		if (!(sc->bmax[d] > sc->bmin[d])) {
			snprintf(p, sizeof p, "bounds.max[%d]", d);
			char q[32];

			snprintf(q, sizeof q, "bounds.min[%d]", d);
			fail_pair(c, p, q, NULL, "must be greater than bounds.min[%d] (%s)", d,
				  NUM(sc->bmin[d]));
			return -1;
		}
		if (sc->bmax[d] - sc->bmin[d] < side_min)
			side_min = sc->bmax[d] - sc->bmin[d];
	}
	if (read_real(c, root, "bounds.margin", 0, 0, VM, 0.1 * side_min, &sc->margin))
		return -1;
	/* inertia's speed factor 1 + variation nu may reach 0 (seed 002's
	 * default variation is 1); the cruise speeds of the others may not */
	if (read_real(c, root, "speed.variation", 0, 0, sc->model == MODEL_INERTIA ? 1.0 : 0.999,
		      0.0, &sc->speed_variation) ||
	    read_real(c, root, "speed.noise.amplitude", 0, 0, 0.999, 0.0, &sc->speed_noise_amp) ||
	    read_real(c, root, "speed.noise.period", 0, 1, VM, 10.0, &sc->speed_noise_period))
		return -1;
	n = lookup(root, "target");
	if (n) {
		sc->has_wander = lookup(root, "target.wander") != NULL;
		if (sc->has_wander) {
			if (read_vec(c, root, "target.wander.min", sc->dims, 1, sc->wander_min) ||
			    read_vec(c, root, "target.wander.max", sc->dims, 1, sc->wander_max) ||
			    read_real(c, root, "target.wander.interval", 1, 0, VM, 100.0,
				      &sc->wander_interval))
				return -1;
			for (d = 0; d < sc->dims; d++)
				if (!(sc->wander_max[d] > sc->wander_min[d])) {
					char p[48];

					snprintf(p, sizeof p, "target.wander.max[%d]", d);
					char q[48];

					snprintf(q, sizeof q, "target.wander.min[%d]", d);
					fail_pair(c, p, q, NULL,
						  "must be greater than target.wander.min[%d]", d);
					return -1;
				}
		}
		/* Without a position, a wandering target starts at its first draw. */
		rc = read_vec(c, root, "target.position", sc->dims, !sc->has_wander, sc->target);
		if (rc < 0)
			return -1;
		if (rc > 0)
			for (d = 0; d < sc->dims; d++)
				sc->target[d] = (sc->wander_min[d] + sc->wander_max[d]) / 2;
		if (read_real(c, root, "target.radius", 0, 0, VM, 0.0, &sc->target_radius))
			return -1;
		sc->has_target = 1;
	}
	/* inertia reads its value noise at t / period + (0 to 1000): past
	 * about 1e6 the lattice's sin arguments leave detmath_sin's range */
	if (sc->model == MODEL_INERTIA && sc->speed_variation > 0 &&
	    !((double)sc->steps * sc->dt / sc->speed_noise_period <= 1e6)) {
		fail(c, "speed.noise.period", "the noise would be read at t/period up to %s, "
		     "beyond 1e6: make it at least %s", NUM((double)sc->steps * sc->dt /
		     sc->speed_noise_period), NUM((double)sc->steps * sc->dt / 1e6));
		return -1;
	}
	/* the other models' speed noise draws at the lattice index
	 * floor(t / period), an integer of 64 bits: exact only below 2^53 (and
	 * beyond 2^64 its conversion is undefined, and differed between
	 * instruction sets) */
	if (sc->model != MODEL_INERTIA && sc->speed_noise_amp > 0 &&
	    !((double)sc->steps * sc->dt / sc->speed_noise_period <= SCENARIO_INT_MAX)) {
		fail_pair(c, "speed.noise.period", "steps", "dt",
			  "the noise would be read at t/period up to %s, beyond 2^53 - 1: make "
			  "it at least %s", NUM((double)sc->steps * sc->dt / sc->speed_noise_period),
			  NUM((double)sc->steps * sc->dt / SCENARIO_INT_MAX));
		return -1;
	}
	if (parse_return(c, root, sc) != 0 || parse_start(c, root, sc) != 0 ||
	    read_real(c, root, "turn_rate", 0, 0, VM, 1.0, &sc->turn_rate))
		return -1;
	if (parse_attractors(c, root, sc) != 0 || parse_obstacles(c, root, sc) != 0 ||
	    read_real(c, root, "radii.avoid", 0, 1, VM, sc->r_ali, &sc->r_avoid) ||
	    read_real(c, root, "weights.avoid", 0, 0, VM, 1.0, &sc->w_avoid) ||
	    parse_predators(c, root, sc) != 0 || parse_population(c, root, sc) != 0)
		return -1;
	/* Colour following: on when the key is there, even empty. A rate
	 * above 1/dt would carry a hue past its neighbours' mean. The radius
	 * stays within the grid's cells, which the model's radii size: a
	 * larger cell would change the order of the motion's sums, and the
	 * hue must not change motion, not even in the last bit. */
	if (lookup(root, "hue")) {
		sc->has_hue = 1;
		if (read_real(c, root, "hue.weight", 0, 0, VM, 0.1, &sc->hue_weight) ||
		    read_real(c, root, "hue.radius", 0, 1, VM,
			      sc->r_ali < scenario_max_radius(sc) ? sc->r_ali : scenario_max_radius(sc),
			      &sc->r_hue))
			return -1;
		if (sc->hue_weight * sc->dt > 1.0) {
			fail(c, "hue.weight", "must be at most 1/dt (%s), got %s", NUM(1.0 / sc->dt),
			     NUM(sc->hue_weight));
			return -1;
		}
		if (sc->r_hue > scenario_max_radius(sc)) {
			fail(c, "hue.radius", "must be at most the model's largest radius (%s), "
			     "got %s", NUM(scenario_max_radius(sc)), NUM(sc->r_hue));
			return -1;
		}
		/* A colour velocity: alignment above 1/dt would carry a rate
		 * past its neighbours' mean in one step, as for the weight. */
		sc->hue_spin_on = lookup(root, "hue.alignment") || lookup(root, "hue.spin");
		sc->hue_spin_lo = sc->hue_spin_hi = 0.0;
		if (read_real(c, root, "hue.alignment", 0, 0, VM, 0.0, &sc->hue_alignment) ||
		    read_interval(c, root, "hue.spin", -VM, VM, &sc->hue_spin_lo, &sc->hue_spin_hi))
			return -1;
		if (sc->hue_alignment * sc->dt > 1.0) {
			fail(c, "hue.alignment", "must be at most 1/dt (%s), got %s",
			     NUM(1.0 / sc->dt), NUM(sc->hue_alignment));
			return -1;
		}
	}
	/* Unbounded flocks drift: keep every reachable coordinate well inside
	 * binary32 range (squared distances of 1e19 would overflow it). */
	if (sc->mode == BOUNDS_NONE || sc->mode == BOUNDS_STEER) {
		double reach = 0;

		for (d = 0; d < sc->dims; d++)
			reach = detmath_fmax(reach, detmath_fmax(fabs(sc->bmin[d]), fabs(sc->bmax[d])));
		const int pred = sc->n_predators > 0 && sc->pred_speed > sc->speed_max;

		reach += (pred ? sc->pred_speed : sc->speed_max) * sc->dt * (double)sc->steps;
		if (!(reach <= SCENARIO_REACH_MAX)) {
			fail_pair(c, "steps", pred ? "predators.speed" : "speed.max", "dt",
				  "a %s could travel %s from the origin, beyond the %s that "
				  "binary32 positions support",
				  pred ? "predator at predators.speed" : "boid at speed.max",
				  NUM(reach), NUM(SCENARIO_REACH_MAX));
			return -1;
		}
	}
	/* A sky that starts empty is filled by the schedule (seed 004 places
	 * its boids with the mouse); one that stays empty has nothing to run. */
	if (!c->stage && sc->capacity == 0 && sc->n_predators == 0) {
		fail(c, "count", "0 boids, and no population add and no predator: nothing to "
		     "simulate");
		return -1;
	}
	/* Refuse before allocating: the arrays must fit in size_t and in RAM. */
	per = SCENARIO_BYTES_PER_BOID + (sc->has_hue ? SCENARIO_HUE_BYTES_PER_BOID : 0) +
	      (sc->hue_spin_on ? SCENARIO_SPIN_BYTES_PER_BOID : 0);
	if (sc->capacity > SIZE_MAX / per) {
		fail(c, sc->n_events ? "population" : "count", "%" PRIu64 " boids overflow "
		     "this machine's address space", sc->capacity);
		return -1;
	}
	/* With a population schedule, a rank (4 bytes) per id ever given, and
	 * the disabled boids' ids and state. */
	need = sc->capacity * per + (sc->n_events ? sc->ids_total * 4 : 0) + sc->park_max * per;
	phys = util_phys_mem();
	if (phys != 0 && need > phys) {
		fail(c, sc->n_events ? "population" : "count", "%" PRIu64 " boids need about "
		     "%.1f GiB, more than this machine's %.1f GiB", sc->capacity,
		     need / 1073741824.0, phys / 1073741824.0);
		return -1;
	}
	if (note_unused(c, root, sc) != 0 || parse_schedule(c, root, sc) != 0)
		return -1;
	/* The obstacles' spatial index, tuned for the avoidance radius, every
	 * boid's query each step (exact for any query: a longer move looks at
	 * several cells); NULL for few obstacles, or when it cannot be had,
	 * and every obstacle is tested. */
	sc->obstacle_index = obstacle_index_build(sc->obstacles, sc->n_obstacles, sc->dims,
						  sc->r_avoid);
	n = lookup(root, "description");
	if (n) {
		sc->description = strdup(n->valuestring);
		if (sc->description == NULL) {
			util_err_set(c->err, "out of memory");
			return -1;
		}
	}
	return 0;
}

/* ---- text checks before parsing ----------------------------------------- */
/* Whether a string of JSON text t holds the escape \u0000: cJSON's strings
 * end at a NUL, so "count\u0000x" would be read as count, silently. *at:
 * where the escape starts. */
static int nul_escape(const char *t, size_t len, size_t *at)
{
	size_t i;
	int in = 0;

	for (i = 0; i < len; i++) {
		if (!in) {
			in = t[i] == '"';
		} else if (t[i] == '"') {
			in = 0;
		} else if (t[i] == '\\' && i + 1 < len) {
			if (i + 5 < len && t[i + 1] == 'u' && memcmp(t + i + 2, "0000", 4) == 0) {
				*at = i;
				return 1;
			}
			i++; /* the escaped character, which may be a quote */
		}
	}
	return 0;
}

static int valid_utf8(const unsigned char *s, size_t len, size_t *bad)
{
	size_t i = 0;

	while (i < len) {
		unsigned char b = s[i];
		size_t n, k;
		uint32_t cp;

		if (b < 0x80) {
			i++;
			continue;
		}
		if (b >= 0xC2 && b <= 0xDF) { n = 1; cp = b & 0x1F; }
		else if (b >= 0xE0 && b <= 0xEF) { n = 2; cp = b & 0x0F; }
		else if (b >= 0xF0 && b <= 0xF4) { n = 3; cp = b & 0x07; }
		else goto invalid;
		for (k = 1; k <= n; k++) {
			if (i + k >= len || (s[i + k] & 0xC0) != 0x80)
				goto invalid;
			cp = (cp << 6) | (s[i + k] & 0x3F);
		}
		/* overlong forms, surrogates and values beyond U+10FFFF */
		if ((n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) ||
		    cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
			goto invalid;
		i += n + 1;
	}
	return 1;
invalid:
	*bad = i;
	return 0;
}

/* What cJSON accepts that RFC 8259 does not, in text it has parsed: a
 * control character between tokens (cJSON skips every byte up to the
 * space; JSON's whitespace is space, tab, LF and CR) or raw in a string
 * (section 7: U+0000 to U+001F must be escaped), and numbers that
 * strtod reads but JSON's grammar (section 6) refuses: 010, 1., -.5,
 * 1.e5. Returns 0, or 1 with *at the first such byte and *why what it is. */
static int json_lax(const char *t, size_t len, size_t *at, const char **why)
{
	size_t i = 0;

	while (i < len) {
		const unsigned char ch = (unsigned char)t[i];

		if (ch == '"') {
			for (i++; i < len && t[i] != '"'; i++) {
				if ((unsigned char)t[i] < 0x20) {
					*at = i;
					*why = "a control character in a string (JSON writes it "
					       "as an escape, \\n, \\t or \\u00XX)";
					return 1;
				}
				if (t[i] == '\\')
					i++;
			}
			i++;
		} else if (ch == '-' || (ch >= '0' && ch <= '9')) {
			/* -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)? */
			const size_t start = i;

			*why = "a number JSON does not allow (a leading zero, or no digit "
			       "before or after the point)";
			if (t[i] == '-')
				i++;
			if (i < len && t[i] == '0') {
				i++;
				if (i < len && t[i] >= '0' && t[i] <= '9') {
					*at = start;
					return 1;
				}
			} else if (i < len && t[i] >= '1' && t[i] <= '9') {
				while (i < len && t[i] >= '0' && t[i] <= '9')
					i++;
			} else {
				*at = start;
				return 1;
			}
			if (i < len && t[i] == '.') {
				if (++i >= len || t[i] < '0' || t[i] > '9') {
					*at = start;
					return 1;
				}
				while (i < len && t[i] >= '0' && t[i] <= '9')
					i++;
			}
			if (i < len && (t[i] == 'e' || t[i] == 'E')) {
				if (++i < len && (t[i] == '+' || t[i] == '-'))
					i++;
				if (i >= len || t[i] < '0' || t[i] > '9') {
					*at = start;
					return 1;
				}
				while (i < len && t[i] >= '0' && t[i] <= '9')
					i++;
			}
		} else if (ch < 0x20 && ch != '\t' && ch != '\n' && ch != '\r') {
			*at = i;
			*why = "a control character where JSON allows only space, tab and "
			       "line breaks";
			return 1;
		} else {
			i++;
		}
	}
	return 0;
}

/* Where text[0 .. n) leaves a JSON reader: inside a string or not, the
 * deepest nesting of arrays and objects on the way, and (inner, if not
 * NULL) the bracket innermost open at the end, 0 for none or past the
 * depth cJSON takes. */
static void scan_json(const char *text, size_t n, int *in_str, size_t *most, char *inner)
{
	char open[CJSON_NESTING_LIMIT + 1];
	size_t i, depth = 0;

	*in_str = 0;
	*most = 0;
	for (i = 0; i < n; i++) {
		char ch = text[i];

		if (*in_str) {
			if (ch == '\\')
				i++;
			else if (ch == '"')
				*in_str = 0;
		} else if (ch == '"') {
			*in_str = 1;
		} else if (ch == '[' || ch == '{') {
			if (depth < sizeof open)
				open[depth] = ch;
			if (++depth > *most)
				*most = depth;
		} else if ((ch == ']' || ch == '}') && depth > 0) {
			depth--;
		}
	}
	if (inner)
		*inner = depth > 0 && depth <= sizeof open ? open[depth - 1] : 0;
}

/* Whether text[0 .. len) is the start of a JSON value that closing its
 * open string, arrays and objects would complete. */
static int cut_short(const char *text, size_t len)
{
	char open[CJSON_NESTING_LIMIT], *whole;
	size_t i, depth = 0;
	int in_str = 0, ok;
	cJSON *v;

	for (i = 0; i < len; i++) {
		char ch = text[i];

		if (in_str) {
			if (ch == '\\')
				i++;
			else if (ch == '"')
				in_str = 0;
		} else if (ch == '"') {
			in_str = 1;
		} else if (ch == '[' || ch == '{') {
			if (depth == sizeof open)
				return 0;
			open[depth++] = ch == '[' ? ']' : '}';
		} else if (ch == ']' || ch == '}') {
			if (depth == 0 || open[--depth] != ch)
				return 0;
		}
	}
	if (depth == 0 && !in_str)
		return 0;
	whole = malloc(len + depth + 2);
	if (whole == NULL)
		return 0;
	memcpy(whole, text, len);
	i = len;
	if (in_str)
		whole[i++] = '"';
	while (depth > 0)
		whole[i++] = open[--depth];
	v = cJSON_ParseWithLength(whole, i);
	ok = v != NULL;
	cJSON_Delete(v);
	free(whole);
	return ok;
}

/* What most likely broke a parse that stopped at off: arrays and objects
 * nested deeper than cJSON takes, a text cut short, a \\u escape of a
 * lone surrogate (no character), or else the usual non-JSON habits. */
static const char *parse_hint(const char *text, size_t len, size_t off)
{
	size_t i, most;
	int in_str;

	scan_json(text, off < len ? off : len, &in_str, &most, NULL);
	if (most >= CJSON_NESTING_LIMIT)
		return "arrays and objects nested deeper than " STR(CJSON_NESTING_LIMIT) " levels";
	/* a text cut short: closing what is open at its end makes it JSON */
	if (cut_short(text, len))
		return "the text ends early: a string, array or object is not closed";
	/* the escape the parser stopped in, or just before */
	/* (the text is not NUL-terminated: every read below len) */
	for (i = off >= 12 ? off - 12 : 0; in_str && i <= off && i + 3 < len; i++)
		if (text[i] == '\\' && text[i + 1] == 'u' && (text[i + 2] == 'd' || text[i + 2] == 'D') &&
		    text[i + 3] != '\0' && strchr("89abcdefABCDEF", text[i + 3]))
			return "a \\u escape of a lone surrogate (D800 to DFFF) is not a character";
	return "not valid JSON (NaN, Infinity, comments and trailing commas are not JSON)";
}

/* Whether a parse that stopped at off stopped one past the first
 * character of what had to be an object's key: cJSON reports a string
 * that does not start with a quote after that character, where every
 * other error is reported at the character itself. So: the character
 * before off is not a space or a quote, the one before it (past spaces)
 * opens an object or follows one of its members, and the innermost
 * bracket open there is a brace. */
static int key_expected(const char *text, size_t len, size_t off)
{
	size_t p, most;
	int in_str;
	char inner;

	if (off < 2 || off > len || isspace((unsigned char)text[off - 1]) || text[off - 1] == '"')
		return 0;
	for (p = off - 1; p > 0 && isspace((unsigned char)text[p - 1]); p--)
		;
	if (p == 0 || (text[p - 1] != '{' && text[p - 1] != ','))
		return 0;
	scan_json(text, p, &in_str, &most, &inner);
	return !in_str && inner == '{';
}

static void line_col(const char *text, size_t off, int *line, int *col)
{
	size_t i;

	*line = 1;
	*col = 1;
	for (i = 0; i < off; i++) {
		if (text[i] == '\n') {
			(*line)++;
			*col = 1;
		} else {
			(*col)++;
		}
	}
}

int scenario_load_string(const char *name, const char *text, size_t len,
			 const struct scenario_override *ov, int n_ov,
			 struct scenario *sc, struct util_err *err)
{
	struct load_ctx c = {name, ov, n_ov, err, 0};
	const char *end = NULL;
	cJSON *root = NULL;
	size_t bad, i;
	int line, col, rc = -1;

	memset(sc, 0, sizeof *sc);
	for (i = 0; i < len && isspace((unsigned char)text[i]); i++)
		;
	if (i == len) {
		util_err_set(err, "%s: empty file, expected a JSON object", name);
		goto out;
	}
	if (memchr(text, '\0', len) != NULL) {
		line_col(text, (size_t)((const char *)memchr(text, '\0', len) - text),
			 &line, &col);
		util_err_set(err, "%s:%d:%d: NUL byte in scenario text", name, line, col);
		goto out;
	}
	if (!valid_utf8((const unsigned char *)text, len, &bad)) {
		line_col(text, bad, &line, &col);
		util_err_set(err, "%s:%d:%d: invalid UTF-8", name, line, col);
		goto out;
	}
	root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
	if (root == NULL) {
		const char *at = cJSON_GetErrorPtr();
		size_t off = (at && at >= text && at <= text + len) ? (size_t)(at - text) : 0;

		if (key_expected(text, len, off)) {
			line_col(text, off - 1, &line, &col);
			util_err_set(err, "%s:%d:%d: parse error: expected a key (a string in "
				     "double quotes)%s", name, line, col,
				     text[off - 1] == '}' ? "; JSON has no trailing commas" : "");
			goto out;
		}
		line_col(text, off, &line, &col);
		util_err_set(err, "%s:%d:%d: parse error: %s", name, line, col,
			     parse_hint(text, len, off));
		goto out;
	}
	for (; end < text + len && isspace((unsigned char)*end); end++)
		;
	if (end < text + len && *end != '\0') {
		line_col(text, (size_t)(end - text), &line, &col);
		util_err_set(err, "%s:%d:%d: parse error: text after the end of the "
			     "JSON document", name, line, col);
		goto out;
	}
	if (nul_escape(text, len, &bad)) {
		line_col(text, bad, &line, &col);
		util_err_set(err, "%s:%d:%d: \\u0000 in a string: NUL is not allowed in "
			     "scenario text", name, line, col);
		goto out;
	}
	{
		const char *why;

		if (json_lax(text, (size_t)(end - text), &bad, &why)) {
			line_col(text, bad, &line, &col);
			util_err_set(err, "%s:%d:%d: parse error: %s", name, line, col, why);
			goto out;
		}
	}
	if (!cJSON_IsObject(root)) {
		util_err_set(err, "%s: expected a JSON object at the top level", name);
		goto out;
	}
	for (i = 0; i < (size_t)n_ov; i++)
		if (apply_override(&c, root, ov[i].text, ov[i].label, NULL) != 0)
			goto out;
	if (validate(&c, root, sc) != 0) {
		scenario_free(sc);
		goto out;
	}
	/* The effective scenario, defaults filled in and formatted, is what
	 * --check prints and a trajectory embeds: it must load again, so it
	 * must fit the same limit. (Text of a sixteenth of it cannot grow so
	 * much: the defaults add a few kilobytes, the formatting about 2x.) */
	if (len > SCENARIO_FILE_MAX / 16) {
		char *eff = scenario_to_json(sc);
		size_t elen = eff ? strlen(eff) : 0;

		free(eff);
		if (eff == NULL || elen > SCENARIO_FILE_MAX) {
			if (eff == NULL)
				util_err_set(err, "%s: out of memory", name);
			else
				util_err_set(err, "%s: the effective scenario (every default filled "
					     "in, formatted) would be %zu bytes, more than the %u a "
					     "scenario may have", name, elen, SCENARIO_FILE_MAX);
			scenario_free(sc);
			goto out;
		}
	}
	rc = 0;
out:
	cJSON_Delete(root);
	return rc;
}

/* A trajectory given where a scenario belongs (boidsim run.bin -o x.bin)
 * would fail at some byte of it with a puzzling parse error: recognise
 * the binary magic, gzip's, or a CSV trajectory's header line, and say
 * what to do instead. */
static int refuse_trajectory(const char *shown, const char *name, const char *buf,
			     size_t len, struct util_err *err)
{
	static const char hint[] = "boidsim info --scenario extracts the scenario of a "
				   ".bin trajectory; CSV holds none";

	if (len >= TRAJ_MAGIC_LEN && memcmp(buf, TRAJ_MAGIC, TRAJ_MAGIC_LEN) == 0)
		util_err_set(err, "%s: this is a boidsim trajectory, not a scenario (boidsim "
			     "info --scenario %s > s.json extracts its scenario)", shown, name);
	else if (len >= 2 && memcmp(buf, "\x1f\x8b", 2) == 0)
		util_err_set(err, "%s: gzip-compressed, not a scenario (a .csv.gz trajectory? %s)",
			     shown, hint);
	else if ((len >= 8 && memcmp(buf, "step,id,", 8) == 0) ||
		 (len >= 14 && memcmp(buf, "step,group,id,", 14) == 0))
		util_err_set(err, "%s: this is a boidsim CSV trajectory, not a scenario (%s)",
			     shown, hint);
	else
		return 0;
	return -1;
}

int scenario_load_file(const char *name, const struct scenario_override *ov,
		       int n_ov, struct scenario *sc, struct util_err *err)
{
	int is_stdin = strcmp(name, "-") == 0;
	const char *shown = is_stdin ? "<stdin>" : name;
	FILE *f = is_stdin ? stdin : fopen(name, "rb");
	char *buf = NULL;
	size_t len = 0, cap = 0;
	struct stat st;
	int rc = -1;

	if (f == NULL) {
		util_err_set(err, "%s: cannot open: %s", shown, strerror(errno));
		return -1;
	}
	if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
		util_err_set(err, "%s: is a directory, expected a scenario file", shown);
		goto out;
	}
	for (;;) {
		size_t got;

		if (len == cap) {
			char *nb;

			cap = cap ? cap * 2 : 65536;
			nb = realloc(buf, cap + 1);
			if (nb == NULL) {
				util_err_set(err, "%s: out of memory", shown);
				goto out;
			}
			buf = nb;
		}
		got = fread(buf + len, 1, cap - len, f);
		len += got;
		if (len == got && refuse_trajectory(shown, is_stdin ? "FILE" : name, buf, len,
						    err) != 0)
			goto out;
		if (len > SCENARIO_FILE_MAX) {
			util_err_set(err, "%s: larger than %u bytes, not a scenario", shown,
				     SCENARIO_FILE_MAX);
			goto out;
		}
		if (got == 0) {
			if (ferror(f)) {
				util_err_set(err, "%s: read error: %s", shown, strerror(errno));
				goto out;
			}
			break;
		}
	}
	rc = scenario_load_string(shown, buf ? buf : "", len, ov, n_ov, sc, err);
out:
	free(buf);
	if (!is_stdin)
		fclose(f);
	return rc;
}

/* ---- effective scenario ------------------------------------------------- */
static cJSON *vec_json(const double *v, int dims)
{
	return cJSON_CreateDoubleArray(v, dims);
}

/* Whether model m reads the key at path (or anything under it). */
static int model_uses(enum model_kind m, const char *path)
{
	const char *const *k;

	for (k = UNUSED[m]; *k; k++)
		if (path_has_prefix(path, *k, strlen(*k)))
			return 0;
	return 1;
}

static void add_used(const struct scenario *sc, cJSON *o, const char *path, double v)
{
	const char *dot = strrchr(path, '.');

	if (model_uses(sc->model, path))
		cJSON_AddNumberToObject(o, dot ? dot + 1 : path, v);
}

char *scenario_to_json(const struct scenario *sc)
{
	cJSON *root = cJSON_CreateObject(), *o;
	char seed[32];
	char *text = NULL;

	if (root == NULL)
		return NULL;
	if (sc->description)
		cJSON_AddStringToObject(root, "description", sc->description);
	cJSON_AddStringToObject(root, "model", MODEL_NAMES[sc->model]);
	cJSON_AddNumberToObject(root, "dimensions", sc->dims);
	cJSON_AddNumberToObject(root, "count", (double)sc->count);
	cJSON_AddNumberToObject(root, "steps", (double)sc->steps);
	cJSON_AddNumberToObject(root, "dt", sc->dt);
	/* Seeds from 2^53 up only survive as strings. */
	if (sc->seed <= SCENARIO_INT_MAX) {
		cJSON_AddNumberToObject(root, "seed", (double)sc->seed);
	} else {
		snprintf(seed, sizeof seed, "%" PRIu64, sc->seed);
		cJSON_AddStringToObject(root, "seed", seed);
	}
	/* Only what the model uses: the effective scenario says what mattered. */
	o = cJSON_AddObjectToObject(root, "radii");
	add_used(sc, o, "radii.separation", sc->r_sep);
	add_used(sc, o, "radii.alignment", sc->r_ali);
	add_used(sc, o, "radii.cohesion", sc->r_coh);
	if (sc->n_obstacles > 0)
		add_used(sc, o, "radii.avoid", sc->r_avoid);
	if (sc->n_predators > 0)
		add_used(sc, o, "radii.flee", sc->r_flee);
	if (model_uses(sc->model, "weights")) {
		o = cJSON_AddObjectToObject(root, "weights");
		add_used(sc, o, "weights.separation", sc->w_sep);
		add_used(sc, o, "weights.alignment", sc->w_ali);
		add_used(sc, o, "weights.cohesion", sc->w_coh);
		add_used(sc, o, "weights.target", sc->w_target);
		add_used(sc, o, "weights.bounds", sc->w_bounds);
		if (sc->n_obstacles > 0)
			add_used(sc, o, "weights.avoid", sc->w_avoid);
		if (sc->n_predators > 0)
			add_used(sc, o, "weights.flee", sc->w_flee);
	}
	o = cJSON_AddObjectToObject(root, "speed");
	add_used(sc, o, "speed.min", sc->speed_min);
	add_used(sc, o, "speed.max", sc->speed_max);
	if (sc->speed_variation > 0)
		cJSON_AddNumberToObject(o, "variation", sc->speed_variation);
	/* the period with an amplitude, and for inertia, whose speed noise
	 * (seed 002's) reads it without one */
	if (sc->speed_noise_amp > 0 || sc->model == MODEL_INERTIA) {
		cJSON *nz = cJSON_AddObjectToObject(o, "noise");

		if (sc->speed_noise_amp > 0)
			cJSON_AddNumberToObject(nz, "amplitude", sc->speed_noise_amp);
		cJSON_AddNumberToObject(nz, "period", sc->speed_noise_period);
	}
	add_used(sc, root, "max_force", sc->max_force);
	o = cJSON_AddObjectToObject(root, "bounds");
	cJSON_AddItemToObject(o, "min", vec_json(sc->bmin, sc->dims));
	cJSON_AddItemToObject(o, "max", vec_json(sc->bmax, sc->dims));
	cJSON_AddStringToObject(o, "mode", MODE_NAMES[sc->mode]);
	cJSON_AddNumberToObject(o, "margin", sc->margin);
	if (sc->has_target && model_uses(sc->model, "target")) {
		o = cJSON_AddObjectToObject(root, "target");
		cJSON_AddItemToObject(o, "position", vec_json(sc->target, sc->dims));
		if (sc->target_radius > 0)
			cJSON_AddNumberToObject(o, "radius", sc->target_radius);
		if (sc->has_wander) {
			cJSON *wd = cJSON_AddObjectToObject(o, "wander");

			cJSON_AddItemToObject(wd, "min", vec_json(sc->wander_min, sc->dims));
			cJSON_AddItemToObject(wd, "max", vec_json(sc->wander_max, sc->dims));
			cJSON_AddNumberToObject(wd, "interval", sc->wander_interval);
		}
	}
	if (sc->n_attractors > 0 && model_uses(sc->model, "attractors")) {
		cJSON *arr = cJSON_AddArrayToObject(root, "attractors");
		int i, k;

		for (i = 0; arr && i < sc->n_attractors; i++) {
			const struct scenario_attractor *at = &sc->attractors[i];
			cJSON *a = cJSON_CreateObject();

			cJSON_AddItemToArray(arr, a);
			cJSON_AddNumberToObject(a, "strength", at->strength);
			cJSON_AddNumberToObject(a, "range", at->range);
			if (at->n_points == 1 && at->steps[0] == 0) {
				cJSON_AddItemToObject(a, "position", vec_json(at->pos[0], sc->dims));
				continue;
			}
			cJSON *wp = cJSON_AddArrayToObject(a, "waypoints");

			for (k = 0; k < at->n_points; k++) {
				cJSON *w = cJSON_CreateObject();

				cJSON_AddItemToArray(wp, w);
				cJSON_AddNumberToObject(w, "step", (double)at->steps[k]);
				cJSON_AddItemToObject(w, "position", vec_json(at->pos[k], sc->dims));
			}
		}
	}
	if (sc->n_obstacles > 0) {
		static const char *const KIND[] = {"sphere", "box", "segment"};
		cJSON *arr = cJSON_AddArrayToObject(root, "obstacles");
		int i;

		for (i = 0; arr && i < sc->n_obstacles; i++) {
			const struct obstacle *ob = &sc->obstacles[i];
			cJSON *a = cJSON_CreateObject();

			cJSON_AddItemToArray(arr, a);
			cJSON_AddStringToObject(a, "type", KIND[ob->kind]);
			if (ob->kind == OBSTACLE_SPHERE) {
				cJSON_AddItemToObject(a, "center", vec_json(ob->a, sc->dims));
				cJSON_AddNumberToObject(a, "radius", ob->radius);
			} else {
				cJSON_AddItemToObject(a, ob->kind == OBSTACLE_BOX ? "min" : "from",
						      vec_json(ob->a, sc->dims));
				cJSON_AddItemToObject(a, ob->kind == OBSTACLE_BOX ? "max" : "to",
						      vec_json(ob->b, sc->dims));
			}
		}
	}
	if (sc->n_predators > 0) {
		cJSON *rg;

		o = cJSON_AddObjectToObject(root, "predators");
		cJSON_AddNumberToObject(o, "count", sc->n_predators);
		cJSON_AddNumberToObject(o, "speed", sc->pred_speed);
		cJSON_AddStringToObject(o, "chase", CHASE_NAMES[sc->pred_chase]);
		cJSON_AddNumberToObject(o, "range", sc->pred_range);
		cJSON_AddNumberToObject(o, "max_turn", sc->pred_max_turn);
		rg = cJSON_AddObjectToObject(o, "region");
		cJSON_AddItemToObject(rg, "min", vec_json(sc->pred_min, sc->dims));
		cJSON_AddItemToObject(rg, "max", vec_json(sc->pred_max, sc->dims));
	}
	if (sc->n_events > 0) {
		cJSON *arr = cJSON_AddArrayToObject(root, "population");
		int i;

		for (i = 0; arr && i < sc->n_events; i++) {
			const struct scenario_event *ev = &sc->events[i];
			cJSON *a = cJSON_CreateObject(), *rg;

			cJSON_AddItemToArray(arr, a);
			cJSON_AddNumberToObject(a, "step", (double)ev->step);
			cJSON_AddNumberToObject(a, EVENT_NAMES[ev->kind], (double)ev->n);
			if (!ev->has_region)
				continue;
			rg = cJSON_AddObjectToObject(a, "region");
			cJSON_AddItemToObject(rg, "min", vec_json(ev->rmin, sc->dims));
			cJSON_AddItemToObject(rg, "max", vec_json(ev->rmax, sc->dims));
		}
	}
	if (sc->schedule_json)
		cJSON_AddItemToObject(root, "schedule", cJSON_Parse(sc->schedule_json));
	add_used(sc, root, "noise", sc->noise);
	if (model_uses(sc->model, "move_with"))
		cJSON_AddStringToObject(root, "move_with", MOVE_NAMES[sc->move_new]);
	add_used(sc, root, "view_angle", sc->view_angle);
	if (sc->max_turn > 0)
		add_used(sc, root, "max_turn", sc->max_turn);
	if (sc->has_return && model_uses(sc->model, "return")) {
		o = cJSON_AddObjectToObject(root, "return");
		cJSON_AddItemToObject(o, "center", vec_json(sc->return_center, sc->dims));
		cJSON_AddNumberToObject(o, "radius", sc->return_radius);
		add_used(sc, o, "return.weight", sc->w_return);
	}
	add_used(sc, root, "turn_rate", sc->turn_rate);
	if (sc->start_file) {
		o = cJSON_AddObjectToObject(root, "start");
		cJSON_AddStringToObject(o, "file", sc->start_file);
		if (sc->start_step != UINT64_MAX)
			cJSON_AddNumberToObject(o, "step", (double)sc->start_step);
	} else if (sc->has_start) {
		o = cJSON_AddObjectToObject(root, "start");
		cJSON_AddStringToObject(o, "shape", START_SHAPES[sc->start_shape]);
		if (sc->start_shape == START_BOX) {
			cJSON_AddItemToObject(o, "min", vec_json(sc->start_min, sc->dims));
			cJSON_AddItemToObject(o, "max", vec_json(sc->start_max, sc->dims));
		} else {
			cJSON_AddItemToObject(o, "center", vec_json(sc->start_center, sc->dims));
			if (sc->start_shape == START_BALL)
				cJSON_AddNumberToObject(o, "radius", sc->start_radius);
		}
		if (sc->has_start_heading) {
			cJSON_AddItemToObject(o, "heading", vec_json(sc->start_heading, sc->dims));
			cJSON_AddNumberToObject(o, "spread", sc->start_spread);
		}
		{
			double v[2] = {sc->start_speed_lo, sc->start_speed_hi};

			cJSON_AddItemToObject(o, "speed", cJSON_CreateDoubleArray(v, 2));
		}
	}
	if (sc->has_hue) {
		o = cJSON_AddObjectToObject(root, "hue");
		cJSON_AddNumberToObject(o, "weight", sc->hue_weight);
		cJSON_AddNumberToObject(o, "radius", sc->r_hue);
		if (sc->hue_spin_on) {
			cJSON_AddNumberToObject(o, "alignment", sc->hue_alignment);
			{
			double v[2] = {sc->hue_spin_lo, sc->hue_spin_hi};

			cJSON_AddItemToObject(o, "spin", cJSON_CreateDoubleArray(v, 2));
			}
		}
	}
	o = cJSON_AddObjectToObject(root, "output");
	cJSON_AddNumberToObject(o, "every", (double)sc->every);
	cJSON_AddStringToObject(o, "compressor", TRAJ_COMPRESSOR_NAMES[sc->compressor]);
	cJSON_AddNumberToObject(o, "compression", sc->compression);
	if (sc->precision > 0)
		cJSON_AddNumberToObject(o, "precision", sc->precision);
	text = print_exact(root, 1);
	cJSON_Delete(root);
	return text;
}

void scenario_free(struct scenario *sc)
{
	int i;

	for (i = 0; i < sc->n_attractors; i++) {
		free(sc->attractors[i].steps);
		free(sc->attractors[i].pos);
	}
	free(sc->attractors);
	sc->attractors = NULL;
	obstacle_index_free(sc->obstacle_index);
	sc->obstacle_index = NULL;
	free(sc->obstacles);
	sc->obstacles = NULL;
	sc->n_obstacles = 0;
	free(sc->schedule_json);
	sc->schedule_json = NULL;
	free(sc->events);
	sc->events = NULL;
	sc->n_events = 0;
	sc->n_attractors = 0;
	for (i = 0; i < sc->n_stages; i++)
		scenario_free(&sc->stages[i].sc);
	free(sc->stages);
	sc->stages = NULL;
	sc->n_stages = 0;
	free(sc->description);
	sc->description = NULL;
	free(sc->start_file);
	sc->start_file = NULL;
	util_free(sc->start_data);
	sc->start_data = NULL;
	for (i = 0; i < sc->n_notes; i++)
		free(sc->notes[i]);
	sc->n_notes = 0;
}

void scenario_population_at(const struct scenario *sc, uint64_t step, uint64_t *ids,
			    uint64_t *most, uint64_t *parked)
{
	int i;

	*ids = *most = sc->count;
	*parked = 0;
	for (i = 0; i < sc->n_events && sc->events[i].step <= step; i++) {
		const struct scenario_event *ev = &sc->events[i];

		switch (ev->kind) {
		case EVENT_ADD:
			*ids += ev->n;
			*most += ev->n;
			break;
		case EVENT_ENABLE:
			*most += ev->n;
			*parked -= ev->n;
			break;
		case EVENT_DISABLE:
			*parked += ev->n;
			/* fall through */
		case EVENT_REMOVE:
			if (!ev->has_region)
				*most -= ev->n;
			break;
		}
	}
}

double scenario_max_radius(const struct scenario *sc)
{
	double r = sc->r_sep;

	/* one range: Vicsek's and inertia's radii.alignment, slerp's
	 * radii.cohesion (its separation counts only boids within it) */
	if (sc->model == MODEL_VICSEK || sc->model == MODEL_INERTIA)
		return sc->r_ali;
	if (sc->model == MODEL_SLERP)
		return sc->r_coh;

	if (sc->r_ali > r)
		r = sc->r_ali;
	if (sc->r_coh > r)
		r = sc->r_coh;
	return r;
}
