/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The hvswitch daemon end to end: the real daemon (a child process) switches
 * between virtio-user guests of this process, driven through its control
 * socket and read back through its control socket and DPDK telemetry.
 *
 * "Frame X did not reach guest G" is proved with a barrier, never a sleep:
 * the daemon has one PMD, which handles frames in the order it reads them
 * and delivers each burst before it reads the next; so once a frame sent
 * after X's burst was handled (seen somewhere) reaches G, X would have
 * reached G before it.
 */
#include <check.h>
#include <sys/socket.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hv_test_net.h"
#include "switch_fixture.h"

/* ---- 1. flooding ---- */

START_TEST(flooding)
{
	const struct rte_ether_addr dst[] = {
		swh_bcast,
		{{0x01, 0x00, 0x5e, 0x00, 0x00, 0x01}}, /* IPv4 multicast */
		{{0x02, 0x00, 0x00, 0x00, 0x00, 0x99}}, /* unicast, unknown */
	};
	uint32_t id[RTE_DIM(dst)];

	swf_start(NULL);
	for (unsigned int i = 0; i < 3; i++)
		swf_add(i, NULL);
	for (unsigned int k = 0; k < RTE_DIM(dst); k++) {
		id[k] = guest_send(&vm[0], &dst[k], NULL, 0);
		swf_must_arrive(1, id[k]);
		swf_must_arrive(2, id[k]);
	}
	swf_barrier(1, 0); /* vm0 would have had its own frames by now */
	for (unsigned int k = 0; k < RTE_DIM(dst); k++) {
		ck_assert_uint_eq(guest_count(&vm[0], id[k]), 0);
		ck_assert_uint_eq(guest_count(&vm[1], id[k]), 1);
		ck_assert_uint_eq(guest_count(&vm[2], id[k]), 1);
	}
	swf_no_bad_frames(3);
	swf_stat_is("vm0", "rx_packets", 3);
	swf_stat_is("vm1", "rx_packets", 1);
	swf_stat_is("vm0", "tx_packets", 1);
	swf_stat_is("vm1", "tx_packets", 3);
	swf_stat_is("vm2", "tx_packets", 4);
	swf_stat_is("vm0", "drops", 0);
	swf_stop_ok();
}
END_TEST

/* ---- 2. learning ---- */

START_TEST(learning)
{
	uint32_t u, ids[20];

	swf_start(NULL);
	for (unsigned int i = 0; i < 3; i++)
		swf_add(i, NULL);
	swf_must_arrive(0, guest_send(&vm[1], &swh_bcast, NULL, 0));
	ck_assert_msg(swf_fdb_wait(&vm[1].mac, "vm1", true, T), "vm1's MAC not learned on vm1");
	u = guest_send(&vm[0], &vm[1].mac, NULL, 0);
	swf_barrier(0, 1);
	swf_barrier(0, 2);
	ck_assert_uint_eq(guest_count(&vm[1], u), 1);
	ck_assert_uint_eq(guest_count(&vm[2], u), 0);
	ck_assert_int_eq(hvsw_fdb_has(&dut, &vm[1].mac, "vm1"), 1);
	ck_assert_int_eq(hvsw_fdb_has(&dut, &vm[0].mac, "vm0"), 1);
	ck_assert_int_eq(hvsw_fdb_has(&dut, &vm[2].mac, NULL), 0); /* vm2 never sent */

	/* both sides known: nothing floods to vm2 */
	ck_assert_msg(swf_fdb_wait(&vm[0].mac, "vm0", true, T), "vm0's MAC not learned");
	swf_stat_is("vm2", "tx_packets", 3); /* vm1's broadcast and two barriers */
	for (unsigned int k = 0; k < RTE_DIM(ids); k++) {
		unsigned int from = k % 2, to = 1 - from;

		ids[k] = guest_send(&vm[from], &vm[to].mac, NULL, 0);
		swf_must_arrive(to, ids[k]);
	}
	swf_barrier(0, 2);
	swf_stat_is("vm2", "tx_packets", 4); /* the barrier only */
	for (unsigned int k = 0; k < RTE_DIM(ids); k++) {
		ck_assert_uint_eq(guest_count(&vm[2], ids[k]), 0);
		ck_assert_uint_eq(guest_count(&vm[1 - k % 2], ids[k]), 1);
		ck_assert_uint_eq(guest_count(&vm[k % 2], ids[k]), 0);
	}
	swf_no_bad_frames(3);
	swf_stop_ok();
}
END_TEST

/* A frame of a burst and the guest it is for (-1: a broadcast, for every guest but vm0). */
struct burst_frame {
	struct rte_ether_addr dst;
	int at;
};

/*
 * Send @f from vm0 in one burst, which the switch reads in one burst, and
 * check that each frame reached the guest it is for, once, and no other
 * of vm0..vm<n_guests - 1>.
 */
static void
burst_from_vm0(const struct burst_frame *f, unsigned int n, unsigned int n_guests)
{
	struct rte_ether_addr dst[SWH_MAX_BURST];
	uint32_t ids[SWH_MAX_BURST], bar;

	for (unsigned int i = 0; i < n; i++)
		dst[i] = f[i].dst;
	guest_send_burst(&vm[0], dst, n, ids);
	bar = guest_send(&vm[0], &swh_bcast, NULL, 0);
	for (unsigned int g = 1; g < n_guests; g++)
		swf_must_arrive(g, bar);
	for (unsigned int i = 0; i < n; i++) {
		for (unsigned int g = 0; g < n_guests; g++) {
			unsigned int want = g != 0 && (f[i].at < 0 || f[i].at == (int)g);

			ck_assert_msg(guest_count(&vm[g], ids[i]) == want,
				      "frame %u of the burst reached vm%u %u times, expected %u", i,
				      g, guest_count(&vm[g], ids[i]), want);
		}
	}
}

/*
 * Bursts to learned destinations, in runs and interleaved: the switch looks
 * each run of one destination up once, and each frame still reaches its own.
 */
START_TEST(burst_to_several_destinations)
{
	const struct rte_ether_addr zero = {{0}};
	const struct burst_frame runs[] = {
		{swh_mac(1), 1}, {swh_mac(1), 1}, {swh_bcast, -1},
		{swh_mac(2), 2}, {swh_mac(1), 1}, {swh_mac(3), 3},
	};
	/* 00:00:00:00:00:00 untagged, the first known unicast: a key of all zero bits */
	const struct burst_frame zero_first[] = {
		{swh_bcast, -1}, {zero, 2}, {swh_mac(1), 1}, {zero, 2}, {swh_mac(3), 3},
	};

	swf_start(NULL);
	for (unsigned int i = 0; i < 4; i++)
		swf_add(i, NULL);
	for (unsigned int i = 1; i < 4; i++) {
		swf_must_arrive(0, guest_send(&vm[i], &swh_bcast, NULL, 0));
		ck_assert_msg(swf_fdb_wait(&vm[i].mac, vm[i].name, true, T),
			      "vm%u's MAC not learned", i);
	}
	burst_from_vm0(runs, RTE_DIM(runs), 4);
	/* vm2 sends from the all-zero address too */
	swf_must_arrive(0, guest_send(&vm[2], &swh_bcast, &zero, 0));
	ck_assert_msg(swf_fdb_wait(&zero, "vm2", true, T), "00:00:00:00:00:00 not learned on vm2");
	burst_from_vm0(zero_first, RTE_DIM(zero_first), 4);
	swf_no_bad_frames(4);
	swf_stop_ok();
}
END_TEST

/* ---- 3. ageing ---- */

START_TEST(ageing)
{
	uint64_t sent_at, gone_after;
	uint32_t u;

	swf_start((const char *const[]){"--fdb-age", "2", NULL});
	for (unsigned int i = 0; i < 3; i++)
		swf_add(i, NULL);
	sent_at = swh_now_ms();
	swf_must_arrive(0, guest_send(&vm[1], &swh_bcast, NULL, 0));
	ck_assert(swf_fdb_wait(&vm[1].mac, "vm1", true, T));
	ck_assert_msg(swf_fdb_wait(&vm[1].mac, NULL, false, 6000),
		      "vm1's MAC did not age out in 6 s");
	gone_after = swh_now_ms() - sent_at;
	ck_assert_msg(gone_after >= 1500, "aged out after %u ms (age 2 s)", (unsigned)gone_after);
	ck_assert(swf_fdb_stat("aged") >= 1);
	/* unknown again: floods */
	u = guest_send(&vm[0], &vm[1].mac, NULL, 0);
	swf_must_arrive(1, u);
	swf_must_arrive(2, u);
	swf_no_bad_frames(3);
	swf_stop_ok();
}
END_TEST

/* ---- 4. MAC move ---- */

START_TEST(mac_move)
{
	uint32_t u;

	swf_start(NULL);
	for (unsigned int i = 0; i < 3; i++)
		swf_add(i, NULL);
	swf_must_arrive(0, guest_send(&vm[1], &swh_bcast, NULL, 0));
	ck_assert(swf_fdb_wait(&vm[1].mac, "vm1", true, T));
	/* vm1's MAC now shows up behind vm2 (a migrated VM) */
	swf_must_arrive(0, guest_send(&vm[2], &swh_bcast, &vm[1].mac, 0));
	ck_assert_msg(swf_fdb_wait(&vm[1].mac, "vm2", true, T), "entry did not move to vm2");
	ck_assert_int_eq(hvsw_fdb_has(&dut, &vm[1].mac, NULL), 1);
	ck_assert(swf_fdb_stat("moved") >= 1);
	u = guest_send(&vm[0], &vm[1].mac, NULL, 0);
	swf_must_arrive(2, u);
	swf_barrier(0, 1);
	ck_assert_uint_eq(guest_count(&vm[1], u), 0);
	ck_assert_uint_eq(guest_count(&vm[2], u), 1);
	swf_no_bad_frames(3);
	swf_stop_ok();
}
END_TEST

/* ---- 5. MAC limit ---- */

START_TEST(mac_limit)
{
	uint32_t ids[10];
	double refused0;
	uint64_t end;
	cJSON *r;

	swf_start((const char *const[]){"--mac-limit", "4", NULL});
	swf_add(0, NULL);
	swf_add(1, NULL);
	for (unsigned int k = 0; k < 10; k++) {
		struct rte_ether_addr src = swh_mac((uint8_t)(0x10 + k));

		ids[k] = guest_send(&vm[0], &swh_bcast, &src, 0);
	}
	for (unsigned int k = 0; k < 10; k++)
		swf_must_arrive(1, ids[k]); /* refusing to learn does not drop */
	end = swh_now_ms() + T;
	while (swf_fdb_stat("limit_refused") < 6 && swh_now_ms() < end)
		usleep(5000);
	ck_assert_int_eq(hvsw_fdb_count(&dut, "vm0"), 4);
	ck_assert_msg(swf_fdb_stat("limit_refused") >= 6, "limit_refused %.0f",
		      swf_fdb_stat("limit_refused"));
	r = hvsw_ok(&dut, "port.show", "{\"name\":\"vm0\"}");
	ck_assert_int_eq((int)swh_num(r, "macs"), 4);
	cJSON_Delete(r);
	/* at its limit, the port's new sources are refused by the PMD: not queued */
	refused0 = hvsw_port_stat(&dut, "vm0", "learn_refused_limit");
	ck_assert_msg(refused0 >= 0 && refused0 <= 6, "learn_refused_limit %.0f", refused0);
	for (unsigned int k = 0; k < 3; k++) {
		struct rte_ether_addr src = swh_mac((uint8_t)(0x30 + k));

		swf_must_arrive(1, guest_send(&vm[0], &swh_bcast, &src, 0));
	}
	swf_stat_is("vm0", "learn_refused_limit", refused0 + 3);
	ck_assert_int_eq((int)swf_fdb_stat("limit_refused"), 9);
	ck_assert_int_eq((int)hvsw_port_stat(&dut, "vm0", "learn_refused_budget"), 0);
	/* the limit is per port: vm1 still learns */
	swf_must_arrive(0, guest_send(&vm[1], &swh_bcast, NULL, 0));
	ck_assert_msg(swf_fdb_wait(&vm[1].mac, "vm1", true, T), "vm1 did not learn its own MAC");
	ck_assert_int_eq(hvsw_fdb_count(&dut, "vm1"), 1);
	ck_assert_int_eq(hvsw_fdb_count(&dut, "vm0"), 4);
	swf_no_bad_frames(2);
	swf_stop_ok();
}
END_TEST

/* ---- 6. VLAN isolation ---- */

START_TEST(vlan_isolation)
{
	uint32_t b0, b2, u, t;
	cJSON *r, *e;

	swf_start(NULL);
	swf_add(0, ",\"vlan\":10");
	swf_add(1, ",\"vlan\":10");
	swf_add(2, NULL);
	cJSON_Delete(hvsw_ok(&dut, "port.set", "{\"name\":\"vm2\",\"vlan\":20}"));
	swf_add(3, ",\"vlan\":20");
	r = hvsw_ok(&dut, "port.show", "{\"name\":\"vm2\"}");
	ck_assert_int_eq((int)swh_num(r, "vlan"), 20);
	cJSON_Delete(r);

	b0 = guest_send(&vm[0], &swh_bcast, NULL, 0);
	swf_must_arrive(1, b0);
	b2 = guest_send(&vm[2], &swh_bcast, NULL, 0);
	swf_must_arrive(3, b2);
	/* barriers for every guest, sent after b0 and b2 were handled */
	swf_barrier(3, 2);
	swf_barrier(2, 3);
	swf_barrier(1, 0);
	swf_barrier(0, 1);
	for (unsigned int g = 0; g < 4; g++) {
		ck_assert_uint_eq(guest_count(&vm[g], b0), g == 1);
		ck_assert_uint_eq(guest_count(&vm[g], b2), g == 3);
	}
	/* vm2's MAC (learned in vlan 20) is unknown in vlan 10: flooded there only */
	u = guest_send(&vm[0], &vm[2].mac, NULL, 0);
	swf_must_arrive(1, u);
	swf_barrier(3, 2);
	ck_assert_uint_eq(guest_count(&vm[2], u), 0);
	ck_assert_uint_eq(guest_count(&vm[3], u), 0);
	/* entries are per domain */
	r = hvsw_ok(&dut, "fdb.show", "{\"port\":\"vm0\"}");
	ck_assert_int_eq(cJSON_GetArraySize(r), 1);
	cJSON_ArrayForEach(e, r) ck_assert_int_eq((int)swh_num(e, "vlan"), 10);
	cJSON_Delete(r);

	/* a guest on an access port may not pick its VLAN */
	t = guest_send(&vm[0], &swh_bcast, NULL, 20);
	swf_stat_is("vm0", "vlan", 1);
	swf_barrier(0, 1);
	swf_barrier(3, 2);
	swf_barrier(2, 3);
	for (unsigned int g = 0; g < 4; g++)
		ck_assert_uint_eq(guest_count(&vm[g], t), 0);
	swf_no_bad_frames(4);
	swf_stop_ok();
}
END_TEST

/*
 * A trunk carries every VLAN tagged: tags pushed towards it, popped away from
 * it, for flooded frames and for known unicast alike.
 */
START_TEST(vlan_trunk)
{
	uint32_t b, t, u, k, a, bar;

	swf_start(NULL);
	swf_add(0, ",\"vlan\":10");
	swf_add(1, ",\"trunk\":true");
	swf_add(2, ",\"vlan\":20");
	swf_add(3, NULL);
	/* access port -> trunk: tag 10 pushed */
	b = guest_send(&vm[0], &swh_bcast, NULL, 0);
	swf_must_arrive(1, b);
	ck_assert_uint_eq(guest_tag(&vm[1], b), 10);
	/* trunk, tag 20 -> only the VLAN 20 access port, untagged */
	t = guest_send(&vm[1], &swh_bcast, NULL, 20);
	swf_must_arrive(2, t);
	ck_assert_uint_eq(guest_tag(&vm[2], t), 0);
	/* trunk, untagged -> the untagged domain */
	u = guest_send(&vm[1], &swh_bcast, NULL, 0);
	swf_must_arrive(3, u);
	ck_assert_uint_eq(guest_tag(&vm[3], u), 0);
	/* vm0 was learned in VLAN 10: a unicast tagged 10 reaches it alone, untagged */
	ck_assert_msg(swf_fdb_wait(&vm[0].mac, "vm0", true, T), "vm0's MAC not learned");
	k = guest_send(&vm[1], &vm[0].mac, NULL, 10);
	swf_must_arrive(0, k);
	ck_assert_uint_eq(guest_tag(&vm[0], k), 0);
	/* k taught VLAN 10 vm1's MAC: vm0's unicast to it reaches it alone, tagged 10 */
	ck_assert_msg(swf_fdb_wait_in(&vm[1].mac, "vm1", 10, T),
		      "vm1's MAC not learned in VLAN 10");
	a = guest_send(&vm[0], &vm[1].mac, NULL, 0);
	swf_must_arrive(1, a);
	ck_assert_uint_eq(guest_tag(&vm[1], a), 10);
	/* barriers: a later broadcast of each guest's own domain, from the trunk */
	bar = guest_send(&vm[1], &swh_bcast, NULL, 10);
	swf_must_arrive(0, bar);
	bar = guest_send(&vm[1], &swh_bcast, NULL, 20);
	swf_must_arrive(2, bar);
	bar = guest_send(&vm[1], &swh_bcast, NULL, 0);
	swf_must_arrive(3, bar);
	ck_assert_uint_eq(guest_count(&vm[2], b) + guest_count(&vm[3], b), 0);
	ck_assert_uint_eq(guest_count(&vm[0], t) + guest_count(&vm[3], t), 0);
	ck_assert_uint_eq(guest_count(&vm[0], u) + guest_count(&vm[2], u), 0);
	ck_assert_uint_eq(guest_count(&vm[2], k) + guest_count(&vm[3], k), 0);
	ck_assert_uint_eq(guest_count(&vm[2], a) + guest_count(&vm[3], a), 0);
	ck_assert_uint_eq(guest_count(&vm[1], a), 1);
	ck_assert_uint_eq(guest_count(&vm[0], b) + guest_count(&vm[1], t) + guest_count(&vm[1], k),
			  0);
	swf_no_bad_frames(4);
	swf_stop_ok();
}
END_TEST

/*
 * VLAN hopping: a guest on an access port, the untagged domain's included,
 * may not send a tag of its own; the trunk peer sees only what the switch
 * tagged. Priority tags (VID 0) and 802.1ad tags are refused alike.
 */
START_TEST(vlan_hopping)
{
	uint32_t hop[4], ok0, ok2;

	swf_start(NULL);
	swf_add(0, NULL);
	swf_add(1, ",\"trunk\":true");
	swf_add(2, ",\"vlan\":10");
	swf_add(3, NULL);
	hop[0] = guest_send(&vm[0], &swh_bcast, NULL, 10);
	hop[1] = guest_send(&vm[0], &swh_bcast, NULL, 0x2000); /* PCP 1, VID 0 */
	hop[2] = guest_send_tpid(&vm[0], &swh_bcast, 0x88a8, 10);
	hop[3] = guest_send(&vm[2], &swh_bcast, NULL, 20);
	/* later frames of each domain reach the trunk as the switch tags them */
	ok0 = guest_send(&vm[0], &swh_bcast, NULL, 0);
	ok2 = guest_send(&vm[2], &swh_bcast, NULL, 0);
	swf_must_arrive(1, ok0);
	swf_must_arrive(1, ok2);
	ck_assert_uint_eq(guest_tag(&vm[1], ok0), 0);
	ck_assert_uint_eq(guest_tag(&vm[1], ok2), 10);
	swf_must_arrive(3, ok0);
	swf_must_arrive(2, guest_send(&vm[1], &swh_bcast, NULL, 10)); /* a barrier for vm2 */
	for (unsigned int i = 0; i < RTE_DIM(hop); i++)
		for (unsigned int g = 0; g < 4; g++)
			ck_assert_msg(guest_count(&vm[g], hop[i]) == 0, "frame %u reached vm%u", i,
				      g);
	ck_assert_uint_eq(vm[1].n_rx, 2);
	swf_stat_is("vm0", "vlan", 3);
	swf_stat_is("vm2", "vlan", 1);
	swf_no_bad_frames(4);
	swf_stop_ok();
}
END_TEST

static Suite *
make_suite(void)
{
	Suite *s = suite_create("switch");
	TCase *t = tcase_create("switch");

	tcase_add_checked_fixture(t, swf_setup, swf_teardown);
	tcase_set_timeout(t, 120);
	tcase_add_test(t, flooding);
	tcase_add_test(t, learning);
	tcase_add_test(t, burst_to_several_destinations);
	tcase_add_test(t, ageing);
	tcase_add_test(t, mac_move);
	tcase_add_test(t, mac_limit);
	tcase_add_test(t, vlan_isolation);
	tcase_add_test(t, vlan_trunk);
	tcase_add_test(t, vlan_hopping);
	suite_add_tcase(s, t);
	return s;
}

int
main(int argc, char **argv)
{
	return swh_run_suite(make_suite, argc, argv);
}
