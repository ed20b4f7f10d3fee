/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * vhost-user wire format and virtio split-ring layout.
 *
 * Everything here is read from an untrusted peer: the structures describe bytes,
 * they promise nothing about their values.
 */
#ifndef HV_VHOST_PROTO_H
#define HV_VHOST_PROTO_H

#include <stdint.h>

/* ---- virtio feature bits (virtio 1.2, 5.1.3 and 6) ---- */
#define VIRTIO_NET_F_CSUM 0
#define VIRTIO_NET_F_GUEST_CSUM 1
#define VIRTIO_NET_F_MAC 5
#define VIRTIO_NET_F_GUEST_TSO4 7
#define VIRTIO_NET_F_GUEST_TSO6 8
#define VIRTIO_NET_F_GUEST_ECN 9
#define VIRTIO_NET_F_HOST_TSO4 11
#define VIRTIO_NET_F_HOST_TSO6 12
#define VIRTIO_NET_F_HOST_ECN 13
#define VIRTIO_NET_F_MRG_RXBUF 15
#define VIRTIO_NET_F_STATUS 16
#define VIRTIO_NET_F_CTRL_VQ 17
#define VIRTIO_NET_F_MQ 22
#define VIRTIO_F_NOTIFY_ON_EMPTY 24
#define VIRTIO_F_ANY_LAYOUT 27
#define VIRTIO_RING_F_INDIRECT_DESC 28
#define VIRTIO_RING_F_EVENT_IDX 29
#define VHOST_USER_F_PROTOCOL_FEATURES 30
#define VIRTIO_F_VERSION_1 32

#define BIT64(n) (UINT64_C(1) << (n))

/* ---- vhost-user protocol feature bits ---- */
#define VHOST_USER_PROTOCOL_F_MQ 0
#define VHOST_USER_PROTOCOL_F_REPLY_ACK 3
#define VHOST_USER_PROTOCOL_F_CONFIGURE_MEM_SLOTS 15

/* ---- split ring ---- */
#define VRING_DESC_F_NEXT 1
#define VRING_DESC_F_WRITE 2
#define VRING_DESC_F_INDIRECT 4
#define VRING_USED_F_NO_NOTIFY 1
#define VRING_AVAIL_F_NO_INTERRUPT 1

struct vring_desc {
	uint64_t addr;
	uint32_t len;
	uint16_t flags;
	uint16_t next;
};

struct vring_avail {
	uint16_t flags;
	uint16_t idx;
	uint16_t ring[]; /* ring[num], then used_event */
};

struct vring_used_elem {
	uint32_t id;
	uint32_t len;
};

struct vring_used {
	uint16_t flags;
	uint16_t idx;
	struct vring_used_elem ring[]; /* ring[num], then avail_event */
};

/* The virtio-net header; 12 bytes with VERSION_1 or MRG_RXBUF, else 10. */
struct virtio_net_hdr {
	uint8_t flags;
	uint8_t gso_type;
	uint16_t hdr_len;
	uint16_t gso_size;
	uint16_t csum_start;
	uint16_t csum_offset;
	uint16_t num_buffers;
} __attribute__((packed));

#define VIRTIO_NET_HDR_F_NEEDS_CSUM 1
#define VIRTIO_NET_HDR_F_DATA_VALID 2
#define VIRTIO_NET_HDR_GSO_NONE 0
#define VIRTIO_NET_HDR_GSO_TCPV4 1
#define VIRTIO_NET_HDR_GSO_UDP 3
#define VIRTIO_NET_HDR_GSO_TCPV6 4
#define VIRTIO_NET_HDR_GSO_ECN 0x80

/* ---- vhost-user messages ---- */
#define VHOST_USER_VERSION 0x1
#define VHOST_USER_VERSION_MASK 0x3
#define VHOST_USER_REPLY_MASK 0x4
#define VHOST_USER_NEED_REPLY 0x8

/* Regions a SET_MEM_TABLE may carry (the spec's baseline); ADD_MEM_REG may go further. */
#define VHOST_MEMORY_BASELINE_NREGIONS 8
/* Slots we accept with CONFIGURE_MEM_SLOTS (GET_MAX_MEM_SLOTS answers this). */
#define HV_VHOST_MAX_MEM_SLOTS 32
/* The vring index field of KICK/CALL/ERR payloads, and the "no fd" flag beside it. */
#define VHOST_USER_VRING_IDX_MASK 0xff
#define VHOST_USER_VRING_NOFD_MASK 0x100

struct vhost_user_hdr {
	uint32_t request;
	uint32_t flags;
	uint32_t size;
};

struct vhost_vring_state {
	uint32_t index;
	uint32_t num;
};

struct vhost_vring_addr {
	uint32_t index;
	uint32_t flags;
	uint64_t desc_user_addr;
	uint64_t used_user_addr;
	uint64_t avail_user_addr;
	uint64_t log_guest_addr;
};

struct vhost_memory_region {
	uint64_t guest_phys_addr;
	uint64_t memory_size;
	uint64_t userspace_addr;
	uint64_t mmap_offset;
};

struct vhost_memory {
	uint32_t nregions;
	uint32_t padding;
	struct vhost_memory_region regions[VHOST_MEMORY_BASELINE_NREGIONS];
};

struct vhost_memory_single {
	uint64_t padding;
	struct vhost_memory_region region;
};

union vhost_user_payload {
	uint64_t u64;
	struct vhost_vring_state state;
	struct vhost_vring_addr addr;
	struct vhost_memory memory;
	struct vhost_memory_single mem_reg;
	uint8_t raw[512];
};

/* On the wire the payload follows the 12-byte header directly; here it is aligned. */
struct vhost_user_msg {
	struct vhost_user_hdr hdr;
	union vhost_user_payload payload;
};

/* How many fds a message may bring. */
enum vhost_msg_fds {
	FDS_NONE,  /* none */
	FDS_VRING, /* one, unless the payload's NOFD bit is set */
	FDS_MEM,   /* one per memory region */
	FDS_ONE,   /* exactly one */
	FDS_ANY,   /* 0 or 1; closed unused (REM_MEM_REG: QEMU sends one, others do not) */
};

/* When a reply goes back. */
enum vhost_msg_reply {
	REPLY_NEVER, /* only a REPLY_ACK ack when the frontend asked for one */
	REPLY_ALWAYS,
};

/* Payload size rule. */
enum vhost_msg_size {
	SIZE_NONE,  /* 0 bytes */
	SIZE_U64,   /* 8 */
	SIZE_STATE, /* sizeof vhost_vring_state */
	SIZE_ADDR,  /* sizeof vhost_vring_addr */
	SIZE_MEM,   /* 8 + nregions * 32 */
	SIZE_MEMREG, /* sizeof vhost_memory_single */
};

/*
 * The messages we handle: request name, number, payload size rule, fds, reply.
 * The handler of X is vhost_msg_<lowercase x>() in vhost_msg.c. Anything else is
 * refused with a logged reason (see vhost_msg_dispatch).
 */
#define VHOST_USER_MESSAGES(X)                                                      \
	X(GET_FEATURES, get_features, 1, SIZE_NONE, FDS_NONE, REPLY_ALWAYS)         \
	X(SET_FEATURES, set_features, 2, SIZE_U64, FDS_NONE, REPLY_NEVER)           \
	X(SET_OWNER, set_owner, 3, SIZE_NONE, FDS_NONE, REPLY_NEVER)                \
	X(RESET_OWNER, reset_owner, 4, SIZE_NONE, FDS_NONE, REPLY_NEVER)            \
	X(SET_MEM_TABLE, set_mem_table, 5, SIZE_MEM, FDS_MEM, REPLY_NEVER)          \
	X(SET_VRING_NUM, set_vring_num, 8, SIZE_STATE, FDS_NONE, REPLY_NEVER)       \
	X(SET_VRING_ADDR, set_vring_addr, 9, SIZE_ADDR, FDS_NONE, REPLY_NEVER)      \
	X(SET_VRING_BASE, set_vring_base, 10, SIZE_STATE, FDS_NONE, REPLY_NEVER)    \
	X(GET_VRING_BASE, get_vring_base, 11, SIZE_STATE, FDS_NONE, REPLY_ALWAYS)   \
	X(SET_VRING_KICK, set_vring_kick, 12, SIZE_U64, FDS_VRING, REPLY_NEVER)     \
	X(SET_VRING_CALL, set_vring_call, 13, SIZE_U64, FDS_VRING, REPLY_NEVER)     \
	X(SET_VRING_ERR, set_vring_err, 14, SIZE_U64, FDS_VRING, REPLY_NEVER)       \
	X(GET_PROTOCOL_FEATURES, get_protocol_features, 15, SIZE_NONE, FDS_NONE,    \
	  REPLY_ALWAYS)                                                             \
	X(SET_PROTOCOL_FEATURES, set_protocol_features, 16, SIZE_U64, FDS_NONE,     \
	  REPLY_NEVER)                                                              \
	X(GET_QUEUE_NUM, get_queue_num, 17, SIZE_NONE, FDS_NONE, REPLY_ALWAYS)      \
	X(SET_VRING_ENABLE, set_vring_enable, 18, SIZE_STATE, FDS_NONE, REPLY_NEVER) \
	X(GET_MAX_MEM_SLOTS, get_max_mem_slots, 36, SIZE_NONE, FDS_NONE,            \
	  REPLY_ALWAYS)                                                             \
	X(ADD_MEM_REG, add_mem_reg, 37, SIZE_MEMREG, FDS_ONE, REPLY_NEVER)          \
	X(REM_MEM_REG, rem_mem_reg, 38, SIZE_MEMREG, FDS_ANY, REPLY_NEVER)

enum vhost_user_request {
#define X(name, fn, num, size, fds, reply) VHOST_USER_##name = num,
	VHOST_USER_MESSAGES(X)
#undef X
};

#endif
