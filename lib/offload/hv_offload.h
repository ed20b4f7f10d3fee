/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * TCP segmentation and checksum offloads between ports.
 *
 * A guest sends TCP as up to 64 KiB with a partial checksum and describes it
 * in its virtio-net header (NEEDS_CSUM, gso_type, gso_size, csum_start,
 * csum_offset). The port driver keeps those fields with the frame as offload
 * metadata (hv_offload_mbuf_hdr()); this library
 *
 * - checks the metadata against the frame before anything trusts it
 *   (hv_offload_check()): every field the guest wrote is untrusted;
 * - turns a frame into the form one destination takes
 *   (hv_offload_prepare()): whole (pass-through to a guest that negotiated
 *   GUEST_TSO/GUEST_CSUM, or to a NIC through mbuf TX offload flags), with its
 *   checksum finished in software, or cut into MSS-sized TCP segments.
 *
 * The input frame is never changed while someone else holds a reference to it,
 * so a flooded frame reaches each destination in that destination's form.
 * Output segments are copies from a given mempool (no other allocation).
 */
#ifndef HV_OFFLOAD_H
#define HV_OFFLOAD_H

#include <stdbool.h>
#include <stdint.h>

#include <linux/virtio_net.h>

#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>
#include <rte_mempool.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The header's flags and gso_type values are the kernel's (VIRTIO_NET_HDR_F_NEEDS_CSUM,
 * VIRTIO_NET_HDR_GSO_*: <linux/virtio_net.h>). */

/**
 * Smallest gso_size accepted. A 64 KiB send cut at 1 byte would make 65 000
 * frames: free for the sender, costly for the switch and every receiver.
 */
#define HV_OFFLOAD_GSO_SIZE_MIN 256
/** Most segments one frame can become (64 KiB / HV_OFFLOAD_GSO_SIZE_MIN). */
#define HV_OFFLOAD_MAX_SEGS 256

/** Offload fields of a virtio-net header, kept with a frame in an mbuf dynfield. */
struct hv_offload_hdr {
	uint8_t flags;        /**< VIRTIO_NET_HDR_F_NEEDS_CSUM */
	uint8_t gso_type;     /**< VIRTIO_NET_HDR_GSO_* (| VIRTIO_NET_HDR_GSO_ECN) */
	uint16_t hdr_len;     /**< length of the headers: a hint only, never trusted */
	uint16_t gso_size;    /**< MSS */
	uint16_t csum_start;  /**< where checksumming starts */
	uint16_t csum_offset; /**< where the checksum goes, from csum_start */
};

/** Offset of the metadata dynfield (-1 before hv_offload_mbuf_register()). */
extern int hv_offload_hdr_offset;
/** ol_flags bit that says the metadata dynfield is valid (0 before registration). */
extern uint64_t hv_offload_hdr_flag;

/**
 * Register the metadata dynfield and its flag (idempotent; after rte_eal_init()).
 * @return 0, or a negative errno.
 */
int hv_offload_mbuf_register(void);

/** The offload metadata of @p m (valid only when hv_offload_mbuf_has_hdr()). */
static inline struct hv_offload_hdr *
hv_offload_mbuf_hdr(struct rte_mbuf *m)
{
	return RTE_MBUF_DYNFIELD(m, hv_offload_hdr_offset, struct hv_offload_hdr *);
}

/** Whether @p m carries offload metadata. */
static inline bool
hv_offload_mbuf_has_hdr(const struct rte_mbuf *m)
{
	return (m->ol_flags & hv_offload_hdr_flag) != 0 && hv_offload_hdr_flag != 0;
}

/** Why a frame's offload request was refused; the X-macro gives each a counter name. */
#define HV_OFFLOAD_DROP_REASONS(X)                                                                 \
	X(BAD_FLAGS, "bad_flags")       /* a flag other than NEEDS_CSUM */                         \
	X(BAD_GSO_TYPE, "bad_gso_type") /* not none/TCPv4/TCPv6, or ECN without GSO */             \
	X(CSUM_RANGE, "csum_range")     /* csum_start + csum_offset + 2 beyond the frame, \
					   or a start inside the Ethernet header */        \
	X(GSO_NO_CSUM, "gso_no_csum")   /* segmentation without a partial checksum */              \
	X(GSO_SIZE, "gso_size")         /* gso_size under HV_OFFLOAD_GSO_SIZE_MIN */               \
	X(BAD_L3, "bad_l3")             /* not the IPv4/IPv6 gso_type names, a fragment, \
					   an IPv6 extension header, lengths that lie */         \
	X(BAD_L4, "bad_l4")             /* not TCP, or a TCP header cut or too short */            \
	X(CSUM_NOT_TCP, "csum_not_tcp") /* GSO whose checksum is not the TCP checksum */           \
	X(NO_MBUF, "no_mbuf")           /* no mbuf for a segment or a private copy */

/** Drop reasons, indices into hv_offload_stats.drops (0 is no reason: success). */
enum hv_offload_drop {
	HV_OFFLOAD_DROP__NONE = 0,
#define HV_X(id, name) HV_OFFLOAD_DROP_##id,
	HV_OFFLOAD_DROP_REASONS(HV_X)
#undef HV_X
	HV_OFFLOAD_DROP__MAX
};

/** First valid drop reason, for loops over the counters. */
#define HV_OFFLOAD_DROP__FIRST (HV_OFFLOAD_DROP__NONE + 1)

/** Counter name of a drop reason ("gso_size", ...). */
const char *hv_offload_drop_name(enum hv_offload_drop reason);

/** Where the headers of a checked TCP segmentation request lie. */
struct hv_offload_layout {
	uint16_t l2_len;      /**< Ethernet header and VLAN tags */
	uint16_t l3_len;      /**< IPv4 header with options, or the IPv6 header */
	uint16_t l4_len;      /**< TCP header with options */
	bool ipv6;            /**< IPv6 (else IPv4) */
	uint32_t payload_len; /**< TCP payload bytes */
};

/**
 * Check the offload metadata @p h of frame @p m before anything uses it:
 * flags and gso_type known; csum_start + csum_offset + 2 within the frame;
 * for GSO a partial checksum, gso_size >= HV_OFFLOAD_GSO_SIZE_MIN, headers
 * that parse as the IPv4/IPv6 + TCP gso_type names, lengths that agree with
 * the frame, and a checksum that is TCP's. hdr_len is not used.
 * @param[out] lo where the headers lie (filled for GSO frames; may be NULL).
 * @return 0, or the reason to drop the frame.
 */
enum hv_offload_drop hv_offload_check(const struct rte_mbuf *m, const struct hv_offload_hdr *h,
				      struct hv_offload_layout *lo);

/** What a destination takes (HV_OFFLOAD_CAP_* bits). */
#define HV_OFFLOAD_CAP_CSUM (1u << 0)    /**< partial TCP/UDP checksums */
#define HV_OFFLOAD_CAP_TSO4 (1u << 1)    /**< whole TCPv4 GSO frames */
#define HV_OFFLOAD_CAP_TSO6 (1u << 2)    /**< whole TCPv6 GSO frames */
#define HV_OFFLOAD_CAP_ECN (1u << 3)     /**< GSO frames with the ECN bit */
#define HV_OFFLOAD_CAP_IP_CSUM (1u << 4) /**< NIC: IPv4 header checksums (ethdev only) */
#define HV_OFFLOAD_CAP_ETHDEV (1u << 5)  /**< a NIC: offloads go as mbuf ol_flags, not metadata */

/** Capabilities of a guest from its negotiated virtio features. */
uint32_t hv_offload_caps_from_virtio(uint64_t features);

/** Capabilities of an ethdev from its dev_info tx_offload_capa. */
uint32_t hv_offload_caps_from_ethdev(uint64_t tx_offload_capa);

/** The ethdev TX offloads to enable for hv_offload_caps_from_ethdev()'s result. */
uint64_t hv_offload_ethdev_tx_offloads(uint64_t tx_offload_capa);

/** Offload counters of one destination (or source, for drops). */
struct hv_offload_stats {
	uint64_t passthrough;   /**< GSO or partial-checksum frames delivered whole */
	uint64_t hw_offload;    /**< of those, handed to a NIC's offloads */
	uint64_t segmented;     /**< GSO frames cut in software */
	uint64_t segments;      /**< segments those became */
	uint64_t csum_finished; /**< frames and segments whose checksum was computed */
	uint64_t drops[HV_OFFLOAD_DROP__MAX]; /**< by reason */
};

/**
 * Turn frame @p m into what a destination with capabilities @p caps takes.
 * Consumes one reference to @p m. A frame without offload metadata comes
 * back as it is. @p m is changed in place only when no one else holds it;
 * otherwise the work is done on copies. The metadata must have passed
 * hv_offload_check() (it is checked again where segmentation relies on it).
 * @param mp  mempool for segments and private copies.
 * @param out at least HV_OFFLOAD_MAX_SEGS entries: the frames to send, in order.
 * @param st  counters to add to.
 * @return frames stored in @p out; 0 when the frame was dropped (counted in @p st).
 */
uint16_t hv_offload_prepare(struct rte_mbuf *m, uint32_t caps, struct rte_mempool *mp,
			    struct rte_mbuf **out, struct hv_offload_stats *st);

/**
 * Move the metadata's offsets after a VLAN tag was pushed (@p delta 4) or
 * popped (-4) in front of the headers of @p m.
 * @return false when the checksum would start inside the Ethernet header.
 */
bool hv_offload_mbuf_shift(struct rte_mbuf *m, int delta);

/**
 * Compute the one's-complement checksum from csum_start to the end of @p m
 * and store it at csum_start + csum_offset (what a device does for
 * NEEDS_CSUM). @p m must be writable (no other reference).
 * @return 0, or -1 when the range is outside the frame.
 */
int hv_offload_csum_finish(struct rte_mbuf *m, uint16_t csum_start, uint16_t csum_offset);

#ifdef __cplusplus
}
#endif

#endif
