/* SPDX-License-Identifier: BSD-3-Clause */
/* The port registry: add, remove and change ports while traffic flows. */
#include <stdio.h>
#include <string.h>

#include <rte_malloc.h>

#include "hv_ctl_api.h"
#include "hv_log.h"
#include "sw.h"

/* The port types, registered at load. */
static const struct sw_port_ops *port_types[SW_PORT_MAX_TYPES];
static unsigned int n_port_types;

void
sw_port_type_register(const struct sw_port_ops *ops)
{
	if (n_port_types < SW_PORT_MAX_TYPES)
		port_types[n_port_types++] = ops;
}

const struct sw_port_ops *
sw_port_type_find(const char *name)
{
	for (unsigned int i = 0; i < n_port_types; i++)
		if (name != NULL ? strcmp(port_types[i]->type, name) == 0
				 : port_types[i]->ctl->is_default)
			return port_types[i];
	return NULL;
}

const struct sw_port_ops *
sw_port_type_at(unsigned int i)
{
	return i < n_port_types ? port_types[i] : NULL;
}

void
sw_view_publish(void)
{
	sw_dp_view_publish(&sw.dp, sw.ports);
}

void
sw_pmd_reassign(void)
{
	sw_dp_reassign(&sw.dp, sw.ports);
}

uint64_t
sw_now_ms(void)
{
	return sw_dp_now_ms(&sw.dp);
}

struct sw_port *
sw_port_find(const char *name)
{
	for (uint16_t i = 0; i < SW_MAX_PORTS; i++)
		if (sw.ports[i] != NULL && strcmp(sw.ports[i]->conf.name, name) == 0)
			return sw.ports[i];
	return NULL;
}

static bool
name_ok(const char *name)
{
	size_t n = strlen(name);

	if (n == 0 || n >= SW_NAME_MAX)
		return false;
	for (size_t i = 0; i < n; i++) {
		char ch = name[i];

		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		      (ch >= '0' && ch <= '9') || ch == '-' || ch == '_' || ch == '.'))
			return false;
	}
	return true;
}

static int
conf_check(struct sw_port_conf *c, char *err, size_t errlen)
{
	if (!name_ok(c->name)) {
		snprintf(err, errlen, "port name '%s': 1-%d characters of [A-Za-z0-9._-]", c->name,
			 SW_NAME_MAX - 1);
		return -1;
	}
	if (sw_port_find(c->name) != NULL) {
		snprintf(err, errlen, "port %s already exists", c->name);
		return -1;
	}
	if (c->queues < 1 || c->queues > SW_MAX_QUEUES) {
		snprintf(err, errlen, "port %s: queues must be 1..%d", c->name, SW_MAX_QUEUES);
		return -1;
	}
	if (c->vlan > SW_VLAN_MAX || (c->trunk && c->vlan != 0)) {
		snprintf(err, errlen, "port %s: vlan must be 0..%d (and 0 on a trunk)", c->name,
			 SW_VLAN_MAX);
		return -1;
	}
	if (c->pmd >= (int)sw.n_pmds) {
		snprintf(err, errlen, "port %s: pmd must be 0..%u", c->name, sw.n_pmds - 1);
		return -1;
	}
	if (c->type == NULL) {
		snprintf(err, errlen, "port %s: no such port type", c->name);
		return -1;
	}
	return c->type->ctl->conf_check(c, err, errlen);
}

int
sw_port_add(const struct sw_port_conf *conf, bool keep_on_error, char *err, size_t errlen)
{
	struct sw_port_conf c = *conf;
	struct sw_port *p;
	int idx = -1;

	if (conf_check(&c, err, errlen) != 0)
		return -1;
	for (int i = 0; i < SW_MAX_PORTS; i++) {
		if (sw.ports[i] == NULL) {
			idx = i;
			break;
		}
	}
	if (idx < 0) {
		snprintf(err, errlen, "port %s: the switch has %d ports already", c.name,
			 SW_MAX_PORTS);
		return -1;
	}
	p = rte_zmalloc("sw_port", sizeof(*p), RTE_CACHE_LINE_SIZE);
	if (p == NULL) {
		snprintf(err, errlen, "port %s: out of memory", c.name);
		return -1;
	}
	p->idx = (uint16_t)idx;
	p->conf = c;
	p->ops = c.type;
	p->txq_shared = c.queues < sw.n_pmds;
	for (int q = 0; q < SW_MAX_QUEUES; q++)
		rte_spinlock_init(&p->txq_lock[q]);
	if (p->ops->open(p, err, errlen) != 0) {
		if (!keep_on_error) {
			rte_free(p);
			return -1;
		}
		/* configured but down: kept so that the config does not lose it */
		snprintf(p->error, sizeof(p->error), "%s", err);
		HV_LOG(ERR, "%s", err);
	} else {
		p->running = true;
	}
	sw.ports[idx] = p;
	if (p->running) {
		sw_view_publish();
		sw_pmd_reassign();
		HV_LOG(INFO, "port %s added (%s, %u queue(s), vlan %u%s)", c.name, p->ops->type,
		       c.queues, c.vlan, c.trunk ? ", trunk" : "");
	}
	return 0;
}

static void
port_remove(struct sw_port *p)
{
	sw.ports[p->idx] = NULL;
	sw_capture_port_gone(p);
	if (p->running) {
		/* PMDs let go of its queues and of the port (grace periods inside) */
		sw_pmd_reassign();
		sw_view_publish();
		/* what PMDs queued for it before letting go, then its MACs */
		hv_fdb_apply(sw.fdb);
		hv_fdb_flush(sw.fdb, p->idx);
		p->ops->close(p);
	}
	HV_LOG(INFO, "port %s removed", p->conf.name);
	rte_free(p);
}

/* A port that needs @p (a tunnel on its uplink), or NULL. */
static const struct sw_port *
port_user(const struct sw_port *p)
{
	for (uint16_t i = 0; i < SW_MAX_PORTS; i++) {
		const struct sw_port *u = sw.ports[i];

		if (u != NULL && u != p && u->ops->ctl->uses != NULL && u->ops->ctl->uses(u, p))
			return u;
	}
	return NULL;
}

int
sw_port_del(const char *name, char *err, size_t errlen)
{
	struct sw_port *p = sw_port_find(name);
	const struct sw_port *u;

	if (p == NULL) {
		snprintf(err, errlen, "no port %s", name);
		return -1;
	}
	u = port_user(p);
	if (u != NULL) {
		snprintf(err, errlen, "port %s is used by port %s (delete that first)", name,
			 u->conf.name);
		return -1;
	}
	port_remove(p);
	return 0;
}

void
sw_port_del_all(void)
{
	/* those that use others first (tunnels before their uplinks) */
	for (int pass = 0; pass < 2; pass++)
		for (uint16_t i = 0; i < SW_MAX_PORTS; i++)
			if (sw.ports[i] != NULL &&
			    (pass == 1 || sw.ports[i]->ops->ctl->uses != NULL))
				port_remove(sw.ports[i]);
}

int
sw_port_set_vlan(struct sw_port *p, uint16_t vlan, bool trunk, char *err, size_t errlen)
{
	if (vlan > SW_VLAN_MAX || (trunk && vlan != 0)) {
		snprintf(err, errlen, "port %s: vlan must be 0..%d (and 0 on a trunk)",
			 p->conf.name, SW_VLAN_MAX);
		return -1;
	}
	__atomic_store_n(&p->conf.vlan, vlan, __ATOMIC_RELAXED);
	__atomic_store_n(&p->conf.trunk, trunk, __ATOMIC_RELAXED);
	/* what it learned belongs to its old domain */
	sw_view_publish();
	hv_fdb_apply(sw.fdb);
	hv_fdb_flush(sw.fdb, p->idx);
	return 0;
}

int
sw_port_set_pmd(struct sw_port *p, int pmd, char *err, size_t errlen)
{
	if (pmd < -1 || pmd >= (int)sw.n_pmds) {
		snprintf(err, errlen, "port %s: pmd must be 0..%u (or -1 for automatic)",
			 p->conf.name, sw.n_pmds - 1);
		return -1;
	}
	p->conf.pmd = pmd;
	if (p->running)
		sw_pmd_reassign();
	return 0;
}

void
sw_port_totals(const struct sw_port *p, struct sw_counters *out)
{
	memset(out, 0, sizeof(*out));
	for (unsigned int i = 0; i < sw.n_pmds; i++) {
		const struct sw_counters *c = &p->cnt[i];

		out->rx_packets += __atomic_load_n(&c->rx_packets, __ATOMIC_RELAXED);
		out->rx_bytes += __atomic_load_n(&c->rx_bytes, __ATOMIC_RELAXED);
		out->tx_packets += __atomic_load_n(&c->tx_packets, __ATOMIC_RELAXED);
		out->tx_bytes += __atomic_load_n(&c->tx_bytes, __ATOMIC_RELAXED);
		for (int d = 0; d < SW_DROP__MAX; d++)
			out->drops[d] += __atomic_load_n(&c->drops[d], __ATOMIC_RELAXED);
		out->learn_refused.limit +=
			__atomic_load_n(&c->learn_refused.limit, __ATOMIC_RELAXED);
		out->learn_refused.budget +=
			__atomic_load_n(&c->learn_refused.budget, __ATOMIC_RELAXED);
		out->off.passthrough += __atomic_load_n(&c->off.passthrough, __ATOMIC_RELAXED);
		out->off.hw_offload += __atomic_load_n(&c->off.hw_offload, __ATOMIC_RELAXED);
		out->off.segmented += __atomic_load_n(&c->off.segmented, __ATOMIC_RELAXED);
		out->off.segments += __atomic_load_n(&c->off.segments, __ATOMIC_RELAXED);
		out->off.csum_finished += __atomic_load_n(&c->off.csum_finished, __ATOMIC_RELAXED);
		for (int d = HV_OFFLOAD_DROP__FIRST; d < HV_OFFLOAD_DROP__MAX; d++)
			out->off.drops[d] += __atomic_load_n(&c->off.drops[d], __ATOMIC_RELAXED);
	}
}

cJSON *
sw_offload_json(const struct sw_counters *t, uint64_t *drops)
{
	cJSON *o = cJSON_CreateObject();
	cJSON *d;

	cJSON_AddNumberToObject(o, "passthrough", (double)t->off.passthrough);
	cJSON_AddNumberToObject(o, "hw_offload", (double)t->off.hw_offload);
	cJSON_AddNumberToObject(o, "segmented", (double)t->off.segmented);
	cJSON_AddNumberToObject(o, "segments", (double)t->off.segments);
	cJSON_AddNumberToObject(o, "csum_finished", (double)t->off.csum_finished);
	d = cJSON_AddObjectToObject(o, "drops");
	*drops = 0;
	for (int r = HV_OFFLOAD_DROP__FIRST; r < HV_OFFLOAD_DROP__MAX; r++) {
		cJSON_AddNumberToObject(d, hv_offload_drop_name(r), (double)t->off.drops[r]);
		*drops += t->off.drops[r];
	}
	return o;
}

/* cur - base; a counter below its base started again (a reconnected ring): cur */
static uint64_t
since(uint64_t cur, uint64_t base)
{
	return cur >= base ? cur - base : cur;
}

void
sw_port_counters(const struct sw_port *p, struct sw_counters *t, uint64_t *drv_drops,
		 uint64_t *irqs)
{
	/* every member a uint64_t counter: subtract them as an array */
	_Static_assert(sizeof(struct sw_counters) % sizeof(uint64_t) == 0, "sw_counters");
	uint64_t *c = (uint64_t *)t;
	const uint64_t *b = (const uint64_t *)&p->base;

	sw_port_totals(p, t);
	for (size_t i = 0; i < sizeof(*t) / sizeof(uint64_t); i++)
		c[i] = since(c[i], b[i]);
	*drv_drops = *irqs = 0;
	if (p->running)
		p->ops->driver_counters(p, drv_drops, irqs);
	*drv_drops = since(*drv_drops, p->base_drv_drops);
	*irqs = since(*irqs, p->base_irqs);
}

void
sw_port_clear_counters(struct sw_port *p)
{
	sw_port_totals(p, &p->base);
	p->base_drv_drops = p->base_irqs = 0;
	if (p->running)
		p->ops->driver_counters(p, &p->base_drv_drops, &p->base_irqs);
}

/* Which PMD polls each queue of @p (from the published lists). */
static cJSON *
queues_json(const struct sw_port *p)
{
	cJSON *arr = cJSON_CreateArray();

	for (uint16_t q = 0; q < p->conf.queues; q++) {
		cJSON *o = cJSON_CreateObject();
		int pmd = -1;

		for (unsigned int i = 0; i < sw.n_pmds && pmd < 0; i++) {
			const struct sw_rxq_list *l = sw.pmds[i].rxqs;

			for (uint16_t k = 0; l != NULL && k < l->n; k++)
				if (l->q[k].port == p && l->q[k].q == q)
					pmd = (int)i;
		}
		cJSON_AddNumberToObject(o, "qp", q);
		cJSON_AddNumberToObject(o, HV_CTL_KEY(PMD), pmd);
		if (pmd >= 0)
			cJSON_AddNumberToObject(o, "lcore", sw.pmds[pmd].lcore);
		cJSON_AddItemToArray(arr, o);
	}
	return arr;
}

cJSON *
sw_port_json(const struct sw_port *p, bool details)
{
	cJSON *o = sw_port_conf_to_json(&p->conf);
	struct sw_counters t;
	uint64_t drv_drops = 0, irqs = 0, drops = 0;
	cJSON *st;

	cJSON_AddStringToObject(o, "state",
				!p->running                                       ? "error"
				: p->ops->link_up(p)                              ? "up"
				: p->ops->attached != NULL && p->ops->attached(p) ? "connected"
										  : "down");
	if (p->error[0] != '\0')
		cJSON_AddStringToObject(o, "error", p->error);
	cJSON_AddNumberToObject(o, "macs", hv_fdb_count(sw.fdb, p->idx));
	if (!details)
		return o;
	sw_port_counters(p, &t, &drv_drops, &irqs);
	st = cJSON_AddObjectToObject(o, "stats");
	cJSON_AddNumberToObject(st, "rx_packets", (double)t.rx_packets);
	cJSON_AddNumberToObject(st, "rx_bytes", (double)t.rx_bytes);
	cJSON_AddNumberToObject(st, "tx_packets", (double)t.tx_packets);
	cJSON_AddNumberToObject(st, "tx_bytes", (double)t.tx_bytes);
	for (int d = 0; d < SW_DROP__MAX; d++) {
		cJSON_AddNumberToObject(st, sw_drop_name(d), (double)t.drops[d]);
		/* tx_full frames are the driver's drops too: count them once */
		if (d != SW_DROP_TX_FULL)
			drops += t.drops[d];
	}
	{
		uint64_t off_drops;

		cJSON_AddItemToObject(st, "offload", sw_offload_json(&t, &off_drops));
		drops += off_drops;
	}
	/* not drops: the frames were switched, their sources not learned */
	cJSON_AddNumberToObject(st, "learn_refused_limit", (double)t.learn_refused.limit);
	cJSON_AddNumberToObject(st, "learn_refused_budget", (double)t.learn_refused.budget);
	cJSON_AddNumberToObject(st, "driver_drops", (double)drv_drops);
	cJSON_AddNumberToObject(st, "drops", (double)(drops + drv_drops));
	cJSON_AddNumberToObject(st, "interrupts", (double)irqs);
	cJSON_AddItemToObject(o, "qps", queues_json(p));
	if (p->running)
		p->ops->ctl->describe(p, o);
	return o;
}
