/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The ACPI platform registers the FADT names (acpi.h): the sleep control
 * register (SLP_TYP 5 with SLP_EN is power off: the VM stops), its status
 * register, the reset register (the VM stops: it is not restarted), and the
 * power button, a GED interrupt whose _EVT notifies \_SB.PWRB.
 */
#include "acpi.h"
#include "vmm_internal.h"

static void
acpi_pm_read(void *opaque, uint64_t off, void *data, uint32_t len)
{
	(void)opaque;
	(void)off;
	(void)len;
	*(uint8_t *)data = 0; /* sleep status: never woken */
}

static void
acpi_pm_write(void *opaque, uint64_t off, const void *data, uint32_t len)
{
	struct hv_vm *vm = opaque;
	uint8_t v = *(const uint8_t *)data;

	(void)len;
	switch (off + ACPI_SLEEP_CTL_PORT) {
	case ACPI_SLEEP_CTL_PORT:
		if ((v & ACPI_SLEEP_EN) &&
		    ((v & ACPI_SLEEP_TYP_MASK) >> ACPI_SLEEP_TYP_SHIFT) == ACPI_S5_TYPE)
			hv_vm_request_stop(vm, "guest powered off (ACPI S5)");
		break;
	case ACPI_RESET_PORT:
		if (v == ACPI_RESET_VALUE)
			hv_vm_request_stop(vm, "guest reset (ACPI reset register)");
		break;
	default:
		break;
	}
}

static const struct vmm_io_ops acpi_pm_ops = {.read = acpi_pm_read, .write = acpi_pm_write};

int
vmm_acpi_pm_init(struct hv_vm *vm)
{
	if (vmm_bus_add(&vm->pio, ACPI_SLEEP_CTL_PORT, 4, &acpi_pm_ops, vm) == NULL)
		return vmm_err("port I/O bus full");
	return 0;
}

int
hv_vm_power_button(struct hv_vm *vm)
{
	/* an edge on the GED's GSI */
	if (vmm_irq_line(vm, ACPI_GED_GSI, 1) != 0 || vmm_irq_line(vm, ACPI_GED_GSI, 0) != 0)
		return -1;
	return 0;
}
