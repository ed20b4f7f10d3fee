/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Live migration on a packed ring (drivers/vhost/vhost_packed_guest.h,
 * vhost_packed_publish_logged()), driven by a hand-written frontend that
 * lays out packed rings in its memory (as test_hostile_packed.c does: the
 * descriptor ring, driver and device event areas each on a page of their
 * own). With logging on, every guest page the switch writes has its bit set
 * in the frontend's log: receive buffers (frame bytes and the net header,
 * each laid on a page of its own so that one kind of write missing shows),
 * used descriptors written back into the descriptor ring, the device event
 * area; the log counters move. With it off nothing is logged.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rte_cycles.h>

#include "peer.h"
#include "raw_frontend.h"

#define TIMEOUT_MS 3000
#define HDR 12
#define PAGE 4096u
#define LOG_SIZE 4096u /* bits for 128 MiB of guest-physical space: all of it */
#define GUEST_RX 0     /* vring 0: what the switch fills */
#define GUEST_TX 1     /* vring 1: what the guest sends */
#define F_AVAIL (1u << 7)
#define F_USED (1u << 15)
#define FEATURES                                                                                   \
	(HV_VHOST_F_VERSION_1 | HV_VHOST_F_MRG_RXBUF | HV_VHOST_F_INDIRECT_DESC |                  \
	 HV_VHOST_F_EVENT_IDX | HV_VHOST_F_RING_PACKED)

static struct peer good;
static struct hv_vhost_port *bad;
static char bad_path[108];
static struct raw_fe fe;
static uint64_t features; /* what the frontend negotiates, less LOG_ALL */
/* the driver's side of each ring: next slot to post, its wrap counter */
static uint16_t post_idx[2];
static bool post_wrap[2];
static int log_fd = -1;
static uint8_t *log_bits;

static struct vring_packed_desc *
pring(int v)
{
	return (struct vring_packed_desc *)fe.desc[v];
}

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

/*
 * Both packed rings up with @extra features, then a log shared as QEMU
 * does (LOG_SHMFD, SET_LOG_BASE, its reply); with @on, VHOST_F_LOG_ALL.
 */
static void
start(uint64_t extra, bool on)
{
	struct hv_vhost_port_conf conf = {
		.name = "migrate-packed",
		.mode = HV_VHOST_SERVER,
		.queue_pairs = 1,
		.features = FEATURES | HV_VHOST_F_IN_ORDER,
		.mp = peer_switch_pool(),
	};
	uint64_t pf = RTE_BIT64(VHOST_USER_PROTOCOL_F_REPLY_ACK) |
		      RTE_BIT64(VHOST_USER_PROTOCOL_F_LOG_SHMFD);
	struct vhost_user_log l = {.mmap_size = LOG_SIZE, .mmap_offset = 0};

	ck_assert_int_eq(peer_open(&good, "good", HV_VHOST_SERVER, 0, ""), 0);
	ck_assert(peer_wait_ready(&good, TIMEOUT_MS));
	snprintf(bad_path, sizeof(bad_path), "/tmp/hvtest-%d-mpacked.sock", getpid());
	conf.path = bad_path;
	bad = hv_vhost_port_create(&conf);
	ck_assert_ptr_nonnull(bad);
	ck_assert_int_eq(raw_fe_connect(&fe, bad_path), 0);
	features = FEATURES | extra;
	ck_assert_int_eq(raw_fe_setup(&fe, features), 0);
	ck_assert(hv_vhost_port_features(bad) & HV_VHOST_F_RING_PACKED);
	/* raw_fe_setup() sent base 0 (wrap counter 0): both sides start there */
	for (int v = 0; v < 2; v++) {
		post_idx[v] = 0;
		post_wrap[v] = false;
	}
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
	set_features(features | (on ? RTE_BIT64(VHOST_USER_F_LOG_ALL) : 0));
	ck_assert(hv_vhost_queue_ready(bad, 0));
}

static void
teardown(void)
{
	if (log_bits != NULL && log_bits != MAP_FAILED)
		munmap(log_bits, LOG_SIZE);
	log_bits = NULL;
	if (log_fd >= 0)
		close(log_fd);
	log_fd = -1;
	raw_fe_close(&fe);
	hv_vhost_port_destroy(bad);
	peer_close(&good);
}

static bool
page_logged(uint64_t gpa)
{
	uint64_t page = gpa / PAGE;

	return (__atomic_load_n(&log_bits[page / 8], __ATOMIC_RELAXED) >> (page % 8)) & 1;
}

static bool
off_logged(const void *p)
{
	return page_logged(raw_gpa((uint32_t)((const uint8_t *)p - fe.mem)));
}

static unsigned int
bits_set(void)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < LOG_SIZE; i++)
		n += (unsigned int)__builtin_popcount(log_bits[i]);
	return n;
}

static struct hv_vhost_vring_stats
stats(enum hv_vhost_dir dir)
{
	struct hv_vhost_vring_stats s;

	ck_assert_int_eq(hv_vhost_vring_stats(bad, 0, dir, &s), 0);
	return s;
}

/*
 * Post a chain of @n descriptors (gpa, len, flags each) as buffer @id: the
 * first descriptor's flags stored last, with release, as a driver does.
 */
static void
post_chain(int v, unsigned int n, const uint64_t *addr, const uint32_t *len, const uint16_t *flags,
	   uint16_t id)
{
	uint16_t first = post_idx[v], first_flags = 0;

	for (unsigned int i = 0; i < n; i++) {
		struct vring_packed_desc *d = &pring(v)[post_idx[v]];
		uint16_t f = (uint16_t)(flags[i] | (i + 1 < n ? VRING_DESC_F_NEXT : 0) |
					(post_wrap[v] ? F_AVAIL : F_USED));

		d->addr = addr[i];
		d->len = len[i];
		d->id = id;
		if (i == 0)
			first_flags = f;
		else
			d->flags = f;
		if (++post_idx[v] == RAW_RING_SIZE) {
			post_idx[v] = 0;
			post_wrap[v] = !post_wrap[v];
		}
	}
	__atomic_store_n(&pring(v)[first].flags, first_flags, __ATOMIC_RELEASE);
}

/*
 * Receive buffers of every shape, four pages apart, each beginning 12 bytes
 * before a page's end, so that the net header lies alone on its page and
 * the frame bytes on the next: one-piece buffers (the one-step path), two
 * pieces (a header-sized piece, then 3000 bytes on another page), and an
 * indirect table of two such pieces.
 */
#define RX_BUFS 15
#define BUF_OFF(k) (RAW_DATA_OFF + (k)*4 * PAGE + PAGE - HDR)

static void
post_rx_buffers(void)
{
	const uint16_t w = VRING_DESC_F_WRITE;

	for (uint16_t k = 0; k < RX_BUFS; k++) {
		uint64_t addr[2] = {raw_gpa(BUF_OFF(k)), raw_gpa(BUF_OFF(k) + HDR + PAGE + 100)};
		uint32_t len[2] = {HDR, 3000};
		uint16_t flags[2] = {w, w};

		if (k == 9) {
			/* the table on a page of its own: the switch only reads it */
			struct vring_packed_desc *t =
				(struct vring_packed_desc *)(fe.mem + RAW_DATA_OFF + 0x80000);
			uint64_t ta = raw_gpa(RAW_DATA_OFF + 0x80000);
			uint32_t tl = 2 * sizeof(*t);
			uint16_t tf = VRING_DESC_F_INDIRECT;

			for (int i = 0; i < 2; i++)
				t[i] = (struct vring_packed_desc){
					.addr = addr[i],
					.len = len[i],
					.flags = (uint16_t)(w | (i == 0 ? VRING_DESC_F_NEXT : 0))};
			post_chain(GUEST_RX, 1, &ta, &tl, &tf, k);
		} else if (k % 2 == 0) {
			len[0] = 3000;
			post_chain(GUEST_RX, 1, addr, len, flags, k);
		} else {
			post_chain(GUEST_RX, 2, addr, len, flags, k);
		}
	}
}

/* Frames on the guest's TX ring: the switch writes only used descriptors. */
static void
post_tx_frames(uint16_t first, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		uint32_t off = RAW_DATA_OFF + 0x90000 + (first + i) * 0x800;
		uint64_t addr = raw_gpa(off);
		uint32_t len = HDR + 200;
		uint16_t flags = 0;

		raw_fe_frame(&fe, off, HDR, 200);
		post_chain(GUEST_TX, 1, &addr, &len, &flags, (uint16_t)(first + i));
	}
}

/* Take what the guest sent; frames received. */
static unsigned int
poll_tx(void)
{
	struct rte_mbuf *pkts[32];
	unsigned int got = 0;

	for (int i = 0; i < 4; i++) {
		uint16_t n = hv_vhost_rx_burst(bad, 0, pkts, 32);

		got += n;
		rte_pktmbuf_free_bulk(pkts, n);
		hv_vhost_rx_done(bad, 0);
	}
	return got;
}

/*
 * Frames into the guest: short, MTU, one that fills a two-piece buffer,
 * 9000 bytes (mergeable: four buffers, num_buffers rewritten), chained
 * mbufs; together 12 of the 15 buffers.
 */
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

static void
every_write_logged(void)
{
	uint8_t *before = malloc(RAW_MEM_SIZE);
	unsigned int changed;

	ck_assert_ptr_nonnull(before);
	/* the rings' start with logging on stored our event flags: logged */
	ck_assert(off_logged(fe.used[GUEST_RX]));
	ck_assert(off_logged(fe.used[GUEST_TX]));
	post_rx_buffers();
	post_tx_frames(0, 16);
	memcpy(before, fe.mem, RAW_MEM_SIZE);
	/* what the frontend took so far: taken */
	memset(log_bits, 0, LOG_SIZE);

	ck_assert_uint_eq(deliver_frames(), 8);
	ck_assert_uint_eq(poll_tx(), 16);
	/* the kick toggles of a sleeping polling thread write the device event areas */
	ck_assert_int_eq(hv_vhost_vring_notify(bad, 0, HV_VHOST_TX, true), 0);
	ck_assert_int_eq(hv_vhost_vring_notify(bad, 0, HV_VHOST_RX, true), 0);

	changed = assert_changes_logged(before);
	/*
	 * the test means something: 12 buffers filled (header and frame pages,
	 * one continuation buffer's frame bytes alone), both descriptor rings,
	 * both event areas
	 */
	ck_assert_uint_eq(changed, 2 * 12 - 1 + 4);
	ck_assert_uint_ge(stats(HV_VHOST_TX).log_pages, 2 * 12 - 1 + 1);
	ck_assert_uint_ge(stats(HV_VHOST_RX).log_pages, 1);
	ck_assert_uint_ge(stats(HV_VHOST_TX).log_syncs, 1);
	ck_assert_uint_ge(stats(HV_VHOST_RX).log_syncs, 1);
	ck_assert_uint_eq(stats(HV_VHOST_TX).stops, 0);
	ck_assert_uint_eq(stats(HV_VHOST_RX).stops, 0);
	free(before);
}

START_TEST(every_write_logged_packed)
{
	start(0, true);
	every_write_logged();
}
END_TEST

/* In order: one used descriptor returns a batch of the guest's sends. */
START_TEST(every_write_logged_in_order)
{
	start(HV_VHOST_F_IN_ORDER, true);
	every_write_logged();
}
END_TEST

/* Negotiated without VHOST_F_LOG_ALL, a mapped log gets no bit; turned on, it does. */
START_TEST(log_off_logs_nothing)
{
	start(0, false);
	post_rx_buffers();
	post_tx_frames(0, 4);
	memset(log_bits, 0, LOG_SIZE);
	ck_assert_uint_eq(deliver_frames(), 8);
	ck_assert_uint_eq(poll_tx(), 4);
	ck_assert_int_eq(hv_vhost_vring_notify(bad, 0, HV_VHOST_RX, true), 0);
	ck_assert_uint_eq(bits_set(), 0);
	ck_assert_uint_eq(stats(HV_VHOST_TX).log_syncs, 0);
	ck_assert_uint_eq(stats(HV_VHOST_TX).log_pages, 0);
	ck_assert_uint_eq(stats(HV_VHOST_RX).log_pages, 0);
	set_features(features | RTE_BIT64(VHOST_USER_F_LOG_ALL));
	memset(log_bits, 0, LOG_SIZE);
	post_tx_frames(4, 1);
	ck_assert_uint_eq(poll_tx(), 1);
	ck_assert(off_logged(pring(GUEST_TX)));
	ck_assert_uint_eq(stats(HV_VHOST_RX).log_syncs, 1);
}
END_TEST

/*
 * What logging costs the packed path into the guest, in TSC cycles per 64 B
 * frame delivered in bursts of 32, logging off and on in alternate rounds
 * of a ring's worth (the log cleared before each, as the frontend's syncs
 * clear it). Printed, not asserted: doc/performance.rst quotes it.
 */
START_TEST(log_cost)
{
	enum {
		BURST = 32,
		ROUNDS = 100
	};
	uint64_t cycles[2] = {0, 0}, frames[2] = {0, 0};

	start(0, false);
	for (unsigned int r = 0; r < 2 * ROUNDS; r++) {
		int on = r & 1;

		set_features(features | (on ? RTE_BIT64(VHOST_USER_F_LOG_ALL) : 0));
		for (uint16_t i = 0; i < RAW_RING_SIZE; i++) {
			uint64_t addr = raw_gpa(RAW_DATA_OFF + i * 2048u);
			uint32_t len = 2048;
			uint16_t flags = VRING_DESC_F_WRITE;

			post_chain(GUEST_RX, 1, &addr, &len, &flags, i);
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
		"log cost (packed): 64 B frames into the guest, bursts of %d: %.1f cycles/frame "
		"with logging off, %.1f on (%+.0f %%)\n",
		BURST, (double)cycles[0] / frames[0], (double)cycles[1] / frames[1],
		100.0 * ((double)cycles[1] / frames[1] / ((double)cycles[0] / frames[0]) - 1));
}
END_TEST

static void *
suite(void)
{
	Suite *s = suite_create("migrate-log-packed");
	TCase *t = tcase_create("log");

	tcase_add_checked_fixture(t, NULL, teardown);
	tcase_set_timeout(t, 60);
	tcase_add_test(t, every_write_logged_packed);
	tcase_add_test(t, every_write_logged_in_order);
	tcase_add_test(t, log_off_logs_nothing);
	tcase_add_test(t, log_cost);
	suite_add_tcase(s, t);
	return s;
}

int
main(int argc, char **argv)
{
	return peer_run_suite(suite, argc, argv);
}
