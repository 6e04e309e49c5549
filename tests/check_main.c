/* check_main.c: runs every Check suite of the engine's unit tests. */
#include <stdio.h>
#include <stdlib.h>
#include "check_suites.h"
#include "util.h"

struct ctx test_ctx;

const char *test_srcfile(const char *rel)
{
	static char buf[4096];
	const char *dir = getenv("srcdir");

	snprintf(buf, sizeof buf, "%s/%s", dir ? dir : ".", rel);
	return buf;
}

int main(void)
{
	SRunner *sr;
	int failed;

	/* Small test flocks must still run every loop on several threads. */
	ctx_init(&test_ctx);
	test_ctx.parallel_min = 0;
	sr = srunner_create(scenario_suite());
	srunner_add_suite(sr, rules_suite());
	srunner_add_suite(sr, grid_suite());
	srunner_add_suite(sr, sim_suite());
	srunner_add_suite(sr, traj_suite());
	srunner_add_suite(sr, models_suite());
	srunner_add_suite(sr, behaviours_suite());
	srunner_add_suite(sr, obstacles_suite());
	srunner_add_suite(sr, reduce_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
