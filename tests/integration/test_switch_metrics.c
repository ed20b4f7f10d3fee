/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The Prometheus endpoint of the hvswitch daemon (--metrics-listen): scraped
 * while two virtio-user guests exchange frames, checked with promtool, and
 * compared with the control socket's "stats" (what hvctl stats --json
 * prints); only GET /metrics is served; a bad address is refused at start.
 * (tests/unit/test_metrics.c has the label escaping: port names here are of
 * [A-Za-z0-9._-] only.)
 */
#include <arpa/inet.h>
#include <check.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "switch_harness.h"

static struct hvsw D;
static struct guest G[2];

static void
setup(void)
{
	swh_reset();
	hvsw_init(&D);
}

static void
teardown(void)
{
	for (int i = 0; i < 2; i++)
		guest_close(&G[i]);
	hvsw_cleanup(&D);
}

/* Start the daemon with the endpoint on a free port of 127.0.0.1; its port from the log. */
static unsigned int
start_with_metrics(void)
{
	const char *extra[] = {"--metrics-listen", "127.0.0.1:0", NULL};
	uint64_t end = swh_now_ms() + SWH_TIMEOUT_MS;
	unsigned int port = 0;

	ck_assert_int_eq(hvsw_start(&D, extra), 0);
	/* "metrics on http://127.0.0.1:PORT/metrics" is logged before the control socket answers */
	while (port == 0 && swh_now_ms() < end) {
		char line[512];
		FILE *f = fopen(D.log, "r");

		while (f != NULL && fgets(line, sizeof(line), f) != NULL) {
			const char *m = strstr(line, "metrics on http://127.0.0.1:");

			if (m != NULL)
				port = (unsigned int)atoi(m +
							  strlen("metrics on http://127.0.0.1:"));
		}
		if (f != NULL)
			fclose(f);
		if (port == 0)
			usleep(10000);
	}
	ck_assert_msg(port != 0, "no metrics address in %s", D.log);
	return port;
}

/*
 * One HTTP/1.1 request to 127.0.0.1:@port; the status, and the body in *@body
 * (the caller frees). @accept: an Accept header, or NULL.
 */
static int
http(unsigned int port, const char *method, const char *path, const char *accept, char **body)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	struct timeval tv = {.tv_sec = 5};
	size_t len = 0, cap = 1 << 16;
	char req[512], *buf = malloc(cap), *hdr_end;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), status = -1;
	ssize_t n;

	ck_assert_ptr_nonnull(buf);
	ck_assert_int_ge(fd, 0);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	n = snprintf(req, sizeof(req),
		     "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n%s%s%s\r\n", method,
		     path, accept ? "Accept: " : "", accept ? accept : "", accept ? "\r\n" : "");
	ck_assert_int_eq(write(fd, req, (size_t)n), n);
	while ((n = read(fd, buf + len, cap - len - 1)) > 0) {
		len += (size_t)n;
		if (len + 1 == cap) {
			cap *= 2;
			buf = realloc(buf, cap);
			ck_assert_ptr_nonnull(buf);
		}
	}
	close(fd);
	buf[len] = '\0';
	sscanf(buf, "HTTP/1.1 %d", &status);
	hdr_end = strstr(buf, "\r\n\r\n");
	ck_assert_ptr_nonnull(hdr_end);
	memmove(buf, hdr_end + 4, strlen(hdr_end + 4) + 1);
	*body = buf;
	return status;
}

/* GET /metrics, checked with promtool (a file in the run dir). */
static char *
scrape(unsigned int port)
{
	char *text, path[160], cmd[400];
	FILE *f;
	int rc;

	ck_assert_int_eq(http(port, "GET", "/metrics", NULL, &text), 200);
	snprintf(path, sizeof(path), "%s/scrape.txt", D.dir);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "promtool check metrics < %s", path);
	rc = system(cmd);
	ck_assert_msg(WIFEXITED(rc) && WEXITSTATUS(rc) == 0, "promtool check metrics: %d on %s", rc,
		      path);
	return text;
}

/* The value of the sample @sample (name and labels, exactly as written); -1 if absent. */
static double
metric(const char *text, const char *sample)
{
	size_t n = strlen(sample);

	for (const char *l = text; l != NULL && *l != '\0'; l = strchr(l, '\n'), l = l ? l + 1 : l)
		if (strncmp(l, sample, n) == 0 && l[n] == ' ')
			return strtod(l + n + 1, NULL);
	return -1;
}

static double
port_metric(const char *text, const char *name, const char *port, const char *labels)
{
	char s[256];

	snprintf(s, sizeof(s), "%s{port=\"%s\"%s}", name, port, labels);
	return metric(text, s);
}

/* A number of the control socket's "stats" (hvctl stats --json): ports[@port].@key or @key. */
static double
stats_num(const char *port, const char *key)
{
	cJSON *r = hvsw_ok(&D, "stats", NULL), *it;
	double v = -1;

	if (port == NULL) {
		v = swh_num(r, key);
	} else {
		cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(
					       r, "ports")) if (strcmp(swh_str(it, "name"), port) ==
								0) v = swh_num(it, key);
	}
	cJSON_Delete(r);
	ck_assert_msg(v >= 0, "stats: no %s of %s", key, port ? port : "(switch)");
	return v;
}

/* Send @n frames vm0 -> vm1 and wait until they all arrived. */
static void
traffic(unsigned int n)
{
	const struct rte_ether_addr dst = G[1].mac;
	uint32_t last = 0;

	for (unsigned int i = 0; i < n; i++) {
		last = guest_send(&G[0], &dst, NULL, 0);
		if (i % 16 == 15)
			swh_poll();
	}
	ck_assert(guest_wait(&G[1], last, SWH_TIMEOUT_MS));
}

/*
 * Scraped during traffic: well-formed (promtool), rx/tx packets grow
 * between scrapes, and once traffic stops every counter equals the control
 * socket's.
 */
START_TEST(scrape_during_traffic)
{
	unsigned int port = start_with_metrics();
	char sock[2][160], lbl[64];
	char *t0, *t1, *t2;
	double v, rx0, rx1;
	uint64_t end;

	for (int i = 0; i < 2; i++) {
		char name[8];

		snprintf(name, sizeof(name), "vm%d", i);
		hvsw_add_port(&D, name, NULL);
		snprintf(sock[i], sizeof(sock[i]), "%s/%s.sock", D.dir, name);
		ck_assert_int_eq(guest_open(&G[i], name, (unsigned int)i, sock[i], false), 0);
		ck_assert(hvsw_wait_up(&D, name, SWH_TIMEOUT_MS));
	}
	/* vm1 speaks first: its MAC is learned, vm0's frames go to it alone */
	ck_assert(guest_wait(&G[0], guest_send(&G[1], &swh_bcast, NULL, 0), SWH_TIMEOUT_MS));
	traffic(64);
	t0 = scrape(port);
	/* scraped while frames are in flight, until the switch has taken some of them */
	for (unsigned int i = 0; i < 32; i++)
		guest_send(&G[0], &G[1].mac, NULL, 0);
	end = swh_now_ms() + SWH_TIMEOUT_MS;
	do {
		t1 = scrape(port);
		rx0 = port_metric(t0, "hvswitch_port_packets_total", "vm0", ",direction=\"rx\"");
		rx1 = port_metric(t1, "hvswitch_port_packets_total", "vm0", ",direction=\"rx\"");
		if (rx1 > rx0 || swh_now_ms() >= end)
			break;
		free(t1);
		swh_poll();
	} while (true);
	traffic(200);
	t2 = scrape(port);
	ck_assert_double_gt(
		port_metric(t1, "hvswitch_port_packets_total", "vm0", ",direction=\"rx\""),
		port_metric(t0, "hvswitch_port_packets_total", "vm0", ",direction=\"rx\""));
	ck_assert_double_ge(
		port_metric(t2, "hvswitch_port_packets_total", "vm0", ",direction=\"rx\""),
		port_metric(t1, "hvswitch_port_packets_total", "vm0", ",direction=\"rx\"") + 200);
	ck_assert_double_ge(
		port_metric(t2, "hvswitch_port_packets_total", "vm1", ",direction=\"tx\""),
		port_metric(t0, "hvswitch_port_packets_total", "vm1", ",direction=\"tx\"") + 200);
	free(t0), free(t1), free(t2);

	/* traffic stopped (everything sent arrived): equal to the control socket's */
	swh_poll();
	t2 = scrape(port);
	for (int i = 0; i < 2; i++) {
		const char *p = i ? "vm1" : "vm0";

		ck_assert_double_eq(
			port_metric(t2, "hvswitch_port_packets_total", p, ",direction=\"rx\""),
			stats_num(p, "rx_packets"));
		ck_assert_double_eq(
			port_metric(t2, "hvswitch_port_packets_total", p, ",direction=\"tx\""),
			stats_num(p, "tx_packets"));
		ck_assert_double_eq(
			port_metric(t2, "hvswitch_port_bytes_total", p, ",direction=\"rx\""),
			stats_num(p, "rx_bytes"));
		ck_assert_double_eq(
			port_metric(t2, "hvswitch_port_bytes_total", p, ",direction=\"tx\""),
			stats_num(p, "tx_bytes"));
		ck_assert_double_eq(port_metric(t2, "hvswitch_port_interrupts_total", p, ""),
				    stats_num(p, "interrupts"));
		/* the guest's TX ring is the switch's rx */
		ck_assert_double_eq(port_metric(t2, "hvswitch_queue_packets_total", p,
						",queue=\"0\",direction=\"rx\""),
				    stats_num(p, "rx_packets"));
		ck_assert_double_eq(port_metric(t2, "hvswitch_port_up", p, ",type=\"vhost-user\""),
				    1);
	}
	ck_assert_double_ge(
		port_metric(t2, "hvswitch_port_packets_total", "vm0", ",direction=\"rx\""), 296);
	snprintf(lbl, sizeof(lbl), "hvswitch_pmd_packets_total{pmd=\"0\"}");
	v = metric(t2, lbl);
	ck_assert_double_eq(v, stats_num("vm0", "rx_packets") + stats_num("vm1", "rx_packets"));
	ck_assert_double_eq(metric(t2, "hvswitch_fdb_learned_total"),
			    stats_num(NULL, "fdb.learned"));
	ck_assert_double_eq(metric(t2, "hvswitch_fdb_entries"), stats_num(NULL, "fdb.entries"));
	ck_assert_double_eq(metric(t2, "hvswitch_fdb_entries"), 2);
	ck_assert_double_eq(port_metric(t2, "hvswitch_port_drops_total", "vm0", ",reason=\"runt\""),
			    0);
	free(t2);
	/* the endpoint stops with the daemon: a clean exit (no leak under ASan) */
	for (int i = 0; i < 2; i++)
		guest_close(&G[i]);
	ck_assert_int_eq(hvsw_stop(&D), 0);
}
END_TEST

/* Only GET (and HEAD) /metrics; OpenMetrics to whoever asks for it (Prometheus does). */
START_TEST(http_methods_and_paths)
{
	unsigned int port = start_with_metrics();
	char *t;

	ck_assert_int_eq(http(port, "GET", "/", NULL, &t), 404);
	free(t);
	ck_assert_int_eq(http(port, "GET", "/metricsx", NULL, &t), 404);
	free(t);
	ck_assert_int_eq(http(port, "POST", "/metrics", NULL, &t), 405);
	free(t);
	ck_assert_int_eq(http(port, "DELETE", "/metrics", NULL, &t), 405);
	free(t);
	ck_assert_int_eq(http(port, "HEAD", "/metrics", NULL, &t), 200);
	ck_assert_str_eq(t, "");
	free(t);
	ck_assert_int_eq(
		http(port, "GET", "/metrics", "application/openmetrics-text;version=1.0.0", &t),
		200);
	ck_assert_ptr_nonnull(strstr(t, "# TYPE hvswitch_port_packets counter\n"));
	ck_assert_ptr_nonnull(strstr(t, "# TYPE hvswitch_build info\n"));
	ck_assert_int_ge(strlen(t), 6);
	ck_assert_str_eq(t + strlen(t) - 6, "# EOF\n");
	free(t);
	t = scrape(port);
	ck_assert_ptr_nonnull(strstr(t, "# TYPE hvswitch_port_packets_total counter\n"));
	ck_assert_ptr_null(strstr(t, "# EOF"));
	free(t);
	/* it still answers the control socket */
	cJSON_Delete(hvsw_ok(&D, "port.list", NULL));
	ck_assert_int_eq(hvsw_stop(&D), 0);
}
END_TEST

/* A bad --metrics-listen: one line naming it, exit status 1, nothing started. */
START_TEST(bad_listen_refused)
{
	static const char *const bad[] = {
		"localhost:9417", "127.0.0.1", "127.0.0.1:", "127.0.0.1:65536",
		"127.0.0.1:x",    "[::1:9417", ":9417",      "1.2.3:9417",
	};
	struct sockaddr_in a = {.sin_family = AF_INET};
	socklen_t al = sizeof(a);
	char busy[32], line[512];
	int fd;

	for (unsigned int i = 0; i <= RTE_DIM(bad); i++) {
		const char *extra[] = {"--metrics-listen", NULL, NULL};
		const char *want = "--metrics-listen";
		bool found = false;
		FILE *f;

		if (i < RTE_DIM(bad)) {
			extra[1] = bad[i];
			fd = -1;
		} else {
			/* an address another socket holds: the reason is given */
			fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
			a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
			ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
			ck_assert_int_eq(listen(fd, 1), 0);
			ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&a, &al), 0);
			snprintf(busy, sizeof(busy), "127.0.0.1:%u", ntohs(a.sin_port));
			extra[1] = busy;
			want = "Address already in use";
		}
		hvsw_init(&D);
		ck_assert_int_eq(hvsw_start(&D, extra), -1);
		ck_assert(WIFEXITED(D.status) && WEXITSTATUS(D.status) == 1);
		f = fopen(D.log, "r");
		ck_assert_ptr_nonnull(f);
		while (fgets(line, sizeof(line), f) != NULL)
			if (strncmp(line, "hvswitch: --metrics-listen ", 27) == 0 &&
			    strstr(line, want) != NULL)
				found = true;
		fclose(f);
		ck_assert_msg(found, "%s: no error line with '%s' in %s", extra[1], want, D.log);
		if (fd >= 0)
			close(fd);
		hvsw_cleanup(&D);
	}
}
END_TEST

static Suite *
metrics_suite(void)
{
	Suite *s = suite_create("switch-metrics");
	TCase *tc = tcase_create("metrics");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, scrape_during_traffic);
	tcase_add_test(tc, http_methods_and_paths);
	tcase_add_test(tc, bad_listen_refused);
	suite_add_tcase(s, tc);
	return s;
}

int
main(int argc, char **argv)
{
	return swh_run_suite(metrics_suite, argc, argv);
}
