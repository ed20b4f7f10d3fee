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
# repetitions per mode (median reported).
#
# Prints the RUN/MICRO lines, then
#   SUMMARY mode=pass|seg|mtu gbps=..
#   SUMMARY target=passthrough_5x_mtu ratio=.. met|missed
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

for b in app/hvswitch/hvswitch tests/perf/bench_offload; do
	[ -x "$build/$b" ] || die "no $build/$b (build first: ninja -C $build)"
	cp "$build/$b" "$rundir/" || die "copy failed"
done

# The switch: PMD lcore alone on its CPU, main lcore with the generator.
mkdir -p "$rundir/hv"
"$rundir/hvswitch" -l "$gen_cpu,$dut_cpu" --main-lcore "$gen_cpu" --no-pci --no-huge -m 1024 \
	--file-prefix "${prefix}sw" -- --run-dir "$rundir/hv" --config "$rundir/hv/hvswitch.json" \
	--mbufs 65536 --port "$rundir/p0.sock" --port "$rundir/p1.sock" \
	>"$rundir/hvswitch.log" 2>&1 &
sw_pid=$!
for _ in $(seq 200); do
	[ -S "$rundir/p0.sock" ] && [ -S "$rundir/p1.sock" ] && break
	kill -0 "$sw_pid" 2>/dev/null || die "hvswitch exited: $(tail -3 "$rundir/hvswitch.log")"
	sleep 0.05
done
[ -S "$rundir/p1.sock" ] || die "hvswitch sockets did not appear"

run_mode() {
	local mode=$1 out
	out=$(timeout -k 5 $((duration + 30)) taskset -c "$gen_cpu" "$rundir/bench_offload" \
		-l "$gen_cpu" --no-pci --no-huge -m 512 --file-prefix "${prefix}gen" \
		--vdev "net_virtio_user0,path=$rundir/p0.sock,queues=1,queue_size=1024" \
		--vdev "net_virtio_user1,path=$rundir/p1.sock,queues=1,queue_size=1024" \
		--log-level=6 -- switch "$mode" "$duration" 2>"$rundir/gen.log" | grep '^SWITCH')
	[ -n "$out" ] || { echo "RUN mode=$mode failed: $(tail -2 "$rundir/gen.log")" >&2; return 1; }
	echo "RUN $out"
	sed -n 's/.*gbps=\([0-9.]*\).*/\1/p' <<<"$out"
}

median() {
	sort -g | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'
}

declare -A gbps
for mode in pass seg mtu; do
	vals=()
	for ((r = 0; r < reps; r++)); do
		v=$(run_mode "$mode" | tee /dev/stderr | tail -1)
		[[ $v =~ ^[0-9.]+$ ]] && vals+=("$v")
	done
	gbps[$mode]=$(printf '%s\n' "${vals[@]}" | median)
done 2>&1

micro=$(taskset -c "$dut_cpu" "$rundir/bench_offload" -l "$dut_cpu" --no-pci --no-huge -m 512 \
	--file-prefix "${prefix}micro" --log-level=6 -- micro "$duration" 2>/dev/null | grep '^MICRO')
echo "$micro"

for mode in pass seg mtu; do
	echo "SUMMARY mode=$mode gbps=${gbps[$mode]:-n/a}"
done
verdict() {
	awk -v r="$1" -v t="$2" 'BEGIN { printf "ratio=%.2f %s\n", r, (r >= t ? "met" : "missed") }'
}
if [ -n "${gbps[pass]:-}" ] && [ -n "${gbps[mtu]:-}" ]; then
	echo "SUMMARY target=passthrough_5x_mtu $(verdict "$(awk -v a="${gbps[pass]}" -v b="${gbps[mtu]}" 'BEGIN { print a / b }')" 5)"
fi
ours=$(sed -n 's/^MICRO variant=ours_partial_csum copy_out=1 gbps=\([0-9.]*\).*/\1/p' <<<"$micro")
gso=$(sed -n 's/^MICRO variant=rte_gso copy_out=1 gbps=\([0-9.]*\).*/\1/p' <<<"$micro")
if [ -n "$ours" ] && [ -n "$gso" ]; then
	echo "SUMMARY target=ours_vs_rte_gso $(verdict "$(awk -v a="$ours" -v b="$gso" 'BEGIN { print a / b }')" 1)"
fi
