/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * hvswitch's KVM VMM library: a VM with memfd memory, vCPU threads, the
 * in-kernel irqchip, a serial console, a PCI host bridge and a virtio-net-pci
 * device whose rings a vhost-user backend (hvswitch) serves.
 *
 * Depends on /dev/kvm only. Functions report failure with -1 (or NULL) and
 * leave a one-line reason in hv_vmm_error().
 */
#ifndef HV_VMM_H
#define HV_VMM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Most vCPUs a VM may have. */
#define HV_VMM_MAX_CPUS 64
/** Smallest memory a VM may have. */
#define HV_VMM_MIN_MEM (16ull << 20)
/** "Built-in test guest" as the kernel argument. */
#define HV_VMM_BUILTIN_KERNEL "builtin"
/** Entries per NIC queue by default, and the most a guest may use. */
#define HV_VMM_NET_QUEUE_SIZE 1024
/** Fewest entries per NIC queue a VM may offer. */
#define HV_VMM_NET_QUEUE_MIN 64
/** Fewest the built-in guest needs (its rings have 512 entries). */
#define HV_VMM_BUILTIN_QUEUE_MIN 512

/** What to build. Strings are copied by hv_vm_create(). */
struct hv_vm_config {
	const char *name;          /**< guest name (MAC derivation, messages) */
	uint64_t mem_size;         /**< bytes of RAM */
	unsigned int ncpus;        /**< vCPUs, 1..HV_VMM_MAX_CPUS */
	int pin[HV_VMM_MAX_CPUS];  /**< host CPU of each vCPU, -1: not pinned */
	bool hugepages;            /**< back memory with MFD_HUGETLB */
	int halt_poll_ns;          /**< KVM_CAP_HALT_POLL value, -1: KVM's default */
	const char *kernel;        /**< bzImage, ELF vmlinux or HV_VMM_BUILTIN_KERNEL */
	const char *initrd;        /**< NULL: none */
	const char *cmdline;       /**< kernel (or built-in guest) command line */
	const char *builtin_image; /**< path of the built-in guest's flat image */
	const char *port_socket;   /**< vhost-user socket of the switch port, NULL: no NIC */
	uint8_t mac[6];            /**< NIC MAC */
	bool mac_set;              /**< false: derived from the name */
	uint16_t mtu;              /**< offered MTU, 0: none */
	int console_fd;            /**< where console output is written, -1: nowhere */
	/** CPUID features hidden from the guest, comma-separated /proc/cpuinfo
	 * names (e.g. "cx16,popcnt"); NULL: none. Without hardware
	 * virtualisation (KVM emulates guest CPL0) the features that emulator
	 * cannot run are hidden as well. */
	const char *cpu_mask_features;
	/** Most entries per NIC queue (a power of 2, HV_VMM_NET_QUEUE_MIN..
	 * HV_VMM_NET_QUEUE_SIZE; 0: the latter). A Linux guest allocates and
	 * posts a receive buffer per entry: fewer boot faster where guest CPL0
	 * is emulated. */
	uint16_t net_queue_size;
};

/** A VM. */
struct hv_vm;

/** The last error of this thread, one line. */
const char *hv_vmm_error(void);

/** Defaults: 1 vCPU, 64 MiB, nothing pinned, halt polling left to KVM, no NIC. */
void hv_vm_config_init(struct hv_vm_config *cfg);

/**
 * Create a VM from cfg: memory, irqchip, devices, the kernel loaded, the
 * switch port connected (its features read). No vCPU runs yet.
 * @return the VM, or NULL (see hv_vmm_error())
 */
struct hv_vm *hv_vm_create(const struct hv_vm_config *cfg);

/**
 * Start the vCPU threads.
 * @return 0 or -1
 */
int hv_vm_start(struct hv_vm *vm);

/**
 * One round of the VMM's event loop (hooks added with hv_vm_add_fd(); the
 * switch port has a thread of its own): waits for events at most timeout_ms, and never more
 * than 100 ms (-1: 100 ms), so call it in a loop.
 * @return 1 when the VM has stopped, 0 otherwise, -1 on error
 */
int hv_vm_poll(struct hv_vm *vm, int timeout_ms);

/** Ask the VM to stop (any thread, async-signal-safe); reason is kept if first. */
void hv_vm_request_stop(struct hv_vm *vm, const char *reason);

/**
 * Press the guest's ACPI power button (a GED event notifying \_SB.PWRB): a
 * guest that handles it powers off, which stops the VM. Any thread.
 * @return 0 or -1
 */
int hv_vm_power_button(struct hv_vm *vm);

/** Whether the VM has stopped, and why (NULL while it runs). */
const char *hv_vm_exit_reason(const struct hv_vm *vm);

/** Exit status the guest asked for (the test device), or -1. */
int hv_vm_exit_status(const struct hv_vm *vm);

/** Stop vCPUs, disconnect, free everything. NULL is a no-op. */
void hv_vm_destroy(struct hv_vm *vm);

/** A callback on a file descriptor of the event loop (readable or hung up). */
typedef void (*hv_vm_fd_cb)(void *opaque, int fd);

/** Watch fd in the event loop. @return 0 or -1 */
int hv_vm_add_fd(struct hv_vm *vm, int fd, hv_vm_fd_cb cb, void *opaque);
/** Stop watching fd. */
void hv_vm_del_fd(struct hv_vm *vm, int fd);

/** Send bytes to the guest's serial port (console input); returns the bytes
 * its receive FIFO took (1 KiB at most waits there). */
size_t hv_vm_console_input(struct hv_vm *vm, const void *buf, size_t len);

/** Console output observer (e.g. attached console clients); NULL removes it. */
void hv_vm_set_console_tap(struct hv_vm *vm, void (*tap)(void *opaque, const void *buf, size_t len),
			   void *opaque);

/** Number of vCPUs. */
unsigned int hv_vm_ncpus(const struct hv_vm *vm);

/** One named statistic value. */
struct hv_vm_stat {
	char name[48];
	uint64_t value;
};

/**
 * Read a vCPU's KVM binary statistics (KVM_GET_STATS_FD) plus the VMM's own
 * counters (exits to userspace by reason), up to max entries.
 * @return entries written, or -1
 */
int hv_vm_vcpu_stats(struct hv_vm *vm, unsigned int cpu, struct hv_vm_stat *out, unsigned int max);

/** State of the NIC's vhost-user link: "none", "up", "down (reconnecting)". */
const char *hv_vm_net_state(const struct hv_vm *vm);
/** Features negotiated with the backend (0 before the driver is ready). */
uint64_t hv_vm_net_features(const struct hv_vm *vm);
/** The NIC's MAC address. */
void hv_vm_net_mac(const struct hv_vm *vm, uint8_t mac[6]);
/** Times the NIC reconnected to the switch. */
unsigned int hv_vm_net_reconnects(const struct hv_vm *vm);

/** One virtqueue of the NIC as the guest set it up. */
struct hv_vm_queue_stats {
	uint16_t size;   /**< entries, 0: not set up */
	uint16_t vector; /**< MSI-X vector (0xffff: none) */
	bool enabled;
	uint16_t avail_idx; /**< buffers the driver made available (mod 2^16) */
	uint16_t used_idx;  /**< buffers the switch used: packets (mod 2^16) */
};

/**
 * Read queue q of the NIC (0: receive, 1: transmit): its set-up and its
 * ring indices, from guest memory. Any thread.
 * @return 0, or -1 when there is no NIC or no such queue
 */
int hv_vm_net_queue_stats(struct hv_vm *vm, unsigned int q, struct hv_vm_queue_stats *st);

/** Derive a locally administered MAC (52:54:00:xx:xx:xx) from a name. */
void hv_vmm_mac_from_name(const char *name, uint8_t mac[6]);

#ifdef __cplusplus
}
#endif

#endif
