/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The Prometheus / OpenMetrics endpoint (--metrics-listen ADDR:PORT): GET
 * /metrics on a libmicrohttpd daemon with its own thread. A scrape reads the
 * counters the way telemetry.c does (under sw.lock, relaxed loads of what the
 * PMDs write); the data path never sees it. doc/telemetry.rst lists the metrics.
 */
#ifndef HV_SW_METRICS_H
#define HV_SW_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

/* Where the endpoint listens: a numeric address and a port (0: any free one). */
struct sw_metrics_addr {
	struct sockaddr_storage ss;
	socklen_t len;
	char text[64]; /* as given, for messages */
};

/*
 * Parse "IPV4:PORT" or "[IPV6]:PORT" (numeric only: the operator says which
 * interface is exposed; no name is resolved). 0, or -1 with a one-line
 * error in @err. Any thread; touches nothing but @out.
 */
int sw_metrics_parse(const char *arg, struct sw_metrics_addr *out, char *err, size_t errlen);

/*
 * Bind @a and start serving on a thread of libmicrohttpd's (the switch's
 * ports, PMDs and MAC table exist). Main thread, once. 0, or -1 with a
 * one-line error in @err (address in use, not local, ...). Logs the address
 * bound ("metrics on http://ADDR:PORT/metrics", the port chosen for port 0).
 */
int sw_metrics_start(const struct sw_metrics_addr *a, char *err, size_t errlen);

/* Stop serving and join its thread (before the ports go). Main thread; no-op if not started. */
void sw_metrics_stop(void);

/*
 * The metrics text of this moment (metrics_text.c): OpenMetrics 1.0.0 when
 * @openmetrics, else the Prometheus text format 0.0.4. A malloc'ed buffer of
 * *@len bytes (the caller frees), or NULL: no memory. Any thread but a PMD;
 * takes sw.lock.
 */
char *sw_metrics_render(bool openmetrics, size_t *len);

#endif
