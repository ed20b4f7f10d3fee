/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The metadata dynfield, capabilities, and the check of a guest's offload
 * request against its frame. Everything here reads untrusted bytes: every
 * offset is bounded by the frame before it is used.
 */
#include <errno.h>
#include <string.h>

#include <linux/virtio_net.h>

#include <rte_byteorder.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_tcp.h>

#include "offload_internal.h"

int hv_offload_hdr_offset = -1;
uint64_t hv_offload_hdr_flag;

int
hv_offload_mbuf_register(void)
{
	static const struct rte_mbuf_dynfield field = {
		.name = "hv_offload_hdr",
		.size = sizeof(struct hv_offload_hdr),
		.align = __alignof__(struct hv_offload_hdr),
	};
	static const struct rte_mbuf_dynflag flag = {.name = "hv_offload_hdr_valid"};
	int off, bit;

	off = rte_mbuf_dynfield_register(&field);
	bit = rte_mbuf_dynflag_register(&flag);
	if (off < 0 || bit < 0)
		return -rte_errno;
	hv_offload_hdr_offset = off;
	hv_offload_hdr_flag = UINT64_C(1) << bit;
	return 0;
}

static const char *const drop_names[] = {[HV_OFFLOAD_DROP__NONE] = "none",
#define HV_X(id, name) [HV_OFFLOAD_DROP_##id] = name,
					 HV_OFFLOAD_DROP_REASONS(HV_X)
#undef HV_X
};

const char *
hv_offload_drop_name(enum hv_offload_drop reason)
{
	return (unsigned int)reason < HV_OFFLOAD_DROP__MAX ? drop_names[reason] : "unknown";
}

uint32_t
hv_offload_caps_from_virtio(uint64_t features)
{
	uint32_t caps = 0;

	/* the spec makes GUEST_TSO* depend on GUEST_CSUM: without it, none */
	if (!(features & RTE_BIT64(VIRTIO_NET_F_GUEST_CSUM)))
		return 0;
	caps |= HV_OFFLOAD_CAP_CSUM;
	if (features & RTE_BIT64(VIRTIO_NET_F_GUEST_TSO4))
		caps |= HV_OFFLOAD_CAP_TSO4;
	if (features & RTE_BIT64(VIRTIO_NET_F_GUEST_TSO6))
		caps |= HV_OFFLOAD_CAP_TSO6;
	if (features & RTE_BIT64(VIRTIO_NET_F_GUEST_ECN))
		caps |= HV_OFFLOAD_CAP_ECN;
	return caps;
}

uint32_t
hv_offload_caps_from_ethdev(uint64_t capa)
{
	uint32_t caps = HV_OFFLOAD_CAP_ETHDEV | HV_OFFLOAD_CAP_ECN;
	bool l4 = (capa & RTE_ETH_TX_OFFLOAD_TCP_CKSUM) && (capa & RTE_ETH_TX_OFFLOAD_UDP_CKSUM);
	bool ip = capa & RTE_ETH_TX_OFFLOAD_IPV4_CKSUM;

	/* segments and finished frames are chains when longer than one mbuf */
	if (!(capa & RTE_ETH_TX_OFFLOAD_MULTI_SEGS))
		return caps;
	if (ip)
		caps |= HV_OFFLOAD_CAP_IP_CSUM;
	if (l4)
		caps |= HV_OFFLOAD_CAP_CSUM;
	/* a NIC doing TSO rewrites every segment's IPv4 header checksum */
	if (l4 && ip && (capa & RTE_ETH_TX_OFFLOAD_TCP_TSO))
		caps |= HV_OFFLOAD_CAP_TSO4 | HV_OFFLOAD_CAP_TSO6;
	return caps;
}

uint64_t
hv_offload_ethdev_tx_offloads(uint64_t capa)
{
	return capa & (RTE_ETH_TX_OFFLOAD_MULTI_SEGS | RTE_ETH_TX_OFFLOAD_IPV4_CKSUM |
		       RTE_ETH_TX_OFFLOAD_TCP_CKSUM | RTE_ETH_TX_OFFLOAD_UDP_CKSUM |
		       RTE_ETH_TX_OFFLOAD_TCP_TSO);
}

int
offload_parse_l2(const uint8_t *b, uint32_t len, uint16_t *l2_len, uint16_t *ethertype)
{
	uint16_t off = RTE_ETHER_HDR_LEN;
	uint16_t type;

	if (len < RTE_ETHER_HDR_LEN)
		return -1;
	memcpy(&type, b + 12, 2);
	/* up to two tags (802.1ad outer, 802.1Q inner) */
	for (int i = 0; i < 2; i++) {
		if (type != rte_cpu_to_be_16(RTE_ETHER_TYPE_VLAN) &&
		    type != rte_cpu_to_be_16(RTE_ETHER_TYPE_QINQ))
			break;
		if (len < (uint32_t)off + 4)
			return -1;
		memcpy(&type, b + off + 2, 2);
		off += 4;
	}
	*l2_len = off;
	*ethertype = rte_be_to_cpu_16(type);
	return 0;
}

/*
 * Parse the IPv4/IPv6 + TCP headers of a GSO frame of @pkt_len bytes whose
 * first @len bytes (all of them, up to OFFLOAD_HDR_MAX) are in @b.
 */
static enum hv_offload_drop
parse_tcp(const uint8_t *b, uint32_t len, uint32_t pkt_len, bool ipv6, struct hv_offload_layout *lo)
{
	uint16_t l2, type, l3, l4;
	const struct rte_tcp_hdr *tcp;

	if (offload_parse_l2(b, len, &l2, &type) != 0)
		return HV_OFFLOAD_DROP_BAD_L3;
	if (!ipv6) {
		const struct rte_ipv4_hdr *ip = (const void *)(b + l2);

		if (type != RTE_ETHER_TYPE_IPV4 || len < (uint32_t)l2 + sizeof(*ip) ||
		    (ip->version_ihl >> 4) != 4)
			return HV_OFFLOAD_DROP_BAD_L3;
		l3 = (ip->version_ihl & 0xf) * 4;
		if (l3 < sizeof(*ip) || len < (uint32_t)l2 + l3 ||
		    /* a fragment cannot be segmented (MF or an offset) */
		    (rte_be_to_cpu_16(ip->fragment_offset) & 0x3fff) != 0 ||
		    rte_be_to_cpu_16(ip->total_length) != pkt_len - l2)
			return HV_OFFLOAD_DROP_BAD_L3;
		if (ip->next_proto_id != IPPROTO_TCP)
			return HV_OFFLOAD_DROP_BAD_L4;
	} else {
		const struct rte_ipv6_hdr *ip = (const void *)(b + l2);

		if (type != RTE_ETHER_TYPE_IPV6 || len < (uint32_t)l2 + sizeof(*ip) ||
		    (b[l2] >> 4) != 6)
			return HV_OFFLOAD_DROP_BAD_L3;
		l3 = sizeof(*ip);
		if (rte_be_to_cpu_16(ip->payload_len) != pkt_len - l2 - l3)
			return HV_OFFLOAD_DROP_BAD_L3;
		/* extension headers are not walked: TCP must follow directly */
		if (ip->proto != IPPROTO_TCP)
			return ip->proto == IPPROTO_UDP ? HV_OFFLOAD_DROP_BAD_L4
							: HV_OFFLOAD_DROP_BAD_L3;
	}
	if (len < (uint32_t)l2 + l3 + sizeof(*tcp))
		return HV_OFFLOAD_DROP_BAD_L4;
	tcp = (const void *)(b + l2 + l3);
	l4 = (tcp->data_off >> 4) * 4;
	if (l4 < sizeof(*tcp) || len < (uint32_t)l2 + l3 + l4)
		return HV_OFFLOAD_DROP_BAD_L4;
	lo->l2_len = l2;
	lo->l3_len = l3;
	lo->l4_len = l4;
	lo->ipv6 = ipv6;
	lo->payload_len = pkt_len - l2 - l3 - l4;
	return HV_OFFLOAD_DROP__NONE;
}

enum hv_offload_drop
hv_offload_check(const struct rte_mbuf *m, const struct hv_offload_hdr *h,
		 struct hv_offload_layout *lo)
{
	uint8_t gso = h->gso_type & ~VIRTIO_NET_HDR_GSO_ECN;
	uint8_t buf[OFFLOAD_HDR_MAX];
	struct hv_offload_layout tmp;
	const uint8_t *b;
	uint32_t len;
	enum hv_offload_drop rc;

	if (h->flags & ~VIRTIO_NET_HDR_F_NEEDS_CSUM)
		return HV_OFFLOAD_DROP_BAD_FLAGS;
	if ((gso != VIRTIO_NET_HDR_GSO_NONE && gso != VIRTIO_NET_HDR_GSO_TCPV4 &&
	     gso != VIRTIO_NET_HDR_GSO_TCPV6) ||
	    (gso == VIRTIO_NET_HDR_GSO_NONE && h->gso_type != VIRTIO_NET_HDR_GSO_NONE))
		return HV_OFFLOAD_DROP_BAD_GSO_TYPE;
	if (h->flags & VIRTIO_NET_HDR_F_NEEDS_CSUM) {
		/* the checksum field must lie inside the frame (cf. CVE-2024-11614) */
		if ((uint32_t)h->csum_start + h->csum_offset + 2 > m->pkt_len ||
		    h->csum_start < RTE_ETHER_HDR_LEN)
			return HV_OFFLOAD_DROP_CSUM_RANGE;
	}
	if (gso == VIRTIO_NET_HDR_GSO_NONE)
		return HV_OFFLOAD_DROP__NONE;
	if (!(h->flags & VIRTIO_NET_HDR_F_NEEDS_CSUM))
		return HV_OFFLOAD_DROP_GSO_NO_CSUM;
	if (h->gso_size < HV_OFFLOAD_GSO_SIZE_MIN)
		return HV_OFFLOAD_DROP_GSO_SIZE;
	len = RTE_MIN(m->pkt_len, (uint32_t)OFFLOAD_HDR_MAX);
	b = rte_pktmbuf_read(m, 0, len, buf);
	if (b == NULL)
		return HV_OFFLOAD_DROP_BAD_L3;
	if (lo == NULL)
		lo = &tmp;
	rc = parse_tcp(b, len, m->pkt_len, gso == VIRTIO_NET_HDR_GSO_TCPV6, lo);
	if (rc != HV_OFFLOAD_DROP__NONE)
		return rc;
	if (h->csum_start != lo->l2_len + lo->l3_len ||
	    h->csum_offset != offsetof(struct rte_tcp_hdr, cksum))
		return HV_OFFLOAD_DROP_CSUM_NOT_TCP;
	return HV_OFFLOAD_DROP__NONE;
}
