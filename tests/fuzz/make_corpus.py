#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Write the seed corpora of the fuzz targets (tests/fuzz/corpus/{msg,vring,offload}).

Input formats are described at the top of fuzz_msg.c, fuzz_vring.c and fuzz_offload.c.
Usage: make_corpus.py [OUTDIR]   (default: the corpus/ folder beside this script)
"""
import os
import struct
import sys

# ---- vhost-user messages (fuzz_msg) ----

GET_FEATURES = 1
SET_FEATURES = 2
SET_OWNER = 3
SET_MEM_TABLE = 5
SET_LOG_BASE = 6
SET_LOG_FD = 7
SET_VRING_NUM = 8
SET_VRING_ADDR = 9
SET_VRING_BASE = 10
GET_VRING_BASE = 11
SET_VRING_KICK = 12
SET_VRING_CALL = 13
SET_VRING_ERR = 14
GET_PROTOCOL_FEATURES = 15
SET_PROTOCOL_FEATURES = 16
GET_QUEUE_NUM = 17
SET_VRING_ENABLE = 18
GET_MAX_MEM_SLOTS = 36
ADD_MEM_REG = 37
REM_MEM_REG = 38

VERSION = 0x1
NEED_REPLY = 0x8
NOFD = 0x100

F_PROTOCOL_FEATURES = 1 << 30
FEATURES_DEFAULT = (1 << 32) | (1 << 15) | (1 << 22) | (1 << 28) | (1 << 29)
PROTO_MQ, PROTO_REPLY_ACK, PROTO_MEM_SLOTS = 1 << 0, 1 << 3, 1 << 15
PROTO_LOG_SHMFD = 1 << 1
F_LOG_ALL = 1 << 26

MEM_UA = 0x7F0000000000
MEM_SIZE = 0x10000


def msg(req, payload=b"", ctl=0, flags=VERSION):
    """One record: ctl byte (0: the right fds), header, payload."""
    return bytes([ctl]) + struct.pack("<III", req, flags, len(payload)) + payload


def u64(v):
    return struct.pack("<Q", v)


def state(index, num):
    return struct.pack("<II", index, num)


def vring_addr(index, desc, used, avail):
    return struct.pack("<IIQQQQ", index, 0, desc, used, avail, 0)


def region(gpa, size, ua, off=0):
    return struct.pack("<QQQQ", gpa, size, ua, off)


def mem_table(regions):
    return struct.pack("<II", len(regions), 0) + b"".join(regions)


def mem_reg(r):
    return u64(0) + r


def stream(*records, queue_pairs=1):
    return bytes([(queue_pairs - 1) & 7]) + b"".join(records)


def negotiate():
    return [
        msg(SET_OWNER),
        msg(GET_FEATURES),
        msg(SET_FEATURES, u64(FEATURES_DEFAULT | F_PROTOCOL_FEATURES)),
        msg(GET_PROTOCOL_FEATURES),
        msg(SET_PROTOCOL_FEATURES, u64(PROTO_MQ | PROTO_REPLY_ACK | PROTO_MEM_SLOTS)),
        msg(GET_QUEUE_NUM),
    ]


def ring(index, base_ua):
    """NUM 256, ADDR (desc, avail, used in one page each), BASE, CALL, KICK, ENABLE."""
    return [
        msg(SET_VRING_NUM, state(index, 256)),
        msg(SET_VRING_ADDR, vring_addr(index, base_ua, base_ua + 0x2000, base_ua + 0x1000)),
        msg(SET_VRING_BASE, state(index, 0)),
        msg(SET_VRING_CALL, u64(index)),
        msg(SET_VRING_ERR, u64(index | NOFD)),
        msg(SET_VRING_KICK, u64(index)),
        msg(SET_VRING_ENABLE, state(index, 1), flags=VERSION | NEED_REPLY),
    ]


def msg_seeds():
    one = mem_table([region(0, MEM_SIZE, MEM_UA)])
    two = mem_table([region(0, MEM_SIZE, MEM_UA),
                     region(0x100000, MEM_SIZE, MEM_UA + 0x100000)])
    return {
        "get_features": stream(msg(GET_FEATURES)),
        "set_features": stream(*negotiate()),
        "mem_table": stream(*negotiate(), msg(SET_MEM_TABLE, two)),
        "ring_setup": stream(*negotiate(), msg(SET_MEM_TABLE, one),
                             *ring(0, MEM_UA), *ring(1, MEM_UA + 0x4000),
                             msg(GET_VRING_BASE, state(0, 0))),
        "mem_reg": stream(*negotiate(), msg(GET_MAX_MEM_SLOTS),
                          msg(ADD_MEM_REG, mem_reg(region(0, MEM_SIZE, MEM_UA))),
                          msg(ADD_MEM_REG, mem_reg(region(0x100000, MEM_SIZE,
                                                          MEM_UA + 0x100000))),
                          *ring(0, MEM_UA),
                          msg(REM_MEM_REG, mem_reg(region(0, MEM_SIZE, MEM_UA)))),
        "unknown_ack": stream(*negotiate(), msg(99, flags=VERSION | NEED_REPLY),
                              msg(SET_OWNER, flags=VERSION | NEED_REPLY)),
        # live migration: the log shared, logging on, the rings stopped
        "log_base": stream(*negotiate(),
                           msg(SET_PROTOCOL_FEATURES, u64(PROTO_REPLY_ACK | PROTO_LOG_SHMFD)),
                           msg(SET_MEM_TABLE, one), *ring(0, MEM_UA),
                           msg(SET_LOG_BASE, struct.pack("<QQ", 0x1000, 0)),
                           msg(SET_FEATURES, u64(FEATURES_DEFAULT | F_PROTOCOL_FEATURES |
                                                 F_LOG_ALL)),
                           msg(SET_LOG_BASE, struct.pack("<QQ", 0x800, 0x1000)),
                           msg(SET_LOG_FD, ctl=8),
                           msg(GET_VRING_BASE, state(0, 0))),
        "log_base_beyond_file": stream(*negotiate(),
                                       msg(SET_PROTOCOL_FEATURES, u64(PROTO_LOG_SHMFD)),
                                       msg(SET_LOG_BASE, struct.pack("<QQ", 0x1000, 0x100000),
                                           ctl=0x10)),
        "two_queue_pairs": stream(*negotiate(), msg(SET_MEM_TABLE, one),
                                  *ring(2, MEM_UA), *ring(3, MEM_UA + 0x4000),
                                  queue_pairs=2),
    }

# ---- descriptor chains (fuzz_vring) ----


F_NEXT, F_WRITE, F_INDIRECT = 1, 2, 4
REGION = 0x8000
R0_GPA = 0x1000
R1_GPA = {0: R0_GPA + REGION, 1: R0_GPA + 4 * REGION}  # by layout (flags bits 2-3)


def desc(addr, length, flags=0, nxt=0):
    return struct.pack("<QIHH", addr, length, flags, nxt)


def vring_input(exp, head, flags, image):
    return struct.pack("<BHB", exp, head, flags) + bytes(image)


def put(image, off, data):
    if len(image) < off + len(data):
        image.extend(bytes(off + len(data) - len(image)))
    image[off:off + len(data)] = data


def vring_seeds():
    seeds = {}
    img = bytearray()
    put(img, 0, desc(R0_GPA + 0x1000, 64))
    seeds["single"] = vring_input(4, 0, 0, img)

    # writable chain 1 -> 5 -> 9, the last spanning regions 0 and 1 (adjacent)
    img = bytearray()
    put(img, 1 * 16, desc(R0_GPA + 0x1000, 100, F_WRITE | F_NEXT, 5))
    put(img, 5 * 16, desc(R1_GPA[0] + 0x200, 200, F_WRITE | F_NEXT, 9))
    put(img, 9 * 16, desc(R1_GPA[0] - 0x10, 0x20, F_WRITE))
    seeds["chain"] = vring_input(4, 1, 1, img)

    # indirect table of 4 entries at the start of region 1, after a gap
    img = bytearray()
    put(img, 2 * 16, desc(R1_GPA[1], 4 * 16, F_INDIRECT))
    for i in range(4):
        put(img, REGION + i * 16,
            desc(R0_GPA + 0x1000 + i * 0x100, 0x40, F_NEXT if i < 3 else 0, i + 1))
    seeds["indirect"] = vring_input(4, 2, 2 | (1 << 2), img)
    return seeds


# ---- packed rings (fuzz_packed) ----

P_AVAIL, P_USED = 1 << 7, 1 << 15


def pdesc(addr, length, buf_id, flags):
    return struct.pack("<QIHH", addr, length, buf_id, flags)


def packed_input(size, pos, flags, image):
    return struct.pack("<HHB", size - 1, pos, flags) + bytes(image)


def packed_seeds():
    seeds = {}
    avail1 = P_AVAIL  # available at wrap counter 1
    img = bytearray()
    put(img, 0, pdesc(R0_GPA + 0x1000, 64, 0, avail1))
    seeds["single"] = packed_input(16, 0, 4, img)

    # writable chain across the end of a 16-slot ring: slots 15, 0, 1 (wrap flips)
    img = bytearray()
    put(img, 15 * 16, pdesc(R0_GPA + 0x1000, 100, 0, avail1 | F_WRITE | F_NEXT))
    put(img, 0 * 16, pdesc(R1_GPA[0] + 0x200, 200, 0, P_USED | F_WRITE | F_NEXT))
    put(img, 1 * 16, pdesc(R1_GPA[0] - 0x10, 0x20, 3, P_USED | F_WRITE))
    seeds["chain_wrap"] = packed_input(16, 15, 1 | 4, img)

    # indirect table of 4 entries at the start of region 1, after a gap
    img = bytearray()
    put(img, 2 * 16, pdesc(R1_GPA[1], 4 * 16, 5, avail1 | F_INDIRECT))
    for i in range(4):
        put(img, REGION + i * 16, pdesc(R0_GPA + 0x1000 + i * 0x100, 0x40, 0, 0))
    seeds["indirect"] = packed_input(16, 2, 2 | 4 | (1 << 3), img)

    # a burst of 8 single descriptors at wrap counter 0 (a 7-slot ring: any size)
    img = bytearray()
    for i in range(7):
        put(img, i * 16, pdesc(R0_GPA + 0x2000 + i * 0x100, 60, i, P_USED))
    seeds["burst_wrap0"] = packed_input(7, 0, 0, img)
    return seeds


# ---- from-guest offload requests (fuzz_offload) ----

def ip_csum(b):
    s = sum(int.from_bytes(b[i:i + 2], "big") for i in range(0, len(b), 2))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF


def tcp_frame(v6=False, payload=3000, tcp_opts=12, vlan=False):
    eth = bytes.fromhex("020000000002020000000001")
    if vlan:
        eth += struct.pack(">HH", 0x8100, 7)
    eth += struct.pack(">H", 0x86DD if v6 else 0x0800)
    tcp = struct.pack(">HHIIBBHHH", 40000, 5201, 1000, 1, (5 + tcp_opts // 4) << 4, 0x18,
                      501, 0, 0) + b"\x01" * tcp_opts
    data = bytes(i & 0xFF for i in range(payload))
    if v6:
        ip = struct.pack(">IHBB", 0x60000000, len(tcp) + payload, 6, 64) + bytes(range(32))
    else:
        ip = bytearray(struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp) + payload, 1,
                                   0x4000, 64, 6, 0, bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2])))
        ip[10:12] = struct.pack(">H", ip_csum(ip))
        ip = bytes(ip)
    return eth + ip + tcp + data, len(eth) + len(ip)


def offload_input(frame, flags, gso_type, gso_size, csum_start, csum_offset, caps, piece=0):
    hdr = struct.pack("<BBHHHH", flags, gso_type, 0, gso_size, csum_start, csum_offset)
    return hdr + bytes([caps, piece]) + frame


def offload_seeds():
    seeds = {}
    f, l4 = tcp_frame()
    seeds["tso4_segment"] = offload_input(f, 1, 1, 1448, l4, 16, 0)
    seeds["tso4_partial"] = offload_input(f, 1, 1, 1000, l4, 16, 1, 13)
    seeds["tso4_whole"] = offload_input(f, 1, 1, 1448, l4, 16, 3)
    seeds["tso4_nic"] = offload_input(f, 1, 0x81, 1448, l4, 16, 0x3F)
    f, l4 = tcp_frame(v6=True, vlan=True, payload=5001)
    seeds["tso6_vlan_ecn"] = offload_input(f, 1, 0x84, 777, l4, 16, 0, 5)
    f, l4 = tcp_frame(payload=100)
    seeds["csum_finish"] = offload_input(f, 1, 0, 0, l4, 16, 0)
    seeds["csum_nic"] = offload_input(f, 1, 0, 0, l4, 16, 0x21)
    return seeds


# fuzz_vmm: 12-byte operations [kind][width][offset le16][value le64] on the
# VMM's guest-facing registers (input format: top of fuzz_vmm.c).
CFG_R, CFG_W, BAR_R, BAR_W = 0, 1, 2, 3
BAR0 = 0xC0000000
MSIX = 0x40  # MSI-X capability offset


def op(kind, off, width, val=0):
    # width: config ops take it as the length (0-8); BAR ops as length - 1
    w = width if kind < 2 else width - 1
    return struct.pack("<BBHQ", kind, w, off, val)


def cr(off, n=4): return op(CFG_R, off, n)
def cw(off, v, n=4): return op(CFG_W, off, n, v)
def br(off, n=4): return op(BAR_R, off, n)
def bw(off, v, n=4): return op(BAR_W, off, n, v)


def vmm_seeds():
    s = {}
    # Linux's BAR sizing: save, all ones, read the size, restore; then a move
    s["bar_sizing"] = (cr(0x10) + cw(0x04, 0x0000, 2) + cw(0x10, 0xFFFFFFFF) + cr(0x10)
                       + cw(0x10, BAR0) + cw(0x04, 0x0006, 2)
                       + cw(0x10, 0xFFFFFFFF) + cr(0x10) + cw(0x10, 0xD0000000)
                       + cw(0x12, 0xFFFF, 2) + cw(0x10, 0xFFFF, 2) + cw(0x12, 0xE000, 2)
                       + cw(0x10, 0, 2) + cw(0x14, 0xFFFFFFFF) + cr(0x14))
    # walk the capability list, try to overwrite every capability dword
    walk = cr(0x34, 1)
    for c in range(0x40, 0x90, 4):
        walk += cr(c) + cw(c, 0xFFFFFFFF) + cw(c, 0) + cr(c, 1) + cr(c + 1, 1) + cr(c + 2, 2)
    s["cap_walk"] = walk + cr(0x100) + cw(0x1FE, 1, 4) + cr(0, 8) + cw(0x0E, 0, 4)
    # the virtio 1.x driver sequence (virtio 1.2, 3.1.1)
    drv = bw(0x14, 0, 1) + bw(0x14, 1, 1) + bw(0x14, 3, 1)
    drv += bw(0x00, 0) + br(0x04) + bw(0x00, 1) + br(0x04)
    drv += bw(0x08, 0) + bw(0x0C, 0x21) + bw(0x08, 1) + bw(0x0C, 1)
    drv += bw(0x14, 0x0B, 1) + br(0x14, 1) + br(0x12, 2)
    for q in range(2):
        base = 0x10000 * (q + 1)
        drv += (bw(0x16, q, 2) + br(0x18, 2) + bw(0x18, 256, 2) + bw(0x1A, q, 2)
                + br(0x1A, 2) + bw(0x20, base) + bw(0x24, 0) + bw(0x28, base + 0x1000)
                + bw(0x2C, 0) + bw(0x30, base + 0x2000) + bw(0x34, 0) + br(0x1E, 2)
                + bw(0x1C, 1, 2))
    drv += bw(0x10, 2, 2) + bw(0x14, 0x0F, 1) + br(0x14, 1) + br(0x15, 1)
    drv += bw(0x3000, 0, 2) + bw(0x3004, 1, 2) + br(0x1000, 1)
    s["virtio_init"] = drv + bw(0x14, 0, 1) + br(0x14, 1)
    # MSI-X: program three vectors, enable, mask, read the PBA
    mx = cw(MSIX + 2, 0x8000, 2) + cr(MSIX, 4) + cr(MSIX + 4) + cr(MSIX + 8)
    for v in range(3):
        t = 0x4000 + 16 * v
        mx += bw(t, 0xFEE00000) + bw(t + 4, 0) + bw(t + 8, 0x40 + v) + bw(t + 12, 0)
    mx += bw(0x4000, 0xFEE01000 | (0x51 << 32), 8) + br(0x4000, 8) + br(0x4008, 8)
    mx += cw(MSIX + 2, 0xC000, 2) + br(0x5000, 8) + br(0x5000, 4) + br(0x5004, 4)
    mx += bw(0x400C, 1) + cw(MSIX + 2, 0x8000, 2) + br(0x5000, 8)
    mx += bw(0x16, 0, 2) + bw(0x1A, 5, 2) + bw(0x10, 9, 2) + bw(0x4030, 1) + br(0x4030)
    s["msix"] = mx + cw(MSIX + 2, 0xFFFF, 2) + cr(MSIX + 2, 2)
    # device config: every byte, every width, and past it
    dc = b"".join(br(0x2000 + o, n) for n in (1, 2, 4, 8) for o in range(0, 16, n))
    s["device_config"] = dc + bw(0x2000, 0xFFFFFFFF) + br(0x2000, 4) + br(0x7FF8, 8)
    # common config: every field read, odd widths and offsets
    cc = b"".join(br(o, n) for n in (1, 2, 4, 8) for o in range(0, 0x40, n))
    s["common_config"] = cc + bw(0x16, 7, 2) + br(0x18, 2) + bw(0x18, 3, 2) + bw(0x15, 9, 1)
    return s


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "corpus")
    for sub, seeds in (("msg", msg_seeds()), ("vring", vring_seeds()),
                      ("packed", packed_seeds()),
                       ("offload", offload_seeds()), ("vmm", vmm_seeds())):
        d = os.path.join(out, sub)
        os.makedirs(d, exist_ok=True)
        for name, data in seeds.items():
            with open(os.path.join(d, "seed_" + name), "wb") as f:
                f.write(data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
