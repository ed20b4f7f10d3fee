#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Instructions per forwarded frame of a DUT of bench_vhost.sh, measured with
# valgrind's callgrind (works where perf does not, e.g. in nested guests).
#
# usage: tests/perf/profile_vhost.sh hvswitch|testpmd [SIZE] [BUILD_DIR]
#
# The DUT runs under callgrind with instrumentation off; the generator sends
# SIZE-byte frames (port 0 -> port 1); after HV_PROF_SETTLE_S (default 20) s,
# instrumentation is turned on for HV_PROF_WINDOW_S seconds (default 10) and
# off again. Frames forwarded inside the window are counted by the generator
# (its received frames per 50 ms, between the times instrumentation went on
# and off), so idle polling before traffic starts is not counted. The
# generator makes hvswitch learn both addresses first, as bench_switch.sh
# does: known unicast, not flooding. Prints the profile (functions by
# exclusive cost) and
# "PROFILE dut=... size=... frames=... ir_per_frame=...".
# For source lines, build with debug info: meson setup B -Ddebug=true.
# HV_PROF_PACKED=1 drives the DUT's packed ring (virtio-user packed_vq=1).
set -u -o pipefail
. "$(dirname "$0")/bench_lib.sh"

note() {
	echo "profile_vhost: $*" >&2
}

dut=${1:?usage: $0 hvswitch|testpmd [SIZE] [BUILD_DIR]}
size=${2:-64}
build=${3:-./build}
window=${HV_PROF_WINDOW_S:-10}
# HV_PROF_PACKED=1: the generator's virtio-user asks for the packed ring
vu_args=$([ "${HV_PROF_PACKED:-0}" = 1 ] && echo ",packed_vq=1")
settle=${HV_PROF_SETTLE_S:-20}
testpmd=${HV_BENCH_TESTPMD:-dpdk-testpmd}
pktgen=${HV_BENCH_PKTGEN:-$build/tests/perf/hv_pktgen}
out=${HV_PROF_OUT:-$(mktemp -d /tmp/hvprof.XXXXXX)}
s0=$out/p0.sock
s1=$out/p1.sock
pids=()

cleanup() {
	local pid i

	for pid in "${pids[@]}"; do
		kill -INT "$pid" 2>/dev/null
		for ((i = 0; i < 100; i++)); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	[ -n "$testpmd_fd" ] && exec {testpmd_fd}>&-
	rm -f "$s0" "$s1" "$out/testpmd.in"
	# the DPDK runtime directories of both processes (no --in-memory under valgrind)
	rm -rf /var/run/dpdk/"hvp$$d" /var/run/dpdk/"hvp$$g" 2>/dev/null
}
trap cleanup EXIT
trap 'exit 130' INT TERM

vg=(valgrind --tool=callgrind --instr-atstart=no --compress-strings=no --compress-pos=no --callgrind-out-file="$out/callgrind.out")
case $dut in
hvswitch)
	"${vg[@]}" "$build/app/hvswitch/hvswitch" -l 0,1 --main-lcore 0 --no-pci --no-huge \
		-m 512 --file-prefix "hvp$$d" -- --run-dir "$out" --config "$out/hvswitch.json" \
		--port "$s0" --port "$s1" >"$out/dut.log" 2>&1 &
	dut_pid=$!
	;;
testpmd)
	: >"$out/dut.log"
	testpmd_start "$out/testpmd.in" "$out/dut.log" "$s0" "$s1" "${vg[@]}" "$testpmd" -l 0,1 \
		--main-lcore 0 --no-pci --no-huge -m 512 --file-prefix "hvp$$d" \
		-- --txd=1024 --rxd=1024 || exit 1
	dut_pid=$testpmd_pid
	;;
*)
	echo "profile_vhost: DUT must be hvswitch or testpmd" >&2
	exit 1
	;;
esac
pids+=("$dut_pid")
for ((i = 0; i < 600; i++)); do
	[ -S "$s0" ] && [ -S "$s1" ] && break
	sleep 0.1
done
[ -S "$s0" ] && [ -S "$s1" ] || { echo "profile_vhost: no sockets" >&2; exit 1; }

# warm-up (a DUT under valgrind connects and maps memory slowly), the window, a margin
"$pktgen" -l 0 --no-pci --no-huge -m 256 --file-prefix "hvp$$g" \
	--vdev "net_virtio_user0,path=$s0,queues=1,queue_size=1024$vu_args" \
	--vdev "net_virtio_user1,path=$s1,queues=1,queue_size=1024$vu_args" \
	-- --size "$size" --warmup-s "$settle" --duration-s $((window + 10)) --link-timeout-s 60 \
	--learn-first --report-ms 50 \
	>"$out/gen.log" 2>&1 &
gen_pid=$!
pids+=("$gen_pid")
sleep $((settle + 2))

callgrind_control -i on "$dut_pid" >/dev/null
win_from=$(date +%s%N)
sleep "$window"
callgrind_control -i off "$dut_pid" >/dev/null
win_to=$(date +%s%N)
wait "$gen_pid"
grep '^RESULT' "$out/gen.log"
[ "$dut" = testpmd ] && testpmd_quit
# callgrind writes its profile when the DUT exits; one that does not exit
# within a minute (testpmd did not once, spinning after its peer left) is
# killed, and its profile is lost
stop_pid "$dut_pid" 60
pids=()

total=$(callgrind_annotate --auto=no "$out/callgrind.out" 2>/dev/null |
	awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }')
[ -n "$total" ] || { note "no profile from the DUT (killed?); see $out"; exit 1; }
# frames the generator received while instrumentation was on
frames=$(awk -v r="$(bench_tick_rate "$out/gen.log" rx_pkts "$win_from" "$win_to")" \
	-v a="$win_from" -v b="$win_to" 'BEGIN { printf "%.0f", r * (b - a) / 1e9 }')
callgrind_annotate --auto=no "$out/callgrind.out" | sed -n '/file:function/,$p' | head -40
echo "PROFILE dut=$dut size=$size frames=$frames ir=$total" \
	"ir_per_frame=$(awk -v t="$total" -v f="$frames" 'BEGIN { if (f > 0) printf "%.0f", t / f; else print "n/a" }')"
echo "profile_vhost: callgrind output in $out/callgrind.out"
