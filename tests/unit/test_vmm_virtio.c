/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the VMM's virtio parts (no KVM), linked into test_vmm: the
 * virtio-pci transport on a fake of KVM (kick ioeventfds following BAR0,
 * read-only capabilities, config-change interrupts, NEEDS_RESET, deferred
 * reset, the PCI_CFG window) and the virtio-net control queue on fake guest
 * memory.
 */
#include <check.h>
#include <stddef.h>
#include <string.h>

#include <linux/virtio_config.h>
#include <linux/virtio_net.h>
#include <linux/virtio_pci.h>
#include <linux/virtio_ring.h>

#include "msix.h"
#include "pci.h"
#include "test_vmm.h"
#include "virtio_net_ctrl.h"
#include "virtio_pci.h"

/* ---- virtio-pci transport: BAR moves and read-only capabilities ---- */

/* A fake of KVM's ioeventfd table: assigning a registered (fd, address) or
 * removing an unregistered one fails, as KVM_IOEVENTFD does. */
#define FAKE_EVENTFDS 8

static struct {
	int fd[FAKE_EVENTFDS];
	uint64_t addr[FAKE_EVENTFDS];
	unsigned int n;
	unsigned int refused;
	uint64_t region_base;
} kvm_fake;

static int
fake_ioeventfd(void *ctx, int fd, uint64_t addr, bool assign)
{
	unsigned int i;

	(void)ctx;
	for (i = 0; i < kvm_fake.n; i++)
		if (kvm_fake.fd[i] == fd && kvm_fake.addr[i] == addr)
			break;
	if (assign ? i < kvm_fake.n || kvm_fake.n == FAKE_EVENTFDS : i == kvm_fake.n) {
		kvm_fake.refused++;
		return -1;
	}
	if (assign) {
		kvm_fake.fd[kvm_fake.n] = fd;
		kvm_fake.addr[kvm_fake.n++] = addr;
	} else {
		kvm_fake.fd[i] = kvm_fake.fd[--kvm_fake.n];
		kvm_fake.addr[i] = kvm_fake.addr[kvm_fake.n];
	}
	return 0;
}

static void
fake_bar_moved(void *ctx, uint64_t base)
{
	(void)ctx;
	kvm_fake.region_base = base;
}

static struct {
	unsigned int n;
	uint64_t addr;
	uint32_t data;
	int kicked_fd;
} msi_fake;

static void
fake_signal_msi(void *ctx, uint64_t addr, uint32_t data)
{
	(void)ctx;
	msi_fake.n++;
	msi_fake.addr = addr;
	msi_fake.data = data;
}

static void
fake_kick(void *ctx, int fd)
{
	(void)ctx;
	msi_fake.kicked_fd = fd;
}

static const struct vmm_virtio_host_ops fake_host = {
	.ioeventfd = fake_ioeventfd,
	.bar_moved = fake_bar_moved,
	.signal_msi = fake_signal_msi,
	.kick = fake_kick,
};

static bool
fake_registered(int fd, uint64_t addr)
{
	unsigned int i;

	for (i = 0; i < kvm_fake.n; i++)
		if (kvm_fake.fd[i] == fd && kvm_fake.addr[i] == addr)
			return true;
	return false;
}

static void
dev_config_read(void *opaque, uint64_t off, void *data, uint32_t len)
{
	static const uint8_t img[6] = {0x52, 0x54, 0, 0x12, 0x34, 0x56};

	(void)opaque;
	vmm_virtio_config_copy(img, sizeof(img), off, data, len);
}

static bool
dev_driver_ok(void *opaque)
{
	(void)opaque;
	return true;
}

/* a device whose reset takes time while dev_busy (a backend still running
 * the rings) */
static bool dev_busy;
static unsigned int dev_resets;

static bool
dev_reset(void *opaque)
{
	(void)opaque;
	dev_resets++;
	return !dev_busy;
}

static const struct vmm_virtio_ops fake_dev = {
	.config_read = dev_config_read,
	.driver_ok = dev_driver_ok,
	.reset = dev_reset,
};

#define BAR0 0xc0000000u
#define KICK0 100

static void
virtio_fake_setup(struct vmm_virtio_pci *v)
{
	memset(&kvm_fake, 0, sizeof(kvm_fake));
	memset(&msi_fake, 0, sizeof(msi_fake));
	msi_fake.kicked_fd = -1;
	dev_busy = false;
	dev_resets = 0;
	ck_assert_int_eq(
		vmm_virtio_pci_setup(v, 1, 2, 256, BAR0, &fake_dev, NULL, &fake_host, NULL), 0);
	ck_assert_int_eq(vmm_virtio_pci_set_kickfd(v, 0, KICK0), 0);
	ck_assert_int_eq(vmm_virtio_pci_set_kickfd(v, 1, KICK0 + 1), 0);
	kvm_fake.region_base = BAR0; /* where the VM would put the region */
}

/* Exactly the two kicks at base + notify, and no refused KVM call. */
static void
assert_kicks_at(uint64_t base)
{
	ck_assert_uint_eq(kvm_fake.n, 2);
	ck_assert(fake_registered(KICK0, base + VIRTIO_BAR_NOTIFY));
	ck_assert(fake_registered(KICK0 + 1, base + VIRTIO_BAR_NOTIFY + VIRTIO_NOTIFY_MULT));
	ck_assert_uint_eq(kvm_fake.refused, 0);
	ck_assert_uint_eq(kvm_fake.region_base, base);
}

START_TEST(virtio_bar_sizing_moves_kicks)
{
	struct vmm_virtio_pci v;

	virtio_fake_setup(&v);
	assert_kicks_at(BAR0);
	/* Linux's sizing: all ones, read the size, put the address back */
	vmm_pci_cfg_write(&v.pci, 0x10, 0xffffffff, 4);
	ck_assert_uint_eq(vmm_pci_cfg_read(&v.pci, 0x10, 4), ~(uint32_t)(VIRTIO_BAR_SIZE - 1));
	vmm_pci_cfg_write(&v.pci, 0x10, BAR0, 4);
	assert_kicks_at(BAR0);
	/* sizing, then a new address: the kicks leave the old one, never the
	 * sizing pattern */
	vmm_pci_cfg_write(&v.pci, 0x10, 0xffffffff, 4);
	vmm_pci_cfg_write(&v.pci, 0x10, 0xd0000000, 4);
	assert_kicks_at(0xd0000000);
	ck_assert(!fake_registered(KICK0, BAR0 + VIRTIO_BAR_NOTIFY));
	ck_assert(!fake_registered(KICK0, 0xffff8000u + VIRTIO_BAR_NOTIFY));
	ck_assert_uint_eq(vmm_virtio_notify_addr(&v, 1),
			  0xd0000000u + VIRTIO_BAR_NOTIFY + VIRTIO_NOTIFY_MULT);
	/* sized in 16-bit halves, then moved with 16-bit writes */
	vmm_pci_cfg_write(&v.pci, 0x10, 0xffff, 2);
	vmm_pci_cfg_write(&v.pci, 0x12, 0xffff, 2);
	vmm_pci_cfg_write(&v.pci, 0x12, 0xe000, 2);
	vmm_pci_cfg_write(&v.pci, 0x10, 0x0000, 2);
	assert_kicks_at(0xe0000000);
	ck_assert_uint_eq(vmm_pci_bar_addr(&v.pci, 0), 0xe0000000);
}
END_TEST

START_TEST(virtio_caps_read_only)
{
	struct vmm_virtio_pci v;
	uint8_t before[PCI_CFG_SIZE];
	uint32_t off, len, o, cap = 0, caps = 0, mc;
	static const uint32_t vals[] = {0xffffffff, 0, 0x5a5a5a5a};

	virtio_fake_setup(&v);
	memcpy(before, v.pci.cfg, sizeof(before));
	/* every byte, every width, several values */
	for (len = 1; len <= 4; len *= 2)
		for (off = 0; off < PCI_CFG_SIZE; off += len)
			for (o = 0; o < 3; o++)
				if ((off < 0x10 || off >= 0x14) && /* not BAR0 */
				    (off < (uint32_t)v.pcicfg_cap ||
				     off >= (uint32_t)v.pcicfg_cap + 20)) /* nor the window */
					vmm_pci_cfg_write(&v.pci, off, vals[o], len);
	/* what stays: every byte but command, cache line, latency, interrupt
	 * line and MSI-X enable / function mask */
	for (o = 0; o < PCI_CFG_SIZE; o++) {
		uint8_t keep = 0xff;

		if (o == 0x04)
			keep = (uint8_t) ~(PCI_CMD_MEM | PCI_CMD_MASTER);
		else if (o == 0x05)
			keep = (uint8_t)~0x04;
		else if (o == 0x0c || o == 0x0d || o == 0x3c)
			keep = 0;
		else if (o == (uint32_t)v.msix_cap + 3)
			keep = 0x3f;
		ck_assert_msg((v.pci.cfg[o] & keep) == (before[o] & keep),
			      "byte 0x%x: 0x%x, was 0x%x", o, v.pci.cfg[o], before[o]);
	}
	/* the chain: MSI-X first, then the five virtio capabilities, ids and
	 * links as built */
	for (cap = vmm_pci_cfg_read(&v.pci, 0x34, 1); cap && caps < 64;
	     cap = vmm_pci_cfg_read(&v.pci, cap + 1, 1))
		caps++;
	ck_assert_uint_eq(caps, 6);
	ck_assert_uint_eq(vmm_pci_cfg_read(&v.pci, (uint32_t)v.msix_cap, 1), PCI_CAP_ID_MSIX);
	/* table size 3, table at 0x4000 and PBA at 0x5000 in BAR0 */
	mc = (uint32_t)v.msix_cap;
	ck_assert_uint_eq(vmm_pci_cfg_read(&v.pci, mc + 2, 2) & 0x7ff, 2);
	ck_assert_uint_eq(vmm_pci_cfg_read(&v.pci, mc + 4, 4), VIRTIO_BAR_MSIX_TABLE);
	ck_assert_uint_eq(vmm_pci_cfg_read(&v.pci, mc + 8, 4), VIRTIO_BAR_MSIX_PBA);
	ck_assert_uint_eq(v.msix.nvec, 3);
	/* the enable and function mask bits work, and alone */
	vmm_pci_cfg_write(&v.pci, mc + 2, 0xffff, 2);
	ck_assert_uint_eq(vmm_pci_cfg_read(&v.pci, mc + 2, 2),
			  MSIX_CTRL_ENABLE | MSIX_CTRL_FMASK | 2);
	ck_assert(v.msix.enabled && v.msix.fn_masked);
	vmm_pci_cfg_write(&v.pci, mc + 2, MSIX_CTRL_ENABLE, 2);
	ck_assert(v.msix.enabled && !v.msix.fn_masked);
	ck_assert_uint_eq(vmm_pci_cfg_read(&v.pci, mc + 2, 2), MSIX_CTRL_ENABLE | 2);
	assert_kicks_at(BAR0);
}
END_TEST

/* Program MSI-X vector vec (enabled, unmasked unless masked) and make it the
 * config vector. */
static void
config_vector(struct vmm_virtio_pci *v, unsigned int vec, bool masked)
{
	uint32_t w[4] = {0xfee00000, 0, 0x40 + vec, masked};
	uint16_t sel = (uint16_t)vec;

	vmm_virtio_pci_bar_write(v, VIRTIO_BAR_MSIX_TABLE + vec * 16, &w[0], 4);
	vmm_virtio_pci_bar_write(v, VIRTIO_BAR_MSIX_TABLE + vec * 16 + 8, &w[2], 4);
	vmm_virtio_pci_bar_write(v, VIRTIO_BAR_MSIX_TABLE + vec * 16 + 12, &w[3], 4);
	vmm_pci_cfg_write(&v->pci, (uint32_t)v->msix_cap + 2, MSIX_CTRL_ENABLE, 2);
	vmm_virtio_pci_bar_write(v, VIRTIO_PCI_COMMON_MSIX, &sel, 2);
}

static uint32_t
bar_rd(struct vmm_virtio_pci *v, uint64_t off, uint32_t len)
{
	uint32_t val = 0;

	vmm_virtio_pci_bar_read(v, off, &val, len);
	return val;
}

static void
bar_wr(struct vmm_virtio_pci *v, uint64_t off, uint32_t val, uint32_t len)
{
	vmm_virtio_pci_bar_write(v, off, &val, len);
}

/* 4.1.4.3.1 / 4.1.5.3: a config change bumps config_generation, sets the ISR
 * bit and sends the config vector's message; held while masked. */
START_TEST(virtio_config_change_irq)
{
	struct vmm_virtio_pci v;
	uint32_t gen;

	virtio_fake_setup(&v);
	config_vector(&v, 2, false);
	gen = bar_rd(&v, VIRTIO_PCI_COMMON_CFGGENERATION, 1);
	vmm_virtio_pci_config_changed(&v);
	ck_assert_uint_eq(bar_rd(&v, VIRTIO_PCI_COMMON_CFGGENERATION, 1), (gen + 1) & 0xff);
	ck_assert_uint_eq(msi_fake.n, 1);
	ck_assert_uint_eq(msi_fake.addr, 0xfee00000);
	ck_assert_uint_eq(msi_fake.data, 0x42);
	ck_assert_uint_eq(bar_rd(&v, VIRTIO_BAR_ISR, 1), VIRTIO_PCI_ISR_CONFIG);
	ck_assert_uint_eq(bar_rd(&v, VIRTIO_BAR_ISR, 1), 0); /* read-to-clear */
	/* masked: pending in the PBA, sent once on unmask */
	config_vector(&v, 2, true);
	vmm_virtio_pci_config_changed(&v);
	ck_assert_uint_eq(msi_fake.n, 1);
	ck_assert_uint_eq(bar_rd(&v, VIRTIO_BAR_MSIX_PBA, 4), 1u << 2);
	bar_wr(&v, VIRTIO_BAR_MSIX_TABLE + 2 * 16 + 12, 0, 4);
	ck_assert_uint_eq(msi_fake.n, 2);
	ck_assert_uint_eq(bar_rd(&v, VIRTIO_BAR_MSIX_PBA, 4), 0);
	ck_assert_uint_eq(bar_rd(&v, VIRTIO_PCI_COMMON_CFGGENERATION, 1), (gen + 2) & 0xff);
}
END_TEST

/* 2.1.2: NEEDS_RESET after DRIVER_OK comes with a config interrupt, stays
 * until reset, and a device whose reset takes time reads non-zero status
 * until it is done. */
START_TEST(virtio_needs_reset_notifies)
{
	struct vmm_virtio_pci v;

	virtio_fake_setup(&v);
	config_vector(&v, 2, false);
	v.device_features = 1ull << VIRTIO_F_VERSION_1;
	bar_wr(&v, VIRTIO_PCI_COMMON_STATUS, VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER,
	       1);
	vmm_virtio_pci_needs_reset(&v); /* before DRIVER_OK: the bit, no interrupt */
	ck_assert(bar_rd(&v, VIRTIO_PCI_COMMON_STATUS, 1) & VIRTIO_CONFIG_S_NEEDS_RESET);
	ck_assert_uint_eq(msi_fake.n, 0);
	bar_wr(&v, VIRTIO_PCI_COMMON_STATUS, 0, 1);
	ck_assert_uint_eq(bar_rd(&v, VIRTIO_PCI_COMMON_STATUS, 1), 0);
	config_vector(&v, 2, false);
	bar_wr(&v, VIRTIO_PCI_COMMON_GFSELECT, 1, 4);
	bar_wr(&v, VIRTIO_PCI_COMMON_GF, 1, 4);
	bar_wr(&v, VIRTIO_PCI_COMMON_STATUS, 0x0b, 1);
	bar_wr(&v, VIRTIO_PCI_COMMON_STATUS, 0x0f, 1);
	ck_assert_uint_eq(bar_rd(&v, VIRTIO_PCI_COMMON_STATUS, 1), 0x0f);
	vmm_virtio_pci_needs_reset(&v);
	ck_assert_uint_eq(bar_rd(&v, VIRTIO_PCI_COMMON_STATUS, 1),
			  0x0f | VIRTIO_CONFIG_S_NEEDS_RESET);
	ck_assert_uint_eq(msi_fake.n, 1);
	ck_assert_uint_eq(msi_fake.data, 0x42);
	/* the driver cannot clear it */
	bar_wr(&v, VIRTIO_PCI_COMMON_STATUS, 0x0f, 1);
	ck_assert(bar_rd(&v, VIRTIO_PCI_COMMON_STATUS, 1) & VIRTIO_CONFIG_S_NEEDS_RESET);
	/* a reset the device needs time for */
	dev_busy = true;
	bar_wr(&v, VIRTIO_PCI_COMMON_STATUS, 0, 1);
	ck_assert_uint_ne(bar_rd(&v, VIRTIO_PCI_COMMON_STATUS, 1), 0);
	bar_wr(&v, VIRTIO_PCI_COMMON_STATUS, VIRTIO_CONFIG_S_ACKNOWLEDGE, 1); /* ignored */
	ck_assert_uint_eq(dev_resets, 2);
	vmm_virtio_pci_reset_done(&v);
	ck_assert_uint_eq(bar_rd(&v, VIRTIO_PCI_COMMON_STATUS, 1), 0);
	ck_assert_uint_eq(bar_rd(&v, VIRTIO_PCI_COMMON_MSIX, 2), MSIX_NO_VECTOR);
}
END_TEST

/* 4.1.4.9: VIRTIO_PCI_CAP_PCI_CFG, and BAR0 through its window. */
START_TEST(virtio_pci_cfg_window)
{
	struct vmm_virtio_pci v;
	uint32_t c, d;
	struct vmm_pci_dev *p;

	virtio_fake_setup(&v);
	p = &v.pci;
	c = (uint32_t)v.pcicfg_cap;
	ck_assert_int_gt(v.pcicfg_cap, 0);
	d = c + offsetof(struct virtio_pci_cfg_cap, pci_cfg_data);
	ck_assert_uint_eq(vmm_pci_cfg_read(p, c, 1), PCI_CAP_ID_VNDR);
	ck_assert_uint_eq(vmm_pci_cfg_read(p, c + 2, 1), sizeof(struct virtio_pci_cfg_cap));
	ck_assert_uint_eq(vmm_pci_cfg_read(p, c + 3, 1), VIRTIO_PCI_CAP_PCI_CFG);
	/* read: the device config (the MAC) */
	vmm_pci_cfg_write(p, c + 4, 0, 1);
	vmm_pci_cfg_write(p, c + 8, VIRTIO_BAR_DEVICE, 4);
	vmm_pci_cfg_write(p, c + 12, 4, 4);
	ck_assert_uint_eq(vmm_pci_guest_read(p, d, 4), 0x12005452);
	vmm_pci_cfg_write(p, c + 8, VIRTIO_BAR_DEVICE + 4, 4);
	vmm_pci_cfg_write(p, c + 12, 2, 4);
	ck_assert_uint_eq(vmm_pci_guest_read(p, d, 2), 0x5634);
	/* write: the driver's status and a queue select land in the registers */
	vmm_pci_cfg_write(p, c + 8, VIRTIO_PCI_COMMON_STATUS, 4);
	vmm_pci_cfg_write(p, c + 12, 1, 4);
	vmm_pci_cfg_write(p, d, VIRTIO_CONFIG_S_ACKNOWLEDGE, 1);
	ck_assert_uint_eq(v.status, VIRTIO_CONFIG_S_ACKNOWLEDGE);
	ck_assert_uint_eq(vmm_pci_guest_read(p, d, 1), VIRTIO_CONFIG_S_ACKNOWLEDGE);
	vmm_pci_cfg_write(p, c + 8, VIRTIO_PCI_COMMON_Q_SELECT, 4);
	vmm_pci_cfg_write(p, c + 12, 2, 4);
	vmm_pci_cfg_write(p, d, 1, 2);
	ck_assert_uint_eq(v.qsel, 1);
	/* a notify through the window reaches the queue's kick eventfd */
	vmm_pci_cfg_write(p, c + 8, VIRTIO_BAR_NOTIFY + VIRTIO_NOTIFY_MULT, 4);
	vmm_pci_cfg_write(p, d, 1, 2);
	ck_assert_int_eq(msi_fake.kicked_fd, KICK0 + 1);
	/* misaligned, another BAR, or a bad length: nothing happens */
	vmm_pci_cfg_write(p, c + 8, VIRTIO_PCI_COMMON_STATUS + 1, 4);
	vmm_pci_cfg_write(p, c + 12, 2, 4);
	vmm_pci_cfg_write(p, d, 0, 2);
	ck_assert_uint_eq(v.status, VIRTIO_CONFIG_S_ACKNOWLEDGE);
	vmm_pci_cfg_write(p, c + 8, VIRTIO_PCI_COMMON_STATUS, 4);
	vmm_pci_cfg_write(p, c + 12, 3, 4);
	vmm_pci_cfg_write(p, d, 0, 1);
	vmm_pci_cfg_write(p, c + 12, 1, 4);
	vmm_pci_cfg_write(p, c + 4, 1, 1);
	vmm_pci_cfg_write(p, d, 0, 1);
	ck_assert_uint_eq(v.status, VIRTIO_CONFIG_S_ACKNOWLEDGE);
	ck_assert_uint_eq(vmm_pci_guest_read(p, d, 4), 0);
}
END_TEST

/* ---- the virtio-net control queue, on fake guest memory ---- */

static uint8_t cq_mem[1 << 16] __attribute__((aligned(4096)));

static void *
cq_gpa(void *ctx, uint64_t gpa, uint64_t len)
{
	(void)ctx;
	return gpa <= sizeof(cq_mem) && len <= sizeof(cq_mem) - gpa ? cq_mem + gpa : NULL;
}

#define CQ_DESC 0x0000
#define CQ_AVAIL 0x1000
#define CQ_USED 0x2000
#define CQ_BUF 0x3000
#define CQ_SIZE 16

static struct vring_desc *const cq_desc = (struct vring_desc *)(cq_mem + CQ_DESC);
static struct vring_avail *const cq_avail = (struct vring_avail *)(cq_mem + CQ_AVAIL);
static struct vring_used *const cq_used = (struct vring_used *)(cq_mem + CQ_USED);

/* Queue a command at head: class, command and body in one readable
 * descriptor (or split in two), the ack in a writable one. */
static void
cq_post(uint16_t head, uint8_t cls, uint8_t cmd, const void *body, uint32_t len, bool split)
{
	uint8_t *b = cq_mem + CQ_BUF + head * 256;

	b[0] = cls;
	b[1] = cmd;
	memcpy(b + 2, body, len);
	b[200] = 0xee;
	if (split) {
		cq_desc[head] = (struct vring_desc){CQ_BUF + head * 256u, 2, VRING_DESC_F_NEXT,
						    (uint16_t)(head + 1)};
		cq_desc[head + 1] = (struct vring_desc){CQ_BUF + head * 256u + 2, len,
							VRING_DESC_F_NEXT, (uint16_t)(head + 2)};
		cq_desc[head + 2] =
			(struct vring_desc){CQ_BUF + head * 256u + 200, 1, VRING_DESC_F_WRITE, 0};
	} else {
		cq_desc[head] = (struct vring_desc){CQ_BUF + head * 256u, 2 + len,
						    VRING_DESC_F_NEXT, (uint16_t)(head + 1)};
		cq_desc[head + 1] =
			(struct vring_desc){CQ_BUF + head * 256u + 200, 1, VRING_DESC_F_WRITE, 0};
	}
	cq_avail->ring[cq_avail->idx % CQ_SIZE] = head;
	cq_avail->idx++;
}

static uint8_t
cq_ack(uint16_t head)
{
	return cq_mem[CQ_BUF + head * 256 + 200];
}

/* VQ_PAIRS_SET within [1, max] is taken and acked OK; anything else is
 * answered VIRTIO_NET_ERR and changes nothing; indirect tables work; a ring
 * that lies (a head out of range, a loop) is left alone. */
START_TEST(net_ctrl_pairs_set)
{
	struct vmm_net_ctrlq cq;
	uint16_t p;
	uint8_t junk[70] = {0};

	memset(cq_mem, 0, sizeof(cq_mem));
	vmm_net_ctrl_init(&cq, CQ_SIZE, CQ_DESC, CQ_AVAIL, CQ_USED, 4, cq_gpa, NULL);
	ck_assert_uint_eq(cq.pairs, 1);
	ck_assert_uint_eq(vmm_net_ctrl_process(&cq), 0);
	p = 3;
	cq_post(0, VIRTIO_NET_CTRL_MQ, VIRTIO_NET_CTRL_MQ_VQ_PAIRS_SET, &p, 2, false);
	ck_assert_uint_eq(vmm_net_ctrl_process(&cq), 1);
	ck_assert_uint_eq(cq.pairs, 3);
	ck_assert_uint_eq(cq_ack(0), VIRTIO_NET_OK);
	ck_assert_uint_eq(cq_used->idx, 1);
	ck_assert_uint_eq(cq_used->ring[0].id, 0);
	ck_assert_uint_eq(cq_used->ring[0].len, 1);
	/* as Linux sends it: header and body in separate descriptors */
	p = 4;
	cq_post(2, VIRTIO_NET_CTRL_MQ, VIRTIO_NET_CTRL_MQ_VQ_PAIRS_SET, &p, 2, true);
	/* refused: too many, none, another command, a short body, too long */
	p = 5;
	cq_post(5, VIRTIO_NET_CTRL_MQ, VIRTIO_NET_CTRL_MQ_VQ_PAIRS_SET, &p, 2, false);
	p = 0;
	cq_post(7, VIRTIO_NET_CTRL_MQ, VIRTIO_NET_CTRL_MQ_VQ_PAIRS_SET, &p, 2, false);
	p = 2;
	cq_post(9, VIRTIO_NET_CTRL_RX, VIRTIO_NET_CTRL_RX_PROMISC, &p, 1, false);
	cq_post(11, VIRTIO_NET_CTRL_MQ, VIRTIO_NET_CTRL_MQ_VQ_PAIRS_SET, &p, 1, false);
	ck_assert_uint_eq(vmm_net_ctrl_process(&cq), 5);
	ck_assert_uint_eq(cq.pairs, 4);
	ck_assert_uint_eq(cq_ack(2), VIRTIO_NET_OK);
	ck_assert_uint_eq(cq_ack(5), VIRTIO_NET_ERR);
	ck_assert_uint_eq(cq_ack(7), VIRTIO_NET_ERR);
	ck_assert_uint_eq(cq_ack(9), VIRTIO_NET_ERR);
	ck_assert_uint_eq(cq_ack(11), VIRTIO_NET_ERR);
	ck_assert_uint_eq(cq_used->idx, 6);
	ck_assert_uint_eq(cq_used->ring[5].id, 11);
	cq_post(13, VIRTIO_NET_CTRL_MQ, VIRTIO_NET_CTRL_MQ_VQ_PAIRS_SET, junk, sizeof(junk), false);
	ck_assert_uint_eq(vmm_net_ctrl_process(&cq), 1);
	ck_assert_uint_eq(cq_ack(13), VIRTIO_NET_ERR);
	ck_assert_uint_eq(cq.pairs, 4);
	/* an indirect table (Linux uses one when INDIRECT_DESC is negotiated) */
	p = 2;
	cq_post(0, VIRTIO_NET_CTRL_MQ, VIRTIO_NET_CTRL_MQ_VQ_PAIRS_SET, &p, 2, true);
	memcpy(cq_mem + 0x8000, cq_desc, 3 * sizeof(struct vring_desc));
	cq_desc[0] = (struct vring_desc){0x8000, 3 * sizeof(struct vring_desc),
					 VRING_DESC_F_INDIRECT, 0};
	ck_assert_uint_eq(vmm_net_ctrl_process(&cq), 1);
	ck_assert_uint_eq(cq.pairs, 2);
	ck_assert_uint_eq(cq_ack(0), VIRTIO_NET_OK);
	/* a descriptor loop: broken, no used entry, nothing more processed */
	cq_desc[3] = (struct vring_desc){CQ_BUF, 2, VRING_DESC_F_NEXT, 4};
	cq_desc[4] = (struct vring_desc){CQ_BUF, 2, VRING_DESC_F_NEXT, 3};
	cq_avail->ring[cq_avail->idx % CQ_SIZE] = 3;
	cq_avail->idx++;
	ck_assert_uint_eq(vmm_net_ctrl_process(&cq), 0);
	ck_assert(cq.broken);
	ck_assert_uint_eq(cq_used->idx, 8);
	p = 1;
	cq_post(5, VIRTIO_NET_CTRL_MQ, VIRTIO_NET_CTRL_MQ_VQ_PAIRS_SET, &p, 2, false);
	ck_assert_uint_eq(vmm_net_ctrl_process(&cq), 0);
	ck_assert_uint_eq(cq.pairs, 2);
	/* a head out of range, an avail index ahead by more than the ring */
	vmm_net_ctrl_init(&cq, CQ_SIZE, CQ_DESC, CQ_AVAIL, CQ_USED, 4, cq_gpa, NULL);
	memset(cq_mem, 0, CQ_BUF);
	cq_avail->ring[0] = CQ_SIZE;
	cq_avail->idx = 1;
	ck_assert_uint_eq(vmm_net_ctrl_process(&cq), 0);
	ck_assert(cq.broken);
	vmm_net_ctrl_init(&cq, CQ_SIZE, CQ_DESC, CQ_AVAIL, CQ_USED, 4, cq_gpa, NULL);
	cq_avail->idx = CQ_SIZE + 1;
	ck_assert_uint_eq(vmm_net_ctrl_process(&cq), 0);
	ck_assert(cq.broken);
	/* rings outside memory */
	vmm_net_ctrl_init(&cq, CQ_SIZE, sizeof(cq_mem) - 8, CQ_AVAIL, CQ_USED, 4, cq_gpa, NULL);
	ck_assert_uint_eq(vmm_net_ctrl_process(&cq), 0);
	ck_assert(cq.broken);
	/* ring parts off their alignment (2.7): broken, nothing read or written */
	for (unsigned int k = 0; k < 3; k++) {
		memset(cq_mem, 0, CQ_BUF);
		p = 2;
		cq_post(0, VIRTIO_NET_CTRL_MQ, VIRTIO_NET_CTRL_MQ_VQ_PAIRS_SET, &p, 2, false);
		vmm_net_ctrl_init(&cq, CQ_SIZE, CQ_DESC + (k == 0 ? 8 : 0),
				  CQ_AVAIL + (k == 1 ? 1 : 0), CQ_USED + (k == 2 ? 2 : 0), 4,
				  cq_gpa, NULL);
		ck_assert_uint_eq(vmm_net_ctrl_process(&cq), 0);
		ck_assert(cq.broken);
		ck_assert_uint_eq(cq.pairs, 1);
	}
}
END_TEST

void
vmm_virtio_tests(TCase *tc)
{
	tcase_add_test(tc, virtio_bar_sizing_moves_kicks);
	tcase_add_test(tc, virtio_caps_read_only);
	tcase_add_test(tc, virtio_config_change_irq);
	tcase_add_test(tc, virtio_needs_reset_notifies);
	tcase_add_test(tc, virtio_pci_cfg_window);
	tcase_add_test(tc, net_ctrl_pairs_set);
}
