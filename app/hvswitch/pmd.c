/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * PMD threads: one per worker lcore, each polling the queues given to it.
 * What they read (queue lists, the port view) is replaced whole and retired
 * after an RCU grace period; a PMD passes a quiescent state once per loop.
 */
#include <stdlib.h>

#include <rte_cycles.h>
#include <rte_lcore.h>
#include <rte_malloc.h>

#include "dp.h"
#include "hv_log.h"

uint64_t
sw_dp_now_ms(const struct sw_dp *dp)
{
	return rte_get_tsc_cycles() / dp->tsc_per_ms;
}

/*
 * A queue that came back empty SW_QUIET_POLLS times in a row is quiet: it is
 * polled on one iteration in SW_QUIET_EVERY only (staggered by its place in
 * the list) until it brings a frame again. Ports that are connected but
 * idle then cost the loop a fraction of a poll each, and the busy ones get
 * the time; a quiet queue's first frame waits at most SW_QUIET_EVERY - 1
 * iterations more (doc/performance.rst, "Many ports"), and so does an
 * interrupt still owed for its last burst (queue_poll): its window is
 * looked at on every SW_QUIET_EVERY-th iteration.
 */
#define SW_QUIET_POLLS 1024
#define SW_QUIET_EVERY 4

/* The PMD's count of quiet queues, read by the telemetry thread. */
static inline void
quiet_set(struct sw_pmd *pmd, uint32_t n)
{
	__atomic_store_n(&pmd->quiet_rxqs, n, __ATOMIC_RELAXED);
}

static void
synchronize(struct sw_dp *dp)
{
	rte_rcu_qsbr_synchronize(dp->rcu, RTE_QSBR_THRID_INVALID);
}

void
sw_dp_view_publish(struct sw_dp *dp, struct sw_port *const *ports)
{
	struct sw_view *v = rte_zmalloc("sw_view", sizeof(*v), RTE_CACHE_LINE_SIZE);
	struct sw_view *old;

	if (v == NULL) {
		HV_LOG(ERR, "no memory for the port view: keeping the old one");
		return;
	}
	for (uint16_t i = 0; i < SW_MAX_PORTS; i++) {
		struct sw_port *p = ports[i];

		if (p == NULL || !p->running)
			continue;
		v->ports[i] = p;
		v->active[v->n_ports++] = i;
	}
	old = __atomic_exchange_n(&dp->view, v, __ATOMIC_ACQ_REL);
	synchronize(dp);
	rte_free(old);
}

/* Which PMD polls queue @q of @p. */
static unsigned int
pmd_of(const struct sw_dp *dp, const struct sw_port *p, uint16_t q, unsigned int *rr)
{
	if (p->conf.pmd >= 0)
		return (unsigned int)p->conf.pmd % dp->n_pmds;
	RTE_SET_USED(q);
	return (*rr)++ % dp->n_pmds;
}

static struct sw_rxq_list *
list_alloc(void)
{
	return rte_zmalloc("sw_rxqs",
			   sizeof(struct sw_rxq_list) +
				   sizeof(struct sw_rxq) * SW_MAX_PORTS * SW_MAX_QUEUES,
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
publish_lists(struct sw_dp *dp, struct sw_rxq_list **lists)
{
	struct sw_rxq_list *old[SW_MAX_PMDS];

	for (unsigned int i = 0; i < dp->n_pmds; i++)
		old[i] = __atomic_exchange_n(&dp->pmds[i].rxqs, lists[i], __ATOMIC_ACQ_REL);
	synchronize(dp);
	for (unsigned int i = 0; i < dp->n_pmds; i++)
		rte_free(old[i]);
}

void
sw_dp_reassign(struct sw_dp *dp, struct sw_port *const *ports)
{
	struct sw_rxq_list *want[SW_MAX_PMDS] = {NULL}, *keep[SW_MAX_PMDS] = {NULL};
	unsigned int rr = 0;

	for (unsigned int i = 0; i < dp->n_pmds; i++) {
		want[i] = list_alloc();
		keep[i] = list_alloc();
		if (want[i] == NULL || keep[i] == NULL)
			goto nomem;
	}
	for (uint16_t i = 0; i < SW_MAX_PORTS; i++) {
		struct sw_port *p = ports[i];

		if (p == NULL || !p->running || p->ops->no_rx)
			continue;
		for (uint16_t q = 0; q < p->conf.queues; q++) {
			struct sw_rxq_list *l = want[pmd_of(dp, p, q, &rr)];

			l->q[l->n++] = (struct sw_rxq){.port = p, .q = q};
		}
	}
	/*
	 * Two steps, so that a queue never has two pollers: first every PMD
	 * drops what it loses, then, after the grace period, it gets what it
	 * gains.
	 */
	for (unsigned int i = 0; i < dp->n_pmds; i++) {
		const struct sw_rxq_list *cur = dp->pmds[i].rxqs;

		for (uint16_t k = 0; k < want[i]->n; k++)
			if (list_has(cur, want[i]->q[k].port, want[i]->q[k].q))
				keep[i]->q[keep[i]->n++] = want[i]->q[k];
	}
	publish_lists(dp, keep);
	publish_lists(dp, want);
	/* a sleeping PMD watches the wake-ups of its old queues only */
	for (unsigned int i = 0; i < dp->n_pmds; i++)
		sw_pmd_wake(&dp->pmds[i]);
	return;
nomem:
	HV_LOG(ERR, "no memory to reassign queues");
	for (unsigned int i = 0; i < dp->n_pmds; i++) {
		rte_free(want[i]);
		rte_free(keep[i]);
	}
}

int
sw_dp_register_type(struct sw_dp *dp, const struct sw_port_ops *ops)
{
	if (dp->n_types == SW_DP_MAX_TYPES)
		return -1;
	dp->types[dp->n_types++] = ops;
	return 0;
}

/*
 * Once per PMD, before its loop. Not inlined: its loop over the types,
 * unrolled into the PMD's entry, got the PMD loop after it placed in
 * .text.unlikely (optimized for size).
 */
static __rte_noinline void
types_enter(struct sw_dp *dp, struct sw_pmd *pmd)
{
	for (unsigned int t = 0; t < dp->n_types; t++)
		if (dp->types[t]->pmd_enter != NULL)
			dp->types[t]->pmd_enter(pmd);
}

/* The registered types' per-PMD work; true while some stays owed. */
static inline bool
types_poll(struct sw_dp *dp, struct sw_pmd *pmd, const struct sw_view *view)
{
	bool owed = false;

	for (unsigned int t = 0; t < dp->n_types; t++)
		if (dp->types[t]->pmd_poll != NULL)
			owed |= dp->types[t]->pmd_poll(pmd, view);
	return owed;
}

int
sw_dp_pmd_main(void *arg)
{
	struct sw_pmd *pmd = arg;
	struct sw_dp *dp = pmd->dp;
	struct rte_mbuf *pkts[SW_BURST];
	uint64_t prev = rte_get_tsc_cycles(), idle_since = prev;
	unsigned int iter = 0;
	const struct sw_rxq_list *adopted = NULL;
	uint64_t sleep_after = (uint64_t)pmd->sleep_us * (dp->tsc_per_ms / 1000);

	rte_rcu_qsbr_thread_register(dp->rcu, pmd->id);
	rte_rcu_qsbr_thread_online(dp->rcu, pmd->id);
	types_enter(dp, pmd);
	HV_LOG(INFO, "PMD %u on lcore %u", pmd->id, pmd->lcore);
	while (!dp->stop) {
		/* its own list: only this PMD writes the entries' quiet counts */
		struct sw_rxq_list *l = __atomic_load_n(&pmd->rxqs, __ATOMIC_ACQUIRE);
		const struct sw_view *view = __atomic_load_n(&dp->view, __ATOMIC_ACQUIRE);
		uint64_t now = rte_get_tsc_cycles(), got = 0, end;
		uint64_t now_ms = now / dp->tsc_per_ms;

		if (unlikely(l != adopted)) {
			sw_pmd_sleep_adopt(l);
			adopted = l;
			quiet_set(pmd, 0); /* a new list starts with every queue polled */
		}

		iter++;
		for (uint16_t i = 0; l != NULL && view != NULL && i < l->n; i++) {
			struct sw_rxq *e = &l->q[i];
			struct sw_port *p;
			const struct sw_port_ops *ops;
			uint16_t n;

			/* not its turn: not even its port is touched */
			if (unlikely(e->quiet == SW_QUIET_POLLS) &&
			    ((iter + i) & (SW_QUIET_EVERY - 1)) != 0)
				continue;
			p = e->port;
			ops = p->ops;
			n = ops->rx(p, e->q, pkts, SW_BURST);
			if (n == 0) {
				if (e->quiet < SW_QUIET_POLLS && ++e->quiet == SW_QUIET_POLLS)
					quiet_set(pmd, pmd->quiet_rxqs + 1);
			} else if (unlikely(e->quiet != 0)) {
				if (e->quiet == SW_QUIET_POLLS)
					quiet_set(pmd, pmd->quiet_rxqs - 1);
				e->quiet = 0;
			}
			if (n > 0) {
				struct sw_capture *cap = sw_port_capture(p);
				struct sw_demux *dm = __atomic_load_n(&p->demux, __ATOMIC_ACQUIRE);
				uint16_t left = n;

				got += n;
				pmd->batches++;
				if (unlikely(cap != NULL))
					sw_dp_capture(cap, pmd->id, l->q[i].q, pkts, n, SW_CAP_RX);
				/* a tunnel's frames on its uplink go to the tunnel */
				if (unlikely(dm != NULL))
					left = dm->input(dm, pmd, view, p, pkts, n, now_ms);
				if (left > 0)
					sw_l2_input(pmd, view, p, pkts, left, now_ms);
				if (ops->rx_done != NULL)
					ops->rx_done(p, e->q);
			}
			/* after the burst ended: an interrupt enters the ring itself */
			if (ops->queue_poll != NULL)
				ops->queue_poll(p, e->q);
		}
		/* owed work of the port types (interrupts whose window closed), every iteration */
		if (types_poll(dp, pmd, view) || got > 0)
			idle_since = now;
		if (sleep_after != 0 && now - idle_since >= sleep_after) {
			sw_pmd_sleep(pmd, l);
			idle_since = rte_get_tsc_cycles();
			/* woken by one of them, maybe a quiet one: poll all at once */
			for (uint16_t i = 0; l != NULL && i < l->n; i++)
				l->q[i].quiet = 0;
			quiet_set(pmd, 0);
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
		rte_rcu_qsbr_quiescent(dp->rcu, pmd->id);
	}
	rte_rcu_qsbr_thread_offline(dp->rcu, pmd->id);
	rte_rcu_qsbr_thread_unregister(dp->rcu, pmd->id);
	return 0;
}

int
sw_dp_init(struct sw_dp *dp)
{
	size_t sz;

	if (dp->n_pmds == 0 || dp->n_pmds > SW_MAX_PMDS)
		return -1;
	for (unsigned int i = 0; i < dp->n_pmds; i++) {
		struct sw_pmd *pmd = &dp->pmds[i];

		pmd->dp = dp;
		pmd->wake_fd = -1;
		pmd->l2 = sw_l2_ctx_alloc(rte_lcore_to_socket_id(pmd->lcore));
		if (pmd->l2 == NULL)
			return -1;
		if (pmd->sleep_us != 0 && sw_pmd_sleep_init(pmd) != 0)
			return -1;
	}
	sz = rte_rcu_qsbr_get_memsize(dp->n_pmds);
	dp->rcu = rte_zmalloc("sw_rcu", sz, RTE_CACHE_LINE_SIZE);
	if (dp->rcu == NULL || rte_rcu_qsbr_init(dp->rcu, dp->n_pmds) != 0)
		return -1;
	return 0;
}

void
sw_dp_fini(struct sw_dp *dp)
{
	for (unsigned int i = 0; i < dp->n_pmds; i++) {
		struct sw_pmd *pmd = &dp->pmds[i];

		sw_pmd_sleep_fini(pmd);
		rte_free(pmd->rxqs);
		pmd->rxqs = NULL;
		rte_free(pmd->l2);
		pmd->l2 = NULL;
	}
	rte_free(dp->view);
	dp->view = NULL;
	rte_free(dp->rcu);
	dp->rcu = NULL;
}
