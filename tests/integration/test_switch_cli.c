/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the daemon does for an operator's hvctl: a port's state while a
 * frontend is connected, port.set changes logged once, stats.clear (the
 * counters read from 0 again, the PMDs' own untouched) and log.set.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "switch_harness.h"

#define T SWH_TIMEOUT_MS

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
	for (unsigned int i = 0; i < 2; i++)
		if (G[i].open)
			guest_close(&G[i]);
	hvsw_cleanup(&D);
}

/* Times want occurs in the daemon's log. */
static unsigned int
log_count(const char *want)
{
	static char log[1 << 17];
	unsigned int n = 0;
	FILE *f = fopen(D.log, "r");
	size_t len;

	ck_assert_ptr_nonnull(f);
	len = fread(log, 1, sizeof(log) - 1, f);
	fclose(f);
	log[len] = '\0';
	for (const char *p = strstr(log, want); p != NULL; p = strstr(p + 1, want))
		n++;
	return n;
}

static const char *
state_of(const char *name, char *buf, size_t len)
{
	cJSON *r = hvsw_ok(&D, "port.show", "{\"name\":\"%s\"}", name);

	snprintf(buf, len, "%s", swh_str(r, "state") ? swh_str(r, "state") : "(none)");
	cJSON_Delete(r);
	return buf;
}

/* Poll until port name's state is want; false after T ms. */
static bool
wait_state(const char *name, const char *want)
{
	uint64_t end = swh_now_ms() + T;
	char st[32];

	do {
		if (strcmp(state_of(name, st, sizeof(st)), want) == 0)
			return true;
		usleep(5000);
	} while (swh_now_ms() < end);
	return false;
}

/* down without a frontend, connected with one whose rings are not started, up with a guest. */
START_TEST(state_connected)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	char sock[160], st[32];
	int fd;

	ck_assert_int_eq(hvsw_start(&D, NULL), 0);
	hvsw_add_port(&D, "p0", NULL);
	ck_assert_str_eq(state_of("p0", st, sizeof(st)), "down");
	snprintf(sock, sizeof(sock), "%s/p0.sock", D.dir);
	ck_assert_uint_lt(strlen(sock), sizeof(sa.sun_path));
	memcpy(sa.sun_path, sock, strlen(sock) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ck_assert_msg(wait_state("p0", "connected"), "state %s", state_of("p0", st, sizeof(st)));
	close(fd);
	ck_assert_msg(wait_state("p0", "down"), "state %s", state_of("p0", st, sizeof(st)));
	ck_assert_int_eq(guest_open(&G[0], "p0", 0, sock, false), 0);
	ck_assert_msg(wait_state("p0", "up"), "state %s", state_of("p0", st, sizeof(st)));
}
END_TEST

/* Each port.set that changes something is logged once, old -> new. */
START_TEST(port_set_logged)
{
	static const char want[] = "ctl: port p0 set: vlan 0 -> 10, pmd auto -> 0 (uid ";

	ck_assert_int_eq(hvsw_start(&D, NULL), 0);
	hvsw_add_port(&D, "p0", NULL);
	cJSON_Delete(hvsw_ok(&D, "port.set", "{\"name\":\"p0\",\"vlan\":10,\"pmd\":0}"));
	ck_assert_uint_eq(log_count(want), 1);
	/* the same values again: nothing changed, nothing logged */
	cJSON_Delete(hvsw_ok(&D, "port.set", "{\"name\":\"p0\",\"vlan\":10,\"pmd\":0}"));
	ck_assert_uint_eq(log_count("ctl: port p0 set:"), 1);
	cJSON_Delete(hvsw_ok(&D, "port.set",
			     "{\"name\":\"p0\",\"vlan\":0,\"trunk\":true,\"pmd\":\"auto\"}"));
	ck_assert_uint_eq(log_count("ctl: port p0 set: vlan 10 -> 0, trunk false -> true, "
				    "pmd 0 -> auto (uid "),
			  1);
}
END_TEST

static double
pmd_packets(void)
{
	cJSON *r = hvsw_ok(&D, "stats", NULL);
	double n = 0;
	const cJSON *p;

	cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(r, "pmds"))
	{
		n += swh_num(p, "packets");
	}
	cJSON_Delete(r);
	return n;
}

/* Send n broadcasts from guest 0 and wait for each at guest 1. */
static void
send_bcasts(unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		uint32_t id = guest_send(&G[0], &swh_bcast, NULL, 0);

		ck_assert_msg(guest_wait(&G[1], id, T), "frame %u did not arrive", id);
	}
}

/* stats.clear: that port's counters from 0, the others' as they were; all: the PMDs' too. */
START_TEST(stats_clear)
{
	char sock[160];
	cJSON *r;

	ck_assert_int_eq(hvsw_start(&D, NULL), 0);
	for (unsigned int i = 0; i < 2; i++) {
		char name[8];

		snprintf(name, sizeof(name), "p%u", i);
		hvsw_add_port(&D, name, NULL);
		snprintf(sock, sizeof(sock), "%s/%s.sock", D.dir, name);
		ck_assert_int_eq(guest_open(&G[i], name, i, sock, false), 0);
		ck_assert(hvsw_wait_up(&D, name, T));
	}
	send_bcasts(5);
	ck_assert(hvsw_port_stat(&D, "p0", "rx_packets") >= 5);
	ck_assert(hvsw_port_stat(&D, "p1", "tx_packets") >= 5);
	r = hvsw_ok(&D, "stats.clear", "{\"port\":\"p0\"}");
	ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(r, "ports")), 1);
	cJSON_Delete(r);
	ck_assert(hvsw_port_stat(&D, "p0", "rx_packets") == 0);
	ck_assert(hvsw_port_stat(&D, "p0", "rx_bytes") == 0);
	ck_assert(hvsw_port_stat(&D, "p1", "tx_packets") >= 5);
	send_bcasts(3);
	ck_assert(hvsw_port_stat(&D, "p0", "rx_packets") == 3);
	ck_assert(pmd_packets() >= 8);
	/* every port and the PMDs */
	cJSON_Delete(hvsw_ok(&D, "stats.clear", NULL));
	ck_assert(hvsw_port_stat(&D, "p1", "tx_packets") == 0);
	ck_assert(hvsw_port_stat(&D, "p0", "rx_packets") == 0);
	ck_assert(pmd_packets() < 8);
	send_bcasts(2);
	ck_assert(hvsw_port_stat(&D, "p1", "tx_packets") == 2);
	ck_assert_uint_eq(log_count("ctl: counters of p0 cleared"), 1);
	ck_assert_uint_eq(log_count("ctl: counters of every port and PMD cleared"), 1);
}
END_TEST

/* log.set: a type or a pattern that names one; else one line, nothing changed. */
START_TEST(log_set)
{
	char err[256], sock[160];
	cJSON *r;

	ck_assert_int_eq(hvsw_start(&D, NULL), 0);
	hvsw_add_port(&D, "p0", NULL);
	r = hvsw_ok(&D, "log.set", "{\"logtype\":\"hvswitch\",\"level\":\"debug\"}");
	ck_assert_str_eq(swh_str(r, "level"), "debug");
	ck_assert_str_eq(
		cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(r, "types"), 0)->valuestring,
		"hvswitch");
	cJSON_Delete(r);
	/* in force: the vhost-user messages of a guest's handshake are debug lines */
	ck_assert_uint_eq(log_count(" payload 0x"), 0);
	snprintf(sock, sizeof(sock), "%s/p0.sock", D.dir);
	ck_assert_int_eq(guest_open(&G[0], "p0", 0, sock, false), 0);
	ck_assert(hvsw_wait_up(&D, "p0", T));
	ck_assert_uint_gt(log_count(" payload 0x"), 3);
	r = hvsw_ok(&D, "log.set", "{\"logtype\":\"lib.e*\",\"level\":\"err\"}");
	ck_assert_int_ge(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(r, "types")), 2);
	cJSON_Delete(r);
	ck_assert_int_ne(hvsw_call(&D, NULL, err, sizeof(err), "log.set",
				   "{\"logtype\":\"nosuch\",\"level\":\"debug\"}"),
			 0);
	ck_assert_str_eq(err, "log.set: no log type 'nosuch' (see the daemon's --log-level)");
	ck_assert_int_ne(hvsw_call(&D, NULL, err, sizeof(err), "log.set",
				   "{\"logtype\":\"hvswitch\",\"level\":9}"),
			 0);
	ck_assert_str_eq(err, "log.set: 'level' must be emerg, alert, crit, err, warning, notice, "
			      "info or debug");
}
END_TEST

static Suite *
make_suite(void)
{
	Suite *s = suite_create("switch-cli");
	TCase *t = tcase_create("cli");

	tcase_add_checked_fixture(t, setup, teardown);
	tcase_set_timeout(t, 60);
	tcase_add_test(t, state_connected);
	tcase_add_test(t, port_set_logged);
	tcase_add_test(t, stats_clear);
	tcase_add_test(t, log_set);
	suite_add_tcase(s, t);
	return s;
}

int
main(int argc, char **argv)
{
	return swh_run_suite(make_suite, argc, argv);
}
