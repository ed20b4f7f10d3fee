/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The data path of VXLAN tunnel ports (vxlan.h): encapsulation of what the
 * switch hands the port (one remote VTEP for a known MAC, every VTEP of the
 * flood list otherwise), decapsulation of the tunnel's frames taken out of
 * the uplink's bursts, and the ARP of the local VTEP address. Bursts, no
 * locks but the uplink's TX queue lock where it is shared, no allocation but
 * mbufs.
 */
#include <string.h>

#include <rte_arp.h>
#include <rte_cycles.h>
#include <rte_hash_crc.h>
#include <rte_ip.h>
#include <rte_ip_frag.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_udp.h>
#include <rte_vxlan.h>

#include "vxlan.h"

struct vx_uplink_cnt vx_uplink_cnt[SW_MAX_PMDS];
uint8_t vx_pmd_of_lcore[RTE_MAX_LCORE];
bool vx_arp_due;

void
vx_pmd_map(void)
{
	for (unsigned int i = 0; i < sw.n_pmds; i++)
		if (sw.pmds[i].lcore < RTE_MAX_LCORE)
			vx_pmd_of_lcore[sw.pmds[i].lcore] = (uint8_t)i;
}

static inline unsigned int
pmd_id(void)
{
	unsigned int l = rte_lcore_id();

	return l < RTE_MAX_LCORE ? vx_pmd_of_lcore[l] : 0;
}

/* Hand @n frames to the uplink as its own TX would be (lock, capture, counters). */
static uint16_t
uplink_send(unsigned int pmd, struct sw_port *up, struct rte_mbuf **pkts, uint16_t n)
{
	struct sw_capture *cap = sw_port_capture(up);
	uint16_t q = (uint16_t)(pmd % up->conf.queues), sent;
	uint64_t bytes = 0;

	if (n == 0)
		return 0;
	for (uint16_t i = 0; i < n; i++)
		bytes += pkts[i]->pkt_len;
	if (unlikely(cap != NULL))
		sw_dp_capture(cap, pmd, q, pkts, n, SW_CAP_TX);
	if (unlikely(up->txq_shared))
		rte_spinlock_lock(&up->txq_lock[q]);
	sent = up->ops->tx(up, q, pkts, n);
	if (unlikely(up->txq_shared))
		rte_spinlock_unlock(&up->txq_lock[q]);
	up->cnt[pmd].tx_packets += sent;
	up->cnt[pmd].tx_bytes += sent == n ? bytes : bytes * sent / n;
	if (sent < n)
		up->cnt[pmd].drops[SW_DROP_TX_FULL] += n - sent;
	return sent;
}

/*
 * The UDP source port: a hash of the inner flow (addresses and, for TCP and
 * UDP, ports), so that the underlay's ECMP keeps a flow on one path; in
 * 49152-65535 (RFC 7348).
 */
static inline rte_be16_t
flow_port(const struct rte_mbuf *m)
{
	const struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
	uint64_t macs;
	uint32_t h, tail;

	/* copied out: a decapsulated frame's header is only 2-byte aligned */
	memcpy(&macs, eth, sizeof(macs));
	memcpy(&tail, (const uint8_t *)eth + 8, sizeof(tail));
	h = rte_hash_crc_4byte(tail, rte_hash_crc_8byte(macs, 0));
	if (eth->ether_type == rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4) &&
	    m->data_len >= sizeof(*eth) + sizeof(struct rte_ipv4_hdr) + 4) {
		const struct rte_ipv4_hdr *ip = (const struct rte_ipv4_hdr *)(eth + 1);
		size_t ihl = (size_t)(ip->version_ihl & 0xf) * 4;

		h = rte_hash_crc_8byte((uint64_t)ip->src_addr << 32 | ip->dst_addr,
				       ip->next_proto_id);
		if ((ip->next_proto_id == IPPROTO_TCP || ip->next_proto_id == IPPROTO_UDP) &&
		    !rte_ipv4_frag_pkt_is_fragmented(ip) && ihl >= 20 &&
		    m->data_len >= sizeof(*eth) + ihl + 4) {
			uint32_t ports;

			memcpy(&ports, (const uint8_t *)ip + ihl, sizeof(ports));
			h = rte_hash_crc_4byte(ports, h);
		}
	}
	return rte_cpu_to_be_16((uint16_t)(0xc000 | (h & 0x3fff)));
}

/*
 * @m with the outer headers to remote @ri in front: in its own headroom when
 * it is ours alone, else in an mbuf chained before it (a flood's copies
 * share the inner frame; @share: take a reference of it for this copy).
 * NULL (counted) without an mbuf.
 */
static struct rte_mbuf *
encap(struct sw_vx *vx, unsigned int pmd, struct rte_mbuf *m, unsigned int ri, uint64_t nh,
      rte_be16_t sport, bool share)
{
	uint32_t inner = m->pkt_len;
	struct rte_mbuf *h = m;
	struct rte_ether_hdr *eth;
	struct rte_ipv4_hdr *ip;
	struct rte_udp_hdr *udp;
	struct rte_vxlan_hdr *vxh;

	if (share || rte_mbuf_refcnt_read(m) != 1 || !RTE_MBUF_DIRECT(m) ||
	    rte_pktmbuf_headroom(m) < VX_ENCAP_LEN) {
		h = rte_pktmbuf_alloc(sw.dp.mp);
		if (h == NULL) {
			vx->cnt[pmd].no_mbuf++;
			return NULL;
		}
		if (share)
			rte_pktmbuf_refcnt_update(m, 1);
		if (rte_pktmbuf_chain(h, m) != 0) {
			rte_pktmbuf_free(h);
			if (share)
				rte_pktmbuf_free(m);
			vx->cnt[pmd].no_mbuf++;
			return NULL;
		}
	}
	eth = (struct rte_ether_hdr *)rte_pktmbuf_prepend(h, VX_ENCAP_LEN);
	ip = (struct rte_ipv4_hdr *)(eth + 1);
	udp = (struct rte_udp_hdr *)(ip + 1);
	vxh = (struct rte_vxlan_hdr *)(udp + 1);
	/* the next hop's MAC is the word's low 48 bits, in memory order */
	memcpy(&eth->dst_addr, &nh, RTE_ETHER_ADDR_LEN);
	eth->src_addr = vx->uplink_mac;
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	ip->version_ihl = RTE_IPV4_VHL_DEF;
	ip->type_of_service = 0;
	ip->total_length = rte_cpu_to_be_16((uint16_t)(inner + VX_IP_OVERHEAD));
	ip->packet_id = 0;
	/* a VTEP does not fragment (RFC 7348 4.3): the MTU check dropped what would need it */
	ip->fragment_offset = rte_cpu_to_be_16(RTE_IPV4_HDR_DF_FLAG);
	ip->time_to_live = 64;
	ip->next_proto_id = IPPROTO_UDP;
	ip->hdr_checksum = 0;
	ip->src_addr = vx->local;
	ip->dst_addr = vx->ips[ri];
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	udp->src_port = sport;
	udp->dst_port = vx->dstport;
	udp->dgram_len = rte_cpu_to_be_16((uint16_t)(inner + 16));
	udp->dgram_cksum = 0; /* optional over IPv4 (RFC 7348 5) */
	vxh->vx_flags = rte_cpu_to_be_32(0x08000000);
	vxh->vx_vni = vx->vni_hdr;
	/* nothing of the inner frame's offload requests applies to the outer one */
	h->ol_flags &= ~RTE_MBUF_F_TX_OFFLOAD_MASK;
	vx->remotes[ri].cnt[pmd].tx_packets++;
	vx->remotes[ri].cnt[pmd].tx_bytes += inner;
	vx->cnt[pmd].encap++;
	return h;
}

/* An ARP request for remote @ri's address, at most one per VX_ARP_INTERVAL_MS. */
static struct rte_mbuf *
arp_request(struct sw_vx *vx, unsigned int pmd, unsigned int ri)
{
	struct vx_remote *r = &vx->remotes[ri];
	uint64_t now = sw_dp_now_ms(&sw.dp), last = __atomic_load_n(&r->arp_ms, __ATOMIC_RELAXED);
	struct rte_ether_hdr *eth;
	struct rte_arp_hdr *arp;
	struct rte_mbuf *m;

	if ((last != 0 && now - last < VX_ARP_INTERVAL_MS) ||
	    !__atomic_compare_exchange_n(&r->arp_ms, &last, now, false, __ATOMIC_RELAXED,
					 __ATOMIC_RELAXED))
		return NULL;
	m = rte_pktmbuf_alloc(sw.dp.mp);
	if (m == NULL)
		return NULL;
	eth = (struct rte_ether_hdr *)rte_pktmbuf_append(m, sizeof(*eth) + sizeof(*arp));
	arp = (struct rte_arp_hdr *)(eth + 1);
	memset(&eth->dst_addr, 0xff, sizeof(eth->dst_addr));
	eth->src_addr = vx->uplink_mac;
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_ARP);
	arp->arp_hardware = rte_cpu_to_be_16(RTE_ARP_HRD_ETHER);
	arp->arp_protocol = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	arp->arp_hlen = RTE_ETHER_ADDR_LEN;
	arp->arp_plen = 4;
	arp->arp_opcode = rte_cpu_to_be_16(RTE_ARP_OP_REQUEST);
	arp->arp_data.arp_sha = vx->uplink_mac;
	arp->arp_data.arp_sip = vx->local;
	memset(&arp->arp_data.arp_tha, 0, sizeof(arp->arp_data.arp_tha));
	arp->arp_data.arp_tip = vx->ips[ri];
	vx->cnt[pmd].arp_requests++;
	return m;
}

bool
vx_pmd_poll(struct sw_pmd *pmd, const struct sw_view *view)
{
	/* one PMD resolves, when the control thread asks (one load per loop otherwise) */
	if (pmd->id != 0 || !__atomic_load_n(&vx_arp_due, __ATOMIC_RELAXED) || view == NULL)
		return false;
	__atomic_store_n(&vx_arp_due, false, __ATOMIC_RELAXED);
	for (uint16_t i = 0; i < view->n_ports; i++) {
		struct sw_port *p = view->ports[view->active[i]];
		struct sw_vx *vx;

		if (p->ops->tx != vx_tx || p->priv == NULL)
			continue;
		vx = p->priv;
		for (unsigned int ri = 0; ri < VX_MAX_REMOTES; ri++) {
			struct rte_mbuf *m;

			if (__atomic_load_n(&vx->ips[ri], __ATOMIC_ACQUIRE) == 0 ||
			    (__atomic_load_n(&vx->remotes[ri].nh, __ATOMIC_RELAXED) & VX_NH_VALID))
				continue;
			m = arp_request(vx, 0, ri);
			if (m != NULL)
				uplink_send(0, vx->uplink, &m, 1);
		}
	}
	return false;
}

/* Outer frames waiting for the uplink. */
struct vx_out {
	uint16_t n;
	struct rte_mbuf *pkts[SW_BURST];
};

static void
out_add(struct sw_vx *vx, unsigned int pmd, struct vx_out *o, struct rte_mbuf *m)
{
	if (o->n == SW_BURST) {
		uint16_t sent = uplink_send(pmd, vx->uplink, o->pkts, o->n);

		vx->cnt[pmd].uplink_full += o->n - sent;
		o->n = 0;
	}
	o->pkts[o->n++] = m;
}

/*
 * To remote @ri: encapsulated, or (next hop unknown) dropped with an ARP
 * request going instead. @share: @m stays the caller's. Whether it went.
 */
static bool
to_remote(struct sw_vx *vx, unsigned int pmd, struct vx_out *o, struct rte_mbuf *m, unsigned int ri,
	  rte_be16_t sport, bool share)
{
	uint64_t nh = __atomic_load_n(&vx->remotes[ri].nh, __ATOMIC_RELAXED);
	struct rte_mbuf *h;

	if (unlikely(!(nh & VX_NH_VALID))) {
		struct rte_mbuf *req = arp_request(vx, pmd, ri);

		if (req != NULL)
			out_add(vx, pmd, o, req);
		vx->cnt[pmd].no_neigh++;
		if (!share)
			rte_pktmbuf_free(m);
		return false;
	}
	h = encap(vx, pmd, m, ri, nh, sport, share);
	if (h == NULL) {
		if (!share)
			rte_pktmbuf_free(m);
		return false;
	}
	out_add(vx, pmd, o, h);
	return true;
}

uint16_t
vx_tx(struct sw_port *p, uint16_t q, struct rte_mbuf **pkts, uint16_t n)
{
	struct sw_vx *vx = p->priv;
	unsigned int pmd = pmd_id();
	struct hv_fdb_key keys[SW_BURST];
	const struct hv_fdb_key *kp[SW_BURST];
	uint16_t ports[SW_BURST], tags[SW_BURST], went = 0, sent;
	struct vx_out o = {.n = 0};

	RTE_SET_USED(q);
	/* where each destination is, behind this tunnel: the remote VTEP of its MAC */
	for (uint16_t i = 0; i < n; i++) {
		const struct rte_ether_hdr *eth = rte_pktmbuf_mtod(pkts[i], struct rte_ether_hdr *);

		keys[i].mac = eth->dst_addr;
		keys[i].vlan = p->conf.vlan;
		kp[i] = &keys[i];
	}
	hv_fdb_lookup_bulk_tag(sw.dp.fdb, kp, n, ports, tags);
	for (uint16_t i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		const struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
		const struct vx_flood *fl;
		rte_be16_t sport;
		unsigned int ri;

		if (unlikely(m->pkt_len + VX_IP_OVERHEAD > vx->mtu)) {
			vx->cnt[pmd].mtu_drops++;
			rte_pktmbuf_free(m);
			continue;
		}
		sport = flow_port(m);
		if (rte_is_unicast_ether_addr(&eth->dst_addr) && ports[i] == p->idx &&
		    tags[i] != 0 && tags[i] <= VX_MAX_REMOTES &&
		    vx->ips[(ri = tags[i] - 1u)] != 0) {
			went += to_remote(vx, pmd, &o, m, ri, sport, false);
			continue;
		}
		/* broadcast, multicast, unknown unicast: one copy to each VTEP of the flood list */
		fl = __atomic_load_n(&vx->flood, __ATOMIC_ACQUIRE);
		if (fl == NULL || fl->n == 0) {
			vx->cnt[pmd].no_flood++;
			rte_pktmbuf_free(m);
			continue;
		}
		{
			bool any = false;

			for (uint16_t j = 0; j < fl->n; j++)
				any |= to_remote(vx, pmd, &o, m, fl->idx[j], sport, true);
			rte_pktmbuf_free(m); /* each copy holds its own reference */
			went += any;
		}
	}
	sent = uplink_send(pmd, vx->uplink, o.pkts, o.n);
	vx->cnt[pmd].uplink_full += o.n - sent;
	return went;
}

/* Remote index of address @ip, or -1. */
static inline int
remote_find(const struct sw_vx *vx, rte_be32_t ip)
{
	for (int i = 0; i < VX_MAX_REMOTES; i++)
		if (__atomic_load_n(&vx->ips[i], __ATOMIC_RELAXED) == ip)
			return i;
	return -1;
}

/* @mac is where address @ip is reached, for every tunnel on this uplink that knows @ip. */
static void
neigh_learn(const struct vx_demux *dm, const struct sw_view *view, rte_be32_t ip,
	    const struct rte_ether_addr *mac)
{
	uint64_t nh = VX_NH_VALID;

	memcpy(&nh, mac, RTE_ETHER_ADDR_LEN);
	for (uint16_t t = 0; t < dm->n; t++) {
		const struct sw_port *p = view->ports[dm->t[t].port];
		struct sw_vx *vx;
		int ri;

		if (p == NULL || p->priv == NULL)
			continue;
		vx = p->priv;
		ri = remote_find(vx, ip);
		/* read first: the line stays clean while the next hop does not change */
		if (ri >= 0 && __atomic_load_n(&vx->remotes[ri].nh, __ATOMIC_RELAXED) != nh)
			__atomic_store_n(&vx->remotes[ri].nh, nh, __ATOMIC_RELAXED);
	}
}

/*
 * An ARP frame on the uplink: one for the local address is ours (answered
 * when a request, its sender learned as a next hop), whatever else is
 * switched. Whether it was taken.
 */
static bool
arp_input(const struct vx_demux *dm, unsigned int pmd, const struct sw_view *view,
	  struct sw_port *in, struct rte_mbuf *m)
{
	struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	struct rte_arp_hdr *arp = (struct rte_arp_hdr *)(eth + 1);
	struct rte_ether_addr my_mac;
	const struct sw_port *p;

	if (m->data_len < sizeof(*eth) + sizeof(*arp) ||
	    arp->arp_hardware != rte_cpu_to_be_16(RTE_ARP_HRD_ETHER) ||
	    arp->arp_protocol != rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4) ||
	    arp->arp_hlen != RTE_ETHER_ADDR_LEN || arp->arp_plen != 4 ||
	    arp->arp_data.arp_tip != dm->local)
		return false;
	if (rte_is_unicast_ether_addr(&arp->arp_data.arp_sha))
		neigh_learn(dm, view, arp->arp_data.arp_sip, &arp->arp_data.arp_sha);
	/* the tunnels' uplink MAC answers: that of the first of them still in the view */
	p = NULL;
	for (uint16_t t = 0; t < dm->n && p == NULL; t++)
		p = view->ports[dm->t[t].port];
	if (arp->arp_opcode != rte_cpu_to_be_16(RTE_ARP_OP_REQUEST) || p == NULL ||
	    p->priv == NULL || rte_mbuf_refcnt_read(m) != 1 || !RTE_MBUF_DIRECT(m)) {
		rte_pktmbuf_free(m);
		return true;
	}
	my_mac = ((const struct sw_vx *)p->priv)->uplink_mac;
	eth->dst_addr = arp->arp_data.arp_sha;
	eth->src_addr = my_mac;
	arp->arp_opcode = rte_cpu_to_be_16(RTE_ARP_OP_REPLY);
	arp->arp_data.arp_tha = arp->arp_data.arp_sha;
	arp->arp_data.arp_tip = arp->arp_data.arp_sip;
	arp->arp_data.arp_sha = my_mac;
	arp->arp_data.arp_sip = dm->local;
	vx_uplink_cnt[pmd].arp_replies++;
	uplink_send(pmd, in, &m, 1);
	return true;
}

/*
 * A frame to the local address: its tunnel port's index with the frame
 * decapsulated and @tag set (its remote VTEP's, 0 while unknown), or -1
 * (dropped, counted).
 */
static int
decap(const struct vx_demux *dm, unsigned int pmd, const struct sw_view *view, struct rte_mbuf *m,
      const struct rte_ipv4_hdr *ip, uint16_t *tag)
{
	const struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
	size_t ihl = (size_t)(ip->version_ihl & 0xf) * 4, hlen = sizeof(*eth) + ihl + 16;
	const struct rte_udp_hdr *udp;
	const struct rte_vxlan_hdr *vxh;
	struct sw_port *p = NULL;
	struct sw_vx *vx;
	uint32_t ip_len;
	int ri;

	if ((ip->version_ihl >> 4) != 4 || ihl < 20 || ip->next_proto_id != IPPROTO_UDP ||
	    rte_ipv4_frag_pkt_is_fragmented(ip) || m->data_len < sizeof(*eth) + ihl + 8) {
		vx_uplink_cnt[pmd].not_vxlan++;
		return -1;
	}
	udp = (const struct rte_udp_hdr *)((const uint8_t *)ip + ihl);
	if (udp->dst_port != dm->dstport) {
		vx_uplink_cnt[pmd].not_vxlan++;
		return -1;
	}
	vxh = (const struct rte_vxlan_hdr *)(udp + 1);
	ip_len = rte_be_to_cpu_16(ip->total_length);
	/* the inner Ethernet header follows in the same segment (l2 reads it there) */
	if (m->data_len < hlen + sizeof(struct rte_ether_hdr) ||
	    ip_len < hlen - sizeof(*eth) + sizeof(struct rte_ether_hdr) ||
	    ip_len > m->pkt_len - sizeof(*eth) || !(vxh->vx_flags & rte_cpu_to_be_32(0x08000000))) {
		vx_uplink_cnt[pmd].bad_vxlan++;
		return -1;
	}
	for (uint16_t t = 0; t < dm->n && p == NULL; t++)
		if (dm->t[t].vni_hdr == (vxh->vx_vni & rte_cpu_to_be_32(0xffffff00)))
			p = view->ports[dm->t[t].port];
	if (p == NULL || p->priv == NULL) {
		vx_uplink_cnt[pmd].unknown_vni++;
		return -1;
	}
	vx = p->priv;
	ri = remote_find(vx, ip->src_addr);
	if (ri >= 0) {
		uint64_t nh = VX_NH_VALID;

		/* the outer source is the way back (the remote, or the router before it) */
		memcpy(&nh, &eth->src_addr, RTE_ETHER_ADDR_LEN);
		if (__atomic_load_n(&vx->remotes[ri].nh, __ATOMIC_RELAXED) != nh)
			__atomic_store_n(&vx->remotes[ri].nh, nh, __ATOMIC_RELAXED);
		vx->remotes[ri].cnt[pmd].rx_packets++;
		vx->remotes[ri].cnt[pmd].rx_bytes += sizeof(*eth) + ip_len - hlen;
		*tag = (uint16_t)(ri + 1);
	} else {
		/* flood-and-learn: the control thread adds it; its MACs learned untagged till then */
		if (rte_ring_mp_enqueue(vx->learn,
					(void *)(uintptr_t)rte_be_to_cpu_32(ip->src_addr)) != 0)
			vx->cnt[pmd].learn_dropped++;
		*tag = 0;
	}
	vx->cnt[pmd].decap++;
	/* an underlay's padding (short frames) is not the inner frame's */
	if (m->pkt_len > sizeof(*eth) + ip_len)
		rte_pktmbuf_trim(m, (uint16_t)(m->pkt_len - sizeof(*eth) - ip_len));
	rte_pktmbuf_adj(m, (uint16_t)hlen);
	m->packet_type = 0; /* the outer frame's */
	return p->idx;
}

uint16_t
vx_demux_input(const struct sw_demux *d, struct sw_pmd *pmd, const struct sw_view *view,
	       struct sw_port *in, struct rte_mbuf **pkts, uint16_t n, uint64_t now_ms)
{
	const struct vx_demux *dm = (const struct vx_demux *)d;
	struct rte_mbuf *tun[SW_BURST];
	uint16_t tun_port[SW_BURST], tun_tag[SW_BURST], ntun = 0, left = 0, taken = 0;
	uint64_t taken_bytes = 0;
	unsigned int id = pmd->id;

	for (uint16_t i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		const struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
		const struct rte_ipv4_hdr *ip = (const struct rte_ipv4_hdr *)(eth + 1);
		uint32_t len = m->pkt_len;
		int port;

		if (m->data_len < sizeof(*eth) + sizeof(*ip)) {
			pkts[left++] = m;
			continue;
		}
		if (eth->ether_type == rte_cpu_to_be_16(RTE_ETHER_TYPE_ARP)) {
			if (arp_input(dm, id, view, in, m)) {
				taken++;
				taken_bytes += len;
			} else {
				pkts[left++] = m;
			}
			continue;
		}
		if (eth->ether_type != rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4) ||
		    ip->dst_addr != dm->local) {
			pkts[left++] = m;
			continue;
		}
		/* to the local address: the tunnels' or nobody's */
		taken++;
		taken_bytes += len;
		port = decap(dm, id, view, m, ip, &tun_tag[ntun]);
		if (port < 0) {
			rte_pktmbuf_free(m);
			continue;
		}
		tun_port[ntun] = (uint16_t)port;
		tun[ntun++] = m;
	}
	/* what the uplink received but does not switch itself */
	in->cnt[id].rx_packets += taken;
	in->cnt[id].rx_bytes += taken_bytes;
	/* each tunnel's frames switched as its input, in arrival order (mostly one tunnel) */
	for (uint16_t done = 0; done < ntun;) {
		struct rte_mbuf *batch[SW_BURST];
		uint16_t tags[SW_BURST], nb = 0, port = tun_port[done];

		for (uint16_t i = done; i < ntun && tun_port[i] == port; i++) {
			tags[nb] = tun_tag[i];
			batch[nb++] = tun[i];
		}
		sw_l2_input_tagged(pmd, view, view->ports[port], batch, nb, now_ms, tags);
		done += nb;
	}
	return left;
}
