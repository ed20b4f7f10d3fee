#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Switch benchmark: app/hvswitch (L2 learning switch, two vhost-user ports)
# against dpdk-testpmd io forwarding on net_vhost (a cross-connect: no
# switching at all) and against Open vSwitch with DPDK (ovs-vswitchd-dpdk,
# bridge datapath_type=netdev, dpdkvhostuserclient ports, the NORMAL action),
# then the cost curves of hvswitch and OVS: packets/s with 2, 8 and 32 ports,
# and with 10, 1000 and 100000 learned MAC addresses. See doc/performance.rst
# ("Switch").
#
# usage: tests/perf/bench_switch.sh [BUILD_DIR]      (default ./build)
#
# Builds nothing. Everything runs on two CPUs: the generator (hv_pktgen, its
# virtio-user frontends) and every DUT's main/control threads on
# HV_BENCH_GEN_CPU, the DUT's one forwarding thread (PMD) alone on
# HV_BENCH_DUT_CPU. The comparison and the curves run in turns (below);
# with HV_BENCH_SLICES=0 each run starts a fresh DUT and generator, the DUTs
# of a repetition one after the other (hvswitch, testpmd, ovs, hvswitch,
# ...), medians per (DUT, size) and per curve point. The
# generator makes a learning switch learn every address first
# (--learn-first), so the measured traffic is known unicast.
#
# Environment (defaults in brackets):
#   HV_BENCH_SIZES        frame sizes of the comparison, bytes without FCS, or ""
#                         (curves only)                          ["64 1518"]
#   HV_BENCH_REPS         repetitions of the comparison without turns, and of each
#                         curve point                            [3]
#   HV_BENCH_CURVE_REPS   repetitions of each curve point without turns [HV_BENCH_REPS]
#   HV_BENCH_DUTS         DUTs of the comparison                 ["hvswitch testpmd ovs"];
#                         also hvcap (hvswitch with "hvctl capture port0 -w /dev/null"
#                         running: every frame copied), hvbase (HV_BENCH_HVSWITCH_BASE) and
#                         hvbasepacked (the same with packed_vq=1 generators)
#   HV_BENCH_HVSWITCH_BASE another hvswitch binary (the code before a change): DUTs
#                         hvbase and hvbasepacked
#   HV_BENCH_PACKED       1: the packed ring's comparison: DUTs "hvswitch testpmd
#                         hvpacked tpmdpacked", no curves, unless set otherwise.
#                         hvpacked and tpmdpacked are hvswitch and testpmd driven
#                         by generators whose virtio-user has packed_vq=1 (the
#                         same binaries: the frontend picks the ring); their
#                         turns give hvpacked/tpmdpacked (packed against
#                         testpmd packed) and hvpacked/hvswitch (packed against
#                         split, same code)                       [0]
#   HV_BENCH_PACKED_VEC   1: the generators of hvpacked, tpmdpacked and hvbasepacked
#                         take virtio-user's AVX-512 paths (vectorized=1,
#                         mrg_rxbuf=0, --force-max-simd-bitwidth=512: its scalar
#                         packed paths cannot keep up with the DUTs); 0: the
#                         scalar paths; auto: 1 where the CPU has AVX-512F [auto]
#   HV_BENCH_GEN_BURST    frames per TX burst of the generators (1..64): larger bursts
#                         cost the generator fewer cycles per frame, so that it outruns
#                         more DUTs (see "Who sets the rate" in doc/performance.rst) [32]
#   HV_BENCH_GEN_BURST2   with turns: each DUT of the comparison also takes turns
#                         driven by a generator with bursts of this size, as
#                         "DUT_bBURST" (its rates on the TURNS lines, no ratios):
#                         how each DUT answers to the generator's bursts [none]
#   HV_BENCH_CURVES       curves to run: "ports macs", or ""     ["ports macs"]
#   HV_BENCH_CURVE_DUTS   DUTs of the curves                    ["hvswitch ovs"]
#   HV_BENCH_BASE_BUILD   a second build (e.g. of the code before a change):
#                         its hvswitch joins the curves as DUT "base", run
#                         alternately with the others          [none]
#   HV_BENCH_PORTS_LIST   ports of the ports curve (at most 32)  ["2 8 32"]
#   HV_BENCH_MACS_LIST    MAC set sizes of the MAC curve        ["10 1000 100000"]
#   HV_BENCH_CURVE_SIZE   frame size of the curves               [64]
#   HV_BENCH_WARMUP_S     generator warm-up before measuring     [3]
#   HV_BENCH_DURATION_S   measured window                        [8]
#   HV_BENCH_GEN_CPU      CPU of the generator and the DUTs' main threads [0]
#   HV_BENCH_DUT_CPU      CPU of the DUTs' forwarding thread     [1]
#   HV_BENCH_TESTPMD      testpmd binary                         [dpdk-testpmd]
#   HV_BENCH_OVS_VSWITCHD ovs-vswitchd with DPDK  [/usr/lib/openvswitch-switch-dpdk/ovs-vswitchd-dpdk]
#   HV_BENCH_PKTGEN       generator binary   [BUILD_DIR/tests/perf/hv_pktgen]
#   HV_BENCH_KEEP_LOGS    1: keep the run directory with every log [0]
#   HV_BENCH_BOUND_PCT    the share of bursts a DUT turned away for a turn to count as
#                         set by the DUT, not the generator (dut_bound_rounds) [80]
#   HV_BENCH_HUGEPAGES    hugepages: auto, 1 (required) or 0 (--no-huge) [auto]
#   HV_BENCH_SLICES       rounds of turns of the comparison and of each curve point
#                         (below); 0: separate runs, HV_BENCH_REPS of them per DUT [30]
#   HV_BENCH_SLICE_S      seconds of one turn                    [1]
#
# Turns (HV_BENCH_SLICES=N): this host's speed changes by 2x within seconds,
# more than separate runs of the DUTs can average out. So per size every DUT
# and its generator start once, side by side, and take N rounds of turns:
# the DUT whose turn it is runs, the others are paused (SIGSTOP, DUT and
# generator alike: no CPU, rings and connections kept). The generator prints
# its frame count every 100 ms (--report-ms); a turn's rate is taken from
# its ticks after the first 0.3 s. Each round's ratios are of turns a few
# seconds apart; the verdict is the median of the rounds' ratios. The order
# rotates every round and runs backwards every other N rounds. The turns of
# one size must fit 240 s (MAC tables age learned addresses out at 300 s).
# Memory then: DUTs -m 256 (OVS 512), generators 256.
# A curve point P in turns: hvswitch at the curve's first point, hvswitch at
# P, base (HV_BENCH_BASE_BUILD) and OVS at P, each with its own generator;
# per round hvswitch at P against the others. So "relative" (P against the
# first point) and hv/ovs are medians of ratios of turns seconds apart, as
# in the comparison. OVS with more than 8 ports takes 1600 MiB: with the
# ports curve up to 32, 1800 free 2 MiB pages are needed for hugepages.
#
# The binaries of hvswitch, hvctl and the generator are copied into the run
# directory first, so a rebuild during the benchmark does not change them.
# Memory: 2 MiB hugepages for everything when hugetlbfs is mounted with at
# least 1024 pages free (DUTs -m 512 or 1024 for OVS, with turns -m 256 or
# 512 for OVS, curves included; generator -m 256; all --in-memory so an
# aborted run leaves no files), else --no-huge.
# HV_BENCH_HUGEPAGES=0 forces --no-huge, 1 requires hugepages. With --no-huge every run lands on
# other 4 KiB pages and the 64 B rates of these nested VMs scatter over 2x.
#
# Prints one "RUN ..." line per run (with turns: one "TURNS size=S round=R
# <dut>_pps=.. vs_testpmd=.. vs_ovs=.." line per round), then tables and
# "SUMMARY ..." lines:
#   SUMMARY size=S hvswitch_pps=.. testpmd_pps=.. ovs_pps=.. vs_testpmd=.. vs_ovs=..
#   SUMMARY curve=ports ports=N pps=.. relative=.. ovs_pps=.. ovs_relative=.. vs_ovs=..
#   SUMMARY curve=macs macs=K pps=.. relative=.. ovs_pps=.. ovs_relative=.. vs_ovs=..
#   SUMMARY target=... met|missed|n/a
#   SUMMARY size=S rounds=N vs_testpmd_rounds=.. vs_ovs_rounds=..   (turns only:
#     the median of the rounds' ratios, which the targets then use)
#   SUMMARY size=S rounds=N hvcap_vs_hvswitch_rounds=.. hvswitch_vs_hvbase_rounds=..
#     (turns with hvcap or hvbase: capture on against off, this code against the base)
#   SUMMARY size=S rounds=N packed hvpacked_vs_tpmdpacked_rounds=.. hvpacked_vs_hvswitch_rounds=..
#     hvpacked_vs_hvbasepacked_rounds=.. packed_over_split_rounds=.. packed_not_below_split=K/N
#     packed_over_split_bound_rounds=M(K)
#     (turns with hvpacked: packed against testpmd packed, against split, against the
#     base on packed rings; per round hvpacked_vs_tpmdpacked over vs_testpmd, its median
#     and in how many rounds it was 1 or more: the target
#     64B_packed_vs_testpmd_packed_not_below_split is that median >= 1; the same
#     median over the K rounds where all four DUTs turned away >= HV_BENCH_BOUND_PCT %
#     of the bursts: the target ..._all_bound, with K >= 5)
#   SUMMARY size=S rounds=N dut_bound (...) DUT=PCT ...   (turns: per DUT the median
#     share of the generator's TX bursts that the DUT's ring did not take whole; near
#     100 the DUT, not the generator, set the rate)
#   SUMMARY size=S rounds=N dut_bound_rounds (...) vs_testpmd=M(K) ...   (the ratios'
#     medians over the K rounds where both DUTs turned away >= HV_BENCH_BOUND_PCT [80] %
#     of the bursts: a ratio where the generator set one side's rate understates
#     the faster DUT)
#   SUMMARY setup memory=hugepages-2MiB|no-huge-4KiB generator_burst=N packed_vec=0|1
#   SUMMARY generators (virtio-user paths, port 0) DUT=rx:PATH,tx:PATH ...   (which of
#     its Rx and Tx paths each DUT's generator took: "inorder" on split rings,
#     "packed_ring_vectorized" with HV_BENCH_PACKED_VEC=1)
# Exit status 0 when every run produced a result (targets missed or not).
set -u -o pipefail

build=${1:-./build}
sizes=${HV_BENCH_SIZES-64 1518}
reps=${HV_BENCH_REPS:-3}
curve_reps=${HV_BENCH_CURVE_REPS:-$reps}
packed=${HV_BENCH_PACKED:-0}
if [ "$packed" = 1 ]; then
	duts=${HV_BENCH_DUTS:-hvswitch testpmd hvpacked tpmdpacked}
	curves=${HV_BENCH_CURVES-}
else
	duts=${HV_BENCH_DUTS:-hvswitch testpmd ovs}
	curves=${HV_BENCH_CURVES-ports macs}
fi
packed_vec=${HV_BENCH_PACKED_VEC:-auto}
if [ "$packed_vec" = auto ]; then
	packed_vec=0
	grep -qw avx512f /proc/cpuinfo && packed_vec=1
fi
curve_duts=${HV_BENCH_CURVE_DUTS:-hvswitch ovs}
base_build=${HV_BENCH_BASE_BUILD:-}
ports_list=${HV_BENCH_PORTS_LIST:-2 8 32}
macs_list=${HV_BENCH_MACS_LIST:-10 1000 100000}
curve_size=${HV_BENCH_CURVE_SIZE:-64}
warmup=${HV_BENCH_WARMUP_S:-3}
duration=${HV_BENCH_DURATION_S:-8}
gen_cpu=${HV_BENCH_GEN_CPU:-0}
dut_cpu=${HV_BENCH_DUT_CPU:-1}
testpmd=${HV_BENCH_TESTPMD:-dpdk-testpmd}
vswitchd=${HV_BENCH_OVS_VSWITCHD:-/usr/lib/openvswitch-switch-dpdk/ovs-vswitchd-dpdk}
pktgen_src=${HV_BENCH_PKTGEN:-$build/tests/perf/hv_pktgen}
slices=${HV_BENCH_SLICES:-30}
slice_s=${HV_BENCH_SLICE_S:-1}
gen_burst=${HV_BENCH_GEN_BURST:-32}
gen_burst2=${HV_BENCH_GEN_BURST2:-}

# bench_hugepages, stop_pid, forget_pid, ovs_vsctl, ovs_db_start, ovs_db_bridge,
# bench_tick_rate, bench_median, bench_field, testpmd_start, testpmd_quit
. "$(dirname "$0")/bench_lib.sh"
# pages: with turns every DUT and generator at once; else one DUT (OVS with
# 32 ports: 1600 MiB) and its generator (256 MiB)
huge_need=1024
{ [ "$slices" = 0 ] || [ -z "$sizes" ]; } && huge_need=928
# curves in turns: up to four DUTs and their generators at once, OVS with
# more than 8 ports taking 1600 MiB
if [ "$slices" != 0 ] && [ -n "$curves" ]; then
	huge_need=1024
	[[ " $curves " == *" ports "* ]] && [ "$(tr ' ' '\n' <<<"$ports_list" | sort -n | tail -1)" -gt 8 ] &&
		huge_need=1800
fi
# HV_BENCH_GEN_BURST2: every DUT of the comparison twice
[ -n "${HV_BENCH_GEN_BURST2:-}" ] && [ "$huge_need" -lt 2048 ] && huge_need=2048
huge=$(bench_hugepages "$huge_need") ||
	{ echo "bench_switch: HV_BENCH_HUGEPAGES=1 needs hugetlbfs and $huge_need free 2 MiB pages" >&2; exit 1; }
if [ "$huge" = 1 ]; then
	mem_mode="2 MiB hugepages"
	# --in-memory: no hugepage files to leave behind; the generator's one
	# memfd per list is what virtio-user hands to the switch
	dut_mem=(-m 512 --in-memory)
	gen_mem=(-m 256 --in-memory --single-file-segments)
	ovs_mem="-m 1024" # ovs-vswitchd adds --in-memory itself
else
	mem_mode="--no-huge"
	dut_mem=(--no-huge -m 512)
	gen_mem=(--no-huge -m 256)
	# --legacy-mem: ovs-vswitchd adds --in-memory otherwise, which --no-huge refuses
	ovs_mem="--no-huge --legacy-mem -m 1024"
fi
if [[ $slices =~ ^[0-9]+$ ]] && [ "$slices" -gt 0 ]; then
	# all DUTs and generators at once must fit the 1024 pages asked for
	dut_mem=("${dut_mem[@]/512/256}")
	ovs_mem=${ovs_mem/1024/512}
fi
# the curves: no per-port limit, room for 2 x 100000 addresses, no ageing
# meanwhile; OVS the same (its bridge's MAC table: 2048 entries by default)
curve_sw_opts=(--mac-limit 0 --fdb-capacity 262144 --fdb-age 3600)
curve_ovs_cfg=(other_config:mac-table-size=262144 other_config:mac-aging-time=3600)

die() {
	echo "bench_switch: $*" >&2
	exit 1
}
note() {
	echo "bench_switch: $*" >&2
}

[ -x "$build/app/hvswitch/hvswitch" ] || die "no $build/app/hvswitch/hvswitch (build first: ninja -C $build)"
[ -x "$build/app/hvctl/hvctl" ] || die "no $build/app/hvctl/hvctl (build first: ninja -C $build)"
[ -x "$pktgen_src" ] || die "no $pktgen_src (build first: ninja -C $build)"
[ "$gen_cpu" != "$dut_cpu" ] || die "generator and DUT need two different CPUs"
[[ $packed_vec == [01] ]] || die "HV_BENCH_PACKED_VEC must be 0, 1 or auto"
[[ $slices =~ ^[0-9]+$ ]] || die "HV_BENCH_SLICES must be a number of rounds (0: no turns)"
[[ $gen_burst =~ ^[0-9]+$ ]] && [ "$gen_burst" -ge 1 ] && [ "$gen_burst" -le 64 ] ||
	die "HV_BENCH_GEN_BURST must be frames per burst, 1 to 64"
[ -z "$gen_burst2" ] || { [[ $gen_burst2 =~ ^[0-9]+$ ]] && [ "$gen_burst2" -ge 1 ] &&
	[ "$gen_burst2" -le 64 ] && [ "$slices" -gt 0 ]; } ||
	die "HV_BENCH_GEN_BURST2 must be frames per burst, 1 to 64, with turns"
[[ $slice_s =~ ^[0-9]+(\.[0-9]+)?$ ]] && awk -v s="$slice_s" 'BEGIN { exit !(s >= 0.5) }' ||
	die "HV_BENCH_SLICE_S must be seconds, at least 0.5"
# the generators teach the MAC tables once; they age addresses out after 300 s
awk -v n="$slices" -v s="$slice_s" -v d="$(wc -w <<<"$duts")" -v b="${gen_burst2:+2}" \
	'BEGIN { exit !(n * s * d * (b ? b : 1) <= 240) }' ||
	die "turns of one size must fit 240 s (HV_BENCH_SLICES x HV_BENCH_SLICE_S x DUTs): the" \
		"switches' MAC tables age the learned addresses out at 300 s"
if [ "$gen_cpu" -lt "$dut_cpu" ]; then
	dut_lcores=$gen_cpu,$dut_cpu
else
	dut_lcores=$dut_cpu,$gen_cpu
fi
dut_mask=$(printf '0x%x' $((1 << dut_cpu)))
gen_mask=$(printf '0x%x' $((1 << gen_cpu)))

rundir=$(mktemp -d /tmp/hvbench-switch.XXXXXX) || die "mktemp failed"
pids=()           # processes to stop on exit
prefix=hvsw$$-    # DPDK --file-prefix of everything we start (removed at exit)
ovsdb_pid=

cleanup() {
	local i

	# all resumed first (turns pause them): a generator's port stop talks to its DUT
	for ((i = 0; i < ${#pids[@]}; i++)); do
		kill -CONT "${pids[i]}" 2>/dev/null
		pkill -CONT -P "${pids[i]}" 2>/dev/null
	done
	# newest first: generator, then DUT, then ovsdb-server
	for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
		stop_pid "${pids[i]}" 5 TERM
	done
	pids=()
	if [ -n "$testpmd_fd" ]; then
		exec {testpmd_fd}>&-
		testpmd_fd=
	fi
	rm -rf /var/run/dpdk/"$prefix"* 2>/dev/null
	if [ "${HV_BENCH_KEEP_LOGS:-0}" = 1 ]; then
		note "logs kept in $rundir"
	else
		rm -rf "$rundir"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# our own copies: other people may rebuild while we measure
mkdir -p "$rundir/bin" "$rundir/logs"
cp "$build/app/hvswitch/hvswitch" "$build/app/hvctl/hvctl" "$rundir/bin/" || die "copy failed"
cp "$pktgen_src" "$rundir/bin/hv_pktgen" || die "copy failed"
if [[ " $duts " == *" hvbase"* ]]; then
	[ -x "${HV_BENCH_HVSWITCH_BASE:-}" ] ||
		die "DUTs hvbase and hvbasepacked need HV_BENCH_HVSWITCH_BASE (an hvswitch binary)"
	cp "$HV_BENCH_HVSWITCH_BASE" "$rundir/bin/hvswitch-base" || die "copy failed"
fi
hvswitch=$rundir/bin/hvswitch
if [ -n "$base_build" ]; then
	cp "$base_build/app/hvswitch/hvswitch" "$rundir/bin/hvswitch-base" ||
		die "no $base_build/app/hvswitch/hvswitch"
	curve_duts="base $curve_duts"
fi
hvctl=$rundir/bin/hvctl
pktgen=$rundir/bin/hv_pktgen

# ---------------------------------------------------------------- OVS setup
ovs_dir=$rundir/ovs
ovs_ok=0
ovs_why=

# Private ovsdb-server (one for the whole script) with the bridge and its two
# dpdkvhostuserclient ports; ovs-vswitchd itself starts fresh for every run.
ovs_setup() {
	ovs_db_start "$vswitchd" "$gen_cpu" || return 1
	# per-port-memory: the shared 262144-mbuf pool does not fit in -m 1024
	ovs_db_bridge "$rundir/ovs0.sock" "$rundir/ovs1.sock" \
		"other_config:dpdk-extra=--no-pci $ovs_mem --file-prefix=${prefix}ovs" \
		other_config:pmd-cpu-mask="$dut_mask" other_config:dpdk-lcore-mask="$gen_mask" \
		other_config:per-port-memory=true
}

# ovs_ports N: the bridge's ports p0..pN-1 (dpdkvhostuserclient to
# $rundir/ovs<i>.sock), before ovs-vswitchd starts; every vhost port has its
# own mbuf pool (per-port-memory), so its memory grows with them
ovs_ports() {
	local n=$1 i mem=$ovs_mem have

	have=$(ovs_vsctl list-ports br0 2>>"$ovs_dir/vsctl.log" | wc -l)
	for ((i = have; i < n; i++)); do
		ovs_vsctl add-port br0 "p$i" -- set Interface "p$i" type=dpdkvhostuserclient \
			"options:vhost-server-path=$rundir/ovs$i.sock" >>"$ovs_dir/vsctl.log" 2>&1 || return 1
	done
	for ((i = n; i < have; i++)); do
		ovs_vsctl del-port br0 "p$i" >>"$ovs_dir/vsctl.log" 2>&1 || return 1
	done
	[ "$n" -gt 8 ] && mem=$(sed -E 's/-m [0-9]+/-m 1600/' <<<"$mem")
	ovs_vsctl set Open_vSwitch . \
		"other_config:dpdk-extra=--no-pci $mem --file-prefix=${prefix}ovs" \
		>>"$ovs_dir/vsctl.log" 2>&1
}

declare -A pps        # [key] -> space-separated rx_pps of its runs
declare -A clean      # the same, runs where both CPUs were ours (>= 95 %)
declare -A detail     # the same, "Mpps(fwd cpu %)" per run
declare -A rounds     # [dut,size] -> hvswitch/dut of each round of turns
declare -A turn       # [label,round] -> frames/s of that turn (run_turns)
declare -A turn_full  # [label,round] -> % of the generator's bursts the DUT did not take whole
declare -A full_pcts  # [dut,size] -> those of its turns
declare -A bound_rounds # [as rounds] -> the ratios of rounds where both DUTs set the rate
declare -A gen_path   # [dut] -> the Rx and Tx paths its generator's virtio-user took
# a turn where the DUT's ring turned away at least this % of the generator's
# bursts: the DUT, not the generator, set its rate (HV_BENCH_BOUND_PCT)
bound_pct=${HV_BENCH_BOUND_PCT:-80}
turn_order=()
turn_sw_opts=()
failures=0
run=0

# start_dut, stop_dut, start_capture, wait_ready, start_ready, start_gen,
# run_turns, ratio, rounds_median, mpps
. "$(dirname "$0")/bench_switch_lib.sh"

# run_one KEY DUT SIZE PORTS SRC_MACS DST_MACS [hvswitch options...]
run_one() {
	local key=$1 dut=$2 size=$3 nports=$4 smacs=$5 dmacs=$6
	local log gen_log gen_pid line rc fdb="" limit

	shift 6
	run=$((run + 1))
	log=$rundir/logs/$run-$dut.log
	gen_log=$rundir/logs/$run-$dut-gen.log
	start_ready "$dut" "$log" "$nports" "$@" || return
	limit=$(awk -v w="$warmup" -v d="$duration" -v k="$((smacs + dmacs))" \
		'BEGIN { printf "%d", w + d + 120 + k / 20000 }')
	start_gen "$dut" "$gen_log" "$limit" "$size" "$nports" "$smacs" "$dmacs" \
		--warmup-s "$warmup" --duration-s "$duration" --watch-pid "$dut_pid"
	wait "$gen_pid"
	rc=$?
	forget_pid "$gen_pid"
	rm -rf /var/run/dpdk/"${prefix}g$run" 2>/dev/null
	gen_path[$dut]=$(gen_paths "$gen_log")
	if [[ $dut == hvswitch || $dut == base || $dut == hv*packed ]] && kill -0 "$dut_pid" 2>/dev/null; then
		# entries in the MAC table (the header line excluded)
		fdb=$("$hvctl" --socket "$rundir/hv$run/hvswitch.sock" fdb show 2>/dev/null | sed 1d | wc -l)
	fi
	stop_dut "$dut" "$dut_pid" "$run"
	line=$(grep '^RESULT ' "$gen_log" | tail -1)
	if [ "$rc" -ne 0 ] || [ -z "$line" ]; then
		note "run $run ($key) failed (generator exit $rc); logs:"
		grep -v '^EAL\|^TELEMETRY\|virtio_user_dev_init_mac' "$gen_log" | tail -5 >&2
		grep -i 'err\|emer\|warn' "$log" | grep -v 'failed to connect\|STP\|RSTP' | tail -5 >&2
		failures=$((failures + 1))
		return
	fi
	echo "RUN key=$key dut=$dut rep=$rep ${line#RESULT }${fdb:+ fdb_entries=$fdb}"
	local v g d
	v=$(bench_field rx_pps "$line")
	g=$(bench_field gen_cpu_pct "$line")
	d=$(bench_field dut_fwd_cpu_pct "$line")
	pps[$key]+="$v "
	detail[$key]+="$(awk -v v="$v" -v d="$d" 'BEGIN { printf "%.2f(%.0f%%)", v / 1e6, d }') "
	# clean: neither the generator nor the forwarding thread lost its CPU
	if awk -v g="$g" -v d="$d" 'BEGIN { exit !(g >= 95 && d >= 95) }'; then
		clean[$key]+="$v "
	fi
}

# dut_bound A B ROUND: in round ROUND both DUTs, not their generators, set the rate
dut_bound() {
	local a=${turn_full[$1,$3]:-n/a} b=${turn_full[$2,$3]:-n/a}

	[ "$a" != n/a ] && [ "$b" != n/a ] && [ "$a" -ge "$bound_pct" ] && [ "$b" -ge "$bound_pct" ]
}
# bound_median KEY: the median of the DUT-bound rounds' ratios and how many, "M(K)"
bound_median() {
	local v=${bound_rounds[$1]:-}

	echo "$(rounds_median "$v")($(wc -w <<<"$v"))"
}

# compare_turns SIZE: the comparison of one size in turns (HV_BENCH_SLICES)
compare_turns() {
	local size=$1 dut r k v line specs=()

	for dut in $duts; do
		specs+=("$dut:$dut:2:1")
		[ -n "$gen_burst2" ] && specs+=("${dut}_b$gen_burst2:$dut:2:1:$gen_burst2")
	done
	turn_sw_opts=()
	run_turns "$size" "${specs[@]}"
	for ((r = 1; r <= slices; r++)); do
		line="TURNS size=$size round=$r"
		for dut in "${turn_order[@]}"; do
			v=${turn[$dut,$r]}
			line+=" ${dut}_pps=$v ${dut}_full_pct=${turn_full[$dut,$r]:-n/a}"
			[ "${turn_full[$dut,$r]:-n/a}" = n/a ] || full_pcts[$dut,$size]+="${turn_full[$dut,$r]} "
			if [ "$v" -gt 0 ]; then
				pps[$dut,$size]+="$v "
				detail[$dut,$size]+="$(mpps "$v") "
			fi
		done
		for dut in testpmd ovs; do
			[ -n "${turn[hvswitch,$r]:-}" ] && [ -n "${turn[$dut,$r]:-}" ] || continue
			v=$(ratio "${turn[hvswitch,$r]}" "${turn[$dut,$r]}")
			line+=" vs_$dut=$v"
			[ "$v" = n/a ] || rounds[$dut,$size]+="$v "
			[ "$v" != n/a ] && dut_bound hvswitch "$dut" "$r" && bound_rounds[$dut,$size]+="$v "
		done
		# capture on against off; this code against the base binary
		for v in hvcap,hvswitch hvswitch,hvbase hvpacked,tpmdpacked hvpacked,hvswitch hvpacked,hvbasepacked; do
			[ -n "${turn[${v%,*},$r]:-}" ] && [ -n "${turn[${v#*,},$r]:-}" ] || continue
			k=$(ratio "${turn[${v%,*},$r]}" "${turn[${v#*,},$r]}")
			line+=" ${v%,*}_vs_${v#*,}=$k"
			[ "$k" = n/a ] || rounds[$v,$size]+="$k "
			[ "$k" != n/a ] && dut_bound "${v%,*}" "${v#*,}" "$r" && bound_rounds[$v,$size]+="$k "
		done
		# the packed ring's ratio against testpmd over the split ring's, both of this round
		if [ "${turn[hvpacked,$r]:-0}" -gt 0 ] && [ "${turn[tpmdpacked,$r]:-0}" -gt 0 ] &&
			[ "${turn[hvswitch,$r]:-0}" -gt 0 ] && [ "${turn[testpmd,$r]:-0}" -gt 0 ]; then
			k=$(awk -v a="${turn[hvpacked,$r]}" -v b="${turn[tpmdpacked,$r]}" \
				-v c="${turn[hvswitch,$r]}" -v d="${turn[testpmd,$r]}" \
				'BEGIN { printf "%.3f", (a / b) / (c / d) }')
			line+=" packed_over_split=$k"
			rounds[packed_over_split,$size]+="$k "
			# all four DUTs set their own rate: the generator skews neither ratio
			dut_bound hvswitch testpmd "$r" && dut_bound hvpacked tpmdpacked "$r" &&
				bound_rounds[packed_over_split,$size]+="$k "
		fi
		echo "$line"
	done
}

# curve_turns CURVE POINT FIRST: one point of a cost curve in turns: hvswitch
# at FIRST (the curve's first point), at POINT, then base and OVS at POINT
# (the DUTs of HV_BENCH_CURVE_DUTS; OVS last: the others' start removes the
# OVS sockets of earlier runs). Per round: hvswitch at POINT against hvswitch
# at FIRST, and against OVS and base at POINT.
curve_turns() {
	local curve=$1 pt=$2 first=$3 dut r v line specs=() label

	for v in $first $pt; do
		[ "$v" = "$pt" ] && [ "$v" = "$first" ] && [ "${#specs[@]}" -gt 0 ] && continue
		if [ "$curve" = ports ]; then
			specs+=("hv$v:hvswitch:$v:1")
		else
			specs+=("hv$v:hvswitch:2:$v")
		fi
	done
	for dut in base ovs; do
		[[ " $curve_duts " == *" $dut "* ]] || continue
		if [ "$curve" = ports ]; then
			specs+=("$dut$pt:$dut:$pt:1")
		else
			specs+=("$dut$pt:$dut:2:$pt")
		fi
	done
	turn_sw_opts=("${curve_sw_opts[@]}")
	run_turns "$curve_size" "${specs[@]}"
	for ((r = 1; r <= slices; r++)); do
		line="TURNS curve=$curve $curve=$pt round=$r"
		for label in "${turn_order[@]}"; do
			v=${turn[$label,$r]}
			line+=" ${label}_pps=$v"
			[ "$v" -gt 0 ] || continue
			case $label in
			hv$pt) k=$curve,$pt ;;
			hv$first) k=$curve,$pt,first ;;
			*) k=${label%"$pt"}:$curve,$pt ;;
			esac
			pps[$k]+="$v "
			detail[$k]+="$(mpps "$v") "
		done
		[ -n "${turn[hv$pt,$r]:-}" ] || { echo "$line"; continue; }
		for label in "first:hv$first" "ovs:ovs$pt" "base:base$pt"; do
			[ "${label#*:}" != "hv$pt" ] && [ -n "${turn[${label#*:},$r]:-}" ] || continue
			v=$(ratio "${turn[hv$pt,$r]}" "${turn[${label#*:},$r]}")
			line+=" vs_${label%%:*}=$v"
			[ "$v" = n/a ] || rounds[$curve,$pt,${label%%:*}]+="$v "
		done
		echo "$line"
	done
}

# curve_ratio CURVE POINT first|ovs|base: hvswitch at POINT against its
# first point, OVS or base there: with turns the median of the rounds'
# ratios, else the ratio of the medians of the runs
curve_ratio() {
	local curve=$1 pt=$2 what=$3 first=${points%% *} other

	if [ "$what" = first ] && [ "$pt" = "$first" ]; then
		echo 1.00
	elif [ "$slices" -gt 0 ]; then
		rounds_median "${rounds[$curve,$pt,$what]:-}"
	else
		case $what in
		first) other=${pps[$curve,$first]:-} ;;
		*) other=${pps[$what:$curve,$pt]:-} ;;
		esac
		ratio "$(bench_median "${pps[$curve,$pt]:-}")" "$(bench_median "$other")"
	fi
}

# ---------------------------------------------------------------- main
echo "bench_switch: $(date -u +%Y-%m-%dT%H:%M:%SZ) $(uname -r)," \
	"$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) CPUs," \
	"load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "bench_switch: generator CPU $gen_cpu, forwarding thread CPU $dut_cpu, warm-up $warmup s," \
	"window $duration s, $reps repetitions (curves $curve_reps), $mem_mode," \
	"generator bursts of $gen_burst"
[ "$slices" -gt 0 ] && echo "bench_switch: comparison in turns: $slices rounds of $slice_s s per DUT"

case " $duts " in
*" ovs "*)
	if ovs_setup; then
		ovs_ok=1
		echo "bench_switch: OVS: $("$vswitchd" --version | head -1)"
	else
		note "OVS skipped: $ovs_why"
		duts=$(sed 's/\bovs\b//' <<<"$duts")
	fi
	;;
esac
if [[ " $duts " == *" testpmd "* || " $duts " == *" tpmdpacked "* ]] &&
	! command -v "$testpmd" >/dev/null; then
	note "testpmd skipped: no $testpmd"
	duts=$(sed 's/\btestpmd\b//; s/\btpmdpacked\b//' <<<"$duts")
fi

# 1. comparison: per size, repetitions of (hvswitch, testpmd, ovs), or turns
for size in $sizes; do
	if [ "$slices" -gt 0 ]; then
		compare_turns "$size"
		continue
	fi
	for ((rep = 1; rep <= reps; rep++)); do
		for dut in $duts; do
			run_one "$dut,$size" "$dut" "$size" 2 1 1
		done
	done
done

# 2. cost curves of hvswitch and OVS: with turns, each point in turns with
# the first; else each repetition going through the points, the DUTs of a
# point one after the other
[ "$ovs_ok" = 1 ] || curve_duts=$(sed 's/\bovs\b//' <<<"$curve_duts")
if [ -n "$curves" ] && [[ " $curve_duts " == *" ovs "* ]]; then
	ovs_vsctl set bridge br0 "${curve_ovs_cfg[@]}" >>"$ovs_dir/vsctl.log" 2>&1 ||
		die "OVS bridge: $(tail -2 "$ovs_dir/vsctl.log")"
fi
for curve in $curves; do
	case $curve in
	ports) points=$ports_list ;;
	macs) points=$macs_list ;;
	*) die "unknown curve $curve" ;;
	esac
	if [ "$slices" -gt 0 ]; then
		for pt in $points; do
			curve_turns "$curve" "$pt" "${points%% *}"
		done
		continue
	fi
	for ((rep = 1; rep <= curve_reps; rep++)); do
		for pt in $points; do
			for dut in $curve_duts; do
				# hvswitch's points keep their plain keys; OVS's are prefixed
				key=$curve,$pt
				[ "$dut" = hvswitch ] || key=$dut:$key
				if [ "$curve" = ports ]; then
					run_one "$key" "$dut" "$curve_size" "$pt" 1 1 "${curve_sw_opts[@]}"
				else
					run_one "$key" "$dut" "$curve_size" 2 "$pt" "$pt" "${curve_sw_opts[@]}"
				fi
			done
		done
	done
done

# ---------------------------------------------------------------- report
[ -n "$sizes" ] && echo
if [ -z "$sizes" ]; then
	:
elif [ "$slices" -gt 0 ]; then
	echo "Comparison in turns: median rx packets/s (Mpps) per DUT over its turns; turns in Mpps"
else
	echo "Comparison: median rx packets/s (Mpps) per DUT; runs as Mpps(forwarding thread's CPU %)"
fi
# comparison_table ARRAY: per size, the medians of ARRAY[dut,size] and their ratios
comparison_table() {
	local -n runs=$1
	local size h t o

	printf '%-6s %10s %10s %10s %11s %8s\n' size hvswitch testpmd ovs hv/testpmd hv/ovs
	for size in $sizes; do
		h=$(bench_median "${runs[hvswitch,$size]:-}")
		t=$(bench_median "${runs[testpmd,$size]:-}")
		o=$(bench_median "${runs[ovs,$size]:-}")
		printf '%-6s %10s %10s %10s %11s %8s\n' "$size" "$(mpps "$h")" "$(mpps "$t")" \
			"$(mpps "$o")" "$(ratio "$h" "$t")" "$(ratio "$h" "$o")"
	done
}
[ -z "$sizes" ] || comparison_table pps
for size in $sizes; do
	for dut in hvswitch hvcap hvbase testpmd ovs hvpacked tpmdpacked hvbasepacked; do
		[ -n "${detail[$dut,$size]:-}" ] && printf '  %-5s %-9s %s\n' "$size" "$dut" "${detail[$dut,$size]}"
	done
done
if [ "$slices" -eq 0 ] && [ -n "$sizes" ]; then
	echo
	echo "Clean runs only (generator and forwarding thread each >= 95 % of their CPU):"
	comparison_table clean
fi
for curve in $curves; do
	case $curve in
	ports) points=$ports_list; what="ports (2 carry traffic, the others connected and idle), 1 MAC each way" ;;
	macs) points=$macs_list; what="K source MACs on port 0 -> K destination MACs on port 1 (2K table entries), 2 ports" ;;
	esac
	echo
	echo "cost curves, $curve_size B: $what (Mpps, relative to the first point)"
	[ "$slices" -gt 0 ] && echo "(in turns: Mpps the median of a point's turns; relative and" \
		"hv/ovs the medians of the rounds' ratios, each point in turns with the first point and OVS)"
	printf '%-8s %10s %9s %10s %9s %7s   %s\n' "$curve" hvswitch relative ovs relative hv/ovs \
		"runs (hvswitch; ovs)"
	obase=
	for pt in $points; do
		m=$(bench_median "${pps[$curve,$pt]:-}")
		o=$(bench_median "${pps[ovs:$curve,$pt]:-}")
		[ -n "$obase" ] || obase=$o
		printf '%-8s %10s %9s %10s %9s %7s   %s; %s\n' "$pt" "$(mpps "$m")" \
			"$(curve_ratio "$curve" "$pt" first)" "$(mpps "$o")" "$(ratio "$o" "$obase")" \
			"$(curve_ratio "$curve" "$pt" ovs)" "${detail[$curve,$pt]:-}" "${detail[ovs:$curve,$pt]:-}"
	done
	[ -n "$base_build" ] || continue
	echo "  base ($base_build): Mpps, relative, hvswitch/base"
	base=
	for pt in $points; do
		m=$(bench_median "${pps[base:$curve,$pt]:-}")
		[ -n "$base" ] || base=$m
		printf '  %-8s %10s %9s %7s   %s\n' "$pt" "$(mpps "$m")" "$(ratio "$m" "$base")" \
			"$(curve_ratio "$curve" "$pt" base)" "${detail[base:$curve,$pt]:-}"
	done
done

echo
for size in $sizes; do
	h=$(bench_median "${pps[hvswitch,$size]:-}")
	t=$(bench_median "${pps[testpmd,$size]:-}")
	o=$(bench_median "${pps[ovs,$size]:-}")
	echo "SUMMARY size=$size hvswitch_pps=$h testpmd_pps=$t ovs_pps=$o" \
		"vs_testpmd=$(ratio "$h" "$t") vs_ovs=$(ratio "$h" "$o")"
	if [ "$slices" -gt 0 ]; then
		echo "SUMMARY size=$size rounds=$slices" \
			"vs_testpmd_rounds=$(rounds_median "${rounds[testpmd,$size]:-}")" \
			"vs_ovs_rounds=$(rounds_median "${rounds[ovs,$size]:-}")"
		[[ " $duts " == *" hvcap "* || " $duts " == *" hvbase "* ]] &&
			echo "SUMMARY size=$size rounds=$slices" \
				"hvcap_vs_hvswitch_rounds=$(rounds_median "${rounds[hvcap,hvswitch,$size]:-}")" \
				"hvswitch_vs_hvbase_rounds=$(rounds_median "${rounds[hvswitch,hvbase,$size]:-}")"
		[[ " $duts " == *" hvpacked "* ]] &&
			echo "SUMMARY size=$size rounds=$slices packed" \
				"hvpacked_vs_tpmdpacked_rounds=$(rounds_median "${rounds[hvpacked,tpmdpacked,$size]:-}")" \
				"hvpacked_vs_hvswitch_rounds=$(rounds_median "${rounds[hvpacked,hvswitch,$size]:-}")" \
				"hvpacked_vs_hvbasepacked_rounds=$(rounds_median "${rounds[hvpacked,hvbasepacked,$size]:-}")" \
				"packed_over_split_rounds=$(rounds_median "${rounds[packed_over_split,$size]:-}" 3)" \
				"packed_not_below_split=$(not_below "${rounds[packed_over_split,$size]:-}")" \
				"packed_over_split_bound_rounds=$(rounds_median "${bound_rounds[packed_over_split,$size]:-}" 3)($(wc -w <<<"${bound_rounds[packed_over_split,$size]:-}"))"
		# who was the bottleneck: the DUT where its ring turned bursts away
		line="SUMMARY size=$size rounds=$slices dut_bound (median % of bursts not taken whole)"
		for dut in $duts; do
			[ -n "${full_pcts[$dut,$size]:-}" ] && line+=" $dut=$(bench_median "${full_pcts[$dut,$size]}")"
		done
		echo "$line"
		# the same ratios over the rounds where both DUTs set the rate
		line="SUMMARY size=$size rounds=$slices dut_bound_rounds (>= $bound_pct %; median(rounds))"
		for v in testpmd ovs hvpacked,tpmdpacked hvpacked,hvswitch hvpacked,hvbasepacked; do
			[ -n "${rounds[$v,$size]:-}" ] || continue
			case $v in
			testpmd | ovs) line+=" vs_$v=$(bound_median "$v,$size")" ;;
			*) line+=" ${v%,*}_vs_${v#*,}=$(bound_median "$v,$size")" ;;
			esac
		done
		echo "$line"
	fi
done
target() {
	local name=$1 r=$2 min=$3

	if [ "$r" = n/a ]; then
		echo "SUMMARY target=$name n/a"
	elif awk -v r="$r" -v m="$min" 'BEGIN { exit !(r >= m) }'; then
		echo "SUMMARY target=$name met ($r >= $min)"
	else
		echo "SUMMARY target=$name missed ($r < $min)"
	fi
}
for curve in $curves; do
	case $curve in ports) points=$ports_list ;; macs) points=$macs_list ;; esac
	obase=
	for pt in $points; do
		m=$(bench_median "${pps[$curve,$pt]:-}")
		o=$(bench_median "${pps[ovs:$curve,$pt]:-}")
		[ -n "$obase" ] || obase=$o
		last=$(curve_ratio "$curve" "$pt" first)
		echo "SUMMARY curve=$curve $curve=$pt pps=$m relative=$last" \
			"ovs_pps=$o ovs_relative=$(ratio "$o" "$obase") vs_ovs=$(curve_ratio "$curve" "$pt" ovs)"
		[ "$o" = 0 ] || target "curve_${curve}_${pt}_vs_ovs" "$(curve_ratio "$curve" "$pt" ovs)" 1.5
	done
	# flat at scale: the last point against the first
	case $curve in
	ports) target "curve_ports_last_vs_first" "$last" 0.95 ;;
	macs) target "curve_macs_last_vs_first" "$last" 0.9 ;;
	esac
done
if [[ " $sizes " == *" 64 "* ]] && [ "$slices" -gt 0 ] && [[ " $duts " == *" hvpacked "* ]]; then
	# the packed ring against testpmd no worse than the split ring against it:
	# per round the one ratio over the other (turns seconds apart), their median
	target "64B_packed_vs_testpmd_packed_not_below_split" \
		"$(rounds_median "${rounds[packed_over_split,64]:-}" 3)" 1.000
	# the same over the rounds where the DUTs set the rate (5 at least of each)
	split=$(rounds_median "${bound_rounds[testpmd,64]:-}")
	v=$(rounds_median "${bound_rounds[hvpacked,tpmdpacked,64]:-}")
	if [ "$(wc -w <<<"${bound_rounds[testpmd,64]:-}")" -lt 5 ] ||
		[ "$(wc -w <<<"${bound_rounds[hvpacked,tpmdpacked,64]:-}")" -lt 5 ]; then
		split=n/a
		v=n/a
	fi
	target "64B_packed_vs_testpmd_packed_not_below_split_dut_bound" "$v" "$split"
	# paired, over the rounds where all four DUTs set their own rate (5 at least)
	v=$(rounds_median "${bound_rounds[packed_over_split,64]:-}" 3)
	[ "$(wc -w <<<"${bound_rounds[packed_over_split,64]:-}")" -ge 5 ] || v=n/a
	target "64B_packed_vs_testpmd_packed_not_below_split_all_bound" "$v" 1.000
fi
if [[ " $sizes " == *" 64 "* ]] && [ "$slices" -gt 0 ]; then
	target "64B_vs_testpmd" "$(rounds_median "${rounds[testpmd,64]:-}")" 0.9
	target "64B_vs_ovs" "$(rounds_median "${rounds[ovs,64]:-}")" 1.5
elif [[ " $sizes " == *" 64 "* ]]; then
	h=$(bench_median "${pps[hvswitch,64]:-}")
	target "64B_vs_testpmd" "$(ratio "$h" "$(bench_median "${pps[testpmd,64]:-}")")" 0.9
	target "64B_vs_ovs" "$(ratio "$h" "$(bench_median "${pps[ovs,64]:-}")")" 1.5
fi
# the setup the figures belong to: the packed ring's figures depend on it
echo "SUMMARY setup memory=$([ "$huge" = 1 ] && echo hugepages-2MiB || echo no-huge-4KiB)" \
	"generator_burst=$gen_burst packed_vec=$packed_vec"
line="SUMMARY generators (virtio-user paths, port 0)"
for dut in $duts; do
	[ -n "${gen_path[$dut]:-}" ] && line+=" $dut=${gen_path[$dut]}"
done
echo "$line"
# asked for (by default, or in HV_BENCH_DUTS) but not measured
ovs_asked=${HV_BENCH_DUTS:-$([ "$packed" = 1 ] || echo ovs)}
[ "$ovs_ok" = 1 ] || [[ " $ovs_asked " != *" ovs "* ]] || note "OVS was not measured: $ovs_why"
[ "$failures" -eq 0 ] || die "$failures run(s) failed"
exit 0
