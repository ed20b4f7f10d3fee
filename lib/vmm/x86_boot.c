/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What a 64-bit entry needs in guest memory: a flat GDT (the Linux boot
 * protocol's __BOOT_CS 0x10 and __BOOT_DS 0x18) and identity page tables
 * for the first 4 GiB (2 MiB pages, user-accessible so that the built-in
 * guest's CPL3 code reaches its memory and the device BARs), and the MP
 * table and ACPI MADT that tell the guest its CPUs.
 */
#include <string.h>

#include "acpi.h"
#include "mptable.h"
#include "vmm_internal.h"

#define PDPT_ADDR (VMM_BOOT_PML4 + 0x1000)
#define PD_ADDR (VMM_BOOT_PML4 + 0x2000) /* four of them: 0xb000..0xefff */

#define PTE_P 0x1ull
#define PTE_RW 0x2ull
#define PTE_US 0x4ull
#define PTE_PS 0x80ull

int
vmm_boot_tables(struct hv_vm *vm)
{
	uint64_t *gdt = vmm_gpa_to_hva(vm, VMM_BOOT_GDT, 4 * 8);
	uint64_t *pml4 = vmm_gpa_to_hva(vm, VMM_BOOT_PML4, 0x1000);
	uint64_t *pdpt = vmm_gpa_to_hva(vm, PDPT_ADDR, 0x1000);
	uint64_t *pd = vmm_gpa_to_hva(vm, PD_ADDR, 4 * 0x1000);
	struct acpi_platform acpi = {
		.ncpus = vm->cfg.ncpus,
		.ecam_base = VMM_ECAM_BASE,
		.ecam_end_bus = (uint8_t)(VMM_ECAM_SIZE / 0x100000 - 1),
		.mmio_base = (uint32_t)VMM_PCI_MMIO_BASE,
		.mmio_end = VMM_PCI_MMIO_END,
	};
	unsigned int i;

	if (gdt == NULL || pml4 == NULL || pdpt == NULL || pd == NULL)
		return vmm_err("boot tables do not fit in guest memory");
	gdt[0] = 0;
	gdt[1] = 0;
	gdt[2] = 0x00af9a000000ffffull; /* 0x10: 64-bit code, DPL 0 */
	gdt[3] = 0x00cf92000000ffffull; /* 0x18: data, DPL 0 */
	memset(pml4, 0, 0x1000);
	memset(pdpt, 0, 0x1000);
	pml4[0] = PDPT_ADDR | PTE_P | PTE_RW | PTE_US;
	for (i = 0; i < 4; i++)
		pdpt[i] = (PD_ADDR + i * 0x1000ull) | PTE_P | PTE_RW | PTE_US;
	for (i = 0; i < 4 * 512; i++)
		pd[i] = ((uint64_t)i << 21) | PTE_P | PTE_RW | PTE_US | PTE_PS;
	/* the CPUs and the IOAPIC, for a guest without ACPI tables */
	if (mptable_build(vmm_gpa_to_hva(vm, MPTABLE_ADDR, 0x10000), 0x10000, MPTABLE_ADDR,
			  vm->cfg.ncpus) == 0)
		return vmm_err("MP table does not fit");
	if (acpi_build(vmm_gpa_to_hva(vm, ACPI_TABLES_ADDR, ACPI_TABLES_MAX), ACPI_TABLES_MAX,
		       ACPI_TABLES_ADDR, &acpi) == 0)
		return vmm_err("ACPI tables do not fit");
	return 0;
}
