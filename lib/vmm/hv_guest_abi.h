/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The contract between the VMM and its built-in test guest (lib/vmm/guest):
 * where the VMM puts the guest, the boot-info block it writes for it, and the
 * registers of the small "test device" the guest reports through.
 *
 * Freestanding: only <stdint.h>, so that the guest image includes it too.
 */
#ifndef HV_GUEST_ABI_H
#define HV_GUEST_ABI_H

#ifdef __ASSEMBLER__
#define HV_U64(x) x
#else
#include <stdint.h>
#define HV_U64(x) x##ull
#endif

/** Guest-physical address the flat guest image is loaded at (and entered). */
#define HV_GUEST_LOAD_ADDR HV_U64(0x100000)
/** Guest-physical address of struct hv_guest_info. */
#define HV_GUEST_INFO_ADDR HV_U64(0x6000)
/** "HVGI" */
#define HV_GUEST_INFO_MAGIC 0x49475648u

/** Base of the test device's MMIO page (no memslot: every access exits). */
#define HV_TESTDEV_BASE HV_U64(0xfeb00000)
/** Write the guest-physical address of a NUL-terminated line: printed on the console. */
#define HV_TESTDEV_LINE 0x00
/** Write an exit status: the VM stops, "guest finished (status N)". */
#define HV_TESTDEV_EXIT 0x08
/** Write a mark number: the VMM logs the vCPUs' KVM statistics under it. */
#define HV_TESTDEV_MARK 0x10
/** Write the address of an exception frame (after the vector): the VMM prints it. */
#define HV_TESTDEV_FAULT 0x18

/** The xAPIC page (the in-kernel LAPIC answers there). */
#define HV_GUEST_LAPIC_BASE HV_U64(0xfee00000)
/** Virtual alias of the 2 MiB page holding it, mapped by the VMM below 2 GiB. */
#define HV_GUEST_LAPIC_ALIAS HV_U64(0x7fe00000)
/** Offset of the xAPIC page inside that alias. */
#define HV_GUEST_LAPIC_IN_ALIAS (HV_GUEST_LAPIC_BASE & HV_U64(0x1fffff))

#ifndef __ASSEMBLER__
/** Boot information the VMM writes at HV_GUEST_INFO_ADDR before the first vCPU runs. */
struct hv_guest_info {
	uint32_t magic;      /**< HV_GUEST_INFO_MAGIC */
	uint32_t ncpus;      /**< vCPUs (only the first runs the test) */
	uint64_t mem_size;   /**< bytes of RAM from 0 (below the PCI hole) */
	uint64_t tsc_khz;    /**< TSC frequency, for timing at CPL3 */
	uint64_t ecam_base;  /**< PCI ECAM window (bus 0) */
	uint64_t virtio_bar; /**< BAR0 of the virtio-net device, 0 if none */
	uint32_t virtio_bdf; /**< its bus/device/function (ECAM offset >> 12) */
	uint8_t mac[6];      /**< its MAC address */
	uint16_t pad;
	char cmdline[512]; /**< the guest's command line, NUL-terminated */
};
#endif

#endif
