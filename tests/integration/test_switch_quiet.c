/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Quiet queues (app/hvswitch/pmd.c): a PMD polls a queue that has been empty
 * for a while on every few loop iterations only. Eight guests on eight
 * ports, all idle until /hvswitch/pmd counts every queue quiet; then each
 * guest in turn sends from its quiet queue, and every frame must arrive once,
 * byte for byte, at the guests it is for; the queue that sent wakes (is
 * polled on every iteration again) and, idle again, turns quiet again.
 */
#include <check.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "switch_harness.h"

#define T SWH_TIMEOUT_MS
#define N_GUESTS SWH_MAX_GUESTS

static struct hvsw D;
static struct guest G[N_GUESTS];

static void
setup(void)
{
	memset(G, 0, sizeof(G));
	swh_reset();
	hvsw_init(&D);
}

static void
teardown(void)
{
	for (unsigned int i = 0; i < N_GUESTS; i++)
		guest_close(&G[i]);
	hvsw_cleanup(&D);
}

/* /hvswitch/pmd's quiet_rxqs of PMD 0 (-1: absent). */
static double
quiet_rxqs(int fd)
{
	cJSON *v = swh_tel(fd, "/hvswitch/pmd");
	double n = swh_tel_num(v, "0", "quiet_rxqs");

	cJSON_Delete(v);
	return n;
}

/* Poll the guests and telemetry until quiet_rxqs is @want; false after @ms. */
static bool
quiet_wait(int fd, double want, unsigned int ms)
{
	uint64_t end = swh_now_ms() + ms;

	do {
		swh_poll();
		if (quiet_rxqs(fd) == want)
			return true;
		usleep(1000);
	} while (swh_now_ms() < end);
	return false;
}

/* Every guest's MAC in the FDB on its port; false after @ms. */
static bool
all_learned(unsigned int ms)
{
	uint64_t end = swh_now_ms() + ms;
	unsigned int n;

	do {
		n = 0;
		for (unsigned int i = 0; i < N_GUESTS; i++) {
			char name[16];

			snprintf(name, sizeof(name), "vm%u", i);
			n += hvsw_fdb_has(&D, &G[i].mac, name) == 1;
		}
		if (n == N_GUESTS)
			return true;
		usleep(1000);
	} while (swh_now_ms() < end);
	return false;
}

START_TEST(quiet_queues_forward)
{
	uint32_t bc[N_GUESTS], uc[N_GUESTS];
	int fd;

	ck_assert_int_eq(hvsw_start(&D, NULL), 0);
	for (unsigned int i = 0; i < N_GUESTS; i++) {
		char name[16], sock[160];

		snprintf(name, sizeof(name), "vm%u", i);
		hvsw_add_port(&D, name, NULL);
		snprintf(sock, sizeof(sock), "%s/%s.sock", D.dir, name);
		ck_assert_int_eq(guest_open(&G[i], name, i, sock, false), 0);
		ck_assert_msg(hvsw_wait_up(&D, name, T), "port %s not up", name);
	}
	fd = swh_tel_open(D.prefix, D.pid);
	ck_assert_int_ge(fd, 0);
	ck_assert_msg(quiet_wait(fd, N_GUESTS, T), "not every idle queue turned quiet: %.0f",
		      quiet_rxqs(fd));

	/* each guest in turn, from its quiet queue: a broadcast (learns its MAC) */
	for (unsigned int i = 0; i < N_GUESTS; i++) {
		bc[i] = guest_send(&G[i], &swh_bcast, NULL, 0);
		for (unsigned int k = 0; k < N_GUESTS; k++)
			if (k != i)
				ck_assert_msg(guest_wait(&G[k], bc[i], T),
					      "broadcast of vm%u missing at vm%u", i, k);
		/* idle again: its queue turns quiet again */
		ck_assert_msg(quiet_wait(fd, N_GUESTS, T), "vm%u's queue did not turn quiet again",
			      i);
	}
	/* then, once the control thread applied what the broadcasts taught, unicast
	 * from every quiet queue to the next guest */
	ck_assert_msg(all_learned(T), "the guests' MACs were not learned");
	for (unsigned int i = 0; i < N_GUESTS; i++) {
		unsigned int to = (i + 1) % N_GUESTS;

		uc[i] = guest_send(&G[i], &G[to].mac, NULL, 0);
		ck_assert_msg(guest_wait(&G[to], uc[i], T), "vm%u -> vm%u missing", i, to);
	}
	ck_assert_msg(quiet_wait(fd, N_GUESTS, T), "queues did not turn quiet after the unicast");
	close(fd);
	for (unsigned int i = 0; i < N_GUESTS; i++) {
		for (unsigned int k = 0; k < N_GUESTS; k++) {
			unsigned int want_bc = k != i, want_uc = k == (i + 1) % N_GUESTS;

			ck_assert_msg(guest_count(&G[k], bc[i]) == want_bc &&
					      guest_count(&G[k], uc[i]) == want_uc,
				      "vm%u got vm%u's broadcast %u times, its unicast %u times", k,
				      i, guest_count(&G[k], bc[i]), guest_count(&G[k], uc[i]));
		}
		ck_assert_uint_eq(guest_bad(&G[i]), 0);
	}
	ck_assert_int_eq(hvsw_stop(&D), 0);
}
END_TEST

static Suite *
make_suite(void)
{
	Suite *s = suite_create("switch-quiet");
	TCase *tc = tcase_create("quiet");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, quiet_queues_forward);
	suite_add_tcase(s, tc);
	return s;
}

int
main(int argc, char **argv)
{
	return swh_run_suite(make_suite, argc, argv);
}
