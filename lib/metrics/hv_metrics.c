/* SPDX-License-Identifier: BSD-3-Clause */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hv_metrics.h"

static void
reserve(struct hv_metrics_out *o, size_t more)
{
	size_t cap;
	char *p;

	if (o->oom || o->len + more + 1 <= o->cap)
		return;
	cap = o->cap * 2 > o->len + more + 1 ? o->cap * 2 : o->len + more + 1;
	if (cap < 4096)
		cap = 4096;
	p = realloc(o->buf, cap);
	if (p == NULL) {
		o->oom = true;
		return;
	}
	o->buf = p;
	o->cap = cap;
}

static void __attribute__((format(printf, 2, 3)))
out(struct hv_metrics_out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	reserve(o, (size_t)n);
	if (o->oom)
		return;
	va_start(ap, fmt);
	vsnprintf(o->buf + o->len, o->cap - o->len, fmt, ap);
	va_end(ap);
	o->len += (size_t)n;
}

static const char *
suffix(const struct hv_metrics_out *o, enum hv_metrics_type type, bool sample)
{
	/* OpenMetrics names the family without the suffix its samples carry */
	if (o->openmetrics && !sample)
		return "";
	return type == HV_METRICS_COUNTER ? "_total" : type == HV_METRICS_INFO ? "_info" : "";
}

void
hv_metrics_family(struct hv_metrics_out *o, const char *name, enum hv_metrics_type type,
		  const char *help)
{
	const char *sfx = suffix(o, type, false);
	const char *t = type == HV_METRICS_COUNTER ? "counter"
			: type == HV_METRICS_GAUGE ? "gauge"
			: o->openmetrics           ? "info"
						   : "gauge";

	out(o, "# HELP %s%s %s\n# TYPE %s%s %s\n", name, sfx, help, name, sfx, t);
}

void
hv_metrics_sample(struct hv_metrics_out *o, const char *name, enum hv_metrics_type type)
{
	out(o, "%s%s", name, suffix(o, type, true));
	o->labels = 0;
}

void
hv_metrics_label(struct hv_metrics_out *o, const char *key, const char *value)
{
	size_t run;

	out(o, "%s%s=\"", o->labels++ ? "," : "{", key);
	/* both formats: \\, \" and \n; everything else as it is (UTF-8) */
	while (*value != '\0') {
		run = strcspn(value, "\\\"\n");
		out(o, "%.*s", (int)run, value);
		value += run;
		if (*value == '\0')
			break;
		out(o, "\\%c", *value == '\n' ? 'n' : *value);
		value++;
	}
	out(o, "\"");
}

void
hv_metrics_label_u(struct hv_metrics_out *o, const char *key, unsigned int value)
{
	char buf[16];

	snprintf(buf, sizeof(buf), "%u", value);
	hv_metrics_label(o, key, buf);
}

void
hv_metrics_value_u(struct hv_metrics_out *o, uint64_t v)
{
	out(o, "%s %" PRIu64 "\n", o->labels ? "}" : "", v);
}

void
hv_metrics_value_i(struct hv_metrics_out *o, int64_t v)
{
	out(o, "%s %" PRId64 "\n", o->labels ? "}" : "", v);
}

void
hv_metrics_value_d(struct hv_metrics_out *o, double v)
{
	out(o, "%s %.9g\n", o->labels ? "}" : "", v);
}

char *
hv_metrics_finish(struct hv_metrics_out *o, size_t *len)
{
	char *p;

	if (o->openmetrics)
		out(o, "# EOF\n");
	reserve(o, 0); /* a buffer even for an empty text */
	if (o->oom) {
		free(o->buf);
		o->buf = NULL;
		return NULL;
	}
	o->buf[o->len] = '\0';
	p = o->buf;
	*len = o->len;
	o->buf = NULL;
	return p;
}
