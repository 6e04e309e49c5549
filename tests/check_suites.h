/* check_suites.h: the Check suites of the unit tests and their helpers. */
#ifndef BOIDSIM_CHECK_SUITES_H
#define BOIDSIM_CHECK_SUITES_H

#include <check.h>
#include <string.h>
#include "ctx.h"
#include "scenario.h"

/* The library's context for every test (check_main.c): loops go parallel
 * from one boid, so that small test flocks run on several threads. */
extern struct ctx test_ctx;

Suite *scenario_suite(void);
Suite *rules_suite(void);
Suite *grid_suite(void);
Suite *sim_suite(void);
Suite *traj_suite(void);
Suite *models_suite(void);
Suite *behaviours_suite(void);
Suite *obstacles_suite(void);
Suite *reduce_suite(void);

/* Loads a scenario from text, failing the test with the loader's message. */
static inline void load_ok(const char *text, struct scenario *sc)
{
	struct util_err err = {0};
	int rc = scenario_load_string("t.json", text, strlen(text), NULL, 0, sc, &err);

	ck_assert_msg(rc == 0, "scenario rejected: %s", err.msg);
}

/* Path of a file in the source tree ($srcdir set by the test harness). */
const char *test_srcfile(const char *rel);

#endif
