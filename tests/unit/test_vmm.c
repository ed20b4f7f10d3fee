/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the VMM's pure parts (no KVM): the e820 map, the Linux zero
 * page, PCI config space (BAR sizing, capability list, read-only fields),
 * MSI-X table emulation (masking, function mask, pending bits), the MP
 * and ACPI tables; the virtio parts are in test_vmm_virtio.c.
 */
#include <check.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "acpi.h"
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
	ck_assert_int_eq(e820_add(&t, 0x4800, 0x1000, 2), -1); /* overlap */
	ck_assert_int_eq(e820_add(&t, 0x800, 0x1000, 2), -1);  /* overlap */
	ck_assert_int_eq(e820_add(&t, 0x9000, 0, 2), -1);      /* empty */
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
	ck_assert_uint_eq(mpc[84], 1);      /* bus */
	ck_assert_uint_eq(mpc[92], 2);      /* IOAPIC */
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

START_TEST(acpi_tables)
{
	static uint8_t buf[4096];
	size_t n = acpi_build(buf, sizeof(buf), 0xf1000, 3);
	const uint8_t *xsdt, *fadt, *madt, *dsdt;

	ck_assert_uint_gt(n, 0);
	ck_assert_mem_eq(buf, "RSD PTR ", 8);
	ck_assert_uint_eq(sum8(buf, 20), 0);
	ck_assert_uint_eq(sum8(buf, 36), 0);
	ck_assert_uint_eq(buf[15], 2);
	xsdt = buf + (le32(buf + 24) - 0xf1000);
	ck_assert_mem_eq(xsdt, "XSDT", 4);
	ck_assert_uint_eq(le32(xsdt + 4), 36 + 16);
	ck_assert_uint_eq(sum8(xsdt, le32(xsdt + 4)), 0);
	fadt = buf + (le32(xsdt + 36) - 0xf1000);
	madt = buf + (le32(xsdt + 44) - 0xf1000);
	ck_assert_mem_eq(fadt, "FACP", 4);
	ck_assert_uint_eq(le32(fadt + 4), 276);
	ck_assert_uint_eq(sum8(fadt, 276), 0);
	ck_assert(le32(fadt + 112) & (1u << 20)); /* hardware-reduced */
	dsdt = buf + (le32(fadt + 40) - 0xf1000);
	ck_assert_mem_eq(dsdt, "DSDT", 4);
	ck_assert_uint_eq(sum8(dsdt, le32(dsdt + 4)), 0);
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
	ck_assert_uint_eq(acpi_build(buf, 100, 0xf1000, 3), 0);
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
	ck_assert_uint_eq(rd32(bp + BP_E820_TABLE + 20 * 3), 0x100000);        /* addr lo */
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
