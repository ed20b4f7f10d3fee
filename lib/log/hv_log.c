/* SPDX-License-Identifier: BSD-3-Clause */
#include <rte_cycles.h>

#include "hv_log.h"

RTE_LOG_REGISTER(hv_logtype, hvswitch, INFO);

bool
hv_ratelimit_allow(struct hv_ratelimit *rl, uint32_t *suppressed)
{
	uint64_t now = rte_get_tsc_cycles();
	uint64_t hz = rte_get_tsc_hz();
	uint64_t interval;

	/* Before rte_eal_init() (fuzz targets, unit tests) the TSC rate is unknown. */
	if (hz == 0)
		hz = UINT64_C(1000000000);
	interval = hz / 1000 * HV_RATELIMIT_INTERVAL_MS;

	if (rl->next_tsc == 0 || now >= rl->next_tsc + interval * HV_RATELIMIT_BURST) {
		rl->tokens = HV_RATELIMIT_BURST;
		rl->next_tsc = now + interval;
	} else if (now >= rl->next_tsc) {
		uint64_t earned = (now - rl->next_tsc) / interval + 1;

		rl->tokens = (uint32_t)RTE_MIN((uint64_t)HV_RATELIMIT_BURST, rl->tokens + earned);
		rl->next_tsc += earned * interval;
	}
	if (rl->tokens == 0) {
		rl->suppressed++;
		return false;
	}
	rl->tokens--;
	*suppressed = rl->suppressed;
	rl->suppressed = 0;
	return true;
}
