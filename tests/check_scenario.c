/* check_scenario.c: the scenario loader: defaults, every kind of bad input,
 * --set overrides, and the effective-scenario round trip. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check_suites.h"

#define BASE2 "\"count\": 10, \"steps\": 5, \"bounds\": {\"min\": [0, 0], \"max\": [10, 10]}"

static int load_err(const char *text, size_t len, const struct scenario_override *ov,
		    int n_ov, char *msg)
{
	struct scenario sc;
	struct util_err err = {0};
	int rc = scenario_load_string("t.json", text, len, ov, n_ov, &sc, &err);

	if (rc == 0)
		scenario_free(&sc);
	strcpy(msg, err.msg);
	return rc;
}

START_TEST(test_defaults)
{
	struct scenario sc;

	load_ok("{" BASE2 "}", &sc);
	ck_assert_int_eq(sc.dims, 2);
	ck_assert_uint_eq(sc.count, 10);
	ck_assert_uint_eq(sc.steps, 5);
	ck_assert_double_eq(sc.dt, 1.0);
	ck_assert_uint_eq(sc.seed, 1);
	ck_assert_double_eq(sc.r_sep, 1.0);
	ck_assert_double_eq(sc.r_ali, 3.0);
	ck_assert_double_eq(sc.r_coh, 3.0);
	ck_assert_double_eq(sc.w_sep, 1.5);
	ck_assert_double_eq(sc.w_ali, 1.0);
	ck_assert_double_eq(sc.w_coh, 1.0);
	ck_assert_double_eq(sc.w_target, 1.0);
	ck_assert_double_eq(sc.w_bounds, 1.0);
	ck_assert_double_eq(sc.speed_min, 0.0);
	ck_assert_double_eq(sc.speed_max, 1.0);
	ck_assert_double_eq(sc.max_force, 0.05);
	ck_assert_int_eq(sc.mode, BOUNDS_WRAP);
	ck_assert_double_eq(sc.margin, 1.0); /* 0.1 x the smallest side */
	ck_assert_int_eq(sc.has_target, 0);
	ck_assert_uint_eq(sc.every, 1);
	ck_assert_ptr_null(sc.description);
	scenario_free(&sc);
}
END_TEST

START_TEST(test_all_keys_3d)
{
	struct scenario sc;

	load_ok("{\"description\": \"x\", \"dimensions\": 3, \"count\": 4, \"steps\": 0,"
		"\"dt\": 0.5, \"seed\": \"18446744073709551615\","
		"\"radii\": {\"separation\": 0.5, \"alignment\": 2, \"cohesion\": 4},"
		"\"weights\": {\"separation\": 2, \"alignment\": 3, \"cohesion\": 4,"
		" \"target\": 5, \"bounds\": 6},"
		"\"speed\": {\"min\": 0.1, \"max\": 2}, \"max_force\": 0.2,"
		"\"bounds\": {\"min\": [0, 1, 2], \"max\": [5, 6, 8], \"mode\": \"reflect\","
		" \"margin\": 0.25}, \"target\": {\"position\": [1, 2, 3]},"
		"\"output\": {\"every\": 3}}", &sc);
	ck_assert_int_eq(sc.dims, 3);
	ck_assert_uint_eq(sc.seed, UINT64_MAX);
	ck_assert_double_eq(sc.dt, 0.5);
	ck_assert_double_eq(sc.r_coh, 4.0);
	ck_assert_double_eq(sc.w_bounds, 6.0);
	ck_assert_double_eq(sc.speed_min, 0.1);
	ck_assert_double_eq(sc.bmax[2], 8.0);
	ck_assert_int_eq(sc.mode, BOUNDS_REFLECT);
	ck_assert_double_eq(sc.margin, 0.25);
	ck_assert_int_eq(sc.has_target, 1);
	ck_assert_double_eq(sc.target[2], 3.0);
	ck_assert_uint_eq(sc.every, 3);
	ck_assert_str_eq(sc.description, "x");
	scenario_free(&sc);
}
END_TEST

/* Every kind of bad input, one case each: the text and a part of the one
 * line that must explain it. */
static const struct bad_case {
	const char *text;
	const char *expect;
} BAD[] = {
	{"", "t.json: empty file"},
	{"  \n\t ", "t.json: empty file"},
	{"{\"count\": 1,}", "t.json:1:13: parse error"},
	{"{\n  \"count\": 10,\n  \"steps\": ]\n}", "t.json:3:"},
	{"{" BASE2 "} {}", "text after the end of the JSON document"},
	{"{\"count\": NaN}", "parse error"},
	{"{\"count\": Infinity}", "parse error"},
	{"{" BASE2 ", \"dt\": 1e999}", "t.json: dt: must be a finite number"},
	{"{" BASE2 ", \"count\": 3}", "t.json: count: duplicate key"},
	{"{" BASE2 ", \"Steps\": 3}", "t.json: Steps: unknown key (did you mean \"steps\"?)"},
	{"{" BASE2 ", \"weights\": {\"cohesin\": 1}}",
	 "t.json: weights.cohesin: unknown key (did you mean \"cohesion\"?)"},
	{"{" BASE2 ", \"zzzzzzzz\": 1}", "t.json: zzzzzzzz: unknown key"},
	{"{\"count\": \"10\", \"steps\": 5, \"bounds\": {\"min\": [0, 0], \"max\": [1, 1]}}",
	 "t.json: count: expected an integer"},
	{"{\"count\": 1.5, \"steps\": 5, \"bounds\": {\"min\": [0, 0], \"max\": [1, 1]}}",
	 "t.json: count: expected an integer, got 1.5"},
	{"{" BASE2 ", \"seed\": 1152921504606846976}", "give the seed as a string"},
	{"{" BASE2 ", \"seed\": \"12x\"}", "seed: expected decimal digits"},
	{"{" BASE2 ", \"seed\": \"99999999999999999999\"}", "seed: expected decimal digits"},
	{"{" BASE2 ", \"seed\": -1}", "seed: must be between 0 and"},
	{"{\"count\": 1, \"steps\": 5, \"bounds\": {\"min\": [0, 0, 0], \"max\": [1, 1]}}",
	 "bounds.min: expected an array of 2 numbers"},
	{"{\"count\": 1, \"steps\": 5, \"bounds\": {\"min\": [0, 0], \"max\": [1, \"a\"]}}",
	 "bounds.max[1]: expected a number"},
	{"{\"count\": 1, \"steps\": 5, \"bounds\": {\"min\": [0, 0], \"max\": [10, 0]}}",
	 "t.json: bounds.max[1]: must be greater than bounds.min[1] (0)"},
	{"{" BASE2 ", \"radii\": {\"separation\": 0}}", "radii.separation: must be greater than 0"},
	{"{" BASE2 ", \"radii\": {\"alignment\": -1}}", "radii.alignment: must be greater than 0"},
	{"{" BASE2 ", \"radii\": {\"cohesion\": 1e12}}", "radii.cohesion: must be at most"},
	{"{" BASE2 ", \"dt\": 0}", "dt: must be greater than 0"},
	{"{" BASE2 ", \"dt\": -0.5}", "dt: must be greater than 0"},
	{"{\"count\": 10000000000, \"steps\": 5, \"bounds\": {\"min\": [0, 0], \"max\": [1, 1]}}",
	 "count: must be between 0 and 4294967295"},
	{"{\"count\": 4294967295, \"steps\": 5, \"bounds\": {\"min\": [0, 0], \"max\": [1, 1]}}",
	 "GiB, more than this machine's"},
	{"{\"count\": 0, \"steps\": 5, \"bounds\": {\"min\": [0, 0], \"max\": [1, 1]}}",
	 "count: 0 boids, and no population add and no predator: nothing to simulate"},
	{"{\"count\": 1, \"bounds\": {\"min\": [0, 0], \"max\": [1, 1]}}",
	 "t.json: steps: required key is missing"},
	{"{\"count\": 1, \"steps\": 1, \"bounds\": {\"min\": [0, 0]}}",
	 "t.json: bounds.max: required key is missing"},
	{"[1, 2]", "expected a JSON object at the top level"},
	{"{" BASE2 ", \"speed\": {\"min\": 2, \"max\": 1}}", "speed.min: must not exceed speed.max"},
	{"{\"count\": 1, \"steps\": 5, \"bounds\": {\"min\": [0, 0], \"max\": [1, 1],"
	 " \"mode\": \"torus\"}}", "bounds.mode: expected one of"},
	{"{" BASE2 ", \"dimensions\": 4}", "dimensions: must be between 2 and 3"},
	{"{" BASE2 ", \"target\": {}}", "target.position: required key is missing"},
	{"{" BASE2 ", \"target\": {\"position\": [1]}}", "target.position: expected an array of 2"},
	{"{" BASE2 ", \"description\": 5}", "description: expected a string"},
	{"{" BASE2 ", \"output\": {\"every\": 0}}", "output.every: must be between 1"},
	{"{" BASE2 ", \"radii\": 5}", "t.json: radii: must be an object"},
	{"{" BASE2 ", \"weights\": {\"alignment\": true}}", "weights.alignment: expected a number"},
	{"{\"count\": 1, \"steps\": 9007199254740991, \"dt\": 1e9, \"speed\": {\"max\": 1e9},"
	 " \"bounds\": {\"min\": [0, 0], \"max\": [1, 1], \"mode\": \"none\"}}",
	 "steps: a boid at speed.max could travel"},
	{"{\"description\": \"\xff\", " BASE2 "}", "t.json:1:18: invalid UTF-8"},
	{"{\"description\": \"\xc0\xaf\", " BASE2 "}", "invalid UTF-8"},
	{"{\"description\": \"\xed\xa0\x80\", " BASE2 "}", "invalid UTF-8"},
};

START_TEST(test_bad_input)
{
	const struct bad_case *b = &BAD[_i];
	char msg[UTIL_ERR_MAX];

	ck_assert_msg(load_err(b->text, strlen(b->text), NULL, 0, msg) != 0,
		      "case %d accepted: %s", _i, b->text);
	ck_assert_msg(strstr(msg, b->expect) != NULL, "case %d: got \"%s\", want \"%s\"",
		      _i, msg, b->expect);
	ck_assert_msg(strchr(msg, '\n') == NULL, "case %d: message is not one line", _i);
}
END_TEST

START_TEST(test_nul_byte)
{
	static const char text[] = "{\"count\": 1,\0 \"steps\": 1}";
	char msg[UTIL_ERR_MAX];

	ck_assert_int_ne(load_err(text, sizeof text - 1, NULL, 0, msg), 0);
	ck_assert_str_eq(msg, "t.json:1:13: NUL byte in scenario text");
}
END_TEST

START_TEST(test_deep_nesting)
{
	size_t depth = 5000;
	char *text = malloc(2 * depth + 32), msg[UTIL_ERR_MAX];
	size_t len = 0;

	len += (size_t)sprintf(text, "{\"x\": ");
	memset(text + len, '[', depth);
	len += depth;
	memset(text + len, ']', depth);
	len += depth;
	text[len++] = '}';
	text[len] = '\0';
	ck_assert_int_ne(load_err(text, len, NULL, 0, msg), 0);
	ck_assert_ptr_nonnull(strstr(msg, "parse error"));
	free(text);
}
END_TEST

START_TEST(test_overrides)
{
	struct scenario sc;
	struct util_err err = {0};
	const char *text = "{" BASE2 "}";
	struct scenario_override ov[] = {
		{"steps=7", NULL}, {"bounds.mode=reflect", NULL}, {"bounds.max[1]=50", NULL},
		{"weights.cohesion=2.5", NULL}, {"target.position=[1,2]", NULL},
		{"seed=\"12345678901234567890\"", NULL}, {"steps=8", NULL}};

	ck_assert_int_eq(scenario_load_string("t.json", text, strlen(text), ov, 7, &sc, &err), 0);
	ck_assert_uint_eq(sc.steps, 8); /* the last override of a key wins */
	ck_assert_int_eq(sc.mode, BOUNDS_REFLECT);
	ck_assert_double_eq(sc.bmax[1], 50.0);
	ck_assert_double_eq(sc.bmax[0], 10.0);
	ck_assert_double_eq(sc.w_coh, 2.5);
	ck_assert_int_eq(sc.has_target, 1);
	ck_assert_double_eq(sc.target[1], 2.0);
	ck_assert_uint_eq(sc.seed, UINT64_C(12345678901234567890));
	scenario_free(&sc);
}
END_TEST

static const struct ov_case {
	struct scenario_override ov;
	const char *expect;
} OV_BAD[] = {
	{{"weights.cohesin=2", NULL},
	 "--set weights.cohesin=2: weights.cohesin: unknown key (did you mean \"cohesion\"?)"},
	{{"count=abc", NULL}, "--set count=abc: count: expected an integer"},
	{{"steps=-1", "--steps -1"}, "--steps -1: steps: must be between 0 and"},
	{{"bounds.max[2]=1", NULL}, "--set bounds.max[2]=1: bounds.max has no element 2"},
	{{"bounds[0].x=1", NULL}, "--set bounds[0].x=1: bounds is not an array"},
	/* a check against another key blames the override, not the file */
	{{"bounds.min[0]=40", NULL},
	 "--set bounds.min[0]=40: bounds.max[0]: must be greater than bounds.min[0] (40)"},
	{{"bounds.max[x]=1", NULL}, "--set bounds.max[x]=1: malformed index"},
	{{"bounds.min=[0,0,0]", NULL}, "--set bounds.min=[0,0,0]: bounds.min: expected an array of 2"},
	{{"count.x=1", NULL}, "--set count.x=1: count is not an object"},
	{{"bounds.min.x=1", NULL}, "--set bounds.min.x=1: bounds.min is not an object"},
	{{"=1", NULL}, "--set =1: expected KEY=VALUE"},
	{{"radii..x=1", NULL}, "malformed key"},
	{{"dt=nan", NULL}, "--set dt=nan: dt: expected a number"},
};

START_TEST(test_override_errors)
{
	const struct ov_case *c = &OV_BAD[_i];
	const char *text = "{" BASE2 "}";
	char msg[UTIL_ERR_MAX];

	ck_assert_int_ne(load_err(text, strlen(text), &c->ov, 1, msg), 0);
	ck_assert_msg(strstr(msg, c->expect) != NULL, "case %d: got \"%s\", want \"%s\"",
		      _i, msg, c->expect);
}
END_TEST

/* The effective scenario, loaded again, is the same scenario. */
START_TEST(test_json_round_trip)
{
	struct scenario a, b;
	char *json;

	load_ok("{\"dimensions\": 3, \"count\": 4, \"steps\": 9, \"dt\": 0.1,"
		"\"seed\": \"18446744073709551615\", \"speed\": {\"min\": 0.1, \"max\": 0.3},"
		"\"bounds\": {\"min\": [0, 1, 2], \"max\": [5, 6, 8.25], \"mode\": \"steer\"},"
		"\"target\": {\"position\": [1, 2, 3]}}", &a);
	json = scenario_to_json(&a);
	ck_assert_ptr_nonnull(json);
	load_ok(json, &b);
	ck_assert_int_eq(a.dims, b.dims);
	ck_assert_uint_eq(a.seed, b.seed);
	ck_assert_double_eq(a.dt, b.dt);
	ck_assert_double_eq(a.margin, b.margin);
	ck_assert_double_eq(a.bmax[2], b.bmax[2]);
	ck_assert_double_eq(a.target[2], b.target[2]);
	ck_assert_double_eq(a.speed_min, b.speed_min);
	ck_assert_int_eq(a.mode, b.mode);
	ck_assert_int_eq(a.has_target, b.has_target);
	free(json);
	scenario_free(&a);
	scenario_free(&b);
}
END_TEST

/* Model inertia's speed noise reads speed.noise.period without an
 * amplitude: the effective scenario keeps it, so that it loads back the
 * same (seed 002's period 100, not the default 10). */
START_TEST(test_json_round_trip_inertia_period)
{
	struct scenario a, b;
	char *json;

	load_ok("{\"model\": \"inertia\", \"dimensions\": 3, \"count\": 4, \"steps\": 9,"
		"\"speed\": {\"max\": 1, \"variation\": 1, \"noise\": {\"period\": 100}},"
		"\"bounds\": {\"min\": [0, 0, 0], \"max\": [5, 5, 5], \"mode\": \"none\"}}", &a);
	json = scenario_to_json(&a);
	ck_assert_ptr_nonnull(json);
	load_ok(json, &b);
	ck_assert_double_eq(a.speed_noise_period, 100.0);
	ck_assert_msg(b.speed_noise_period == a.speed_noise_period,
		      "period %g loads back as %g: %s", a.speed_noise_period,
		      b.speed_noise_period, json);
	free(json);
	scenario_free(&a);
	scenario_free(&b);
}
END_TEST

/* Numbers that cJSON's own printing rounds (15 digits when those read back
 * within a relative DBL_EPSILON): the effective scenario gives each one's
 * exact double, so that it loads back bit for bit and prints the same. */
START_TEST(test_json_exact_numbers)
{
	struct scenario a, b;
	char *json, *again;

	load_ok("{" BASE2 ", \"seed\": 9007199254740991, \"dt\": 0.30000000000000004,"
		"\"max_force\": 0.1, \"schedule\": [{\"step\": 2, \"set\": "
		"{\"max_force\": 0.30000000000000004}}]}", &a);
	ck_assert_uint_eq(a.seed, UINT64_C(9007199254740991));
	json = scenario_to_json(&a);
	ck_assert_ptr_nonnull(json);
	ck_assert_msg(strstr(json, "9007199254740991") != NULL, "seed rounded: %s", json);
	ck_assert_msg(strstr(json, "\"max_force\":\t0.30000000000000004") != NULL,
		      "scheduled value rounded: %s", json);
	load_ok(json, &b);
	ck_assert_uint_eq(b.seed, a.seed);
	ck_assert_msg(memcmp(&a.dt, &b.dt, sizeof a.dt) == 0, "dt %.17g came back %.17g",
		      a.dt, b.dt);
	again = scenario_to_json(&b);
	ck_assert_ptr_nonnull(again);
	ck_assert_str_eq(again, json);
	free(again);
	free(json);
	scenario_free(&a);
	scenario_free(&b);
}
END_TEST

/* The escape \u0000 in a string is refused (cJSON would end the string
 * there); an escaped backslash before u0000 is text, and loads. */
START_TEST(test_nul_escape)
{
	struct scenario sc;
	char msg[UTIL_ERR_MAX];
	const char *bad = "{" BASE2 ", \"description\": \"a\\u0000b\"}";
	const char *two = "{" BASE2 ", \"description\": \"a\\\\u0000b \\\"\\u0000\"}";
	const char *good = "{" BASE2 ", \"description\": \"a\\\\u0000b \\\"\"}";

	ck_assert_int_ne(load_err(bad, strlen(bad), NULL, 0, msg), 0);
	ck_assert_msg(strstr(msg, "t.json:1:") && strstr(msg, "NUL is not allowed"), "got %s", msg);
	/* a text backslash, an escaped quote, then the escape itself */
	ck_assert_int_ne(load_err(two, strlen(two), NULL, 0, msg), 0);
	load_ok(good, &sc);
	ck_assert_str_eq(sc.description, "a\\u0000b \"");
	scenario_free(&sc);
}
END_TEST

START_TEST(test_load_file_errors)
{
	struct scenario sc;
	struct util_err err = {0};

	ck_assert_int_ne(scenario_load_file("/nonexistent/x.json", NULL, 0, &sc, &err), 0);
	ck_assert_str_eq(err.msg, "/nonexistent/x.json: cannot open: No such file or directory");
	ck_assert_int_ne(scenario_load_file("/", NULL, 0, &sc, &err), 0);
	ck_assert_str_eq(err.msg, "/: is a directory, expected a scenario file");
	ck_assert_int_eq(scenario_load_file(test_srcfile("scenarios/flock2d.json"), NULL, 0,
					    &sc, &err), 0);
	ck_assert_uint_eq(sc.count, 3000);
	scenario_free(&sc);
}
END_TEST

Suite *scenario_suite(void)
{
	Suite *s = suite_create("scenario");
	TCase *tc = tcase_create("load");

	tcase_add_test(tc, test_defaults);
	tcase_add_test(tc, test_all_keys_3d);
	tcase_add_loop_test(tc, test_bad_input, 0, (int)(sizeof BAD / sizeof BAD[0]));
	tcase_add_test(tc, test_nul_byte);
	tcase_add_test(tc, test_deep_nesting);
	tcase_add_test(tc, test_overrides);
	tcase_add_loop_test(tc, test_override_errors, 0, (int)(sizeof OV_BAD / sizeof OV_BAD[0]));
	tcase_add_test(tc, test_json_round_trip);
	tcase_add_test(tc, test_json_round_trip_inertia_period);
	tcase_add_test(tc, test_json_exact_numbers);
	tcase_add_test(tc, test_nul_escape);
	tcase_add_test(tc, test_load_file_errors);
	suite_add_tcase(s, tc);
	return s;
}
