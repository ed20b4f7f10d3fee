/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * virtio-pci modern transport (virtio 1.x, 4.1): common configuration, ISR,
 * device configuration and notification regions in BAR0, MSI-X table and PBA
 * in the same BAR. The device behind it gets a small ops table; what the
 * transport needs of KVM (the kick ioeventfds) goes through another, so that
 * all guest-facing register handling is pure (virtio_pci.c, unit-tested and
 * fuzzed without KVM) and only vmm_virtio_pci_init (virtio_pci_vm.c) touches
 * the VM.
 */
#ifndef VMM_VIRTIO_PCI_H
#define VMM_VIRTIO_PCI_H

#include <stdbool.h>
#include <stdint.h>

#include "msix.h"
#include "pci.h"

#define VMM_VIRTIO_MAX_QUEUES 9 /* virtio-net: 4 queue pairs and the control queue */

/* BAR0 layout */
#define VIRTIO_BAR_SIZE 0x8000
#define VIRTIO_BAR_COMMON 0x0000
#define VIRTIO_BAR_ISR 0x1000
#define VIRTIO_BAR_DEVICE 0x2000
#define VIRTIO_BAR_NOTIFY 0x3000
#define VIRTIO_NOTIFY_MULT 4
#define VIRTIO_BAR_MSIX_TABLE 0x4000
#define VIRTIO_BAR_MSIX_PBA 0x5000

struct vmm_virtio_queue {
	uint16_t size;
	uint16_t vector;
	bool enabled;
	uint64_t desc, avail, used;
};

struct vmm_virtio_ops {
	void (*config_read)(void *opaque, uint64_t off, void *data, uint32_t len);
	/* DRIVER_OK set (return false to fail the device: NEEDS_RESET) */
	bool (*driver_ok)(void *opaque);
	/* the driver wrote status 0: return true when the device is reset, false
	 * when that takes time (the backend still runs the rings); the device
	 * then calls vmm_virtio_pci_reset_done, and until then status reads
	 * non-zero and the driver waits (virtio 1.2, 4.1.4.3.2) */
	bool (*reset)(void *opaque);
	/* a queue's vector, or that vector's MSI-X state, changed */
	void (*vectors_changed)(void *opaque);
	bool (*vector_pending)(void *opaque, unsigned int vec);
};

/* What the transport asks of the VM: KVM in virtio_pci_vm.c, a fake in the
 * unit test and the fuzz target. */
struct vmm_virtio_host_ops {
	/* register (assign) or remove a kick eventfd on a guest-physical
	 * address, any write width; 0 or -1 */
	int (*ioeventfd)(void *ctx, int fd, uint64_t addr, bool assign);
	/* BAR0 decodes at base from now on (the MMIO region moves there) */
	void (*bar_moved)(void *ctx, uint64_t base);
	/* send an MSI (the configuration change interrupt); NULL: none */
	void (*signal_msi)(void *ctx, uint64_t addr, uint32_t data);
	/* signal a kick eventfd (a notify written through the PCI_CFG window,
	 * which no ioeventfd sees); NULL: dropped */
	void (*kick)(void *ctx, int fd);
};

struct hv_vm;
struct vmm_region;

struct vmm_virtio_pci {
	struct hv_vm *vm;              /* vmm_virtio_pci_init only: NULL when set up pure */
	struct vmm_region *bar_region; /* likewise */
	struct vmm_pci_dev pci;
	struct vmm_msix msix;
	int msix_cap;
	int pcicfg_cap; /* VIRTIO_PCI_CAP_PCI_CFG: BAR0 through config space */
	const struct vmm_virtio_host_ops *host;
	void *host_ctx;
	int kickfd[VMM_VIRTIO_MAX_QUEUES];         /* -1: none */
	uint64_t kick_addr[VMM_VIRTIO_MAX_QUEUES]; /* where it is registered; 0: nowhere */
	uint64_t device_features;
	uint64_t driver_features;
	uint32_t dfselect, gfselect;
	uint8_t status;
	uint8_t generation;
	uint8_t isr;         /* VIRTIO_PCI_ISR_CONFIG until read */
	bool config_pending; /* config interrupt held while its vector is masked */
	bool resetting;      /* status 0 written, the device not reset yet */
	uint16_t qsel;
	uint16_t config_vector;
	uint16_t nqueues;
	uint16_t qsize_max;
	struct vmm_virtio_queue q[VMM_VIRTIO_MAX_QUEUES];
	const struct vmm_virtio_ops *ops;
	void *opaque;
};

/**
 * Set up the transport of a device with nqueues queues (at most
 * VMM_VIRTIO_MAX_QUEUES) of at most qsize_max entries, BAR0 at bar_addr, and
 * reset it. Pure: no KVM. Returns 0, or -1 when the capabilities do not fit.
 * All calls on v (and the register handlers) run under the VM's device lock.
 */
int vmm_virtio_pci_setup(struct vmm_virtio_pci *v, uint16_t device_id, uint16_t nqueues,
			 uint16_t qsize_max, uint32_t bar_addr, const struct vmm_virtio_ops *ops,
			 void *opaque, const struct vmm_virtio_host_ops *host, void *host_ctx);
/**
 * The same, on vm: BAR0 from the PCI window, an MMIO region for it, the
 * function at 00:slot.0, KVM ioeventfds for the kicks. Returns 0 or -1 (with
 * hv_vmm_error() set).
 */
int vmm_virtio_pci_init(struct vmm_virtio_pci *v, struct hv_vm *vm, unsigned int slot,
			uint16_t device_id, uint16_t nqueues, uint16_t qsize_max,
			const struct vmm_virtio_ops *ops, void *opaque);
/**
 * Register fd as queue q's kick eventfd on its notify address; the transport
 * moves it with BAR0. The caller keeps fd open while the transport lives.
 * Returns 0 or -1 (the host's ioeventfd failed, or no such queue).
 */
int vmm_virtio_pci_set_kickfd(struct vmm_virtio_pci *v, unsigned int q, int fd);
/* Guest-physical notify address of queue q. */
uint64_t vmm_virtio_notify_addr(const struct vmm_virtio_pci *v, unsigned int q);
/* BAR0 accesses, off relative to BAR0 and off + len within it, len 1 to 8;
 * data zeroed by the caller for reads (as the MMIO bus does). */
void vmm_virtio_pci_bar_read(void *v, uint64_t off, void *data, uint32_t len);
void vmm_virtio_pci_bar_write(void *v, uint64_t off, const void *data, uint32_t len);
/**
 * The device configuration changed (virtio 1.2, 4.1.4.3.1 and 4.1.5.3):
 * bump config_generation, set the ISR bit and send the configuration change
 * interrupt on the config vector (held in the PBA while it is masked, sent
 * on unmask). Under the device lock.
 */
void vmm_virtio_pci_config_changed(struct vmm_virtio_pci *v);
/**
 * The device can no longer run (2.1.2): set NEEDS_RESET and, once the driver
 * set DRIVER_OK, notify it (a configuration change). Under the device lock.
 */
void vmm_virtio_pci_needs_reset(struct vmm_virtio_pci *v);
/** A reset the device's reset op deferred is complete: status reads 0. */
void vmm_virtio_pci_reset_done(struct vmm_virtio_pci *v);
/* For a device's config_read: [off, off + len) of its config image img of
 * img_len bytes; nothing is copied when that is not all inside. */
void
vmm_virtio_config_copy(const void *img, uint32_t img_len, uint64_t off, void *data, uint32_t len);

#endif
