/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The metrics endpoint's HTTP side: libmicrohttpd parses the requests and
 * runs them on its own thread (MHD_USE_INTERNAL_POLLING_THREAD), with a
 * bounded number of connections, each with a timeout. GET (and HEAD)
 * /metrics only: 404 for another path, 405 for another method. The socket is
 * bound here (not by libmicrohttpd) so that a refused address is reported
 * with its reason.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <microhttpd.h>

#include "hv_ctl.h"
#include "hv_ctl_api.h"
#include "hv_log.h"
#include "metrics.h"

/* Connections at once, from one address, and seconds one may stay idle. */
#define METRICS_CONN_MAX 16
#define METRICS_CONN_PER_IP 4
#define METRICS_CONN_TIMEOUT_S 10
/* Request headers beyond this are refused (a scrape's are a few hundred bytes). */
#define METRICS_CONN_MEMORY (16 * 1024)

#define CT_PROMETHEUS "text/plain; version=0.0.4; charset=utf-8"
#define CT_OPENMETRICS "application/openmetrics-text; version=1.0.0; charset=utf-8"

static struct MHD_Daemon *mhd;

int
sw_metrics_parse(const char *arg, struct sw_metrics_addr *out, char *err, size_t errlen)
{
	char host[INET6_ADDRSTRLEN + 2];
	const char *colon = strrchr(arg, ':');
	uint64_t port;
	size_t hlen;

	memset(out, 0, sizeof(*out));
	snprintf(out->text, sizeof(out->text), "%s", arg);
	hlen = colon != NULL ? (size_t)(colon - arg) : 0;
	if (colon == NULL || hlen == 0 || hlen >= sizeof(host) ||
	    hv_ctl_parse_uint(colon + 1, 0, 65535, &port) != 0)
		goto bad;
	memcpy(host, arg, hlen);
	host[hlen] = '\0';
	if (host[0] == '[' && host[hlen - 1] == ']') {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&out->ss;

		host[hlen - 1] = '\0';
		if (inet_pton(AF_INET6, host + 1, &a->sin6_addr) != 1)
			goto bad;
		a->sin6_family = AF_INET6;
		a->sin6_port = htons((uint16_t)port);
		out->len = sizeof(*a);
	} else {
		struct sockaddr_in *a = (struct sockaddr_in *)&out->ss;

		if (inet_pton(AF_INET, host, &a->sin_addr) != 1)
			goto bad;
		a->sin_family = AF_INET;
		a->sin_port = htons((uint16_t)port);
		out->len = sizeof(*a);
	}
	return 0;
bad:
	snprintf(err, errlen,
		 "--metrics-listen '%s': want IPV4:PORT or [IPV6]:PORT with a numeric address "
		 "and a port 0..65535 (e.g. 127.0.0.1:9417)",
		 arg);
	return -1;
}

static enum MHD_Result
reply(struct MHD_Connection *c, unsigned int status, const char *type, char *body, size_t len,
      enum MHD_ResponseMemoryMode mode)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, body, mode);
	enum MHD_Result rc;

	if (r == NULL) {
		if (mode == MHD_RESPMEM_MUST_FREE)
			free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	rc = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return rc;
}

static enum MHD_Result
on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
	   const char *version, const char *upload_data, size_t *upload_data_size, void **state)
{
	static char not_found[] = "only /metrics is served here\n";
	static char not_allowed[] = "only GET and HEAD are allowed\n";
	static char no_memory[] = "out of memory\n";
	const char *accept;
	bool om;
	char *text;
	size_t len;

	(void)cls, (void)version, (void)upload_data, (void)state;
	if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
		return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain", not_allowed,
			     sizeof(not_allowed) - 1, MHD_RESPMEM_PERSISTENT);
	if (*upload_data_size != 0) /* a GET with a body: not ours to read */
		return MHD_NO;
	if (strcmp(url, "/metrics") != 0)
		return reply(c, MHD_HTTP_NOT_FOUND, "text/plain", not_found, sizeof(not_found) - 1,
			     MHD_RESPMEM_PERSISTENT);
	/* Prometheus asks for OpenMetrics first; anything else gets the 0.0.4 text format */
	accept = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT);
	om = accept != NULL && strstr(accept, "application/openmetrics-text") != NULL;
	text = sw_metrics_render(om, &len);
	if (text == NULL)
		return reply(c, MHD_HTTP_SERVICE_UNAVAILABLE, "text/plain", no_memory,
			     sizeof(no_memory) - 1, MHD_RESPMEM_PERSISTENT);
	return reply(c, MHD_HTTP_OK, om ? CT_OPENMETRICS : CT_PROMETHEUS, text, len,
		     MHD_RESPMEM_MUST_FREE);
}

/* "ADDR:PORT" of the bound socket @fd into @buf. */
static void
bound_name(int fd, char *buf, size_t len)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char host[INET6_ADDRSTRLEN];

	buf[0] = '\0';
	if (getsockname(fd, (struct sockaddr *)&ss, &sl) != 0)
		return;
	if (ss.ss_family == AF_INET6) {
		const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)&ss;

		inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof(host));
		snprintf(buf, len, "[%s]:%u", host, ntohs(a->sin6_port));
	} else {
		const struct sockaddr_in *a = (const struct sockaddr_in *)&ss;

		inet_ntop(AF_INET, &a->sin_addr, host, sizeof(host));
		snprintf(buf, len, "%s:%u", host, ntohs(a->sin_port));
	}
}

int
sw_metrics_start(const struct sw_metrics_addr *a, char *err, size_t errlen)
{
	char bound[INET6_ADDRSTRLEN + 8];
	int one = 1, fd;

	fd = socket(a->ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		snprintf(err, errlen, "--metrics-listen %s: %s", a->text, strerror(errno));
		return -1;
	}
	/* a restart binds again at once; v6 means v6 only: the operator named one address */
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (a->ss.ss_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(fd, (const struct sockaddr *)&a->ss, a->len) != 0 || listen(fd, 16) != 0) {
		snprintf(err, errlen, "--metrics-listen %s: %s", a->text, strerror(errno));
		close(fd);
		return -1;
	}
	bound_name(fd, bound, sizeof(bound));
	mhd = MHD_start_daemon(
		MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ERROR_LOG |
			(a->ss.ss_family == AF_INET6 ? MHD_USE_IPv6 : 0),
		0, NULL, NULL, on_request, NULL, MHD_OPTION_LISTEN_SOCKET, fd,
		MHD_OPTION_CONNECTION_LIMIT, (unsigned int)METRICS_CONN_MAX,
		MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned int)METRICS_CONN_PER_IP,
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)METRICS_CONN_TIMEOUT_S,
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)METRICS_CONN_MEMORY, MHD_OPTION_END);
	if (mhd == NULL) {
		snprintf(err, errlen, "--metrics-listen %s: the HTTP server did not start",
			 a->text);
		close(fd);
		return -1;
	}
	HV_LOG(INFO, "metrics on http://%s/metrics", bound);
	return 0;
}

void
sw_metrics_stop(void)
{
	if (mhd == NULL)
		return;
	/* joins its thread, closes its connections and the listening socket */
	MHD_stop_daemon(mhd);
	mhd = NULL;
}
