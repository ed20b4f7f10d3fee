/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * virtio-pci modern transport (virtio 1.x, 4.1): common configuration, ISR,
 * device configuration and notification regions in BAR0, MSI-X table and PBA
 * in the same BAR. The device behind it gets a small ops table.
 */
#ifndef VMM_VIRTIO_PCI_H
#define VMM_VIRTIO_PCI_H

#include <stdbool.h>
#include <stdint.h>

#include "msix.h"
#include "pci.h"

#define VIRTIO_PCI_MAX_QUEUES 4

/* BAR0 layout */
#define VIRTIO_BAR_SIZE 0x8000
#define VIRTIO_BAR_COMMON 0x0000
#define VIRTIO_BAR_ISR 0x1000
#define VIRTIO_BAR_DEVICE 0x2000
#define VIRTIO_BAR_NOTIFY 0x3000
#define VIRTIO_NOTIFY_MULT 4
#define VIRTIO_BAR_MSIX_TABLE 0x4000
#define VIRTIO_BAR_MSIX_PBA 0x5000

/* device status bits */
#define VIRTIO_STATUS_ACK 1
#define VIRTIO_STATUS_DRIVER 2
#define VIRTIO_STATUS_DRIVER_OK 4
#define VIRTIO_STATUS_FEATURES_OK 8
#define VIRTIO_STATUS_NEEDS_RESET 0x40
#define VIRTIO_STATUS_FAILED 0x80

struct vmm_virtio_queue {
	uint16_t size;
	uint16_t vector;
	bool enabled;
	uint64_t desc, avail, used;
};

struct vmm_virtio_ops {
	void (*config_read)(void *opaque, uint64_t off, void *data, uint32_t len);
	/* FEATURES_OK accepted, DRIVER_OK set (return false to fail the device),
	 * or reset (status 0) */
	bool (*driver_ok)(void *opaque);
	void (*reset)(void *opaque);
	/* a queue's vector, or that vector's MSI-X state, changed */
	void (*vectors_changed)(void *opaque);
	bool (*vector_pending)(void *opaque, unsigned int vec);
	/* the notification region moved (BAR reprogrammed) */
	void (*notify_moved)(void *opaque, uint64_t old_base, uint64_t new_base);
};

struct hv_vm;

struct vmm_virtio_pci {
	struct hv_vm *vm;
	struct vmm_pci_dev pci;
	struct vmm_msix msix;
	int msix_cap;
	struct vmm_region *bar_region;
	uint64_t device_features;
	uint64_t driver_features;
	uint32_t dfselect, gfselect;
	uint8_t status;
	uint8_t generation;
	uint16_t qsel;
	uint16_t config_vector;
	uint16_t nqueues;
	uint16_t qsize_max;
	struct vmm_virtio_queue q[VIRTIO_PCI_MAX_QUEUES];
	const struct vmm_virtio_ops *ops;
	void *opaque;
};

int vmm_virtio_pci_init(struct vmm_virtio_pci *v, struct hv_vm *vm, unsigned int slot,
			uint16_t device_id, uint16_t nqueues, uint16_t qsize_max,
			const struct vmm_virtio_ops *ops, void *opaque);
/* Guest-physical notify address of queue q. */
uint64_t vmm_virtio_notify_addr(const struct vmm_virtio_pci *v, unsigned int q);

#endif
