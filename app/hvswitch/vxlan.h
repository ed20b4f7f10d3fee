/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * VXLAN tunnel ports (RFC 7348, doc/vxlan.rst): one port per VNI, reached
 * through an uplink port that carries the IPv4 underlay. The control plane
 * (port_vxlan.c) configures them and learns new remote VTEPs; the data path
 * (vxlan_dp.c) encapsulates what the switch sends to the port and takes the
 * tunnel's frames (and the ARP for the local address) out of the uplink's
 * bursts before they are switched.
 *
 * Threads: PMDs read a port's state and write their own counters; the
 * control thread (under sw.lock) writes the remote table and publishes the
 * flood lists and the uplinks' demultiplexers (atomic pointers, freed after
 * a grace period of sw.dp.rcu).
 */
#ifndef HV_VXLAN_H
#define HV_VXLAN_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_byteorder.h>
#include <rte_ether.h>
#include <rte_ring.h>

#include "sw.h"

/* Remote VTEPs one tunnel port knows (configured and learned); tags are 1..this. */
#define VX_MAX_REMOTES 64
/* Remote VTEPs an operator may list (the flood list). */
#define VX_MAX_CONF_REMOTES 16
/* Tunnel ports on one uplink. */
#define VX_MAX_PER_UPLINK 32
/* Outer Ethernet + IPv4 + UDP + VXLAN. */
#define VX_ENCAP_LEN (14 + 20 + 8 + 8)
/* What the IPv4 total length adds to the inner frame. */
#define VX_IP_OVERHEAD (20 + 8 + 8)
#define VX_DEFAULT_DSTPORT 4789
/* Between two ARP requests for one remote VTEP's address. */
#define VX_ARP_INTERVAL_MS 200

/* struct sw_port_conf.priv of a vxlan port. */
struct sw_vx_conf {
	uint32_t vni;
	rte_be32_t local;
	uint16_t dstport; /* host order */
	uint8_t n_remotes;
	bool vni_set;
	char uplink[SW_NAME_MAX];
	rte_be32_t remotes[VX_MAX_CONF_REMOTES];
	char mirror[16]; /* a kernel vxlan netdev whose FDB the port follows; "": none */
	char push[16];   /* a port of the mirror's bridge the local MACs go to; "": none */
};

/* Per PMD, per remote VTEP (written by that PMD only). */
struct vx_remote_cnt {
	uint64_t tx_packets, tx_bytes; /* encapsulated to it */
	uint64_t rx_packets, rx_bytes; /* decapsulated from it */
};

struct vx_remote {
	/* the next hop's MAC in the low 48 bits, VX_NH_VALID when known (atomic: PMDs write) */
	uint64_t nh;
	uint64_t arp_ms;   /* when an ARP request for it last went (atomic, PMDs) */
	bool flood;        /* in the flood list (configured) */
	bool learned;      /* added because frames came from it */
	bool mirror_flood; /* in the flood list (the mirror's 00:00:00:00:00:00 entry) */
	bool mirror;       /* the mirror named it */
	struct vx_remote_cnt cnt[SW_MAX_PMDS];
};

#define VX_NH_VALID (UINT64_C(1) << 48)

/* The remotes BUM frames go to (head-end replication), by remote index. */
struct vx_flood {
	uint16_t n;
	uint16_t idx[VX_MAX_REMOTES];
};

/* A tunnel port's own counters, per PMD. */
#define VX_COUNTERS(X)                                                                             \
	X(encap)         /* frames sent into the tunnel (each copy of a flood) */                  \
	X(decap)         /* frames taken out of it */                                              \
	X(mtu_drops)     /* too long for the underlay once encapsulated */                         \
	X(no_neigh)      /* the remote VTEP's next hop is not resolved yet (an ARP went) */        \
	X(no_flood)      /* a flood with no remote VTEP in the flood list */                       \
	X(no_mbuf)       /* no mbuf for an outer header */                                         \
	X(uplink_full)   /* the uplink did not take it */                                          \
	X(arp_requests)  /* ARP requests sent for remote VTEPs */                                  \
	X(learn_dropped) /* frames from an unknown VTEP whose learning found no room */

struct vx_pmd_cnt {
#define VX_X(name) uint64_t name;
	VX_COUNTERS(VX_X)
#undef VX_X
} __rte_cache_aligned;

/* struct sw_port.priv of a vxlan port. */
struct sw_vx {
	struct sw_port *port;
	struct sw_port *uplink;
	uint32_t vni;
	rte_be32_t vni_hdr; /* as the VXLAN header carries it */
	rte_be32_t local;
	rte_be16_t dstport;
	struct rte_ether_addr uplink_mac;
	uint16_t mtu; /* the underlay's */
	/* remote VTEP i (tag i + 1): its address, 0 when free (PMDs scan it) */
	rte_be32_t ips[VX_MAX_REMOTES];
	struct vx_remote *remotes;
	struct vx_flood *flood; /* published (atomic pointer) */
	struct rte_ring *learn; /* addresses of unknown VTEPs, PMDs to the control thread */
	uint64_t learn_refused; /* control thread: no room for a learned VTEP */
	bool resolve;           /* control thread: ARP for the remotes once the PMDs see it */
	int nl_fd;              /* the mirror's netlink socket, -1: none */
	int mirror_ifindex;
	uint64_t mirror_refused;     /* mirror entries not installed (no room) */
	uint64_t mirror_events;      /* neighbour messages of the mirror's bridge seen */
	uint64_t mirror_overruns;    /* netlink overruns: changes lost, a re-read follows */
	uint64_t mirror_rereads;     /* re-reads completed after an overrun */
	uint64_t mirror_swept;       /* entries a re-read found gone (removed) */
	uint32_t mirror_seq;         /* the last dump request's sequence number */
	bool mirror_dumping;         /* a dump is in flight (one at a time per socket) */
	uint64_t mirror_unswept;     /* re-reads whose dump could not be trusted to sweep */
	bool mirror_reread;          /* read the mirror again (at mirror_reread_ms) */
	bool mirror_lost;            /* an overrun lost changes of the push port too */
	bool mirror_untrusted;       /* an entry was deleted while it ran (dump_watch()) */
	uint64_t mirror_dump_ms;     /* when the dump in flight was asked for */
	uint64_t mirror_reread_ms;   /* the next re-read not before then */
	uint64_t mirror_start_ms;    /* when the last re-read started */
	uint64_t mirror_backoff_ms;  /* doubled by each dump that could not be trusted */
	struct vx_mirror_snap *snap; /* the entries a re-read in flight may sweep */
	int push_fd;                 /* netlink socket for the pushed MACs, -1: none */
	int push_ifindex;
	struct vx_push *push; /* what was pushed (vxlan_push.c) */
	struct vx_pmd_cnt cnt[SW_MAX_PMDS];
};

/* What an uplink's demultiplexer matches (struct sw_port.demux of the uplink). */
struct vx_demux {
	struct sw_demux base;
	rte_be32_t local;
	rte_be16_t dstport;
	uint16_t n;
	struct {
		rte_be32_t vni_hdr;
		uint16_t port; /* the tunnel port's index */
	} t[VX_MAX_PER_UPLINK];
};

/* Frames on an uplink for the local address that no tunnel took, per PMD (all uplinks). */
#define VX_UPLINK_COUNTERS(X)                                                                      \
	X(not_vxlan)   /* IPv4 to the local address, not VXLAN on the tunnels' UDP port */         \
	X(bad_vxlan)   /* VXLAN header without the I flag, or truncated */                         \
	X(unknown_vni) /* no tunnel port of that VNI */                                            \
	X(arp_replies) /* ARP requests for the local address answered */

struct vx_uplink_cnt {
#define VX_X(name) uint64_t name;
	VX_UPLINK_COUNTERS(VX_X)
#undef VX_X
} __rte_cache_aligned;

extern struct vx_uplink_cnt vx_uplink_cnt[SW_MAX_PMDS];

/* The PMD index of the calling lcore (vxlan_dp.c; vx_pmd_map() fills it). */
extern uint8_t vx_pmd_of_lcore[RTE_MAX_LCORE];
void vx_pmd_map(void);

/* ---- control plane (port_vxlan.c, vxlan_mirror.c), control thread ---- */
/* The index of remote @ip, added if new (-1: no room); @flood, @learned are or-ed in. */
int vx_remote_add(struct sw_vx *vx, rte_be32_t ip, bool flood, bool learned);
/* Publish the flood list (after a remote's flood flags changed). */
void vx_flood_publish(struct sw_vx *vx);
/* Follow kernel netdev @ifname's FDB: subscribe and dump. 0, or -1 with @err. */
int vx_mirror_open(struct sw_vx *vx, const char *ifname, char *err, size_t errlen);
/* Apply what changed in the mirror's FDB (never blocks). */
void vx_mirror_poll(struct sw_vx *vx);
void vx_mirror_close(struct sw_vx *vx);
/* Push the MACs learned on the tunnel's VLAN to bridge port @ifname. 0, or -1 with @err. */
int vx_push_open(struct sw_vx *vx, const char *ifname, char *err, size_t errlen);
/* The mirror saw neighbour @mac of the push port added (@add) or deleted. */
void vx_push_neigh(struct sw_vx *vx, bool add, const struct rte_ether_addr *mac, uint8_t flags);
/* Bring the push port's entries in line with the FDB (when it changed; never blocks). */
void vx_push_poll(struct sw_vx *vx);
/* The mirror overran: forget what was pushed, so that it is all pushed again. */
void vx_push_forget(struct sw_vx *vx);
/* Delete every pushed entry (the port goes). */
void vx_push_withdraw(struct sw_vx *vx);
void vx_push_describe(const struct sw_vx *vx, cJSON *o);
void vx_push_close(struct sw_vx *vx);

/* ---- data path (vxlan_dp.c) ---- */
/* Set by the control thread: PMD 0 sends ARP requests for unresolved remote VTEPs. */
extern bool vx_arp_due;
/* struct sw_port_ops.pmd_poll of vxlan ports. */
bool vx_pmd_poll(struct sw_pmd *pmd, const struct sw_view *view);
uint16_t vx_tx(struct sw_port *p, uint16_t q, struct rte_mbuf **pkts, uint16_t n);
uint16_t vx_demux_input(const struct sw_demux *d, struct sw_pmd *pmd, const struct sw_view *view,
			struct sw_port *in, struct rte_mbuf **pkts, uint16_t n, uint64_t now_ms);

#endif
