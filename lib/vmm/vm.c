/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The VM: /dev/kvm, memory (a memfd the switch can map too), the in-kernel
 * irqchip and PIT, GSI routing, the event loop of the VMM's main thread and
 * the VM's life cycle.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "vmm_internal.h"

static __thread char vmm_errbuf[256];

const char *
hv_vmm_error(void)
{
	return vmm_errbuf[0] ? vmm_errbuf : "no error";
}

int
vmm_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(vmm_errbuf, sizeof(vmm_errbuf), fmt, ap);
	va_end(ap);
	return -1;
}

int
vmm_err_errno(const char *fmt, ...)
{
	int e = errno;
	va_list ap;
	size_t n;

	va_start(ap, fmt);
	vsnprintf(vmm_errbuf, sizeof(vmm_errbuf), fmt, ap);
	va_end(ap);
	n = strlen(vmm_errbuf);
	snprintf(vmm_errbuf + n, sizeof(vmm_errbuf) - n, ": %s", strerror(e));
	errno = e;
	return -1;
}

void
hv_vm_config_init(struct hv_vm_config *cfg)
{
	unsigned int i;

	memset(cfg, 0, sizeof(*cfg));
	cfg->name = "guest";
	cfg->mem_size = 64ull << 20;
	cfg->ncpus = 1;
	for (i = 0; i < HV_VMM_MAX_CPUS; i++)
		cfg->pin[i] = -1;
	cfg->halt_poll_ns = -1;
	cfg->cmdline = "";
	cfg->console_fd = -1;
}

void
hv_vmm_mac_from_name(const char *name, uint8_t mac[6])
{
	uint32_t h = 2166136261u; /* FNV-1a */

	for (; *name; name++)
		h = (h ^ (uint8_t)*name) * 16777619u;
	mac[0] = 0x52;
	mac[1] = 0x54;
	mac[2] = 0x00;
	mac[3] = h >> 16;
	mac[4] = h >> 8;
	mac[5] = h;
}

/* ---- buses ---- */

struct vmm_region *
vmm_bus_add(struct vmm_bus *bus, uint64_t base, uint64_t len, const struct vmm_io_ops *ops,
	    void *opaque)
{
	unsigned int i;

	for (i = 0; i < VMM_BUS_REGIONS; i++) {
		if (bus->r[i].len == 0) {
			bus->r[i] = (struct vmm_region){base, len, ops, opaque};
			return &bus->r[i];
		}
	}
	return NULL;
}

bool
vmm_bus_access(struct vmm_bus *bus, uint64_t addr, void *data, uint32_t len, bool is_write)
{
	unsigned int i;

	for (i = 0; i < VMM_BUS_REGIONS; i++) {
		struct vmm_region *r = &bus->r[i];

		if (r->len == 0 || addr < r->base || addr - r->base + len > r->len)
			continue;
		if (is_write) {
			if (r->ops->write)
				r->ops->write(r->opaque, addr - r->base, data, len);
		} else {
			memset(data, 0, len);
			if (r->ops->read)
				r->ops->read(r->opaque, addr - r->base, data, len);
		}
		return true;
	}
	if (!is_write)
		memset(data, 0xff, len);
	return false;
}

/* ---- memory ---- */

void *
vmm_gpa_to_hva(struct hv_vm *vm, uint64_t gpa, uint64_t len)
{
	uint64_t high = vm->mem_size - vm->low_size;

	if (gpa + len < gpa)
		return NULL;
	if (gpa + len <= vm->low_size)
		return vm->mem + gpa;
	if (gpa >= VMM_HIGH_MEM_BASE && gpa + len <= VMM_HIGH_MEM_BASE + high)
		return vm->mem + vm->low_size + (gpa - VMM_HIGH_MEM_BASE);
	return NULL;
}

static int
vm_memory_init(struct hv_vm *vm)
{
	const uint64_t huge = 2ull << 20;
	unsigned int flags = MFD_CLOEXEC | (vm->cfg.hugepages ? MFD_HUGETLB : 0);
	struct kvm_userspace_memory_region slot;
	uint64_t size = vm->cfg.mem_size;

	if (vm->cfg.hugepages)
		size = (size + huge - 1) & ~(huge - 1);
	vm->mem_size = size;
	vm->low_size = size < VMM_LOW_MEM_MAX ? size : VMM_LOW_MEM_MAX;
	vm->mem_fd = memfd_create(vm->name, flags);
	if (vm->mem_fd < 0)
		return vmm_err_errno("memfd_create%s", vm->cfg.hugepages ? " (hugetlb)" : "");
	if (ftruncate(vm->mem_fd, (off_t)size) != 0)
		return vmm_err_errno("memory of %" PRIu64 " MiB", size >> 20);
	vm->mem =
		mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, vm->mem_fd, 0);
	if (vm->mem == MAP_FAILED) {
		vm->mem = NULL;
		return vmm_err_errno("mmap of guest memory");
	}
	/* With hugetlb, pages are taken at fault time: touch them now for a clear error. */
	if (vm->cfg.hugepages && fallocate(vm->mem_fd, 0, 0, (off_t)size) != 0)
		return vmm_err_errno("hugepages for %" PRIu64
				     " MiB (see /proc/sys/vm/nr_hugepages)",
				     size >> 20);
	memset(&slot, 0, sizeof(slot));
	slot.slot = 0;
	slot.guest_phys_addr = 0;
	slot.memory_size = vm->low_size;
	slot.userspace_addr = (uintptr_t)vm->mem;
	if (ioctl(vm->vm_fd, KVM_SET_USER_MEMORY_REGION, &slot) != 0)
		return vmm_err_errno("KVM_SET_USER_MEMORY_REGION");
	if (size > vm->low_size) {
		slot.slot = 1;
		slot.guest_phys_addr = VMM_HIGH_MEM_BASE;
		slot.memory_size = size - vm->low_size;
		slot.userspace_addr = (uintptr_t)(vm->mem + vm->low_size);
		if (ioctl(vm->vm_fd, KVM_SET_USER_MEMORY_REGION, &slot) != 0)
			return vmm_err_errno("KVM_SET_USER_MEMORY_REGION (high)");
	}
	return e820_build(&vm->e820, vm->low_size, size - vm->low_size, VMM_ECAM_BASE,
			  VMM_ECAM_SIZE) == 0
		       ? 0
		       : vmm_err("e820 map does not fit");
}

/* ---- irqchip and routing ---- */

static int
vm_irqchip_init(struct hv_vm *vm)
{
	struct kvm_pit_config pit = {.flags = 0};
	struct kvm_enable_cap cap;

	/* Three pages below 4 GiB KVM needs for itself on Intel; harmless elsewhere. */
	if (ioctl(vm->vm_fd, KVM_SET_TSS_ADDR, 0xfffbd000ul) != 0)
		return vmm_err_errno("KVM_SET_TSS_ADDR");
	if (ioctl(vm->vm_fd, KVM_CREATE_IRQCHIP) != 0)
		return vmm_err_errno("KVM_CREATE_IRQCHIP");
	if (ioctl(vm->vm_fd, KVM_CREATE_PIT2, &pit) != 0)
		return vmm_err_errno("KVM_CREATE_PIT2");
	if (vm->cfg.halt_poll_ns >= 0) {
		memset(&cap, 0, sizeof(cap));
		cap.cap = KVM_CAP_HALT_POLL;
		cap.args[0] = (uint64_t)vm->cfg.halt_poll_ns;
		if (ioctl(vm->vm_fd, KVM_ENABLE_CAP, &cap) != 0)
			return vmm_err_errno("KVM_CAP_HALT_POLL");
	}
	return vmm_routes_commit(vm);
}

int
vmm_routes_commit(struct hv_vm *vm)
{
	struct kvm_irq_routing *r;
	unsigned int n = 0, gsi;
	size_t sz = sizeof(*r) + (16 + 24 + VMM_MAX_GSI) * sizeof(r->entries[0]);
	int rc;

	r = calloc(1, sz);
	if (r == NULL)
		return vmm_err("out of memory");
	/* KVM_SET_GSI_ROUTING replaces the table: restate the irqchip's pins. */
	for (gsi = 0; gsi < 24; gsi++) {
		if (gsi < 16) {
			r->entries[n].gsi = gsi;
			r->entries[n].type = KVM_IRQ_ROUTING_IRQCHIP;
			r->entries[n].u.irqchip.irqchip =
				gsi < 8 ? KVM_IRQCHIP_PIC_MASTER : KVM_IRQCHIP_PIC_SLAVE;
			r->entries[n].u.irqchip.pin = gsi % 8;
			n++;
		}
		r->entries[n].gsi = gsi;
		r->entries[n].type = KVM_IRQ_ROUTING_IRQCHIP;
		r->entries[n].u.irqchip.irqchip = KVM_IRQCHIP_IOAPIC;
		r->entries[n].u.irqchip.pin = gsi;
		n++;
	}
	for (gsi = VMM_GSI_MSI_BASE; gsi < VMM_MAX_GSI; gsi++)
		if (vm->msi_used[gsi])
			r->entries[n++] = vm->msi_routes[gsi];
	r->nr = n;
	rc = ioctl(vm->vm_fd, KVM_SET_GSI_ROUTING, r);
	free(r);
	return rc == 0 ? 0 : vmm_err_errno("KVM_SET_GSI_ROUTING");
}

int
vmm_msi_route_alloc(struct hv_vm *vm)
{
	int gsi;

	for (gsi = VMM_GSI_MSI_BASE; gsi < VMM_MAX_GSI; gsi++) {
		if (!vm->msi_used[gsi]) {
			vm->msi_used[gsi] = true;
			memset(&vm->msi_routes[gsi], 0, sizeof(vm->msi_routes[gsi]));
			vm->msi_routes[gsi].gsi = gsi;
			vm->msi_routes[gsi].type = KVM_IRQ_ROUTING_MSI;
			return gsi;
		}
	}
	return vmm_err("out of GSIs for MSI routes");
}

void
vmm_msi_route_free(struct hv_vm *vm, int gsi)
{
	if (gsi >= VMM_GSI_MSI_BASE && gsi < VMM_MAX_GSI)
		vm->msi_used[gsi] = false;
}

int
vmm_msi_route_set(struct hv_vm *vm, int gsi, uint64_t addr, uint32_t data)
{
	if (gsi < VMM_GSI_MSI_BASE || gsi >= VMM_MAX_GSI || !vm->msi_used[gsi])
		return vmm_err("bad GSI %d", gsi);
	vm->msi_routes[gsi].u.msi.address_lo = (uint32_t)addr;
	vm->msi_routes[gsi].u.msi.address_hi = (uint32_t)(addr >> 32);
	vm->msi_routes[gsi].u.msi.data = data;
	return 0;
}

int
vmm_irqfd(struct hv_vm *vm, int fd, int gsi, bool assign)
{
	struct kvm_irqfd irqfd = {
		.fd = (uint32_t)fd,
		.gsi = (uint32_t)gsi,
		.flags = assign ? 0 : KVM_IRQFD_FLAG_DEASSIGN,
	};

	if (ioctl(vm->vm_fd, KVM_IRQFD, &irqfd) != 0)
		return vmm_err_errno("KVM_IRQFD %s gsi %d", assign ? "assign" : "deassign", gsi);
	return 0;
}

int
vmm_ioeventfd(struct hv_vm *vm, int fd, uint64_t addr, bool assign)
{
	/* Length 0: any write width matches (KVM_CAP_IOEVENTFD_ANY_LENGTH). */
	struct kvm_ioeventfd io = {
		.addr = addr,
		.len = 0,
		.fd = fd,
		.flags = assign ? 0 : KVM_IOEVENTFD_FLAG_DEASSIGN,
	};

	if (ioctl(vm->vm_fd, KVM_IOEVENTFD, &io) != 0)
		return vmm_err_errno("KVM_IOEVENTFD %s 0x%" PRIx64, assign ? "assign" : "deassign",
				     addr);
	return 0;
}

int
vmm_signal_msi(struct hv_vm *vm, uint64_t addr, uint32_t data)
{
	struct kvm_msi msi = {
		.address_lo = (uint32_t)addr,
		.address_hi = (uint32_t)(addr >> 32),
		.data = data,
	};

	return ioctl(vm->vm_fd, KVM_SIGNAL_MSI, &msi) < 0 ? vmm_err_errno("KVM_SIGNAL_MSI") : 0;
}

int
vmm_irq_line(struct hv_vm *vm, unsigned int irq, int level)
{
	struct kvm_irq_level l = {.irq = irq, .level = (uint32_t)level};

	return ioctl(vm->vm_fd, KVM_IRQ_LINE, &l) != 0 ? vmm_err_errno("KVM_IRQ_LINE") : 0;
}

/* ---- console ---- */

void
vmm_console_write(struct hv_vm *vm, const void *buf, size_t len)
{
	if (vm->cfg.console_fd >= 0) {
		const char *p = buf;
		size_t left = len;

		while (left > 0) {
			ssize_t n = write(vm->cfg.console_fd, p, left);

			if (n <= 0 && errno != EINTR)
				break;
			if (n > 0) {
				p += n;
				left -= (size_t)n;
			}
		}
	}
	if (vm->console_tap)
		vm->console_tap(vm->console_tap_opaque, buf, len);
}

void
hv_vm_set_console_tap(struct hv_vm *vm, void (*tap)(void *, const void *, size_t), void *opaque)
{
	pthread_mutex_lock(&vm->lock);
	vm->console_tap = tap;
	vm->console_tap_opaque = opaque;
	pthread_mutex_unlock(&vm->lock);
}

size_t
hv_vm_console_input(struct hv_vm *vm, const void *buf, size_t len)
{
	size_t n = 0;

	pthread_mutex_lock(&vm->lock);
	if (vm->serial)
		n = vmm_serial_input(vm->serial, buf, len);
	pthread_mutex_unlock(&vm->lock);
	return n;
}

/* ---- life cycle ---- */

static char *
dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

static int
vm_check_config(const struct hv_vm_config *cfg)
{
	if (cfg->ncpus < 1 || cfg->ncpus > HV_VMM_MAX_CPUS)
		return vmm_err("vCPUs: %u is not in 1..%d", cfg->ncpus, HV_VMM_MAX_CPUS);
	if (cfg->mem_size < HV_VMM_MIN_MEM)
		return vmm_err("memory: %" PRIu64 " MiB is too little (at least %llu MiB)",
			       cfg->mem_size >> 20, HV_VMM_MIN_MEM >> 20);
	if (cfg->kernel == NULL || cfg->kernel[0] == '\0')
		return vmm_err("no kernel given");
	if (cfg->net_queue_size != 0 && (cfg->net_queue_size < HV_VMM_NET_QUEUE_MIN ||
					 cfg->net_queue_size > HV_VMM_NET_QUEUE_SIZE ||
					 (cfg->net_queue_size & (cfg->net_queue_size - 1)) != 0))
		return vmm_err("queue size: %u is not a power of 2 in %d..%d", cfg->net_queue_size,
			       HV_VMM_NET_QUEUE_MIN, HV_VMM_NET_QUEUE_SIZE);
	/* the built-in guest's rings have a fixed size (lib/vmm/guest/virtio.c) */
	if (cfg->net_queue_size != 0 && cfg->net_queue_size < HV_VMM_BUILTIN_QUEUE_MIN &&
	    strcmp(cfg->kernel, HV_VMM_BUILTIN_KERNEL) == 0)
		return vmm_err("queue size: the built-in guest needs at least %d",
			       HV_VMM_BUILTIN_QUEUE_MIN);
	return 0;
}

struct hv_vm *
hv_vm_create(const struct hv_vm_config *cfg)
{
	struct epoll_event ev = {.events = EPOLLIN};
	struct hv_vm *vm;
	unsigned int i;
	int ver;

	if (vm_check_config(cfg) != 0)
		return NULL;
	vm = calloc(1, sizeof(*vm));
	if (vm == NULL) {
		vmm_err("out of memory");
		return NULL;
	}
	vm->cfg = *cfg;
	vm->name = strdup(cfg->name ? cfg->name : "guest");
	vm->kernel = dup_or_null(cfg->kernel);
	vm->initrd = dup_or_null(cfg->initrd);
	vm->cmdline = strdup(cfg->cmdline ? cfg->cmdline : "");
	vm->builtin_image = dup_or_null(cfg->builtin_image);
	vm->port_socket = dup_or_null(cfg->port_socket);
	vm->cpu_mask = dup_or_null(cfg->cpu_mask_features);
	vm->cfg.cpu_mask_features = vm->cpu_mask;
	vm->cfg.name = vm->name;
	vm->cfg.kernel = vm->kernel;
	vm->cfg.initrd = vm->initrd;
	vm->cfg.cmdline = vm->cmdline;
	vm->cfg.builtin_image = vm->builtin_image;
	vm->cfg.port_socket = vm->port_socket;
	if (!vm->cfg.mac_set)
		hv_vmm_mac_from_name(vm->name, vm->cfg.mac);
	vm->kvm_fd = vm->vm_fd = vm->mem_fd = vm->epoll_fd = vm->stop_efd = -1;
	vm->exit_status = -1;
	for (i = 0; i < HV_VMM_MAX_CPUS; i++)
		vm->vcpus[i].fd = vm->vcpus[i].stats_fd = -1;
	for (i = 0; i < VMM_MAX_FDS; i++)
		vm->hooks[i].fd = -1;
	pthread_mutex_init(&vm->lock, NULL);
	vm->builtin = strcmp(vm->kernel, HV_VMM_BUILTIN_KERNEL) == 0;

	vm->kvm_fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (vm->kvm_fd < 0) {
		vmm_err_errno("/dev/kvm");
		goto fail;
	}
	ver = ioctl(vm->kvm_fd, KVM_GET_API_VERSION, 0);
	if (ver != KVM_API_VERSION) {
		vmm_err("/dev/kvm: API version %d, expected %d", ver, KVM_API_VERSION);
		goto fail;
	}
	vm->vm_fd = ioctl(vm->kvm_fd, KVM_CREATE_VM, 0);
	if (vm->vm_fd < 0) {
		vmm_err_errno("KVM_CREATE_VM");
		goto fail;
	}
	vm->vcpu_mmap_size = ioctl(vm->kvm_fd, KVM_GET_VCPU_MMAP_SIZE, 0);
	if (vm->vcpu_mmap_size <= 0) {
		vmm_err_errno("KVM_GET_VCPU_MMAP_SIZE");
		goto fail;
	}
	vm->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	vm->stop_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (vm->epoll_fd < 0 || vm->stop_efd < 0) {
		vmm_err_errno("epoll/eventfd");
		goto fail;
	}
	ev.data.fd = vm->stop_efd;
	if (epoll_ctl(vm->epoll_fd, EPOLL_CTL_ADD, vm->stop_efd, &ev) != 0) {
		vmm_err_errno("epoll_ctl");
		goto fail;
	}
	if (vmm_cpu_policy_init(vm) != 0 || vm_memory_init(vm) != 0 || vm_irqchip_init(vm) != 0)
		goto fail;
	for (i = 0; i < vm->cfg.ncpus; i++)
		if (vmm_vcpu_create(vm, i) != 0)
			goto fail;
	vm->serial = vmm_serial_create(vm, 0x3f8, 4);
	if (vm->serial == NULL || vmm_legacy_init(vm) != 0 || vmm_acpi_pm_init(vm) != 0 ||
	    vmm_testdev_init(vm) != 0 || vmm_pci_init(vm) != 0)
		goto fail;
	if (vm->port_socket != NULL && vmm_virtio_net_init(vm) != 0)
		goto fail;
	if (vmm_boot_tables(vm) != 0)
		goto fail;
	if ((vm->builtin ? vmm_boot_builtin(vm) : vmm_boot_linux(vm)) != 0)
		goto fail;
	return vm;
fail:
	hv_vm_destroy(vm);
	return NULL;
}

int
hv_vm_start(struct hv_vm *vm)
{
	unsigned int i;

	for (i = 0; i < vm->cfg.ncpus; i++)
		if (vmm_vcpu_start(&vm->vcpus[i]) != 0)
			return -1;
	return 0;
}

void
hv_vm_request_stop(struct hv_vm *vm, const char *reason)
{
	uint64_t one = 1;

	/* first reason wins; async-signal-safe: no locks, no stdio */
	if (__atomic_exchange_n(&vm->stopping, 1, __ATOMIC_SEQ_CST) == 0) {
		size_t n = strlen(reason);

		if (n >= sizeof(vm->exit_reason))
			n = sizeof(vm->exit_reason) - 1;
		memcpy(vm->exit_reason, reason, n);
		vm->exit_reason[n] = '\0';
	}
	if (write(vm->stop_efd, &one, sizeof(one)) < 0) {
		/* the counter cannot overflow in practice; nothing to do */
	}
}

const char *
hv_vm_exit_reason(const struct hv_vm *vm)
{
	return __atomic_load_n(&vm->stopping, __ATOMIC_ACQUIRE) ? vm->exit_reason : NULL;
}

int
hv_vm_exit_status(const struct hv_vm *vm)
{
	return vm->exit_status;
}

unsigned int
hv_vm_ncpus(const struct hv_vm *vm)
{
	return vm->cfg.ncpus;
}

int
hv_vm_add_fd(struct hv_vm *vm, int fd, hv_vm_fd_cb cb, void *opaque)
{
	struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP, .data.fd = fd};
	unsigned int i;

	for (i = 0; i < VMM_MAX_FDS; i++) {
		if (vm->hooks[i].fd < 0) {
			if (epoll_ctl(vm->epoll_fd, EPOLL_CTL_ADD, fd, &ev) != 0)
				return vmm_err_errno("epoll_ctl");
			vm->hooks[i] = (struct vmm_fd_hook){fd, cb, opaque};
			return 0;
		}
	}
	return vmm_err("too many watched descriptors");
}

void
hv_vm_del_fd(struct hv_vm *vm, int fd)
{
	unsigned int i;

	for (i = 0; i < VMM_MAX_FDS; i++) {
		if (vm->hooks[i].fd == fd) {
			epoll_ctl(vm->epoll_fd, EPOLL_CTL_DEL, fd, NULL);
			vm->hooks[i].fd = -1;
		}
	}
}

int
hv_vm_poll(struct hv_vm *vm, int timeout_ms)
{
	struct epoll_event evs[8];
	int n, i, wait;
	unsigned int h;

	if (hv_vm_exit_reason(vm))
		return 1;
	/* wake up at least every 100 ms to notice a stop */
	wait = timeout_ms < 0 || timeout_ms > 100 ? 100 : timeout_ms;
	n = epoll_wait(vm->epoll_fd, evs, 8, wait);
	if (n < 0 && errno != EINTR)
		return vmm_err_errno("epoll_wait");
	for (i = 0; i < n; i++) {
		int fd = evs[i].data.fd;

		if (fd == vm->stop_efd)
			continue;
		for (h = 0; h < VMM_MAX_FDS; h++)
			if (vm->hooks[h].fd == fd) {
				vm->hooks[h].cb(vm->hooks[h].opaque, fd);
				break;
			}
	}
	return hv_vm_exit_reason(vm) ? 1 : 0;
}

void
hv_vm_destroy(struct hv_vm *vm)
{
	unsigned int i;

	if (vm == NULL)
		return;
	if (!vm->stopping)
		hv_vm_request_stop(vm, "destroyed");
	vmm_vcpu_kick_all(vm);
	vmm_vcpu_join_all(vm);
	vmm_virtio_net_free(vm);
	vmm_pci_free(vm);
	vmm_serial_free(vm->serial);
	for (i = 0; i < HV_VMM_MAX_CPUS; i++) {
		if (vm->vcpus[i].run)
			munmap(vm->vcpus[i].run, (size_t)vm->vcpu_mmap_size);
		if (vm->vcpus[i].stats_fd >= 0)
			close(vm->vcpus[i].stats_fd);
		if (vm->vcpus[i].fd >= 0)
			close(vm->vcpus[i].fd);
	}
	if (vm->mem)
		munmap(vm->mem, vm->mem_size);
	if (vm->mem_fd >= 0)
		close(vm->mem_fd);
	if (vm->vm_fd >= 0)
		close(vm->vm_fd);
	if (vm->kvm_fd >= 0)
		close(vm->kvm_fd);
	if (vm->epoll_fd >= 0)
		close(vm->epoll_fd);
	if (vm->stop_efd >= 0)
		close(vm->stop_efd);
	free(vm->cpuid);
	free(vm->name);
	free(vm->kernel);
	free(vm->initrd);
	free(vm->cmdline);
	free(vm->builtin_image);
	free(vm->port_socket);
	free(vm->cpu_mask);
	pthread_mutex_destroy(&vm->lock);
	free(vm);
}
