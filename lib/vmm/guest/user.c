/* SPDX-License-Identifier: BSD-3-Clause */
/* The built-in guest's CPL3 entry: greet, run the test program, report. */
#include "guest.h"

void user_main(void) __attribute__((noreturn));

void
user_main(void)
{
	char mode[16];
	int rc;

	print("hvguest: built-in test guest, %lu MiB, %u vCPU(s), cmdline \"%s\"",
	      info->mem_size >> 20, info->ncpus, info->cmdline);
	if (arg_str("mode", mode, sizeof(mode)) != NULL && memcmp(mode, "hello", 6) == 0) {
		print("hvguest: hello from CPL3, timer irqs so far %lu", irq_timer);
		guest_exit(0);
	}
	if (arg_str("mode", mode, sizeof(mode)) != NULL && memcmp(mode, "idle", 5) == 0) {
		print("hvguest: idle (sleeping on the timer)");
		for (;;)
			wait_irq();
	}
	rc = net_main();
	print("hvguest: done, irqs rx=%lu timer=%lu", irq_rx, irq_timer);
	guest_exit(rc);
}
