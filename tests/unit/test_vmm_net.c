/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The VMM's virtio-net device (lib/vmm/virtio_net.c) on a real KVM VM whose
 * switch port is a fake vhost-user backend of this test: link changes are
 * configuration changes, a backend that drops a negotiated feature across a
 * reconnect gets the device NEEDS_RESET (once, no reconnect loop), and a
 * backend that stops answering never holds up a vCPU's register access. The
 * BAR is accessed as a vCPU's MMIO exit does (the MMIO bus, under the VM
 * lock); no vCPU runs. Skips (77) without /dev/kvm.
 */
#include <check.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <linux/virtio_config.h>
#include <linux/virtio_net.h>
#include <linux/virtio_pci.h>
#include <linux/virtio_ring.h>

#include "hv_vhost_user.h"
#include "virtio_pci.h"
#include "vmm_internal.h"

/* ---- the fake switch port ---- */

static struct {
	int lfd;
	char path[108];
	pthread_t thread;
	pthread_mutex_t lock;
	uint64_t features; /* offered */
	bool stall;        /* answer the features, then nothing */
	bool mute;         /* answer nothing at all */
	bool drop;         /* hang up the current connection */
	bool quit;
	unsigned int accepts;
	unsigned int kicks_set; /* SET_VRING_KICK messages seen */
	unsigned int unanswered;
	uint16_t queue_pairs; /* GET_QUEUE_NUM; 0: no MQ protocol feature */
	bool enabled[16];     /* SET_VRING_ENABLE, per vring */
} sw;

static uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void
sw_reply(int fd, const struct vhost_user_hdr *req, const void *payload, uint32_t size)
{
	struct vhost_user_msg r;

	memset(&r, 0, sizeof(r));
	r.hdr.request = req->request;
	r.hdr.flags = VHOST_USER_VERSION | VHOST_USER_REPLY_MASK;
	r.hdr.size = size;
	memcpy(&r.payload, payload, size);
	ck_assert_int_eq(send(fd, &r, sizeof(r.hdr), MSG_NOSIGNAL | MSG_MORE), sizeof(r.hdr));
	ck_assert_int_eq(send(fd, &r.payload, size, MSG_NOSIGNAL), size);
}

/* One request; false when the peer hung up. */
static bool
sw_serve(int fd)
{
	struct vhost_user_msg m;
	char ctrl[CMSG_SPACE(sizeof(int) * 8)];
	struct iovec iov = {.iov_base = &m.hdr, .iov_len = sizeof(m.hdr)};
	struct msghdr mh = {.msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = ctrl,
			    .msg_controllen = sizeof(ctrl)};
	struct cmsghdr *c;
	uint64_t u64;
	bool stall;

	if (recvmsg(fd, &mh, MSG_CMSG_CLOEXEC) != sizeof(m.hdr))
		return false;
	for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		int *fds = (int *)CMSG_DATA(c);
		size_t i, n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);

		for (i = 0; i < n; i++)
			close(fds[i]);
	}
	if (m.hdr.size > sizeof(m.payload) ||
	    (m.hdr.size && recv(fd, &m.payload, m.hdr.size, MSG_WAITALL) != m.hdr.size))
		return false;
	pthread_mutex_lock(&sw.lock);
	stall = sw.stall;
	if (sw.mute) {
		sw.unanswered++;
		pthread_mutex_unlock(&sw.lock);
		return true;
	}
	if (m.hdr.request == VHOST_USER_SET_VRING_KICK)
		sw.kicks_set++;
	if (m.hdr.request == VHOST_USER_SET_VRING_ENABLE && m.payload.state.index < 16)
		sw.enabled[m.payload.state.index] = m.payload.state.num;
	pthread_mutex_unlock(&sw.lock);
	switch (m.hdr.request) {
	case VHOST_USER_GET_FEATURES:
		pthread_mutex_lock(&sw.lock);
		u64 = sw.features;
		pthread_mutex_unlock(&sw.lock);
		sw_reply(fd, &m.hdr, &u64, 8);
		return true;
	case VHOST_USER_GET_PROTOCOL_FEATURES:
		u64 = 1ull << VHOST_USER_PROTOCOL_F_REPLY_ACK;
		if (sw.queue_pairs)
			u64 |= 1ull << VHOST_USER_PROTOCOL_F_MQ;
		sw_reply(fd, &m.hdr, &u64, 8);
		return true;
	case VHOST_USER_GET_QUEUE_NUM:
		u64 = sw.queue_pairs;
		sw_reply(fd, &m.hdr, &u64, 8);
		return true;
	default:
		break;
	}
	if (stall) {
		pthread_mutex_lock(&sw.lock);
		sw.unanswered++;
		pthread_mutex_unlock(&sw.lock);
		return true;
	}
	if (m.hdr.request == VHOST_USER_GET_VRING_BASE) {
		sw_reply(fd, &m.hdr, &m.payload.state, sizeof(m.payload.state));
	} else if (m.hdr.flags & VHOST_USER_NEED_REPLY) {
		u64 = 0;
		sw_reply(fd, &m.hdr, &u64, 8);
	}
	return true;
}

static void *
sw_main(void *arg)
{
	int cfd = -1;

	(void)arg;
	for (;;) {
		struct pollfd p = {.fd = cfd >= 0 ? cfd : sw.lfd, .events = POLLIN};
		bool quit, drop;

		pthread_mutex_lock(&sw.lock);
		quit = sw.quit;
		drop = sw.drop;
		sw.drop = false;
		pthread_mutex_unlock(&sw.lock);
		if (quit)
			break;
		if (drop && cfd >= 0) {
			close(cfd);
			cfd = -1;
			continue;
		}
		if (poll(&p, 1, 10) != 1)
			continue;
		if (cfd < 0) {
			cfd = accept(sw.lfd, NULL, NULL);
			pthread_mutex_lock(&sw.lock);
			sw.accepts++;
			pthread_mutex_unlock(&sw.lock);
		} else if (!sw_serve(cfd)) {
			close(cfd);
			cfd = -1;
		}
	}
	if (cfd >= 0)
		close(cfd);
	return NULL;
}

#define FEAT_FULL                                                                                  \
	((1ull << VIRTIO_F_VERSION_1) | (1ull << VIRTIO_RING_F_EVENT_IDX) |                        \
	 (1ull << VHOST_USER_F_PROTOCOL_FEATURES))

static struct hv_vm *vm;
static uint64_t bar;
static uint16_t setup_pairs; /* the fake port's queue pairs for the next VM */

static void
setup(void)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct hv_vm_config cfg;
	uint32_t bdf;

	memset(&sw, 0, sizeof(sw));
	pthread_mutex_init(&sw.lock, NULL);
	sw.features = FEAT_FULL | (setup_pairs ? 1ull << VIRTIO_NET_F_MQ : 0);
	sw.queue_pairs = setup_pairs;
	snprintf(sw.path, sizeof(sw.path), "/tmp/test_vmm_net.%d.sock", (int)getpid());
	unlink(sw.path);
	strcpy(sa.sun_path, sw.path);
	sw.lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ck_assert_int_ge(sw.lfd, 0);
	ck_assert_int_eq(bind(sw.lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ck_assert_int_eq(listen(sw.lfd, 4), 0);
	ck_assert_int_eq(pthread_create(&sw.thread, NULL, sw_main, NULL), 0);
	hv_vm_config_init(&cfg);
	cfg.name = "nettest";
	cfg.kernel = HV_VMM_BUILTIN_KERNEL;
	cfg.builtin_image = getenv("HVGUEST");
	cfg.port_socket = sw.path;
	cfg.console_fd = 2;
	vm = hv_vm_create(&cfg);
	ck_assert_msg(vm != NULL, "%s", hv_vmm_error());
	vmm_pci_virtio_location(vm, &bar, &bdf);
	ck_assert_uint_ne(bar, 0);
}

static void
teardown(void)
{
	hv_vm_destroy(vm);
	pthread_mutex_lock(&sw.lock);
	sw.quit = true;
	pthread_mutex_unlock(&sw.lock);
	pthread_join(sw.thread, NULL);
	close(sw.lfd);
	unlink(sw.path);
}

/* A vCPU's MMIO exit on the NIC's BAR. */
static uint32_t
rd(uint64_t off, uint32_t len)
{
	uint32_t v = 0;

	pthread_mutex_lock(&vm->lock);
	vmm_bus_access(&vm->mmio, bar + off, &v, len, false);
	pthread_mutex_unlock(&vm->lock);
	return v;
}

static void
wr(uint64_t off, uint32_t v, uint32_t len)
{
	pthread_mutex_lock(&vm->lock);
	vmm_bus_access(&vm->mmio, bar + off, &v, len, true);
	pthread_mutex_unlock(&vm->lock);
}

#define LINK (VIRTIO_BAR_DEVICE + offsetof(struct virtio_net_config, status))
#define GEN VIRTIO_PCI_COMMON_CFGGENERATION
#define PBA_CONFIG_BIT (1u << 2) /* config vector 2 */

static uint32_t
ecam_rd(uint32_t off, uint32_t len)
{
	uint32_t v = 0;

	pthread_mutex_lock(&vm->lock);
	vmm_bus_access(&vm->mmio, VMM_ECAM_BASE + (1u << 15) + off, &v, len, false);
	pthread_mutex_unlock(&vm->lock);
	return v;
}

/* MSI-X on, vector 2 the config vector, masked: a config interrupt shows in
 * the PBA. */
static void
config_vector_masked(void)
{
	uint32_t cap, ctrl = MSIX_CTRL_ENABLE;

	for (cap = ecam_rd(0x34, 1); cap && ecam_rd(cap, 1) != PCI_CAP_ID_MSIX;
	     cap = ecam_rd(cap + 1, 1))
		;
	ck_assert_uint_ne(cap, 0);
	pthread_mutex_lock(&vm->lock);
	vmm_bus_access(&vm->mmio, VMM_ECAM_BASE + (1u << 15) + cap + 2, &ctrl, 2, true);
	pthread_mutex_unlock(&vm->lock);
	wr(VIRTIO_BAR_MSIX_TABLE + 2 * 16, 0xfee00000, 4);
	wr(VIRTIO_BAR_MSIX_TABLE + 2 * 16 + 8, 0x40, 4);
	wr(VIRTIO_PCI_COMMON_MSIX, 2, 2);
	ck_assert_uint_eq(rd(VIRTIO_PCI_COMMON_MSIX, 2), 2);
}

/* Wait (5 s at most) until the 1-byte register at off, masked, reads want. */
static bool
wait_reg(uint64_t off, uint32_t mask, uint32_t want)
{
	uint64_t end = now_ms() + 5000;

	while (now_ms() < end) {
		if ((rd(off, 2) & mask) == want)
			return true;
		hv_vm_poll(vm, 1); /* as hvctl guest's loop does */
	}
	return false;
}

/* Up to DRIVER_OK with nq 256-entry queues in guest RAM, queue q at
 * 0x200000 + q * 0x10000 (descriptors, avail at + 0x4000, used at + 0x8000). */
static void
driver_ok_n(uint64_t features, unsigned int nq)
{
	unsigned int q;
	uint64_t base = 0x200000;

	wr(VIRTIO_PCI_COMMON_STATUS, 0, 1);
	ck_assert(wait_reg(VIRTIO_PCI_COMMON_STATUS, 0xff, 0));
	config_vector_masked();
	wr(VIRTIO_PCI_COMMON_STATUS, VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER, 1);
	wr(VIRTIO_PCI_COMMON_GFSELECT, 0, 4);
	wr(VIRTIO_PCI_COMMON_GF, (uint32_t)features, 4);
	wr(VIRTIO_PCI_COMMON_GFSELECT, 1, 4);
	wr(VIRTIO_PCI_COMMON_GF, (uint32_t)(features >> 32), 4);
	wr(VIRTIO_PCI_COMMON_STATUS, 0x0b, 1);
	ck_assert_uint_eq(rd(VIRTIO_PCI_COMMON_STATUS, 1), 0x0b);
	for (q = 0; q < nq; q++, base += 0x10000) {
		wr(VIRTIO_PCI_COMMON_Q_SELECT, q, 2);
		wr(VIRTIO_PCI_COMMON_Q_SIZE, 256, 2);
		wr(VIRTIO_PCI_COMMON_Q_DESCLO, (uint32_t)base, 4);
		wr(VIRTIO_PCI_COMMON_Q_AVAILLO, (uint32_t)base + 0x4000, 4);
		wr(VIRTIO_PCI_COMMON_Q_USEDLO, (uint32_t)base + 0x8000, 4);
		wr(VIRTIO_PCI_COMMON_Q_ENABLE, 1, 2);
	}
	wr(VIRTIO_PCI_COMMON_STATUS, 0x0f, 1);
}

static void
driver_ok(uint64_t features)
{
	driver_ok_n(features, 2);
}

static unsigned int
sw_get(unsigned int *field)
{
	unsigned int v;

	pthread_mutex_lock(&sw.lock);
	v = *field;
	pthread_mutex_unlock(&sw.lock);
	return v;
}

static bool
wait_sw(unsigned int *field, unsigned int want)
{
	uint64_t end = now_ms() + 5000;

	while (now_ms() < end) {
		if (sw_get(field) >= want)
			return true;
		hv_vm_poll(vm, 1);
	}
	return false;
}

/* A switch disconnect and reconnect: the link bit, config_generation and the
 * config interrupt follow each (virtio 1.2, 4.1.4.3.1, 4.1.5.3). */
START_TEST(net_link_change_notifies)
{
	uint32_t gen;

	config_vector_masked();
	ck_assert_uint_eq(rd(LINK, 2), VIRTIO_NET_S_LINK_UP);
	gen = rd(GEN, 1);
	ck_assert_uint_eq(rd(VIRTIO_BAR_MSIX_PBA, 4) & PBA_CONFIG_BIT, 0);
	pthread_mutex_lock(&sw.lock);
	sw.drop = true;
	pthread_mutex_unlock(&sw.lock);
	/* down and up: two changes, the interrupt held in the PBA */
	ck_assert(wait_sw(&sw.accepts, 2));
	ck_assert(wait_reg(GEN, 0xff, (gen + 2) & 0xff));
	ck_assert_uint_eq(rd(LINK, 2), VIRTIO_NET_S_LINK_UP);
	ck_assert_uint_eq(rd(VIRTIO_BAR_MSIX_PBA, 4) & PBA_CONFIG_BIT, PBA_CONFIG_BIT);
}
END_TEST

/* The switch comes back without a feature the driver negotiated: NEEDS_RESET
 * with a config interrupt, and no reconnect loop. */
START_TEST(net_feature_loss_needs_reset)
{
	uint32_t gen;
	uint64_t t0, f = (1ull << VIRTIO_F_VERSION_1) | (1ull << VIRTIO_RING_F_EVENT_IDX);

	driver_ok(f);
	ck_assert(wait_sw(&sw.kicks_set, 2)); /* rings started */
	ck_assert_uint_eq(rd(VIRTIO_PCI_COMMON_STATUS, 1), 0x0f);
	gen = rd(GEN, 1);
	pthread_mutex_lock(&sw.lock);
	sw.features = FEAT_FULL & ~(1ull << VIRTIO_RING_F_EVENT_IDX);
	sw.drop = true;
	pthread_mutex_unlock(&sw.lock);
	ck_assert(wait_reg(VIRTIO_PCI_COMMON_STATUS, VIRTIO_CONFIG_S_NEEDS_RESET,
			   VIRTIO_CONFIG_S_NEEDS_RESET));
	ck_assert_uint_ne(rd(GEN, 1), gen);
	ck_assert_uint_eq(rd(VIRTIO_BAR_MSIX_PBA, 4) & PBA_CONFIG_BIT, PBA_CONFIG_BIT);
	ck_assert_uint_eq(rd(LINK, 2), 0);        /* no traffic until the driver resets */
	for (t0 = now_ms(); now_ms() < t0 + 700;) /* three reconnect periods: none happens */
		hv_vm_poll(vm, 10);
	ck_assert_uint_eq(sw_get(&sw.accepts), 2);
	ck_assert_uint_eq(sw_get(&sw.kicks_set), 2);
	/* the reset driver renegotiates with what the switch offers now */
	driver_ok(1ull << VIRTIO_F_VERSION_1);
	ck_assert(wait_sw(&sw.kicks_set, 4));
	ck_assert_uint_eq(rd(VIRTIO_PCI_COMMON_STATUS, 1), 0x0f);
}
END_TEST

/* A switch that accepts and never answers: register accesses (DRIVER_OK,
 * reset, anything else) return at once; the reset completes when the
 * frontend gives up on the switch. */
START_TEST(net_stalled_switch_never_blocks_vcpus)
{
	uint64_t t0, worst = 0;
	unsigned int i;

	pthread_mutex_lock(&sw.lock);
	sw.stall = true;
	pthread_mutex_unlock(&sw.lock);
	t0 = now_ms();
	driver_ok(1ull << VIRTIO_F_VERSION_1);
	ck_assert_uint_lt(now_ms() - t0, 1000);
	ck_assert(wait_sw(&sw.unanswered, 1)); /* the frontend waits on the switch */
	for (i = 0; i < 200; i++) {
		uint64_t t = now_ms();

		uint8_t lsr = 0;

		ck_assert_uint_eq(rd(VIRTIO_BAR_DEVICE, 1), vm->cfg.mac[0]);
		wr(VIRTIO_PCI_COMMON_Q_SELECT, i & 1, 2);
		/* the UART: its line status says the transmitter is empty */
		pthread_mutex_lock(&vm->lock);
		vmm_bus_access(&vm->pio, 0x3f8 + 5, &lsr, 1, false);
		pthread_mutex_unlock(&vm->lock);
		ck_assert_uint_eq(lsr & 0x40, 0x40);
		if (now_ms() - t > worst)
			worst = now_ms() - t;
	}
	ck_assert_uint_lt(worst, 100);
	/* a reset is pending while the switch holds the rings: status non-zero */
	t0 = now_ms();
	wr(VIRTIO_PCI_COMMON_STATUS, 0, 1);
	ck_assert_uint_lt(now_ms() - t0, 100);
	ck_assert_uint_ne(rd(VIRTIO_PCI_COMMON_STATUS, 1), 0);
	ck_assert_uint_eq(sw_get(&sw.accepts), 1);
}
END_TEST

static bool
sw_enabled(unsigned int ring)
{
	bool on;

	pthread_mutex_lock(&sw.lock);
	on = sw.enabled[ring];
	pthread_mutex_unlock(&sw.lock);
	return on;
}

/* Wait until the fake's rings [0, 2 * pairs) are enabled and the rest of
 * [0, 2 * max) disabled. */
static bool
wait_pairs(unsigned int pairs, unsigned int max)
{
	uint64_t end = now_ms() + 5000;

	while (now_ms() < end) {
		unsigned int r;

		for (r = 0; r < 2 * max && sw_enabled(r) == (r < 2 * pairs); r++)
			;
		if (r == 2 * max)
			return true;
		hv_vm_poll(vm, 1);
	}
	return false;
}

/* Queue one VQ_PAIRS_SET on the control queue (queue 2 * max at its test
 * address), kick it, wait for the answer; returns the ack byte. */
static uint8_t
pairs_set(unsigned int max, uint16_t pairs, uint16_t *used_idx)
{
	uint64_t q = 0x200000 + 2ull * max * 0x10000, cmd = 0x300000;
	struct vring_desc *d = vmm_gpa_to_hva(vm, q, 0x4000);
	struct vring_avail *a = vmm_gpa_to_hva(vm, q + 0x4000, 0x1000);
	struct vring_used *u = vmm_gpa_to_hva(vm, q + 0x8000, 0x1000);
	uint8_t *c = vmm_gpa_to_hva(vm, cmd, 16);
	uint64_t end = now_ms() + 5000;
	uint16_t slot = a->idx % 256;

	c[0] = VIRTIO_NET_CTRL_MQ;
	c[1] = VIRTIO_NET_CTRL_MQ_VQ_PAIRS_SET;
	memcpy(c + 2, &pairs, 2);
	c[8] = 0xee;
	d[0] = (struct vring_desc){cmd, 2, VRING_DESC_F_NEXT, 1};
	d[1] = (struct vring_desc){cmd + 2, 2, VRING_DESC_F_NEXT, 2};
	d[2] = (struct vring_desc){cmd + 8, 1, VRING_DESC_F_WRITE, 0};
	a->ring[slot] = 0;
	__atomic_store_n(&a->idx, (uint16_t)(a->idx + 1), __ATOMIC_RELEASE);
	wr(VIRTIO_BAR_NOTIFY + 2 * max * VIRTIO_NOTIFY_MULT, 2 * max, 2);
	while (now_ms() < end && __atomic_load_n(&u->idx, __ATOMIC_ACQUIRE) == *used_idx)
		hv_vm_poll(vm, 1);
	ck_assert_uint_eq(u->idx, (uint16_t)(*used_idx + 1));
	ck_assert_uint_eq(u->ring[*used_idx % 256].id, 0);
	ck_assert_uint_eq(u->ring[*used_idx % 256].len, 1);
	(*used_idx)++;
	return c[8];
}

/* A port with 3 queue pairs: MQ and CTRL_VQ offered with max_virtqueue_pairs
 * 3; all six data rings handed to the switch, pair 0 alone enabled; the
 * control queue's VQ_PAIRS_SET (ethtool -L) enables and disables pairs. */
START_TEST(net_mq_ctrl_pairs_set)
{
	uint64_t f = (1ull << VIRTIO_F_VERSION_1) | (1ull << VIRTIO_NET_F_MQ) |
		     (1ull << VIRTIO_NET_F_CTRL_VQ);
	uint16_t used_idx = 0;

	wr(VIRTIO_PCI_COMMON_DFSELECT, 0, 4);
	ck_assert_uint_eq(rd(VIRTIO_PCI_COMMON_DF, 4) & (uint32_t)f, (uint32_t)f);
	ck_assert_uint_eq(
		rd(VIRTIO_BAR_DEVICE + offsetof(struct virtio_net_config, max_virtqueue_pairs), 2),
		3);
	ck_assert_uint_eq(rd(VIRTIO_PCI_COMMON_NUMQ, 2), 7);
	driver_ok_n(f, 7);
	ck_assert(wait_sw(&sw.kicks_set, 6));
	ck_assert(wait_pairs(1, 3));
	ck_assert_uint_eq(pairs_set(3, 3, &used_idx), VIRTIO_NET_OK);
	ck_assert(wait_pairs(3, 3));
	ck_assert_uint_eq(pairs_set(3, 2, &used_idx), VIRTIO_NET_OK);
	ck_assert(wait_pairs(2, 3));
	/* more than max_virtqueue_pairs, or none: refused, nothing changes */
	ck_assert_uint_eq(pairs_set(3, 4, &used_idx), VIRTIO_NET_ERR);
	ck_assert_uint_eq(pairs_set(3, 0, &used_idx), VIRTIO_NET_ERR);
	ck_assert(wait_pairs(2, 3));
	ck_assert_uint_eq(rd(VIRTIO_PCI_COMMON_STATUS, 1), 0x0f);
	ck_assert_uint_eq(sw_get(&sw.kicks_set), 6);
}
END_TEST

/* A switch that accepts a reconnect and never answers its first message:
 * destroying the VM does not wait for the message timeout. */
START_TEST(net_destroy_during_stalled_handshake)
{
	uint64_t t0;

	pthread_mutex_lock(&sw.lock);
	sw.mute = true;
	sw.drop = true;
	pthread_mutex_unlock(&sw.lock);
	ck_assert(wait_sw(&sw.accepts, 2));
	ck_assert(wait_sw(&sw.unanswered, 1)); /* GET_FEATURES, unanswered */
	t0 = now_ms();
	hv_vm_destroy(vm);
	vm = NULL;
	ck_assert_uint_lt(now_ms() - t0, 2000);
}
END_TEST

static void
setup_mq(void)
{
	setup_pairs = 3;
	setup();
	setup_pairs = 0;
}

int
main(void)
{
	Suite *s;
	TCase *tc;
	SRunner *sr;
	int failed;

	/* before anything is allocated: a skip under LeakSanitizer must not leak */
	if (access("/dev/kvm", R_OK | W_OK) != 0)
		return 77;
	s = suite_create("vmm_net");
	tc = tcase_create("kvm");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, net_link_change_notifies);
	tcase_add_test(tc, net_feature_loss_needs_reset);
	tcase_add_test(tc, net_stalled_switch_never_blocks_vcpus);
	tcase_add_test(tc, net_destroy_during_stalled_handshake);
	suite_add_tcase(s, tc);
	tc = tcase_create("kvm-mq");
	tcase_add_checked_fixture(tc, setup_mq, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, net_mq_ctrl_pairs_set);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
