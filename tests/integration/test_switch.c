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
#include "switch_harness.h"

#define T SWH_TIMEOUT_MS

static struct hvsw D;
static struct guest G[5];

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
	for (unsigned int i = 0; i < RTE_DIM(G); i++)
		guest_close(&G[i]);
	hvsw_cleanup(&D);
}

/* Start the daemon with these options (NULL-ended list). */
static void
start(const char *const *extra)
{
	ck_assert_msg(hvsw_start(&D, extra) == 0, "hvswitch did not start");
}

/* A clean stop: exit status 0 (under ASan this includes its leak check). */
static void
stop_ok(void)
{
	int rc = hvsw_stop(&D);

	ck_assert_msg(rc == 0, "hvswitch exited with %d", rc);
}

static void
sock_of(const char *name, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s.sock", D.dir, name);
}

/* Open guest i on the port vm<i> (which exists) and wait until the port is up. */
static void
attach(unsigned int i)
{
	char name[16], sock[160];

	snprintf(name, sizeof(name), "vm%u", i);
	sock_of(name, sock, sizeof(sock));
	ck_assert_int_eq(guest_open(&G[i], name, i, sock, false), 0);
	ck_assert_msg(hvsw_wait_up(&D, name, T), "port %s not up", name);
}

/* port.add vm<i> (with extra JSON members) and attach its guest. */
static void
add(unsigned int i, const char *extra)
{
	char name[16];

	snprintf(name, sizeof(name), "vm%u", i);
	hvsw_add_port(&D, name, extra);
	attach(i);
}

static void
must_arrive(unsigned int g, uint32_t id)
{
	ck_assert_msg(guest_wait(&G[g], id, T), "frame %u did not reach vm%u", id, g);
}

/* A broadcast from @from, waited for at @at: a barrier for @at (see the top). */
static uint32_t
barrier(unsigned int from, unsigned int at)
{
	uint32_t id = guest_send(&G[from], &swh_bcast, NULL, 0);

	must_arrive(at, id);
	return id;
}

/* Wait for a port counter to reach @want, then require exactly @want. */
static void
stat_is(const char *port, const char *counter, double want)
{
	uint64_t end = swh_now_ms() + T;
	double v;

	while ((v = hvsw_port_stat(&D, port, counter)) < want && swh_now_ms() < end)
		usleep(2000);
	ck_assert_msg(v == want, "%s %s = %.0f, expected %.0f", port, counter, v, want);
}

static double
fdb_stat(const char *name)
{
	cJSON *r = hvsw_ok(&D, "stats", NULL);
	char path[64];
	double v;

	snprintf(path, sizeof(path), "fdb.%s", name);
	v = swh_num(r, path);
	cJSON_Delete(r);
	return v;
}

/* Wait until @mac is in the FDB on @port (NULL: anywhere) or, if !present, gone. */
static bool
fdb_wait(const struct rte_ether_addr *mac, const char *port, bool present, unsigned int ms)
{
	uint64_t end = swh_now_ms() + ms;

	do {
		if ((hvsw_fdb_has(&D, mac, port) > 0) == present)
			return true;
		usleep(5000);
	} while (swh_now_ms() < end);
	return false;
}

/* Whether fdb.show lists @mac on @port in the domain @vlan. */
static bool
fdb_has_in(const struct rte_ether_addr *mac, const char *port, unsigned int vlan)
{
	char m[RTE_ETHER_ADDR_FMT_SIZE];
	cJSON *r = hvsw_ok(&D, "fdb.show", "{\"port\":\"%s\"}", port), *e;
	bool has = false;

	rte_ether_format_addr(m, sizeof(m), mac);
	cJSON_ArrayForEach(e, r)
	{
		const char *em = swh_str(e, "mac");

		has |= em != NULL && strcasecmp(em, m) == 0 && swh_num(e, "vlan") == vlan;
	}
	cJSON_Delete(r);
	return has;
}

/* Wait until @mac is in the FDB on @port in the domain @vlan. */
static bool
fdb_wait_in(const struct rte_ether_addr *mac, const char *port, unsigned int vlan, unsigned int ms)
{
	uint64_t end = swh_now_ms() + ms;

	do {
		if (fdb_has_in(mac, port, vlan))
			return true;
		usleep(5000);
	} while (swh_now_ms() < end);
	return false;
}

static void
no_bad_frames(unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		if (G[i].open)
			ck_assert_msg(guest_bad(&G[i]) == 0, "vm%u received %u frames not as sent",
				      i, guest_bad(&G[i]));
}

/* ---- 1. flooding ---- */

START_TEST(flooding)
{
	const struct rte_ether_addr dst[] = {
		swh_bcast,
		{{0x01, 0x00, 0x5e, 0x00, 0x00, 0x01}}, /* IPv4 multicast */
		{{0x02, 0x00, 0x00, 0x00, 0x00, 0x99}}, /* unicast, unknown */
	};
	uint32_t id[RTE_DIM(dst)];

	start(NULL);
	for (unsigned int i = 0; i < 3; i++)
		add(i, NULL);
	for (unsigned int k = 0; k < RTE_DIM(dst); k++) {
		id[k] = guest_send(&G[0], &dst[k], NULL, 0);
		must_arrive(1, id[k]);
		must_arrive(2, id[k]);
	}
	barrier(1, 0); /* vm0 would have had its own frames by now */
	for (unsigned int k = 0; k < RTE_DIM(dst); k++) {
		ck_assert_uint_eq(guest_count(&G[0], id[k]), 0);
		ck_assert_uint_eq(guest_count(&G[1], id[k]), 1);
		ck_assert_uint_eq(guest_count(&G[2], id[k]), 1);
	}
	no_bad_frames(3);
	stat_is("vm0", "rx_packets", 3);
	stat_is("vm1", "rx_packets", 1);
	stat_is("vm0", "tx_packets", 1);
	stat_is("vm1", "tx_packets", 3);
	stat_is("vm2", "tx_packets", 4);
	stat_is("vm0", "drops", 0);
	stop_ok();
}
END_TEST

/* ---- 2. learning ---- */

START_TEST(learning)
{
	uint32_t u, ids[20];

	start(NULL);
	for (unsigned int i = 0; i < 3; i++)
		add(i, NULL);
	must_arrive(0, guest_send(&G[1], &swh_bcast, NULL, 0));
	ck_assert_msg(fdb_wait(&G[1].mac, "vm1", true, T), "vm1's MAC not learned on vm1");
	u = guest_send(&G[0], &G[1].mac, NULL, 0);
	barrier(0, 1);
	barrier(0, 2);
	ck_assert_uint_eq(guest_count(&G[1], u), 1);
	ck_assert_uint_eq(guest_count(&G[2], u), 0);
	ck_assert_int_eq(hvsw_fdb_has(&D, &G[1].mac, "vm1"), 1);
	ck_assert_int_eq(hvsw_fdb_has(&D, &G[0].mac, "vm0"), 1);
	ck_assert_int_eq(hvsw_fdb_has(&D, &G[2].mac, NULL), 0); /* vm2 never sent */

	/* both sides known: nothing floods to vm2 */
	ck_assert_msg(fdb_wait(&G[0].mac, "vm0", true, T), "vm0's MAC not learned");
	stat_is("vm2", "tx_packets", 3); /* vm1's broadcast and two barriers */
	for (unsigned int k = 0; k < RTE_DIM(ids); k++) {
		unsigned int from = k % 2, to = 1 - from;

		ids[k] = guest_send(&G[from], &G[to].mac, NULL, 0);
		must_arrive(to, ids[k]);
	}
	barrier(0, 2);
	stat_is("vm2", "tx_packets", 4); /* the barrier only */
	for (unsigned int k = 0; k < RTE_DIM(ids); k++) {
		ck_assert_uint_eq(guest_count(&G[2], ids[k]), 0);
		ck_assert_uint_eq(guest_count(&G[1 - k % 2], ids[k]), 1);
		ck_assert_uint_eq(guest_count(&G[k % 2], ids[k]), 0);
	}
	no_bad_frames(3);
	stop_ok();
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
	guest_send_burst(&G[0], dst, n, ids);
	bar = guest_send(&G[0], &swh_bcast, NULL, 0);
	for (unsigned int g = 1; g < n_guests; g++)
		must_arrive(g, bar);
	for (unsigned int i = 0; i < n; i++) {
		for (unsigned int g = 0; g < n_guests; g++) {
			unsigned int want = g != 0 && (f[i].at < 0 || f[i].at == (int)g);

			ck_assert_msg(guest_count(&G[g], ids[i]) == want,
				      "frame %u of the burst reached vm%u %u times, expected %u", i,
				      g, guest_count(&G[g], ids[i]), want);
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

	start(NULL);
	for (unsigned int i = 0; i < 4; i++)
		add(i, NULL);
	for (unsigned int i = 1; i < 4; i++) {
		must_arrive(0, guest_send(&G[i], &swh_bcast, NULL, 0));
		ck_assert_msg(fdb_wait(&G[i].mac, G[i].name, true, T), "vm%u's MAC not learned", i);
	}
	burst_from_vm0(runs, RTE_DIM(runs), 4);
	/* vm2 sends from the all-zero address too */
	must_arrive(0, guest_send(&G[2], &swh_bcast, &zero, 0));
	ck_assert_msg(fdb_wait(&zero, "vm2", true, T), "00:00:00:00:00:00 not learned on vm2");
	burst_from_vm0(zero_first, RTE_DIM(zero_first), 4);
	no_bad_frames(4);
	stop_ok();
}
END_TEST

/* ---- 3. ageing ---- */

START_TEST(ageing)
{
	uint64_t sent_at, gone_after;
	uint32_t u;

	start((const char *const[]){"--fdb-age", "2", NULL});
	for (unsigned int i = 0; i < 3; i++)
		add(i, NULL);
	sent_at = swh_now_ms();
	must_arrive(0, guest_send(&G[1], &swh_bcast, NULL, 0));
	ck_assert(fdb_wait(&G[1].mac, "vm1", true, T));
	ck_assert_msg(fdb_wait(&G[1].mac, NULL, false, 6000), "vm1's MAC did not age out in 6 s");
	gone_after = swh_now_ms() - sent_at;
	ck_assert_msg(gone_after >= 1500, "aged out after %u ms (age 2 s)", (unsigned)gone_after);
	ck_assert(fdb_stat("aged") >= 1);
	/* unknown again: floods */
	u = guest_send(&G[0], &G[1].mac, NULL, 0);
	must_arrive(1, u);
	must_arrive(2, u);
	no_bad_frames(3);
	stop_ok();
}
END_TEST

/* ---- 4. MAC move ---- */

START_TEST(mac_move)
{
	uint32_t u;

	start(NULL);
	for (unsigned int i = 0; i < 3; i++)
		add(i, NULL);
	must_arrive(0, guest_send(&G[1], &swh_bcast, NULL, 0));
	ck_assert(fdb_wait(&G[1].mac, "vm1", true, T));
	/* vm1's MAC now shows up behind vm2 (a migrated VM) */
	must_arrive(0, guest_send(&G[2], &swh_bcast, &G[1].mac, 0));
	ck_assert_msg(fdb_wait(&G[1].mac, "vm2", true, T), "entry did not move to vm2");
	ck_assert_int_eq(hvsw_fdb_has(&D, &G[1].mac, NULL), 1);
	ck_assert(fdb_stat("moved") >= 1);
	u = guest_send(&G[0], &G[1].mac, NULL, 0);
	must_arrive(2, u);
	barrier(0, 1);
	ck_assert_uint_eq(guest_count(&G[1], u), 0);
	ck_assert_uint_eq(guest_count(&G[2], u), 1);
	no_bad_frames(3);
	stop_ok();
}
END_TEST

/* ---- 5. MAC limit ---- */

START_TEST(mac_limit)
{
	uint32_t ids[10];
	double refused0;
	uint64_t end;
	cJSON *r;

	start((const char *const[]){"--mac-limit", "4", NULL});
	add(0, NULL);
	add(1, NULL);
	for (unsigned int k = 0; k < 10; k++) {
		struct rte_ether_addr src = swh_mac((uint8_t)(0x10 + k));

		ids[k] = guest_send(&G[0], &swh_bcast, &src, 0);
	}
	for (unsigned int k = 0; k < 10; k++)
		must_arrive(1, ids[k]); /* refusing to learn does not drop */
	end = swh_now_ms() + T;
	while (fdb_stat("limit_refused") < 6 && swh_now_ms() < end)
		usleep(5000);
	ck_assert_int_eq(hvsw_fdb_count(&D, "vm0"), 4);
	ck_assert_msg(fdb_stat("limit_refused") >= 6, "limit_refused %.0f",
		      fdb_stat("limit_refused"));
	r = hvsw_ok(&D, "port.show", "{\"name\":\"vm0\"}");
	ck_assert_int_eq((int)swh_num(r, "macs"), 4);
	cJSON_Delete(r);
	/* at its limit, the port's new sources are refused by the PMD: not queued */
	refused0 = hvsw_port_stat(&D, "vm0", "learn_refused_limit");
	ck_assert_msg(refused0 >= 0 && refused0 <= 6, "learn_refused_limit %.0f", refused0);
	for (unsigned int k = 0; k < 3; k++) {
		struct rte_ether_addr src = swh_mac((uint8_t)(0x30 + k));

		must_arrive(1, guest_send(&G[0], &swh_bcast, &src, 0));
	}
	stat_is("vm0", "learn_refused_limit", refused0 + 3);
	ck_assert_int_eq((int)fdb_stat("limit_refused"), 9);
	ck_assert_int_eq((int)hvsw_port_stat(&D, "vm0", "learn_refused_budget"), 0);
	/* the limit is per port: vm1 still learns */
	must_arrive(0, guest_send(&G[1], &swh_bcast, NULL, 0));
	ck_assert_msg(fdb_wait(&G[1].mac, "vm1", true, T), "vm1 did not learn its own MAC");
	ck_assert_int_eq(hvsw_fdb_count(&D, "vm1"), 1);
	ck_assert_int_eq(hvsw_fdb_count(&D, "vm0"), 4);
	no_bad_frames(2);
	stop_ok();
}
END_TEST

/* ---- 6. VLAN isolation ---- */

START_TEST(vlan_isolation)
{
	uint32_t b0, b2, u, t;
	cJSON *r, *e;

	start(NULL);
	add(0, ",\"vlan\":10");
	add(1, ",\"vlan\":10");
	add(2, NULL);
	cJSON_Delete(hvsw_ok(&D, "port.set", "{\"name\":\"vm2\",\"vlan\":20}"));
	add(3, ",\"vlan\":20");
	r = hvsw_ok(&D, "port.show", "{\"name\":\"vm2\"}");
	ck_assert_int_eq((int)swh_num(r, "vlan"), 20);
	cJSON_Delete(r);

	b0 = guest_send(&G[0], &swh_bcast, NULL, 0);
	must_arrive(1, b0);
	b2 = guest_send(&G[2], &swh_bcast, NULL, 0);
	must_arrive(3, b2);
	/* barriers for every guest, sent after b0 and b2 were handled */
	barrier(3, 2);
	barrier(2, 3);
	barrier(1, 0);
	barrier(0, 1);
	for (unsigned int g = 0; g < 4; g++) {
		ck_assert_uint_eq(guest_count(&G[g], b0), g == 1);
		ck_assert_uint_eq(guest_count(&G[g], b2), g == 3);
	}
	/* vm2's MAC (learned in vlan 20) is unknown in vlan 10: flooded there only */
	u = guest_send(&G[0], &G[2].mac, NULL, 0);
	must_arrive(1, u);
	barrier(3, 2);
	ck_assert_uint_eq(guest_count(&G[2], u), 0);
	ck_assert_uint_eq(guest_count(&G[3], u), 0);
	/* entries are per domain */
	r = hvsw_ok(&D, "fdb.show", "{\"port\":\"vm0\"}");
	ck_assert_int_eq(cJSON_GetArraySize(r), 1);
	cJSON_ArrayForEach(e, r) ck_assert_int_eq((int)swh_num(e, "vlan"), 10);
	cJSON_Delete(r);

	/* a guest on an access port may not pick its VLAN */
	t = guest_send(&G[0], &swh_bcast, NULL, 20);
	stat_is("vm0", "vlan", 1);
	barrier(0, 1);
	barrier(3, 2);
	barrier(2, 3);
	for (unsigned int g = 0; g < 4; g++)
		ck_assert_uint_eq(guest_count(&G[g], t), 0);
	no_bad_frames(4);
	stop_ok();
}
END_TEST

/*
 * A trunk carries every VLAN tagged: tags pushed towards it, popped away from
 * it, for flooded frames and for known unicast alike.
 */
START_TEST(vlan_trunk)
{
	uint32_t b, t, u, k, a, bar;

	start(NULL);
	add(0, ",\"vlan\":10");
	add(1, ",\"trunk\":true");
	add(2, ",\"vlan\":20");
	add(3, NULL);
	/* access port -> trunk: tag 10 pushed */
	b = guest_send(&G[0], &swh_bcast, NULL, 0);
	must_arrive(1, b);
	ck_assert_uint_eq(guest_tag(&G[1], b), 10);
	/* trunk, tag 20 -> only the VLAN 20 access port, untagged */
	t = guest_send(&G[1], &swh_bcast, NULL, 20);
	must_arrive(2, t);
	ck_assert_uint_eq(guest_tag(&G[2], t), 0);
	/* trunk, untagged -> the untagged domain */
	u = guest_send(&G[1], &swh_bcast, NULL, 0);
	must_arrive(3, u);
	ck_assert_uint_eq(guest_tag(&G[3], u), 0);
	/* vm0 was learned in VLAN 10: a unicast tagged 10 reaches it alone, untagged */
	ck_assert_msg(fdb_wait(&G[0].mac, "vm0", true, T), "vm0's MAC not learned");
	k = guest_send(&G[1], &G[0].mac, NULL, 10);
	must_arrive(0, k);
	ck_assert_uint_eq(guest_tag(&G[0], k), 0);
	/* k taught VLAN 10 vm1's MAC: vm0's unicast to it reaches it alone, tagged 10 */
	ck_assert_msg(fdb_wait_in(&G[1].mac, "vm1", 10, T), "vm1's MAC not learned in VLAN 10");
	a = guest_send(&G[0], &G[1].mac, NULL, 0);
	must_arrive(1, a);
	ck_assert_uint_eq(guest_tag(&G[1], a), 10);
	/* barriers: a later broadcast of each guest's own domain, from the trunk */
	bar = guest_send(&G[1], &swh_bcast, NULL, 10);
	must_arrive(0, bar);
	bar = guest_send(&G[1], &swh_bcast, NULL, 20);
	must_arrive(2, bar);
	bar = guest_send(&G[1], &swh_bcast, NULL, 0);
	must_arrive(3, bar);
	ck_assert_uint_eq(guest_count(&G[2], b) + guest_count(&G[3], b), 0);
	ck_assert_uint_eq(guest_count(&G[0], t) + guest_count(&G[3], t), 0);
	ck_assert_uint_eq(guest_count(&G[0], u) + guest_count(&G[2], u), 0);
	ck_assert_uint_eq(guest_count(&G[2], k) + guest_count(&G[3], k), 0);
	ck_assert_uint_eq(guest_count(&G[2], a) + guest_count(&G[3], a), 0);
	ck_assert_uint_eq(guest_count(&G[1], a), 1);
	ck_assert_uint_eq(guest_count(&G[0], b) + guest_count(&G[1], t) + guest_count(&G[1], k), 0);
	no_bad_frames(4);
	stop_ok();
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

	start(NULL);
	add(0, NULL);
	add(1, ",\"trunk\":true");
	add(2, ",\"vlan\":10");
	add(3, NULL);
	hop[0] = guest_send(&G[0], &swh_bcast, NULL, 10);
	hop[1] = guest_send(&G[0], &swh_bcast, NULL, 0x2000); /* PCP 1, VID 0 */
	hop[2] = guest_send_tpid(&G[0], &swh_bcast, 0x88a8, 10);
	hop[3] = guest_send(&G[2], &swh_bcast, NULL, 20);
	/* later frames of each domain reach the trunk as the switch tags them */
	ok0 = guest_send(&G[0], &swh_bcast, NULL, 0);
	ok2 = guest_send(&G[2], &swh_bcast, NULL, 0);
	must_arrive(1, ok0);
	must_arrive(1, ok2);
	ck_assert_uint_eq(guest_tag(&G[1], ok0), 0);
	ck_assert_uint_eq(guest_tag(&G[1], ok2), 10);
	must_arrive(3, ok0);
	must_arrive(2, guest_send(&G[1], &swh_bcast, NULL, 10)); /* a barrier for vm2 */
	for (unsigned int i = 0; i < RTE_DIM(hop); i++)
		for (unsigned int g = 0; g < 4; g++)
			ck_assert_msg(guest_count(&G[g], hop[i]) == 0, "frame %u reached vm%u", i,
				      g);
	ck_assert_uint_eq(G[1].n_rx, 2);
	stat_is("vm0", "vlan", 3);
	stat_is("vm2", "vlan", 1);
	no_bad_frames(4);
	stop_ok();
}
END_TEST

/* ---- ethdev uplink: a kernel tap interface behind net_tap ---- */

/* Wait for a frame of ours with id @id on the raw socket (the guests are polled meanwhile). */
static bool
raw_wait(int fd, uint32_t id)
{
	uint64_t end = swh_now_ms() + T;
	uint8_t f[2048];

	while (swh_now_ms() < end) {
		ssize_t n = recv(fd, f, sizeof(f), MSG_DONTWAIT);

		/* ethertype 0x88b5, magic "HVST", then the id (see switch_harness.c) */
		if (n >= 24 && f[12] == 0x88 && f[13] == 0xb5 && memcmp(f + 14, "HVST", 4) == 0 &&
		    ((uint32_t)f[18] << 24 | (uint32_t)f[19] << 16 | (uint32_t)f[20] << 8 |
		     f[21]) == id)
			return true;
		swh_poll();
	}
	return false;
}

static int
iface_set_up(const char *ifname, bool up)
{
	char cmd[96];

	snprintf(cmd, sizeof(cmd), "ip link set %s %s", ifname, up ? "up" : "down");
	return system(cmd);
}

START_TEST(ethdev_uplink)
{
	char ifname[16], devargs[64], args[160];
	uint8_t f[64] = {0};
	uint32_t id;
	int fd;

	snprintf(ifname, sizeof(ifname), "hvt%d", (int)getpid() % 100000);
	snprintf(devargs, sizeof(devargs), "net_tap%d,iface=%s", (int)getpid() % 1000, ifname);
	start(NULL);
	add(0, NULL);
	snprintf(args, sizeof(args), "{\"name\":\"up0\",\"type\":\"ethdev\",\"devargs\":\"%s\"}",
		 devargs);
	cJSON_Delete(hvsw_ok(&D, "port.add", "%s", args));
	ck_assert_int_eq(iface_set_up(ifname, true), 0);
	ck_assert_msg(hvsw_wait_up(&D, "up0", T), "tap port not up");
	fd = hv_test_raw_open(ifname);
	ck_assert_msg(fd >= 0, "raw socket on %s", ifname);
	/* guest -> uplink: a broadcast floods to the tap interface */
	id = guest_send(&G[0], &swh_bcast, NULL, 0);
	ck_assert_msg(raw_wait(fd, id), "frame %u did not reach %s", id, ifname);
	/* uplink -> guest: a frame sent into the interface reaches the guest byte-exact */
	memset(f, 0xff, 6);
	memcpy(f + 6, "\x02\x00\x00\x00\x00\x77", 6);
	f[12] = 0x08;
	f[13] = 0x06; /* an ARP-looking frame */
	ck_assert_int_eq(send(fd, f, sizeof(f), 0), (int)sizeof(f));
	{
		const struct rte_ether_addr mac = {{2, 0, 0, 0, 0, 0x77}};
		uint64_t end = swh_now_ms() + T;

		/* learned on the uplink once the switch received it */
		while (hvsw_fdb_has(&D, &mac, "up0") != 1 && swh_now_ms() < end)
			usleep(5000);
		ck_assert_int_eq(hvsw_fdb_has(&D, &mac, "up0"), 1);
	}
	/* the link state follows the interface */
	ck_assert_int_eq(iface_set_up(ifname, false), 0);
	{
		uint64_t end = swh_now_ms() + T;
		const char *st = NULL;
		cJSON *r = NULL;

		while (swh_now_ms() < end) {
			cJSON_Delete(r);
			r = hvsw_ok(&D, "port.show", "{\"name\":\"up0\"}");
			st = swh_str(r, "state");
			if (st != NULL && strcmp(st, "down") == 0)
				break;
			usleep(10000);
		}
		ck_assert_msg(st != NULL && strcmp(st, "down") == 0, "up0 state %s", st);
		cJSON_Delete(r);
	}
	close(fd);
	/* (the kernel's own frames on the tap, e.g. IPv6 router solicitations, reach vm0 too) */
	ck_assert_uint_ge(hvsw_port_stat(&D, "vm0", "tx_packets"), 1);
	stop_ok();
}
END_TEST

/* ---- 7. port changes under traffic ---- */

/* PMD of queue pair @qp in port.show's "qps" array. */
static int
queue_pmd(const cJSON *show, int qp)
{
	const cJSON *q;

	cJSON_ArrayForEach(q, cJSON_GetObjectItemCaseSensitive(
				      show, "qps")) if ((int)swh_num(q, "qp") ==
							qp) return (int)swh_num(q, "pmd");
	return -2;
}

START_TEST(port_changes_under_traffic)
{
	enum {
		ROUNDS = 20,
		BURST = 16
	};
	static uint32_t ids[ROUNDS * BURST];
	unsigned int n = 0;
	char err[256];
	cJSON *r;

	start(NULL);
	for (unsigned int i = 0; i < 3; i++)
		add(i, NULL);
	must_arrive(0, guest_send(&G[1], &swh_bcast, NULL, 0));
	ck_assert(fdb_wait(&G[1].mac, "vm1", true, T));
	for (unsigned int round = 0; round < ROUNDS; round++) {
		unsigned int first = n;

		for (unsigned int k = 0; k < BURST; k++)
			ids[n++] = guest_send(&G[0], &G[1].mac, NULL, 0);
		/* the change runs while the PMD switches that burst */
		switch (round) {
		case 4:
			add(3, NULL);
			break;
		case 8:
			cJSON_Delete(hvsw_ok(&D, "port.del", "{\"name\":\"vm2\"}"));
			guest_close(&G[2]);
			break;
		case 12:
			r = hvsw_ok(&D, "port.set", "{\"name\":\"vm1\",\"pmd\":0}");
			ck_assert_int_eq((int)swh_num(r, "pmd"), 0);
			cJSON_Delete(r);
			break;
		case 14:
			ck_assert_int_ne(hvsw_call(&D, NULL, err, sizeof(err), "port.set",
						   "{\"name\":\"vm1\",\"pmd\":5}"),
					 0);
			ck_assert_msg(strstr(err, "pmd") != NULL, "error: %s", err);
			break;
		default:
			break;
		}
		for (unsigned int k = first; k < n; k++)
			must_arrive(1, ids[k]);
	}
	barrier(0, 1);
	barrier(0, 3);
	barrier(1, 0);
	for (unsigned int k = 0; k < n; k++) {
		ck_assert_msg(guest_count(&G[1], ids[k]) == 1, "frame %u reached vm1 %u times",
			      ids[k], guest_count(&G[1], ids[k]));
		ck_assert_uint_eq(guest_count(&G[0], ids[k]), 0);
		ck_assert_uint_eq(guest_count(&G[3], ids[k]), 0);
	}
	r = hvsw_ok(&D, "port.show", "{\"name\":\"vm1\"}");
	ck_assert_int_eq((int)swh_num(r, "pmd"), 0);
	ck_assert_msg(queue_pmd(r, 0) == 0, "vm1's queue 0 on PMD %d", queue_pmd(r, 0));
	cJSON_Delete(r);
	ck_assert_int_ne(hvsw_call(&D, NULL, err, sizeof(err), "port.show", "{\"name\":\"vm2\"}"),
			 0);
	stat_is("vm1", "tx_packets", n + 2); /* the frames and two barriers */
	no_bad_frames(4);
	stop_ok();
}
END_TEST

/* ---- 8. restart ---- */

/* Names (and sockets) of port.list, as one string. */
static void
port_list(char *buf, size_t len)
{
	cJSON *r = hvsw_ok(&D, "port.list", NULL), *e;
	size_t off = 0;

	buf[0] = '\0';
	cJSON_ArrayForEach(e, r) off +=
		(size_t)snprintf(buf + off, len - off, "%s=%s,%s;", swh_str(e, "name"),
				 swh_str(e, "socket"), swh_str(e, "mode"));
	cJSON_Delete(r);
}

static void
both_ways(unsigned int a, unsigned int b)
{
	barrier(a, b);
	barrier(b, a);
}

START_TEST(restart_server_ports)
{
	char before[512], after[512], *text;
	cJSON *conf, *ports, *e;
	unsigned int n = 0;
	FILE *f;

	start(NULL);
	add(0, NULL);
	add(1, ",\"vlan\":7");
	cJSON_Delete(hvsw_ok(&D, "port.set", "{\"name\":\"vm0\",\"vlan\":7}"));
	both_ways(0, 1);
	port_list(before, sizeof(before));
	stop_ok();

	text = calloc(1, 65536);
	f = fopen(D.config, "r");
	ck_assert_ptr_nonnull(f);
	ck_assert(fread(text, 1, 65535, f) > 0);
	fclose(f);
	conf = cJSON_Parse(text);
	free(text);
	ck_assert_ptr_nonnull(conf);
	ports = cJSON_GetObjectItem(conf, "ports");
	cJSON_ArrayForEach(e, ports)
	{
		const char *name = swh_str(e, "name");

		ck_assert_ptr_nonnull(name);
		ck_assert(strcmp(name, "vm0") == 0 || strcmp(name, "vm1") == 0);
		ck_assert_int_eq((int)swh_num(e, "vlan"), 7);
		n++;
	}
	cJSON_Delete(conf);
	ck_assert_uint_eq(n, 2);

	start(NULL);
	port_list(after, sizeof(after));
	ck_assert_str_eq(before, after);
	/* a client-mode frontend does not reconnect by itself: make it anew */
	for (unsigned int i = 0; i < 2; i++) {
		guest_close(&G[i]);
		attach(i);
	}
	both_ways(0, 1);
	no_bad_frames(2);
	stop_ok();
}
END_TEST

START_TEST(restart_client_port)
{
	char sock[160];
	cJSON *r;

	start(NULL);
	add(1, NULL);
	/* the daemon connects to the guest: the frontend listens */
	sock_of("vmc", sock, sizeof(sock));
	cJSON_Delete(hvsw_ok(&D, "port.add",
			     "{\"name\":\"vm0\",\"type\":\"vhost-user\",\"mode\":\"client\","
			     "\"socket\":\"%s\"}",
			     sock));
	/* blocks until the daemon (retrying at least once a second) connects */
	ck_assert_int_eq(guest_open(&G[0], "vm0", 0, sock, true), 0);
	ck_assert(hvsw_wait_up(&D, "vm0", T));
	both_ways(0, 1);
	stop_ok();

	start(NULL);
	r = hvsw_ok(&D, "port.show", "{\"name\":\"vm0\"}");
	ck_assert_str_eq(swh_str(r, "mode"), "client");
	cJSON_Delete(r);
	guest_close(&G[1]);
	attach(1);
	/* vm0's frontend is left alone: the daemon reconnects to it */
	ck_assert_msg(hvsw_wait_up(&D, "vm0", T), "client port did not reconnect");
	both_ways(0, 1);
	no_bad_frames(2);
	stop_ok();
}
END_TEST

/* ---- 9. bad requests ---- */

static void
snapshot(char *list, size_t len, char *config, size_t clen)
{
	cJSON *r = hvsw_ok(&D, "port.list", NULL);
	char *s = cJSON_PrintUnformatted(r);
	int fd;
	ssize_t n;

	snprintf(list, len, "%s", s);
	free(s);
	cJSON_Delete(r);
	fd = open(D.config, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	n = read(fd, config, clen - 1);
	close(fd);
	ck_assert_int_gt(n, 0);
	config[n] = '\0';
}

/* The request fails with a one-line error containing @want, and changes nothing. */
static void
refused(const char *want, const char *cmd, const char *args)
{
	static char l0[8192], c0[8192], l1[8192], c1[8192];
	char err[512];

	snapshot(l0, sizeof(l0), c0, sizeof(c0));
	ck_assert_msg(hvsw_call(&D, NULL, err, sizeof(err), cmd, args ? "%s" : NULL, args) != 0,
		      "%s %s was accepted", cmd, args ? args : "");
	ck_assert_msg(err[0] != '\0' && strchr(err, '\n') == NULL, "bad error '%s'", err);
	ck_assert_msg(strstr(err, want) != NULL, "%s %s: error '%s' lacks '%s'", cmd,
		      args ? args : "", err, want);
	snapshot(l1, sizeof(l1), c1, sizeof(c1));
	ck_assert_str_eq(l0, l1);
	ck_assert_str_eq(c0, c1);
}

static void
raw_refused(const char *bytes, const char *want)
{
	char line[512];

	ck_assert_int_eq(hvsw_raw(&D, bytes, strlen(bytes), line, sizeof(line)), 0);
	ck_assert_msg(strncmp(line, "{\"ok\":false,\"error\":\"", 21) == 0 &&
			      strstr(line, want) != NULL,
		      "reply to %s: %s", bytes, line);
}

START_TEST(bad_requests)
{
	static char args[256], l0[8192], c0[8192], l1[8192], c1[8192];
	char sock[160], line[512];
	int st;
	pid_t pid;

	start(NULL);
	hvsw_add_port(&D, "vm0", NULL);
	hvsw_add_port(&D, "vm1", ",\"vlan\":3");
	snapshot(l0, sizeof(l0), c0, sizeof(c0));
	raw_refused("{\"cmd\": \"port.list\"\n", "malformed");
	raw_refused("\x01\xfe garbage\n", "malformed");
	raw_refused("[1,2]\n", "malformed");
	raw_refused("{\"args\":{}}\n", "missing 'cmd'");
	raw_refused("{\"cmd\":\"port.del\",\"args\":{\"name\":\"vm0\"}} trailing\n", "malformed");
	refused("unknown command", "port.frobnicate", NULL);
	refused("no port", "port.del", "{\"name\":\"nope\"}");
	refused("no port", "port.show", "{\"name\":\"nope\"}");
	refused("no port", "port.set", "{\"name\":\"nope\",\"vlan\":1}");
	refused("already exists", "port.add", "{\"name\":\"vm0\"}");
	sock_of("vm0", sock, sizeof(sock));
	snprintf(args, sizeof(args), "{\"name\":\"other\",\"socket\":\"%s\"}", sock);
	refused("socket", "port.add", args);
	refused("queues", "port.add", "{\"name\":\"x\",\"queues\":0}");
	refused("queues", "port.add", "{\"name\":\"x\",\"queues\":9}");
	refused("vlan", "port.add", "{\"name\":\"x\",\"vlan\":4095}");
	refused("pmd", "port.add", "{\"name\":\"x\",\"pmd\":99}");
	refused("pmd", "port.add", "{\"name\":\"x\",\"pmd\":5}");
	refused("mode", "port.add", "{\"name\":\"x\",\"mode\":\"bogus\"}");
	refused("type", "port.add", "{\"name\":\"x\",\"type\":\"bogus\"}");
	refused("unknown argument", "port.add", "{\"name\":\"x\",\"colour\":\"red\"}");
	refused("name", "port.add", "{\"name\":\"a/b\"}");
	refused("name", "port.add", "{\"queues\":1}");
	refused("vlan", "port.set", "{\"name\":\"vm0\",\"vlan\":4095}");
	refused("pmd", "port.set", "{\"name\":\"vm0\",\"pmd\":99}");
	refused("pmd", "port.set", "{\"name\":\"vm0\",\"vlan\":5,\"pmd\":3}");
	refused("trunk", "port.set", "{\"name\":\"vm1\",\"trunk\":true,\"vlan\":5}");
	refused("unknown argument", "port.set", "{\"name\":\"vm0\",\"queues\":2}");
	refused("unknown argument", "port.del", "{\"name\":\"vm0\",\"force\":true}");
	refused("unknown argument", "port.list", "{\"all\":true}");

	/* someone who is neither root nor in the group: let them reach the socket */
	ck_assert_int_eq(chmod(D.dir, 0711), 0);
	ck_assert_int_eq(chmod(D.sock, 0666), 0);
	if (geteuid() != 0) {
		fprintf(stderr, "bad_requests: not root, unauthorised peer not tested\n");
	} else {
		pid = fork();
		ck_assert_int_ge(pid, 0);
		if (pid == 0) {
			struct sockaddr_un sa = {.sun_family = AF_UNIX};
			int fd = socket(AF_UNIX, SOCK_STREAM, 0);
			size_t got = 0;

			if (setgroups(0, NULL) != 0 || setgid(65534) != 0 || setuid(65534) != 0)
				_exit(2);
			memcpy(sa.sun_path, D.sock, strlen(D.sock) + 1);
			if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0)
				_exit(3);
			while (got + 1 < sizeof(line) && read(fd, line + got, 1) == 1 &&
			       line[got] != '\n')
				got++;
			line[got] = '\0';
			_exit(strncmp(line, "{\"ok\":false,\"error\":\"permission denied", 38) == 0
				      ? 0
				      : 4);
		}
		ck_assert_int_eq(waitpid(pid, &st, 0), pid);
		ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0,
			      "unauthorised peer: child status 0x%x", st);
	}
	snapshot(l1, sizeof(l1), c1, sizeof(c1));
	ck_assert_str_eq(l0, l1);
	ck_assert_str_eq(c0, c1);
	cJSON_Delete(hvsw_ok(&D, "version", NULL)); /* still serving */
	stop_ok();
}
END_TEST

/* ---- 10. telemetry ---- */

/* Traffic on vm0 and vm1: 4 frames each way, 2 MACs learned. */
static void
tel_traffic(void)
{
	start(NULL);
	add(0, NULL);
	add(1, NULL);
	for (int i = 0; i < 3; i++)
		both_ways(0, 1);
	must_arrive(1, guest_send(&G[0], &G[1].mac, NULL, 0));
	barrier(1, 0);
	/* learning reaches the table on the daemon's next control tick */
	ck_assert(fdb_wait(&G[0].mac, "vm0", true, T));
	ck_assert(fdb_wait(&G[1].mac, "vm1", true, T));
}

START_TEST(telemetry)
{
	char buf[4096], cmd[256];
	cJSON *r, *v, *fdb;
	int fd;
	FILE *p;

	tel_traffic();
	fd = swh_tel_open(D.prefix, D.pid);
	v = swh_tel(fd, "/hvswitch/ports");
	ck_assert_int_eq(cJSON_GetArraySize(v), 2);
	ck_assert_str_eq(cJSON_GetStringValue(cJSON_GetArrayItem(v, 0)), "vm0");
	ck_assert_str_eq(cJSON_GetStringValue(cJSON_GetArrayItem(v, 1)), "vm1");
	cJSON_Delete(v);

	v = swh_tel(fd, "/hvswitch/port,vm0");
	ck_assert_str_eq(swh_str(v, "name"), "vm0");
	ck_assert_str_eq(swh_str(v, "state"), "up");
	ck_assert_int_eq((int)swh_num(v, "macs"), 1);
	ck_assert_int_eq((int)swh_num(v, "connected"), 1);
	cJSON_Delete(v);

	/* a bad parameter is an error, not null */
	v = swh_tel(fd, "/hvswitch/port,nope");
	ck_assert_str_eq(swh_str(v, "error"), "no port 'nope' (see /hvswitch/ports)");
	cJSON_Delete(v);
	v = swh_tel(fd, "/hvswitch/port");
	ck_assert_str_eq(swh_str(v, "error"), "missing port name: /hvswitch/port,<name>");
	cJSON_Delete(v);

	v = swh_tel(fd, "/hvswitch/fdb");
	fdb = hvsw_ok(&D, "fdb.show", NULL);
	ck_assert_int_eq((int)swh_num(v, "entries"), 2);
	ck_assert_int_eq((int)swh_num(v, "entries"), cJSON_GetArraySize(fdb));
	ck_assert_int_eq((int)swh_num(v, "learned"), 2);
	ck_assert_int_eq((int)swh_num(v, "mac_limit"), 1024);
	ck_assert_int_eq((int)swh_num(v, "age_s"), 300);
	cJSON_Delete(fdb);
	cJSON_Delete(v);
	close(fd);

	/* the stock client, non-interactive (optional: needs python3) */
	if (access("/usr/bin/dpdk-telemetry.py", X_OK) == 0 &&
	    access("/usr/bin/python3", X_OK) == 0) {
		bool seen = false;

		snprintf(cmd, sizeof(cmd),
			 "printf '/hvswitch/ports\\n' | /usr/bin/dpdk-telemetry.py -f %s 2>&1",
			 D.prefix);
		p = popen(cmd, "r");
		ck_assert_ptr_nonnull(p);
		while (fgets(buf, sizeof(buf), p) != NULL) {
			r = cJSON_Parse(buf);
			if (r != NULL &&
			    cJSON_GetArraySize(cJSON_GetObjectItem(r, "/hvswitch/ports")) == 2)
				seen = true;
			cJSON_Delete(r);
		}
		ck_assert_int_eq(pclose(p), 0);
		ck_assert_msg(seen, "dpdk-telemetry.py did not list the ports");
	} else {
		fprintf(stderr, "telemetry: dpdk-telemetry.py not run (not installed)\n");
	}
	stop_ok();
}
END_TEST

/* The nested counters (port stats, PMDs) survive the flattening into telemetry dicts. */
START_TEST(telemetry_counters)
{
	static const char *const c[] = {"rx_packets", "tx_packets", "rx_bytes", "tx_bytes"};
	static char dump[4096];
	double tv[RTE_DIM(c)], sv[RTE_DIM(c)], lcore, packets;
	cJSON *v, *show;
	int fd;

	tel_traffic();
	fd = swh_tel_open(D.prefix, D.pid);
	v = swh_tel(fd, "/hvswitch/port,vm0");
	show = hvsw_ok(&D, "port.show", "{\"name\":\"vm0\"}");
	for (unsigned int i = 0; i < RTE_DIM(c); i++) {
		char path[64];

		snprintf(path, sizeof(path), "stats.%s", c[i]);
		tv[i] = swh_tel_num(v, "stats", c[i]);
		sv[i] = swh_num(show, path);
	}
	cJSON_PrintPreallocated(v, dump, sizeof(dump), 0);
	cJSON_Delete(show);
	cJSON_Delete(v);
	v = swh_tel(fd, "/hvswitch/pmd");
	lcore = swh_tel_num(v, "0", "lcore");
	packets = swh_tel_num(v, "0", "packets");
	cJSON_Delete(v);
	close(fd);
	ck_assert_msg(tv[0] >= 0, "/hvswitch/port,vm0 has no stats counters: %s", dump);
	ck_assert(tv[0] == 4 && tv[1] == 4);
	for (unsigned int i = 0; i < RTE_DIM(c); i++)
		ck_assert_msg(tv[i] == sv[i], "%s: telemetry %.0f, port.show %.0f", c[i], tv[i],
			      sv[i]);
	ck_assert_msg(lcore == 1 && packets >= 8, "/hvswitch/pmd: lcore %.0f packets %.0f", lcore,
		      packets);
	stop_ok();
}
END_TEST

/* Values (leaves) under @j, and whether a key names a TSC (a raw timestamp). */
static unsigned int
tel_leaves(const cJSON *j, bool *tsc)
{
	const cJSON *it;
	unsigned int n = 0;

	cJSON_ArrayForEach(it, j)
	{
		if (it->string != NULL && strstr(it->string, "tsc") != NULL)
			*tsc = true;
		n += cJSON_IsObject(it) || cJSON_IsArray(it) ? tel_leaves(it, tsc) : 1;
	}
	return n;
}

/*
 * A port of 4 queue pairs has more values than a telemetry dict holds (256):
 * each queue pair comes whole in a nested dict of its own, with the same
 * counters as port.show; /hvswitch/pmd has no raw TSC value.
 */
START_TEST(telemetry_queue_pairs)
{
	static const char *const c[] = {"packets", "bytes", "kicks", "irqs"};
	bool tsc = false;
	cJSON *v, *show;
	unsigned int n;
	int fd;

	start(NULL);
	add(0, NULL);
	hvsw_add_port(&D, "vm1", ",\"queues\":4");
	attach(1);
	for (int i = 0; i < 3; i++)
		both_ways(0, 1);
	fd = swh_tel_open(D.prefix, D.pid);
	v = swh_tel(fd, "/hvswitch/port,vm1");
	show = hvsw_ok(&D, "port.show", "{\"name\":\"vm1\"}");
	n = tel_leaves(v, &tsc);
	ck_assert_msg(n > 256, "/hvswitch/port,vm1: %u values", n);
	ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(show, "qps")), 4);
	for (int q = 0; q < 4; q++) {
		char qp[16];

		snprintf(qp, sizeof(qp), "qps/%d", q);
		ck_assert_msg(swh_tel_num(v, qp, "pmd") == 0, "%s: no pmd", qp);
		for (unsigned int i = 0; i < RTE_DIM(c); i++) {
			const cJSON *sq = cJSON_GetArrayItem(cJSON_GetObjectItem(show, "qps"), q);
			char path[64], key[32];

			snprintf(path, sizeof(path), "rx.%s", c[i]);
			snprintf(key, sizeof(key), "rx/%s", c[i]);
			ck_assert_msg(swh_num(sq, path) >= 0, "port.show has no qps[%d].%s", q,
				      path);
			ck_assert_msg(swh_tel_num(v, qp, key) == swh_num(sq, path),
				      "%s %s: telemetry %.0f, port.show %.0f", qp, key,
				      swh_tel_num(v, qp, key), swh_num(sq, path));
		}
	}
	/* vm1's guest uses its first queue pair: 3 broadcasts sent */
	ck_assert(swh_tel_num(v, "qps/0", "rx/packets") == 3);
	ck_assert(swh_tel_num(v, "stats", "rx_packets") == 3);
	cJSON_Delete(show);
	cJSON_Delete(v);
	v = swh_tel(fd, "/hvswitch/pmd");
	tel_leaves(v, &tsc);
	ck_assert_msg(swh_tel_num(v, "0", "packets") >= 6, "/hvswitch/pmd: no packets");
	cJSON_Delete(v);
	close(fd);
	ck_assert_msg(!tsc, "a raw TSC value in telemetry");
	stop_ok();
}
END_TEST

static Suite *
make_suite(void)
{
	Suite *s = suite_create("switch");
	TCase *t = tcase_create("switch");

	tcase_add_checked_fixture(t, setup, teardown);
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
	tcase_add_test(t, ethdev_uplink);
	tcase_add_test(t, port_changes_under_traffic);
	tcase_add_test(t, restart_server_ports);
	tcase_add_test(t, restart_client_port);
	tcase_add_test(t, bad_requests);
	suite_add_tcase(s, t);
	/* its own case: CK_RUN_CASE=telemetry runs it alone */
	t = tcase_create("telemetry");
	tcase_add_checked_fixture(t, setup, teardown);
	tcase_set_timeout(t, 120);
	tcase_add_test(t, telemetry);
	tcase_add_test(t, telemetry_counters);
	tcase_add_test(t, telemetry_queue_pairs);
	suite_add_tcase(s, t);
	return s;
}

int
main(int argc, char **argv)
{
	return swh_run_suite(make_suite, argc, argv);
}
