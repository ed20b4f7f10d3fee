/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A writer of metrics text: the Prometheus text format 0.0.4, or OpenMetrics
 * 1.0.0, into a growing buffer. The caller writes each family's # HELP and
 * # TYPE (hv_metrics_family()), then its samples (hv_metrics_sample(), labels,
 * a value), every sample of a family before the next family: both formats
 * want them together.
 *
 * Label values are escaped (backslash, double quote, newline), so any string
 * may be one. Names and help texts are the caller's constants and are not.
 *
 * Threads: a struct hv_metrics_out belongs to one thread; the functions keep
 * no state of their own. A failed allocation sets @oom and later calls do
 * nothing; hv_metrics_finish() then fails.
 */
#ifndef HV_METRICS_H
#define HV_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** A text being written. Zero it, set @openmetrics. */
struct hv_metrics_out {
	char *buf;           /**< the text so far (NUL-terminated once anything was written) */
	size_t len, cap;     /**< its length, and what is allocated */
	bool oom;            /**< an allocation failed: the text is incomplete */
	bool openmetrics;    /**< OpenMetrics 1.0.0, else the Prometheus text format 0.0.4 */
	unsigned int labels; /**< labels of the sample being written */
};

/** Kinds of families. */
enum hv_metrics_type {
	HV_METRICS_COUNTER, /**< samples NAME_total */
	HV_METRICS_GAUGE,   /**< samples NAME */
	HV_METRICS_INFO, /**< samples NAME_info with value 1 (a gauge in the Prometheus format) */
};

/**
 * A family's # HELP and # TYPE. @p name is its name without a suffix:
 * OpenMetrics names a counter NAME and its samples NAME_total; the Prometheus
 * format names both NAME_total (and an info family NAME_info).
 */
void hv_metrics_family(struct hv_metrics_out *o, const char *name, enum hv_metrics_type type,
		       const char *help);

/** Start a sample of family @p name of type @p type (its suffix added). */
void hv_metrics_sample(struct hv_metrics_out *o, const char *name, enum hv_metrics_type type);

/** A label of the current sample, @p value escaped. */
void hv_metrics_label(struct hv_metrics_out *o, const char *key, const char *value);

/** A label with an unsigned value. */
void hv_metrics_label_u(struct hv_metrics_out *o, const char *key, unsigned int value);

/** End the current sample with its value. */
void hv_metrics_value_u(struct hv_metrics_out *o, uint64_t v);
void hv_metrics_value_i(struct hv_metrics_out *o, int64_t v);
void hv_metrics_value_d(struct hv_metrics_out *o, double v);

/**
 * End the text (OpenMetrics' "# EOF"). @return the buffer (the caller
 * frees it) and its length in *@p len, or NULL when an allocation failed
 * (everything is freed).
 */
char *hv_metrics_finish(struct hv_metrics_out *o, size_t *len);

#ifdef __cplusplus
}
#endif

#endif
