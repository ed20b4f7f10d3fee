/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/vmm internals: the VM structure, the I/O buses devices hang on, and the
 * small interfaces between the files (one file per device or transport).
 */
#ifndef VMM_INTERNAL_H
#define VMM_INTERNAL_H

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>

#include <linux/kvm.h>

#include "cpuid.h"
#include "e820.h"
#include "hv_vmm.h"

/* Record a one-line error for hv_vmm_error(); returns -1. */
int vmm_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The same with ": strerror(errno)" appended. */
int vmm_err_errno(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- I/O buses (port I/O and MMIO exits to userspace) ---- */

struct vmm_io_ops {
	/* off is relative to the region's base; len is 1, 2, 4 or 8 */
	void (*read)(void *opaque, uint64_t off, void *data, uint32_t len);
	void (*write)(void *opaque, uint64_t off, const void *data, uint32_t len);
};

struct vmm_region {
	uint64_t base;
	uint64_t len; /* 0: unused slot */
	const struct vmm_io_ops *ops;
	void *opaque;
};

#define VMM_BUS_REGIONS 32

struct vmm_bus {
	struct vmm_region r[VMM_BUS_REGIONS];
};

/* Add a region; returns it (to move it later) or NULL when the bus is full. */
struct vmm_region *vmm_bus_add(struct vmm_bus *bus, uint64_t base, uint64_t len,
			       const struct vmm_io_ops *ops, void *opaque);
/* Dispatch an access; false when nothing is there (reads then see all ones). */
bool vmm_bus_access(struct vmm_bus *bus, uint64_t addr, void *data, uint32_t len, bool is_write);

/* ---- counters the VMM keeps per vCPU ---- */

enum vmm_exit_kind {
	VMM_EXIT_IO,
	VMM_EXIT_MMIO,
	VMM_EXIT_INTR,
	VMM_EXIT_OTHER,
	VMM_EXIT_KINDS,
};

struct vmm_vcpu {
	struct hv_vm *vm;
	unsigned int index;
	int fd;
	int stats_fd; /* KVM_GET_STATS_FD, -1 until first read */
	struct kvm_run *run;
	pthread_t thread;
	bool started;
	uint64_t exits[VMM_EXIT_KINDS]; /* KVM_RUN returns by kind (relaxed atomics) */
	int rip_wanted; /* set by a reader, cleared by the vCPU thread after sampling */
	uint64_t rip;   /* the guest RIP of the last sample (hv_vm_vcpu_stats) */
};

/* ---- devices ---- */

struct vmm_serial;
struct vmm_pci;
struct vmm_virtio_net;

#define VMM_MAX_FDS 16

struct vmm_fd_hook {
	int fd;
	hv_vm_fd_cb cb;
	void *opaque;
};

/* Guest-physical layout. */
#define VMM_LOW_MEM_MAX 0xb0000000ull /* RAM below this, the rest above 4 GiB */
#define VMM_ECAM_BASE 0xb0000000ull   /* bus 0 only: 1 MiB */
#define VMM_ECAM_SIZE 0x100000ull
#define VMM_PCI_MMIO_BASE 0xc0000000ull /* BARs are allocated from here */
#define VMM_PCI_MMIO_END 0xfeafffffu    /* up to the test device (the DSDT's window) */
#define VMM_HIGH_MEM_BASE 0x100000000ull

/* First GSI handed to MSI routes (0..23 are the IOAPIC's pins). */
#define VMM_GSI_MSI_BASE 24
#define VMM_MAX_GSI 64

struct hv_vm {
	struct hv_vm_config cfg; /* strings below are our own copies */
	char *name, *kernel, *initrd, *cmdline, *builtin_image, *port_socket, *cpu_mask;

	int kvm_fd;
	int vm_fd;
	int mem_fd;
	uint8_t *mem; /* all of RAM, mapped once */
	uint64_t mem_size;
	uint64_t low_size; /* RAM at 0 */
	uint64_t tsc_khz;
	int vcpu_mmap_size;
	struct kvm_cpuid2 *cpuid;       /* what KVM supports */
	struct cpuid_policy cpu_policy; /* ncpus and the masked features */
	bool soft_cpl0;                 /* no VT-x/AMD-V: KVM emulates guest CPL0 */
	struct vmm_vcpu vcpus[HV_VMM_MAX_CPUS];

	/* Device state is touched by vCPU threads and the event loop: one lock. */
	pthread_mutex_t lock;
	struct vmm_bus pio;
	struct vmm_bus mmio;
	struct e820_table e820;
	struct vmm_serial *serial;
	struct vmm_pci *pci;
	struct vmm_virtio_net *net;
	bool builtin;

	/* GSI routing: the irqchip's pins plus our MSI routes */
	struct kvm_irq_routing_entry msi_routes[VMM_MAX_GSI];
	bool msi_used[VMM_MAX_GSI];

	/* console */
	void (*console_tap)(void *opaque, const void *buf, size_t len);
	void *console_tap_opaque;

	/* event loop */
	int epoll_fd;
	int stop_efd;
	struct vmm_fd_hook hooks[VMM_MAX_FDS];
	volatile int stopping;
	char exit_reason[160];
	int exit_status;
};

/* guest memory: a host pointer for [gpa, gpa + len), or NULL when not all RAM */
void *vmm_gpa_to_hva(struct hv_vm *vm, uint64_t gpa, uint64_t len);

/* console output (serial, test device): to the log fd and the tap */
void vmm_console_write(struct hv_vm *vm, const void *buf, size_t len);

/* MSI routes: a GSI bound to an MSI message; 0 or -1 */
int vmm_msi_route_alloc(struct hv_vm *vm);
void vmm_msi_route_free(struct hv_vm *vm, int gsi);
int vmm_msi_route_set(struct hv_vm *vm, int gsi, uint64_t addr, uint32_t data);
/* push the whole routing table to KVM */
int vmm_routes_commit(struct hv_vm *vm);
int vmm_irqfd(struct hv_vm *vm, int fd, int gsi, bool assign);
int vmm_ioeventfd(struct hv_vm *vm, int fd, uint64_t addr, bool assign);
int vmm_signal_msi(struct hv_vm *vm, uint64_t addr, uint32_t data);
int vmm_irq_line(struct hv_vm *vm, unsigned int irq, int level);

/* vcpu.c */
int vmm_cpu_policy_init(struct hv_vm *vm);
int vmm_vcpu_create(struct hv_vm *vm, unsigned int index);
int vmm_vcpu_start(struct vmm_vcpu *vcpu);
void vmm_vcpu_kick_all(struct hv_vm *vm);
void vmm_vcpu_join_all(struct hv_vm *vm);
int vmm_vcpu_set_long_mode(struct vmm_vcpu *vcpu, uint64_t rip, uint64_t rsp, uint64_t rsi,
			   bool builtin);
/* flat 32-bit protected mode, paging off (the PVH entry), EBX = rbx */
int vmm_vcpu_set_protected_mode(struct vmm_vcpu *vcpu, uint32_t eip, uint32_t ebx);

/* x86_boot.c: identity page tables and a boot GDT in low memory */
#define VMM_BOOT_GDT 0x500ull
#define VMM_BOOT_PML4 0x9000ull
int vmm_boot_tables(struct hv_vm *vm);

/* boot_linux.c / builtin.c: load the kernel, set up vCPU 0 */
int vmm_boot_linux(struct hv_vm *vm);
int vmm_boot_builtin(struct hv_vm *vm);

/* serial.c */
struct vmm_serial *vmm_serial_create(struct hv_vm *vm, uint16_t port, unsigned int irq);
/* queue console input; returns the bytes taken (the FIFO holds 1 KiB) */
size_t vmm_serial_input(struct vmm_serial *s, const void *buf, size_t len);
void vmm_serial_free(struct vmm_serial *s);

/* legacy.c: i8042 reset, port 0x80, PCI-unrelated legacy ports */
int vmm_legacy_init(struct hv_vm *vm);

/* acpi_pm.c: sleep control/status and reset registers, the power button */
int vmm_acpi_pm_init(struct hv_vm *vm);

/* testdev.c */
int vmm_testdev_init(struct hv_vm *vm);

/* vm.c: a one-line stats summary of every vCPU, for test marks */
void vmm_log_stats_mark(struct hv_vm *vm, uint64_t mark);

/* pci.c / virtio_net.c (M2) */
int vmm_pci_init(struct hv_vm *vm);
void vmm_pci_free(struct hv_vm *vm);
int vmm_virtio_net_init(struct hv_vm *vm);
void vmm_virtio_net_free(struct hv_vm *vm);
/* BAR0 and bus/device/function of the NIC (0 when there is none) */
int vmm_pci_virtio_location(struct hv_vm *vm, uint64_t *bar, uint32_t *bdf);

#endif
