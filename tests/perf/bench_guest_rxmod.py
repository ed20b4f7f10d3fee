#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The figures of tests/perf/bench_guest_rxmod.sh.

  bench_guest_rxmod.py run VM1_LOG VM2_LOG SW0 SW1 SW2
      one run: the two guests' console logs and the switch's interrupt
      counts (both ports, "-" if none) when the receiver started listening,
      when it had everything, and at the end. Prints "key=value ..." or
      "error REASON".
  bench_guest_rxmod.py summary RESULTS
      RESULTS: lines "PAIR DUT key=value ..."; prints the runs, the per-pair
      ratios of every hvswitch setting to testpmd and to rxmod0, and their
      medians, as reStructuredText tables.
MB is 10^6 bytes.
"""
import json
import re
import statistics
import sys


def hvtest(path):
    try:
        text = open(path, errors="replace").read().replace("\r", "")
    except OSError:
        return ""
    return text


def field(text, prefix, key):
    m = re.search(r"^HVTEST " + prefix + r"\b.*?\b" + key + r"=(\S+)", text, re.M)
    return m.group(1) if m else None


def irqs(text, at):
    v = field(text, "IRQS at=" + at, "virtio")
    return int(v) if v is not None else None


def per_mb(count, nbytes):
    return count / (nbytes / 1e6) if nbytes > 0 else 0.0


def run(args):
    t1, t2 = hvtest(args[0]), hvtest(args[1])
    sw = [int(x) if x.isdigit() else None for x in args[2:5]]
    sent, got = field(t1, "TCP send", "sha256"), field(t2, "TCP recv", "sha256")
    nbytes = field(t2, "TCP recv", "bytes")
    secs = field(t2, "TCP recv_time", "seconds")
    if not sent or not got or nbytes is None or secs is None:
        return "error no_TCP_result"
    if sent != got:
        return "error TCP_sha256_mismatch"
    nbytes, secs = int(nbytes), float(secs)
    if nbytes <= 0 or secs <= 0:
        return "error empty_TCP_transfer"
    out = {"tcp_mbs": nbytes / 1e6 / secs}
    a = [irqs(t, "tcp-start") for t in (t1, t2)]
    b = [irqs(t, "tcp-end") for t in (t1, t2)]
    if None in a or None in b:
        return "error no_IRQS_lines"
    out["tcp_irq_mb"] = per_mb(b[0] - a[0] + b[1] - a[1], nbytes)
    out["tcp_rx_irq_mb"] = per_mb(b[1] - a[1], nbytes)
    if sw[0] is not None and sw[1] is not None:
        out["sw_tcp_irq_mb"] = per_mb(sw[1] - sw[0], nbytes)
    j = re.search(r"^HVTEST IPERF json-begin\n(.*?)^HVTEST IPERF json-end", t1, re.M | re.S)
    if j:
        try:
            d = json.loads(j.group(1))
            if d.get("error"):
                raise ValueError(d["error"])
            rcv = d["end"]["sum_received"]
        except (ValueError, KeyError) as e:
            return "error iperf3_" + str(e).replace(" ", "_")[:60]
        ib = int(rcv["bytes"])
        out["iperf_mbps"] = rcv["bits_per_second"] / 1e6
        c = [irqs(t, "iperf-end") for t in (t1, t2)]
        if None in c:
            return "error no_IRQS_after_iperf3"
        out["iperf_irq_mb"] = per_mb(c[0] - b[0] + c[1] - b[1], ib)
        if sw[1] is not None and sw[2] is not None:
            out["sw_iperf_irq_mb"] = per_mb(sw[2] - sw[1], ib)
    return " ".join("%s=%.4g" % kv for kv in out.items())


COLS = [("tcp_mbs", "TCP MB/s"), ("tcp_irq_mb", "TCP guest irqs/MB"),
        ("tcp_rx_irq_mb", "TCP receiver irqs/MB"), ("sw_tcp_irq_mb", "TCP switch irqs/MB"),
        ("iperf_mbps", "iperf3 Mbit/s"), ("iperf_irq_mb", "iperf3 guest irqs/MB"),
        ("sw_iperf_irq_mb", "iperf3 switch irqs/MB")]
RATIOS = [("tcp_mbs", "TCP MB/s"), ("tcp_irq_mb", "TCP guest irqs/MB"),
          ("iperf_mbps", "iperf3 Mbit/s"), ("iperf_irq_mb", "iperf3 guest irqs/MB")]
SW = [("sw_tcp_irq_mb", "TCP switch irqs/MB"), ("sw_iperf_irq_mb", "iperf3 switch irqs/MB")]


def num(v):
    """three significant digits, no more decimals than one above 10"""
    return "%.0f" % v if v >= 100 else "%.1f" % v if v >= 10 else "%.3g" % v


def table(head, rows):
    w = [max(len(str(r[i])) for r in [head] + rows) for i in range(len(head))]
    sep = "  ".join("=" * x for x in w)
    fmt = lambda r: "  ".join(str(c).ljust(x) for c, x in zip(r, w)).rstrip()
    print("\n".join([sep, fmt(head), sep] + [fmt(r) for r in rows] + [sep]))


def summary(path):
    res = {}  # pair -> dut -> {key: value}
    order = []
    for line in open(path):
        f = line.split()
        if len(f) < 3:
            continue
        kv = dict(x.split("=", 1) for x in f[2:] if "=" in x)
        res.setdefault(f[0], {})[f[1]] = {k: float(v) for k, v in kv.items()}
        if f[1] not in order:
            order.append(f[1])
    cols = [c for c in COLS if any(c[0] in d for p in res.values() for d in p.values())]
    print("Runs:\n")
    rows = []
    for p in res:
        for dut in order:
            if dut in res[p]:
                rows.append([p, dut] + [num(res[p][dut][k]) if k in res[p][dut] else "-"
                                        for k, _ in cols])
    table(["pair", "DUT"] + [t for _, t in cols], rows)
    for ref in ("testpmd", "rxmod0"):
        # testpmd counts no interrupts of its own
        ratios = [c for c in RATIOS + ([] if ref == "testpmd" else SW) if c in cols]
        rows = []
        meds = {}
        for dut in order:
            if dut in ("testpmd", ref):
                continue
            for p in res:
                d, r = res[p].get(dut), res[p].get(ref)
                if d is None or r is None:
                    continue
                row = [p, dut]
                for k, _ in ratios:
                    if k in d and k in r and r[k] > 0:
                        row.append("%.2f" % (d[k] / r[k]))
                        meds.setdefault((dut, k), []).append(d[k] / r[k])
                    else:
                        row.append("-")
                rows.append(row)
        if not rows:
            continue
        for dut in order:
            if any((dut, k) in meds for k, _ in ratios):
                rows.append(["median", dut] + ["%.2f" % statistics.median(meds[(dut, k)])
                                               if (dut, k) in meds else "-" for k, _ in ratios])
        print("\nPer pair, hvswitch / %s:\n" % ref)
        table(["pair", "DUT"] + [t for _, t in ratios], rows)
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 7 and sys.argv[1] == "run":
        print(run(sys.argv[2:]))
    elif len(sys.argv) == 3 and sys.argv[1] == "summary":
        sys.exit(summary(sys.argv[2]))
    else:
        sys.exit(__doc__)
