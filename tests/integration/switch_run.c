/* SPDX-License-Identifier: BSD-3-Clause */
/* main() of the daemon tests (switch_harness.h), apart from the harness for its size. */
#include <check.h>

#include "switch_harness.h"

int
swh_run_suite(Suite *(*make_suite)(void), int argc, char **argv)
{
	SRunner *sr;
	int failed;

	if (swh_env_init(argc, argv) != 0)
		return 1;
	sr = srunner_create(make_suite());
	srunner_set_fork_status(sr, CK_NOFORK);
	srunner_run_all(sr, CK_VERBOSE);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	swh_env_fini();
	return failed == 0 ? 0 : 1;
}
