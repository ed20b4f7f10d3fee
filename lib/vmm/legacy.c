/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Legacy ports a PC guest touches: the i8042 keyboard controller, whose reset
 * command (0xfe on port 0x64) is how Linux reboots without ACPI, and the POST
 * port 0x80 (delay writes). Everything else reads all ones (vm.c).
 */
#include "vmm_internal.h"

#define I8042_DATA 0x60
#define I8042_CMD 0x64
#define I8042_CMD_RESET 0xfe

static void
i8042_read(void *opaque, uint64_t off, void *data, uint32_t len)
{
	(void)opaque;
	(void)off;
	(void)len;
	*(uint8_t *)data = 0; /* status: no data, input buffer empty */
}

static void
i8042_write(void *opaque, uint64_t off, const void *data, uint32_t len)
{
	struct hv_vm *vm = opaque;

	(void)len;
	if (off == I8042_CMD - I8042_DATA && *(const uint8_t *)data == I8042_CMD_RESET)
		hv_vm_request_stop(vm, "guest reset (i8042)");
}

static const struct vmm_io_ops i8042_ops = {.read = i8042_read, .write = i8042_write};

static void
ignore_write(void *opaque, uint64_t off, const void *data, uint32_t len)
{
	(void)opaque;
	(void)off;
	(void)data;
	(void)len;
}

static const struct vmm_io_ops post_ops = {.read = NULL, .write = ignore_write};

int
vmm_legacy_init(struct hv_vm *vm)
{
	if (vmm_bus_add(&vm->pio, I8042_DATA, 5, &i8042_ops, vm) == NULL ||
	    vmm_bus_add(&vm->pio, 0x80, 1, &post_ops, vm) == NULL)
		return vmm_err("port I/O bus full");
	return 0;
}
