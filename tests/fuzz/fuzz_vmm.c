/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: the VMM's guest-facing registers (lib/vmm): PCI config
 * space (pci_cfg.c), the MSI-X table and PBA (msix.c), virtio-pci common and
 * device configuration (virtio_pci.c), on a two-queue virtio-net transport
 * whose KVM side (kick ioeventfds, the BAR's MMIO region) is a fake.
 *
 * Input: a sequence of 12-byte operations, as a guest would issue them:
 *   [kind][width][offset: le16][value: le64]
 *   kind & 0x80: a reset the device deferred completes after the operation;
 *   kind & 0x40: a configuration change (link) after it; kind & 0x30 == 0x30:
 *   the device sets NEEDS_RESET after it
 *   kind % 4   0: config read, 1: config write (offset & 0x1ff, so past the
 *              256 bytes too; length width % 9, 0 to 8, as the API may be
 *              called); 2: BAR0 read, 3: BAR0 write (offset % 0x8000, length
 *              1 + width % 8, moved down to end inside BAR0 as the MMIO bus
 *              guarantees; data: the value's low bytes)
 * A fresh device per input. After every operation the device is checked
 * against a model of what the guest may change:
 *   - config space: every byte outside command (memory, master, INTx
 *     disable), cache line, latency, interrupt line, MSI-X enable / function
 *     mask and BAR0's address bits is as built (ids, capability ids, links
 *     and bodies, MSI-X table size and table/PBA locations); BARs 1-5 read 0;
 *   - BAR0: decodes at the last address written that is not the sizing
 *     pattern; the fake KVM holds exactly one ioeventfd per queue, at that
 *     base's notify address, and refused no call (no removal of what was not
 *     registered, no double registration); the MMIO region is there too;
 *   - MSI-X: 3 vectors, state as message control says, reserved bits clear;
 *   - virtio: queue sizes powers of two within the maximum, vectors valid,
 *     FEATURES_OK only with a subset of the offer including VERSION_1; a
 *     config interrupt only on the config vector's message while unmasked;
 *     a notify through the PCI_CFG window only to a queue's kick eventfd;
 *   - reads: config reads return the bytes (or all ones outside); BAR reads
 *     write only their own bytes (an exact-size heap buffer), the notify area
 *     and the ISR area past its first byte read zero.
 * Then the same input, repeated to fill 16 KiB, is guest memory for the
 * virtio-net control queue (virtio_net_ctrl.c), its size and ring addresses
 * from the first bytes: every used entry lands inside the used ring, the
 * used index counts exactly the entries answered, and a broken ring stays
 * broken.
 * HV_FUZZ_LOG=1 prints every operation (to replay one input).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/virtio_config.h>

#include "hv_test_fuzz.h"
#include "virtio_net_ctrl.h"
#include "virtio_pci.h"

#define OP_SIZE 12
#define NQ 2
#define QSIZE_MAX 1024
#define BAR0 0xc0000000u
#define SIZING (~(uint32_t)(VIRTIO_BAR_SIZE - 1))
#define KICKFD 100
#define F_VERSION_1 (1ull << 32)

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool verbose;

/* ---- a fake of the VM: KVM's ioeventfd table and the MMIO region ---- */

#define MAX_REG 16

static struct {
	int fd[MAX_REG];
	uint64_t addr[MAX_REG];
	unsigned int n;
	unsigned int refused;
	uint64_t region_base;
} kvm;

static int
fake_ioeventfd(void *ctx, int fd, uint64_t addr, bool assign)
{
	unsigned int i;

	(void)ctx;
	for (i = 0; i < kvm.n; i++)
		if (kvm.fd[i] == fd && kvm.addr[i] == addr)
			break;
	if (assign ? i < kvm.n || kvm.n == MAX_REG : i == kvm.n) {
		kvm.refused++;
		return -1;
	}
	if (assign) {
		kvm.fd[kvm.n] = fd;
		kvm.addr[kvm.n++] = addr;
	} else {
		kvm.fd[i] = kvm.fd[--kvm.n];
		kvm.addr[i] = kvm.addr[kvm.n];
	}
	return 0;
}

static void
fake_bar_moved(void *ctx, uint64_t base)
{
	(void)ctx;
	kvm.region_base = base;
}

static struct vmm_virtio_pci *dev;

/* the config interrupt: only a vector's message, and only while it is unmasked */
static void
fake_signal_msi(void *ctx, uint64_t addr, uint32_t data)
{
	uint16_t vec = dev->config_vector;

	(void)ctx;
	FUZZ_ASSERT(vec < dev->msix.nvec && !vmm_msix_masked(&dev->msix, vec));
	FUZZ_ASSERT(addr == vmm_msix_addr(&dev->msix, vec) &&
		    data == vmm_msix_data(&dev->msix, vec));
}

/* a notify through the PCI_CFG window: one of the queues' kick eventfds */
static void
fake_kick(void *ctx, int fd)
{
	(void)ctx;
	FUZZ_ASSERT(fd >= KICKFD && fd < KICKFD + NQ);
}

static const struct vmm_virtio_host_ops host_ops = {
	.ioeventfd = fake_ioeventfd,
	.bar_moved = fake_bar_moved,
	.signal_msi = fake_signal_msi,
	.kick = fake_kick,
};

/* ---- a fake device: virtio-net's config image, no backend ---- */

/*
 * The checks run after every operation: without coverage instrumentation
 * (their branches are the model's, not the device's), or they would be most of
 * the target's time.
 */
#define NO_COVERAGE __attribute__((no_sanitize("coverage")))

static NO_COVERAGE void
check_vectors(const struct vmm_virtio_pci *v)
{
	unsigned int q;

	FUZZ_ASSERT(v->config_vector < v->msix.nvec || v->config_vector == MSIX_NO_VECTOR);
	for (q = 0; q < v->nqueues; q++)
		FUZZ_ASSERT(v->q[q].vector < v->msix.nvec || v->q[q].vector == MSIX_NO_VECTOR);
}

static void
dev_config_read(void *opaque, uint64_t off, void *data, uint32_t len)
{
	static const uint8_t img[12] = {0x52, 0x54, 0, 0x12, 0x34, 0x56, 1, 0, 1, 0, 0xdc, 5};

	(void)opaque;
	vmm_virtio_config_copy(img, sizeof(img), off, data, len);
}

static bool
dev_driver_ok(void *opaque)
{
	(void)opaque;
	return (dev->driver_features & 1) == 0; /* sometimes refuse, as a backend may */
}

static unsigned int resets;

/* Every other reset takes time (a backend stopping its rings): the device
 * finishes it on the next operation. */
static bool
dev_reset(void *opaque)
{
	(void)opaque;
	resets++;
	return resets & 1;
}

/* not static: the reads into it must not be optimised away */
uint64_t hv_fuzz_sink;

/* As virtio-net does: route each queue's unmasked vector to its message. */
static void
dev_vectors_changed(void *opaque)
{
	unsigned int q;

	(void)opaque;
	check_vectors(dev); /* what the device acts on must be valid when it is told */
	for (q = 0; q < dev->nqueues; q++) {
		uint16_t vec = dev->q[q].vector;

		if (vec != MSIX_NO_VECTOR && !vmm_msix_masked(&dev->msix, vec))
			hv_fuzz_sink +=
				vmm_msix_addr(&dev->msix, vec) + vmm_msix_data(&dev->msix, vec);
	}
}

static bool
dev_vector_pending(void *opaque, unsigned int vec)
{
	(void)opaque;
	FUZZ_ASSERT(vec < dev->msix.nvec);
	return vec & 1;
}

static const struct vmm_virtio_ops dev_ops = {
	.config_read = dev_config_read,
	.driver_ok = dev_driver_ok,
	.reset = dev_reset,
	.vectors_changed = dev_vectors_changed,
	.vector_pending = dev_vector_pending,
};

/* ---- the model ---- */

static uint8_t cfg0[PCI_CFG_SIZE]; /* config space as built */
static uint8_t ro[PCI_CFG_SIZE];   /* its read-only bits */
static uint32_t model_base;        /* where BAR0 must decode */

/* The bits of config byte o the guest may change. */
static uint8_t
writable(const struct vmm_virtio_pci *v, uint32_t o)
{
	if (o == 0x04)
		return PCI_CMD_MEM | PCI_CMD_MASTER;
	if (o == 0x05)
		return 0x04;
	if (o == 0x0c || o == 0x0d || o == 0x3c)
		return 0xff;
	if (o == 0x11)
		return 0x80; /* BAR0: address bits 15 and up */
	if (o == 0x12 || o == 0x13)
		return 0xff;
	if (o == (uint32_t)v->msix_cap + 3)
		return (MSIX_CTRL_ENABLE | MSIX_CTRL_FMASK) >> 8;
	/* the PCI_CFG window: bar, offset, length and data */
	if (o == (uint32_t)v->pcicfg_cap + 4 ||
	    (o >= (uint32_t)v->pcicfg_cap + 8 && o < (uint32_t)v->pcicfg_cap + 20))
		return 0xff;
	return 0;
}

static NO_COVERAGE void
check(const struct vmm_virtio_pci *v)
{
	uint64_t diff;
	uint32_t o, reg;
	uint16_t ctrl;
	unsigned int q;

	for (o = 0, diff = 0; o < PCI_CFG_SIZE; o += 8) {
		uint64_t now, was, keep;

		memcpy(&now, v->pci.cfg + o, 8);
		memcpy(&was, cfg0 + o, 8);
		memcpy(&keep, ro + o, 8);
		diff |= (now ^ was) & keep;
	}
	FUZZ_ASSERT(diff == 0);
	/* BAR0 and the kicks */
	reg = vmm_pci_cfg_read(&v->pci, 0x10, 4);
	if (reg != SIZING)
		model_base = reg;
	FUZZ_ASSERT(vmm_pci_bar_addr(&v->pci, 0) == model_base);
	FUZZ_ASSERT(kvm.refused == 0);
	FUZZ_ASSERT(kvm.n == NQ);
	for (q = 0; q < NQ; q++) {
		uint64_t at = (uint64_t)model_base + VIRTIO_BAR_NOTIFY + q * VIRTIO_NOTIFY_MULT;
		unsigned int i, hits = 0;

		for (i = 0; i < kvm.n; i++)
			hits += kvm.fd[i] == KICKFD + (int)q && kvm.addr[i] == at;
		FUZZ_ASSERT(hits == 1);
		FUZZ_ASSERT(vmm_virtio_notify_addr(v, q) == at);
	}
	FUZZ_ASSERT(kvm.region_base == model_base);
	/* MSI-X */
	memcpy(&ctrl, v->pci.cfg + v->msix_cap + 2, 2);
	FUZZ_ASSERT(v->msix.nvec == NQ + 1);
	FUZZ_ASSERT(v->msix.enabled == !!(ctrl & MSIX_CTRL_ENABLE));
	FUZZ_ASSERT(v->msix.fn_masked == !!(ctrl & MSIX_CTRL_FMASK));
	for (q = 0; q < MSIX_MAX_VECTORS; q++) {
		FUZZ_ASSERT(v->msix.e[q].ctrl <= 1);
		if (q >= v->msix.nvec)
			FUZZ_ASSERT(v->msix.e[q].addr_lo == 0 && v->msix.e[q].data == 0);
	}
	/* virtio */
	FUZZ_ASSERT(v->nqueues == NQ && v->qsize_max == QSIZE_MAX);
	for (q = 0; q < NQ; q++) {
		uint16_t s = v->q[q].size;

		FUZZ_ASSERT(s != 0 && s <= QSIZE_MAX && (s & (s - 1)) == 0);
	}
	check_vectors(v);
	FUZZ_ASSERT(!v->config_pending || v->config_vector < v->msix.nvec);
	if (v->status & VIRTIO_CONFIG_S_FEATURES_OK)
		FUZZ_ASSERT(!(v->driver_features & ~v->device_features) &&
			    (v->driver_features & F_VERSION_1));
}

static void
cfg_op(struct vmm_virtio_pci *v, bool wr, uint32_t off, uint32_t len, uint32_t val)
{
	uint32_t got, want = 0, i;

	if (wr) {
		vmm_pci_cfg_write(&v->pci, off, val, len);
		return;
	}
	got = vmm_pci_guest_read(&v->pci, off, len);
	if (len == 0 || len > 4 || off + len > PCI_CFG_SIZE)
		want = 0xffffffff;
	else
		for (i = 0; i < len; i++)
			want |= (uint32_t)v->pci.cfg[off + i] << (8 * i);
	FUZZ_ASSERT(got == want);
}

static void
bar_op(struct vmm_virtio_pci *v, bool wr, uint64_t off, uint32_t len, uint64_t val)
{
	uint8_t *buf = malloc(len); /* exact size: ASan sees a write past it */
	uint32_t i;

	FUZZ_ASSERT(buf != NULL);
	if (wr) {
		memcpy(buf, &val, len);
		vmm_virtio_pci_bar_write(v, off, buf, len);
	} else {
		memset(buf, 0, len); /* as the MMIO bus does */
		vmm_virtio_pci_bar_read(v, off, buf, len);
		if ((off > VIRTIO_BAR_ISR && off < VIRTIO_BAR_DEVICE) ||
		    (off >= VIRTIO_BAR_NOTIFY && off < VIRTIO_BAR_MSIX_TABLE))
			for (i = 0; i < len; i++)
				FUZZ_ASSERT(buf[i] == 0);
	}
	free(buf);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	verbose = getenv("HV_FUZZ_LOG") != NULL;
	return 0;
}

/* ---- the control queue ---- */

static uint8_t guest_mem[1 << 14];

static void *
ctrl_gpa(void *ctx, uint64_t gpa, uint64_t len)
{
	(void)ctx;
	return gpa <= sizeof(guest_mem) && len <= sizeof(guest_mem) - gpa ? guest_mem + gpa : NULL;
}

static void
fuzz_ctrlq(const uint8_t *data, size_t size)
{
	struct vmm_net_ctrlq cq;
	size_t i;
	uint16_t qsize;
	unsigned int round, done;

	if (size < 8)
		return;
	for (i = 0; i < sizeof(guest_mem); i += size)
		memcpy(guest_mem + i, data,
		       size < sizeof(guest_mem) - i ? size : sizeof(guest_mem) - i);
	qsize = (uint16_t)(1u << (data[0] % 9));
	/* ring addresses: mostly inside memory, sometimes at its end or past it */
	vmm_net_ctrl_init(&cq, qsize, (uint64_t)(data[1] | data[2] << 8),
			  (uint64_t)(data[3] | data[4] << 8) / 2,
			  (uint64_t)(data[5] | data[6] << 8), (uint16_t)(1 + data[7] % 8), ctrl_gpa,
			  NULL);
	for (round = 0; round < 2; round++) {
		uint16_t before = cq.used_idx;
		bool broken = cq.broken;

		done = vmm_net_ctrl_process(&cq);
		FUZZ_ASSERT((uint16_t)(cq.used_idx - before) == done);
		FUZZ_ASSERT(done <= qsize);
		FUZZ_ASSERT(!broken || (cq.broken && done == 0));
		FUZZ_ASSERT(cq.pairs >= 1 && cq.pairs <= cq.max_pairs);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vmm_virtio_pci *v = malloc(sizeof(*v));
	size_t p;
	unsigned int q;

	FUZZ_ASSERT(v != NULL);
	memset(&kvm, 0, sizeof(kvm));
	resets = 0;
	dev = v;
	FUZZ_ASSERT(vmm_virtio_pci_setup(v, 1, NQ, QSIZE_MAX, BAR0, &dev_ops, NULL, &host_ops,
					 NULL) == 0);
	v->device_features = F_VERSION_1 | 0x3fu; /* bit 0: the driver_ok refusal */
	for (q = 0; q < NQ; q++)
		FUZZ_ASSERT(vmm_virtio_pci_set_kickfd(v, q, KICKFD + (int)q) == 0);
	kvm.region_base = BAR0;
	model_base = BAR0;
	memcpy(cfg0, v->pci.cfg, sizeof(cfg0));
	for (p = 0; p < PCI_CFG_SIZE; p++)
		ro[p] = (uint8_t)~writable(v, (uint32_t)p);
	check(v);

	for (p = 0; p + OP_SIZE <= size; p += OP_SIZE) {
		const uint8_t *r = data + p;
		unsigned int kind = r[0] % 4;
		uint32_t off = (uint32_t)(r[2] | r[3] << 8), len;
		uint64_t val;

		memcpy(&val, r + 4, 8);
		if (kind < 2) {
			off &= 0x1ff;
			len = r[1] % 9;
		} else {
			off %= VIRTIO_BAR_SIZE;
			len = 1 + r[1] % 8;
			if (off + len > VIRTIO_BAR_SIZE)
				off = VIRTIO_BAR_SIZE - len;
		}
		if (verbose)
			fprintf(stderr, "%s %s off 0x%x len %u val 0x%llx\n",
				kind < 2 ? "cfg" : "bar", kind & 1 ? "write" : "read", off, len,
				(unsigned long long)val);
		if (kind < 2)
			cfg_op(v, kind & 1, off, len, (uint32_t)val);
		else
			bar_op(v, kind & 1, off, len, val);
		check(v);
		/* the device's side: a deferred reset completes, the config
		 * changes (link), the device fails */
		if (r[0] & 0x80)
			vmm_virtio_pci_reset_done(v);
		if (r[0] & 0x40)
			vmm_virtio_pci_config_changed(v);
		if ((r[0] & 0x30) == 0x30)
			vmm_virtio_pci_needs_reset(v);
		check(v);
	}
	free(v);
	fuzz_ctrlq(data, size);
	return 0;
}
