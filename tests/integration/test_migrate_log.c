/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Live migration on the data path (drivers/vhost/vhost_log.c), driven by the
 * hand-written frontend: with logging on, every guest page the switch
 * writes (receive buffers, used entries, the used index, the ring flags)
 * has its bit set in the frontend's log; with it off nothing is logged; a
 * log shrunk under the switch costs only that connection; the ring state
 * GET_VRING_BASE returns is where a destination resumes, no frame lost or
 * taken twice.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_mbuf.h>

#include "ring_fixture.h"

#define PAGE 4096u
#define LOG_SIZE 4096u /* bits for 128 MiB of guest-physical space: all of it */
#define FEATURES (HV_VHOST_F_VERSION_1 | HV_VHOST_F_MRG_RXBUF | HV_VHOST_F_INDIRECT_DESC)

static int log_fd = -1;
static uint8_t *log_bits;

static void
recv_ok(uint32_t request)
{
	struct vhost_user_msg reply;

	ck_assert_int_eq(raw_fe_recv(&fe, &reply, TIMEOUT_MS), 0);
	ck_assert_uint_eq(reply.hdr.request, request);
	if (reply.hdr.size == sizeof(uint64_t))
		ck_assert_uint_eq(reply.payload.u64, 0);
}

/* SET_FEATURES (rings up already), acked: applied when this returns. */
static void
set_features(uint64_t f)
{
	f |= RTE_BIT64(VHOST_USER_F_PROTOCOL_FEATURES);
	ck_assert_int_eq(raw_fe_send(&fe, VHOST_USER_SET_FEATURES,
				     VHOST_USER_VERSION | VHOST_USER_NEED_REPLY, &f, sizeof(f),
				     NULL, 0),
			 0);
	recv_ok(VHOST_USER_SET_FEATURES);
}

/* Share a log as QEMU does (LOG_SHMFD, SET_LOG_BASE, its reply); with @on, VHOST_F_LOG_ALL. */
static void
start_log(bool on)
{
	uint64_t pf = RTE_BIT64(VHOST_USER_PROTOCOL_F_REPLY_ACK) |
		      RTE_BIT64(VHOST_USER_PROTOCOL_F_LOG_SHMFD);
	struct vhost_user_log l = {.mmap_size = LOG_SIZE, .mmap_offset = 0};

	setup_rings();
	log_fd = memfd_create("hv-test-log", MFD_CLOEXEC);
	ck_assert_int_ge(log_fd, 0);
	ck_assert_int_eq(ftruncate(log_fd, LOG_SIZE), 0);
	log_bits = mmap(NULL, LOG_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, log_fd, 0);
	ck_assert_ptr_ne(log_bits, MAP_FAILED);
	ck_assert_int_eq(raw_fe_send(&fe, VHOST_USER_SET_PROTOCOL_FEATURES, VHOST_USER_VERSION, &pf,
				     sizeof(pf), NULL, 0),
			 0);
	ck_assert_int_eq(raw_fe_send(&fe, VHOST_USER_SET_LOG_BASE, VHOST_USER_VERSION, &l,
				     sizeof(l), &log_fd, 1),
			 0);
	recv_ok(VHOST_USER_SET_LOG_BASE);
	set_features(FEATURES | (on ? RTE_BIT64(VHOST_USER_F_LOG_ALL) : 0));
	ck_assert(hv_vhost_queue_ready(bad, 0));
}

static void
stop_log(void)
{
	if (log_bits != NULL && log_bits != MAP_FAILED)
		munmap(log_bits, LOG_SIZE);
	log_bits = NULL;
	if (log_fd >= 0)
		close(log_fd);
	log_fd = -1;
}

static void
log_teardown(void)
{
	stop_log();
	teardown();
}

static bool
page_logged(uint64_t gpa)
{
	uint64_t page = gpa / PAGE;

	return (__atomic_load_n(&log_bits[page / 8], __ATOMIC_RELAXED) >> (page % 8)) & 1;
}

static unsigned int
bits_set(void)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < LOG_SIZE; i++)
		n += (unsigned int)__builtin_popcount(log_bits[i]);
	return n;
}

/*
 * Receive buffers of every shape the rx path fills: 12 two-piece chains
 * (a short piece that ends just past a page boundary, then a longer one),
 * and 8 one-piece buffers 3000 bytes long, some across page boundaries.
 */
#define RX_CHAINS 12
#define RX_SINGLES 8

static void
post_rx_buffers(void)
{
	uint16_t d = 0;

	for (unsigned int i = 0; i < RX_CHAINS; i++) {
		uint64_t addr[2] = {raw_gpa(RAW_DATA_OFF + i * 3 * PAGE + PAGE - 40),
				    raw_gpa(RAW_DATA_OFF + i * 3 * PAGE + 2 * PAGE + 100)};
		uint32_t len[2] = {80, 3000};
		uint16_t flags[2] = {VRING_DESC_F_WRITE | VRING_DESC_F_NEXT, VRING_DESC_F_WRITE};

		raw_fe_post(&fe, 0, d, 2, addr, len, flags);
		d += 2;
	}
	for (unsigned int i = 0; i < RX_SINGLES; i++) {
		uint64_t addr = raw_gpa(RAW_DATA_OFF + 0x40000 + i * 3000);
		uint32_t len = 3000;
		uint16_t flags = VRING_DESC_F_WRITE;

		raw_fe_post(&fe, 0, d++, 1, &addr, &len, &flags);
	}
}

/* Frames on the guest's TX ring for the rx burst: the switch writes only used entries. */
static void
post_tx_frames(uint16_t first, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		uint32_t off = RAW_DATA_OFF + 0x80000 + (first + i) * 0x800;
		uint64_t addr = raw_gpa(off);
		uint32_t len = HDR + 200;
		uint16_t flags = 0;

		raw_fe_frame(&fe, off, HDR, 200);
		raw_fe_post(&fe, 1, (uint16_t)(first + i), 1, &addr, &len, &flags);
	}
}

/* Frames into the guest: short, MTU, one over a buffer (mergeable), 9000 bytes, chained mbufs. */
static unsigned int
deliver_frames(void)
{
	static const uint32_t lens[] = {60, 1500, 2990, 9000, 200, 1400, 4000, 64};
	struct rte_mbuf *m[RTE_DIM(lens)];

	for (unsigned int i = 0; i < RTE_DIM(lens); i++) {
		m[i] = peer_frame(peer_guest_pool(), lens[i], 7 + i, i % 3 == 2 ? 3 : 1);
		ck_assert_ptr_nonnull(m[i]);
	}
	return hv_vhost_tx_burst(bad, 0, m, RTE_DIM(lens));
}

/*
 * Every page of guest memory that differs from @before after the bursts has
 * its bit set; returns the pages that changed.
 */
static unsigned int
assert_changes_logged(const uint8_t *before)
{
	unsigned int changed = 0;

	for (uint32_t off = 0; off < RAW_MEM_SIZE; off += PAGE) {
		if (memcmp(before + off, fe.mem + off, PAGE) == 0)
			continue;
		changed++;
		ck_assert_msg(page_logged(raw_gpa(off)),
			      "guest page at gpa 0x%lx written by the switch but not logged",
			      (unsigned long)raw_gpa(off));
	}
	return changed;
}

START_TEST(every_write_logged)
{
	uint8_t *before = malloc(RAW_MEM_SIZE);
	unsigned int changed, sent;

	ck_assert_ptr_nonnull(before);
	start_log(true);
	post_rx_buffers();
	post_tx_frames(0, 16);
	memcpy(before, fe.mem, RAW_MEM_SIZE);
	/* what the frontend took so far (the flags stored at start): taken */
	memset(log_bits, 0, LOG_SIZE);

	sent = deliver_frames();
	ck_assert_uint_eq(sent, 8);
	ck_assert_uint_eq(poll_tx(), 16);
	/* the kick toggles of a sleeping polling thread write flags and avail_event */
	ck_assert_int_eq(hv_vhost_vring_notify(bad, 0, HV_VHOST_TX, true), 0);
	ck_assert_int_eq(hv_vhost_vring_notify(bad, 0, HV_VHOST_RX, true), 0);

	changed = assert_changes_logged(before);
	/* the test means something: buffers on many pages, both used rings */
	ck_assert_uint_ge(changed, 12);
	ck_assert_uint_ge(stats(HV_VHOST_TX).log_pages, RX_CHAINS);
	ck_assert_uint_ge(stats(HV_VHOST_RX).log_pages, 1);
	ck_assert_uint_ge(stats(HV_VHOST_TX).log_syncs, 1);
	ck_assert_uint_ge(stats(HV_VHOST_RX).log_syncs, 1);
	ck_assert_uint_ge(bits_set(), changed);
	free(before);
}
END_TEST

/* Negotiated without VHOST_F_LOG_ALL, a mapped log gets no bit. */
START_TEST(log_off_logs_nothing)
{
	start_log(false);
	post_rx_buffers();
	post_tx_frames(0, 4);
	memset(log_bits, 0, LOG_SIZE);
	ck_assert_uint_eq(deliver_frames(), 8);
	ck_assert_uint_eq(poll_tx(), 4);
	ck_assert_uint_eq(bits_set(), 0);
	ck_assert_uint_eq(stats(HV_VHOST_TX).log_syncs, 0);
	ck_assert_uint_eq(stats(HV_VHOST_TX).log_pages, 0);
	/* and turned on later, it logs */
	set_features(FEATURES | RTE_BIT64(VHOST_USER_F_LOG_ALL));
	post_tx_frames(4, 1);
	ck_assert_uint_eq(poll_tx(), 1);
	ck_assert_uint_gt(bits_set(), 0);
}
END_TEST

/*
 * The frontend shrinks its log file under the switch: the next burst's
 * first bit faults (SIGBUS), which costs that frontend its connection only;
 * the switch and the bystander go on, and the port takes a new frontend.
 */
START_TEST(log_shrunk_under_us)
{
	struct rte_mbuf *m;

	start_log(true);
	post_rx_buffers();
	ck_assert_int_eq(ftruncate(log_fd, 0), 0);
	m = peer_frame(peer_guest_pool(), 100, 1, 1);
	hv_vhost_tx_burst(bad, 0, &m, 1);
	ck_assert(raw_fe_closed(&fe, TIMEOUT_MS));
	raw_fe_close(&fe);
	assert_bystander_ok();
	ck_assert_int_eq(raw_fe_connect(&fe, bad_path), 0);
	setup_rings();
	post_tx_frames(0, 1);
	ck_assert_uint_eq(poll_tx(), 1);
}
END_TEST

/* GET_VRING_BASE of vring @v: the index a destination resumes from. */
static uint32_t
get_vring_base(uint32_t v)
{
	struct vhost_vring_state st = {.index = v};
	struct vhost_user_msg reply;

	ck_assert_int_eq(raw_fe_send(&fe, VHOST_USER_GET_VRING_BASE, VHOST_USER_VERSION, &st,
				     sizeof(st), NULL, 0),
			 0);
	ck_assert_int_eq(raw_fe_recv(&fe, &reply, TIMEOUT_MS), 0);
	ck_assert_uint_eq(reply.payload.state.index, v);
	return reply.payload.state.num;
}

/*
 * Stopped while logging, a ring's base is its used index (every chain taken
 * was returned, published and logged before the reply); restarted at that
 * base, as a destination does, the next frame is the next one: none lost,
 * none taken twice.
 */
START_TEST(vring_base_resumes)
{
	uint64_t f = FEATURES | RTE_BIT64(VHOST_USER_F_LOG_ALL);

	start_log(true);
	post_tx_frames(0, 3);
	ck_assert_uint_eq(poll_tx(), 3);
	post_rx_buffers();
	ck_assert_uint_eq(deliver_frames(), 8);
	memset(log_bits, 0, LOG_SIZE);
	/* the guest posts two more before the stop: the switch has not seen them */
	post_tx_frames(3, 2);
	ck_assert_uint_eq(get_vring_base(1), 3);
	ck_assert_uint_eq(fe.used[1]->idx, 3);
	ck_assert_uint_eq(get_vring_base(0), fe.used[0]->idx);
	ck_assert(!hv_vhost_queue_ready(bad, 0));
	/* the destination's side: base, kick, features (acked) */
	{
		struct vhost_vring_state st = {.index = 1, .num = 3};
		int kick = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		uint64_t u = 1;

		ck_assert_int_eq(raw_fe_send(&fe, VHOST_USER_SET_VRING_BASE, VHOST_USER_VERSION,
					     &st, sizeof(st), NULL, 0),
				 0);
		ck_assert_int_eq(raw_fe_send(&fe, VHOST_USER_SET_VRING_KICK, VHOST_USER_VERSION, &u,
					     sizeof(u), &kick, 1),
				 0);
		close(kick);
		kick = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		u = 0;
		ck_assert_int_eq(raw_fe_send(&fe, VHOST_USER_SET_VRING_KICK, VHOST_USER_VERSION, &u,
					     sizeof(u), &kick, 1),
				 0);
		close(kick);
		set_features(f);
	}
	ck_assert(hv_vhost_queue_ready(bad, 0));
	ck_assert_uint_eq(poll_tx(), 2);
	ck_assert_uint_eq(poll_tx(), 0);
	ck_assert_uint_eq(fe.used[1]->idx, 5);
	ck_assert_uint_eq(stats(HV_VHOST_RX).packets, 5);
	ck_assert(page_logged((uint64_t)((uint8_t *)&fe.used[1]->idx - fe.mem) + RAW_GPA_BASE));
}
END_TEST

/*
 * What logging costs the rx path, in TSC cycles per 64 B frame delivered in
 * bursts of 32, logging off and on interleaved (the log cleared before each
 * ring's worth, as the frontend's syncs clear it). Printed, not asserted:
 * doc/performance.rst quotes it.
 */
START_TEST(log_cost)
{
	enum {
		BURST = 32,
		ROUNDS = 100
	};
	uint64_t cycles[2] = {0, 0}, frames[2] = {0, 0};

	start_log(false);
	for (unsigned int r = 0; r < 2 * ROUNDS; r++) {
		int on = r & 1;

		set_features(FEATURES | (on ? RTE_BIT64(VHOST_USER_F_LOG_ALL) : 0));
		for (uint16_t i = 0; i < RAW_RING_SIZE; i++) {
			uint64_t addr = raw_gpa(RAW_DATA_OFF + i * 2048u);
			uint32_t len = 2048;
			uint16_t flags = VRING_DESC_F_WRITE;

			raw_fe_post(&fe, 0, i, 1, &addr, &len, &flags);
		}
		memset(log_bits, 0, LOG_SIZE);
		for (unsigned int b = 0; b < RAW_RING_SIZE / BURST; b++) {
			struct rte_mbuf *m[BURST];
			uint64_t t;

			for (unsigned int i = 0; i < BURST; i++)
				m[i] = peer_frame(peer_guest_pool(), 64, i, 1);
			t = rte_rdtsc();
			frames[on] += hv_vhost_tx_burst(bad, 0, m, BURST);
			cycles[on] += rte_rdtsc() - t;
		}
	}
	ck_assert_uint_eq(frames[0], (uint64_t)ROUNDS * RAW_RING_SIZE);
	ck_assert_uint_eq(frames[1], (uint64_t)ROUNDS * RAW_RING_SIZE);
	fprintf(stderr,
		"log cost: 64 B frames into the guest, bursts of %d: %.1f cycles/frame with "
		"logging off, %.1f on (%+.0f %%)\n",
		BURST, (double)cycles[0] / frames[0], (double)cycles[1] / frames[1],
		100.0 * ((double)cycles[1] / frames[1] / ((double)cycles[0] / frames[0]) - 1));
}
END_TEST

static void *
suite(void)
{
	Suite *s = suite_create("migrate-log");
	TCase *t = tcase_create("log");

	tcase_add_checked_fixture(t, setup, log_teardown);
	tcase_set_timeout(t, 60);
	tcase_add_test(t, every_write_logged);
	tcase_add_test(t, log_off_logs_nothing);
	tcase_add_test(t, log_shrunk_under_us);
	tcase_add_test(t, vring_base_resumes);
	tcase_add_test(t, log_cost);
	suite_add_tcase(s, t);
	return s;
}

int
main(int argc, char **argv)
{
	return peer_run_suite(suite, argc, argv);
}
