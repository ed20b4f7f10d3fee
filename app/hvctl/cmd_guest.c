/* SPDX-License-Identifier: BSD-3-Clause */
/* hvctl guest: the VMM verbs. "run" is the VMM itself (cmd_guest_run.c). */
#include "hvctl.h"
#include "hvctl_guest.h"

static const char guest_usage[] =
	"usage: hvctl guest run NAME --kernel K [options]   (see 'hvctl guest run --help')\n"
	"\n"
	"KVM guests whose virtio-net rings hvswitch serves.\n";

int
hvctl_cmd_guest(struct hvctl *h, int argc, char **argv)
{
	static const struct hvctl_verb verbs[] = {
		{"run", hvctl_guest_cmd_run, "run a guest in the foreground (the VMM)"},
		{NULL, NULL, NULL},
	};

	return hvctl_dispatch(h, "guest", verbs, guest_usage, argc, argv);
}
