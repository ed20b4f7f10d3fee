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
# Turns (default): this host's speed changes by 2x within seconds, so the
# three modes run side by side, each with its own switch and generator, and
# take HV_BENCH_TURNS [20] rounds of turns of HV_BENCH_TURN_S [2] seconds:
# the mode whose turn it is runs, the other switches and generators are
# paused (SIGSTOP). A turn's rate comes from the generator's ticks (bytes
# received every 100 ms) after its first 0.3 s, its PMD busy share from the
# switch's counters over the same span; the ratios are read within a round
# and their median is reported. The order rotates every round and runs
# backwards every other 3 rounds; the turns must fit 240 s (the receivers
# are learned once, and age out at 300 s).
# HV_BENCH_TURNS=0: separate runs instead, HV_BENCH_DURATION_S [5] seconds
# each, HV_BENCH_REPS [3] repetitions of pass, seg, mtu back to back with one
# switch. HV_BENCH_DURATION_S is also the micro benchmark's time per variant.
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
# and with turns one "TURN round=R pass_gbps=.. pass_capacity_gbps=.. ..."
# line per round.
set -u -o pipefail

build=${1:-./build}
gen_cpu=${HV_BENCH_GEN_CPU:-0}
dut_cpu=${HV_BENCH_DUT_CPU:-1}
duration=${HV_BENCH_DURATION_S:-5}
reps=${HV_BENCH_REPS:-3}
turns=${HV_BENCH_TURNS:-20}
turn_s=${HV_BENCH_TURN_S:-2}
prefix=hvbo$$
rundir=$(mktemp -d /tmp/hv-bench-offload-XXXXXX)
sw_pid=
declare -A sw_pids gen_pids gen_procs # turns: per mode (gen_pids: of timeout)

die() {
	echo "bench_offload: $*" >&2
	exit 1
}
note() {
	echo "bench_offload: $*" >&2
}

cleanup() {
	local p

	# paused ones first resumed, all together: a generator's port stop talks to its switch
	for p in "${gen_procs[@]}" "${sw_pids[@]}"; do
		kill -CONT "$p" 2>/dev/null
	done
	for p in "${gen_pids[@]}" "${sw_pids[@]}" $sw_pid; do
		stop_pid "$p" 10 TERM
	done
	rm -rf "$rundir" /var/run/dpdk/"${prefix}"*
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

[[ $turns =~ ^[0-9]+$ ]] || die "HV_BENCH_TURNS must be a number of rounds (0: separate runs)"
[[ $turn_s =~ ^[0-9]+(\.[0-9]+)?$ ]] && awk -v s="$turn_s" 'BEGIN { exit !(s >= 1) }' ||
	die "HV_BENCH_TURN_S must be seconds, at least 1"
# the receivers are learned once; the switches age addresses out after 300 s
awk -v n="$turns" -v s="$turn_s" 'BEGIN { exit !(n * s * 3 <= 240) }' ||
	die "turns must fit 240 s (HV_BENCH_TURNS x HV_BENCH_TURN_S x 3): the switches'" \
		"MAC tables age the learned receivers out at 300 s"
if [ "$turns" -gt 0 ]; then
	# three switches and three generators at once in the 1024 pages
	sw_mem=("${sw_mem[@]/512/256}")
	sw_mem=("${sw_mem[@]/1024/256}")
	gen_mem=("${gen_mem[@]/1024/256}")
fi

# start_switch NAME: a switch in $rundir/NAME, PMD lcore alone on its CPU,
# main lcore with the generator; sets sw_pid
start_switch() {
	local d=$rundir/$1

	mkdir -p "$d/hv"
	"$rundir/hvswitch" -l "$gen_cpu,$dut_cpu" --main-lcore "$gen_cpu" --no-pci "${sw_mem[@]}" \
		--file-prefix "${prefix}sw$1" -- --run-dir "$d/hv" --config "$d/hv/hvswitch.json" \
		--port "$d/p0.sock" --port "$d/p1.sock" >"$d/hvswitch.log" 2>&1 &
	sw_pid=$!
	for _ in $(seq 1200); do
		[ -S "$d/p0.sock" ] && [ -S "$d/p1.sock" ] && return 0
		kill -0 "$sw_pid" 2>/dev/null || die "hvswitch exited: $(tail -3 "$d/hvswitch.log")"
		sleep 0.05
	done
	die "hvswitch sockets did not appear"
}

# gen_cmd NAME MODE SECONDS [TICK_MS]: sets gen to the generator's command
# line for switch NAME
gen_cmd() {
	local d=$rundir/$1

	shift
	gen=(taskset -c "$gen_cpu" "$rundir/bench_offload" -l "$gen_cpu" --no-pci "${gen_mem[@]}"
		--file-prefix "${prefix}gen$1"
		--vdev "net_virtio_user0,path=$d/p0.sock,queues=1,queue_size=256"
		--vdev "net_virtio_user1,path=$d/p1.sock,queues=1,queue_size=256"
		--log-level=6 -- switch "$@")
}

# busy_cycles and total_cycles of the PMD of switch NAME
pmd_cycles() {
	"$rundir/hvctl" --socket "$rundir/$1/hv/hvswitch.sock" --json stats |
		/usr/bin/python3 -c 'import json, sys
p = json.load(sys.stdin)["pmds"][0]
print(p["busy_cycles"], p["total_cycles"])'
}

# One run on switch "main": prints the RUN line, then "gbps busy_fraction".
run_mode() {
	local mode=$1 out before after
	before=$(pmd_cycles main)
	gen_cmd main "$mode" "$duration"
	out=$(timeout -k 5 $((duration + 30)) "${gen[@]}" 2>"$rundir/gen.log" | grep '^SWITCH')
	[ -n "$out" ] || { echo "RUN mode=$mode failed: $(tail -2 "$rundir/gen.log")" >&2; return 1; }
	after=$(pmd_cycles main)
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

declare -A vals caps
ratios=()
cap_ratios=()
if [ "$turns" -eq 0 ]; then
	# Repetitions of pass, seg, mtu back to back: ratios within a repetition.
	start_switch main
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
	# the switch's PMD busy-polls the CPU the micro benchmark runs on
	stop_pid "$sw_pid" 10 TERM
	sw_pid=
else
	# Turns: each mode with its own switch and generator, paused when not its turn.
	modes=(pass seg mtu)
	for mode in "${modes[@]}"; do
		start_switch "$mode"
		sw_pids[$mode]=$sw_pid
		sw_pid=
		gen_cmd "$mode" "$mode" 3600 100
		# bounded even if this script is killed outright
		timeout -k 10 600 "${gen[@]}" >"$rundir/$mode/gen.out" 2>"$rundir/$mode/gen.log" &
		gen_pids[$mode]=$!
		# warmed up (1 s) and receiving
		for ((i = 0; i < 600; i++)); do
			n=$(awk '$1 == "TICK" && substr($3, 7) + 0 > 0 { n++ } END { print n + 0 }' \
				"$rundir/$mode/gen.out")
			[ "$n" -gt 12 ] && break
			kill -0 "${gen_pids[$mode]}" 2>/dev/null ||
				die "$mode generator exited: $(tail -2 "$rundir/$mode/gen.log")"
			sleep 0.1
		done
		[ "$n" -gt 12 ] || die "$mode: nothing received"
		# paused and resumed: the generator itself (taskset execs it), not timeout
		gen_procs[$mode]=$(pgrep -P "${gen_pids[$mode]}")
		[ -n "${gen_procs[$mode]}" ] || die "$mode: generator not found"
		kill -STOP "${gen_procs[$mode]}" "${sw_pids[$mode]}"
	done
	for ((r = 1; r <= turns; r++)); do
		declare -A g_rep=() c_rep=()
		for ((k = 0; k < 3; k++)); do
			# rotating, and backwards every other 3 rounds: each mode goes
			# before each other as often as after
			(((r / 3) % 2)) && i=$((2 - k)) || i=$k
			mode=${modes[(i + r) % 3]}
			kill -CONT "${sw_pids[$mode]}" "${gen_procs[$mode]}"
			sleep 0.3
			before=$(pmd_cycles "$mode")
			t0=$(date +%s%N)
			sleep "$(awk -v s="$turn_s" 'BEGIN { print s - 0.3 }')"
			t1=$(date +%s%N)
			after=$(pmd_cycles "$mode")
			kill -STOP "${gen_procs[$mode]}" "${sw_pids[$mode]}"
			g=$(bench_tick_rate "$rundir/$mode/gen.out" bytes "$t0" "$t1" |
				awk '{ if ($1 > 0) printf "%.2f", $1 * 8 / 1e9 }')
			[[ $g =~ ^[0-9.]+$ ]] || { echo "TURN round=$r mode=$mode: no ticks" >&2; continue; }
			c=$(awk -v g="$g" -v b="$before" -v a="$after" 'BEGIN { split(b, x, " ");
				split(a, y, " "); f = (y[1] - x[1]) / (y[2] - x[2]);
				printf "%.2f", (f > 0 ? g / f : 0) }')
			g_rep[$mode]=$g
			c_rep[$mode]=$c
			vals[$mode]+="$g "
			caps[$mode]+="$c "
		done
		line="TURN round=$r"
		for mode in "${modes[@]}"; do
			line+=" ${mode}_gbps=${g_rep[$mode]:-} ${mode}_capacity_gbps=${c_rep[$mode]:-}"
		done
		if [ -n "${g_rep[pass]:-}" ] && [ -n "${g_rep[mtu]:-}" ]; then
			ratios+=("$(ratio "${g_rep[pass]}" "${g_rep[mtu]}")")
			cap_ratios+=("$(ratio "${c_rep[pass]}" "${c_rep[mtu]}")")
			line+=" pass/mtu=${ratios[-1]} capacity_pass/mtu=${cap_ratios[-1]}"
		fi
		echo "$line" >&2
	done
	# all resumed first: a generator's port stop talks to its switch
	for mode in "${modes[@]}"; do
		kill -CONT "${sw_pids[$mode]}" "${gen_procs[$mode]}"
	done
	for mode in "${modes[@]}"; do
		stop_pid "${gen_pids[$mode]}" 10 TERM
		stop_pid "${sw_pids[$mode]}" 10 TERM
	done
	gen_pids=()
	gen_procs=()
	sw_pids=()
fi
declare -A gbps capacity
for mode in pass seg mtu; do
	gbps[$mode]=$(tr ' ' '\n' <<<"${vals[$mode]:-}" | grep . | median)
	capacity[$mode]=$(tr ' ' '\n' <<<"${caps[$mode]:-}" | grep . | median)
done

micro=$(taskset -c "$dut_cpu" "$rundir/bench_offload" -l "$dut_cpu" --no-pci "${sw_mem[@]}" \
	--file-prefix "${prefix}micro" --log-level=6 -- micro "$duration" 2>/dev/null | grep '^MICRO')
echo "$micro"

for mode in pass seg mtu; do
	echo "SUMMARY mode=$mode gbps=${gbps[$mode]:-n/a} pmd_capacity_gbps=${capacity[$mode]:-n/a}"
done
verdict() {
	awk -v r="$1" -v t="$2" 'BEGIN { printf "ratio=%.2f %s\n", r, (r >= t ? "met" : "missed") }'
}
per=per_round
[ "$turns" -gt 0 ] || per=per_rep
if [ ${#ratios[@]} -gt 0 ]; then
	echo "SUMMARY target=passthrough_5x_mtu $(verdict "$(printf '%s\n' "${ratios[@]}" | median)" 5) $per=${ratios[*]}"
	echo "SUMMARY target=passthrough_5x_mtu_pmd_capacity $(verdict "$(printf '%s\n' "${cap_ratios[@]}" | median)" 5) $per=${cap_ratios[*]}"
fi
ours=$(sed -n 's/^MICRO variant=ours_partial_csum copy_out=1 gbps=\([0-9.]*\).*/\1/p' <<<"$micro")
gso=$(sed -n 's/^MICRO variant=rte_gso copy_out=1 gbps=\([0-9.]*\).*/\1/p' <<<"$micro")
if [ -n "$ours" ] && [ -n "$gso" ]; then
	echo "SUMMARY target=ours_vs_rte_gso $(verdict "$(awk -v a="$ours" -v b="$gso" 'BEGIN { print a / b }')" 1)"
fi
