#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# VXLAN benchmark: what encapsulation and decapsulation cost hvswitch's one
# PMD. hv_pktgen sends port0 -> port1 through
#
#   tunnel  port0 (VLAN 10) -> vx0 (encap) -> up0 == memif == up1 -> vx1 (decap)
#           -> port1 (VLAN 20): every frame is switched twice, encapsulated
#           once, crosses a memif pair (zero kernel) and is decapsulated once;
#   plain   port0 -> port1 in one VLAN (the same frames without tunnel),
#
# all on one PMD; the result is the ratio tunnel/plain per frame size. The
# runs alternate (tunnel, plain, plain, tunnel, ...), a fresh switch and
# generator each, medians per (mode, size): this host's speed changes by 2x
# within seconds. See doc/performance.rst ("VXLAN").
#
# usage: tests/perf/bench_vxlan.sh [BUILD_DIR]      (default ./build)
#
# Environment: HV_BENCH_SIZES ["64 1400"] (inner frames: the memif MTU is
# 1500), HV_BENCH_REPS [5], HV_BENCH_WARMUP_S [2], HV_BENCH_DURATION_S [4],
# HV_BENCH_GEN_CPU [0] (generator, the switch's main lcore), HV_BENCH_DUT_CPU
# [1] (the PMD), HV_BENCH_KEEP_LOGS [0].
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/bench_lib.sh"
build=$(cd "${1:-build}" && pwd) || exit 2
hvswitch=$build/app/hvswitch/hvswitch
hvctl=$build/app/hvctl/hvctl
pktgen=$build/tests/perf/hv_pktgen
sizes=${HV_BENCH_SIZES:-64 1400}
reps=${HV_BENCH_REPS:-5}
warmup=${HV_BENCH_WARMUP_S:-2}
duration=${HV_BENCH_DURATION_S:-4}
gen_cpu=${HV_BENCH_GEN_CPU:-0}
dut_cpu=${HV_BENCH_DUT_CPU:-1}
for b in "$hvswitch" "$hvctl" "$pktgen"; do
	[ -x "$b" ] || { echo "bench_vxlan: $b not built" >&2; exit 2; }
done
rundir=$(mktemp -d /tmp/hv-bench-vxlan.XXXXXX)
prefix=hvbvx$$
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do stop_pid "$p" 5 INT; done
	rm -rf /var/run/dpdk/"$prefix"*
	[ "${HV_BENCH_KEEP_LOGS:-0}" = 1 ] && echo "logs kept in $rundir" || rm -rf "$rundir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

declare -A pps
run=0

# one MODE SIZE: a fresh switch and generator; the generator's RESULT line
one() {
	local mode=$1 size=$2 dir sw gen line
	run=$((run + 1))
	dir=$rundir/r$run
	mkdir -p "$dir"
	taskset -c "$gen_cpu,$dut_cpu" "$hvswitch" -l "$gen_cpu,$dut_cpu" --main-lcore "$gen_cpu" \
		--no-pci --no-huge -m 512 --file-prefix "${prefix}d$run" -- --run-dir "$dir" \
		--config "$dir/hv.json" --mbufs 16384 --port "$dir/p0.sock" --port "$dir/p1.sock" \
		>"$dir/switch.log" 2>&1 &
	sw=$!
	pids+=("$sw")
	local h=("$hvctl" --socket "$dir/hvswitch.sock") i
	for ((i = 0; i < 100; i++)); do "${h[@]}" version >/dev/null 2>&1 && break; sleep 0.1; done
	if [ "$mode" = tunnel ]; then
		"${h[@]}" port set port0 vlan=10 >/dev/null &&
			"${h[@]}" port set port1 vlan=20 >/dev/null &&
			"${h[@]}" port add up0 --type ethdev --vlan 4000 \
				--devargs "net_memif0,role=server,socket=$dir/m.sock,id=0" >/dev/null &&
			"${h[@]}" port add up1 --type ethdev --vlan 4001 \
				--devargs "net_memif1,role=client,socket=$dir/m.sock,id=0" >/dev/null &&
			"${h[@]}" port add vx0 --type vxlan --vni 100 --local 10.9.0.1 --uplink up0 \
				--remote 10.9.0.2 --vlan 10 >/dev/null &&
			"${h[@]}" port add vx1 --type vxlan --vni 100 --local 10.9.0.2 --uplink up1 \
				--remote 10.9.0.1 --vlan 20 >/dev/null || { echo "run $run: set-up failed" >&2; return 1; }
		# both next hops resolved (ARP across the memif pair)
		for ((i = 0; i < 100; i++)); do
			[ "$("${h[@]}" --json port show vx0 | grep -c '"next_hop_mac":	"')" = 1 ] &&
				[ "$("${h[@]}" --json port show vx1 | grep -c '"next_hop_mac":	"')" = 1 ] && break
			sleep 0.1
		done
	fi
	timeout -s INT -k 10 $((warmup + duration + 60)) taskset -c "$gen_cpu" "$pktgen" -l "$gen_cpu" \
		--no-pci --no-huge -m 256 --file-prefix "${prefix}g$run" \
		--log-level='pmd.net.virtio.*:warning' \
		--vdev "net_virtio_user0,path=$dir/p0.sock,queues=1,queue_size=1024" \
		--vdev "net_virtio_user1,path=$dir/p1.sock,queues=1,queue_size=1024" \
		-- --size "$size" --ports 2 --src-macs 1 --dst-macs 1 --learn-first --link-timeout-s 30 \
		--warmup-s "$warmup" --duration-s "$duration" --watch-pid "$sw" >"$dir/gen.log" 2>&1
	if [ "$mode" = tunnel ]; then
		"${h[@]}" --json port show vx0 >"$dir/vx0.json" 2>&1
		"${h[@]}" --json port show vx1 >"$dir/vx1.json" 2>&1
	fi
	stop_pid "$sw" 10 INT
	forget_pid "$sw"
	rm -rf /var/run/dpdk/"${prefix}d$run" /var/run/dpdk/"${prefix}g$run"
	line=$(grep '^RESULT ' "$dir/gen.log" | tail -1)
	[ -n "$line" ] || { echo "run $run ($mode $size): no result" >&2; tail -3 "$dir/gen.log" >&2; return 1; }
	echo "RUN mode=$mode ${line#RESULT }"
	pps[$mode,$size]+="$(bench_field rx_pps "$line") "
}

echo "# bench_vxlan: $(nproc) CPUs, PMD on CPU $dut_cpu, generator on CPU $gen_cpu, load $(cut -d' ' -f1-3 /proc/loadavg)"
for size in $sizes; do
	for ((rep = 0; rep < reps; rep++)); do
		if ((rep % 2 == 0)); then order="tunnel plain"; else order="plain tunnel"; fi
		for mode in $order; do one "$mode" "$size"; done
	done
done
echo
printf '%-6s %12s %12s %8s\n' size plain_Mpps tunnel_Mpps ratio
for size in $sizes; do
	p=$(bench_median "${pps[plain,$size]:-}")
	t=$(bench_median "${pps[tunnel,$size]:-}")
	awk -v s="$size" -v p="$p" -v t="$t" \
		'BEGIN { printf "%-6s %12.3f %12.3f %8.2f\n", s, p / 1e6, t / 1e6, (p > 0 ? t / p : 0) }'
done
