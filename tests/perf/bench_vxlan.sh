#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# VXLAN benchmark: what encapsulation and decapsulation cost hvswitch's one
# PMD, and the same for OVS-DPDK. hv_pktgen sends port0 -> port1 through
#
#   hv-tunnel   port0 (VLAN 10) -> vx0 (encap) -> up0 == memif == up1 -> vx1
#               (decap) -> port1 (VLAN 20): every frame is switched twice,
#               encapsulated once, crosses a memif pair (zero kernel) and is
#               decapsulated once;
#   hv-plain    port0 -> port1 in one VLAN (the same frames without tunnel);
#   ovs-tunnel  ovs-vswitchd with DPDK (userspace datapath, one PMD), the same
#               path: br-int0 (p0, vx0) -> tnl_push -> br-phy0 (up0, memif
#               server, VTEP 10.9.0.1) == memif == br-phy1 (up1, its client,
#               VTEP 10.9.0.2) -> tnl_pop -> br-int1 (vx1, p1), NORMAL action;
#   ovs-plain   OVS, p0 -> p1 on one bridge (NORMAL, as bench_switch.sh),
#
# all on one PMD; the results are the ratios tunnel/plain per DUT and
# hv-tunnel/ovs-tunnel per frame size. The four runs of a repetition
# alternate (forwards, then backwards), a fresh switch (or ovs-vswitchd) and
# generator each, medians per (mode, size): this host's speed changes by 2x
# within seconds. A tunnel run whose frames did not cross the tunnel (vx0/vx1
# encap/decap counters; for OVS the memif ports' counters and tnl_push/tnl_pop
# datapath flows) fails the benchmark. See doc/performance.rst ("VXLAN").
#
# usage: tests/perf/bench_vxlan.sh [BUILD_DIR]      (default ./build)
#
# Environment: HV_BENCH_SIZES ["64 1400"] (inner frames: the memif MTU is
# 1500), HV_BENCH_REPS [5], HV_BENCH_WARMUP_S [2], HV_BENCH_DURATION_S [4],
# HV_BENCH_GEN_CPU [0] (generator, the switch's main lcore, ovs-vswitchd's
# other threads), HV_BENCH_DUT_CPU [1] (the PMD), HV_BENCH_OVS [auto] (1: OVS
# required, 0: hvswitch only, auto: OVS when it can run here),
# HV_BENCH_OVS_VSWITCHD [/usr/lib/openvswitch-switch-dpdk/ovs-vswitchd-dpdk],
# HV_BENCH_MODES ["hv-tunnel hv-plain ovs-tunnel ovs-plain"], HV_BENCH_KEEP_LOGS
# [0].
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
use_ovs=${HV_BENCH_OVS:-auto}
vswitchd=${HV_BENCH_OVS_VSWITCHD:-/usr/lib/openvswitch-switch-dpdk/ovs-vswitchd-dpdk}
for b in "$hvswitch" "$hvctl" "$pktgen"; do
	[ -x "$b" ] || { echo "bench_vxlan: $b not built" >&2; exit 2; }
done
note() {
	echo "bench_vxlan: $*" >&2
}
rundir=$(mktemp -d /tmp/hv-bench-vxlan.XXXXXX)
prefix=hvbvx$$
pids=()
cleanup() {
	local i
	# newest first: generator, switch, ovs-vswitchd, then ovsdb-server
	for ((i = ${#pids[@]} - 1; i >= 0; i--)); do stop_pid "${pids[i]}" 5 TERM; done
	rm -rf /var/run/dpdk/"$prefix"*
	[ "${HV_BENCH_KEEP_LOGS:-0}" = 1 ] && echo "logs kept in $rundir" || rm -rf "$rundir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

declare -A pps
run=0
failures=0

# ---------------------------------------------------------------- OVS
# One ovsdb-server for the whole script; per run the bridges of its mode and a
# fresh ovs-vswitchd in its own network namespace (its bridges' local ports
# are tap devices there).
ovs_dir=$rundir/ovs
ovs_why=
vtep0=10.9.0.1 vtep1=10.9.0.2
mac0=02:00:0a:09:00:01 mac1=02:00:0a:09:00:02
ovs_cfg=("other_config:dpdk-extra=--no-pci --no-huge --legacy-mem -m 1024 --file-prefix=${prefix}ovs"
	other_config:pmd-cpu-mask="$(printf '0x%x' $((1 << dut_cpu)))"
	other_config:dpdk-lcore-mask="$(printf '0x%x' $((1 << gen_cpu)))"
	other_config:per-port-memory=true)

ovs_appctl() {
	ovs-appctl -t "$ovs_dir/vswitchd.ctl" --timeout=10 "$@"
}

# ovs_conf MODE DIR: the bridges of MODE in the ovsdb (ovs-vswitchd stopped);
# the vhost-user servers (the generator's) at DIR/o0.sock and DIR/o1.sock.
# tunnel: all but up1, the memif client, which ovs_tunnel_up adds once the
# server listens (a client that comes first fails and is detached). memif
# wants as many rings each way as the peer: OVS gives a port one tx queue per
# PMD and one for the main thread, hence two rx queues.
ovs_conf() {
	local mode=$1 dir=$2 br

	for br in $(ovs_vsctl list-br 2>>"$ovs_dir/vsctl.log"); do
		ovs_vsctl del-br "$br" >>"$ovs_dir/vsctl.log" 2>&1 || return 1
	done
	[ "$mode" = plain ] && { ovs_db_bridge "$dir/o0.sock" "$dir/o1.sock" "${ovs_cfg[@]}"; return; }
	ovs_vsctl add-br br-int0 -- set bridge br-int0 datapath_type=netdev \
		-- add-port br-int0 p0 -- set Interface p0 type=dpdkvhostuserclient \
		"options:vhost-server-path=$dir/o0.sock" \
		-- add-port br-int0 vx0 -- set Interface vx0 type=vxlan options:key=100 \
		"options:remote_ip=$vtep1" \
		-- add-br br-phy0 -- set bridge br-phy0 datapath_type=netdev "other-config:hwaddr=$mac0" \
		-- add-port br-phy0 up0 -- set Interface up0 type=dpdk options:n_rxq=2 \
		"options:dpdk-devargs=net_memif0,role=server,socket=$dir/m.sock,id=0" \
		-- add-br br-phy1 -- set bridge br-phy1 datapath_type=netdev "other-config:hwaddr=$mac1" \
		-- add-br br-int1 -- set bridge br-int1 datapath_type=netdev \
		-- add-port br-int1 vx1 -- set Interface vx1 type=vxlan options:key=100 \
		"options:remote_ip=$vtep0" \
		-- add-port br-int1 p1 -- set Interface p1 type=dpdkvhostuserclient \
		"options:vhost-server-path=$dir/o1.sock" >>"$ovs_dir/vsctl.log" 2>&1 ||
		{ ovs_why="ovs-vsctl failed: $(tail -2 "$ovs_dir/vsctl.log")"; return 1; }
}

# ovs_tunnel_up PID DIR: with ovs-vswitchd PID running the tunnel bridges,
# connect the memif pair and give each VTEP its address, route and neighbour.
# Userspace tunnelling takes the underlay route from OVS's own table, which
# mirrors the kernel's: both addresses on taps of one namespace would make each
# VTEP's route to the other the local one. So the addresses stay on the
# (down) taps, where the tunnel ports' listeners come from, their local routes
# are deleted, and ovs/route/add puts the routes through the other VTEP's
# bridge (the source address is the route's: OVS 3.1 takes a tunnel's
# local_ip only with a local route for it); tnl/arp/set gives its MAC. A route
# flush removes the listeners: routes are added until they stay. 1 with the
# reason in ovs_why.
ovs_tunnel_up() {
	local pid=$1 dir=$2 i ns

	ns=(nsenter "--net=/proc/$pid/ns/net")
	for ((i = 0; i < 300; i++)); do
		grep -q 'net_memif0,.*attached to DPDK' "$dir/ovs.log" 2>/dev/null && break
		sleep 0.1
	done
	ovs_vsctl add-port br-phy1 up1 -- set Interface up1 type=dpdk options:n_rxq=2 \
		"options:dpdk-devargs=net_memif1,role=client,socket=$dir/m.sock,id=0" \
		>>"$ovs_dir/vsctl.log" 2>&1 || { ovs_why="ovs-vsctl add-port up1 failed"; return 1; }
	for ((i = 0; i < 300; i++)); do
		[ "$(ovs_vsctl get interface up0 link_state 2>/dev/null)" = up ] &&
			[ "$(ovs_vsctl get interface up1 link_state 2>/dev/null)" = up ] && break
		sleep 0.1
	done
	((i < 300)) || { ovs_why="memif up0/up1 did not come up: $(grep -i memif "$dir/ovs.log" | tail -2)"; return 1; }
	{ "${ns[@]}" ip addr add "$vtep0/24" dev br-phy0 && "${ns[@]}" ip addr add "$vtep1/24" dev br-phy1 &&
		"${ns[@]}" ip route del local "$vtep0" dev br-phy0 table local &&
		"${ns[@]}" ip route del local "$vtep1" dev br-phy1 table local; } >>"$dir/ovs-net.log" 2>&1 ||
		{ ovs_why="addresses in the namespace: $(tail -1 "$dir/ovs-net.log")"; return 1; }
	for ((i = 0; i < 100; i++)); do
		if ! ovs_appctl ovs/route/show 2>/dev/null | grep -q '^Cached:'; then
			ovs_appctl ovs/route/add "$vtep1/32" br-phy0 >/dev/null 2>&1
			ovs_appctl ovs/route/add "$vtep0/32" br-phy1 >/dev/null 2>&1
			[ "$(ovs_appctl tnl/ports/show -v 2>/dev/null | grep -c 'ipv4(dst=10\.9\.0\.[12],proto=17')" = 2 ] &&
				break
		fi
		sleep 0.1
	done
	((i < 100)) || { ovs_why="userspace VXLAN: no routes or listeners: $(ovs_appctl tnl/ports/show -v 2>&1)"; return 1; }
	ovs_appctl tnl/arp/set br-phy0 "$vtep1" "$mac1" >/dev/null &&
		ovs_appctl tnl/arp/set br-phy1 "$vtep0" "$mac0" >/dev/null ||
		{ ovs_why="tnl/arp/set failed"; return 1; }
}

# ovs_start MODE DIR: a fresh ovs-vswitchd for MODE (the main thread on the
# generator's CPU, the PMD pinned by pmd-cpu-mask); sets sw
ovs_start() {
	local mode=$1 dir=$2 i

	ovs_conf "$mode" "$dir" || return 1
	rm -f "$ovs_dir/vswitchd.ctl" "$ovs_dir/vswitchd.pid"
	taskset -c "$gen_cpu" unshare --net -- "$vswitchd" "unix:$ovs_dir/db.sock" \
		--unixctl="$ovs_dir/vswitchd.ctl" --pidfile="$ovs_dir/vswitchd.pid" \
		--log-file="$dir/ovs.log" >"$dir/ovs.out" 2>&1 &
	sw=$!
	pids+=("$sw")
	for ((i = 0; i < 300; i++)); do
		kill -0 "$sw" 2>/dev/null || break
		[ -S "$ovs_dir/vswitchd.ctl" ] && grep -q 'using datapath ID' "$dir/ovs.log" 2>/dev/null && break
		sleep 0.1
	done
	[ -S "$ovs_dir/vswitchd.ctl" ] || { ovs_why="ovs-vswitchd did not start: $(tail -2 "$dir/ovs.log")"; return 1; }
	[ "$mode" = plain ] || ovs_tunnel_up "$sw" "$dir"
}

# ovs_port_count SHOW PORT RX|TX: the packets of PORT in dpctl/show -s output
# (a port without statistics leaves its line open: the next "port N:" follows)
ovs_port_count() {
	awk -v p="$2" -v d="$3" '$0 ~ ("port [0-9]+: " p " ") { on = 1; next }
		/port [0-9]+: / { on = 0 }
		on && $1 == d { split($2, kv, ":"); print kv[2] + 0; exit }' "$1"
}

# ovs_check_tunnel DIR RX_PKTS: the frames port1 received went through the
# tunnel: both memif ports carried at least as many, and the datapath's
# flows encapsulated (tnl_push) and decapsulated (tnl_pop) them
ovs_check_tunnel() {
	local dir=$1 rx=$2 up0 up1 push pop

	ovs_appctl dpctl/show -s >"$dir/dpctl-show.txt" 2>&1
	ovs_appctl dpctl/dump-flows >"$dir/dpctl-flows.txt" 2>&1
	up0=$(ovs_port_count "$dir/dpctl-show.txt" up0 TX)
	up1=$(ovs_port_count "$dir/dpctl-show.txt" up1 RX)
	push=$(sed -n 's/.*packets:\([0-9]*\),.*actions:.*tnl_push(.*/\1/p' "$dir/dpctl-flows.txt" |
		awk '{ n += $1 } END { print n + 0 }')
	pop=$(sed -n 's/.*packets:\([0-9]*\),.*actions:.*tnl_pop(.*/\1/p' "$dir/dpctl-flows.txt" |
		awk '{ n += $1 } END { print n + 0 }')
	echo "ovs-tunnel counters: up0_tx=${up0:-?} up1_rx=${up1:-?} tnl_push_pkts=$push tnl_pop_pkts=$pop rx_pkts=$rx" \
		>"$dir/tunnel-check.txt"
	[ "${up0:-0}" -ge "$rx" ] && [ "${up1:-0}" -ge "$rx" ] && [ "$push" -gt 0 ] && [ "$pop" -gt 0 ]
}

# hv_check_tunnel DIR RX_PKTS HVCTL...: the frames port1 received went through
# the tunnel: vx0 encapsulated and vx1 decapsulated at least as many
hv_check_tunnel() {
	local dir=$1 rx=$2 encap decap

	shift 2
	"$@" --json port show vx0 >"$dir/vx0.json" 2>&1
	"$@" --json port show vx1 >"$dir/vx1.json" 2>&1
	encap=$(sed -n 's/^[[:space:]]*"encap":[[:space:]]*\([0-9]*\).*/\1/p' "$dir/vx0.json" | head -1)
	decap=$(sed -n 's/^[[:space:]]*"decap":[[:space:]]*\([0-9]*\).*/\1/p' "$dir/vx1.json" | head -1)
	echo "hv-tunnel counters: vx0_encap=${encap:-?} vx1_decap=${decap:-?} rx_pkts=$rx" >"$dir/tunnel-check.txt"
	[ "${encap:-0}" -ge "$rx" ] && [ "${decap:-0}" -ge "$rx" ]
}

ovs_ok=0
case $use_ovs in
0) ovs_why="HV_BENCH_OVS=0" ;;
*)
	# ovs_db_bridge: DPDK's settings (its bridge goes with the first run's)
	if ovs_db_start "$vswitchd" "$gen_cpu" && command -v nsenter >/dev/null && command -v ip >/dev/null &&
		ovs_db_bridge "$rundir/o0.sock" "$rundir/o1.sock" "${ovs_cfg[@]}"; then
		ovs_ok=1
	else
		ovs_why=${ovs_why:-"no nsenter or ip"}
		[ "$use_ovs" = 1 ] && { note "OVS required (HV_BENCH_OVS=1) but: $ovs_why"; exit 1; }
		note "OVS skipped: $ovs_why"
	fi
	;;
esac

# ---------------------------------------------------------------- runs
# one MODE SIZE: a fresh switch and generator; the generator's RESULT line
one() {
	local mode=$1 size=$2 dir sw line vdev=() rx
	local dut=${mode%%-*} tun=${mode#*-}
	run=$((run + 1))
	dir=$rundir/r$run
	mkdir -p "$dir"
	if [ "$dut" = ovs ]; then
		if ! ovs_start "$tun" "$dir"; then
			note "run $run ($mode $size): $ovs_why"
			failures=$((failures + 1))
			[ -n "${sw:-}" ] && { stop_pid "$sw" 15 TERM; forget_pid "$sw"; }
			return 1
		fi
		# OVS is the vhost-user client: the generator's ports are the servers
		vdev=(--vdev "net_virtio_user0,path=$dir/o0.sock,server=1,queues=1,queue_size=1024"
			--vdev "net_virtio_user1,path=$dir/o1.sock,server=1,queues=1,queue_size=1024")
	else
		taskset -c "$gen_cpu,$dut_cpu" "$hvswitch" -l "$gen_cpu,$dut_cpu" --main-lcore "$gen_cpu" \
			--no-pci --no-huge -m 512 --file-prefix "${prefix}d$run" -- --run-dir "$dir" \
			--config "$dir/hv.json" --mbufs 16384 --port "$dir/p0.sock" --port "$dir/p1.sock" \
			>"$dir/switch.log" 2>&1 &
		sw=$!
		pids+=("$sw")
		vdev=(--vdev "net_virtio_user0,path=$dir/p0.sock,queues=1,queue_size=1024"
			--vdev "net_virtio_user1,path=$dir/p1.sock,queues=1,queue_size=1024")
	fi
	local h=("$hvctl" --socket "$dir/hvswitch.sock") i
	if [ "$dut" = hv ]; then
		for ((i = 0; i < 100; i++)); do "${h[@]}" version >/dev/null 2>&1 && break; sleep 0.1; done
	fi
	if [ "$mode" = hv-tunnel ]; then
		"${h[@]}" port set port0 vlan=10 >/dev/null &&
			"${h[@]}" port set port1 vlan=20 >/dev/null &&
			"${h[@]}" port add up0 --type ethdev --vlan 4000 \
				--devargs "net_memif0,role=server,socket=$dir/m.sock,id=0" >/dev/null &&
			"${h[@]}" port add up1 --type ethdev --vlan 4001 \
				--devargs "net_memif1,role=client,socket=$dir/m.sock,id=0" >/dev/null &&
			"${h[@]}" port add vx0 --type vxlan --vni 100 --local 10.9.0.1 --uplink up0 \
				--remote 10.9.0.2 --vlan 10 >/dev/null &&
			"${h[@]}" port add vx1 --type vxlan --vni 100 --local 10.9.0.2 --uplink up1 \
				--remote 10.9.0.1 --vlan 20 >/dev/null || {
			note "run $run ($mode $size): set-up failed"
			failures=$((failures + 1))
			stop_pid "$sw" 10 INT
			forget_pid "$sw"
			return 1
		}
		# both next hops resolved (ARP across the memif pair)
		for ((i = 0; i < 100; i++)); do
			[ "$("${h[@]}" --json port show vx0 | grep -c '"next_hop_mac":	"')" = 1 ] &&
				[ "$("${h[@]}" --json port show vx1 | grep -c '"next_hop_mac":	"')" = 1 ] && break
			sleep 0.1
		done
	fi
	timeout -s INT -k 10 $((warmup + duration + 60)) taskset -c "$gen_cpu" "$pktgen" -l "$gen_cpu" \
		--no-pci --no-huge -m 256 --file-prefix "${prefix}g$run" \
		--log-level='pmd.net.virtio.*:warning' "${vdev[@]}" \
		-- --size "$size" --ports 2 --src-macs 1 --dst-macs 1 --learn-first --link-timeout-s 30 \
		--warmup-s "$warmup" --duration-s "$duration" --watch-pid "$sw" >"$dir/gen.log" 2>&1
	line=$(grep '^RESULT ' "$dir/gen.log" | tail -1)
	rx=$(bench_field rx_pkts "$line")
	if [ "$mode" = hv-tunnel ] && [ -n "$line" ] && ! hv_check_tunnel "$dir" "${rx:-0}" "${h[@]}"; then
		note "run $run (hv-tunnel $size): FAILED, the frames did not go through the VXLAN tunnel:" \
			"$(cat "$dir/tunnel-check.txt")"
		line=
	elif [ "$mode" = ovs-tunnel ] && [ -n "$line" ] && ! ovs_check_tunnel "$dir" "${rx:-0}"; then
		note "run $run (ovs-tunnel $size): FAILED, the frames did not go through the VXLAN tunnel:" \
			"$(cat "$dir/tunnel-check.txt")"
		line=
	fi
	if [ "$dut" = ovs ]; then
		stop_pid "$sw" 15 TERM
	else
		stop_pid "$sw" 10 INT
	fi
	forget_pid "$sw"
	rm -rf /var/run/dpdk/"${prefix}d$run" /var/run/dpdk/"${prefix}g$run"
	if [ -z "$line" ]; then
		# empty too when the tunnel check failed (said above)
		grep -q '^RESULT ' "$dir/gen.log" ||
			{ note "run $run ($mode $size): no result"; tail -3 "$dir/gen.log" >&2; }
		failures=$((failures + 1))
		return 1
	fi
	echo "RUN mode=$mode ${line#RESULT }"
	pps[$mode,$size]+="$(bench_field rx_pps "$line") "
}

modes=${HV_BENCH_MODES:-hv-tunnel hv-plain ovs-tunnel ovs-plain}
for mode in $modes; do
	case $mode in
	hv-tunnel | hv-plain) ;;
	ovs-tunnel | ovs-plain) [ "$ovs_ok" = 1 ] || modes=$(sed "s/\b$mode\b//" <<<"$modes") ;;
	*) note "unknown mode $mode (HV_BENCH_MODES: hv-tunnel hv-plain ovs-tunnel ovs-plain)"; exit 2 ;;
	esac
done
echo "# bench_vxlan: $(nproc) CPUs, PMD on CPU $dut_cpu, generator on CPU $gen_cpu, load $(cut -d' ' -f1-3 /proc/loadavg)"
for size in $sizes; do
	for ((rep = 0; rep < reps; rep++)); do
		# every other repetition backwards: each mode as often early as late
		if ((rep % 2 == 0)); then order=$modes; else order=$(tr ' ' '\n' <<<"$modes" | tac); fi
		for mode in $order; do one "$mode" "$size"; done
	done
done
echo
printf '%-6s %9s %10s %8s %9s %10s %9s %14s\n' size hv_plain hv_tunnel hv_ratio \
	ovs_plain ovs_tunnel ovs_ratio hv/ovs_tunnel
for size in $sizes; do
	hp=$(bench_median "${pps[hv-plain,$size]:-}")
	ht=$(bench_median "${pps[hv-tunnel,$size]:-}")
	op=$(bench_median "${pps[ovs-plain,$size]:-}")
	ot=$(bench_median "${pps[ovs-tunnel,$size]:-}")
	awk -v s="$size" -v hp="$hp" -v ht="$ht" -v op="$op" -v ot="$ot" '
		function r(a, b) { return (a > 0 && b > 0) ? sprintf("%.2f", a / b) : "n/a" }
		BEGIN { printf "%-6s %9.3f %10.3f %8s %9.3f %10.3f %9s %14s\n", s, hp / 1e6, ht / 1e6,
			r(ht, hp), op / 1e6, ot / 1e6, r(ot, op), r(ht, ot) }'
done
echo "(Mpps, medians per mode; ratios of the medians)"
[ "$ovs_ok" = 1 ] || note "OVS was not measured: $ovs_why"
((failures == 0)) || { note "$failures run(s) FAILED (see above)"; exit 1; }
