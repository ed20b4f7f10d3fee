#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Benchmark of drivers/vhost: app/hvswitch (our vhost-user backend) against
# dpdk-testpmd io forwarding on DPDK's net_vhost PMD, both cross-connecting two
# vhost-user ports, driven by the same virtio-user generator (hv_pktgen).
# See doc/performance.rst for the method.
#
# usage: tests/perf/bench_vhost.sh [BUILD_DIR]      (default ./build)
#
# Builds nothing. Environment (defaults in brackets):
#   HV_BENCH_OURS        our DUT: hv_fwd (drivers/vhost alone) or hvswitch [hv_fwd]
#   HV_BENCH_SIZES       frame sizes, bytes without FCS        ["64 1518"]
#   HV_BENCH_REPS        runs of each (DUT, size), interleaved  [3]
#   HV_BENCH_WARMUP_S    generator warm-up before measuring     [3]
#   HV_BENCH_DURATION_S  measured window                        [10]
#   HV_BENCH_GEN_CPU     CPU of the generator and of the DUTs' main lcores [0]
#   HV_BENCH_DUT_CPU     CPU of the DUTs' forwarding lcore      [1]
#   HV_BENCH_HUGEPAGES   1: hugepages (--single-file-segments) instead of --no-huge [0]
#   HV_BENCH_TESTPMD     testpmd binary                         [dpdk-testpmd]
#   HV_BENCH_PKTGEN      generator binary   [BUILD_DIR/tests/perf/hv_pktgen]
#   HV_BENCH_KEEP_LOGS   1: keep the run directory with every log [0]
#
# Prints one "RUN ..." line per run, then a table and one "SUMMARY ..." line
# per size. Exit status 0 when every run produced a result.
set -u -o pipefail

build=${1:-./build}
ours=${HV_BENCH_OURS:-hv_fwd}
sizes=${HV_BENCH_SIZES:-64 1518}
reps=${HV_BENCH_REPS:-3}
warmup=${HV_BENCH_WARMUP_S:-3}
duration=${HV_BENCH_DURATION_S:-10}
gen_cpu=${HV_BENCH_GEN_CPU:-0}
dut_cpu=${HV_BENCH_DUT_CPU:-1}
testpmd=${HV_BENCH_TESTPMD:-dpdk-testpmd}
hvswitch=$build/app/hvswitch/hvswitch
pktgen=${HV_BENCH_PKTGEN:-$build/tests/perf/hv_pktgen}

if [ "${HV_BENCH_HUGEPAGES:-0}" = 1 ]; then
	dut_mem=(-m 512 --single-file-segments)
	gen_mem=(-m 256 --single-file-segments)
else
	dut_mem=(--no-huge -m 512)
	gen_mem=(--no-huge -m 256)
fi

die() {
	echo "bench_vhost: $*" >&2
	exit 1
}

[ -x "$hvswitch" ] || die "no $hvswitch (build first: ninja -C $build)"
[ -x "$pktgen" ] || die "no $pktgen (build first: ninja -C $build)"
command -v "$testpmd" >/dev/null || die "no $testpmd"
[ "$gen_cpu" != "$dut_cpu" ] || die "generator and DUT need two different CPUs"
if [ "$gen_cpu" -lt "$dut_cpu" ]; then
	dut_lcores=$gen_cpu,$dut_cpu
else
	dut_lcores=$dut_cpu,$gen_cpu
fi

rundir=$(mktemp -d /tmp/hvbench.XXXXXX) || die "mktemp failed"
s0=$rundir/p0.sock
s1=$rundir/p1.sock
pids=()      # processes to stop on exit

note() {
	echo "bench_vhost: $*" >&2
}

# stop_pid, forget_pid, bench_median, bench_field, testpmd_start, testpmd_quit
. "$(dirname "$0")/bench_lib.sh"

cleanup() {
	local pid

	for pid in "${pids[@]}"; do
		stop_pid "$pid" 5
	done
	pids=()
	if [ -n "$testpmd_fd" ]; then
		exec {testpmd_fd}>&-
		testpmd_fd=
	fi
	rm -f "$s0" "$s1"
	# the DUTs' and generators' DPDK runtime directories (--file-prefix hvb$$...)
	rm -rf /var/run/dpdk/hvb$$?*
	if [ "${HV_BENCH_KEEP_LOGS:-0}" = 1 ]; then
		echo "bench_vhost: logs kept in $rundir" >&2
	else
		rm -rf "$rundir"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Wait until both sockets exist or the DUT died; 20 s at most.
wait_sockets() {
	local pid=$1 i

	for ((i = 0; i < 200; i++)); do
		[ -S "$s0" ] && [ -S "$s1" ] && return 0
		kill -0 "$pid" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# Start a DUT in the background; sets dut_pid.
start_dut() {
	local dut=$1 log=$2 prefix=$3

	rm -f "$s0" "$s1"
	case $dut in
	hvswitch)
		# main lcore (sleeps) on the generator's CPU, the PMD lcore alone on its CPU
		if [ "$ours" = hv_fwd ]; then
			# drivers/vhost alone: a cross-connect, like testpmd io
			"$build/tests/perf/hv_fwd" -l "$dut_lcores" --main-lcore "$gen_cpu" --no-pci \
				"${dut_mem[@]}" --file-prefix "$prefix" -- --port "$s0" --port "$s1" \
				>"$log" 2>&1 &
		else
			# the whole switch: learning, lookup, per-port counters
			"$hvswitch" -l "$dut_lcores" --main-lcore "$gen_cpu" --no-pci "${dut_mem[@]}" \
				--file-prefix "$prefix" -- --run-dir "$rundir" \
				--config "$rundir/hvswitch.json" --port "$s0" --port "$s1" >"$log" 2>&1 &
		fi
		dut_pid=$!
		;;
	testpmd)
		testpmd_start "$rundir/testpmd.in" "$log" "$s0" "$s1" "$testpmd" -l "$dut_lcores" \
			--main-lcore "$gen_cpu" --no-pci "${dut_mem[@]}" --file-prefix "$prefix" \
			-- --txd=1024 --rxd=1024 || die "mkfifo failed"
		dut_pid=$testpmd_pid
		;;
	esac
	pids+=("$dut_pid")
}

stop_dut() {
	local dut=$1 pid=$2

	[ "$dut" = testpmd ] && testpmd_quit
	stop_pid "$pid" 10
	forget_pid "$pid"
	rm -f "$s0" "$s1" "$rundir/testpmd.in"
}

declare -A rx_pps        # [dut,size] -> space-separated rx_pps of its runs
declare -A clean_pps     # the same, runs where both CPUs were ours (>= 95 %)
failures=0
run=0

run_one() {
	local dut=$1 size=$2 rep=$3 log gen_log gen_pid line rc

	run=$((run + 1))
	log=$rundir/$run-$dut-$size-dut.log
	gen_log=$rundir/$run-$dut-$size-gen.log
	start_dut "$dut" "$log" "hvb$$d$run"
	if ! wait_sockets "$dut_pid"; then
		echo "bench_vhost: $dut did not create its sockets; its log:" >&2
		tail -20 "$log" >&2
		stop_dut "$dut" "$dut_pid"
		failures=$((failures + 1))
		return
	fi
	"$pktgen" -l "$gen_cpu" --no-pci "${gen_mem[@]}" --file-prefix "hvb$$g$run" \
		--log-level=pmd.net.virtio.*:warning \
		--vdev "net_virtio_user0,path=$s0,queues=1,queue_size=1024" \
		--vdev "net_virtio_user1,path=$s1,queues=1,queue_size=1024" \
		-- --size "$size" --warmup-s "$warmup" --duration-s "$duration" \
		--watch-pid "$dut_pid" >"$gen_log" 2>&1 &
	gen_pid=$!
	pids+=("$gen_pid")
	wait "$gen_pid"
	rc=$?
	forget_pid "$gen_pid"
	stop_dut "$dut" "$dut_pid"
	line=$(grep '^RESULT ' "$gen_log" | tail -1)
	if [ "$rc" -ne 0 ] || [ -z "$line" ]; then
		echo "bench_vhost: run $run ($dut, $size B) failed (generator exit $rc); logs:" >&2
		tail -5 "$gen_log" >&2
		tail -10 "$log" >&2
		failures=$((failures + 1))
		return
	fi
	echo "RUN dut=$dut rep=$rep ${line#RESULT }"
	rx_pps[$dut,$size]+="$(bench_field rx_pps "$line") "
	# a run is clean when neither the generator nor the forwarding lcore lost
	# its CPU to other work (the machine may be shared)
	if awk -v g="$(bench_field gen_cpu_pct "$line")" -v d="$(bench_field dut_fwd_cpu_pct "$line")" \
		'BEGIN { exit !(g >= 95 && d >= 95) }'; then
		clean_pps[$dut,$size]+="$(bench_field rx_pps "$line") "
	fi
}


echo "bench_vhost: $(date -u +%Y-%m-%dT%H:%M:%SZ) $(uname -r)," \
	"$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) CPUs"
echo "bench_vhost: our DUT is $ours (HV_BENCH_OURS=hv_fwd: drivers/vhost cross-connect;" \
	"hvswitch: the L2 switch)"
echo "bench_vhost: generator CPU $gen_cpu, forwarding lcore CPU $dut_cpu, sizes $sizes," \
	"$reps runs each, warm-up $warmup s, window $duration s, memory: ${dut_mem[*]}"
for size in $sizes; do
	for ((rep = 1; rep <= reps; rep++)); do
		run_one hvswitch "$size" "$rep"
		run_one testpmd "$size" "$rep"
	done
done

echo
printf '%-6s %16s %16s %8s   %s\n' size hvswitch_pps testpmd_pps ratio "runs (hvswitch | testpmd)"
for size in $sizes; do
	a=$(bench_median "${rx_pps[hvswitch,$size]:-}")
	b=$(bench_median "${rx_pps[testpmd,$size]:-}")
	ratio=$(awk -v a="$a" -v b="$b" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }')
	printf '%-6s %16.0f %16.0f %8s   %s| %s\n' "$size" "$a" "$b" "$ratio" \
		"${rx_pps[hvswitch,$size]:-}" "${rx_pps[testpmd,$size]:-}"
done
echo
echo "clean runs only (generator and forwarding lcore each >= 95 % of their CPU):"
printf '%-6s %16s %16s %8s   %s\n' size hvswitch_pps testpmd_pps ratio "runs (hvswitch | testpmd)"
for size in $sizes; do
	a=$(bench_median "${clean_pps[hvswitch,$size]:-}")
	b=$(bench_median "${clean_pps[testpmd,$size]:-}")
	ratio=$(awk -v a="$a" -v b="$b" 'BEGIN { if (a > 0 && b > 0) printf "%.2f", a / b; else print "n/a" }')
	printf '%-6s %16.0f %16.0f %8s   %s| %s\n' "$size" "$a" "$b" "$ratio" \
		"${clean_pps[hvswitch,$size]:-}" "${clean_pps[testpmd,$size]:-}"
done
for size in $sizes; do
	a=$(bench_median "${rx_pps[hvswitch,$size]:-}")
	b=$(bench_median "${rx_pps[testpmd,$size]:-}")
	echo "SUMMARY size=$size hvswitch_pps=$a testpmd_pps=$b ratio=$(awk -v a="$a" -v b="$b" \
		'BEGIN { if (b > 0) printf "%.3f", a / b; else print "n/a" }')"
done
[ "$failures" -eq 0 ] || die "$failures run(s) failed"
exit 0
