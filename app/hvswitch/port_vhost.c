/* SPDX-License-Identifier: BSD-3-Clause */
/* vhost-user ports: a guest's virtio-net rings, served by drivers/vhost. */
#include <inttypes.h>
#include <stdio.h>

#include <rte_errno.h>

#include "sw.h"

uint64_t sw_vhost_mem_limit;

static int
vhost_open(struct sw_port *p, char *err, size_t errlen)
{
	struct hv_vhost_port_conf c = {
		.name = p->conf.name,
		.path = p->conf.socket,
		.mode = p->conf.client ? HV_VHOST_CLIENT : HV_VHOST_SERVER,
		.queue_pairs = p->conf.queues,
		.features = p->conf.features,
		.mp = sw.mp,
		/* a PMD switches a burst whole before the next: see vhost_rx_done() */
		.borrow = true,
		.mem_limit = sw_vhost_mem_limit,
	};

	p->vhost = hv_vhost_port_create(&c);
	if (p->vhost == NULL) {
		snprintf(err, errlen, "port %s: socket %s: %s", p->conf.name, p->conf.socket,
			 rte_errno == EADDRINUSE ? "in use by another process" :
						   strerror(rte_errno));
		return -1;
	}
	if (sw_rxmod_open(p) != 0) {
		snprintf(err, errlen, "port %s: out of memory", p->conf.name);
		hv_vhost_port_destroy(p->vhost);
		p->vhost = NULL;
		return -1;
	}
	return 0;
}

static void
vhost_close(struct sw_port *p)
{
	sw_rxmod_close(p);
	hv_vhost_port_destroy(p->vhost);
	p->vhost = NULL;
}

static uint16_t
vhost_rx(struct sw_port *p, uint16_t q, struct rte_mbuf **pkts, uint16_t n)
{
	return hv_vhost_rx_burst(p->vhost, q, pkts, n);
}

/*
 * Every frame of the burst was delivered (copied into guests), copied for an
 * ethdev, or dropped by now: the sending guest gets its buffers back.
 */
static void
vhost_rx_done(struct sw_port *p, uint16_t q)
{
	hv_vhost_rx_done(p->vhost, q);
}

static uint16_t
vhost_tx(struct sw_port *p, uint16_t q, struct rte_mbuf **pkts, uint16_t n)
{
	return hv_vhost_tx_burst(p->vhost, q, pkts, n);
}

static bool
vhost_link_up(const struct sw_port *p)
{
	return p->vhost != NULL && hv_vhost_queue_ready(p->vhost, 0);
}

/* One vring's counters; the switch's rx is the guest's TX ring (odd vring). */
static cJSON *
vring_json(const struct sw_port *p, uint16_t v)
{
	struct hv_vhost_vring_stats s;
	cJSON *o;

	if (hv_vhost_vring_stats(p->vhost, v, &s) != 0)
		return NULL;
	o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "vring", v);
	cJSON_AddNumberToObject(o, "packets", (double)s.packets);
	cJSON_AddNumberToObject(o, "bytes", (double)s.bytes);
	cJSON_AddNumberToObject(o, "kicks", (double)s.kicks);
	cJSON_AddNumberToObject(o, "irqs", (double)s.irqs_sent);
	cJSON_AddNumberToObject(o, "irqs_suppressed", (double)s.irqs_suppressed);
	cJSON_AddNumberToObject(o, "stops", (double)s.stops);
	cJSON_AddNumberToObject(o, "borrowed", (double)s.borrowed);
	for (int d = HV_VHOST_DROP__FIRST; d < HV_VHOST_DROP__MAX; d++)
		cJSON_AddNumberToObject(o, hv_vhost_drop_name(d), (double)s.drops[d]);
	sw_rxmod_json(p, v, o);
	return o;
}

static void
vhost_describe(const struct sw_port *p, cJSON *obj)
{
	cJSON *qps = cJSON_GetObjectItemCaseSensitive(obj, "qps");
	struct hv_vhost_mem_stats m;

	if (p->vhost == NULL)
		return;
	cJSON_AddBoolToObject(obj, "connected", hv_vhost_port_connected(p->vhost));
	cJSON_AddNumberToObject(obj, "connections",
				(double)hv_vhost_port_connections(p->vhost));
	cJSON_AddNumberToObject(obj, "negotiated_features",
				(double)hv_vhost_port_features(p->vhost));
	sw_rxmod_port_json(p, obj);
	if (hv_vhost_mem_stats(p->vhost, &m) == 0) {
		cJSON *o = cJSON_AddObjectToObject(obj, "guest_memory");

		cJSON_AddNumberToObject(o, "limit_bytes", (double)m.limit_bytes);
		cJSON_AddNumberToObject(o, "mapped_bytes", (double)m.mapped_bytes);
		cJSON_AddNumberToObject(o, "regions", (double)m.regions);
		cJSON_AddNumberToObject(o, "refused_over_limit", (double)m.over_limit);
		cJSON_AddNumberToObject(o, "refused_not_memfs", (double)m.not_memfs);
		cJSON_AddNumberToObject(o, "fds_refused", (double)m.fds_refused);
		cJSON_AddNumberToObject(o, "fds_closing", (double)m.fds_closing);
	}
	/* per queue pair: rx = what the guest sent, tx = what it was given */
	for (uint16_t q = 0; q < p->conf.queues; q++) {
		cJSON *qp = cJSON_GetArrayItem(qps, q);

		if (qp == NULL)
			break;
		cJSON_AddItemToObject(qp, "rx", vring_json(p, 2 * q + 1));
		cJSON_AddItemToObject(qp, "tx", vring_json(p, 2 * q));
	}
}

static void
vhost_driver_counters(const struct sw_port *p, uint64_t *drops, uint64_t *irqs)
{
	*drops = *irqs = 0;
	if (p->vhost == NULL)
		return;
	for (uint16_t v = 0; v < 2 * p->conf.queues; v++) {
		struct hv_vhost_vring_stats s;

		if (hv_vhost_vring_stats(p->vhost, v, &s) != 0)
			continue;
		*irqs += s.irqs_sent;
		for (int d = HV_VHOST_DROP__FIRST; d < HV_VHOST_DROP__MAX; d++)
			*drops += s.drops[d];
	}
}

/* Negotiated per connection: read each time (a plain load of the port's features). */
static uint32_t
vhost_offload_caps(const struct sw_port *p)
{
	return hv_offload_caps_from_virtio(hv_vhost_port_features(p->vhost));
}

const struct sw_port_ops sw_port_vhost_ops = {
	.type = "vhost-user",
	.open = vhost_open,
	.close = vhost_close,
	.rx = vhost_rx,
	.rx_done = vhost_rx_done,
	.tx = vhost_tx,
	.link_up = vhost_link_up,
	.describe = vhost_describe,
	.driver_counters = vhost_driver_counters,
	.offload_caps = vhost_offload_caps,
};
