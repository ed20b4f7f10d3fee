/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MSI-X table and PBA emulation (pure: unit-tested without KVM). The device
 * owning the table is told whenever a vector's message or effective mask
 * changes, and answers which vectors have an interrupt pending.
 */
#ifndef VMM_MSIX_H
#define VMM_MSIX_H

#include <stdbool.h>
#include <stdint.h>

#define MSIX_MAX_VECTORS 32
#define MSIX_ENTRY_SIZE 16
#define MSIX_CTRL_ENABLE 0x8000
#define MSIX_CTRL_FMASK 0x4000
#define MSIX_NO_VECTOR 0xffff

struct vmm_msix_entry {
	uint32_t addr_lo;
	uint32_t addr_hi;
	uint32_t data;
	uint32_t ctrl; /* bit 0: masked */
};

struct vmm_msix {
	unsigned int nvec;
	struct vmm_msix_entry e[MSIX_MAX_VECTORS];
	bool enabled;   /* message control: MSI-X enable */
	bool fn_masked; /* message control: function mask */
	/* a vector's message or effective mask changed */
	void (*update)(void *opaque, unsigned int vec);
	/* whether an interrupt is held for a masked vector (the PBA bit) */
	bool (*pending)(void *opaque, unsigned int vec);
	void *opaque;
};

/* nvec vectors, all masked (as after reset). */
void vmm_msix_init(struct vmm_msix *m, unsigned int nvec, void (*update)(void *, unsigned int),
		   bool (*pending)(void *, unsigned int), void *opaque);
/* Table accesses (len 4 or 8, naturally aligned; others read as zero / are ignored). */
void vmm_msix_table_read(struct vmm_msix *m, uint64_t off, void *data, uint32_t len);
void vmm_msix_table_write(struct vmm_msix *m, uint64_t off, const void *data, uint32_t len);
void vmm_msix_pba_read(struct vmm_msix *m, uint64_t off, void *data, uint32_t len);
/* The capability's message control was written. */
void vmm_msix_control(struct vmm_msix *m, uint16_t ctrl);
/* Whether vec cannot be delivered now (disabled, function-masked, masked, no such vector). */
bool vmm_msix_masked(const struct vmm_msix *m, unsigned int vec);
/* The message of vec. */
uint64_t vmm_msix_addr(const struct vmm_msix *m, unsigned int vec);
uint32_t vmm_msix_data(const struct vmm_msix *m, unsigned int vec);
/* Table size in bytes, PBA size in bytes. */
#define MSIX_TABLE_BYTES(n) ((n)*MSIX_ENTRY_SIZE)
#define MSIX_PBA_BYTES(n) ((((n) + 63) / 64) * 8)

#endif
