/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * hvctl stats [PORT] [--watch [SECONDS]]: "stats". Without --watch, the
 * counters as they are; with it, rates computed from successive samples until
 * SIGINT (or --count intervals). hvctl stats clear [PORT]: "stats.clear".
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hv_ctl_api.h"
#include "hvctl.h"

static const char stats_usage[] =
	"usage: hvctl stats [PORT] [--watch [SECONDS]] [--count N]\n"
	"       hvctl stats clear [PORT]\n"
	"\n"
	"Without --watch: each port's counters with totals, and each PMD's.\n"
	"  -w, --watch [SECONDS]  sample every SECONDS (0.01..86400, default 1) and\n"
	"                         print rates: packets/s, bit/s, drops/s,\n"
	"                         interrupts/s per port; busy % and packets per batch\n"
	"                         per PMD. Stops on SIGINT; with --json, one JSON\n"
	"                         object per interval\n"
	"  -c, --count N          with --watch, stop after N intervals\n"
	"\n"
	"clear: start the counters of PORT (default: every port and PMD) from 0\n"
	"again, as hvctl stats and port show print them ('hvctl stats clear --help').\n";

const struct hvctl_api_verb hvctl_stats_api[] = {
	{"stats clear", HV_CTL_C_STATS_CLEAR, false},
	{NULL, 0, false},
};

/* Port counters, in column order. */
static const char *const port_keys[] = {
	"rx_packets", "rx_bytes", "tx_packets", "tx_bytes", "drops", "interrupts",
};
#define NKEYS (sizeof(port_keys) / sizeof(port_keys[0]))

static volatile sig_atomic_t stop;

static void
on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static const cJSON *
find_named(const cJSON *list, const char *key, const cJSON *like)
{
	const cJSON *want = cJSON_GetObjectItemCaseSensitive(like, key);
	const cJSON *e;

	cJSON_ArrayForEach(e, list)
	{
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, key);

		if (v != NULL && want != NULL && cJSON_Compare(v, want, true))
			return e;
	}
	return NULL;
}

static void
print_counters(const cJSON *res)
{
	static const struct hvctl_col pcols[] = {
		{"PORT", HVCTL_LEFT},     {"RX_PKTS", HVCTL_RIGHT},  {"RX_BYTES", HVCTL_RIGHT},
		{"TX_PKTS", HVCTL_RIGHT}, {"TX_BYTES", HVCTL_RIGHT}, {"DROPS", HVCTL_RIGHT},
		{"IRQS", HVCTL_RIGHT},
	};
	static const struct hvctl_col mcols[] = {
		{"LCORE", HVCTL_RIGHT},   {"BUSY%", HVCTL_RIGHT},      {"PACKETS", HVCTL_RIGHT},
		{"BATCHES", HVCTL_RIGHT}, {"PKTS/BATCH", HVCTL_RIGHT},
	};
	const cJSON *ports = cJSON_GetObjectItemCaseSensitive(res, "ports");
	const cJSON *pmds = cJSON_GetObjectItemCaseSensitive(res, "pmds");
	double total[NKEYS] = {0};
	struct hvctl_table *t;
	char buf[NKEYS + 1][64];
	const char *row[NKEYS + 1];
	const cJSON *p;
	unsigned int i;

	t = hvctl_table_new(pcols, NKEYS + 1);
	if (t == NULL)
		return;
	cJSON_ArrayForEach(p, ports)
	{
		row[0] = hvctl_cell(cJSON_GetObjectItemCaseSensitive(p, HV_CTL_KEY(NAME)), buf[0],
				    64);
		for (i = 0; i < NKEYS; i++) {
			const cJSON *v = cJSON_GetObjectItemCaseSensitive(p, port_keys[i]);

			row[i + 1] = hvctl_cell(v, buf[i + 1], 64);
			total[i] += hvctl_num(p, port_keys[i]);
		}
		hvctl_table_add(t, row);
	}
	if (cJSON_GetArraySize(ports) > 0) {
		row[0] = "TOTAL";
		for (i = 0; i < NKEYS; i++) {
			snprintf(buf[i + 1], 64, "%.0f", total[i]);
			row[i + 1] = buf[i + 1];
		}
		hvctl_table_add(t, row);
	}
	hvctl_table_print(t, stdout);
	hvctl_table_free(t);

	if (cJSON_GetArraySize(pmds) == 0)
		return;
	t = hvctl_table_new(mcols, 5);
	if (t == NULL)
		return;
	cJSON_ArrayForEach(p, pmds)
	{
		double busy = hvctl_num(p, "busy_cycles"), tot = hvctl_num(p, "total_cycles");
		double pkts = hvctl_num(p, "packets"), batches = hvctl_num(p, "batches");

		row[0] = hvctl_cell(cJSON_GetObjectItemCaseSensitive(p, "lcore"), buf[0], 64);
		snprintf(buf[1], 64, "%.1f", tot > 0 ? 100.0 * busy / tot : 0.0);
		row[1] = buf[1];
		row[2] = hvctl_cell(cJSON_GetObjectItemCaseSensitive(p, "packets"), buf[2], 64);
		row[3] = hvctl_cell(cJSON_GetObjectItemCaseSensitive(p, "batches"), buf[3], 64);
		snprintf(buf[4], 64, "%.1f", batches > 0 ? pkts / batches : 0.0);
		row[4] = buf[4];
		hvctl_table_add(t, row);
	}
	printf("\n");
	hvctl_table_print(t, stdout);
	hvctl_table_free(t);
}

/* Counter delta; a counter that went backwards was reset: count from 0. */
static double
delta(const cJSON *cur, const cJSON *prev, const char *key)
{
	double c = hvctl_num(cur, key), p = hvctl_num(prev, key);

	return c >= p ? c - p : c;
}

/* Rates between two samples, as JSON (same shape printed as text or JSON). */
static cJSON *
rates(const cJSON *prev, const cJSON *cur, double dt)
{
	static const char *const rate_keys[] = {
		"rx_pps", "rx_bps", "tx_pps", "tx_bps", "drops_ps", "irqs_ps",
	};
	cJSON *out = cJSON_CreateObject();
	cJSON *ports = cJSON_AddArrayToObject(out, "ports");
	cJSON *pmds = cJSON_AddArrayToObject(out, "pmds");
	const cJSON *p, *q;
	unsigned int i;

	cJSON_AddNumberToObject(out, "interval_s", round(dt * 1000) / 1000);
	cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(cur, "ports"))
	{
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(p, HV_CTL_KEY(NAME));
		cJSON *o;

		q = find_named(cJSON_GetObjectItemCaseSensitive(prev, "ports"), HV_CTL_KEY(NAME),
			       p);
		if (q == NULL)
			continue; /* new port: rates from the next sample on */
		o = cJSON_CreateObject();
		cJSON_AddItemToArray(ports, o);
		cJSON_AddItemToObject(o, HV_CTL_KEY(NAME), cJSON_Duplicate(name, true));
		for (i = 0; i < NKEYS; i++) {
			double d = delta(p, q, port_keys[i]) / dt;

			if (strstr(port_keys[i], "bytes") != NULL)
				d *= 8;
			cJSON_AddNumberToObject(o, rate_keys[i], round(d));
		}
	}
	cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(cur, "pmds"))
	{
		double busy, tot, pkts, batches;
		cJSON *o;

		q = find_named(cJSON_GetObjectItemCaseSensitive(prev, "pmds"), "lcore", p);
		if (q == NULL)
			continue;
		busy = delta(p, q, "busy_cycles");
		tot = delta(p, q, "total_cycles");
		pkts = delta(p, q, "packets");
		batches = delta(p, q, "batches");
		o = cJSON_CreateObject();
		cJSON_AddItemToArray(pmds, o);
		cJSON_AddItemToObject(
			o, "lcore",
			cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(p, "lcore"), true));
		cJSON_AddNumberToObject(o, "busy_pct",
					round(tot > 0 ? 1000.0 * busy / tot : 0) / 10);
		cJSON_AddNumberToObject(o, "pkts_per_batch",
					round(batches > 0 ? 10.0 * pkts / batches : 0) / 10);
	}
	return out;
}

static void
print_rates(const cJSON *r)
{
	static const struct hvctl_col pcols[] = {
		{"PORT", HVCTL_LEFT},    {"RX_PPS", HVCTL_RIGHT},   {"RX_BIT/S", HVCTL_RIGHT},
		{"TX_PPS", HVCTL_RIGHT}, {"TX_BIT/S", HVCTL_RIGHT}, {"DROPS/S", HVCTL_RIGHT},
		{"IRQS/S", HVCTL_RIGHT},
	};
	static const struct hvctl_col mcols[] = {
		{"LCORE", HVCTL_RIGHT},
		{"BUSY%", HVCTL_RIGHT},
		{"PKTS/BATCH", HVCTL_RIGHT},
	};
	static const char *const keys[] = {
		"rx_pps", "rx_bps", "tx_pps", "tx_bps", "drops_ps", "irqs_ps",
	};
	const cJSON *pmds = cJSON_GetObjectItemCaseSensitive(r, "pmds");
	double total[NKEYS] = {0};
	char buf[NKEYS + 1][64];
	const char *row[NKEYS + 1];
	struct hvctl_table *t;
	const cJSON *p;
	unsigned int i;

	printf("--- interval %.2f s\n", hvctl_num(r, "interval_s"));
	t = hvctl_table_new(pcols, NKEYS + 1);
	if (t == NULL)
		return;
	cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(r, "ports"))
	{
		row[0] = hvctl_cell(cJSON_GetObjectItemCaseSensitive(p, HV_CTL_KEY(NAME)), buf[0],
				    64);
		for (i = 0; i < NKEYS; i++) {
			total[i] += hvctl_num(p, keys[i]);
			row[i + 1] = hvctl_si(hvctl_num(p, keys[i]), buf[i + 1], 64);
		}
		hvctl_table_add(t, row);
	}
	row[0] = "TOTAL";
	for (i = 0; i < NKEYS; i++)
		row[i + 1] = hvctl_si(total[i], buf[i + 1], 64);
	hvctl_table_add(t, row);
	hvctl_table_print(t, stdout);
	hvctl_table_free(t);

	if (cJSON_GetArraySize(pmds) == 0)
		return;
	printf("\n");
	t = hvctl_table_new(mcols, 3);
	if (t == NULL)
		return;
	cJSON_ArrayForEach(p, pmds)
	{
		row[0] = hvctl_cell(cJSON_GetObjectItemCaseSensitive(p, "lcore"), buf[0], 64);
		snprintf(buf[1], 64, "%.1f", hvctl_num(p, "busy_pct"));
		row[1] = buf[1];
		snprintf(buf[2], 64, "%.1f", hvctl_num(p, "pkts_per_batch"));
		row[2] = buf[2];
		hvctl_table_add(t, row);
	}
	hvctl_table_print(t, stdout);
	hvctl_table_free(t);
}

static cJSON *
stats_args(const char *port)
{
	cJSON *args;

	if (port == NULL)
		return NULL;
	args = cJSON_CreateObject();
	cJSON_AddStringToObject(args, HV_CTL_KEY(PORT), port);
	return args;
}

/* Sleep until deadline (CLOCK_MONOTONIC seconds) or a signal. */
static void
sleep_until(double deadline)
{
	struct timespec ts = {
		.tv_sec = (time_t)deadline,
		.tv_nsec = (long)((deadline - floor(deadline)) * 1e9),
	};

	while (!stop && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

static int
watch(struct hvctl *h, const char *port, double interval, unsigned long long count)
{
	struct sigaction sa = {.sa_handler = on_signal};
	cJSON *prev = NULL, *cur = NULL, *r;
	double t_prev, t_cur, next;
	unsigned long long n;
	int rc = 1;

	/* No SA_RESTART: the signal ends the sleep. */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	if (hvctl_call(h, HV_CTL_CMD(STATS), stats_args(port), &prev) < 0)
		return 1;
	t_prev = now_s();
	next = t_prev;
	for (n = 0; count == 0 || n < count; n++) {
		next += interval;
		sleep_until(next);
		if (stop)
			break;
		if (hvctl_call(h, HV_CTL_CMD(STATS), stats_args(port), &cur) < 0)
			goto out;
		t_cur = now_s();
		r = rates(prev, cur, t_cur - t_prev > 1e-6 ? t_cur - t_prev : 1e-6);
		if (h->json) {
			char *text = cJSON_PrintUnformatted(r);

			printf("%s\n", text != NULL ? text : "null");
			free(text);
		} else {
			print_rates(r);
		}
		fflush(stdout);
		cJSON_Delete(r);
		cJSON_Delete(prev);
		prev = cur;
		cur = NULL;
		t_prev = t_cur;
		if (interval >= 10 && h->fd >= 0) {
			/* reconnect next time: the daemon drops clients idle for 60 s */
			close(h->fd);
			h->fd = -1;
		}
	}
	rc = 0;
out:
	cJSON_Delete(prev);
	cJSON_Delete(cur);
	return rc;
}

/* 1: s is 0.01..86400 seconds (*out set); 0: s is no number; -1: a number out of range. */
static int
parse_seconds(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (end == s || *end != '\0')
		return 0;
	/* 10 ms: shorter intervals measure the control socket, not the traffic */
	if (errno != 0 || !(v >= 0.01 && v <= 86400))
		return -1;
	*out = v;
	return 1;
}

/* hvctl stats clear [PORT] */
static int
stats_clear(struct hvctl *h, int argc, char **argv)
{
	cJSON *args, *res;
	const cJSON *ports;
	int rc = hvctl_api_args("stats", &hvctl_stats_api[0], argc, argv, &args);

	if (rc >= 0)
		return rc;
	if (hvctl_call(h, HV_CTL_CMD(STATS_CLEAR), args, &res) < 0)
		return 1;
	ports = cJSON_GetObjectItemCaseSensitive(res, "ports");
	if (h->json)
		hvctl_print_json(stdout, res);
	else
		printf("cleared the counters of %d port%s%s\n", cJSON_GetArraySize(ports),
		       cJSON_GetArraySize(ports) == 1 ? "" : "s",
		       cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(res, "pmds")) ? " and the PMDs"
										   : "");
	cJSON_Delete(res);
	return 0;
}

int
hvctl_cmd_stats(struct hvctl *h, int argc, char **argv)
{
	static const struct option opts[] = {
		{"watch", optional_argument, NULL, 'w'},
		{"count", required_argument, NULL, 'c'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	unsigned long long count = 0;
	const char *port = NULL;
	double interval = 1;
	bool watching = false;
	cJSON *res;
	int c;

	if (argc >= 2 && strcmp(argv[1], "clear") == 0)
		return stats_clear(h, argc - 1, argv + 1);
	optind = 0;
	while ((c = getopt_long(argc, argv, ":w::c:h", opts, NULL)) != -1) {
		const char *secs = NULL;

		switch (c) {
		case 'w':
			watching = true;
			if (optarg != NULL)
				secs = optarg;
			else if (optind < argc && parse_seconds(argv[optind], &interval) != 0)
				secs = argv[optind++]; /* "--watch 5": the next word, if a number */
			if (secs != NULL && parse_seconds(secs, &interval) != 1)
				return hvctl_usage_err("stats",
						       "stats: --watch: '%s' is not 0.01..86400 "
						       "seconds",
						       secs);
			break;
		case 'c':
			if (hvctl_parse_uint(optarg, 1, ~0ULL, &count) < 0)
				return hvctl_usage_err("stats",
						       "stats: --count: '%s' is not a "
						       "positive integer",
						       optarg);
			break;
		case 'h':
			fputs(stats_usage, stdout);
			return 0;
		default:
			return hvctl_opt_err("stats", c, argv);
		}
	}
	if (optind < argc)
		port = argv[optind++];
	if (optind < argc)
		return hvctl_usage_err("stats", "stats: unexpected argument '%s'", argv[optind]);
	if (count != 0 && !watching)
		return hvctl_usage_err("stats", "stats: --count needs --watch");
	if (watching)
		return watch(h, port, interval, count);

	if (hvctl_call(h, HV_CTL_CMD(STATS), stats_args(port), &res) < 0)
		return 1;
	if (h->json)
		hvctl_print_json(stdout, res);
	else
		print_counters(res);
	cJSON_Delete(res);
	return 0;
}
