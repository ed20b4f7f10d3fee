/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Idle PMDs sleep on their guests' kicks (doc/rxmod.rst, "Idle PMDs").
 *
 * A PMD configured with --pmd-sleep whose queues have all been idle for that
 * long, and which owes no guest interrupt, turns the guests' kicks on for the
 * rings it polls (their TX rings), looks at each ring once more (a guest that
 * made buffers available before it saw kicks turned on will not kick), goes
 * offline for RCU and sleeps in epoll on the kick eventfds and on its wake
 * eventfd (written when its queue list changes). On the first event it comes
 * back online, turns kicks off again and spins. Only vhost-user queues can be
 * slept on: a PMD with an ethdev queue keeps spinning.
 */
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_lcore.h>

#include "hv_log.h"
#include "sw.h"

/* Longest sleep: a ring that was not running when we fell asleep has no fd here. */
#define SLEEP_MAX_MS 100

struct watched {
	struct sw_port *port; /* valid only while we are online and it is in our list */
	uint16_t q;
	int fd;               /* our duplicate of the guest TX ring's kick eventfd */
};

struct sleeper {
	int ep;
	unsigned int n;
	struct watched w[SW_MAX_PORTS * SW_MAX_QUEUES];
};

static struct sleeper sleepers[SW_MAX_PMDS];

int
sw_pmd_sleep_init(struct sw_pmd *pmd)
{
	struct sleeper *s = &sleepers[pmd->id];
	struct epoll_event ev = {.events = EPOLLIN, .data.u64 = UINT64_MAX};

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
	struct sleeper *s = &sleepers[pmd->id];

	if (pmd->wake_fd < 0)
		return; /* never set up: sleep is off */
	if (s->ep >= 0)
		close(s->ep);
	close(pmd->wake_fd);
	s->ep = pmd->wake_fd = -1;
}

void
sw_pmd_sleep_adopt(const struct sw_rxq_list *l)
{
	/* a queue's previous PMD may have fallen asleep with its kicks on */
	for (uint16_t i = 0; l != NULL && i < l->n; i++)
		if (l->q[i].port->rxmod != NULL)
			hv_vhost_vring_notify(l->q[i].port->vhost, 2 * l->q[i].q + 1, false);
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

/* Back to spinning: kicks off where the queue is still ours, fds closed. */
static void
unwatch(struct sw_pmd *pmd, struct sleeper *s)
{
	const struct sw_rxq_list *l = __atomic_load_n(&pmd->rxqs, __ATOMIC_ACQUIRE);

	for (unsigned int i = 0; i < s->n; i++) {
		struct watched *w = &s->w[i];
		/*
		 * Drain every fd (a readable one would end the next sleep at once),
		 * never waiting: the frontend shares the fd and may empty it first.
		 */
		uint64_t count = hv_vhost_kick_read(w->fd);
		if (in_list(l, w->port, w->q)) {
			hv_vhost_vring_notify(w->port->vhost, 2 * w->q + 1, false);
			if (count > 0)
				hv_vhost_vring_count_kicks(w->port->vhost, 2 * w->q + 1, count);
		}
		epoll_ctl(s->ep, EPOLL_CTL_DEL, w->fd, NULL);
		close(w->fd);
	}
	s->n = 0;
}

bool
sw_pmd_sleep(struct sw_pmd *pmd, const struct sw_rxq_list *l)
{
	struct sleeper *s = &sleepers[pmd->id];
	struct epoll_event evs[16];
	uint64_t t0, t1, v;
	bool again = false;
	int n;

	if (pmd->wake_fd < 0 || s->ep < 0)
		return false;
	for (uint16_t i = 0; l != NULL && i < l->n; i++) {
		struct sw_port *p = l->q[i].port;

		/* an ethdev queue cannot wake us; an owed interrupt must go on time */
		if (p->rxmod == NULL || sw_rxmod_queue_owed(p, l->q[i].q))
			goto abort;
	}
	s->n = 0;
	for (uint16_t i = 0; l != NULL && i < l->n; i++) {
		struct sw_port *p = l->q[i].port;
		uint16_t q = l->q[i].q;
		struct watched *w = &s->w[s->n];
		struct epoll_event ev = {.events = EPOLLIN, .data.u64 = s->n};

		w->fd = hv_vhost_kick_fd(p->vhost, 2 * q + 1);
		if (w->fd < 0)
			continue; /* not running: nothing to wait for but SLEEP_MAX_MS */
		if (hv_vhost_vring_notify(p->vhost, 2 * q + 1, true) != 0 ||
		    epoll_ctl(s->ep, EPOLL_CTL_ADD, w->fd, &ev) != 0) {
			close(w->fd);
			continue;
		}
		w->port = p;
		w->q = q;
		s->n++;
	}
	/* kicks are on: what the guest made available before that, it will not kick for */
	for (unsigned int i = 0; i < s->n; i++)
		if (hv_vhost_vring_has_avail(s->w[i].port->vhost, 2 * s->w[i].q + 1)) {
			unwatch(pmd, s);
			goto abort;
		}
	t0 = rte_rdtsc();
	rte_rcu_qsbr_thread_offline(sw.rcu, pmd->id);
	n = epoll_wait(s->ep, evs, RTE_DIM(evs), SLEEP_MAX_MS);
	t1 = rte_rdtsc();
	rte_rcu_qsbr_thread_online(sw.rcu, pmd->id);
	__atomic_store_n(&pmd->last_wake_tsc, t1, __ATOMIC_RELAXED);
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
