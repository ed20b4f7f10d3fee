/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Admin-level control commands that change no configuration (ctl_admin.c).
 * Control thread only, under sw.lock; arguments validated by the API table.
 */
#ifndef SW_CTL_ADMIN_H
#define SW_CTL_ADMIN_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "hv_ctl_api.h"
#include "sw.h"

/* stats.clear [port]: baselines of that port's counters, or of all and the PMDs'. */
int sw_ctl_stats_clear(const struct hv_ctl_vals *vals, cJSON **result, char *err, size_t errlen);
/* log.set logtype level: rte_log_set_level_pattern() once the pattern names a type. */
int sw_ctl_log_set(const struct hv_ctl_vals *vals, cJSON **result, char *err, size_t errlen);
/* PMD i's counters since the last stats.clear of every port. */
void sw_ctl_pmd_counters(unsigned int i, uint64_t *busy, uint64_t *total, uint64_t *packets,
			 uint64_t *batches);
/* Log what a port.set changed (old -> new), once; nothing when nothing changed. */
void sw_ctl_log_port_set(const struct sw_port_conf *before, const struct sw_port_conf *after);

#endif
