/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * vCPUs: creation (CPUID from KVM_GET_SUPPORTED_CPUID, paravirtual leaves
 * kept), 64-bit entry state, one pinned thread each running KVM_RUN and
 * dispatching port I/O and MMIO exits to the devices, and KVM's binary
 * statistics.
 */
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "vmm_internal.h"

#define VCPU_KICK_SIGNAL SIGUSR1

static void
vcpu_kick_handler(int sig)
{
	(void)sig; /* only interrupts KVM_RUN */
}

static int
vm_cpuid_init(struct hv_vm *vm)
{
	unsigned int nent = 128;

	for (;;) {
		struct kvm_cpuid2 *c = calloc(1, sizeof(*c) + nent * sizeof(c->entries[0]));

		if (c == NULL)
			return vmm_err("out of memory");
		c->nent = nent;
		if (ioctl(vm->kvm_fd, KVM_GET_SUPPORTED_CPUID, c) == 0) {
			vm->cpuid = c;
			return 0;
		}
		free(c);
		if (errno != E2BIG || nent >= 4096)
			return vmm_err_errno("KVM_GET_SUPPORTED_CPUID");
		nent *= 2;
	}
}

/* KVM's kvm_pvm module: shadow paging, guest CPL0 through the emulator. */
static bool
host_soft_cpl0(void)
{
	return access("/sys/module/kvm_pvm", F_OK) == 0;
}

int
vmm_cpu_policy_init(struct hv_vm *vm)
{
	char bad[32];

	memset(&vm->cpu_policy, 0, sizeof(vm->cpu_policy));
	vm->cpu_policy.ncpus = vm->cfg.ncpus;
	vm->soft_cpl0 = host_soft_cpl0();
	if (vm->soft_cpl0 &&
	    cpuid_mask_parse(&vm->cpu_policy, cpuid_soft_cpl0_mask, bad, sizeof(bad)) != 0)
		return vmm_err("built-in CPUID mask: unknown feature '%s'", bad);
	if (vm->cpu_mask && cpuid_mask_parse(&vm->cpu_policy, vm->cpu_mask, bad, sizeof(bad)) != 0)
		return vmm_err("--cpu-mask-features: unknown or too many features at '%s'", bad);
	return 0;
}

/* The supported leaves normalised for this vCPU (cpuid.c); KVM's PV leaves
 * (0x4000000x: PV EOI, PV IPI, kvmclock, steal time...) stay as KVM offers
 * them. */
static int
vcpu_set_cpuid(struct vmm_vcpu *vcpu)
{
	struct hv_vm *vm = vcpu->vm;
	struct cpuid_policy pol = vm->cpu_policy;
	struct kvm_cpuid2 *c;
	size_t sz;
	int rc;

	if (vm->cpuid == NULL && vm_cpuid_init(vm) != 0)
		return -1;
	sz = sizeof(*c) + vm->cpuid->nent * sizeof(c->entries[0]);
	c = malloc(sz);
	if (c == NULL)
		return vmm_err("out of memory");
	memcpy(c, vm->cpuid, sz);
	pol.index = vcpu->index;
	cpuid_normalize(c->entries, c->nent, &pol);
	rc = ioctl(vcpu->fd, KVM_SET_CPUID2, c);
	free(c);
	return rc == 0 ? 0 : vmm_err_errno("KVM_SET_CPUID2");
}

int
vmm_vcpu_create(struct hv_vm *vm, unsigned int index)
{
	struct vmm_vcpu *vcpu = &vm->vcpus[index];
	struct kvm_fpu fpu;

	vcpu->vm = vm;
	vcpu->index = index;
	vcpu->fd = ioctl(vm->vm_fd, KVM_CREATE_VCPU, (unsigned long)index);
	if (vcpu->fd < 0)
		return vmm_err_errno("KVM_CREATE_VCPU %u", index);
	vcpu->run = mmap(NULL, (size_t)vm->vcpu_mmap_size, PROT_READ | PROT_WRITE, MAP_SHARED,
			 vcpu->fd, 0);
	if (vcpu->run == MAP_FAILED) {
		vcpu->run = NULL;
		return vmm_err_errno("mmap of vCPU %u", index);
	}
	if (vcpu_set_cpuid(vcpu) != 0)
		return -1;
	/* Now, not later: vCPU ioctls wait for a running KVM_RUN to return. */
	vcpu->stats_fd = ioctl(vcpu->fd, KVM_GET_STATS_FD, NULL);
	/* Default x87 control word and MXCSR (ldmxcsr is not emulated on some hosts). */
	memset(&fpu, 0, sizeof(fpu));
	fpu.fcw = 0x37f;
	fpu.mxcsr = 0x1f80;
	if (ioctl(vcpu->fd, KVM_SET_FPU, &fpu) != 0)
		return vmm_err_errno("KVM_SET_FPU");
	return 0;
}

static void
seg_flat(struct kvm_segment *s, uint16_t sel, uint8_t type, bool code64)
{
	memset(s, 0, sizeof(*s));
	s->base = 0;
	s->limit = 0xffffffff;
	s->selector = sel;
	s->type = type;
	s->present = 1;
	s->s = 1;
	s->g = 1;
	s->l = code64;
	s->db = !code64;
}

/* Flat code and data segments with selectors of the boot GDT (x86_boot.c):
 * 0x10 code (64-bit or 32-bit), 0x18 data; no IDT yet. */
static void
flat_segments(struct kvm_sregs *sregs, bool code64)
{
	seg_flat(&sregs->cs, 0x10, 0xb, code64);
	seg_flat(&sregs->ds, 0x18, 0x3, false);
	sregs->es = sregs->fs = sregs->gs = sregs->ss = sregs->ds;
	sregs->gdt.base = VMM_BOOT_GDT;
	sregs->gdt.limit = 4 * 8 - 1;
	sregs->idt.base = 0;
	sregs->idt.limit = 0;
}

int
vmm_vcpu_set_long_mode(struct vmm_vcpu *vcpu, uint64_t rip, uint64_t rsp, uint64_t rsi,
		       bool builtin)
{
	struct kvm_sregs sregs;
	struct kvm_regs regs;

	if (ioctl(vcpu->fd, KVM_GET_SREGS, &sregs) != 0)
		return vmm_err_errno("KVM_GET_SREGS");
	flat_segments(&sregs, true);
	sregs.cr3 = VMM_BOOT_PML4;
	sregs.cr4 = 0x20 | 0x200 | 0x400;                           /* PAE, OSFXSR, OSXMMEXCPT */
	sregs.cr0 = 0x80000000 | 0x10000 | 0x20 | 0x10 | 0x2 | 0x1; /* PG WP NE ET MP PE */
	(void)builtin;
	sregs.efer = 0x500; /* LME LMA */
	if (ioctl(vcpu->fd, KVM_SET_SREGS, &sregs) != 0)
		return vmm_err_errno("KVM_SET_SREGS");
	memset(&regs, 0, sizeof(regs));
	regs.rip = rip;
	regs.rsp = rsp;
	regs.rsi = rsi;
	regs.rflags = 0x2;
	if (ioctl(vcpu->fd, KVM_SET_REGS, &regs) != 0)
		return vmm_err_errno("KVM_SET_REGS");
	return 0;
}

int
vmm_vcpu_set_protected_mode(struct vmm_vcpu *vcpu, uint32_t eip, uint32_t ebx)
{
	struct kvm_sregs sregs;
	struct kvm_regs regs;

	if (ioctl(vcpu->fd, KVM_GET_SREGS, &sregs) != 0)
		return vmm_err_errno("KVM_GET_SREGS");
	/* the PVH ABI: flat 4 GiB 32-bit code and data, CR0.PE only, no paging */
	flat_segments(&sregs, false);
	sregs.cr0 = 0x10 | 0x1; /* ET PE */
	sregs.cr3 = 0;
	sregs.cr4 = 0;
	sregs.efer = 0;
	if (ioctl(vcpu->fd, KVM_SET_SREGS, &sregs) != 0)
		return vmm_err_errno("KVM_SET_SREGS");
	memset(&regs, 0, sizeof(regs));
	regs.rip = eip;
	regs.rbx = ebx;
	regs.rflags = 0x2;
	if (ioctl(vcpu->fd, KVM_SET_REGS, &regs) != 0)
		return vmm_err_errno("KVM_SET_REGS");
	return 0;
}

static uint64_t
vcpu_rip(struct vmm_vcpu *vcpu)
{
	struct kvm_regs regs;

	return ioctl(vcpu->fd, KVM_GET_REGS, &regs) == 0 ? regs.rip : 0;
}

static void
vcpu_stop(struct vmm_vcpu *vcpu, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
vcpu_stop(struct vmm_vcpu *vcpu, const char *fmt, ...)
{
	char buf[160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	hv_vm_request_stop(vcpu->vm, buf);
}

static void
vcpu_count(struct vmm_vcpu *vcpu, enum vmm_exit_kind k)
{
	__atomic_fetch_add(&vcpu->exits[k], 1, __ATOMIC_RELAXED);
}

/* One KVM_RUN return; false when the vCPU must stop. */
static bool
vcpu_handle_exit(struct vmm_vcpu *vcpu)
{
	struct kvm_run *run = vcpu->run;
	struct hv_vm *vm = vcpu->vm;
	uint32_t i;

	switch (run->exit_reason) {
	case KVM_EXIT_IO: {
		uint8_t *data = (uint8_t *)run + run->io.data_offset;

		vcpu_count(vcpu, VMM_EXIT_IO);
		pthread_mutex_lock(&vm->lock);
		for (i = 0; i < run->io.count; i++, data += run->io.size)
			vmm_bus_access(&vm->pio, run->io.port, data, run->io.size,
				       run->io.direction == KVM_EXIT_IO_OUT);
		pthread_mutex_unlock(&vm->lock);
		return true;
	}
	case KVM_EXIT_MMIO:
		vcpu_count(vcpu, VMM_EXIT_MMIO);
		if (run->mmio.len > 8)
			return true;
		pthread_mutex_lock(&vm->lock);
		vmm_bus_access(&vm->mmio, run->mmio.phys_addr, run->mmio.data, run->mmio.len,
			       run->mmio.is_write);
		pthread_mutex_unlock(&vm->lock);
		return true;
	case KVM_EXIT_INTR:
		vcpu_count(vcpu, VMM_EXIT_INTR);
		return true;
	case KVM_EXIT_SHUTDOWN:
		vcpu_stop(vcpu, "triple fault on vCPU %u at rip 0x%" PRIx64, vcpu->index,
			  vcpu_rip(vcpu));
		return false;
	case KVM_EXIT_SYSTEM_EVENT:
		switch (run->system_event.type) {
		case KVM_SYSTEM_EVENT_SHUTDOWN:
			vcpu_stop(vcpu, "guest powered off");
			break;
		case KVM_SYSTEM_EVENT_RESET:
			vcpu_stop(vcpu, "guest reset");
			break;
		default:
			vcpu_stop(vcpu, "guest system event %u", run->system_event.type);
			break;
		}
		return false;
	case KVM_EXIT_HLT:
		vcpu_stop(vcpu, "vCPU %u halted", vcpu->index);
		return false;
	case KVM_EXIT_INTERNAL_ERROR:
		vcpu_stop(vcpu, "KVM internal error %u%s on vCPU %u at rip 0x%" PRIx64,
			  run->internal.suberror,
			  run->internal.suberror == KVM_INTERNAL_ERROR_EMULATION
				  ? " (instruction not emulated)"
				  : "",
			  vcpu->index, vcpu_rip(vcpu));
		return false;
	case KVM_EXIT_FAIL_ENTRY:
		vcpu_stop(vcpu, "vCPU %u entry failed (reason 0x%llx)", vcpu->index,
			  (unsigned long long)run->fail_entry.hardware_entry_failure_reason);
		return false;
	default:
		vcpu_count(vcpu, VMM_EXIT_OTHER);
		vcpu_stop(vcpu, "vCPU %u: unhandled exit reason %u", vcpu->index, run->exit_reason);
		return false;
	}
}

static void *
vcpu_thread(void *arg)
{
	struct vmm_vcpu *vcpu = arg;
	struct hv_vm *vm = vcpu->vm;
	char name[16];
	sigset_t set;

	snprintf(name, sizeof(name), "vcpu%u", vcpu->index);
	pthread_setname_np(pthread_self(), name);
	sigemptyset(&set);
	sigaddset(&set, VCPU_KICK_SIGNAL);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	while (!__atomic_load_n(&vm->stopping, __ATOMIC_ACQUIRE)) {
		if (ioctl(vcpu->fd, KVM_RUN, 0) < 0) {
			if (errno == EINTR || errno == EAGAIN) {
				vcpu->run->immediate_exit = 0;
				vcpu_count(vcpu, VMM_EXIT_INTR);
				if (__atomic_load_n(&vcpu->rip_wanted, __ATOMIC_ACQUIRE)) {
					__atomic_store_n(&vcpu->rip, vcpu_rip(vcpu),
							 __ATOMIC_RELAXED);
					__atomic_store_n(&vcpu->rip_wanted, 0, __ATOMIC_RELEASE);
				}
				continue;
			}
			vcpu_stop(vcpu, "KVM_RUN on vCPU %u: %s", vcpu->index, strerror(errno));
			break;
		}
		if (!vcpu_handle_exit(vcpu))
			break;
	}
	return NULL;
}

int
vmm_vcpu_start(struct vmm_vcpu *vcpu)
{
	struct hv_vm *vm = vcpu->vm;
	struct sigaction sa;
	pthread_attr_t attr;
	sigset_t set, old;
	int host = vm->cfg.pin[vcpu->index];
	int rc;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = vcpu_kick_handler;
	sigaction(VCPU_KICK_SIGNAL, &sa, NULL);
	pthread_attr_init(&attr);
	if (host >= 0) {
		cpu_set_t cpus;

		CPU_ZERO(&cpus);
		CPU_SET(host, &cpus);
		pthread_attr_setaffinity_np(&attr, sizeof(cpus), &cpus);
	}
	/* the thread starts with signals blocked; it unblocks only the kick */
	sigfillset(&set);
	pthread_sigmask(SIG_BLOCK, &set, &old);
	rc = pthread_create(&vcpu->thread, &attr, vcpu_thread, vcpu);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (rc != 0) {
		errno = rc;
		return vmm_err_errno("vCPU %u thread%s", vcpu->index,
				     host >= 0 ? " (pinning)" : "");
	}
	vcpu->started = true;
	return 0;
}

void
vmm_vcpu_kick_all(struct hv_vm *vm)
{
	unsigned int i;

	for (i = 0; i < vm->cfg.ncpus; i++) {
		struct vmm_vcpu *vcpu = &vm->vcpus[i];

		if (!vcpu->started)
			continue;
		__atomic_store_n(&vcpu->run->immediate_exit, 1, __ATOMIC_RELEASE);
		pthread_kill(vcpu->thread, VCPU_KICK_SIGNAL);
	}
}

void
vmm_vcpu_join_all(struct hv_vm *vm)
{
	unsigned int i;

	for (i = 0; i < vm->cfg.ncpus; i++) {
		struct vmm_vcpu *vcpu = &vm->vcpus[i];

		if (!vcpu->started)
			continue;
		/* a kick may land before KVM_RUN: repeat until the thread is gone */
		while (pthread_tryjoin_np(vcpu->thread, NULL) == EBUSY) {
			__atomic_store_n(&vcpu->run->immediate_exit, 1, __ATOMIC_RELEASE);
			pthread_kill(vcpu->thread, VCPU_KICK_SIGNAL);
			usleep(1000);
		}
		vcpu->started = false;
	}
}

/* ---- statistics ---- */

/* Where the guest is: the vCPU thread reads its RIP when kicked out of
 * KVM_RUN (a vCPU ioctl from here would wait for KVM_RUN to return). Waits
 * 50 ms at most; false without a sample. */
static bool
vcpu_sample_rip(struct vmm_vcpu *vcpu)
{
	unsigned int i;

	if (!vcpu->started)
		return false;
	__atomic_store_n(&vcpu->rip_wanted, 1, __ATOMIC_RELEASE);
	__atomic_store_n(&vcpu->run->immediate_exit, 1, __ATOMIC_RELEASE);
	pthread_kill(vcpu->thread, VCPU_KICK_SIGNAL);
	for (i = 0; i < 50; i++) {
		if (!__atomic_load_n(&vcpu->rip_wanted, __ATOMIC_ACQUIRE))
			return true;
		usleep(1000);
	}
	return false;
}

static const char *const vmm_exit_names[VMM_EXIT_KINDS] = {
	"vmm_io_exits",
	"vmm_mmio_exits",
	"vmm_intr_exits",
	"vmm_other_exits",
};

int
hv_vm_vcpu_stats(struct hv_vm *vm, unsigned int cpu, struct hv_vm_stat *out, unsigned int max)
{
	struct vmm_vcpu *vcpu;
	struct kvm_stats_header hdr;
	size_t desc_size;
	uint8_t *descs = NULL;
	unsigned int i, n = 0;

	if (cpu >= vm->cfg.ncpus)
		return vmm_err("no vCPU %u", cpu);
	vcpu = &vm->vcpus[cpu];
	if (vcpu->stats_fd < 0)
		return vmm_err("KVM binary statistics unavailable (KVM_GET_STATS_FD)");
	if (pread(vcpu->stats_fd, &hdr, sizeof(hdr), 0) != sizeof(hdr))
		return vmm_err_errno("stats header");
	desc_size = sizeof(struct kvm_stats_desc) + hdr.name_size;
	descs = malloc(desc_size * hdr.num_desc);
	if (descs == NULL)
		return vmm_err("out of memory");
	if (pread(vcpu->stats_fd, descs, desc_size * hdr.num_desc, hdr.desc_offset) !=
	    (ssize_t)(desc_size * hdr.num_desc)) {
		free(descs);
		return vmm_err_errno("stats descriptors");
	}
	for (i = 0; i < hdr.num_desc && n < max; i++) {
		struct kvm_stats_desc *d = (void *)(descs + i * desc_size);
		uint64_t v;

		/* scalar counters and gauges only (histograms are arrays) */
		if (d->size != 1)
			continue;
		if (pread(vcpu->stats_fd, &v, sizeof(v), hdr.data_offset + d->offset) != sizeof(v))
			continue;
		snprintf(out[n].name, sizeof(out[n].name), "%s", d->name);
		out[n].value = v;
		n++;
	}
	free(descs);
	for (i = 0; i < VMM_EXIT_KINDS && n < max; i++, n++) {
		snprintf(out[n].name, sizeof(out[n].name), "%s", vmm_exit_names[i]);
		out[n].value = __atomic_load_n(&vcpu->exits[i], __ATOMIC_RELAXED);
	}
	if (n < max && vcpu_sample_rip(vcpu)) {
		snprintf(out[n].name, sizeof(out[n].name), "rip");
		out[n].value = __atomic_load_n(&vcpu->rip, __ATOMIC_RELAXED);
		n++;
	}
	return (int)n;
}

static uint64_t
stat_find(const struct hv_vm_stat *s, int n, const char *name)
{
	int i;

	for (i = 0; i < n; i++)
		if (strcmp(s[i].name, name) == 0)
			return s[i].value;
	return 0;
}

void
vmm_log_stats_mark(struct hv_vm *vm, uint64_t mark)
{
	struct hv_vm_stat s[128];
	char line[512];
	unsigned int cpu;
	int n, len;

	for (cpu = 0; cpu < vm->cfg.ncpus; cpu++) {
		n = hv_vm_vcpu_stats(vm, cpu, s, 128);
		if (n < 0)
			continue;
		len = snprintf(line, sizeof(line),
			       "[vmm] mark %" PRIu64 " cpu%u: exits=%" PRIu64 " io_exits=%" PRIu64
			       " mmio_exits=%" PRIu64 " irq_injections=%" PRIu64
			       " halt_exits=%" PRIu64 " userspace_exits=%" PRIu64 "\n",
			       mark, cpu, stat_find(s, n, "exits"), stat_find(s, n, "io_exits"),
			       stat_find(s, n, "mmio_exits"), stat_find(s, n, "irq_injections"),
			       stat_find(s, n, "halt_exits"),
			       stat_find(s, n, "vmm_io_exits") + stat_find(s, n, "vmm_mmio_exits") +
				       stat_find(s, n, "vmm_other_exits"));
		vmm_console_write(vm, line, (size_t)len);
	}
}
