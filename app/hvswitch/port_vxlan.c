/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * VXLAN tunnel ports, the control plane's half (vxlan.h): configuration,
 * the remote VTEP table (configured flood list, VTEPs learned from the
 * tunnel's frames), the uplinks' demultiplexers, show. Control thread,
 * under sw.lock.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include <rte_malloc.h>

#include "hv_ctl_api.h"
#include "hv_log.h"
#include "vxlan.h"

#define VX_LEARN_RING 256

_Static_assert(sizeof(struct sw_vx_conf) <= SW_PORT_CONF_PRIV, "sw_port_conf.priv: vxlan");
_Static_assert(_Alignof(struct sw_vx_conf) <= 16, "sw_port_conf.priv: vxlan alignment");
_Static_assert(VX_MAX_REMOTES < UINT16_MAX, "a remote's tag is its index + 1");

extern const struct sw_port_ops sw_port_vxlan_ops;

static inline struct sw_vx_conf *
vx_conf(struct sw_port_conf *c)
{
	return (struct sw_vx_conf *)c->priv;
}

static inline const struct sw_vx_conf *
vx_conf_c(const struct sw_port_conf *c)
{
	return (const struct sw_vx_conf *)c->priv;
}

static const int vx_keys[] = {HV_CTL_K_VNI,    HV_CTL_K_LOCAL,  HV_CTL_K_UPLINK, HV_CTL_K_DSTPORT,
			      HV_CTL_K_REMOTE, HV_CTL_K_MIRROR, HV_CTL_K_PUSH,   HV_CTL_K__MAX};

static void
ip_str(rte_be32_t ip, char *buf, size_t len)
{
	struct in_addr a = {.s_addr = ip};

	if (inet_ntop(AF_INET, &a, buf, (socklen_t)len) == NULL)
		snprintf(buf, len, "?");
}

/* A unicast IPv4 address (not 0.0.0.0, multicast, broadcast or loopback) into @out. */
static int
ip_parse(const char *s, rte_be32_t *out)
{
	struct in_addr a;
	uint32_t h;

	if (inet_pton(AF_INET, s, &a) != 1)
		return -1;
	h = rte_be_to_cpu_32(a.s_addr);
	if (h == 0 || h == UINT32_MAX || (h >> 28) == 0xe || (h >> 24) == 127)
		return -1;
	*out = a.s_addr;
	return 0;
}

/* "A,B,C" into c->remotes; "" is none. */
static int
remotes_parse(const char *list, const char *cmd, struct sw_vx_conf *c, char *err, size_t errlen)
{
	char buf[HV_CTL_REMOTE_MAX + 1], *tok, *save = NULL;

	c->n_remotes = 0;
	snprintf(buf, sizeof(buf), "%s", list);
	for (tok = strtok_r(buf, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
		rte_be32_t ip;

		if (ip_parse(tok, &ip) != 0) {
			snprintf(err, errlen, "%s: '%s': '%s' is not a unicast IPv4 address", cmd,
				 HV_CTL_KEY(REMOTE), tok);
			return -1;
		}
		for (unsigned int i = 0; i < c->n_remotes; i++) {
			if (c->remotes[i] == ip) {
				snprintf(err, errlen, "%s: '%s': %s given twice", cmd,
					 HV_CTL_KEY(REMOTE), tok);
				return -1;
			}
		}
		if (c->n_remotes == VX_MAX_CONF_REMOTES) {
			snprintf(err, errlen, "%s: '%s': at most %d addresses", cmd,
				 HV_CTL_KEY(REMOTE), VX_MAX_CONF_REMOTES);
			return -1;
		}
		c->remotes[c->n_remotes++] = ip;
	}
	return 0;
}

static int
vx_conf_parse(const struct hv_ctl_vals *v, const char *cmd, struct sw_port_conf *c, char *err,
	      size_t errlen)
{
	struct sw_vx_conf *vc = vx_conf(c);

	vc->dstport = VX_DEFAULT_DSTPORT;
	if (v->v[HV_CTL_K_VNI].set) {
		vc->vni = (uint32_t)v->v[HV_CTL_K_VNI].u;
		vc->vni_set = true;
	}
	if (v->v[HV_CTL_K_LOCAL].set && ip_parse(v->v[HV_CTL_K_LOCAL].s, &vc->local) != 0) {
		snprintf(err, errlen, "%s: '%s' must be a unicast IPv4 address", cmd,
			 HV_CTL_KEY(LOCAL));
		return -1;
	}
	if (v->v[HV_CTL_K_UPLINK].set)
		snprintf(vc->uplink, sizeof(vc->uplink), "%s", v->v[HV_CTL_K_UPLINK].s);
	if (v->v[HV_CTL_K_DSTPORT].set)
		vc->dstport = (uint16_t)v->v[HV_CTL_K_DSTPORT].u;
	if (v->v[HV_CTL_K_REMOTE].set &&
	    remotes_parse(v->v[HV_CTL_K_REMOTE].s, cmd, vc, err, errlen) != 0)
		return -1;
	/* the table's length fits (15) */
	if (v->v[HV_CTL_K_MIRROR].set)
		snprintf(vc->mirror, sizeof(vc->mirror), "%s", v->v[HV_CTL_K_MIRROR].s);
	if (v->v[HV_CTL_K_PUSH].set)
		snprintf(vc->push, sizeof(vc->push), "%s", v->v[HV_CTL_K_PUSH].s);
	return 0;
}

static void
remotes_str(const struct sw_vx_conf *vc, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (unsigned int i = 0; i < vc->n_remotes && off < len; i++) {
		char ip[INET_ADDRSTRLEN];

		ip_str(vc->remotes[i], ip, sizeof(ip));
		off += (size_t)snprintf(buf + off, len - off, "%s%s", i ? "," : "", ip);
	}
}

static void
vx_conf_json(const struct sw_port_conf *c, cJSON *o)
{
	const struct sw_vx_conf *vc = vx_conf_c(c);
	char ip[INET_ADDRSTRLEN], list[HV_CTL_REMOTE_MAX + 1];

	cJSON_AddNumberToObject(o, HV_CTL_KEY(VNI), vc->vni);
	ip_str(vc->local, ip, sizeof(ip));
	cJSON_AddStringToObject(o, HV_CTL_KEY(LOCAL), ip);
	cJSON_AddStringToObject(o, HV_CTL_KEY(UPLINK), vc->uplink);
	cJSON_AddNumberToObject(o, HV_CTL_KEY(DSTPORT), vc->dstport);
	remotes_str(vc, list, sizeof(list));
	cJSON_AddStringToObject(o, HV_CTL_KEY(REMOTE), list);
	if (vc->mirror[0] != '\0')
		cJSON_AddStringToObject(o, HV_CTL_KEY(MIRROR), vc->mirror);
	if (vc->push[0] != '\0')
		cJSON_AddStringToObject(o, HV_CTL_KEY(PUSH), vc->push);
}

static bool
is_vxlan(const struct sw_port *p)
{
	return p->ops == &sw_port_vxlan_ops;
}

static int
vx_conf_check(struct sw_port_conf *c, char *err, size_t errlen)
{
	const struct sw_vx_conf *vc = vx_conf_c(c);
	const struct sw_port *up;

	if (!vc->vni_set || vc->local == 0 || vc->uplink[0] == '\0') {
		snprintf(err, errlen, "port %s: a vxlan port needs '%s', '%s' and '%s'", c->name,
			 HV_CTL_KEY(VNI), HV_CTL_KEY(LOCAL), HV_CTL_KEY(UPLINK));
		return -1;
	}
	if (c->trunk || c->queues != 1) {
		snprintf(err, errlen,
			 "port %s: a vxlan port carries one VLAN ('%s'), on no queue "
			 "of its own",
			 c->name, HV_CTL_KEY(VLAN));
		return -1;
	}
	for (unsigned int i = 0; i < vc->n_remotes; i++) {
		if (vc->remotes[i] == vc->local) {
			snprintf(err, errlen, "port %s: '%s' lists the local address", c->name,
				 HV_CTL_KEY(REMOTE));
			return -1;
		}
	}
	/* the pushed MACs are told apart from the remote ones by the mirror's socket */
	if (vc->push[0] != '\0' && (vc->mirror[0] == '\0' || !strcmp(vc->push, vc->mirror))) {
		snprintf(err, errlen, "port %s: '%s' needs '%s', a netdev other than '%s'", c->name,
			 HV_CTL_KEY(PUSH), HV_CTL_KEY(MIRROR), HV_CTL_KEY(MIRROR));
		return -1;
	}
	up = sw_port_find(vc->uplink);
	if (up == NULL || is_vxlan(up) || up->ops->link_info == NULL) {
		snprintf(err, errlen, "port %s: uplink %s must be an ethdev port of this switch",
			 c->name, vc->uplink);
		return -1;
	}
	for (uint16_t i = 0; i < SW_MAX_PORTS; i++) {
		const struct sw_port *o = sw.ports[i];
		const struct sw_vx_conf *oc;

		if (o == NULL || !is_vxlan(o) || strcmp(vx_conf_c(&o->conf)->uplink, vc->uplink))
			continue;
		oc = vx_conf_c(&o->conf);
		if (oc->vni == vc->vni) {
			snprintf(err, errlen, "port %s: VNI %u on %s is port %s's", c->name,
				 vc->vni, vc->uplink, o->conf.name);
			return -1;
		}
		if (oc->local != vc->local || oc->dstport != vc->dstport) {
			snprintf(err, errlen,
				 "port %s: the tunnels of uplink %s share one '%s' and '%s' (port "
				 "%s's)",
				 c->name, vc->uplink, HV_CTL_KEY(LOCAL), HV_CTL_KEY(DSTPORT),
				 o->conf.name);
			return -1;
		}
	}
	return 0;
}

static int
vx_conf_set(const struct sw_port *p, const struct hv_ctl_vals *v, const char *cmd,
	    struct sw_port_conf *c, char *err, size_t errlen)
{
	struct sw_vx_conf *vc = vx_conf(c);

	if (v->v[HV_CTL_K_TRUNK].set && v->v[HV_CTL_K_TRUNK].b) {
		snprintf(err, errlen, "%s: port %s: a vxlan port carries one VLAN, never a trunk",
			 cmd, p->conf.name);
		return -1;
	}
	if (!v->v[HV_CTL_K_REMOTE].set)
		return 0;
	if (remotes_parse(v->v[HV_CTL_K_REMOTE].s, cmd, vc, err, errlen) != 0)
		return -1;
	for (unsigned int i = 0; i < vc->n_remotes; i++) {
		if (vc->remotes[i] == vc->local) {
			snprintf(err, errlen, "%s: port %s: '%s' lists the local address", cmd,
				 p->conf.name, HV_CTL_KEY(REMOTE));
			return -1;
		}
	}
	return 0;
}

/* PMD 0 resolves the remotes without a next hop (at once, then every second till done). */
static void
arp_kick(void)
{
	__atomic_store_n(&vx_arp_due, true, __ATOMIC_RELAXED);
	sw_pmd_wake(&sw.pmds[0]);
}

static void
synchronize(void)
{
	rte_rcu_qsbr_synchronize(sw.dp.rcu, RTE_QSBR_THRID_INVALID);
}

/* A free remote slot for @ip (its address published last), or -1. */
int
vx_remote_add(struct sw_vx *vx, rte_be32_t ip, bool flood, bool learned)
{
	for (int i = 0; i < VX_MAX_REMOTES; i++) {
		if (vx->ips[i] == ip) {
			vx->remotes[i].flood |= flood;
			vx->remotes[i].learned |= learned;
			return i;
		}
	}
	for (int i = 0; i < VX_MAX_REMOTES; i++) {
		if (vx->ips[i] != 0)
			continue;
		memset(&vx->remotes[i], 0, sizeof(vx->remotes[i]));
		vx->remotes[i].flood = flood;
		vx->remotes[i].learned = learned;
		__atomic_store_n(&vx->ips[i], ip, __ATOMIC_RELEASE);
		return i;
	}
	return -1;
}

/* Publish the flood list of the remotes marked flood. */
void
vx_flood_publish(struct sw_vx *vx)
{
	struct vx_flood *fl = rte_zmalloc("vx_flood", sizeof(*fl), 0), *old;

	if (fl == NULL) {
		HV_LOG(ERR, "port %s: no memory for the flood list", vx->port->conf.name);
		return;
	}
	for (uint16_t i = 0; i < VX_MAX_REMOTES; i++)
		if (vx->ips[i] != 0 && (vx->remotes[i].flood || vx->remotes[i].mirror_flood))
			fl->idx[fl->n++] = i;
	old = __atomic_exchange_n(&vx->flood, fl, __ATOMIC_ACQ_REL);
	synchronize();
	rte_free(old);
}

/*
 * The remote table after the configured list: listed ones flood, others
 * stop flooding; those neither listed nor learned go (their MACs with them).
 */
static void
remotes_apply(struct sw_vx *vx, const struct sw_vx_conf *vc)
{
	bool gone[VX_MAX_REMOTES] = {false}, any_gone = false;

	for (unsigned int i = 0; i < VX_MAX_REMOTES; i++)
		vx->remotes[i].flood = false;
	for (unsigned int i = 0; i < vc->n_remotes; i++)
		if (vx_remote_add(vx, vc->remotes[i], true, false) < 0)
			HV_LOG(ERR, "port %s: no room for remote VTEP %u", vx->port->conf.name, i);
	vx_flood_publish(vx);
	for (unsigned int i = 0; i < VX_MAX_REMOTES; i++) {
		if (vx->ips[i] != 0 && !vx->remotes[i].flood && !vx->remotes[i].learned &&
		    !vx->remotes[i].mirror && !vx->remotes[i].mirror_flood) {
			__atomic_store_n(&vx->ips[i], 0, __ATOMIC_RELEASE);
			gone[i] = any_gone = true;
		}
	}
	if (!any_gone)
		return;
	/* no PMD sees them now; what they queued is applied, then their MACs go */
	synchronize();
	hv_fdb_apply(sw.fdb);
	for (unsigned int i = 0; i < VX_MAX_REMOTES; i++)
		if (gone[i])
			hv_fdb_flush_tag(sw.fdb, vx->port->idx, (uint16_t)(i + 1));
}

/* Publish @uplink's demultiplexer: the running tunnels on it and @with, not @without. */
static void
demux_publish(struct sw_port *uplink, const struct sw_port *with, const struct sw_port *without)
{
	struct vx_demux *dm = NULL;
	struct sw_demux *old;

	for (uint16_t i = 0; i <= SW_MAX_PORTS; i++) {
		const struct sw_port *p = i < SW_MAX_PORTS ? sw.ports[i] : with;
		const struct sw_vx *vx;

		if (p == NULL || p == without || !is_vxlan(p) || p->priv == NULL ||
		    (i < SW_MAX_PORTS && p == with))
			continue;
		vx = p->priv;
		if (vx->uplink != uplink)
			continue;
		if (dm == NULL) {
			dm = rte_zmalloc("vx_demux", sizeof(*dm), RTE_CACHE_LINE_SIZE);
			if (dm == NULL) {
				HV_LOG(ERR, "uplink %s: no memory for its tunnels' table",
				       uplink->conf.name);
				return;
			}
			dm->base.input = vx_demux_input;
			dm->local = vx->local;
			dm->dstport = vx->dstport;
		}
		if (dm->n < VX_MAX_PER_UPLINK) {
			dm->t[dm->n].vni_hdr = vx->vni_hdr;
			dm->t[dm->n++].port = p->idx;
		}
	}
	old = __atomic_exchange_n(&uplink->demux, dm != NULL ? &dm->base : NULL, __ATOMIC_ACQ_REL);
	synchronize();
	rte_free(old);
}

static void
vx_free(struct sw_vx *vx)
{
	vx_mirror_close(vx);
	vx_push_close(vx);
	rte_ring_free(vx->learn);
	rte_free(vx->remotes);
	rte_free(vx->flood);
	rte_free(vx);
}

static int
vx_open(struct sw_port *p, char *err, size_t errlen)
{
	const struct sw_vx_conf *vc = vx_conf_c(&p->conf);
	struct sw_port *up = sw_port_find(vc->uplink);
	char rname[RTE_RING_NAMESIZE];
	struct sw_vx *vx;
	uint16_t mtu;

	if (up == NULL || !up->running || up->ops->link_info == NULL) {
		snprintf(err, errlen, "port %s: uplink %s is not a running ethdev port",
			 p->conf.name, vc->uplink);
		return -1;
	}
	vx = rte_zmalloc("sw_vx", sizeof(*vx), RTE_CACHE_LINE_SIZE);
	if (vx != NULL)
		vx->nl_fd = vx->push_fd = -1;
	if (vx != NULL)
		vx->remotes = rte_zmalloc("sw_vx_remotes", sizeof(*vx->remotes) * VX_MAX_REMOTES,
					  RTE_CACHE_LINE_SIZE);
	snprintf(rname, sizeof(rname), "vx_learn_%u", p->idx);
	if (vx != NULL)
		vx->learn = rte_ring_create(rname, VX_LEARN_RING, SOCKET_ID_ANY, RING_F_SC_DEQ);
	if (vx == NULL || vx->remotes == NULL || vx->learn == NULL) {
		snprintf(err, errlen, "port %s: out of memory", p->conf.name);
		if (vx != NULL)
			vx_free(vx);
		return -1;
	}
	if (up->ops->link_info(up, &vx->uplink_mac, &mtu) != 0) {
		snprintf(err, errlen, "port %s: uplink %s: no MAC address or MTU", p->conf.name,
			 vc->uplink);
		vx_free(vx);
		return -1;
	}
	vx_pmd_map();
	vx->port = p;
	vx->uplink = up;
	vx->mtu = mtu;
	vx->vni = vc->vni;
	vx->vni_hdr = rte_cpu_to_be_32(vc->vni << 8);
	vx->local = vc->local;
	vx->dstport = rte_cpu_to_be_16(vc->dstport);
	p->priv = vx;
	/* its TX only encapsulates; the uplink's own TX lock covers the sends */
	p->txq_shared = false;
	remotes_apply(vx, vc);
	/* before the mirror's dump, which tells what an earlier run pushed */
	if ((vc->push[0] != '\0' && vx_push_open(vx, vc->push, err, errlen) != 0) ||
	    (vc->mirror[0] != '\0' && vx_mirror_open(vx, vc->mirror, err, errlen) != 0)) {
		p->priv = NULL;
		vx_free(vx);
		return -1;
	}
	demux_publish(up, p, NULL);
	/* once the PMDs see the port (vx_poll) */
	vx->resolve = true;
	return 0;
}

static void
vx_close(struct sw_port *p)
{
	struct sw_vx *vx = p->priv;

	demux_publish(vx->uplink, NULL, p);
	/* a port deleted withdraws its MACs; at shutdown they stay for the next run */
	if (!sw.dp.stop)
		vx_push_withdraw(vx);
	vx_free(vx);
	p->priv = NULL;
}

static void
vx_conf_apply(struct sw_port *p)
{
	if (p->priv != NULL) {
		remotes_apply(p->priv, vx_conf_c(&p->conf));
		arp_kick();
	}
}

static void
vx_tick(uint64_t now_ms)
{
	RTE_SET_USED(now_ms);
	for (uint16_t i = 0; i < SW_MAX_PORTS; i++) {
		const struct sw_port *p = sw.ports[i];
		const struct sw_vx *vx;

		if (p == NULL || !is_vxlan(p) || p->priv == NULL)
			continue;
		vx = p->priv;
		for (unsigned int r = 0; r < VX_MAX_REMOTES; r++) {
			if (vx->ips[r] != 0 &&
			    !(__atomic_load_n(&vx->remotes[r].nh, __ATOMIC_RELAXED) &
			      VX_NH_VALID)) {
				arp_kick();
				return;
			}
		}
	}
}

/* VTEPs the PMDs saw frames from: learned (flood-and-learn). */
static void
vx_poll(void)
{
	for (uint16_t i = 0; i < SW_MAX_PORTS; i++) {
		struct sw_port *p = sw.ports[i];
		struct sw_vx *vx;
		void *obj;

		if (p == NULL || !is_vxlan(p) || p->priv == NULL)
			continue;
		vx = p->priv;
		if (vx->resolve && p->running) {
			vx->resolve = false;
			arp_kick();
		}
		if (vx->nl_fd >= 0)
			vx_mirror_poll(vx);
		if (vx->push_fd >= 0)
			vx_push_poll(vx);
		while (rte_ring_sc_dequeue(vx->learn, &obj) == 0) {
			rte_be32_t ip = rte_cpu_to_be_32((uint32_t)(uintptr_t)obj);
			char s[INET_ADDRSTRLEN];
			uint32_t h = rte_be_to_cpu_32(ip);

			/* what a hostile underlay could make us keep: unicast only */
			if (ip == vx->local || h == 0 || (h >> 28) >= 0xe || (h >> 24) == 127)
				continue;
			if (vx_remote_add(vx, ip, false, true) < 0) {
				vx->learn_refused++;
				continue;
			}
			arp_kick();
			ip_str(ip, s, sizeof(s));
			HV_LOG(DEBUG, "port %s: remote VTEP %s learned", p->conf.name, s);
		}
	}
}

static bool
vx_uses(const struct sw_port *p, const struct sw_port *other)
{
	return strcmp(vx_conf_c(&p->conf)->uplink, other->conf.name) == 0;
}

static void
vx_describe(const struct sw_port *p, cJSON *obj)
{
	const struct sw_vx *vx = p->priv;
	struct vx_pmd_cnt t = {0};
	struct vx_uplink_cnt u = {0};
	cJSON *o, *arr;

	if (vx == NULL)
		return;
	o = cJSON_AddObjectToObject(obj, "vxlan");
	cJSON_AddNumberToObject(o, "underlay_mtu", vx->mtu);
	for (unsigned int i = 0; i < sw.n_pmds; i++) {
#define VX_X(name) t.name += __atomic_load_n(&vx->cnt[i].name, __ATOMIC_RELAXED);
		VX_COUNTERS(VX_X)
#undef VX_X
#define VX_X(name) u.name += __atomic_load_n(&vx_uplink_cnt[i].name, __ATOMIC_RELAXED);
		VX_UPLINK_COUNTERS(VX_X)
#undef VX_X
	}
#define VX_X(name) cJSON_AddNumberToObject(o, #name, (double)t.name);
	VX_COUNTERS(VX_X)
#undef VX_X
	cJSON_AddNumberToObject(o, "learn_refused", (double)vx->learn_refused);
	cJSON_AddNumberToObject(o, "mirror_refused", (double)vx->mirror_refused);
	if (vx->nl_fd >= 0) {
		cJSON_AddNumberToObject(o, "mirror_overruns", (double)vx->mirror_overruns);
		cJSON_AddNumberToObject(o, "mirror_rereads", (double)vx->mirror_rereads);
		cJSON_AddNumberToObject(o, "mirror_swept", (double)vx->mirror_swept);
		cJSON_AddNumberToObject(o, "mirror_unswept", (double)vx->mirror_unswept);
	}
	if (vx->push_fd >= 0)
		vx_push_describe(vx, o);
	{
		cJSON *uo = cJSON_AddObjectToObject(o, "uplinks");

#define VX_X(name) cJSON_AddNumberToObject(uo, #name, (double)u.name);
		VX_UPLINK_COUNTERS(VX_X)
#undef VX_X
	}
	arr = cJSON_AddArrayToObject(o, "remotes");
	for (unsigned int i = 0; i < VX_MAX_REMOTES; i++) {
		const struct vx_remote *r = &vx->remotes[i];
		struct vx_remote_cnt c = {0};
		uint64_t nh = __atomic_load_n(&r->nh, __ATOMIC_RELAXED);
		char ip[INET_ADDRSTRLEN], mac[RTE_ETHER_ADDR_FMT_SIZE];
		cJSON *ro;

		if (vx->ips[i] == 0)
			continue;
		for (unsigned int k = 0; k < sw.n_pmds; k++) {
			c.tx_packets += __atomic_load_n(&r->cnt[k].tx_packets, __ATOMIC_RELAXED);
			c.tx_bytes += __atomic_load_n(&r->cnt[k].tx_bytes, __ATOMIC_RELAXED);
			c.rx_packets += __atomic_load_n(&r->cnt[k].rx_packets, __ATOMIC_RELAXED);
			c.rx_bytes += __atomic_load_n(&r->cnt[k].rx_bytes, __ATOMIC_RELAXED);
		}
		ro = cJSON_CreateObject();
		ip_str(vx->ips[i], ip, sizeof(ip));
		cJSON_AddStringToObject(ro, "ip", ip);
		cJSON_AddBoolToObject(ro, "flood", r->flood);
		cJSON_AddBoolToObject(ro, "learned", r->learned);
		cJSON_AddBoolToObject(ro, "mirror_flood", r->mirror_flood);
		if (nh & VX_NH_VALID) {
			struct rte_ether_addr a;

			memcpy(&a, &nh, sizeof(a));
			rte_ether_format_addr(mac, sizeof(mac), &a);
			cJSON_AddStringToObject(ro, "next_hop_mac", mac);
		} else {
			cJSON_AddNullToObject(ro, "next_hop_mac");
		}
		cJSON_AddNumberToObject(ro, "tx_packets", (double)c.tx_packets);
		cJSON_AddNumberToObject(ro, "tx_bytes", (double)c.tx_bytes);
		cJSON_AddNumberToObject(ro, "rx_packets", (double)c.rx_packets);
		cJSON_AddNumberToObject(ro, "rx_bytes", (double)c.rx_bytes);
		cJSON_AddItemToArray(arr, ro);
	}
}

static void
vx_fdb_json(const struct sw_port *p, uint16_t tag, cJSON *o)
{
	const struct sw_vx *vx = p->priv;
	char ip[INET_ADDRSTRLEN];

	if (vx == NULL || tag == 0 || tag > VX_MAX_REMOTES || vx->ips[tag - 1] == 0)
		return;
	ip_str(vx->ips[tag - 1], ip, sizeof(ip));
	cJSON_AddStringToObject(o, "remote", ip);
}

static bool
vx_link_up(const struct sw_port *p)
{
	const struct sw_vx *vx = p->priv;

	return vx != NULL && vx->uplink->ops->link_up(vx->uplink);
}

static void
vx_driver_counters(const struct sw_port *p, uint64_t *drops, uint64_t *irqs)
{
	RTE_SET_USED(p);
	*drops = *irqs = 0;
}

static uint16_t
vx_rx(struct sw_port *p, uint16_t q, struct rte_mbuf **pkts, uint16_t n)
{
	RTE_SET_USED(p), RTE_SET_USED(q), RTE_SET_USED(pkts), RTE_SET_USED(n);
	return 0;
}

/* Nothing whole: a guest's TSO frame is segmented (checksums finished), then encapsulated. */
static uint32_t
vx_offload_caps(const struct sw_port *p)
{
	RTE_SET_USED(p);
	return 0;
}

static const struct sw_port_ctl_ops vx_ctl_ops = {
	.keys = vx_keys,
	.conf_parse = vx_conf_parse,
	.conf_json = vx_conf_json,
	.conf_check = vx_conf_check,
	.conf_set = vx_conf_set,
	.conf_apply = vx_conf_apply,
	.tick = vx_tick,
	.poll = vx_poll,
	.uses = vx_uses,
	.describe = vx_describe,
	.fdb_json = vx_fdb_json,
};

const struct sw_port_ops sw_port_vxlan_ops = {
	.type = "vxlan",
	.open = vx_open,
	.close = vx_close,
	.link_up = vx_link_up,
	.driver_counters = vx_driver_counters,
	.ctl = &vx_ctl_ops,
	.rx = vx_rx,
	.tx = vx_tx,
	/* its frames go to the uplink, a NIC that reads them after tx returns */
	.tx_keeps = true,
	.no_rx = true,
	.offload_caps = vx_offload_caps,
	.pmd_poll = vx_pmd_poll,
};

RTE_INIT(vx_type_register)
{
	sw_port_type_register(&sw_port_vxlan_ops);
}
