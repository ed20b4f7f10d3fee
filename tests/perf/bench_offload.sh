#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Offload benchmark, one run (see doc/performance.rst, "Offloads"):
#   1. through app/hvswitch between two virtio-user ports: 64 KiB TCP sends
#      with TSO negotiated, to a receiver with GUEST_TSO (pass-through) and
#      to one without (the switch segments), against 1514-byte frames
#      without offloads (the MTU path); TCP payload bytes/s received;
#   2. lib/offload's segmentation against DPDK's rte_gso on the same input,
#      in one process (bench_offload micro).
#
# usage: tests/perf/bench_offload.sh [BUILD_DIR]      (default ./build)
#
# Pinning (the project's convention): the switch's PMD alone on
# HV_BENCH_DUT_CPU [1]; the generator and the switch's main lcore on
# HV_BENCH_GEN_CPU [0]; the micro benchmark on HV_BENCH_DUT_CPU.
# HV_BENCH_DURATION_S [5] seconds per measurement, HV_BENCH_REPS [3]
# repetitions; each repetition runs pass, seg and mtu back to back, so the
# ratios are read within a repetition (this host's speed drifts by 2x
# between minutes) and their median is reported.
# HV_BENCH_HUGEPAGES: auto (2 MiB pages when hugetlbfs is mounted and 1024
# are free, as deployed), 1 (required) or 0 (--no-huge) [auto].
#
# Prints the RUN/MICRO lines, then
#   SUMMARY mode=pass|seg|mtu gbps=.. pmd_capacity_gbps=..
#     (gbps: TCP payload received per second, end to end, generator included;
#      pmd_capacity_gbps: gbps / the switch PMD's busy share, what the switch
#      itself would move at 100 % of its CPU: the figure the generator's own
#      cost does not cap)
#   SUMMARY target=passthrough_5x_mtu ratio=.. met|missed
#     (ratio: median over the repetitions of pass/mtu within a repetition;
#      also for the PMD capacity)
#   SUMMARY target=ours_vs_rte_gso ratio=.. met|missed
set -u -o pipefail

build=${1:-./build}
gen_cpu=${HV_BENCH_GEN_CPU:-0}
dut_cpu=${HV_BENCH_DUT_CPU:-1}
duration=${HV_BENCH_DURATION_S:-5}
reps=${HV_BENCH_REPS:-3}
prefix=hvbo$$
rundir=$(mktemp -d /tmp/hv-bench-offload-XXXXXX)
sw_pid=

die() {
	echo "bench_offload: $*" >&2
	exit 1
}

cleanup() {
	if [ -n "$sw_pid" ] && kill -0 "$sw_pid" 2>/dev/null; then
		kill -TERM "$sw_pid"
		wait "$sw_pid" 2>/dev/null
	fi
	rm -rf "$rundir" "/var/run/dpdk/${prefix}sw" "/var/run/dpdk/${prefix}gen" \
		"/var/run/dpdk/${prefix}micro"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

for b in app/hvswitch/hvswitch app/hvctl/hvctl tests/perf/bench_offload; do
	[ -x "$build/$b" ] || die "no $build/$b (build first: ninja -C $build)"
	cp "$build/$b" "$rundir/" || die "copy failed"
done

. "$(dirname "$0")/bench_lib.sh"
huge=$(bench_hugepages) || die "HV_BENCH_HUGEPAGES=1 needs hugetlbfs and 1024 free 2 MiB pages"
if [ "$huge" = 1 ]; then
	# --in-memory: no hugepage files left behind; the generator's guest
	# memory must be one memfd per list to be shared with the switch
	sw_mem=(-m 512 --in-memory)
	gen_mem=(-m 1024 --in-memory --single-file-segments)
	echo "MEMORY 2 MiB hugepages" >&2
else
	sw_mem=(--no-huge -m 1024)
	gen_mem=(--no-huge -m 1024)
	echo "MEMORY --no-huge" >&2
fi

# The switch: PMD lcore alone on its CPU, main lcore with the generator.
mkdir -p "$rundir/hv"
"$rundir/hvswitch" -l "$gen_cpu,$dut_cpu" --main-lcore "$gen_cpu" --no-pci "${sw_mem[@]}" \
	--file-prefix "${prefix}sw" -- --run-dir "$rundir/hv" --config "$rundir/hv/hvswitch.json" \
	--port "$rundir/p0.sock" --port "$rundir/p1.sock" \
	>"$rundir/hvswitch.log" 2>&1 &
sw_pid=$!
for _ in $(seq 1200); do
	[ -S "$rundir/p0.sock" ] && [ -S "$rundir/p1.sock" ] && break
	kill -0 "$sw_pid" 2>/dev/null || die "hvswitch exited: $(tail -3 "$rundir/hvswitch.log")"
	sleep 0.05
done
[ -S "$rundir/p1.sock" ] || die "hvswitch sockets did not appear"

# busy_cycles and total_cycles of the switch's PMD
pmd_cycles() {
	"$rundir/hvctl" --socket "$rundir/hv/hvswitch.sock" --json stats |
		/usr/bin/python3 -c 'import json, sys
p = json.load(sys.stdin)["pmds"][0]
print(p["busy_cycles"], p["total_cycles"])'
}

# One run: prints the RUN line, then "gbps busy_fraction".
run_mode() {
	local mode=$1 out before after
	before=$(pmd_cycles)
	out=$(timeout -k 5 $((duration + 30)) taskset -c "$gen_cpu" "$rundir/bench_offload" \
		-l "$gen_cpu" --no-pci "${gen_mem[@]}" --file-prefix "${prefix}gen" \
		--vdev "net_virtio_user0,path=$rundir/p0.sock,queues=1,queue_size=256" \
		--vdev "net_virtio_user1,path=$rundir/p1.sock,queues=1,queue_size=256" \
		--log-level=6 -- switch "$mode" "$duration" 2>"$rundir/gen.log" | grep '^SWITCH')
	[ -n "$out" ] || { echo "RUN mode=$mode failed: $(tail -2 "$rundir/gen.log")" >&2; return 1; }
	after=$(pmd_cycles)
	# the PMD's busy share over the run (warm-up included: an estimate)
	busy=$(awk -v b="$before" -v a="$after" 'BEGIN { split(b, x, " "); split(a, y, " ");
		printf "%.3f", (y[1] - x[1]) / (y[2] - x[2]) }')
	echo "RUN $out pmd_busy=$busy" >&2
	echo "$(sed -n 's/.*gbps=\([0-9.]*\).*/\1/p' <<<"$out") $busy"
}

median() {
	sort -g | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'
}

ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN { if (a != "" && b > 0) printf "%.2f", a / b }'
}

# Repetitions of pass, seg, mtu back to back: ratios within a repetition.
declare -A vals caps
ratios=()
cap_ratios=()
for ((r = 0; r < reps; r++)); do
	declare -A g_rep=() c_rep=()
	for mode in pass seg mtu; do
		res=$(run_mode "$mode")
		read -r g b <<<"$res"
		[[ $g =~ ^[0-9.]+$ ]] || continue
		g_rep[$mode]=$g
		# what the PMD would move at 100 % busy: the switch's own cost per byte
		c_rep[$mode]=$(awk -v g="$g" -v b="$b" 'BEGIN { printf "%.2f", (b > 0 ? g / b : 0) }')
		vals[$mode]+="$g "
		caps[$mode]+="${c_rep[$mode]} "
	done
	if [ -n "${g_rep[pass]:-}" ] && [ -n "${g_rep[mtu]:-}" ]; then
		ratios+=("$(ratio "${g_rep[pass]}" "${g_rep[mtu]}")")
		cap_ratios+=("$(ratio "${c_rep[pass]}" "${c_rep[mtu]}")")
		echo "REP $r pass/mtu=${ratios[-1]} capacity_pass/mtu=${cap_ratios[-1]}" >&2
	fi
done
declare -A gbps capacity
for mode in pass seg mtu; do
	gbps[$mode]=$(tr ' ' '\n' <<<"${vals[$mode]:-}" | grep . | median)
	capacity[$mode]=$(tr ' ' '\n' <<<"${caps[$mode]:-}" | grep . | median)
done

# the switch's PMD busy-polls the CPU the micro benchmark runs on
kill -TERM "$sw_pid" && wait "$sw_pid" 2>/dev/null
sw_pid=
micro=$(taskset -c "$dut_cpu" "$rundir/bench_offload" -l "$dut_cpu" --no-pci "${sw_mem[@]}" \
	--file-prefix "${prefix}micro" --log-level=6 -- micro "$duration" 2>/dev/null | grep '^MICRO')
echo "$micro"

for mode in pass seg mtu; do
	echo "SUMMARY mode=$mode gbps=${gbps[$mode]:-n/a} pmd_capacity_gbps=${capacity[$mode]:-n/a}"
done
verdict() {
	awk -v r="$1" -v t="$2" 'BEGIN { printf "ratio=%.2f %s\n", r, (r >= t ? "met" : "missed") }'
}
if [ ${#ratios[@]} -gt 0 ]; then
	echo "SUMMARY target=passthrough_5x_mtu $(verdict "$(printf '%s\n' "${ratios[@]}" | median)" 5) per_rep=${ratios[*]}"
	echo "SUMMARY target=passthrough_5x_mtu_pmd_capacity $(verdict "$(printf '%s\n' "${cap_ratios[@]}" | median)" 5) per_rep=${cap_ratios[*]}"
fi
ours=$(sed -n 's/^MICRO variant=ours_partial_csum copy_out=1 gbps=\([0-9.]*\).*/\1/p' <<<"$micro")
gso=$(sed -n 's/^MICRO variant=rte_gso copy_out=1 gbps=\([0-9.]*\).*/\1/p' <<<"$micro")
if [ -n "$ours" ] && [ -n "$gso" ]; then
	echo "SUMMARY target=ours_vs_rte_gso $(verdict "$(awk -v a="$ours" -v b="$gso" 'BEGIN { print a / b }')" 1)"
fi
