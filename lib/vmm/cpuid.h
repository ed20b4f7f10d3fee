/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * CPUID normalisation (in the spirit of Firecracker's CPU templates): from
 * what KVM supports, the leaves a guest of ncpus vCPUs sees on vCPU index:
 * leaf 1's APIC id, logical count and HTT, a coherent topology (0xB/0x1F,
 * leaf 4, AMD 0x80000008/0x8000001E), the hypervisor leaves, no PMU, and
 * the features masked by name. Pure data: unit-tested without KVM.
 */
#ifndef VMM_CPUID_H
#define VMM_CPUID_H

#include <stdbool.h>
#include <stdint.h>

#include <linux/kvm.h>

/* A feature bit that can be masked. */
struct cpuid_feature {
	const char *name; /* as Linux's /proc/cpuinfo spells it */
	uint32_t leaf;
	uint32_t subleaf;
	uint8_t reg; /* 0 eax, 1 ebx, 2 ecx, 3 edx */
	uint8_t bit;
};

#define CPUID_MASK_MAX 64

struct cpuid_policy {
	unsigned int ncpus;
	unsigned int index; /* this vCPU; its APIC id */
	unsigned int nmask;
	const struct cpuid_feature *mask[CPUID_MASK_MAX];
};

/* The feature called name, or NULL. */
const struct cpuid_feature *cpuid_feature_find(const char *name);

/* Add the comma-separated feature names of list to p's mask. Returns 0, or
 * -1 with the offending name copied to bad (a one-line error). */
int cpuid_mask_parse(struct cpuid_policy *p, const char *list, char *bad, size_t badlen);

/* Features a CPL0 instruction emulator (KVM without VT-x/AMD-V) cannot run:
 * the mask applied when the host has no hardware virtualisation. */
extern const char cpuid_soft_cpl0_mask[];

/* Normalise the entries in place for p (some may be zeroed). */
void cpuid_normalize(struct kvm_cpuid_entry2 *e, unsigned int n, const struct cpuid_policy *p);

#endif
