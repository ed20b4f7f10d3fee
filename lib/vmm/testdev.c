/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The built-in guest's report channel: an MMIO page (no memslot, so every
 * access exits to us). Why MMIO rather than the UART: the guest's code runs
 * at CPL3, where port I/O faults; a UART driven through a syscall into CPL0
 * costs one emulated instruction sequence and one 9 us exit per byte, while
 * this costs one 25 us exit per line (the guest writes the address of a
 * NUL-terminated line). Lines land on the same console as the UART's output.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "hv_guest_abi.h"
#include "vmm_internal.h"

#define TESTDEV_LINE_MAX 512

static uint64_t
le_value(const void *data, uint32_t len)
{
	uint64_t v = 0;

	memcpy(&v, data, len < 8 ? len : 8);
	return v;
}

static void
testdev_write(void *opaque, uint64_t off, const void *data, uint32_t len)
{
	struct hv_vm *vm = opaque;
	uint64_t v = le_value(data, len);
	char buf[80];

	switch (off) {
	case HV_TESTDEV_LINE: {
		const char *p = NULL;
		size_t n = 0;
		uint64_t avail;

		if (v < vm->low_size) {
			avail = vm->low_size - v;
			p = vmm_gpa_to_hva(vm, v, 1);
			n = strnlen(p, avail < TESTDEV_LINE_MAX ? avail : TESTDEV_LINE_MAX);
		}
		if (p != NULL && n > 0)
			vmm_console_write(vm, p, n);
		vmm_console_write(vm, "\n", 1);
		break;
	}
	case HV_TESTDEV_EXIT:
		vm->exit_status = (int)(v & 0xff);
		snprintf(buf, sizeof(buf), "guest finished (status %d)", vm->exit_status);
		hv_vm_request_stop(vm, buf);
		break;
	case HV_TESTDEV_FAULT: {
		uint64_t *f = vmm_gpa_to_hva(vm, v, 6 * 8);
		char line[200];
		int n;

		if (f == NULL)
			break;
		n = snprintf(line, sizeof(line),
			     "[vmm] guest exception frame: %" PRIx64 " %" PRIx64 " %" PRIx64
			     " %" PRIx64 " %" PRIx64 " %" PRIx64 "\n",
			     f[0], f[1], f[2], f[3], f[4], f[5]);
		vmm_console_write(vm, line, (size_t)n);
		break;
	}
	case HV_TESTDEV_MARK:
		vmm_log_stats_mark(vm, v);
		break;
	default:
		break;
	}
}

static const struct vmm_io_ops testdev_ops = {.read = NULL, .write = testdev_write};

int
vmm_testdev_init(struct hv_vm *vm)
{
	if (vmm_bus_add(&vm->mmio, HV_TESTDEV_BASE, 0x1000, &testdev_ops, vm) == NULL)
		return vmm_err("MMIO bus full");
	return 0;
}
