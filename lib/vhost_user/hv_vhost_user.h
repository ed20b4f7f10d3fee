/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The vhost-user wire format (QEMU's docs/interop/vhost-user.rst), defined
 * once for the backend (drivers/vhost), the VMM's frontend (lib/vmm) and the
 * tests' raw frontend. The virtio side (feature bits, split ring, net header)
 * is the kernel's UAPI, included here; only what the UAPI lacks is defined.
 *
 * Everything here is read from an untrusted peer: the structures describe
 * bytes, they promise nothing about their values. Header only, no DPDK.
 *
 * Not to be combined with <linux/vhost.h>: the kernel's vhost ioctl structs
 * share some names (vhost_vring_state, vhost_memory_region) with these.
 */
#ifndef HV_VHOST_USER_H
#define HV_VHOST_USER_H

#include <stddef.h>
#include <stdint.h>

#include <linux/virtio_config.h>
#include <linux/virtio_net.h>
#include <linux/virtio_ring.h>

/* ---- feature bits the UAPI does not have (vhost-user only) ---- */
#define VHOST_USER_F_PROTOCOL_FEATURES 30
/* The backend can log its writes to guest memory (live migration); <linux/vhost_types.h>'s. */
#define VHOST_USER_F_LOG_ALL 26

/* ---- vhost-user protocol feature bits ---- */
#define VHOST_USER_PROTOCOL_F_MQ 0
#define VHOST_USER_PROTOCOL_F_LOG_SHMFD 1
#define VHOST_USER_PROTOCOL_F_REPLY_ACK 3
#define VHOST_USER_PROTOCOL_F_CONFIGURE_MEM_SLOTS 15

/* ---- message header flags ---- */
#define VHOST_USER_VERSION 0x1
#define VHOST_USER_VERSION_MASK 0x3
#define VHOST_USER_REPLY_MASK 0x4
#define VHOST_USER_NEED_REPLY 0x8

/* SET_VRING_ADDR flags: log_guest_addr is valid (the used ring is logged). */
#define VHOST_VRING_F_LOG 0

/* Regions a SET_MEM_TABLE may carry (the spec's baseline); ADD_MEM_REG may go further. */
#define VHOST_MEMORY_BASELINE_NREGIONS 8
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

/* SET_LOG_BASE: the dirty log is @mmap_size bytes at @mmap_offset of the message's fd. */
struct vhost_user_log {
	uint64_t mmap_size;
	uint64_t mmap_offset;
};

union vhost_user_payload {
	uint64_t u64;
	struct vhost_vring_state state;
	struct vhost_vring_addr addr;
	struct vhost_memory memory;
	struct vhost_memory_single mem_reg;
	struct vhost_user_log log;
	uint8_t raw[512];
};

/*
 * On the wire the payload follows the 12-byte header directly; here it is
 * aligned, so a message goes out as two pieces (header, then hdr.size bytes
 * of payload) and comes in the same way.
 */
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
	SIZE_NONE,   /* 0 bytes */
	SIZE_U64,    /* 8 */
	SIZE_STATE,  /* sizeof vhost_vring_state */
	SIZE_ADDR,   /* sizeof vhost_vring_addr */
	SIZE_MEM,    /* 8 + nregions * 32 */
	SIZE_MEMREG, /* sizeof vhost_memory_single */
	SIZE_LOG,    /* sizeof vhost_user_log */
};

/*
 * The messages hvswitch speaks: request name, handler name, number, payload
 * size rule, fds, reply. The backend's handler of X is vhost_msg_<fn>() in
 * drivers/vhost/vhost_msg.c; it refuses anything else with a logged reason.
 */
#define VHOST_USER_MESSAGES(X)                                                                     \
	X(GET_FEATURES, get_features, 1, SIZE_NONE, FDS_NONE, REPLY_ALWAYS)                        \
	X(SET_FEATURES, set_features, 2, SIZE_U64, FDS_NONE, REPLY_NEVER)                          \
	X(SET_OWNER, set_owner, 3, SIZE_NONE, FDS_NONE, REPLY_NEVER)                               \
	X(RESET_OWNER, reset_owner, 4, SIZE_NONE, FDS_NONE, REPLY_NEVER)                           \
	X(SET_MEM_TABLE, set_mem_table, 5, SIZE_MEM, FDS_MEM, REPLY_NEVER)                         \
	X(SET_LOG_BASE, set_log_base, 6, SIZE_LOG, FDS_ONE, REPLY_ALWAYS)                          \
	X(SET_LOG_FD, set_log_fd, 7, SIZE_NONE, FDS_ONE, REPLY_NEVER)                              \
	X(SET_VRING_NUM, set_vring_num, 8, SIZE_STATE, FDS_NONE, REPLY_NEVER)                      \
	X(SET_VRING_ADDR, set_vring_addr, 9, SIZE_ADDR, FDS_NONE, REPLY_NEVER)                     \
	X(SET_VRING_BASE, set_vring_base, 10, SIZE_STATE, FDS_NONE, REPLY_NEVER)                   \
	X(GET_VRING_BASE, get_vring_base, 11, SIZE_STATE, FDS_NONE, REPLY_ALWAYS)                  \
	X(SET_VRING_KICK, set_vring_kick, 12, SIZE_U64, FDS_VRING, REPLY_NEVER)                    \
	X(SET_VRING_CALL, set_vring_call, 13, SIZE_U64, FDS_VRING, REPLY_NEVER)                    \
	X(SET_VRING_ERR, set_vring_err, 14, SIZE_U64, FDS_VRING, REPLY_NEVER)                      \
	X(GET_PROTOCOL_FEATURES, get_protocol_features, 15, SIZE_NONE, FDS_NONE, REPLY_ALWAYS)     \
	X(SET_PROTOCOL_FEATURES, set_protocol_features, 16, SIZE_U64, FDS_NONE, REPLY_NEVER)       \
	X(GET_QUEUE_NUM, get_queue_num, 17, SIZE_NONE, FDS_NONE, REPLY_ALWAYS)                     \
	X(SET_VRING_ENABLE, set_vring_enable, 18, SIZE_STATE, FDS_NONE, REPLY_NEVER)               \
	X(GET_MAX_MEM_SLOTS, get_max_mem_slots, 36, SIZE_NONE, FDS_NONE, REPLY_ALWAYS)             \
	X(ADD_MEM_REG, add_mem_reg, 37, SIZE_MEMREG, FDS_ONE, REPLY_NEVER)                         \
	X(REM_MEM_REG, rem_mem_reg, 38, SIZE_MEMREG, FDS_ANY, REPLY_NEVER)

enum vhost_user_request {
#define X(name, fn, num, size, fds, reply) VHOST_USER_##name = num,
	VHOST_USER_MESSAGES(X)
#undef X
};

/* The layouts are the wire's and the ring's: any change here is a bug. */
_Static_assert(sizeof(struct vhost_user_hdr) == 12, "vhost-user header");
_Static_assert(sizeof(struct vhost_vring_state) == 8, "vring state");
_Static_assert(sizeof(struct vhost_vring_addr) == 40, "vring addr");
_Static_assert(sizeof(struct vhost_memory_region) == 32, "memory region");
_Static_assert(offsetof(struct vhost_memory, regions) == 8, "memory table");
_Static_assert(sizeof(struct vhost_memory_single) == 40, "single region");
_Static_assert(sizeof(struct vhost_user_log) == 16, "log");
_Static_assert(offsetof(struct vhost_user_msg, payload) == 16, "payload offset");
_Static_assert(sizeof(struct vring_desc) == 16 && offsetof(struct vring_desc, len) == 8 &&
		       offsetof(struct vring_desc, flags) == 12 &&
		       offsetof(struct vring_desc, next) == 14,
	       "vring_desc");
_Static_assert(sizeof(struct vring_avail) == 4 && offsetof(struct vring_avail, ring) == 4,
	       "vring_avail");
_Static_assert(sizeof(struct vring_used_elem) == 8, "vring_used_elem");
_Static_assert(sizeof(struct vring_used) == 4 && offsetof(struct vring_used, ring) == 4,
	       "vring_used");
/* 10 bytes without VERSION_1 or MRG_RXBUF, else 12 (num_buffers). */
_Static_assert(sizeof(struct virtio_net_hdr) == 10, "virtio_net_hdr");
_Static_assert(sizeof(struct virtio_net_hdr_v1) == 12 &&
		       offsetof(struct virtio_net_hdr_v1, csum_start) == 6 &&
		       offsetof(struct virtio_net_hdr_v1, num_buffers) == 10,
	       "virtio_net_hdr_v1");

#endif
