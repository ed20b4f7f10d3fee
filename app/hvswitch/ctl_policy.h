/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What a non-root client of the control socket may ask of the daemon beyond
 * the command table's read/write split (doc/hvctl.rst, "Access control").
 * No DPDK: the fuzz target links it.
 */
#ifndef SW_CTL_POLICY_H
#define SW_CTL_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <cjson/cJSON.h>

#include "hv_ctl.h"

/** --admin-group: may run the write commands (HV_CTL_NO_GROUP: nobody but root). */
extern gid_t sw_ctl_admin_group;

/**
 * Whether a client of this role may add the port that port.add's args
 * describe. Root may add anything. Others (the admin group) may not reach
 * the host through the root daemon: an ethdev's devargs must name an
 * allow-listed driver (net_null, net_ring, net_tap) with only its harmless
 * keys (no file, interface or path), and a vhost-user socket must be
 * RUN_DIR/NAME.sock. Only what the policy looks at is checked here: other
 * errors in args are left to sw_port_conf_from_json(). Thread: any; no state.
 *
 * @param args    port.add's arguments (may be NULL or not an object)
 * @param role    the caller's role
 * @param run_dir the daemon's run directory
 * @param err     the refusal, "port.add: ..."
 * @param errlen  size of err
 * @return true when allowed
 */
bool sw_ctl_port_add_allowed(const cJSON *args, enum hv_ctl_role role, const char *run_dir,
			     char *err, size_t errlen);

#endif
