/* SPDX-License-Identifier: BSD-3-Clause */
/* CPUID normalisation (see cpuid.h). Leaf layouts: Intel SDM vol. 2A
 * (CPUID), AMD APM vol. 3 (appendix E). */
#include <stdio.h>
#include <string.h>

#include "cpuid.h"

enum {
	EAX,
	EBX,
	ECX,
	EDX
};

static const struct cpuid_feature features[] = {
	{"sse3", 1, 0, ECX, 0},
	{"pclmulqdq", 1, 0, ECX, 1},
	{"monitor", 1, 0, ECX, 3},
	{"vmx", 1, 0, ECX, 5},
	{"ssse3", 1, 0, ECX, 9},
	{"fma", 1, 0, ECX, 12},
	{"cx16", 1, 0, ECX, 13},
	{"pcid", 1, 0, ECX, 17},
	{"sse4_1", 1, 0, ECX, 19},
	{"sse4_2", 1, 0, ECX, 20},
	{"x2apic", 1, 0, ECX, 21},
	{"movbe", 1, 0, ECX, 22},
	{"popcnt", 1, 0, ECX, 23},
	{"tsc_deadline_timer", 1, 0, ECX, 24},
	{"aes", 1, 0, ECX, 25},
	{"xsave", 1, 0, ECX, 26},
	{"avx", 1, 0, ECX, 28},
	{"f16c", 1, 0, ECX, 29},
	{"rdrand", 1, 0, ECX, 30},
	{"mce", 1, 0, EDX, 7},
	{"mtrr", 1, 0, EDX, 12},
	{"pge", 1, 0, EDX, 13},
	{"mca", 1, 0, EDX, 14},
	{"pat", 1, 0, EDX, 16},
	{"ht", 1, 0, EDX, 28},
	{"fsgsbase", 7, 0, EBX, 0},
	{"bmi1", 7, 0, EBX, 3},
	{"hle", 7, 0, EBX, 4},
	{"avx2", 7, 0, EBX, 5},
	{"smep", 7, 0, EBX, 7},
	{"bmi2", 7, 0, EBX, 8},
	{"erms", 7, 0, EBX, 9},
	{"invpcid", 7, 0, EBX, 10},
	{"rtm", 7, 0, EBX, 11},
	{"avx512f", 7, 0, EBX, 16},
	{"rdseed", 7, 0, EBX, 18},
	{"adx", 7, 0, EBX, 19},
	{"smap", 7, 0, EBX, 20},
	{"clflushopt", 7, 0, EBX, 23},
	{"clwb", 7, 0, EBX, 24},
	{"sha_ni", 7, 0, EBX, 29},
	{"umip", 7, 0, ECX, 2},
	{"pku", 7, 0, ECX, 3},
	{"la57", 7, 0, ECX, 16},
	{"rdpid", 7, 0, ECX, 22},
	{"fsrm", 7, 0, EDX, 4},
	{"md_clear", 7, 0, EDX, 10},
	{"lahf_lm", 0x80000001, 0, ECX, 0},
	{"svm", 0x80000001, 0, ECX, 2},
	{"abm", 0x80000001, 0, ECX, 5},
	{"topoext", 0x80000001, 0, ECX, 22},
	{"pdpe1gb", 0x80000001, 0, EDX, 26},
	{"rdtscp", 0x80000001, 0, EDX, 27},
};

/* cmpxchg16b, popcnt, xsave/xrstor (and what needs XSAVE: AVX...), clac/stac
 * (SMAP), rdtscp/rdpid and the SSE arithmetic the kernel could pick for
 * crc32c/raid: measured not emulated at CPL0 (doc/vmm.rst). */
const char cpuid_soft_cpl0_mask[] =
	"cx16,popcnt,xsave,avx,avx2,fma,f16c,avx512f,smap,rdtscp,rdpid,sse4_2,pclmulqdq,aes";

const struct cpuid_feature *
cpuid_feature_find(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(features) / sizeof(features[0]); i++)
		if (strcmp(features[i].name, name) == 0)
			return &features[i];
	return NULL;
}

int
cpuid_mask_parse(struct cpuid_policy *p, const char *list, char *bad, size_t badlen)
{
	char name[32];

	while (*list) {
		size_t n = strcspn(list, ",");
		const struct cpuid_feature *f;

		if (n == 0 || n >= sizeof(name)) {
			snprintf(bad, badlen, "%.*s", (int)(n < 31 ? n : 31), list);
			return -1;
		}
		memcpy(name, list, n);
		name[n] = '\0';
		f = cpuid_feature_find(name);
		if (f == NULL || p->nmask >= CPUID_MASK_MAX) {
			snprintf(bad, badlen, "%s", name);
			return -1;
		}
		p->mask[p->nmask++] = f;
		list += n;
		if (*list == ',')
			list++;
	}
	return 0;
}

static uint32_t *
reg(struct kvm_cpuid_entry2 *e, unsigned int r)
{
	switch (r) {
	case EAX:
		return &e->eax;
	case EBX:
		return &e->ebx;
	case ECX:
		return &e->ecx;
	default:
		return &e->edx;
	}
}

static bool
masked(const struct cpuid_policy *p, const char *name)
{
	unsigned int i;

	for (i = 0; i < p->nmask; i++)
		if (strcmp(p->mask[i]->name, name) == 0)
			return true;
	return false;
}

/* bits needed to number n things (the x2APIC id shift of a level) */
static uint32_t
id_bits(unsigned int n)
{
	uint32_t b = 0;

	while ((1u << b) < n)
		b++;
	return b;
}

void
cpuid_normalize(struct kvm_cpuid_entry2 *e, unsigned int n, const struct cpuid_policy *p)
{
	uint32_t apic = p->index, cores = p->ncpus ? p->ncpus : 1;
	unsigned int i, m;

	/* One package of `cores` single-thread cores. */
	for (i = 0; i < n; i++) {
		struct kvm_cpuid_entry2 *x = &e[i];

		switch (x->function) {
		case 1:
			/* APIC id, logical processors per package, CLFLUSH 64 bytes */
			x->ebx = (x->ebx & 0xff) | apic << 24 | (cores & 0xff) << 16 | 8u << 8;
			if (cores > 1)
				x->edx |= 1u << 28; /* HTT: the count above is valid */
			else
				x->edx &= ~(1u << 28);
			x->ecx |= 1u << 31;   /* hypervisor present */
			x->ecx &= ~(1u << 5); /* no nested VMX */
			x->ecx &= ~(1u << 3); /* no MONITOR/MWAIT */
			break;
		case 4:
			/* cores per package - 1; each cache shared by one thread */
			if ((x->eax & 0x1f) != 0)
				x->eax = (x->eax & 0x3fff) | ((cores - 1) & 0x3f) << 26;
			break;
		case 0xa:
			/* no PMU */
			x->eax = x->ebx = x->ecx = x->edx = 0;
			break;
		case 0xb:
		case 0x1f:
			x->edx = apic;
			if (x->index == 0) { /* SMT: one thread per core */
				x->eax = 0;
				x->ebx = 1;
				x->ecx = 1u << 8 | x->index;
			} else if (x->index == 1) { /* core: every vCPU */
				x->eax = id_bits(cores);
				x->ebx = cores;
				x->ecx = 2u << 8 | x->index;
			} else {
				x->eax = x->ebx = 0;
				x->ecx = x->index;
			}
			break;
		case 0x80000008:
			/* AMD: cores - 1 and the APIC id bits that number them */
			x->ecx = (x->ecx & ~0xf0ffu) | id_bits(cores) << 12 | ((cores - 1) & 0xff);
			break;
		case 0x8000001e:
			/* AMD extended APIC id (valid with TOPOEXT): core = vCPU, node 0 */
			x->eax = apic;
			x->ebx = apic & 0xff;
			x->ecx = 0;
			x->edx = 0;
			break;
		default:
			break;
		}
	}
	/* the features masked by name, and what depends on them */
	for (i = 0; i < n; i++) {
		for (m = 0; m < p->nmask; m++) {
			const struct cpuid_feature *f = p->mask[m];

			if (e[i].function == f->leaf && e[i].index == f->subleaf)
				*reg(&e[i], f->reg) &= ~(1u << f->bit);
		}
		if (masked(p, "xsave")) {
			if (e[i].function == 1)
				e[i].ecx &= ~(1u << 27 | 1u << 28 | 1u << 12 |
					      1u << 29); /* OSXSAVE AVX FMA F16C */
			if (e[i].function == 0xd)
				e[i].eax = e[i].ebx = e[i].ecx = e[i].edx = 0;
			if (e[i].function == 7 && e[i].index == 0)
				e[i].ebx &= ~(1u << 5 | 1u << 16); /* AVX2, AVX-512 */
		}
	}
}
