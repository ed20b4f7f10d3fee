/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * PMD threads: one per worker lcore, each polling the queues given to it.
 * What they read (queue lists, the port view) is replaced whole and retired
 * after an RCU grace period; a PMD passes a quiescent state once per loop.
 */
#include <stdlib.h>

#include <rte_cycles.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_malloc.h>

#include "hv_log.h"
#include "sw.h"

uint64_t
sw_now_ms(void)
{
	return rte_get_tsc_cycles() / sw.tsc_per_ms;
}

static void
synchronize(void)
{
	rte_rcu_qsbr_synchronize(sw.rcu, RTE_QSBR_THRID_INVALID);
}

void
sw_view_publish(void)
{
	struct sw_view *v = rte_zmalloc("sw_view", sizeof(*v), RTE_CACHE_LINE_SIZE);
	struct sw_view *old;

	if (v == NULL) {
		HV_LOG(ERR, "no memory for the port view: keeping the old one");
		return;
	}
	for (uint16_t i = 0; i < SW_MAX_PORTS; i++) {
		struct sw_port *p = sw.ports[i];

		if (p == NULL || !p->running)
			continue;
		v->ports[i] = p;
		v->active[v->n_ports++] = i;
	}
	old = __atomic_exchange_n(&sw.view, v, __ATOMIC_ACQ_REL);
	synchronize();
	rte_free(old);
}

/* Which PMD polls queue @q of @p. */
static unsigned int
pmd_of(const struct sw_port *p, uint16_t q, unsigned int *rr)
{
	if (p->conf.pmd >= 0)
		return (unsigned int)p->conf.pmd % sw.n_pmds;
	RTE_SET_USED(q);
	return (*rr)++ % sw.n_pmds;
}

static struct sw_rxq_list *
list_alloc(void)
{
	return rte_zmalloc("sw_rxqs",
			   sizeof(struct sw_rxq_list) + sizeof(struct sw_rxq) * SW_MAX_PORTS * SW_MAX_QUEUES,
			   RTE_CACHE_LINE_SIZE);
}

static bool
list_has(const struct sw_rxq_list *l, const struct sw_port *p, uint16_t q)
{
	for (uint16_t i = 0; l != NULL && i < l->n; i++)
		if (l->q[i].port == p && l->q[i].q == q)
			return true;
	return false;
}

static void
publish_lists(struct sw_rxq_list **lists)
{
	struct sw_rxq_list *old[SW_MAX_PMDS];

	for (unsigned int i = 0; i < sw.n_pmds; i++)
		old[i] = __atomic_exchange_n(&sw.pmds[i].rxqs, lists[i], __ATOMIC_ACQ_REL);
	synchronize();
	for (unsigned int i = 0; i < sw.n_pmds; i++)
		rte_free(old[i]);
}

void
sw_pmd_reassign(void)
{
	struct sw_rxq_list *want[SW_MAX_PMDS] = {NULL}, *keep[SW_MAX_PMDS] = {NULL};
	unsigned int rr = 0;

	for (unsigned int i = 0; i < sw.n_pmds; i++) {
		want[i] = list_alloc();
		keep[i] = list_alloc();
		if (want[i] == NULL || keep[i] == NULL)
			goto nomem;
	}
	for (uint16_t i = 0; i < SW_MAX_PORTS; i++) {
		struct sw_port *p = sw.ports[i];

		if (p == NULL || !p->running)
			continue;
		for (uint16_t q = 0; q < p->conf.queues; q++) {
			struct sw_rxq_list *l = want[pmd_of(p, q, &rr)];

			l->q[l->n++] = (struct sw_rxq){.port = p, .q = q};
		}
	}
	/*
	 * Two steps, so that a queue never has two pollers: first every PMD
	 * drops what it loses, then, after the grace period, it gets what it
	 * gains.
	 */
	for (unsigned int i = 0; i < sw.n_pmds; i++) {
		const struct sw_rxq_list *cur = sw.pmds[i].rxqs;

		for (uint16_t k = 0; k < want[i]->n; k++)
			if (list_has(cur, want[i]->q[k].port, want[i]->q[k].q))
				keep[i]->q[keep[i]->n++] = want[i]->q[k];
	}
	publish_lists(keep);
	publish_lists(want);
	/* a sleeping PMD watches the kicks of its old queues only */
	for (unsigned int i = 0; i < sw.n_pmds; i++)
		sw_pmd_wake(&sw.pmds[i]);
	return;
nomem:
	HV_LOG(ERR, "no memory to reassign queues");
	for (unsigned int i = 0; i < sw.n_pmds; i++) {
		rte_free(want[i]);
		rte_free(keep[i]);
	}
}

static int
pmd_main(void *arg)
{
	struct sw_pmd *pmd = arg;
	struct rte_mbuf *pkts[SW_BURST];
	uint64_t prev = rte_get_tsc_cycles(), idle_since = prev;
	const struct sw_rxq_list *adopted = NULL;
	uint64_t sleep_after = (uint64_t)sw.pmd_sleep_us[pmd->id] * (sw.tsc_per_ms / 1000);

	rte_rcu_qsbr_thread_register(sw.rcu, pmd->id);
	rte_rcu_qsbr_thread_online(sw.rcu, pmd->id);
	sw_rxmod_pmd_enter(pmd);
	HV_LOG(INFO, "PMD %u on lcore %u", pmd->id, pmd->lcore);
	while (!sw.stop) {
		const struct sw_rxq_list *l = __atomic_load_n(&pmd->rxqs, __ATOMIC_ACQUIRE);
		const struct sw_view *view = __atomic_load_n(&sw.view, __ATOMIC_ACQUIRE);
		uint64_t now = rte_get_tsc_cycles(), got = 0, end;
		uint64_t now_ms = now / sw.tsc_per_ms;

		if (unlikely(l != adopted)) {
			sw_pmd_sleep_adopt(l);
			adopted = l;
		}

		for (uint16_t i = 0; l != NULL && view != NULL && i < l->n; i++) {
			struct sw_port *p = l->q[i].port;
			uint16_t n = p->ops->rx(p, l->q[i].q, pkts, SW_BURST);

			if (n > 0) {
				got += n;
				pmd->batches++;
				sw_l2_input(pmd, view, p, pkts, n, now_ms);
				if (p->ops->rx_done != NULL)
					p->ops->rx_done(p, l->q[i].q);
			}
			/* after the burst ended: an interrupt enters the ring itself */
			if (p->rxmod != NULL)
				sw_rxmod_poll_queue(p, l->q[i].q);
		}
		/* owed guest interrupts whose window closed (checked every iteration) */
		if (sw_rxmod_pmd_poll(pmd, view) || got > 0)
			idle_since = now;
		if (sleep_after != 0 && now - idle_since >= sleep_after) {
			sw_pmd_sleep(pmd, l);
			idle_since = rte_get_tsc_cycles();
		}
		pmd->packets += got;
		/*
		 * Charge this iteration's own cycles: an iteration that copied
		 * 64 KiB frames is long and the empty poll after it short, so
		 * charging the time since the previous iteration began would book
		 * the work as idle.
		 */
		end = rte_get_tsc_cycles();
		pmd->total_cycles += end - prev;
		if (got > 0)
			pmd->busy_cycles += end - now;
		prev = end;
		rte_rcu_qsbr_quiescent(sw.rcu, pmd->id);
	}
	rte_rcu_qsbr_thread_offline(sw.rcu, pmd->id);
	rte_rcu_qsbr_thread_unregister(sw.rcu, pmd->id);
	return 0;
}

int
sw_pmd_init(void)
{
	unsigned int lcore;
	size_t sz;

	sw.n_pmds = 0;
	RTE_LCORE_FOREACH_WORKER(lcore) {
		if (sw.n_pmds == SW_MAX_PMDS)
			break;
		sw.pmds[sw.n_pmds] = (struct sw_pmd){.lcore = lcore, .id = sw.n_pmds, .wake_fd = -1};
		if (sw.pmd_sleep_us[sw.n_pmds] != 0 && sw_pmd_sleep_init(&sw.pmds[sw.n_pmds]) != 0)
			return -1;
		sw.n_pmds++;
	}
	if (sw.n_pmds == 0)
		return -1;
	sz = rte_rcu_qsbr_get_memsize(sw.n_pmds);
	sw.rcu = rte_zmalloc("sw_rcu", sz, RTE_CACHE_LINE_SIZE);
	if (sw.rcu == NULL || rte_rcu_qsbr_init(sw.rcu, sw.n_pmds) != 0)
		return -1;
	return 0;
}

void
sw_pmd_launch(void)
{
	for (unsigned int i = 0; i < sw.n_pmds; i++)
		rte_eal_remote_launch(pmd_main, &sw.pmds[i], sw.pmds[i].lcore);
}

void
sw_pmd_stop(void)
{
	sw.stop = true;
	rte_eal_mp_wait_lcore();
	for (unsigned int i = 0; i < sw.n_pmds; i++) {
		sw_pmd_sleep_fini(&sw.pmds[i]);
		rte_free(sw.pmds[i].rxqs);
		sw.pmds[i].rxqs = NULL;
	}
	rte_free(sw.view);
	sw.view = NULL;
}
