/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Interrupt moderation in the switch: lib/rxmod's policy per vring of a
 * vhost-user port, fed by the driver's interrupt hook and driven by the PMD
 * loop (doc/rxmod.rst).
 *
 * Who touches a ring's policy state:
 *  - the guest's TX ring (HV_VHOST_RX, used buffers after our rx burst): the PMD
 *    polling that queue; it also delivers the owed interrupt, right after its
 *    rx burst of the queue on every iteration. A queue that moves to another
 *    PMD moves with its state (the reassignment has a grace period between).
 *  - the guest's RX ring (HV_VHOST_TX, our tx burst): the PMDs that transmit on
 *    that queue (PMD id modulo the port's queues; under the port's txq lock
 *    when several share it). The PMD whose burst made the interrupt owed keeps
 *    it on its pending list and delivers it from there, on every iteration,
 *    under the same lock.
 * Either way an owed interrupt is checked once per loop iteration against the
 * TSC, by the thread that made it owed or took the queue over: a window never
 * opens where no loop looks at it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_malloc.h>
#include <rte_per_lcore.h>

#include "hv_ctl_api.h"
#include "hv_log.h"
#include "hv_rxmod.h"
#include "port_vhost.h"

/* The control API's limit is ours. */
_Static_assert(HV_CTL_RXMOD_MAX_US == HV_RXMOD_MAX_US, "hv_ctl_api.h: rxmod");

struct sw_rxmod {
	struct hv_rxmod_queue q[HV_VHOST_MAX_QUEUE_PAIRS][2]; /* by queue pair, direction */
	/* interrupt rate, sampled by the control thread */
	uint64_t rate_irqs; /* callfd writes at the last sample */
	uint64_t rate_ms;   /* time of the last sample */
	double irqs_ps;     /* over the last interval */
};

/* An owed interrupt of a guest RX ring, on the list of the PMD that owes it. */
struct pending {
	struct sw_port *port; /* compared, not dereferenced, until found in the view */
	uint16_t idx;         /* the port's index in the view */
	uint16_t qp;          /* its guest RX ring (HV_VHOST_TX) owes it */
};

struct pending_list {
	unsigned int n;
	struct pending e[SW_MAX_PORTS * SW_MAX_QUEUES];
};

static struct pending_list pending[SW_MAX_PMDS];
static RTE_DEFINE_PER_LCORE(struct sw_pmd *, cur_pmd);

/* ---- configuration: "US|adaptive|off[,Q:US|adaptive|off]..." ---- */

int
sw_rxmod_spec_parse(const char *spec, uint16_t queues, uint32_t *win, char *err, size_t errlen)
{
	uint32_t port_us = HV_RXMOD_DEFAULT_US, q_us[SW_MAX_QUEUES];
	bool q_set[SW_MAX_QUEUES] = {false};
	char buf[SW_RXMOD_SPEC_MAX], *tok, *save = NULL;

	if (strlen(spec) >= sizeof(buf)) {
		snprintf(err, errlen, "rxmod: longer than %d characters", SW_RXMOD_SPEC_MAX - 1);
		return -1;
	}
	snprintf(buf, sizeof(buf), "%s", spec);
	for (tok = strtok_r(buf, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
		char *colon = strchr(tok, ':');
		uint32_t v;

		if (colon == NULL) {
			if (hv_rxmod_parse(tok, &port_us) != 0)
				goto bad;
			continue;
		}
		*colon = '\0';
		char *end;
		unsigned long q = strtoul(tok, &end, 10);

		if (tok[0] < '0' || tok[0] > '9' || *end != '\0' || q >= queues ||
		    hv_rxmod_parse(colon + 1, &v) != 0)
			goto bad;
		q_us[q] = v;
		q_set[q] = true;
	}
	for (uint16_t q = 0; q < SW_MAX_QUEUES; q++)
		win[q] = q < queues && q_set[q] ? q_us[q] : port_us;
	return 0;
bad:
	snprintf(err, errlen,
		 "rxmod '%s': want US (0..%d, 0 = off), 'adaptive', and per queue Q:US "
		 "(Q below %u), comma separated",
		 spec, HV_RXMOD_MAX_US, queues);
	return -1;
}

/* Windows of the port's queues, from its configuration (checked when set). */
static void
port_windows(const struct sw_port *p, uint32_t *win)
{
	char err[128];

	if (sw_rxmod_spec_parse(sw_vhost_conf_c(&p->conf)->rxmod, p->conf.queues, win, err,
				sizeof(err)) != 0) {
		HV_LOG(ERR, "port %s: %s: using the default", p->conf.name, err);
		for (uint16_t q = 0; q < SW_MAX_QUEUES; q++)
			win[q] = HV_RXMOD_DEFAULT_US;
	}
}

/* ---- the driver's interrupt hook (inside a burst, on a PMD) ---- */

static void
pending_add(struct sw_port *p, uint16_t qp)
{
	struct sw_pmd *pmd = RTE_PER_LCORE(cur_pmd);
	struct pending_list *l;

	if (unlikely(pmd == NULL))
		return;
	l = &pending[pmd->id];
	/* room for every RX ring of every port: cannot overflow */
	l->e[l->n++] = (struct pending){.port = p, .idx = p->idx, .qp = qp};
}

static void
irq_hook(void *ctx, struct hv_vhost_port *vp, uint16_t qp, enum hv_vhost_dir dir,
	 const struct hv_vhost_irq_event *ev)
{
	struct sw_port *p = ctx;
	struct hv_rxmod_queue *q = &sw_vhost(p)->rxmod->q[qp][dir];
	bool was_owed = hv_rxmod_owed(q);

	RTE_SET_USED(vp);
	/* a guest RX ring's interrupt goes on this PMD's list; a TX ring's is polled with its queue */
	if (hv_rxmod_on_used(q, rte_rdtsc(), ev->entries, ev->ring_size, ev->generation,
			     ev->wanted) &&
	    dir == HV_VHOST_TX && !was_owed)
		pending_add(p, qp);
}

static void
deliver(struct sw_port *p, uint16_t qp, enum hv_vhost_dir dir, struct hv_rxmod_queue *q,
	uint64_t now)
{
	switch (hv_vhost_irq_signal(sw_vhost(p)->dev, qp, dir, hv_rxmod_generation(q))) {
	case HV_VHOST_IRQ_SENT:
		hv_rxmod_done(q, now, HV_RXMOD_SENT);
		break;
	case HV_VHOST_IRQ_SUPPRESSED:
		hv_rxmod_done(q, now, HV_RXMOD_SUPPRESSED);
		break;
	default:
		hv_rxmod_done(q, now, HV_RXMOD_GONE);
		break;
	}
}

/* ---- the PMD loop ---- */

void
sw_rxmod_pmd_enter(struct sw_pmd *pmd)
{
	RTE_PER_LCORE(cur_pmd) = pmd;
	pending[pmd->id].n = 0;
}

void
sw_rxmod_poll_queue(struct sw_port *p, uint16_t qp)
{
	struct hv_rxmod_queue *q = &sw_vhost(p)->rxmod->q[qp][HV_VHOST_RX];
	uint64_t now;

	if (!hv_rxmod_owed(q))
		return;
	now = rte_rdtsc();
	if (hv_rxmod_due(q, now))
		deliver(p, qp, HV_VHOST_RX, q, now);
}

bool
sw_rxmod_queue_owed(const struct sw_port *p, uint16_t qp)
{
	const struct sw_rxmod *r = sw_vhost(p)->rxmod;

	return r != NULL && hv_rxmod_owed(&r->q[qp][HV_VHOST_RX]);
}

bool
sw_rxmod_pmd_poll(struct sw_pmd *pmd, const struct sw_view *view)
{
	struct pending_list *l = &pending[pmd->id];
	uint64_t now;

	if (l->n == 0)
		return false;
	now = rte_rdtsc();
	for (unsigned int i = 0; i < l->n;) {
		struct pending *e = &l->e[i];
		struct sw_port *p = e->port;
		struct hv_rxmod_queue *q;
		rte_spinlock_t *lock;
		bool keep;

		/* a port that left the view may be freed: forget it unseen */
		if (view == NULL || view->ports[e->idx] != p) {
			l->e[i] = l->e[--l->n];
			continue;
		}
		q = &sw_vhost(p)->rxmod->q[e->qp][HV_VHOST_TX];
		lock = p->txq_shared ? &p->txq_lock[e->qp] : NULL;
		if (lock != NULL)
			rte_spinlock_lock(lock);
		if (hv_rxmod_due(q, now))
			deliver(p, e->qp, HV_VHOST_TX, q, now);
		keep = hv_rxmod_owed(q);
		if (lock != NULL)
			rte_spinlock_unlock(lock);
		if (keep)
			i++;
		else
			l->e[i] = l->e[--l->n];
	}
	return l->n > 0;
}

/* ---- ports (control thread) ---- */

int
sw_rxmod_open(struct sw_port *p)
{
	uint64_t cycles_per_us = (rte_get_tsc_hz() + 999999) / 1000000;
	struct sw_vhost *v = sw_vhost(p);
	uint32_t win[SW_MAX_QUEUES];

	v->rxmod = rte_zmalloc("sw_rxmod", sizeof(*v->rxmod), RTE_CACHE_LINE_SIZE);
	if (v->rxmod == NULL)
		return -1;
	port_windows(p, win);
	for (uint16_t qp = 0; qp < HV_VHOST_MAX_QUEUE_PAIRS; qp++)
		for (int d = HV_VHOST_RX; d <= HV_VHOST_TX; d++)
			hv_rxmod_init(&v->rxmod->q[qp][d], cycles_per_us, win[qp % SW_MAX_QUEUES]);
	hv_vhost_set_irq_hook(v->dev, irq_hook, p);
	return 0;
}

void
sw_rxmod_close(struct sw_port *p)
{
	struct sw_vhost *v = sw_vhost(p);

	if (v->rxmod == NULL)
		return;
	if (v->dev != NULL)
		hv_vhost_set_irq_hook(v->dev, NULL, NULL);
	rte_free(v->rxmod);
	v->rxmod = NULL;
}

void
sw_rxmod_apply(struct sw_port *p)
{
	uint32_t win[SW_MAX_QUEUES];
	struct sw_rxmod *r;

	/* other types have no interrupts to moderate */
	if (p->ops != &sw_port_vhost_ops || !p->running || (r = sw_vhost(p)->rxmod) == NULL)
		return;
	port_windows(p, win);
	for (uint16_t qp = 0; qp < HV_VHOST_MAX_QUEUE_PAIRS; qp++)
		for (int d = HV_VHOST_RX; d <= HV_VHOST_TX; d++)
			hv_rxmod_configure(&r->q[qp][d], win[qp % SW_MAX_QUEUES]);
}

void
sw_rxmod_json(const struct sw_port *p, uint16_t qp, enum hv_vhost_dir dir, cJSON *o)
{
	const struct sw_rxmod *r = sw_vhost(p)->rxmod;
	const struct hv_rxmod_queue *q;
	const struct hv_rxmod_stats *s;
	char conf[16];
	cJSON *fpi;

	if (r == NULL || o == NULL)
		return;
	q = &r->q[qp][dir];
	s = &q->stats;
	hv_rxmod_format(hv_rxmod_configured(q), conf, sizeof(conf));
	cJSON_AddStringToObject(o, "rxmod", conf);
	cJSON_AddNumberToObject(o, "window_us", (double)(hv_rxmod_window(q) / q->cycles_per_us));
	cJSON_AddNumberToObject(o, "irqs_held",
				(double)__atomic_load_n(&s->held, __ATOMIC_RELAXED));
	cJSON_AddNumberToObject(o, "irqs_early",
				(double)__atomic_load_n(&s->early, __ATOMIC_RELAXED));
	cJSON_AddNumberToObject(o, "irqs_unwanted",
				(double)__atomic_load_n(&s->unwanted, __ATOMIC_RELAXED));
	cJSON_AddNumberToObject(o, "irqs_dropped",
				(double)__atomic_load_n(&s->dropped, __ATOMIC_RELAXED));
	/* ring entries per interrupt: element i counts interrupts covering 2^i..2^(i+1)-1 */
	fpi = cJSON_AddArrayToObject(o, "fpi");
	for (unsigned int b = 0; b < HV_RXMOD_FPI_BUCKETS; b++)
		cJSON_AddItemToArray(fpi, cJSON_CreateNumber((double)__atomic_load_n(
						  &s->fpi[b], __ATOMIC_RELAXED)));
}

/* ---- interrupt rate (control thread) ---- */

static uint64_t
port_irqs(const struct sw_port *p)
{
	uint64_t total = 0;

	for (uint16_t qp = 0; qp < p->conf.queues; qp++) {
		for (int d = HV_VHOST_RX; d <= HV_VHOST_TX; d++) {
			struct hv_vhost_vring_stats st;

			if (hv_vhost_vring_stats(sw_vhost(p)->dev, qp, d, &st) == 0)
				total += st.irqs_sent;
		}
	}
	return total;
}

void
sw_rxmod_rates(uint64_t now_ms)
{
	for (uint16_t i = 0; i < SW_MAX_PORTS; i++) {
		struct sw_port *p = sw.ports[i];
		struct sw_rxmod *r;
		uint64_t irqs;

		if (p == NULL || p->ops != &sw_port_vhost_ops || !p->running ||
		    sw_vhost(p)->rxmod == NULL || sw_vhost(p)->dev == NULL)
			continue;
		r = sw_vhost(p)->rxmod;
		irqs = port_irqs(p);
		if (r->rate_ms != 0 && now_ms > r->rate_ms)
			r->irqs_ps = (double)(irqs - r->rate_irqs) * 1000.0 /
				     (double)(now_ms - r->rate_ms);
		r->rate_irqs = irqs;
		r->rate_ms = now_ms;
	}
}

void
sw_rxmod_port_json(const struct sw_port *p, cJSON *o)
{
	const struct sw_rxmod *r = sw_vhost(p)->rxmod;

	if (r != NULL)
		cJSON_AddNumberToObject(o, "irqs_ps", (double)(uint64_t)r->irqs_ps);
}
