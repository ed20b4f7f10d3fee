/* SPDX-License-Identifier: BSD-3-Clause */
/* The per-guest control socket of a running VMM (not yet: placeholders). */
#include "hvctl_guest.h"

int
hvctl_guest_serve(struct hv_vm *vm, const char *name)
{
	(void)vm;
	(void)name;
	return 0;
}

void
hvctl_guest_serve_poll(struct hv_vm *vm)
{
	(void)vm;
}

void
hvctl_guest_unserve(struct hv_vm *vm)
{
	(void)vm;
}
