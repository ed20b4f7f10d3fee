/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the VMM's pure parts (no KVM): the e820 map, the Linux zero
 * page, PCI config space (BAR sizing, capability list, read-only fields),
 * MSI-X table emulation (masking, function mask, pending bits) and the
 * virtio-pci transport on a fake of KVM (kick ioeventfds following BAR0,
 * read-only capabilities).
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
#include "virtio_net_ctrl.h"
#include "virtio_pci.h"

#include <linux/virtio_config.h>
#include <linux/virtio_net.h>
#include <linux/virtio_pci.h>
#include <linux/virtio_ring.h>

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

/* ---- virtio-pci transport: BAR moves and read-only capabilities ---- */

/* A fake of KVM's ioeventfd table: assigning a registered (fd, address) or
 * removing an unregistered one fails, as KVM_IOEVENTFD does. */
#define FAKE_EVENTFDS 8

static struct {
	int fd[FAKE_EVENTFDS];
	uint64_t addr[FAKE_EVENTFDS];
	unsigned int n;
	unsigned int refused;
	uint64_t region_base;
} kvm_fake;

static int
fake_ioeventfd(void *ctx, int fd, uint64_t addr, bool assign)
{
	unsigned int i;

	(void)ctx;
	for (i = 0; i < kvm_fake.n; i++)
		if (kvm_fake.fd[i] == fd && kvm_fake.addr[i] == addr)
			break;
	if (assign ? i < kvm_fake.n || kvm_fake.n == FAKE_EVENTFDS : i == kvm_fake.n) {
		kvm_fake.refused++;
		return -1;
	}
	if (assign) {
		kvm_fake.fd[kvm_fake.n] = fd;
		kvm_fake.addr[kvm_fake.n++] = addr;
	} else {
		kvm_fake.fd[i] = kvm_fake.fd[--kvm_fake.n];
		kvm_fake.addr[i] = kvm_fake.addr[kvm_fake.n];
	}
	return 0;
}

static void
fake_bar_moved(void *ctx, uint64_t base)
{
	(void)ctx;
	kvm_fake.region_base = base;
}

static struct {
	unsigned int n;
	uint64_t addr;
	uint32_t data;
	int kicked_fd;
} msi_fake;

static void
fake_signal_msi(void *ctx, uint64_t addr, uint32_t data)
{
	(void)ctx;
	msi_fake.n++;
	msi_fake.addr = addr;
	msi_fake.data = data;
}

static void
fake_kick(void *ctx, int fd)
{
	(void)ctx;
	msi_fake.kicked_fd = fd;
}

static const struct vmm_virtio_host_ops fake_host = {
	.ioeventfd = fake_ioeventfd,
	.bar_moved = fake_bar_moved,
	.signal_msi = fake_signal_msi,
	.kick = fake_kick,
};

static bool
fake_registered(int fd, uint64_t addr)
{
	unsigned int i;

	for (i = 0; i < kvm_fake.n; i++)
		if (kvm_fake.fd[i] == fd && kvm_fake.addr[i] == addr)
			return true;
	return false;
}

static void
dev_config_read(void *opaque, uint64_t off, void *data, uint32_t len)
{
	static const uint8_t img[6] = {0x52, 0x54, 0, 0x12, 0x34, 0x56};

	(void)opaque;
	vmm_virtio_config_copy(img, sizeof(img), off, data, len);
}

static bool
dev_driver_ok(void *opaque)
{
	(void)opaque;
	return true;
}

/* a device whose reset takes time while dev_busy (a backend still running
 * the rings) */
static bool dev_busy;
static unsigned int dev_resets;

static bool
dev_reset(void *opaque)
{
	(void)opaque;
	dev_resets++;
	return !dev_busy;
}

static const struct vmm_virtio_ops fake_dev = {
	.config_read = dev_config_read,
	.driver_ok = dev_driver_ok,
	.reset = dev_reset,
};

#define BAR0 0xc0000000u
#define KICK0 100

static void
virtio_fake_setup(struct vmm_virtio_pci *v)
{
	memset(&kvm_fake, 0, sizeof(kvm_fake));
	memset(&msi_fake, 0, sizeof(msi_fake));
	msi_fake.kicked_fd = -1;
	dev_busy = false;
	dev_resets = 0;
	ck_assert_int_eq(vmm_virtio_pci_setup(v, 1, 2, 256, BAR0, &fake_dev, NULL, &fake_host,
					      NULL), 0);
	ck_assert_int_eq(vmm_virtio_pci_set_kickfd(v, 0, KICK0), 0);
	ck_assert_int_eq(vmm_virtio_pci_set_kickfd(v, 1, KICK0 + 1), 0);
	kvm_fake.region_base = BAR0; /* where the VM would put the region */
}

/* Exactly the two kicks at base + notify, and no refused KVM call. */
static void
assert_kicks_at(uint64_t base)
{
	ck_assert_uint_eq(kvm_fake.n, 2);
	ck_assert(fake_registered(KICK0, base + VIRTIO_BAR_NOTIFY));
	ck_assert(fake_registered(KICK0 + 1, base + VIRTIO_BAR_NOTIFY + VIRTIO_NOTIFY_MULT));
	ck_assert_uint_eq(kvm_fake.refused, 0);
	ck_assert_uint_eq(kvm_fake.region_base, base);
}

START_TEST(virtio_bar_sizing_moves_kicks)
{
	struct vmm_virtio_pci v;

	virtio_fake_setup(&v);
	assert_kicks_at(BAR0);
	/* Linux's sizing: all ones, read the size, put the address back */
	vmm_pci_cfg_write(&v.pci, 0x10, 0xffffffff, 4);
	ck_assert_uint_eq(vmm_pci_cfg_read(&v.pci, 0x10, 4), ~(uint32_t)(VIRTIO_BAR_SIZE - 1));
	vmm_pci_cfg_write(&v.pci, 0x10, BAR0, 4);
	assert_kicks_at(BAR0);
	/* sizing, then a new address: the kicks leave the old one, never the
	 * sizing pattern */
	vmm_pci_cfg_write(&v.pci, 0x10, 0xffffffff, 4);
	vmm_pci_cfg_write(&v.pci, 0x10, 0xd0000000, 4);
	assert_kicks_at(0xd0000000);
	ck_assert(!fake_registered(KICK0, BAR0 + VIRTIO_BAR_NOTIFY));
	ck_assert(!fake_registered(KICK0, 0xffff8000u + VIRTIO_BAR_NOTIFY));
	ck_assert_uint_eq(vmm_virtio_notify_addr(&v, 1),
			  0xd0000000u + VIRTIO_BAR_NOTIFY + VIRTIO_NOTIFY_MULT);
	/* sized in 16-bit halves, then moved with 16-bit writes */
	vmm_pci_cfg_write(&v.pci, 0x10, 0xffff, 2);
	vmm_pci_cfg_write(&v.pci, 0x12, 0xffff, 2);
	vmm_pci_cfg_write(&v.pci, 0x12, 0xe000, 2);
	vmm_pci_cfg_write(&v.pci, 0x10, 0x0000, 2);
	assert_kicks_at(0xe0000000);
	ck_assert_uint_eq(vmm_pci_bar_addr(&v.pci, 0), 0xe0000000);
}
END_TEST

START_TEST(virtio_caps_read_only)
{
	struct vmm_virtio_pci v;
	uint8_t before[PCI_CFG_SIZE];
	uint32_t off, len, o, cap = 0, caps = 0, mc;
	static const uint32_t vals[] = {0xffffffff, 0, 0x5a5a5a5a};

	virtio_fake_setup(&v);
	memcpy(before, v.pci.cfg, sizeof(before));
	/* every byte, every width, several values */
	for (len = 1; len <= 4; len *= 2)
		for (off = 0; off < PCI_CFG_SIZE; off += len)
			for (o = 0; o < 3; o++)
				if ((off < 0x10 || off >= 0x14) && /* not BAR0 */
				    (off < (uint32_t)v.pcicfg_cap ||
				     off >= (uint32_t)v.pcicfg_cap + 20)) /* nor the window */
					vmm_pci_cfg_write(&v.pci, off, vals[o], len);
	/* what stays: every byte but command, cache line, latency, interrupt
	 * line and MSI-X enable / function mask */
	for (o = 0; o < PCI_CFG_SIZE; o++) {
		uint8_t keep = 0xff;

		if (o == 0x04)
			keep = (uint8_t)~(PCI_CMD_MEM | PCI_CMD_MASTER);
		else if (o == 0x05)
			keep = (uint8_t)~0x04;
		else if (o == 0x0c || o == 0x0d || o == 0x3c)
			keep = 0;
		else if (o == (uint32_t)v.msix_cap + 3)
			keep = 0x3f;
		ck_assert_msg((v.pci.cfg[o] & keep) == (before[o] & keep),
			      "byte 0x%x: 0x%x, was 0x%x", o, v.pci.cfg[o], before[o]);
	}
	/* the chain: MSI-X first, then the five virtio capabilities, ids and
	 * links as built */
	for (cap = vmm_pci_cfg_read(&v.pci, 0x34, 1); cap && caps < 64;
	     cap = vmm_pci_cfg_read(&v.pci, cap + 1, 1))
		caps++;
	ck_assert_uint_eq(caps, 6);
	ck_assert_uint_eq(vmm_pci_cfg_read(&v.pci, (uint32_t)v.msix_cap, 1), PCI_CAP_ID_MSIX);
	/* table size 3, table at 0x4000 and PBA at 0x5000 in BAR0 */
	mc = (uint32_t)v.msix_cap;
	ck_assert_uint_eq(vmm_pci_cfg_read(&v.pci, mc + 2, 2) & 0x7ff, 2);
	ck_assert_uint_eq(vmm_pci_cfg_read(&v.pci, mc + 4, 4), VIRTIO_BAR_MSIX_TABLE);
	ck_assert_uint_eq(vmm_pci_cfg_read(&v.pci, mc + 8, 4), VIRTIO_BAR_MSIX_PBA);
	ck_assert_uint_eq(v.msix.nvec, 3);
	/* the enable and function mask bits work, and alone */
	vmm_pci_cfg_write(&v.pci, mc + 2, 0xffff, 2);
	ck_assert_uint_eq(vmm_pci_cfg_read(&v.pci, mc + 2, 2),
			  MSIX_CTRL_ENABLE | MSIX_CTRL_FMASK | 2);
	ck_assert(v.msix.enabled && v.msix.fn_masked);
	vmm_pci_cfg_write(&v.pci, mc + 2, MSIX_CTRL_ENABLE, 2);
	ck_assert(v.msix.enabled && !v.msix.fn_masked);
	ck_assert_uint_eq(vmm_pci_cfg_read(&v.pci, mc + 2, 2), MSIX_CTRL_ENABLE | 2);
	assert_kicks_at(BAR0);
}
END_TEST


/* Program MSI-X vector vec (enabled, unmasked unless masked) and make it the
 * config vector. */
static void
config_vector(struct vmm_virtio_pci *v, unsigned int vec, bool masked)
{
	uint32_t w[4] = {0xfee00000, 0, 0x40 + vec, masked};
	uint16_t sel = (uint16_t)vec;

	vmm_virtio_pci_bar_write(v, VIRTIO_BAR_MSIX_TABLE + vec * 16, &w[0], 4);
	vmm_virtio_pci_bar_write(v, VIRTIO_BAR_MSIX_TABLE + vec * 16 + 8, &w[2], 4);
	vmm_virtio_pci_bar_write(v, VIRTIO_BAR_MSIX_TABLE + vec * 16 + 12, &w[3], 4);
	vmm_pci_cfg_write(&v->pci, (uint32_t)v->msix_cap + 2, MSIX_CTRL_ENABLE, 2);
	vmm_virtio_pci_bar_write(v, VIRTIO_PCI_COMMON_MSIX, &sel, 2);
}

static uint32_t
bar_rd(struct vmm_virtio_pci *v, uint64_t off, uint32_t len)
{
	uint32_t val = 0;

	vmm_virtio_pci_bar_read(v, off, &val, len);
	return val;
}

static void
bar_wr(struct vmm_virtio_pci *v, uint64_t off, uint32_t val, uint32_t len)
{
	vmm_virtio_pci_bar_write(v, off, &val, len);
}

/* 4.1.4.3.1 / 4.1.5.3: a config change bumps config_generation, sets the ISR
 * bit and sends the config vector's message; held while masked. */
START_TEST(virtio_config_change_irq)
{
	struct vmm_virtio_pci v;
	uint32_t gen;

	virtio_fake_setup(&v);
	config_vector(&v, 2, false);
	gen = bar_rd(&v, VIRTIO_PCI_COMMON_CFGGENERATION, 1);
	vmm_virtio_pci_config_changed(&v);
	ck_assert_uint_eq(bar_rd(&v, VIRTIO_PCI_COMMON_CFGGENERATION, 1), (gen + 1) & 0xff);
	ck_assert_uint_eq(msi_fake.n, 1);
	ck_assert_uint_eq(msi_fake.addr, 0xfee00000);
	ck_assert_uint_eq(msi_fake.data, 0x42);
	ck_assert_uint_eq(bar_rd(&v, VIRTIO_BAR_ISR, 1), VIRTIO_PCI_ISR_CONFIG);
	ck_assert_uint_eq(bar_rd(&v, VIRTIO_BAR_ISR, 1), 0); /* read-to-clear */
	/* masked: pending in the PBA, sent once on unmask */
	config_vector(&v, 2, true);
	vmm_virtio_pci_config_changed(&v);
	ck_assert_uint_eq(msi_fake.n, 1);
	ck_assert_uint_eq(bar_rd(&v, VIRTIO_BAR_MSIX_PBA, 4), 1u << 2);
	bar_wr(&v, VIRTIO_BAR_MSIX_TABLE + 2 * 16 + 12, 0, 4);
	ck_assert_uint_eq(msi_fake.n, 2);
	ck_assert_uint_eq(bar_rd(&v, VIRTIO_BAR_MSIX_PBA, 4), 0);
	ck_assert_uint_eq(bar_rd(&v, VIRTIO_PCI_COMMON_CFGGENERATION, 1), (gen + 2) & 0xff);
}
END_TEST

/* 2.1.2: NEEDS_RESET after DRIVER_OK comes with a config interrupt, stays
 * until reset, and a device whose reset takes time reads non-zero status
 * until it is done. */
START_TEST(virtio_needs_reset_notifies)
{
	struct vmm_virtio_pci v;

	virtio_fake_setup(&v);
	config_vector(&v, 2, false);
	v.device_features = 1ull << VIRTIO_F_VERSION_1;
	bar_wr(&v, VIRTIO_PCI_COMMON_STATUS, VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER,
	       1);
	vmm_virtio_pci_needs_reset(&v); /* before DRIVER_OK: the bit, no interrupt */
	ck_assert(bar_rd(&v, VIRTIO_PCI_COMMON_STATUS, 1) & VIRTIO_CONFIG_S_NEEDS_RESET);
	ck_assert_uint_eq(msi_fake.n, 0);
	bar_wr(&v, VIRTIO_PCI_COMMON_STATUS, 0, 1);
	ck_assert_uint_eq(bar_rd(&v, VIRTIO_PCI_COMMON_STATUS, 1), 0);
	config_vector(&v, 2, false);
	bar_wr(&v, VIRTIO_PCI_COMMON_GFSELECT, 1, 4);
	bar_wr(&v, VIRTIO_PCI_COMMON_GF, 1, 4);
	bar_wr(&v, VIRTIO_PCI_COMMON_STATUS, 0x0b, 1);
	bar_wr(&v, VIRTIO_PCI_COMMON_STATUS, 0x0f, 1);
	ck_assert_uint_eq(bar_rd(&v, VIRTIO_PCI_COMMON_STATUS, 1), 0x0f);
	vmm_virtio_pci_needs_reset(&v);
	ck_assert_uint_eq(bar_rd(&v, VIRTIO_PCI_COMMON_STATUS, 1),
			  0x0f | VIRTIO_CONFIG_S_NEEDS_RESET);
	ck_assert_uint_eq(msi_fake.n, 1);
	ck_assert_uint_eq(msi_fake.data, 0x42);
	/* the driver cannot clear it */
	bar_wr(&v, VIRTIO_PCI_COMMON_STATUS, 0x0f, 1);
	ck_assert(bar_rd(&v, VIRTIO_PCI_COMMON_STATUS, 1) & VIRTIO_CONFIG_S_NEEDS_RESET);
	/* a reset the device needs time for */
	dev_busy = true;
	bar_wr(&v, VIRTIO_PCI_COMMON_STATUS, 0, 1);
	ck_assert_uint_ne(bar_rd(&v, VIRTIO_PCI_COMMON_STATUS, 1), 0);
	bar_wr(&v, VIRTIO_PCI_COMMON_STATUS, VIRTIO_CONFIG_S_ACKNOWLEDGE, 1); /* ignored */
	ck_assert_uint_eq(dev_resets, 2);
	vmm_virtio_pci_reset_done(&v);
	ck_assert_uint_eq(bar_rd(&v, VIRTIO_PCI_COMMON_STATUS, 1), 0);
	ck_assert_uint_eq(bar_rd(&v, VIRTIO_PCI_COMMON_MSIX, 2), MSIX_NO_VECTOR);
}
END_TEST

/* 4.1.4.9: VIRTIO_PCI_CAP_PCI_CFG, and BAR0 through its window. */
START_TEST(virtio_pci_cfg_window)
{
	struct vmm_virtio_pci v;
	uint32_t c, d;
	struct vmm_pci_dev *p;

	virtio_fake_setup(&v);
	p = &v.pci;
	c = (uint32_t)v.pcicfg_cap;
	ck_assert_int_gt(v.pcicfg_cap, 0);
	d = c + offsetof(struct virtio_pci_cfg_cap, pci_cfg_data);
	ck_assert_uint_eq(vmm_pci_cfg_read(p, c, 1), PCI_CAP_ID_VNDR);
	ck_assert_uint_eq(vmm_pci_cfg_read(p, c + 2, 1), sizeof(struct virtio_pci_cfg_cap));
	ck_assert_uint_eq(vmm_pci_cfg_read(p, c + 3, 1), VIRTIO_PCI_CAP_PCI_CFG);
	/* read: the device config (the MAC) */
	vmm_pci_cfg_write(p, c + 4, 0, 1);
	vmm_pci_cfg_write(p, c + 8, VIRTIO_BAR_DEVICE, 4);
	vmm_pci_cfg_write(p, c + 12, 4, 4);
	ck_assert_uint_eq(vmm_pci_guest_read(p, d, 4), 0x12005452);
	vmm_pci_cfg_write(p, c + 8, VIRTIO_BAR_DEVICE + 4, 4);
	vmm_pci_cfg_write(p, c + 12, 2, 4);
	ck_assert_uint_eq(vmm_pci_guest_read(p, d, 2), 0x5634);
	/* write: the driver's status and a queue select land in the registers */
	vmm_pci_cfg_write(p, c + 8, VIRTIO_PCI_COMMON_STATUS, 4);
	vmm_pci_cfg_write(p, c + 12, 1, 4);
	vmm_pci_cfg_write(p, d, VIRTIO_CONFIG_S_ACKNOWLEDGE, 1);
	ck_assert_uint_eq(v.status, VIRTIO_CONFIG_S_ACKNOWLEDGE);
	ck_assert_uint_eq(vmm_pci_guest_read(p, d, 1), VIRTIO_CONFIG_S_ACKNOWLEDGE);
	vmm_pci_cfg_write(p, c + 8, VIRTIO_PCI_COMMON_Q_SELECT, 4);
	vmm_pci_cfg_write(p, c + 12, 2, 4);
	vmm_pci_cfg_write(p, d, 1, 2);
	ck_assert_uint_eq(v.qsel, 1);
	/* a notify through the window reaches the queue's kick eventfd */
	vmm_pci_cfg_write(p, c + 8, VIRTIO_BAR_NOTIFY + VIRTIO_NOTIFY_MULT, 4);
	vmm_pci_cfg_write(p, d, 1, 2);
	ck_assert_int_eq(msi_fake.kicked_fd, KICK0 + 1);
	/* misaligned, another BAR, or a bad length: nothing happens */
	vmm_pci_cfg_write(p, c + 8, VIRTIO_PCI_COMMON_STATUS + 1, 4);
	vmm_pci_cfg_write(p, c + 12, 2, 4);
	vmm_pci_cfg_write(p, d, 0, 2);
	ck_assert_uint_eq(v.status, VIRTIO_CONFIG_S_ACKNOWLEDGE);
	vmm_pci_cfg_write(p, c + 8, VIRTIO_PCI_COMMON_STATUS, 4);
	vmm_pci_cfg_write(p, c + 12, 3, 4);
	vmm_pci_cfg_write(p, d, 0, 1);
	vmm_pci_cfg_write(p, c + 12, 1, 4);
	vmm_pci_cfg_write(p, c + 4, 1, 1);
	vmm_pci_cfg_write(p, d, 0, 1);
	ck_assert_uint_eq(v.status, VIRTIO_CONFIG_S_ACKNOWLEDGE);
	ck_assert_uint_eq(vmm_pci_guest_read(p, d, 4), 0);
}
END_TEST

/* ---- the virtio-net control queue, on fake guest memory ---- */

static uint8_t cq_mem[1 << 16] __attribute__((aligned(4096)));

static void *
cq_gpa(void *ctx, uint64_t gpa, uint64_t len)
{
	(void)ctx;
	return gpa <= sizeof(cq_mem) && len <= sizeof(cq_mem) - gpa ? cq_mem + gpa : NULL;
}

#define CQ_DESC 0x0000
#define CQ_AVAIL 0x1000
#define CQ_USED 0x2000
#define CQ_BUF 0x3000
#define CQ_SIZE 16

static struct vring_desc *const cq_desc = (struct vring_desc *)(cq_mem + CQ_DESC);
static struct vring_avail *const cq_avail = (struct vring_avail *)(cq_mem + CQ_AVAIL);
static struct vring_used *const cq_used = (struct vring_used *)(cq_mem + CQ_USED);

/* Queue a command at head: class, command and body in one readable
 * descriptor (or split in two), the ack in a writable one. */
static void
cq_post(uint16_t head, uint8_t cls, uint8_t cmd, const void *body, uint32_t len, bool split)
{
	uint8_t *b = cq_mem + CQ_BUF + head * 256;

	b[0] = cls;
	b[1] = cmd;
	memcpy(b + 2, body, len);
	b[200] = 0xee;
	if (split) {
		cq_desc[head] = (struct vring_desc){CQ_BUF + head * 256u, 2, VRING_DESC_F_NEXT,
						    (uint16_t)(head + 1)};
		cq_desc[head + 1] = (struct vring_desc){CQ_BUF + head * 256u + 2, len,
							VRING_DESC_F_NEXT, (uint16_t)(head + 2)};
		cq_desc[head + 2] = (struct vring_desc){CQ_BUF + head * 256u + 200, 1,
							VRING_DESC_F_WRITE, 0};
	} else {
		cq_desc[head] = (struct vring_desc){CQ_BUF + head * 256u, 2 + len, VRING_DESC_F_NEXT,
						    (uint16_t)(head + 1)};
		cq_desc[head + 1] = (struct vring_desc){CQ_BUF + head * 256u + 200, 1,
							VRING_DESC_F_WRITE, 0};
	}
	cq_avail->ring[cq_avail->idx % CQ_SIZE] = head;
	cq_avail->idx++;
}

static uint8_t
cq_ack(uint16_t head)
{
	return cq_mem[CQ_BUF + head * 256 + 200];
}

/* VQ_PAIRS_SET within [1, max] is taken and acked OK; anything else is
 * answered VIRTIO_NET_ERR and changes nothing; indirect tables work; a ring
 * that lies (a head out of range, a loop) is left alone. */
START_TEST(net_ctrl_pairs_set)
{
	struct vmm_net_ctrlq cq;
	uint16_t p;
	uint8_t junk[70] = {0};

	memset(cq_mem, 0, sizeof(cq_mem));
	vmm_net_ctrl_init(&cq, CQ_SIZE, CQ_DESC, CQ_AVAIL, CQ_USED, 4, cq_gpa, NULL);
	ck_assert_uint_eq(cq.pairs, 1);
	ck_assert_uint_eq(vmm_net_ctrl_process(&cq), 0);
	p = 3;
	cq_post(0, VIRTIO_NET_CTRL_MQ, VIRTIO_NET_CTRL_MQ_VQ_PAIRS_SET, &p, 2, false);
	ck_assert_uint_eq(vmm_net_ctrl_process(&cq), 1);
	ck_assert_uint_eq(cq.pairs, 3);
	ck_assert_uint_eq(cq_ack(0), VIRTIO_NET_OK);
	ck_assert_uint_eq(cq_used->idx, 1);
	ck_assert_uint_eq(cq_used->ring[0].id, 0);
	ck_assert_uint_eq(cq_used->ring[0].len, 1);
	/* as Linux sends it: header and body in separate descriptors */
	p = 4;
	cq_post(2, VIRTIO_NET_CTRL_MQ, VIRTIO_NET_CTRL_MQ_VQ_PAIRS_SET, &p, 2, true);
	/* refused: too many, none, another command, a short body, too long */
	p = 5;
	cq_post(5, VIRTIO_NET_CTRL_MQ, VIRTIO_NET_CTRL_MQ_VQ_PAIRS_SET, &p, 2, false);
	p = 0;
	cq_post(7, VIRTIO_NET_CTRL_MQ, VIRTIO_NET_CTRL_MQ_VQ_PAIRS_SET, &p, 2, false);
	p = 2;
	cq_post(9, VIRTIO_NET_CTRL_RX, VIRTIO_NET_CTRL_RX_PROMISC, &p, 1, false);
	cq_post(11, VIRTIO_NET_CTRL_MQ, VIRTIO_NET_CTRL_MQ_VQ_PAIRS_SET, &p, 1, false);
	ck_assert_uint_eq(vmm_net_ctrl_process(&cq), 5);
	ck_assert_uint_eq(cq.pairs, 4);
	ck_assert_uint_eq(cq_ack(2), VIRTIO_NET_OK);
	ck_assert_uint_eq(cq_ack(5), VIRTIO_NET_ERR);
	ck_assert_uint_eq(cq_ack(7), VIRTIO_NET_ERR);
	ck_assert_uint_eq(cq_ack(9), VIRTIO_NET_ERR);
	ck_assert_uint_eq(cq_ack(11), VIRTIO_NET_ERR);
	ck_assert_uint_eq(cq_used->idx, 6);
	ck_assert_uint_eq(cq_used->ring[5].id, 11);
	cq_post(13, VIRTIO_NET_CTRL_MQ, VIRTIO_NET_CTRL_MQ_VQ_PAIRS_SET, junk, sizeof(junk),
		false);
	ck_assert_uint_eq(vmm_net_ctrl_process(&cq), 1);
	ck_assert_uint_eq(cq_ack(13), VIRTIO_NET_ERR);
	ck_assert_uint_eq(cq.pairs, 4);
	/* an indirect table (Linux uses one when INDIRECT_DESC is negotiated) */
	p = 2;
	cq_post(0, VIRTIO_NET_CTRL_MQ, VIRTIO_NET_CTRL_MQ_VQ_PAIRS_SET, &p, 2, true);
	memcpy(cq_mem + 0x8000, cq_desc, 3 * sizeof(struct vring_desc));
	cq_desc[0] = (struct vring_desc){0x8000, 3 * sizeof(struct vring_desc),
					 VRING_DESC_F_INDIRECT, 0};
	ck_assert_uint_eq(vmm_net_ctrl_process(&cq), 1);
	ck_assert_uint_eq(cq.pairs, 2);
	ck_assert_uint_eq(cq_ack(0), VIRTIO_NET_OK);
	/* a descriptor loop: broken, no used entry, nothing more processed */
	cq_desc[3] = (struct vring_desc){CQ_BUF, 2, VRING_DESC_F_NEXT, 4};
	cq_desc[4] = (struct vring_desc){CQ_BUF, 2, VRING_DESC_F_NEXT, 3};
	cq_avail->ring[cq_avail->idx % CQ_SIZE] = 3;
	cq_avail->idx++;
	ck_assert_uint_eq(vmm_net_ctrl_process(&cq), 0);
	ck_assert(cq.broken);
	ck_assert_uint_eq(cq_used->idx, 8);
	p = 1;
	cq_post(5, VIRTIO_NET_CTRL_MQ, VIRTIO_NET_CTRL_MQ_VQ_PAIRS_SET, &p, 2, false);
	ck_assert_uint_eq(vmm_net_ctrl_process(&cq), 0);
	ck_assert_uint_eq(cq.pairs, 2);
	/* a head out of range, an avail index ahead by more than the ring */
	vmm_net_ctrl_init(&cq, CQ_SIZE, CQ_DESC, CQ_AVAIL, CQ_USED, 4, cq_gpa, NULL);
	memset(cq_mem, 0, CQ_BUF);
	cq_avail->ring[0] = CQ_SIZE;
	cq_avail->idx = 1;
	ck_assert_uint_eq(vmm_net_ctrl_process(&cq), 0);
	ck_assert(cq.broken);
	vmm_net_ctrl_init(&cq, CQ_SIZE, CQ_DESC, CQ_AVAIL, CQ_USED, 4, cq_gpa, NULL);
	cq_avail->idx = CQ_SIZE + 1;
	ck_assert_uint_eq(vmm_net_ctrl_process(&cq), 0);
	ck_assert(cq.broken);
	/* rings outside memory */
	vmm_net_ctrl_init(&cq, CQ_SIZE, sizeof(cq_mem) - 8, CQ_AVAIL, CQ_USED, 4, cq_gpa, NULL);
	ck_assert_uint_eq(vmm_net_ctrl_process(&cq), 0);
	ck_assert(cq.broken);
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
	tcase_add_test(tc, virtio_bar_sizing_moves_kicks);
	tcase_add_test(tc, virtio_caps_read_only);
	tcase_add_test(tc, virtio_config_change_irq);
	tcase_add_test(tc, virtio_needs_reset_notifies);
	tcase_add_test(tc, virtio_pci_cfg_window);
	tcase_add_test(tc, net_ctrl_pairs_set);
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
