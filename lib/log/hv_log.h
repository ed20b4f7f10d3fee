/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Logging for hvswitch: one DPDK log type, and a rate limiter so that a
 * misbehaving guest cannot flood the log (or spend the PMD's time in write()).
 */
#ifndef HV_LOG_H
#define HV_LOG_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_log.h>

#ifdef __cplusplus
extern "C" {
#endif

/** DPDK log type of hvswitch ("hvswitch"), registered at load time. */
extern int hv_logtype;

/** Log at RTE_LOG_<level> with a trailing newline. */
#define HV_LOG(level, fmt, ...)                                                                    \
	rte_log(RTE_LOG_##level, hv_logtype, "hvswitch: " fmt "\n", ##__VA_ARGS__)

/** Token bucket: at most burst messages, refilled at one per interval. */
struct hv_ratelimit {
	uint64_t next_tsc;   /**< when the next token is due */
	uint32_t tokens;     /**< messages left in the current burst */
	uint32_t suppressed; /**< messages dropped since the last one printed */
};

/** Messages a limiter lets through back to back. */
#define HV_RATELIMIT_BURST 5
/** One message more per this many milliseconds. */
#define HV_RATELIMIT_INTERVAL_MS 1000

/**
 * Whether a message may be printed now. Reads the TSC, no syscall.
 * @param suppressed set to the messages dropped since the last one let through
 *                   (only meaningful when true is returned)
 */
bool hv_ratelimit_allow(struct hv_ratelimit *rl, uint32_t *suppressed);

/** Rate-limited HV_LOG; reports how many messages it held back. */
#define HV_LOG_RL(rl, level, fmt, ...)                                                             \
	do {                                                                                       \
		uint32_t hv_sup_;                                                                  \
		if (hv_ratelimit_allow((rl), &hv_sup_))                                            \
			HV_LOG(level, fmt "%s", ##__VA_ARGS__,                                     \
			       hv_sup_ ? " (and earlier messages suppressed)" : "");               \
	} while (0)

#ifdef __cplusplus
}
#endif

#endif
