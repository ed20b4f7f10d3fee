/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The switching step of a PMD: classify a burst into broadcast domains,
 * learn sources, look destinations up, and hand each frame to its port(s) in
 * the form that port takes (802.1Q tag pushed for trunks, popped for access
 * ports). Bursts of up to 32; no locks unless a destination has fewer TX
 * queues than there are PMDs.
 */
#include <string.h>

#include <rte_ether.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>

#include "dp.h"

static const char *const drop_names[] = {
#define SW_X(id, name) [SW_DROP_##id] = name,
	SW_DROP_REASONS(SW_X)
#undef SW_X
};

const char *
sw_drop_name(enum sw_drop d)
{
	return (unsigned int)d < SW_DROP__MAX ? drop_names[d] : "unknown";
}

/* Frames waiting for one destination port, flushed at the end of a burst. */
struct txbuf {
	uint16_t n;
	struct rte_mbuf *pkts[SW_BURST];
};

struct sw_l2_ctx {
	struct sw_pmd *pmd;
	struct rte_mempool *mp;
	const struct sw_view *view;
	const struct sw_port *in; /* the burst's source port */
	struct txbuf tx[SW_MAX_PORTS];
	uint16_t dirty[SW_MAX_PORTS]; /* ports with frames in tx[] */
	uint16_t n_dirty;
};

/* One context per PMD (struct sw_pmd.l2): too large for the stack, used by one thread only. */
struct sw_l2_ctx *
sw_l2_ctx_alloc(unsigned int socket)
{
	return rte_zmalloc_socket("sw_l2_ctx", sizeof(struct sw_l2_ctx), RTE_CACHE_LINE_SIZE,
				  (int)socket);
}

static inline void
count_drop(struct sw_pmd *pmd, struct sw_port *p, enum sw_drop why, uint32_t n)
{
	p->cnt[pmd->id].drops[why] += n;
}

static void
tx_flush(struct sw_l2_ctx *c, uint16_t idx)
{
	struct txbuf *b = &c->tx[idx];
	struct sw_port *p = c->view->ports[idx];
	struct sw_capture *cap = sw_port_capture(p);
	uint16_t q = (uint16_t)(c->pmd->id % p->conf.queues);
	uint32_t bytes = 0;
	uint16_t n = b->n, sent;

	for (uint16_t i = 0; i < n; i++)
		bytes += b->pkts[i]->pkt_len;
	/* as delivered (tagged, segmented); tx takes the frames */
	if (unlikely(cap != NULL))
		sw_dp_capture(cap, c->pmd->id, q, b->pkts, n, SW_CAP_TX);
	if (unlikely(p->txq_shared))
		rte_spinlock_lock(&p->txq_lock[q]);
	sent = p->ops->tx(p, q, b->pkts, n);
	if (unlikely(p->txq_shared))
		rte_spinlock_unlock(&p->txq_lock[q]);
	/* delivered bytes are approximate when some were not: count frames exactly */
	p->cnt[c->pmd->id].tx_packets += sent;
	p->cnt[c->pmd->id].tx_bytes += sent == n ? bytes : (uint64_t)bytes * sent / n;
	if (sent < n)
		count_drop(c->pmd, p, SW_DROP_TX_FULL, n - sent);
	b->n = 0;
}

/*
 * Whether @m must be copied before going to @out: @out reads frames after
 * tx returns, and @m's data is only lent until the burst ends (the source
 * type says which; only chained frames can be).
 */
static inline bool
must_copy(const struct sw_l2_ctx *c, const struct sw_port *out, const struct rte_mbuf *m)
{
	return out->ops->tx_keeps && m->nb_segs > 1 && c->in->ops->needs_copy != NULL &&
	       c->in->ops->needs_copy(m);
}

/*
 * A frame whose data its source lends until the end of the burst, as a
 * copy: for a device that reads it later. NULL (counted) without mbufs.
 */
static struct rte_mbuf *
unborrow(struct sw_l2_ctx *c, struct sw_port *out, struct rte_mbuf *m)
{
	struct rte_mbuf *copy = rte_pktmbuf_copy(m, c->mp, 0, UINT32_MAX);

	rte_pktmbuf_free(m);
	if (copy == NULL)
		count_drop(c->pmd, out, SW_DROP_NO_MBUF, 1);
	return copy;
}

static inline void
tx_enqueue(struct sw_l2_ctx *c, uint16_t idx, struct rte_mbuf *m)
{
	struct txbuf *b = &c->tx[idx];
	struct sw_port *out = c->view->ports[idx];

	if (unlikely(must_copy(c, out, m))) {
		m = unborrow(c, out, m);
		if (m == NULL)
			return;
	}

	if (b->n == 0)
		c->dirty[c->n_dirty++] = idx;
	b->pkts[b->n++] = m;
	if (b->n == SW_BURST) {
		tx_flush(c, idx);
		/* still listed as dirty: flushing an empty buffer later is a no-op */
	}
}

static void
tx_flush_all(struct sw_l2_ctx *c)
{
	for (uint16_t i = 0; i < c->n_dirty; i++)
		if (c->tx[c->dirty[i]].n > 0)
			tx_flush(c, c->dirty[i]);
	c->n_dirty = 0;
}

/*
 * A frame's two FDB keys (source and destination address, each with the
 * VLAN) as words, built in registers and stored whole: the burst compares
 * each key with the previous one right away, and reading back a key just
 * stored in pieces stalls on store forwarding. The frame's first 14 bytes
 * must be contiguous.
 */
static inline void
frame_keys(const struct rte_ether_hdr *eth, uint16_t vlan, uint64_t *src, uint64_t *dst)
{
	RTE_BUILD_BUG_ON(sizeof(struct hv_fdb_key) != sizeof(uint64_t));
	RTE_BUILD_BUG_ON(offsetof(struct hv_fdb_key, vlan) != 6);
#if RTE_BYTE_ORDER == RTE_LITTLE_ENDIAN
	/* bytes 0-7 hold the destination, bytes 4-11 end with the source */
	const uint64_t mac_bits = (UINT64_C(1) << 48) - 1;
	uint64_t lo, hi;

	memcpy(&lo, eth, sizeof(lo));
	memcpy(&hi, (const uint8_t *)eth + 4, sizeof(hi));
	*dst = (lo & mac_bits) | (uint64_t)vlan << 48;
	*src = (hi >> 16) | (uint64_t)vlan << 48;
#else
	union {
		struct hv_fdb_key k;
		uint64_t w;
	} u;

	u.k.mac = eth->dst_addr;
	u.k.vlan = vlan;
	*dst = u.w;
	u.k.mac = eth->src_addr;
	*src = u.w;
#endif
}

/*
 * Whether a frame carries a VLAN tag a peer could take for its VLAN: 802.1Q
 * (priority tags, VID 0, included) or 802.1ad.
 */
static inline bool
is_tagged(const struct rte_ether_hdr *eth)
{
	return eth->ether_type == rte_cpu_to_be_16(RTE_ETHER_TYPE_VLAN) ||
	       eth->ether_type == rte_cpu_to_be_16(RTE_ETHER_TYPE_QINQ);
}

/* Whether a frame of domain @vlan may leave through @p. */
static inline bool
port_in_domain(const struct sw_port *p, uint16_t vlan)
{
	return p->conf.trunk || p->conf.vlan == vlan;
}

/* Does the frame need its tag pushed (1), popped (-1), or nothing (0) for @out? */
static inline int
tag_change(const struct sw_port *out, uint16_t vlan, bool tagged)
{
	if (out->conf.trunk)
		return (vlan != 0 && !tagged) ? 1 : 0;
	return tagged ? -1 : 0;
}

/* Apply a tag change to a frame we own alone; false if it could not be done. */
static bool
retag(struct rte_mbuf *m, int change, uint16_t vlan)
{
	if (change > 0) {
		m->vlan_tci = vlan;
		return rte_vlan_insert(&m) == 0;
	}
	if (change < 0)
		return rte_vlan_strip(m) == 0;
	return true;
}

/*
 * Queue @m for port @idx in the offload form that port takes: whole, with
 * its checksum finished, or as TCP segments (lib/offload). @m is consumed;
 * it is written only when no other destination holds it.
 */
static void
emit(struct sw_l2_ctx *c, uint16_t idx, struct rte_mbuf *m)
{
	struct sw_port *out;
	struct rte_mbuf *segs[HV_OFFLOAD_MAX_SEGS];
	uint16_t n;

	if (likely(!hv_offload_mbuf_has_hdr(m))) {
		tx_enqueue(c, idx, m);
		return;
	}
	out = c->view->ports[idx];
	/* a NIC's form of a borrowed frame is built on a copy, not on a clone of it */
	if (unlikely(must_copy(c, out, m))) {
		m = unborrow(c, out, m);
		if (m == NULL)
			return;
	}
	n = hv_offload_prepare(m, out->ops->offload_caps(out), c->mp, segs,
			       &out->cnt[c->pmd->id].off);
	for (uint16_t i = 0; i < n; i++)
		tx_enqueue(c, idx, segs[i]);
}

/* Send @m to port @idx in that port's form. @m is consumed. */
static void
deliver(struct sw_l2_ctx *c, uint16_t idx, struct rte_mbuf *m, uint16_t vlan, bool tagged)
{
	struct sw_port *out = c->view->ports[idx];
	int change = tag_change(out, vlan, tagged);

	if (change != 0 && !retag(m, change, vlan)) {
		count_drop(c->pmd, out, SW_DROP_NO_MBUF, 1);
		rte_pktmbuf_free(m);
		return;
	}
	/* a tag pushed or popped moves the headers the offload metadata points at */
	if (change != 0 && !hv_offload_mbuf_shift(m, 4 * change)) {
		out->cnt[c->pmd->id].off.drops[HV_OFFLOAD_DROP_CSUM_RANGE]++;
		rte_pktmbuf_free(m);
		return;
	}
	emit(c, idx, m);
}

/* Every port of the domain but @in gets the frame. @m is consumed. */
static void
flood(struct sw_l2_ctx *c, struct sw_port *in, struct rte_mbuf *m, uint16_t vlan, bool tagged)
{
	const struct sw_view *v = c->view;
	uint16_t targets[SW_MAX_PORTS], n = 0;

	for (uint16_t i = 0; i < v->n_ports; i++) {
		const struct sw_port *p = v->ports[v->active[i]];

		if (p != in && port_in_domain(p, vlan))
			targets[n++] = v->active[i];
	}
	if (n == 0) {
		rte_pktmbuf_free(m);
		return;
	}
	for (uint16_t i = 0; i + 1 < n; i++) {
		struct sw_port *out = v->ports[targets[i]];
		struct rte_mbuf *copy;

		if (tag_change(out, vlan, tagged) == 0) {
			/*
			 * the same bytes: share the mbuf, each port drops one reference
			 * (every segment's count: a chain is freed segment by segment)
			 */
			rte_pktmbuf_refcnt_update(m, 1);
			emit(c, targets[i], m);
			continue;
		}
		copy = rte_pktmbuf_copy(m, c->mp, 0, UINT32_MAX);
		if (copy == NULL) {
			count_drop(c->pmd, out, SW_DROP_NO_MBUF, 1);
			continue;
		}
		deliver(c, targets[i], copy, vlan, tagged);
	}
	/* the last target takes our own reference; retag needs it unshared */
	if (rte_mbuf_refcnt_read(m) > 1 &&
	    tag_change(v->ports[targets[n - 1]], vlan, tagged) != 0) {
		struct rte_mbuf *copy = rte_pktmbuf_copy(m, c->mp, 0, UINT32_MAX);

		rte_pktmbuf_free(m);
		if (copy == NULL) {
			count_drop(c->pmd, v->ports[targets[n - 1]], SW_DROP_NO_MBUF, 1);
			return;
		}
		m = copy;
	}
	deliver(c, targets[n - 1], m, vlan, tagged);
}

/* Both inputs; @tags NULL: learned untagged (inlined apart: the usual one stays as lean). */
static __rte_always_inline void
l2_input(struct sw_pmd *pmd, const struct sw_view *view, struct sw_port *in, struct rte_mbuf **pkts,
	 uint16_t n, uint64_t now_ms, const uint16_t *tags)
{
	struct sw_l2_ctx *c = pmd->l2;
	struct hv_fdb *fdb = pmd->dp->fdb;
	struct hv_fdb_key keys[2][SW_BURST];
	/* distinct keys in a row: a burst is mostly one conversation */
	const struct hv_fdb_key *src[SW_BURST], *uniq[SW_BURST];
	uint64_t last_src = 0, last_dst = 0;
	uint16_t stags[SW_BURST], last_tag = 0;
	struct rte_mbuf *keep[SW_BURST];
	uint16_t vlan[SW_BURST], found[SW_BURST];
	uint16_t which[SW_BURST]; /* the frame's entry in uniq[], or UINT16_MAX: not unicast */
	bool tagged[SW_BURST];
	struct sw_counters *cnt = &in->cnt[pmd->id];
	uint16_t k = 0, nsrc = 0, nuniq = 0;

	c->pmd = pmd;
	c->mp = pmd->dp->mp;
	c->view = view;
	c->in = in;
	cnt->rx_packets += n;
	for (uint16_t i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		const struct rte_ether_hdr *eth;
		uint16_t dom;
		bool tag;

		cnt->rx_bytes += m->pkt_len;
		/* a guest's offload request is checked before anything relies on it */
		if (unlikely(hv_offload_mbuf_has_hdr(m))) {
			enum hv_offload_drop bad =
				hv_offload_check(m, hv_offload_mbuf_hdr(m), NULL);

			if (bad != HV_OFFLOAD_DROP__NONE) {
				cnt->off.drops[bad]++;
				rte_pktmbuf_free(m);
				continue;
			}
		}
		/* the Ethernet header (and a tag) must be contiguous to be read */
		if (unlikely(m->pkt_len < sizeof(struct rte_ether_hdr) ||
			     (m->data_len < RTE_MIN(m->pkt_len, 18u) &&
			      rte_pktmbuf_linearize(m) != 0))) {
			count_drop(pmd, in, SW_DROP_RUNT, 1);
			rte_pktmbuf_free(m);
			continue;
		}
		eth = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
		if (unlikely(!rte_is_unicast_ether_addr(&eth->src_addr))) {
			count_drop(pmd, in, SW_DROP_BAD_SRC, 1);
			rte_pktmbuf_free(m);
			continue;
		}
		if (in->conf.trunk) {
			tag = eth->ether_type == rte_cpu_to_be_16(RTE_ETHER_TYPE_VLAN);
			if (tag && m->data_len < 18) {
				count_drop(pmd, in, SW_DROP_RUNT, 1);
				rte_pktmbuf_free(m);
				continue;
			}
			dom = tag ? (rte_be_to_cpu_16(
					     ((const struct rte_vlan_hdr *)(eth + 1))->vlan_tci) &
				     0xfff)
				  : 0;
		} else if (unlikely(is_tagged(eth))) {
			/*
			 * A guest may not pick its VLAN: a tag of its own would
			 * leave a trunk as the outer one (in the untagged domain,
			 * which trunks carry untagged). Priority tags too.
			 */
			count_drop(pmd, in, SW_DROP_VLAN, 1);
			rte_pktmbuf_free(m);
			continue;
		} else {
			dom = in->conf.vlan;
			tag = false;
		}
		{
			uint64_t sword, dword;

			frame_keys(eth, dom, &sword, &dword);

			memcpy(&keys[0][k], &sword, sizeof(sword));
			memcpy(&keys[1][k], &dword, sizeof(dword));
			if (tags == NULL) {
				if (nsrc == 0 || sword != last_src)
					src[nsrc++] = &keys[0][k];
			} else if (nsrc == 0 || sword != last_src || tags[i] != last_tag) {
				stags[nsrc] = tags[i];
				src[nsrc++] = &keys[0][k];
				last_tag = tags[i];
			}
			last_src = sword;
			if (rte_is_unicast_ether_addr(&eth->dst_addr)) {
				if (nuniq == 0 || dword != last_dst)
					uniq[nuniq++] = &keys[1][k];
				last_dst = dword;
				which[k] = nuniq - 1;
			} else {
				which[k] = UINT16_MAX;
			}
		}
		vlan[k] = dom;
		tagged[k] = tag;
		keep[k++] = m;
	}
	if (k == 0)
		return;
	/* each distinct key looked up once */
	if (tags == NULL)
		hv_fdb_learn_bulk(fdb, src, nsrc, in->idx, now_ms, &cnt->learn_refused);
	else
		hv_fdb_learn_bulk_tag(fdb, src, nsrc, in->idx, stags, now_ms, &cnt->learn_refused);
	hv_fdb_lookup_bulk(fdb, uniq, nuniq, found);
	for (uint16_t i = 0; i < k; i++) {
		uint16_t o = which[i] != UINT16_MAX ? found[which[i]] : HV_FDB_PORT_NONE;

		/* unknown, gone, or (after a VLAN change) no longer in the domain: flood */
		if (o == HV_FDB_PORT_NONE || view->ports[o] == NULL ||
		    !port_in_domain(view->ports[o], vlan[i])) {
			flood(c, in, keep[i], vlan[i], tagged[i]);
		} else if (view->ports[o] == in) {
			count_drop(pmd, in, SW_DROP_SAME_PORT, 1);
			rte_pktmbuf_free(keep[i]);
		} else if (likely(tag_change(view->ports[o], vlan[i], tagged[i]) == 0 &&
				  !hv_offload_mbuf_has_hdr(keep[i]))) {
			/* the usual case, deliver() with nothing to change: the frame as it came */
			tx_enqueue(c, o, keep[i]);
		} else {
			deliver(c, o, keep[i], vlan[i], tagged[i]);
		}
	}
	tx_flush_all(c);
}

void
sw_l2_input(struct sw_pmd *pmd, const struct sw_view *view, struct sw_port *in,
	    struct rte_mbuf **pkts, uint16_t n, uint64_t now_ms)
{
	l2_input(pmd, view, in, pkts, n, now_ms, NULL);
}

void
sw_l2_input_tagged(struct sw_pmd *pmd, const struct sw_view *view, struct sw_port *in,
		   struct rte_mbuf **pkts, uint16_t n, uint64_t now_ms, const uint16_t *tags)
{
	l2_input(pmd, view, in, pkts, n, now_ms, tags);
}
