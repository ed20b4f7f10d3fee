/* SPDX-License-Identifier: BSD-3-Clause */
/* ethdev ports: any DPDK ethdev given by devargs (net_tap, net_af_packet, a NIC). */
#include <stdio.h>
#include <string.h>

#include <rte_dev.h>
#include <rte_ethdev.h>
#include <rte_malloc.h>

#include "hv_ctl_api.h"
#include "sw.h"

#define ETH_RING_SIZE 1024

/* struct sw_port.priv of an ethdev port. */
struct sw_eth {
	uint16_t port_id;
	uint32_t offload_caps; /* from dev_info, fixed at open */
};

static inline struct sw_eth *
sw_eth(const struct sw_port *p)
{
	return p->priv;
}

/* struct sw_port_conf.priv of an ethdev port. */
struct sw_eth_conf {
	char devargs[256];
};

_Static_assert(sizeof(struct sw_eth_conf) <= SW_PORT_CONF_PRIV, "sw_port_conf.priv: ethdev");
_Static_assert(_Alignof(struct sw_eth_conf) <= 16, "sw_port_conf.priv: ethdev alignment");

static inline const char *
eth_devargs(const struct sw_port_conf *c)
{
	return ((const struct sw_eth_conf *)c->priv)->devargs;
}

static const int eth_keys[] = {HV_CTL_K_DEVARGS, HV_CTL_K__MAX};

static int
eth_conf_parse(const struct hv_ctl_vals *v, const char *cmd, struct sw_port_conf *c, char *err,
	       size_t errlen)
{
	struct sw_eth_conf *ec = (struct sw_eth_conf *)c->priv;

	RTE_SET_USED(cmd), RTE_SET_USED(err), RTE_SET_USED(errlen);
	/* the table's length fits (255) */
	if (v->v[HV_CTL_K_DEVARGS].set)
		snprintf(ec->devargs, sizeof(ec->devargs), "%s", v->v[HV_CTL_K_DEVARGS].s);
	return 0;
}

static void
eth_conf_json(const struct sw_port_conf *c, cJSON *o)
{
	cJSON_AddStringToObject(o, HV_CTL_KEY(DEVARGS), eth_devargs(c));
}

static int
eth_conf_check(struct sw_port_conf *c, char *err, size_t errlen)
{
	if (eth_devargs(c)[0] == '\0') {
		snprintf(err, errlen, "port %s: an ethdev port needs devargs", c->name);
		return -1;
	}
	return 0;
}

/* The device name is what comes before the first comma of the devargs. */
static void
devargs_name(const char *devargs, char *name, size_t len)
{
	size_t n = strcspn(devargs, ",");

	snprintf(name, len, "%.*s", (int)RTE_MIN(n, len - 1), devargs);
}

static void
eth_close(struct sw_port *p)
{
	uint16_t id = sw_eth(p)->port_id;
	struct rte_eth_dev_info info;

	rte_eth_dev_stop(id);
	if (rte_eth_dev_info_get(id, &info) == 0 && info.device != NULL) {
		rte_eth_dev_close(id);
		rte_dev_remove(info.device);
	} else {
		rte_eth_dev_close(id);
	}
	rte_free(p->priv);
	p->priv = NULL;
}

static int
eth_open(struct sw_port *p, char *err, size_t errlen)
{
	struct rte_eth_conf conf = {0};
	struct rte_eth_dev_info info;
	char name[RTE_ETH_NAME_MAX_LEN];
	struct sw_eth *e;
	uint16_t id;
	int rc;

	e = rte_zmalloc("sw_eth", sizeof(*e), RTE_CACHE_LINE_SIZE);
	if (e == NULL) {
		snprintf(err, errlen, "port %s: out of memory", p->conf.name);
		return -1;
	}
	devargs_name(eth_devargs(&p->conf), name, sizeof(name));
	rc = rte_dev_probe(eth_devargs(&p->conf));
	if (rc != 0 || rte_eth_dev_get_port_by_name(name, &id) != 0) {
		snprintf(err, errlen, "port %s: no ethdev from devargs '%s' (%s)", p->conf.name,
			 eth_devargs(&p->conf), rc ? strerror(-rc) : "no such device");
		rte_free(e);
		return -1;
	}
	e->port_id = id;
	p->priv = e;
	rc = rte_eth_dev_info_get(id, &info);
	if (rc == 0 && (info.max_rx_queues < p->conf.queues || info.max_tx_queues < p->conf.queues))
		rc = -EINVAL;
	if (rc == 0) {
		/* the NIC's TSO and checksum offloads, where it has them; software otherwise */
		conf.txmode.offloads = hv_offload_ethdev_tx_offloads(info.tx_offload_capa);
		e->offload_caps = hv_offload_caps_from_ethdev(info.tx_offload_capa);
		rc = rte_eth_dev_configure(id, p->conf.queues, p->conf.queues, &conf);
	}
	for (uint16_t q = 0; rc == 0 && q < p->conf.queues; q++) {
		rc = rte_eth_rx_queue_setup(id, q, ETH_RING_SIZE, rte_eth_dev_socket_id(id), NULL,
					    sw.mp);
		if (rc == 0)
			rc = rte_eth_tx_queue_setup(id, q, ETH_RING_SIZE, rte_eth_dev_socket_id(id),
						    NULL);
	}
	if (rc == 0)
		rc = rte_eth_dev_start(id);
	if (rc == 0)
		rte_eth_promiscuous_enable(id); /* a switch port hears every MAC */
	if (rc != 0) {
		snprintf(err, errlen, "port %s: ethdev %s setup failed: %s", p->conf.name, name,
			 strerror(-rc));
		eth_close(p);
		return -1;
	}
	return 0;
}

static uint16_t
eth_rx(struct sw_port *p, uint16_t q, struct rte_mbuf **pkts, uint16_t n)
{
	return rte_eth_rx_burst(sw_eth(p)->port_id, q, pkts, n);
}

static uint16_t
eth_tx(struct sw_port *p, uint16_t q, struct rte_mbuf **pkts, uint16_t n)
{
	uint16_t sent = rte_eth_tx_burst(sw_eth(p)->port_id, q, pkts, n);

	if (sent < n)
		rte_pktmbuf_free_bulk(&pkts[sent], n - sent);
	return sent;
}

static bool
eth_link_up(const struct sw_port *p)
{
	struct rte_eth_link link;

	return p->priv != NULL && rte_eth_link_get_nowait(sw_eth(p)->port_id, &link) == 0 &&
	       link.link_status == RTE_ETH_LINK_UP;
}

static void
eth_describe(const struct sw_port *p, cJSON *obj)
{
	const struct sw_eth *e = sw_eth(p);
	struct rte_eth_link link;
	struct rte_eth_stats st;

	if (e == NULL)
		return;
	cJSON_AddNumberToObject(obj, "ethdev_port", e->port_id);
	cJSON_AddNumberToObject(obj, "offload_caps", e->offload_caps);
	if (rte_eth_link_get_nowait(e->port_id, &link) == 0) {
		cJSON_AddBoolToObject(obj, "link_up", link.link_status == RTE_ETH_LINK_UP);
		cJSON_AddNumberToObject(obj, "link_speed_mbps", link.link_speed);
	}
	if (rte_eth_stats_get(e->port_id, &st) == 0) {
		cJSON_AddNumberToObject(obj, "nic_ipackets", (double)st.ipackets);
		cJSON_AddNumberToObject(obj, "nic_opackets", (double)st.opackets);
		cJSON_AddNumberToObject(obj, "nic_imissed", (double)st.imissed);
		cJSON_AddNumberToObject(obj, "nic_ierrors", (double)st.ierrors);
		cJSON_AddNumberToObject(obj, "nic_oerrors", (double)st.oerrors);
		cJSON_AddNumberToObject(obj, "nic_rx_nombuf", (double)st.rx_nombuf);
	}
}

static void
eth_driver_counters(const struct sw_port *p, uint64_t *drops, uint64_t *irqs)
{
	struct rte_eth_stats st;

	*drops = *irqs = 0;
	if (p->priv != NULL && rte_eth_stats_get(sw_eth(p)->port_id, &st) == 0)
		*drops = st.imissed + st.ierrors + st.oerrors + st.rx_nombuf;
}

static uint32_t
eth_offload_caps(const struct sw_port *p)
{
	return sw_eth(p)->offload_caps;
}

static int
eth_link_info(const struct sw_port *p, struct rte_ether_addr *mac, uint16_t *mtu)
{
	const struct sw_eth *e = sw_eth(p);

	if (e == NULL || rte_eth_macaddr_get(e->port_id, mac) != 0 ||
	    rte_eth_dev_get_mtu(e->port_id, mtu) != 0)
		return -1;
	return 0;
}

static const struct sw_port_ctl_ops eth_ctl_ops = {
	.keys = eth_keys,
	.conf_parse = eth_conf_parse,
	.conf_json = eth_conf_json,
	.conf_check = eth_conf_check,
	.describe = eth_describe,
};

/* No idle sleep: a NIC queue cannot wake a PMD here (no interrupts). */
const struct sw_port_ops sw_port_ethdev_ops = {
	.type = "ethdev",
	.open = eth_open,
	.close = eth_close,
	.link_up = eth_link_up,
	.driver_counters = eth_driver_counters,
	.ctl = &eth_ctl_ops,
	.rx = eth_rx,
	.tx = eth_tx,
	.tx_keeps = true,
	.link_info = eth_link_info,
	.offload_caps = eth_offload_caps,
};

RTE_INIT(eth_type_register)
{
	sw_port_type_register(&sw_port_ethdev_ops);
}
