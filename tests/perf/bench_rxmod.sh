#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Interrupt moderation measured with the VMM's built-in KVM guests (needs
# /dev/kvm): a sink on one vhost-user port, a stream (or request/response)
# on the other, through hvswitch at each rxmod setting and through
# dpdk-testpmd's net_vhost ports (io forwarding), interleaved turn by turn
# (A B C A B C ...) so that this host's changing speed hits every setting
# alike; ratios are taken pair by pair. See doc/performance.rst
# ("Interrupt moderation") for the tables and doc/rxmod.rst.
#
# usage: tests/perf/bench_rxmod.sh [BUILD_DIR]           (default ./build)
#
# Parts (RXMOD_PARTS, default "napi frame cap testpmd rr"):
#   napi     the sink takes interrupts like Linux NAPI (none while it polls)
#   frame    the sink re-arms after every frame it takes (rxirq=frame, EVENT_IDX):
#            NAPI on a fast host; the window caps its rate
#   cap      frame, with the sink's vCPU as on a core of its own: real-time
#            priority (SCHED_FIFO) on CPU 0 beside the stream, and asleep as
#            soon as its ring is empty (spin_us=0), so that each interrupt
#            wakes it at once: the guest that would take more than one
#            interrupt per window (needs chrt, root)
#   always   the sink keeps interrupts on and has no EVENT_IDX (rxirq=always): the
#            backend cannot tell which frames it took
#   testpmd  the napi streams through hvswitch rxmod=0, rxmod=100 and testpmd
#   rr       request/response (rr mode against a responder), RTT percentiles; as
#            root both guests' vCPUs run at real-time priority on CPU 0 (as in
#            part cap), so that the RTT is the path's, not the host scheduler's
#
# Environment (defaults in brackets):
#   RXMOD_RATES     stream rates, frames/s; 0 = as fast as it goes ["1000 20000 50000 100000 0"]
#   RXMOD_SECS      seconds of one stream at its rate (unthrottled: 150000 frames/s assumed) [1]
#   RXMOD_PAIRS     turns of each setting per rate            [3]
#   RXMOD_SETTINGS  hvswitch settings of parts napi, frame, rr ["0 100 adaptive"]
#   RXMOD_SIZE      frame size, bytes                         [200]
#   RXMOD_RR_COUNT  transactions per rr run                   [3000]
#   RXMOD_RR_WRAP   what part rr runs its guests under ["taskset -c 0 chrt -f 10" as
#                   root, else "taskset -c 0"]
#   HV_BENCH_TESTPMD testpmd binary                           [dpdk-testpmd]
#
# Prints a "RUN ..." line per run, then "SUMMARY ..." lines per part, rate and
# setting: medians of frames/s, interrupts per frame, interrupts/s, frames
# per interrupt, KVM irq_injections and halt_exits per 1000 frames (the
# sink's vCPU, from its first frame to its last), and the median over pairs
# of (interrupts with this setting / interrupts at rxmod=0) and of the same
# for throughput. rr: transactions/s and RTT p50/p99 (µs), and the p99
# growth over rxmod=0 in the same pair.
set -u -o pipefail

build=${1:-./build}
export HVSWITCH=$build/app/hvswitch/hvswitch HVCTL=$build/app/hvctl/hvctl
. "$(dirname "$0")/../vmm/lib.sh"
TESTPMD=${HV_BENCH_TESTPMD:-dpdk-testpmd}
. "$(dirname "$0")/../vmm/lib_testpmd.sh"
skip_without_kvm

parts=${RXMOD_PARTS:-napi frame cap testpmd rr}
sink_wrap= stream_wrap=
rates=${RXMOD_RATES:-1000 20000 50000 100000 0}
secs=${RXMOD_SECS:-1}
npairs=${RXMOD_PAIRS:-3}
settings=${RXMOD_SETTINGS:-0 100 adaptive}
size=${RXMOD_SIZE:-200}
rr_count=${RXMOD_RR_COUNT:-3000}
if [ -z "${RXMOD_RR_WRAP+x}" ]; then
	RXMOD_RR_WRAP="taskset -c 0"
	chrt -f 10 true 2>/dev/null && RXMOD_RR_WRAP="taskset -c 0 chrt -f 10"
fi
results=$run/results

note() { echo "# $*" >&2; }

trap 'tp_stop; cleanup' EXIT

set_rxmod() {
	hvctl_sw port set vm0 rxmod="$1" >/dev/null || fail "rxmod=$1 refused"
	hvctl_sw port set vm1 rxmod="$1" >/dev/null || fail "rxmod=$1 refused"
}

# switch's interrupts (callfd writes) into the sink's RX ring
sw_irqs() {
	[ -n "$sw_pid" ] || { echo 0; return; }
	hvctl_sw --json port show vm0 | python3 -c '
import json, sys
print(int(json.load(sys.stdin)["qps"][0]["tx"].get("irqs", 0)))'
}

n_run=0
# stream_run PART DUT SETTING RATE PAIR SINK_OPTS
stream_run() {
	local part=$1 dut=$2 set=$3 rate=$4 pair=$5 sopts=$6 n i0 i1 tag ps pt
	n=$((rate > 0 ? rate * secs : 150000 * secs))
	n_run=$((n_run + 1)); tag=r$n_run
	i0=$(sw_irqs)
	GUEST_WRAP=$sink_wrap guest "k$tag" vm0 \
		"ip=10.0.0.1 mode=sink count=$n size=$size timeout_ms=60000 $sopts"
	ps=$guest_pid
	wait_line "$run/k$tag.log" "sink: ready" 20 || fail "sink did not start"
	GUEST_WRAP=$stream_wrap guest "s$tag" vm1 \
		"ip=10.0.0.2 peer=10.0.0.1 mode=stream count=$n size=$size pps=$rate"
	pt=$guest_pid
	wait_guest "$pt" || note "stream $tag: $(grep -h 'result:' "$run/s$tag.log")"
	wait_guest "$ps" || note "sink $tag: $(grep -h 'result:' "$run/k$tag.log")"
	i1=$(sw_irqs)
	python3 - "$run/s$tag.log" "$run/k$tag.log" "$part" "$dut" "$set" "$rate" "$pair" \
		"$((i1 - i0))" <<'EOF' | tee -a "$results"
import re, sys
s, k, part, dut, st, rate, pair, swi = sys.argv[1:]
st_txt, k_txt = open(s).read(), open(k).read()
m = re.search(r"stream: sent (\d+) frames of \d+ bytes in (\d+) us \((\d+) pps\)", st_txt)
r = re.search(r"sink: received (\d+)/\d+ frames.* (\d+) rx interrupts", k_txt)
def mark(n, f):
    x = re.search(r"mark %d cpu0: .*\b%s=(\d+)" % (n, f), k_txt)
    return int(x.group(1)) if x else 0
if not m or not r:
    print("RUN part=%s dut=%s rxmod=%s rate=%s pair=%s failed=1" % (part, dut, st, rate, pair))
    sys.exit(0)
print("RUN part=%s dut=%s rxmod=%s rate=%s pair=%s frames=%s us=%s pps=%s irqs=%s sw_irqs=%s "
      "inj=%d halts=%d" % (part, dut, st, rate, pair, r.group(1), m.group(2), m.group(3),
      r.group(2), swi, mark(4, "irq_injections") - mark(3, "irq_injections"),
      mark(4, "halt_exits") - mark(3, "halt_exits")))
EOF
}

# rr_run DUT SETTING PAIR
rr_run() {
	local dut=$1 set=$2 pair=$3 tag pr pc
	n_run=$((n_run + 1)); tag=r$n_run
	GUEST_WRAP=$RXMOD_RR_WRAP guest "q$tag" vm0 "ip=10.0.0.1 mode=respond seconds=600 spin_us=0"
	pr=$guest_pid
	wait_line "$run/q$tag.log" "respond: answering" 20 || fail "responder did not start"
	GUEST_WRAP=$RXMOD_RR_WRAP guest "c$tag" vm1 \
		"ip=10.0.0.2 peer=10.0.0.1 mode=rr count=$rr_count size=64 spin_us=0"
	pc=$guest_pid
	wait_guest "$pc" || note "rr $tag exited with $?"
	kill -TERM "$pr"; wait "$pr" 2>/dev/null
	sed -n "s#^rr: \([0-9]*\) transactions .* (\([0-9]*\) per s), \([0-9]*\) lost, rtt p50/p90/p99/max = \([0-9]*\)/\([0-9]*\)/\([0-9]*\)/\([0-9]*\) us, \([0-9]*\) rx.*#RUN part=rr dut=$dut rxmod=$set pair=$pair tps=\2 lost=\3 p50=\4 p90=\5 p99=\6 max=\7 irqs=\8#p" \
		"$run/c$tag.log" | tee -a "$results"
}

for part in $parts; do
	case $part in
	napi | frame | always | cap)
		opts=""; [ "$part" != napi ] && opts="rxirq=$part"
		sink_wrap= stream_wrap=
		if [ "$part" = cap ]; then
			chrt -f 10 true 2>/dev/null || fail "part cap: chrt -f refused (needs root)"
			opts="rxirq=frame spin_us=0"
			sink_wrap="taskset -c 0 chrt -f 10" stream_wrap="taskset -c 0"
		fi
		sw_start
		for rate in $rates; do
			for pair in $(seq "$npairs"); do
				for s in $settings; do
					set_rxmod "$s"
					stream_run "$part" hvswitch "$s" "$rate" "$pair" "$opts"
				done
			done
		done
		sw_stop
		;;
	testpmd)
		for rate in $rates; do
			for pair in $(seq "$npairs"); do
				for s in 0 100; do
					sw_start; set_rxmod "$s"
					stream_run testpmd hvswitch "$s" "$rate" "$pair" ""
					sw_stop
				done
				tp_start
				stream_run testpmd testpmd - "$rate" "$pair" ""
				tp_stop
			done
		done
		;;
	rr)
		for pair in $(seq "$npairs"); do
			sw_start
			for s in $settings; do
				set_rxmod "$s"
				rr_run hvswitch "$s" "$pair"
			done
			sw_stop
			tp_start
			rr_run testpmd - "$pair"
			tp_stop
		done
		;;
	*) fail "unknown part $part" ;;
	esac
done

python3 - "$results" <<'EOF'
import collections, statistics as st, sys
runs = []
for line in open(sys.argv[1]):
    if line.startswith("RUN ") and "failed=1" not in line:
        runs.append(dict(kv.split("=", 1) for kv in line.split()[1:]))
def med(v):
    return st.median(v) if v else float("nan")
def key(r):
    return (r["dut"], r["rxmod"])
base = {}
for r in runs:
    if r["part"] != "rr" and key(r) == ("hvswitch", "0"):
        base[(r["part"], r["rate"], r["pair"])] = r
groups = collections.OrderedDict()
for r in runs:
    groups.setdefault((r["part"], r.get("rate", "-"), r["dut"], r["rxmod"]), []).append(r)
for (part, rate, dut, mod), rs in groups.items():
    if part == "rr":
        b = {x["pair"]: x for x in runs if x["part"] == "rr" and key(x) == ("hvswitch", "0")}
        grow = [int(x["p99"]) - int(b[x["pair"]]["p99"]) for x in rs if x["pair"] in b]
        print("SUMMARY part=rr dut=%s rxmod=%s tps=%.0f p50_us=%.0f p99_us=%.0f "
              "p99_growth_us=%.0f irqs=%.0f" % (dut, mod, med([int(x["tps"]) for x in rs]),
              med([int(x["p50"]) for x in rs]), med([int(x["p99"]) for x in rs]), med(grow),
              med([int(x["irqs"]) for x in rs])))
        continue
    f = lambda x: int(x["frames"])
    ipf = [int(x["irqs"]) / f(x) for x in rs]
    secs = [int(x["us"]) / 1e6 for x in rs]
    ratio, tput = [], []
    for x in rs:
        b = base.get((part, rate, x["pair"]))
        if b and int(b["irqs"]) > 0 and int(b["frames"]) > 0:
            ratio.append((int(x["irqs"]) / f(x)) / (int(b["irqs"]) / f(b)))
        if b:
            tput.append(int(x["pps"]) / max(1, int(b["pps"])))
    print("SUMMARY part=%s rate=%s dut=%s rxmod=%s pps=%.0f irqs_per_frame=%.4f irqs_per_s=%.0f "
          "frames_per_irq=%.1f inj_per_kframe=%.1f halts_per_kframe=%.1f sw_irqs_per_frame=%.4f "
          "irqs_vs_rxmod0=%.2f pps_vs_rxmod0=%.2f pairs=%d" % (
          part, rate, dut, mod, med([int(x["pps"]) for x in rs]), med(ipf),
          med([int(x["irqs"]) / s for x, s in zip(rs, secs)]),
          med([f(x) / max(1, int(x["irqs"])) for x in rs]),
          med([1000 * int(x["inj"]) / f(x) for x in rs]),
          med([1000 * int(x["halts"]) / f(x) for x in rs]),
          med([int(x["sw_irqs"]) / f(x) for x in rs]), med(ratio), med(tput), len(rs)))
EOF
