/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A control server with a fake command table, for the tests of the control
 * protocol (test_ctl.c) and of hvctl against it (test_ctl_hvctl.c): echo,
 * failing and range-checked commands, a descriptor taker, and canned
 * port.list/port.show/stats/version replies in the daemon's shapes.
 */
#ifndef CTL_FAKE_H
#define CTL_FAKE_H

#include "hv_ctl.h"

extern char ctl_dir[64];                        /**< the test's fresh directory under /tmp */
extern char ctl_path[100];                      /**< the server's socket in it */
extern struct hv_ctl_server *ctl_srv;           /**< the server; NULL between tests */
extern const struct hv_ctl_cmd ctl_fake_cmds[]; /**< the fake command table */

/** Check fixture: a fresh directory and a server on ctl_path, not polled yet. */
void ctl_fake_setup(void);
/** Check fixture: stop the polling thread if any, destroy the server, remove the directory. */
void ctl_fake_teardown(void);
/**
 * Poll the server on a thread of its own until teardown (tests that use the
 * blocking client; tests that fork poll it from their own thread instead).
 */
void ctl_fake_start_thread(void);

#endif
