/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Idle PMDs sleep on their queues' wake-ups (doc/rxmod.rst, "Idle PMDs").
 *
 * A PMD configured with --pmd-sleep whose queues have all been idle for that
 * long, and whose port types owe nothing (sleep_ok), turns every queue's
 * wake-ups on (sleep_arm: a vhost-user guest's kicks), looks at each queue
 * once more (sleep_ready: work that came before wake-ups were on is not
 * announced), goes offline for RCU and sleeps in epoll on the queues' fds and
 * on its wake eventfd (written when its queue list changes). On the first
 * event it comes back online, turns wake-ups off (sleep_disarm) and spins. A
 * PMD with a queue whose type cannot wake it (no sleep_arm) keeps spinning.
 */
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_lcore.h>
#include <rte_malloc.h>

#include "dp.h"
#include "hv_log.h"

/* Longest sleep: a ring that was not running when we fell asleep has no fd here. */
#define SLEEP_MAX_MS 100

struct watched {
	struct sw_port *port;          /* valid only while we are online and it is in our list */
	const struct sw_port_ops *ops; /* its type's (static: valid after the port went) */
	uint16_t q;
	int fd; /* the queue's wake-up fd (sleep_arm), ours to close */
};

struct sw_sleeper {
	int ep;
	unsigned int n;
	struct watched w[SW_MAX_PORTS * SW_MAX_QUEUES];
};

int
sw_pmd_sleep_init(struct sw_pmd *pmd)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.u64 = UINT64_MAX};
	struct sw_sleeper *s = rte_zmalloc("sw_sleeper", sizeof(*s), RTE_CACHE_LINE_SIZE);

	if (s == NULL)
		return -1;
	pmd->sleeper = s;
	s->ep = epoll_create1(EPOLL_CLOEXEC);
	pmd->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (s->ep < 0 || pmd->wake_fd < 0 ||
	    epoll_ctl(s->ep, EPOLL_CTL_ADD, pmd->wake_fd, &ev) != 0) {
		HV_LOG(ERR, "PMD %u: no epoll for idle sleep", pmd->id);
		return -1;
	}
	return 0;
}

void
sw_pmd_sleep_fini(struct sw_pmd *pmd)
{
	struct sw_sleeper *s = pmd->sleeper;

	if (s == NULL)
		return; /* never set up: sleep is off */
	if (s->ep >= 0)
		close(s->ep);
	if (pmd->wake_fd >= 0)
		close(pmd->wake_fd);
	pmd->wake_fd = -1;
	rte_free(s);
	pmd->sleeper = NULL;
}

void
sw_pmd_sleep_adopt(const struct sw_rxq_list *l)
{
	/* a queue's previous PMD may have fallen asleep with its wake-ups on */
	for (uint16_t i = 0; l != NULL && i < l->n; i++) {
		struct sw_port *p = l->q[i].port;

		if (p->ops->sleep_adopt != NULL)
			p->ops->sleep_adopt(p, l->q[i].q);
	}
}

void
sw_pmd_wake(struct sw_pmd *pmd)
{
	uint64_t one = 1;

	if (pmd->wake_fd >= 0 && write(pmd->wake_fd, &one, sizeof(one)) < 0)
		HV_LOG(WARNING, "PMD %u: cannot wake it", pmd->id);
}

static bool
in_list(const struct sw_rxq_list *l, const struct sw_port *p, uint16_t q)
{
	for (uint16_t i = 0; l != NULL && i < l->n; i++)
		if (l->q[i].port == p && l->q[i].q == q)
			return true;
	return false;
}

/* Back to spinning: wake-ups off where the queue is still ours, fds closed. */
static void
unwatch(struct sw_pmd *pmd, struct sw_sleeper *s)
{
	const struct sw_rxq_list *l = __atomic_load_n(&pmd->rxqs, __ATOMIC_ACQUIRE);

	for (unsigned int i = 0; i < s->n; i++) {
		struct watched *w = &s->w[i];

		/*
		 * Every fd drained (a readable one would end the next sleep at
		 * once); a queue no longer ours is not touched: its port may be
		 * gone, only the fd is ours.
		 */
		w->ops->sleep_disarm(in_list(l, w->port, w->q) ? w->port : NULL, w->q, w->fd);
		epoll_ctl(s->ep, EPOLL_CTL_DEL, w->fd, NULL);
		close(w->fd);
	}
	s->n = 0;
}

bool
sw_pmd_sleep(struct sw_pmd *pmd, const struct sw_rxq_list *l)
{
	struct sw_sleeper *s = pmd->sleeper;
	struct sw_dp *dp = pmd->dp;
	struct epoll_event evs[16];
	uint64_t t0, t1, v;
	struct timespec ts;
	bool again = false;
	int n;

	if (s == NULL || pmd->wake_fd < 0 || s->ep < 0)
		return false;
	for (uint16_t i = 0; l != NULL && i < l->n; i++) {
		const struct sw_port *p = l->q[i].port;

		/* a queue that cannot wake us; something owed must go on time */
		if (p->ops->sleep_arm == NULL ||
		    (p->ops->sleep_ok != NULL && !p->ops->sleep_ok(p, l->q[i].q)))
			goto abort;
	}
	s->n = 0;
	for (uint16_t i = 0; l != NULL && i < l->n; i++) {
		struct sw_port *p = l->q[i].port;
		uint16_t q = l->q[i].q;
		struct watched *w = &s->w[s->n];
		struct epoll_event ev = {.events = EPOLLIN, .data.u64 = s->n};

		w->fd = p->ops->sleep_arm(p, q);
		if (w->fd < 0)
			continue; /* not running: nothing to wait for but SLEEP_MAX_MS */
		if (epoll_ctl(s->ep, EPOLL_CTL_ADD, w->fd, &ev) != 0) {
			p->ops->sleep_disarm(p, q, w->fd);
			close(w->fd);
			continue;
		}
		w->port = p;
		w->ops = p->ops;
		w->q = q;
		s->n++;
	}
	/* wake-ups are on: what came before that, none will announce */
	for (unsigned int i = 0; i < s->n; i++) {
		struct watched *w = &s->w[i];

		if (w->ops->sleep_ready != NULL && w->ops->sleep_ready(w->port, w->q)) {
			unwatch(pmd, s);
			goto abort;
		}
	}
	t0 = rte_rdtsc();
	rte_rcu_qsbr_thread_offline(dp->rcu, pmd->id);
	n = epoll_wait(s->ep, evs, RTE_DIM(evs), SLEEP_MAX_MS);
	t1 = rte_rdtsc();
	rte_rcu_qsbr_thread_online(dp->rcu, pmd->id);
	/* the system's clock, comparable with other processes' (the vDSO: no syscall) */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	__atomic_store_n(&pmd->last_wake_ns,
			 (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec,
			 __ATOMIC_RELAXED);
	for (int i = 0; i < n; i++) {
		if (evs[i].data.u64 == UINT64_MAX) {
			if (read(pmd->wake_fd, &v, sizeof(v)) < 0)
				v = 0;
			again = true;
		}
	}
	unwatch(pmd, s);
	pmd->sleeps++;
	pmd->slept_cycles += t1 - t0;
	if (n > 0 && !again)
		pmd->wakeups_kick++;
	else if (n == 0)
		pmd->wakeups_timeout++;
	return true;
abort:
	pmd->sleep_aborts++;
	return false;
}
