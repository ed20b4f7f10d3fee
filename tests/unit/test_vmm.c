/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the VMM's pure parts (no KVM): the e820 map, the Linux zero
 * page, PCI config space (BAR sizing, capability list, read-only fields),
 * MSI-X table emulation (masking, function mask, pending bits), the MP
 * and ACPI tables; the virtio parts are in test_vmm_virtio.c.
 */
#include <check.h>
#include <elf.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "acpi.h"
#include "aml.h"
#include "cpuid.h"
#include "pvh.h"
#include "boot_params.h"
#include "e820.h"
#include "msix.h"
#include "mptable.h"
#include "pci.h"
#include "test_vmm.h"

/* ---- e820 ---- */

START_TEST(e820_vm_map)
{
	struct e820_table t;

	ck_assert_int_eq(e820_build(&t, 256ull << 20, 0, 0xb0000000, 0x100000), 0);
	ck_assert_uint_eq(t.n, 5);
	ck_assert_uint_eq(t.e[0].addr, 0);
	ck_assert_uint_eq(t.e[0].size, 0x9fc00);
	ck_assert_uint_eq(t.e[0].type, E820_TYPE_RAM);
	ck_assert_uint_eq(t.e[1].addr, 0x9fc00);
	ck_assert_uint_eq(t.e[1].type, E820_TYPE_RESERVED);
	ck_assert_uint_eq(t.e[2].addr, 0xf0000);
	ck_assert_uint_eq(t.e[2].size, 0x10000);
	ck_assert_uint_eq(t.e[3].addr, 0x100000);
	ck_assert_uint_eq(t.e[3].size, (256ull << 20) - 0x100000);
	ck_assert_uint_eq(t.e[3].type, E820_TYPE_RAM);
	ck_assert_uint_eq(t.e[4].addr, 0xb0000000);
	ck_assert_uint_eq(sizeof(t.e[0]), 20);

	/* memory above the hole goes above 4 GiB */
	ck_assert_int_eq(e820_build(&t, 0xb0000000, 1ull << 30, 0xb0000000, 0x100000), 0);
	ck_assert_uint_eq(t.n, 6); /* low RAM and the ECAM window touch but differ in type */
	ck_assert_uint_eq(t.e[3].addr + t.e[3].size, 0xb0000000);
	ck_assert_uint_eq(t.e[5].addr, 1ull << 32);
	ck_assert_uint_eq(t.e[5].size, 1ull << 30);
	/* too little memory */
	ck_assert_int_eq(e820_build(&t, 0x80000, 0, 0, 0), -1);
}
END_TEST

START_TEST(e820_add_rules)
{
	struct e820_table t;
	unsigned int i;

	memset(&t, 0, sizeof(t));
	ck_assert_int_eq(e820_add(&t, 0x2000, 0x1000, 1), 0);
	ck_assert_int_eq(e820_add(&t, 0x1000, 0x1000, 1), 0); /* merges before */
	ck_assert_int_eq(e820_add(&t, 0x4000, 0x1000, 1), 0);
	ck_assert_uint_eq(t.n, 2);
	ck_assert_int_eq(e820_add(&t, 0x3000, 0x1000, 1), 0); /* bridges both */
	ck_assert_uint_eq(t.n, 1);
	ck_assert_uint_eq(t.e[0].addr, 0x1000);
	ck_assert_uint_eq(t.e[0].size, 0x4000);
	ck_assert_int_eq(e820_add(&t, 0x4800, 0x1000, 2), -1);  /* overlap */
	ck_assert_int_eq(e820_add(&t, 0x800, 0x1000, 2), -1);   /* overlap */
	ck_assert_int_eq(e820_add(&t, 0x9000, 0, 2), -1);       /* empty */
	ck_assert_int_eq(e820_add(&t, ~0ull - 10, 100, 2), -1); /* wraps */
	for (i = 0; t.n < E820_MAX_ENTRIES; i++)
		ck_assert_int_eq(e820_add(&t, 0x100000 + i * 0x2000, 0x1000, 2), 0);
	ck_assert_int_eq(e820_add(&t, 0x10000000, 0x1000, 2), -1); /* full */
}
END_TEST

/* ---- MP table ---- */

static uint8_t
sum8(const uint8_t *p, size_t n)
{
	uint8_t s = 0;

	while (n--)
		s = (uint8_t)(s + *p++);
	return s;
}

START_TEST(mptable_two_cpus)
{
	uint8_t buf[1024];
	size_t n = mptable_build(buf, sizeof(buf), 0xf0000, 2);
	const uint8_t *mpc = buf + 16;

	ck_assert_uint_eq(n, 16 + 44 + 2 * 20 + 20 * 8);
	ck_assert_mem_eq(buf, "_MP_", 4);
	ck_assert_uint_eq(buf[4] | buf[5] << 8 | buf[6] << 16 | (uint32_t)buf[7] << 24, 0xf0010);
	ck_assert_uint_eq(buf[8], 1);
	ck_assert_uint_eq(buf[9], 4);
	ck_assert_uint_eq(sum8(buf, 16), 0);
	ck_assert_mem_eq(mpc, "PCMP", 4);
	ck_assert_uint_eq(mpc[4] | mpc[5] << 8, n - 16);
	ck_assert_uint_eq(sum8(mpc, n - 16), 0);
	ck_assert_uint_eq(mpc[34], 2 + 1 + 1 + 16 + 2); /* entries */
	/* CPU 0 is the BSP, CPU 1 enabled; the IOAPIC takes the next id */
	ck_assert_uint_eq(mpc[44 + 1], 0);
	ck_assert_uint_eq(mpc[44 + 3], 3);
	ck_assert_uint_eq(mpc[64 + 1], 1);
	ck_assert_uint_eq(mpc[64 + 3], 1);
	ck_assert_uint_eq(mpc[84], 1); /* bus */
	ck_assert_uint_eq(mpc[92], 2); /* IOAPIC */
	ck_assert_uint_eq(mpc[93], 2);
	ck_assert_uint_eq(mptable_build(buf, 100, 0xf0000, 2), 0); /* too small */
	ck_assert_uint_eq(mptable_build(buf, sizeof(buf), 0xf0000, 0), 0);
}
END_TEST

/* ---- ACPI ---- */

static uint32_t
le32(const uint8_t *p)
{
	return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static const struct acpi_platform test_platform = {
	.ncpus = 3,
	.ecam_base = 0xb0000000,
	.ecam_end_bus = 0,
	.mmio_base = 0xc0000000,
	.mmio_end = 0xfeafffff,
};

/* the table of XSDT entry i */
static const uint8_t *
xsdt_entry(const uint8_t *buf, const uint8_t *xsdt, unsigned int i)
{
	return buf + (le32(xsdt + 36 + 8 * i) - 0xf1000);
}

static bool
mem_has(const uint8_t *p, size_t n, const void *what, size_t wn)
{
	size_t i;

	for (i = 0; i + wn <= n; i++)
		if (memcmp(p + i, what, wn) == 0)
			return true;
	return false;
}

START_TEST(acpi_tables)
{
	static uint8_t buf[4096];
	size_t n = acpi_build(buf, sizeof(buf), 0xf1000, &test_platform);
	const uint8_t *xsdt, *fadt, *madt, *dsdt, *mcfg;
	/* IO(Decode16, 0x3f8, 0x3f8, 1, 8) and IRQNoFlags(){4}: COM1's _CRS */
	static const uint8_t com1[] = {0x47, 1, 0xf8, 3, 0xf8, 3, 1, 8, 0x22, 0x10, 0};
	/* DWordMemory producer 0xc0000000-0xfeafffff: the root bus's window */
	static const uint8_t win[] = {0x87, 23, 0, 0, 0x0c, 0x01, 0,    0,    0,
				      0,    0,  0, 0, 0xc0, 0xff, 0xff, 0xaf, 0xfe};
	/* Name(\_S5_, Package(2){5, 5}) */
	static const uint8_t s5[] = {0x08, '\\', '_', 'S', '5', '_', 0x12, 6, 2, 0x0a, 5, 0x0a, 5};
	/* EisaId("PNP0A08") as a DWordConst */
	static const uint8_t pnp0a08[] = {0x0c, 0x41, 0xd0, 0x0a, 0x08};

	ck_assert_uint_gt(n, 0);
	ck_assert_uint_le(n, sizeof(buf));
	ck_assert_mem_eq(buf, "RSD PTR ", 8);
	ck_assert_uint_eq(sum8(buf, 20), 0);
	ck_assert_uint_eq(sum8(buf, 36), 0);
	ck_assert_uint_eq(buf[15], 2);
	xsdt = buf + (le32(buf + 24) - 0xf1000);
	ck_assert_mem_eq(xsdt, "XSDT", 4);
	ck_assert_uint_eq(le32(xsdt + 4), 36 + 24);
	ck_assert_uint_eq(sum8(xsdt, le32(xsdt + 4)), 0);
	fadt = xsdt_entry(buf, xsdt, 0);
	madt = xsdt_entry(buf, xsdt, 1);
	mcfg = xsdt_entry(buf, xsdt, 2);
	ck_assert_mem_eq(fadt, "FACP", 4);
	ck_assert_uint_eq(le32(fadt + 4), 276);
	ck_assert_uint_eq(sum8(fadt, 276), 0);
	ck_assert(le32(fadt + 112) & (1u << 20)); /* hardware-reduced */
	ck_assert(le32(fadt + 112) & (1u << 10)); /* reset register supported */
	ck_assert_uint_eq(fadt[116], 1);          /* RESET_REG: system I/O */
	ck_assert_uint_eq(le32(fadt + 120), ACPI_RESET_PORT);
	ck_assert_uint_eq(fadt[128], ACPI_RESET_VALUE);
	ck_assert_uint_eq(fadt[244], 1); /* SLEEP_CONTROL_REG */
	ck_assert_uint_eq(le32(fadt + 248), ACPI_SLEEP_CTL_PORT);
	ck_assert_uint_eq(fadt[256], 1); /* SLEEP_STATUS_REG */
	ck_assert_uint_eq(le32(fadt + 260), ACPI_SLEEP_STS_PORT);
	ck_assert(fadt[109] & 2); /* an 8042 is there */
	dsdt = buf + (le32(fadt + 40) - 0xf1000);
	ck_assert_uint_eq(le32(fadt + 140), le32(fadt + 40)); /* X_DSDT */
	ck_assert_mem_eq(dsdt, "DSDT", 4);
	ck_assert_uint_gt(le32(dsdt + 4), 36 + 200);
	ck_assert_uint_eq(sum8(dsdt, le32(dsdt + 4)), 0);
	ck_assert(mem_has(dsdt, le32(dsdt + 4), "PCI0", 4));
	ck_assert(mem_has(dsdt, le32(dsdt + 4), pnp0a08, sizeof(pnp0a08)));
	ck_assert(mem_has(dsdt, le32(dsdt + 4), com1, sizeof(com1)));
	ck_assert(mem_has(dsdt, le32(dsdt + 4), win, sizeof(win)));
	ck_assert(mem_has(dsdt, le32(dsdt + 4), s5, sizeof(s5)));
	ck_assert(mem_has(dsdt, le32(dsdt + 4), "ACPI0013", 8));
	/* MCFG: one allocation, the ECAM window for bus 0 */
	ck_assert_mem_eq(mcfg, "MCFG", 4);
	ck_assert_uint_eq(le32(mcfg + 4), 60);
	ck_assert_uint_eq(sum8(mcfg, 60), 0);
	ck_assert_uint_eq(le32(mcfg + 44), 0xb0000000);
	ck_assert_uint_eq(le32(mcfg + 48), 0);
	ck_assert_uint_eq(mcfg[54], 0);
	ck_assert_uint_eq(mcfg[55], 0);
	ck_assert_mem_eq(madt, "APIC", 4);
	ck_assert_uint_eq(le32(madt + 4), 36 + 8 + 3 * 8 + 12 + 6);
	ck_assert_uint_eq(sum8(madt, le32(madt + 4)), 0);
	ck_assert_uint_eq(le32(madt + 36), 0xfee00000);
	/* three enabled LAPICs with ids 0..2, then the IOAPIC with id 3 */
	ck_assert_uint_eq(madt[44], 0);
	ck_assert_uint_eq(madt[44 + 16 + 3], 2);
	ck_assert_uint_eq(le32(madt + 44 + 16 + 4), 1);
	ck_assert_uint_eq(madt[68], 1);
	ck_assert_uint_eq(madt[70], 3);
	ck_assert_uint_eq(le32(madt + 72), 0xfec00000);
	ck_assert_uint_eq(acpi_build(buf, 100, 0xf1000, &test_platform), 0);
}
END_TEST

/* AML package lengths: 1 byte below 64, then 2 bytes (ACPI 6.4, 20.2.4) */
START_TEST(aml_pkglength)
{
	static uint8_t buf[512];
	struct aml a;
	unsigned int i;

	aml_init(&a, buf, sizeof(buf));
	aml_scope(&a, "\\_SB_");
	aml_close(&a);
	ck_assert_uint_eq(a.len, 7);
	ck_assert_uint_eq(buf[0], 0x10);
	ck_assert_uint_eq(buf[1], 6); /* itself, '\\', 4 name bytes */
	aml_init(&a, buf, sizeof(buf));
	aml_package(&a, 40);
	for (i = 0; i < 40; i++)
		aml_int(&a, 0x1234); /* 3 bytes each */
	aml_close(&a);
	/* body 1 + 120 bytes, +2 length bytes = 123 = 0x7b */
	ck_assert_uint_eq(a.len, 1 + 2 + 1 + 120);
	ck_assert_uint_eq(buf[1], 0x40 | 0xb);
	ck_assert_uint_eq(buf[2], 0x7);
	ck_assert_uint_eq(buf[3], 40);
	/* what does not fit is refused, not truncated */
	aml_init(&a, buf, 8);
	aml_string(&a, "too long for eight bytes");
	ck_assert(a.overflow);
}
END_TEST

/* ---- CPUID normalisation ---- */

static struct kvm_cpuid_entry2 *
leaf(struct kvm_cpuid_entry2 *e, unsigned int n, uint32_t fn, uint32_t idx)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (e[i].function == fn && e[i].index == idx)
			return &e[i];
	return NULL;
}

START_TEST(cpuid_normalise)
{
	/* what a host's KVM_GET_SUPPORTED_CPUID might say (Zen 4-like bits) */
	struct kvm_cpuid_entry2 e[] = {
		{.function = 1,
		 .eax = 0xa10f11,
		 .ebx = 0x3f020800,
		 .ecx = 0x7ef8320b,
		 .edx = 0x078bfbff},
		{.function = 7, .index = 0, .ebx = 0xf1bf07ab, .ecx = 0x405fce, .edx = 0x10},
		{.function = 0xa, .eax = 0x07300402, .ebx = 0x1f},
		{.function = 0xb, .index = 0, .eax = 1, .ebx = 2, .ecx = 0x100, .edx = 7},
		{.function = 0xb, .index = 1, .eax = 7, .ebx = 64, .ecx = 0x201, .edx = 7},
		{.function = 0xb, .index = 2, .eax = 0, .ebx = 0, .ecx = 2, .edx = 7},
		{.function = 0xd, .index = 0, .eax = 0x2e7, .ebx = 0x988, .ecx = 0x988},
		{.function = 0x80000001, .ecx = 0x75c237ff, .edx = 0x2fd3fbff},
		{.function = 0x80000008, .eax = 0x3030, .ecx = 0x703f},
		{.function = 0x8000001e, .eax = 9, .ebx = 0x105, .ecx = 0x3},
	};
	const unsigned int n = sizeof(e) / sizeof(e[0]);
	struct cpuid_policy p = {.ncpus = 3, .index = 2};
	char bad[32];

	ck_assert_int_eq(cpuid_mask_parse(&p, "cx16,xsave,rdtscp", bad, sizeof(bad)), 0);
	ck_assert_int_eq(cpuid_mask_parse(&p, "cx16,nosuch", bad, sizeof(bad)), -1);
	ck_assert_str_eq(bad, "nosuch");
	ck_assert_int_eq(cpuid_mask_parse(&p, ",", bad, sizeof(bad)), -1);
	p.nmask = 3; /* what the first call added */
	cpuid_normalize(e, n, &p);
	/* leaf 1: APIC id 2, 3 logical CPUs with HTT, hypervisor, no CX16/XSAVE/OSXSAVE/AVX */
	ck_assert_uint_eq(leaf(e, n, 1, 0)->ebx >> 24, 2);
	ck_assert_uint_eq((leaf(e, n, 1, 0)->ebx >> 16) & 0xff, 3);
	ck_assert(leaf(e, n, 1, 0)->edx & (1u << 28));
	ck_assert(leaf(e, n, 1, 0)->ecx & (1u << 31));
	ck_assert(!(leaf(e, n, 1, 0)->ecx & (1u << 13)));
	ck_assert(!(leaf(e, n, 1, 0)->ecx & (1u << 26)));
	ck_assert(!(leaf(e, n, 1, 0)->ecx & (1u << 27)));
	ck_assert(!(leaf(e, n, 1, 0)->ecx & (1u << 28)));
	ck_assert(leaf(e, n, 1, 0)->ecx & (1u << 23)); /* popcnt was not asked for */
	/* no AVX2 without XSAVE, no XSAVE leaf, no PMU, no RDTSCP */
	ck_assert(!(leaf(e, n, 7, 0)->ebx & (1u << 5)));
	ck_assert_uint_eq(leaf(e, n, 0xd, 0)->eax, 0);
	ck_assert_uint_eq(leaf(e, n, 0xa, 0)->eax, 0);
	ck_assert(!(leaf(e, n, 0x80000001, 0)->edx & (1u << 27)));
	/* topology: 1 thread per core, 3 cores, x2APIC id 2 */
	ck_assert_uint_eq(leaf(e, n, 0xb, 0)->ebx, 1);
	ck_assert_uint_eq(leaf(e, n, 0xb, 0)->eax, 0);
	ck_assert_uint_eq(leaf(e, n, 0xb, 1)->ebx, 3);
	ck_assert_uint_eq(leaf(e, n, 0xb, 1)->eax, 2);
	ck_assert_uint_eq(leaf(e, n, 0xb, 1)->ecx, 0x201);
	ck_assert_uint_eq(leaf(e, n, 0xb, 2)->ecx, 2);
	ck_assert_uint_eq(leaf(e, n, 0xb, 1)->edx, 2);
	ck_assert_uint_eq(leaf(e, n, 0x80000008, 0)->ecx & 0xff, 2);
	ck_assert_uint_eq(leaf(e, n, 0x8000001e, 0)->eax, 2);
	/* one vCPU: no HTT */
	p.ncpus = 1;
	p.index = 0;
	cpuid_normalize(e, n, &p);
	ck_assert(!(leaf(e, n, 1, 0)->edx & (1u << 28)));
	ck_assert_uint_eq((leaf(e, n, 1, 0)->ebx >> 16) & 0xff, 1);
	/* the soft-CPL0 mask names only known features */
	p.nmask = 0;
	ck_assert_int_eq(cpuid_mask_parse(&p, cpuid_soft_cpl0_mask, bad, sizeof(bad)), 0);
	ck_assert_ptr_nonnull(cpuid_feature_find("popcnt"));
}
END_TEST

/* ---- PVH ---- */

START_TEST(pvh_entry_and_start_info)
{
	static uint8_t elf[512];
	Elf64_Ehdr *eh = (Elf64_Ehdr *)elf;
	Elf64_Phdr *ph = (Elf64_Phdr *)(elf + sizeof(*eh));
	uint8_t *note = elf + 256;
	struct e820_table t = {0};
	static uint8_t info[512];
	size_t n;

	memcpy(elf, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_phoff = sizeof(*eh);
	eh->e_phentsize = sizeof(Elf64_Phdr);
	eh->e_phnum = 2;
	ph[0].p_type = PT_LOAD;
	ph[1].p_type = PT_NOTE;
	ph[1].p_offset = 256;
	/* an unrelated note first ("GNU", type 3, 5 bytes of desc), then Xen's 18 */
	memcpy(note, "\x04\0\0\0\x05\0\0\0\x03\0\0\0GNU\0abcde\0\0\0", 24);
	memcpy(note + 24, "\x04\0\0\0\x04\0\0\0\x12\0\0\0Xen\0\x40\x03\x00\x01", 20);
	ph[1].p_filesz = 44;
	ck_assert_uint_eq(pvh_find_entry(elf, sizeof(elf)), 0x1000340);
	/* a truncated note is not read past its segment */
	ph[1].p_filesz = 40;
	ck_assert_uint_eq(pvh_find_entry(elf, sizeof(elf)), 0);
	ph[1].p_filesz = 44;
	ck_assert_uint_eq(pvh_find_entry(elf, 200), 0); /* the segment is outside the file */
	note[24 + 8] = 17;                              /* another Xen note type */
	ck_assert_uint_eq(pvh_find_entry(elf, sizeof(elf)), 0);

	ck_assert_int_eq(e820_build(&t, 128ull << 20, 0, 0xb0000000, 0x100000), 0);
	n = pvh_build_start_info(info, sizeof(info), 0x6000, 0x20000, 0xf1000, 0x7000000, 12345,
				 &t);
	ck_assert_uint_eq(n, 56 + 32 + t.n * 24);
	ck_assert_uint_eq(le32(info), 0x336ec578);
	ck_assert_uint_eq(le32(info + 4), 1);
	ck_assert_uint_eq(le32(info + 12), 1);           /* one module: the initrd */
	ck_assert_uint_eq(le32(info + 16), 0x6000 + 56); /* modlist_paddr */
	ck_assert_uint_eq(le32(info + 56), 0x7000000);
	ck_assert_uint_eq(le32(info + 64), 12345);
	ck_assert_uint_eq(le32(info + 24), 0x20000);     /* cmdline */
	ck_assert_uint_eq(le32(info + 32), 0xf1000);     /* rsdp */
	ck_assert_uint_eq(le32(info + 40), 0x6000 + 88); /* memmap_paddr */
	ck_assert_uint_eq(le32(info + 48), t.n);
	ck_assert_uint_eq(le32(info + 88 + 8), 0x9fc00); /* first entry: low RAM */
	ck_assert_uint_eq(le32(info + 88 + 16), 1);
	ck_assert_uint_eq(pvh_build_start_info(info, 60, 0x6000, 0, 0, 0, 0, &t), 0);
}
END_TEST

/* ---- boot params ---- */

static uint16_t
rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t
rd32(const uint8_t *p)
{
	return rd16(p) | (uint32_t)rd16(p + 2) << 16;
}

/* A made-up bzImage head: setup header of protocol 2.15 with a 64-bit entry. */
static uint8_t *
fake_bzimage(size_t *len)
{
	uint8_t *img = calloc(1, 0x4000);

	img[0x1f1] = 4; /* setup_sects */
	img[0x1fe] = 0x55;
	img[0x1ff] = 0xaa;
	img[0x200] = 0xeb;
	img[0x201] = 0x6a; /* the header ends at 0x202 + 0x6a = 0x26c */
	memcpy(img + 0x202, "HdrS", 4);
	img[0x206] = 0x0f;
	img[0x207] = 0x02;
	img[0x236] = 0x03; /* XLF_KERNEL_64 | XLF_CAN_BE_LOADED_ABOVE_4G */
	img[0x238] = 0xff;
	img[0x239] = 0x07; /* cmdline_size 2047 */
	img[0x22c] = 0xff;
	img[0x22d] = 0xff;
	img[0x22e] = 0xff;
	img[0x22f] = 0x7f; /* initrd_addr_max */
	img[0x260] = 0x00;
	img[0x262] = 0x10; /* init_size 1 MiB */
	*len = 0x4000;
	return img;
}

START_TEST(boot_params_layout)
{
	/* offsets of struct boot_params / setup_header in the boot protocol */
	ck_assert_uint_eq(BP_E820_ENTRIES, 0x1e8);
	ck_assert_uint_eq(BP_HDR, 0x1f1);
	ck_assert_uint_eq(BP_CMD_LINE_PTR, 0x228);
	ck_assert_uint_eq(BP_E820_TABLE, 0x2d0);
	ck_assert_uint_eq(BP_E820_TABLE + 20 * BP_E820_MAX, 0xcd0);
}
END_TEST

START_TEST(bzimage_header)
{
	struct bzimage_info bz;
	const char *why = NULL;
	size_t len;
	uint8_t *img = fake_bzimage(&len);

	ck_assert_int_eq(bzimage_parse(img, len, &bz, &why), 0);
	ck_assert_uint_eq(bz.setup_size, 5 * 512);
	ck_assert_uint_eq(bz.version, 0x20f);
	ck_assert_uint_eq(bz.cmdline_size, 2047);
	ck_assert_uint_eq(bz.init_size, 0x100000);
	img[0x236] = 0; /* no 64-bit entry */
	ck_assert_int_eq(bzimage_parse(img, len, &bz, &why), -1);
	ck_assert_str_eq(why, "no 64-bit entry point");
	img[0x202] = 'X';
	ck_assert_int_eq(bzimage_parse(img, len, &bz, &why), -1);
	ck_assert_int_eq(bzimage_parse(img, 0x100, &bz, &why), -1);
	free(img);
}
END_TEST

START_TEST(boot_params_fill)
{
	struct e820_table t;
	uint8_t *bp = malloc(BP_SIZE);
	size_t len;
	uint8_t *img = fake_bzimage(&len);

	memset(bp, 0xaa, BP_SIZE);
	ck_assert_int_eq(e820_build(&t, 64ull << 20, 0, 0xb0000000, 0x100000), 0);
	boot_params_build(bp, img, len, 0x20000, 0x3f00000, 0x12345, &t);
	/* the image's header is copied, up to its end */
	ck_assert_uint_eq(rd32(bp + BP_HEADER), BP_HDRS_MAGIC);
	ck_assert_uint_eq(rd16(bp + BP_VERSION), 0x20f);
	ck_assert_uint_eq(rd32(bp + BP_CMDLINE_SIZE), 2047);
	ck_assert_uint_eq(bp[0x26c], 0); /* past the header: zeroed */
	ck_assert_uint_eq(bp[0], 0);
	/* the loader's fields */
	ck_assert_uint_eq(bp[BP_TYPE_OF_LOADER], 0xff);
	ck_assert(bp[BP_LOADFLAGS] & BP_LOADED_HIGH);
	ck_assert(bp[BP_LOADFLAGS] & BP_CAN_USE_HEAP);
	ck_assert_uint_eq(rd32(bp + BP_CMD_LINE_PTR), 0x20000);
	ck_assert_uint_eq(rd32(bp + BP_RAMDISK_IMAGE), 0x3f00000);
	ck_assert_uint_eq(rd32(bp + BP_RAMDISK_SIZE), 0x12345);
	ck_assert_uint_eq(rd32(bp + BP_EXT_RAMDISK_IMAGE), 0);
	ck_assert_uint_eq(bp[BP_E820_ENTRIES], t.n);
	ck_assert_uint_eq(rd32(bp + BP_E820_TABLE + 20 * 3), 0x100000); /* addr lo */
	ck_assert_uint_eq(rd32(bp + BP_E820_TABLE + 20 * 3 + 8), (64u << 20) - 0x100000);
	ck_assert_uint_eq(rd32(bp + BP_E820_TABLE + 20 * 3 + 16), E820_TYPE_RAM);

	/* an ELF vmlinux gets a made-up minimal header */
	boot_params_build(bp, NULL, 0, 0x20000, 0, 0, &t);
	ck_assert_uint_eq(rd16(bp + BP_BOOT_FLAG), 0xaa55);
	ck_assert_uint_eq(rd32(bp + BP_HEADER), BP_HDRS_MAGIC);
	ck_assert_uint_eq(rd32(bp + BP_RAMDISK_SIZE), 0);
	free(img);
	free(bp);
}
END_TEST

/* ---- PCI config space ---- */

static unsigned int moves;
static uint64_t moved_from, moved_to;

static void
on_bar_moved(void *opaque, unsigned int bar, uint64_t old_addr, uint64_t new_addr)
{
	(void)opaque;
	(void)bar;
	moves++;
	moved_from = old_addr;
	moved_to = new_addr;
}

static unsigned int cap_writes;

static void
on_cap_write(void *opaque, uint32_t off, uint32_t len)
{
	(void)opaque;
	(void)off;
	(void)len;
	cap_writes++;
}

static const struct vmm_pci_dev_ops test_pci_ops = {
	.cap_write = on_cap_write,
	.bar_moved = on_bar_moved,
};

START_TEST(pci_config_space)
{
	struct vmm_pci_dev d;
	uint8_t body[6] = {1, 2, 3, 4, 5, 6};
	int c1, c2;

	vmm_pci_dev_init(&d, 0x1af4, 0x1041, 0x020000, 1, 0x1af4, 0x1100);
	d.ops = &test_pci_ops;
	ck_assert_uint_eq(vmm_pci_cfg_read(&d, 0, 4), 0x10411af4);
	ck_assert_uint_eq(vmm_pci_cfg_read(&d, 8, 4), 0x02000001);
	/* read-only ids */
	vmm_pci_cfg_write(&d, 0, 0xffffffff, 4);
	ck_assert_uint_eq(vmm_pci_cfg_read(&d, 0, 4), 0x10411af4);
	/* command: memory + master writable, I/O space not */
	vmm_pci_cfg_write(&d, 4, 0xffff, 2);
	ck_assert_uint_eq(vmm_pci_cfg_read(&d, 4, 2), 0x0406);

	/* BAR sizing: all ones reads back the size mask, then the address sticks */
	vmm_pci_set_bar(&d, 0, 0xc0000000, 0x8000);
	vmm_pci_cfg_write(&d, 0x10, 0xffffffff, 4);
	ck_assert_uint_eq(vmm_pci_cfg_read(&d, 0x10, 4), 0xffff8000);
	ck_assert_uint_eq(moves, 0);
	/* while sized the BAR still decodes where it was */
	ck_assert_uint_eq(vmm_pci_bar_addr(&d, 0), 0xc0000000);
	vmm_pci_cfg_write(&d, 0x10, 0xc0010000, 4);
	ck_assert_uint_eq(vmm_pci_bar_addr(&d, 0), 0xc0010000);
	ck_assert_uint_eq(moves, 1);
	ck_assert_uint_eq(moved_from, 0xc0000000); /* not the sizing pattern */
	ck_assert_uint_eq(moved_to, 0xc0010000);
	/* sized again and the same address restored: no move at all */
	vmm_pci_cfg_write(&d, 0x10, 0xffffffff, 4);
	vmm_pci_cfg_write(&d, 0x10, 0xc0010000, 4);
	ck_assert_uint_eq(moves, 1);
	/* any value with all address bits set is the sizing pattern */
	vmm_pci_cfg_write(&d, 0x10, 0xffff8000, 4);
	ck_assert_uint_eq(vmm_pci_bar_addr(&d, 0), 0xc0010000);
	ck_assert_uint_eq(moves, 1);
	/* a 16-bit write to the upper half moves it too, from where it decoded */
	vmm_pci_cfg_write(&d, 0x12, 0xd000, 2);
	ck_assert_uint_eq(vmm_pci_bar_addr(&d, 0), 0xd0008000); /* the register held the pattern */
	ck_assert_uint_eq(moves, 2);
	ck_assert_uint_eq(moved_from, 0xc0010000);
	vmm_pci_cfg_write(&d, 0x10, 0xd0000000, 4);
	ck_assert_uint_eq(vmm_pci_bar_addr(&d, 0), 0xd0000000);
	/* a write across a dword boundary is no access */
	vmm_pci_cfg_write(&d, 0x0e, 0, 4);
	ck_assert_uint_eq(vmm_pci_bar_addr(&d, 0), 0xd0000000);
	/* an unimplemented BAR reads zero whatever is written */
	vmm_pci_cfg_write(&d, 0x14, 0xffffffff, 4);
	ck_assert_uint_eq(vmm_pci_cfg_read(&d, 0x14, 4), 0);

	/* capability list */
	c1 = vmm_pci_add_cap(&d, PCI_CAP_ID_MSIX, body, 6);
	c2 = vmm_pci_add_cap(&d, PCI_CAP_ID_VNDR, body, 3);
	ck_assert_int_eq(c1, 0x40);
	ck_assert_int_eq(c2, 0x48);
	ck_assert(vmm_pci_cfg_read(&d, 6, 2) & 0x10);
	ck_assert_uint_eq(vmm_pci_cfg_read(&d, 0x34, 1), 0x40);
	ck_assert_uint_eq(vmm_pci_cfg_read(&d, 0x41, 1), 0x48);
	ck_assert_uint_eq(vmm_pci_cfg_read(&d, 0x49, 1), 0);
	ck_assert_uint_eq(vmm_pci_cfg_read(&d, 0x42, 4), 0x04030201);
	/* capability bodies are read-only but for the bits a device opens */
	vmm_pci_cfg_write(&d, 0x42, 0xbeef, 2);
	ck_assert_uint_eq(vmm_pci_cfg_read(&d, 0x42, 2), 0x0201);
	vmm_pci_set_wmask(&d, 0x43, 0xc0);
	vmm_pci_cfg_write(&d, 0x42, 0xbeef, 2);
	ck_assert_uint_eq(vmm_pci_cfg_read(&d, 0x42, 2), 0x8201);
	ck_assert_uint_eq(cap_writes, 2);
	/* out of range, or wider than a dword */
	ck_assert_uint_eq(vmm_pci_cfg_read(&d, 0xfe, 4), 0xffffffff);
	ck_assert_uint_eq(vmm_pci_cfg_read(&d, 0, 8), 0xffffffff);
	ck_assert_uint_eq(vmm_pci_cfg_read(&d, 0, 0), 0xffffffff);
}
END_TEST

/* ---- MSI-X ---- */

static unsigned int updates[4];
static bool pending[4];

static void
on_update(void *opaque, unsigned int vec)
{
	(void)opaque;
	updates[vec]++;
}

static bool
on_pending(void *opaque, unsigned int vec)
{
	(void)opaque;
	return pending[vec];
}

static void
tbl_w32(struct vmm_msix *m, unsigned int vec, unsigned int field, uint32_t v)
{
	vmm_msix_table_write(m, vec * 16 + field, &v, 4);
}

static uint32_t
tbl_r32(struct vmm_msix *m, unsigned int vec, unsigned int field)
{
	uint32_t v;

	vmm_msix_table_read(m, vec * 16 + field, &v, 4);
	return v;
}

START_TEST(msix_table)
{
	struct vmm_msix m;
	uint64_t pba, addr = 0xfee01000;

	memset(updates, 0, sizeof(updates));
	memset(pending, 0, sizeof(pending));
	vmm_msix_init(&m, 3, on_update, on_pending, NULL);
	/* after reset: every vector masked, MSI-X disabled */
	ck_assert_uint_eq(tbl_r32(&m, 0, 12), 1);
	ck_assert(vmm_msix_masked(&m, 0));
	tbl_w32(&m, 1, 0, 0xfee00000);
	tbl_w32(&m, 1, 8, 0x41);
	ck_assert_uint_eq(updates[1], 2);
	ck_assert_uint_eq(vmm_msix_data(&m, 1), 0x41);
	tbl_w32(&m, 1, 12, 0); /* unmask, but MSI-X is still disabled */
	ck_assert(vmm_msix_masked(&m, 1));
	vmm_msix_control(&m, MSIX_CTRL_ENABLE);
	ck_assert(!vmm_msix_masked(&m, 1));
	ck_assert(vmm_msix_masked(&m, 0));
	ck_assert_uint_eq(updates[0], 1); /* every vector hears of the enable */
	/* the function mask masks all */
	vmm_msix_control(&m, MSIX_CTRL_ENABLE | MSIX_CTRL_FMASK);
	ck_assert(vmm_msix_masked(&m, 1));
	vmm_msix_control(&m, MSIX_CTRL_ENABLE);
	/* a 64-bit address write */
	vmm_msix_table_write(&m, 2 * 16, &addr, 8);
	ck_assert_uint_eq(vmm_msix_addr(&m, 2), 0xfee01000);
	/* reserved control bits read as zero; writes of the same value are no news */
	updates[1] = 0;
	tbl_w32(&m, 1, 12, 0xfffffffe);
	ck_assert_uint_eq(tbl_r32(&m, 1, 12), 0);
	ck_assert_uint_eq(updates[1], 0);
	/* pending bits: only for masked vectors the device holds an interrupt for */
	pending[0] = pending[1] = pending[2] = true;
	vmm_msix_pba_read(&m, 0, &pba, 8);
	ck_assert_uint_eq(pba, 0x5); /* 1 is unmasked: delivered, not pending */
	/* unaligned or odd-sized accesses do nothing */
	tbl_w32(&m, 0, 8, 0x99);
	vmm_msix_table_write(&m, 8 + 1, "\x55", 1);
	ck_assert_uint_eq(vmm_msix_data(&m, 0), 0x99);
	/* beyond the table */
	tbl_w32(&m, 3, 8, 0x77);
	ck_assert_uint_eq(tbl_r32(&m, 3, 8), 0);
	ck_assert(vmm_msix_masked(&m, 3));
}
END_TEST

static Suite *
vmm_suite(void)
{
	Suite *s = suite_create("vmm");
	TCase *tc = tcase_create("pure");

	tcase_add_test(tc, e820_vm_map);
	tcase_add_test(tc, e820_add_rules);
	tcase_add_test(tc, boot_params_layout);
	tcase_add_test(tc, bzimage_header);
	tcase_add_test(tc, boot_params_fill);
	tcase_add_test(tc, pci_config_space);
	tcase_add_test(tc, msix_table);
	vmm_virtio_tests(tc);
	tcase_add_test(tc, mptable_two_cpus);
	tcase_add_test(tc, acpi_tables);
	tcase_add_test(tc, aml_pkglength);
	tcase_add_test(tc, cpuid_normalise);
	tcase_add_test(tc, pvh_entry_and_start_info);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(vmm_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
