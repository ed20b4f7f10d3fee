#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Independent check of lib/offload's output with scapy (Debian python3-scapy).

Reads a case file written by test_offload:
    case <name> mss=<n> mode=<full|partial|whole>
    in <hex of the frame the guest sent>
    out <hex> <flags> <gso_type> <csum_start> <csum_offset>   (one per segment)
and checks each output frame: IPv4 header checksum and total length (or the
IPv6 payload length), IPv4 id incrementing, TCP sequence numbers, FIN/PSH on
the last segment only, CWR on the first only, ECN and options kept, segment
sizes, the TCP checksum (finished here first with scapy's own routine for
partial-checksum segments), and the payload concatenated back byte-exact.
Exit status 0 when every case holds.
"""
import sys

from scapy.layers.inet import IP, TCP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Ether
from scapy.packet import Raw
from scapy.utils import checksum

errors = []


def fail(case, msg):
    errors.append(f"{case}: {msg}")


def l3(p):
    return p[IP] if IP in p else p[IPv6]


def tcp_ok(raw_frame):
    """scapy recomputes the TCP checksum; it must equal what is there."""
    p = Ether(raw_frame)
    have = p[TCP].chksum
    q = p.copy()
    del q[TCP].chksum
    return Ether(bytes(q))[TCP].chksum == have


def finish(raw_frame, start, offset):
    """What a device does for NEEDS_CSUM, with scapy's checksum()."""
    b = bytearray(raw_frame)
    c = checksum(bytes(b[start:]))
    b[start + offset:start + offset + 2] = c.to_bytes(2, "big")
    return bytes(b)


def check_case(name, mss, mode, inp, outs):
    src = Ether(inp)
    t0 = src[TCP]
    payload = bytes(t0.payload)
    if mode == "whole":
        if len(outs) != 1 or outs[0][0] != inp:
            fail(name, "pass-through changed the frame")
        return
    if mode == "finish":
        if len(outs) != 1:
            fail(name, "finishing made %d frames" % len(outs))
            return
        if not tcp_ok(outs[0][0]):
            fail(name, "finished TCP checksum wrong")
        if bytes(Ether(outs[0][0])[TCP].payload) != payload:
            fail(name, "finished frame payload differs")
        return
    want = max(1, -(-len(payload) // mss))
    if len(outs) != want:
        fail(name, f"{len(outs)} segments, want {want}")
    got = b""
    for k, (raw_frame, flags, gso, cstart, coff) in enumerate(outs):
        last = k == len(outs) - 1
        if mode == "partial":
            if flags != 1 or gso != 0:
                fail(name, f"seg {k}: metadata flags={flags} gso={gso}")
            raw_frame = finish(raw_frame, cstart, coff)
        p = Ether(raw_frame)
        if TCP not in p:
            fail(name, f"seg {k}: no TCP")
            continue
        t = p[TCP]
        seg_payload = bytes(t.payload)
        got += seg_payload
        if not last and len(seg_payload) != mss:
            fail(name, f"seg {k}: {len(seg_payload)} bytes, want {mss}")
        if t.seq != (t0.seq + k * mss) & 0xFFFFFFFF:
            fail(name, f"seg {k}: seq {t.seq}")
        for flag in "FP":
            if (flag in str(t.flags)) != (last and flag in str(t0.flags)):
                fail(name, f"seg {k}: flag {flag} wrong ({t.flags})")
        if ("C" in str(t.flags)) != (k == 0 and "C" in str(t0.flags)):
            fail(name, f"seg {k}: CWR wrong ({t.flags})")
        if ("E" in str(t.flags)) != ("E" in str(t0.flags)):
            fail(name, f"seg {k}: ECE changed")
        if t.options != t0.options or t.ack != t0.ack or t.window != t0.window:
            fail(name, f"seg {k}: TCP options/ack/window changed")
        if not tcp_ok(raw_frame):
            fail(name, f"seg {k}: TCP checksum wrong")
        if IP in p:
            ip = p[IP]
            if ip.len != len(bytes(ip)):
                fail(name, f"seg {k}: IPv4 total length {ip.len}")
            q = p.copy()
            del q[IP].chksum
            if Ether(bytes(q))[IP].chksum != ip.chksum:
                fail(name, f"seg {k}: IPv4 header checksum wrong")
            if ip.id != (src[IP].id + k) & 0xFFFF:
                fail(name, f"seg {k}: IPv4 id {ip.id}")
            if ip.tos != src[IP].tos or ip.options != src[IP].options:
                fail(name, f"seg {k}: IPv4 tos/options changed")
        else:
            ip = p[IPv6]
            if ip.plen != len(bytes(ip.payload)):
                fail(name, f"seg {k}: IPv6 payload length {ip.plen}")
            if ip.tc != src[IPv6].tc:
                fail(name, f"seg {k}: IPv6 traffic class changed")
        if p.src != src.src or p.dst != src.dst:
            fail(name, f"seg {k}: MAC addresses changed")
    if got != payload:
        fail(name, f"payload differs ({len(got)} vs {len(payload)} bytes)")


def main():
    cases = []
    with open(sys.argv[1]) as f:
        for line in f:
            w = line.split()
            if not w:
                continue
            if w[0] == "case":
                opts = dict(x.split("=") for x in w[2:])
                cases.append([w[1], int(opts["mss"]), opts["mode"], None, []])
            elif w[0] == "in":
                cases[-1][3] = bytes.fromhex(w[1])
            elif w[0] == "out":
                cases[-1][4].append((bytes.fromhex(w[1]),) + tuple(int(x) for x in w[2:6]))
    for c in cases:
        check_case(*c)
    for e in errors:
        print(e)
    print(f"{len(cases)} cases, {len(errors)} errors")
    return 1 if errors or not cases else 0


if __name__ == "__main__":
    sys.exit(main())
