/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Guest memory that goes away under us. A frontend can shrink the file behind
 * a region after we mapped it (a memfd without F_SEAL_SHRINK, a hugetlbfs
 * file); our next access to the lost pages raises SIGBUS, which would end the
 * switch. The handler here finds the region the address belongs to, puts
 * anonymous memory in its place (the access completes on zeros, so the data
 * path sees an empty or broken ring and stops it) and flags the port, whose
 * frontend the control thread then drops. A SIGBUS anywhere else is the
 * switch's own and goes to the handler there was before. The handler is
 * installed only on the application's request (hv_vhost_init()); an
 * application with its own calls hv_vhost_sigbus_recover().
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "vhost_internal.h"
#include "vhost_mem.h"

/*
 * Every region of every port, readable from a signal handler: twice the
 * slots, since SET_MEM_TABLE maps the new table before it drops the old.
 */
#define GUARD_MAX (2 * HV_VHOST_MAX_PORTS * HV_VHOST_MAX_MEM_SLOTS)

struct guard {
	uintptr_t base; /* 0: free (atomic; set last, cleared first) */
	size_t len;
	uint32_t slot;
};

static struct guard guards[GUARD_MAX];
static uint32_t guards_used; /* entries ever used: how far to look */
static struct sigaction sigbus_before;

bool vhost_mem_lost[HV_VHOST_MAX_PORTS];

/*
 * Entries change on the control side only, and an entry is freed only when its
 * region is unmapped, which is after every ring of the port is paused: no
 * access to the region, so no handler looking at the entry, can be under way
 * (borrowed mbufs keep their ring entered). The handler's two-step read of an
 * entry cannot see it reused.
 */
int
vhost_guard_add(const void *base, size_t len, uint32_t slot)
{
	for (uint32_t i = 0; i < GUARD_MAX; i++) {
		struct guard *g = &guards[i];

		if (__atomic_load_n(&g->base, __ATOMIC_RELAXED) != 0)
			continue;
		g->len = len;
		g->slot = slot;
		__atomic_store_n(&g->base, (uintptr_t)base, __ATOMIC_RELEASE);
		if (i >= guards_used)
			__atomic_store_n(&guards_used, i + 1, __ATOMIC_RELEASE);
		return 0;
	}
	return -ENOSPC;
}

void
vhost_guard_del(const void *base)
{
	uint32_t used = __atomic_load_n(&guards_used, __ATOMIC_ACQUIRE);

	for (uint32_t i = 0; i < used; i++)
		if (__atomic_load_n(&guards[i].base, __ATOMIC_RELAXED) == (uintptr_t)base) {
			__atomic_store_n(&guards[i].base, 0, __ATOMIC_RELEASE);
			return;
		}
}

/* The handler before ours, for a SIGBUS that is not about guest memory. */
static void
sigbus_pass_on(int sig, siginfo_t *si, void *ctx)
{
	struct sigaction dfl = {.sa_handler = SIG_DFL};

	if (sigbus_before.sa_flags & SA_SIGINFO) {
		if (sigbus_before.sa_sigaction != NULL) {
			sigbus_before.sa_sigaction(sig, si, ctx);
			return;
		}
	} else if (sigbus_before.sa_handler == SIG_IGN) {
		return;
	} else if (sigbus_before.sa_handler != SIG_DFL) {
		sigbus_before.sa_handler(sig);
		return;
	}
	/*
	 * The default action: raised again, pending until we return (a fault
	 * would come back by itself, a signal sent to us would not).
	 */
	sigemptyset(&dfl.sa_mask);
	sigaction(SIGBUS, &dfl, NULL);
	raise(SIGBUS);
}

/*
 * Anonymous memory over [base, base + len): a memfd's pages, which are not
 * charged against strict overcommit up front as private anonymous ones are.
 */
static bool
replace_with_zeros(uintptr_t base, size_t len)
{
	int fd = memfd_create("hv-lost-guest-memory", MFD_CLOEXEC);
	bool ok;

	if (fd < 0)
		return false;
	ok = ftruncate(fd, (off_t)len) == 0 && mmap((void *)base, len, PROT_READ | PROT_WRITE,
						    MAP_SHARED | MAP_FIXED, fd, 0) != MAP_FAILED;
	close(fd);
	return ok;
}

bool
hv_vhost_sigbus_recover(const siginfo_t *si)
{
	uintptr_t a = (uintptr_t)si->si_addr;
	uint32_t used = __atomic_load_n(&guards_used, __ATOMIC_ACQUIRE);
	int saved = errno;

	/*
	 * Only the kernel's "no page behind this address": a SIGBUS sent by a
	 * process carries no address (si_addr would be its pid), and a memory
	 * error or a misaligned access is no shrunk file.
	 */
	for (uint32_t i = 0; si->si_code == BUS_ADRERR && i < used; i++) {
		const struct guard *g = &guards[i];
		uintptr_t base = __atomic_load_n(&g->base, __ATOMIC_ACQUIRE);

		if (base == 0 || a - base >= g->len)
			continue;
		/* memfd_create(), mmap() and close() are plain system calls: safe here */
		if (!replace_with_zeros(base, g->len))
			break;
		__atomic_store_n(&vhost_mem_lost[g->slot], true, __ATOMIC_RELEASE);
		errno = saved;
		return true;
	}
	errno = saved;
	return false;
}

static void
sigbus_handler(int sig, siginfo_t *si, void *ctx)
{
	if (!hv_vhost_sigbus_recover(si))
		sigbus_pass_on(sig, si, ctx);
}

int
vhost_guard_setup(void)
{
	struct sigaction sa = {.sa_sigaction = sigbus_handler, .sa_flags = SA_SIGINFO};
	struct sigaction cur;

	if (sigaction(SIGBUS, NULL, &cur) != 0)
		return -errno;
	/* already ours: sigbus_before must stay the handler before ours */
	if ((cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == sigbus_handler)
		return 0;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGBUS, &sa, &sigbus_before) != 0)
		return -errno;
	return 0;
}
