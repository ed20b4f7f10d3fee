#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# iperf3 between two Linux guests (QEMU TCG, the e2e tests' kernel and
# initramfs) through hvswitch and through Open vSwitch with DPDK
# (ovs-vswitchd-dpdk, other_config:userspace-tso-enable=true, bridge
# datapath_type=netdev, two dpdkvhostuserclient ports, the NORMAL action).
# Both guests negotiate CSUM/GUEST_CSUM and the TSO bits with either switch.
# Under TCG the guests' CPU is the bottleneck, not the switch: a sanity
# comparison (does TSO go through end to end, is either switch in the way),
# not a switch benchmark. See doc/performance.rst ("Offloads").
#
# usage: tests/perf/bench_iperf3.sh [BUILD_DIR]      (default ./build)
#
# Builds nothing (the initramfs is made or reused in BUILD_DIR/tests/e2e).
# CPUs: both QEMUs, every DUT's main/control threads and ovsdb-server on
# HV_BENCH_QEMU_CPU; the DUT's one forwarding thread (PMD) alone on
# HV_BENCH_DUT_CPU. Each run starts a fresh DUT and two fresh guests; the DUTs
# take turns (hvswitch, ovs, hvswitch, ovs, ...); medians per DUT.
# Guest 1 runs `iperf3 -c 10.0.0.2 -t S -J`, guest 2 `iperf3 -s -1 -J`; the
# figure is the receiver's (the server's end.sum_received, as the client
# reports it).
#
# Environment (defaults in brackets):
#   HV_BENCH_REPS         repetitions (each: one run per DUT)        [3]
#   HV_BENCH_IPERF_S      iperf3 -t seconds                           [10]
#   HV_BENCH_DUTS         DUTs                                        ["hvswitch ovs"]
#   HV_BENCH_QEMU_CPU     CPU of both QEMUs and the DUTs' main threads [0]
#   HV_BENCH_DUT_CPU      CPU of the DUT's forwarding thread         [1]
#   HV_BENCH_OVS_VSWITCHD ovs-vswitchd with DPDK  [/usr/lib/openvswitch-switch-dpdk/ovs-vswitchd-dpdk]
#   HV_BENCH_RUN_TIMEOUT_S deadline of one run's guests              [240]
#   HV_BENCH_LOCKFILE     if set: before each run, wait while this file exists
#   HV_BENCH_KEEP_LOGS    1: keep the run directory with every log   [0]
#
# Prints one "RUN ..." line per run (throughput, retransmits, the average
# frame the switch took from the sender: > 1514 bytes means TSO frames went
# through whole, the drops counted on the receiver's port (its ring full: the
# TCG guest is slower than the switch; TCP retransmits those), the TSO bits
# both guests negotiated, for OVS its port status), then
#   SUMMARY dut=D gbps=G runs=...
#   SUMMARY ratio=hvswitch/ovs value=R
# Exit status 0 when every run produced a result.
set -u -o pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-./build}
reps=${HV_BENCH_REPS:-3}
secs=${HV_BENCH_IPERF_S:-10}
duts=${HV_BENCH_DUTS:-hvswitch ovs}
qemu_cpu=${HV_BENCH_QEMU_CPU:-0}
dut_cpu=${HV_BENCH_DUT_CPU:-1}
vswitchd=${HV_BENCH_OVS_VSWITCHD:-/usr/lib/openvswitch-switch-dpdk/ovs-vswitchd-dpdk}
run_timeout=${HV_BENCH_RUN_TIMEOUT_S:-240}

die() {
	echo "bench_iperf3: $*" >&2
	exit 1
}
note() {
	echo "bench_iperf3: $*" >&2
}
# stop_pid, forget_pid, ovs_vsctl, ovs_db_start, ovs_db_bridge, bench_median, bench_send_go
. "$(dirname "$0")/bench_lib.sh"

[ -x "$build/app/hvswitch/hvswitch" ] || die "no $build/app/hvswitch/hvswitch (build first: ninja -C $build)"
[ -x "$build/app/hvctl/hvctl" ] || die "no $build/app/hvctl/hvctl (build first: ninja -C $build)"
[ "$qemu_cpu" != "$dut_cpu" ] || die "QEMUs and the DUT's forwarding thread need two different CPUs"
qemu=$(command -v qemu-system-x86_64) || die "no qemu-system-x86_64 (apt-get install qemu-system-x86)"
[ -x /usr/bin/iperf3 ] || die "no /usr/bin/iperf3 (apt-get install iperf3): the guests need it"
command -v python3 >/dev/null || die "no python3"
kernel=$(ls -1 /boot/vmlinuz-*-cloud-amd64 2>/dev/null | sort -V | tail -n1)
[ -n "$kernel" ] || die "no /boot/vmlinuz-*-cloud-amd64 (apt-get install linux-image-cloud-amd64)"
kver=${kernel#/boot/vmlinuz-}
initrd=$("$root/tests/e2e/make_initramfs.sh" "$build/tests/e2e" "$kver" | tail -n1) ||
	die "make_initramfs.sh failed"
[ -f "$initrd" ] || die "no initramfs"
if [ "$qemu_cpu" -lt "$dut_cpu" ]; then
	dut_lcores=$qemu_cpu,$dut_cpu
else
	dut_lcores=$dut_cpu,$qemu_cpu
fi
dut_mask=$(printf '0x%x' $((1 << dut_cpu)))
qemu_mask=$(printf '0x%x' $((1 << qemu_cpu)))

rundir=$(mktemp -d /tmp/hvbench-iperf3.XXXXXX) || die "mktemp failed"
pids=()           # processes to stop on exit (newest last)
prefix=hvip$$-    # DPDK --file-prefix of everything we start (removed at exit)

cleanup() {
	local i

	# newest first: guests, then the DUT, then ovsdb-server
	for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
		stop_pid "${pids[i]}" 5 TERM
	done
	pids=()
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
cp "$build/app/hvswitch/hvswitch" "$build/app/hvctl/hvctl" "$initrd" "$rundir/bin/" || die "copy failed"
hvswitch=$rundir/bin/hvswitch
hvctl=$rundir/bin/hvctl
initrd=$rundir/bin/$(basename "$initrd")

# ---------------------------------------------------------------- OVS setup
# (as tests/perf/bench_switch.sh: private ovsdb-server, --no-huge with
# --legacy-mem and per-port memory, own network namespace; here with
# userspace TSO on)
ovs_dir=$rundir/ovs
ovs_ok=0
ovs_why=

ovs_setup() {
	ovs_db_start "$vswitchd" "$qemu_cpu" || return 1
	# --legacy-mem: ovs-vswitchd adds --in-memory otherwise, which --no-huge refuses;
	# per-port-memory: the shared 262144-mbuf pool does not fit in -m 1024
	ovs_db_bridge "$rundir/ovs0.sock" "$rundir/ovs1.sock" \
		"other_config:dpdk-extra=--no-pci --no-huge --legacy-mem -m 1024 --file-prefix=${prefix}ovs" \
		other_config:pmd-cpu-mask="$dut_mask" other_config:dpdk-lcore-mask="$qemu_mask" \
		other_config:per-port-memory=true other_config:userspace-tso-enable=true
}

# ---------------------------------------------------------------- DUTs
# Start a DUT in the background and wait until it takes guests; sets dut_pid.
start_dut() {
	local dut=$1 log=$2 i

	rm -f "$rundir"/ovs*.sock
	case $dut in
	hvswitch)
		rm -rf "$rundir/hv" && mkdir -p "$rundir/hv"
		# main lcore (control plane, sleeps in poll) with the QEMUs, the PMD
		# lcore alone on its CPU
		"$hvswitch" -l "$dut_lcores" --main-lcore "$qemu_cpu" --no-pci --no-huge -m 256 \
			--file-prefix "${prefix}d$run" -- --run-dir "$rundir/hv" \
			--config "$rundir/hv/hvswitch.json" >"$log" 2>&1 &
		dut_pid=$!
		pids+=("$dut_pid")
		for ((i = 0; i < 300; i++)); do
			[ -S "$rundir/hv/hvswitch.sock" ] && break
			kill -0 "$dut_pid" 2>/dev/null || return 1
			sleep 0.1
		done
		[ -S "$rundir/hv/hvswitch.sock" ] || return 1
		"$hvctl" --socket "$rundir/hv/hvswitch.sock" port add vm1 --type vhost-user >/dev/null &&
			"$hvctl" --socket "$rundir/hv/hvswitch.sock" port add vm2 --type vhost-user >/dev/null
		;;
	ovs)
		rm -f "$ovs_dir/vswitchd.ctl" "$ovs_dir/vswitchd.pid"
		# all of it on the QEMUs' CPU; the PMD thread pins itself to
		# pmd-cpu-mask. Own network namespace: its bridge port is a tap device.
		taskset -c "$qemu_cpu" unshare --net -- "$vswitchd" "unix:$ovs_dir/db.sock" \
			--unixctl="$ovs_dir/vswitchd.ctl" --pidfile="$ovs_dir/vswitchd.pid" \
			--log-file="$log" >"$log.out" 2>&1 &
		dut_pid=$!
		pids+=("$dut_pid")
		for ((i = 0; i < 300; i++)); do
			kill -0 "$dut_pid" 2>/dev/null || return 1
			[ -S "$ovs_dir/vswitchd.ctl" ] && grep -q 'using datapath ID' "$log" 2>/dev/null &&
				return 0
			sleep 0.1
		done
		return 1
		;;
	esac
}

stop_dut() {
	local dut=$1 pid=$2

	if [ "$dut" = ovs ]; then
		stop_pid "$pid" 15 TERM
	else
		stop_pid "$pid" 10 INT
	fi
	forget_pid "$pid"
	rm -f "$rundir"/ovs*.sock
	rm -rf /var/run/dpdk/"${prefix}d$run" 2>/dev/null
}

# iperf3's JSON in a guest's console log -> "recv_bps sent_bps retransmits"
iperf_result() {
	python3 - "$1" <<'PY'
import json, re, sys
text = open(sys.argv[1], errors="replace").read().replace("\r", "")
j = re.search(r"^HVTEST IPERF json-begin\n(.*?)^HVTEST IPERF json-end", text, re.M | re.S)
try:
    d = json.loads(j.group(1))
    if d.get("error"):
        raise ValueError(d["error"])
    e = d["end"]
    print("%.0f %.0f %d" % (e["sum_received"]["bits_per_second"], e["sum_sent"]["bits_per_second"],
                            e["sum_sent"].get("retransmits", 0)))
except Exception as ex:
    print("error", str(ex).replace(" ", "_")[:80])
PY
}

# a guest's negotiated virtio-net features (HVTEST OFFLOADS, bit 0 first) ->
# "host_tso4=B guest_tso4=B csum=B guest_csum=B"
guest_bits() {
	tr -d '\r' <"$1" | sed -n 's/^HVTEST OFFLOADS \([01]*\).*/\1/p' | head -n1 |
		awk '{ printf "host_tso4=%s guest_tso4=%s csum=%s guest_csum=%s",
			substr($1, 12, 1), substr($1, 8, 1), substr($1, 1, 1), substr($1, 2, 1) }'
}

declare -A gbps   # [dut] -> space-separated Gbit/s of its runs
failures=0
run=0

run_one() {
	local dut=$1 log n peer go_sent deadline all r bits1 bits2 frame drops= tso status=
	local qpids=() chardev

	run=$((run + 1))
	log=$rundir/logs/$run-$dut.log
	if [ -n "${HV_BENCH_LOCKFILE:-}" ]; then
		while [ -e "$HV_BENCH_LOCKFILE" ]; do sleep 20; done
	fi
	if ! start_dut "$dut" "$log"; then
		note "run $run: $dut did not get ready; its log:"
		tail -20 "$log" >&2
		stop_dut "$dut" "$dut_pid"
		failures=$((failures + 1))
		return
	fi
	for n in 1 2; do
		peer=$((3 - n))
		if [ "$dut" = ovs ]; then
			# OVS is the vhost-user client: QEMU listens (and waits for it)
			chardev="socket,id=c0,path=$rundir/ovs$((n - 1)).sock,server=on"
		else
			chardev="socket,id=c0,path=$rundir/hv/vm$n.sock"
		fi
		taskset -c "$qemu_cpu" "$qemu" -accel tcg -cpu max -smp 1 -m 512 -nodefaults -no-reboot \
			-display none -monitor none -serial "file:$rundir/logs/$run-vm$n.log" \
			-kernel "$kernel" -initrd "$initrd" \
			-append "console=ttyS0 panic=-1 hv.ip=10.0.0.$n/24 hv.peer=10.0.0.$peer hv.count=3 hv.wait=$((run_timeout / 2)) hv.linger=$run_timeout hv.tcp_role=$([ "$n" = 1 ] && echo send || echo recv) hv.iperf_s=$secs" \
			-chardev "socket,id=ctl,path=$rundir/ctl$n.sock,server=on,wait=off" \
			-device isa-serial,chardev=ctl \
			-object memory-backend-memfd,id=mem,size=512M,share=on -numa node,memdev=mem \
			-chardev "$chardev" -netdev vhost-user,id=n0,chardev=c0 \
			-device "virtio-net-pci,netdev=n0,mac=52:54:00:00:00:0$n,romfile=,vectors=0" \
			</dev/null >"$rundir/logs/$run-qemu$n.out" 2>&1 &
		qpids+=($!)
		pids+=($!)
	done
	# both guests report HVTEST END after iperf3; guest 2 waits for its go
	deadline=$(($(date +%s) + run_timeout))
	go_sent=0
	while :; do
		all=1
		for n in 1 2; do
			grep -q '^HVTEST END' "$rundir/logs/$run-vm$n.log" 2>/dev/null && continue
			kill -0 "${qpids[$((n - 1))]}" 2>/dev/null || continue
			all=0
		done
		[ "$all" = 1 ] && break
		if [ "$go_sent" = 0 ] && grep -q '^HVTEST IPERF wait-go' "$rundir/logs/$run-vm2.log" 2>/dev/null; then
			bench_send_go "$rundir/ctl2.sock" && go_sent=1
		fi
		[ "$(date +%s)" -ge "$deadline" ] && { note "run $run: guests did not finish in $run_timeout s"; break; }
		sleep 0.5
	done
	# the switch's view while the guests are still up
	if [ "$dut" = ovs ]; then
		# average frame OVS took from the sender (p0); TSO state of the ports
		frame=$(ovs_vsctl get Interface p0 statistics 2>/dev/null |
			python3 -c 'import re, sys; t = sys.stdin.read()
b = re.search(r"rx_bytes=(\d+)", t); p = re.search(r"rx_packets=(\d+)", t)
print(int(b.group(1)) // max(1, int(p.group(1))) if b and p else "?")')
		ovs_vsctl get Interface p0 status >"$rundir/logs/$run-ovs-p0-status.txt" 2>&1
		ovs_vsctl get Interface p1 status >"$rundir/logs/$run-ovs-p1-status.txt" 2>&1
		# OVS 3.1 logs the TSO switch at start; the vhost ports' status
		# carries the virtio features the guests negotiated
		status="ovs_log_tso=$(grep -qi 'TCP Segmentation Offloading support enabled' "$log" && echo yes || echo no)"
		status+=" p0_status={$(tr -d '{}\n ' <"$rundir/logs/$run-ovs-p0-status.txt")}"
		drops=$(ovs_vsctl get Interface p1 statistics 2>/dev/null |
			sed -n 's/.*[{ ]tx_dropped=\([0-9]*\).*/\1/p')
	else
		"$hvctl" --socket "$rundir/hv/hvswitch.sock" --json stats >"$rundir/logs/$run-hv-stats.json" 2>&1
		read -r frame drops < <(python3 -c 'import json, sys
ports = {p.get("name"): p for p in json.load(open(sys.argv[1])).get("ports", [])}
p1, p2 = ports.get("vm1", {}), ports.get("vm2", {})
print(p1.get("rx_bytes", 0) // max(1, p1.get("rx_packets", 0)), p2.get("drops", "?"))' \
			"$rundir/logs/$run-hv-stats.json" 2>/dev/null)
		"$hvctl" --socket "$rundir/hv/hvswitch.sock" --json port show vm2 >"$rundir/logs/$run-hv-vm2.json" 2>&1
		status="vm2_passthrough=$(python3 -c 'import json, sys
print(json.load(open(sys.argv[1]))["stats"]["offload"]["passthrough"])' "$rundir/logs/$run-hv-vm2.json" 2>/dev/null)"
	fi
	for ((n = ${#qpids[@]} - 1; n >= 0; n--)); do
		stop_pid "${qpids[n]}" 5 TERM
		forget_pid "${qpids[n]}"
	done
	stop_dut "$dut" "$dut_pid"
	r=$(iperf_result "$rundir/logs/$run-vm1.log")
	bits1=$(guest_bits "$rundir/logs/$run-vm1.log")
	bits2=$(guest_bits "$rundir/logs/$run-vm2.log")
	# TSO in effect: both guests negotiated it and the switch took frames
	# larger than an MTU frame from the sender
	if [[ "$bits1 $bits2" == *"host_tso4=1 guest_tso4=1"*"host_tso4=1 guest_tso4=1"* ]] &&
		[ "${frame:-0}" -gt 1514 ] 2>/dev/null; then
		tso=yes
	else
		tso=no
	fi
	if [ "${r%% *}" = error ] || [ -z "$r" ]; then
		note "run $run ($dut) failed: iperf3 ${r#error }; last lines of the guests:"
		tail -5 "$rundir/logs/$run-vm1.log" "$rundir/logs/$run-vm2.log" >&2
		failures=$((failures + 1))
		return
	fi
	set -- $r
	local g
	g=$(awk -v b="$1" 'BEGIN { printf "%.3f", b / 1e9 }')
	echo "RUN dut=$dut rep=$rep gbps=$g sent_gbps=$(awk -v b="$2" 'BEGIN { printf "%.3f", b / 1e9 }')" \
		"retransmits=$3 avg_frame_from_sender=${frame:-?} drops_to_receiver=${drops:-?} tso=$tso" \
		"guest1{$bits1} guest2{$bits2} $status"
	gbps[$dut]+="$g "
}


# ---------------------------------------------------------------- main
echo "bench_iperf3: $(date -u +%Y-%m-%dT%H:%M:%SZ) $(uname -r)," \
	"$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) CPUs," \
	"load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "bench_iperf3: QEMU TCG guests ($kver, $(basename "$initrd")) on CPU $qemu_cpu, forwarding" \
	"thread on CPU $dut_cpu, iperf3 -t $secs, $reps repetitions; guest-CPU-bound: a sanity comparison"
case " $duts " in
*" ovs "*)
	if ovs_setup; then
		ovs_ok=1
		echo "bench_iperf3: OVS: $("$vswitchd" --version | head -1), userspace-tso-enable=true"
	else
		note "OVS skipped: $ovs_why"
		duts=$(sed 's/\bovs\b//' <<<"$duts")
	fi
	;;
esac

for ((rep = 1; rep <= reps; rep++)); do
	for dut in $duts; do
		run_one "$dut"
	done
done

echo
for dut in $duts; do
	echo "SUMMARY dut=$dut gbps=$(bench_median "${gbps[$dut]:-}" 3) runs=$(sed 's/ $//; s/ /,/g' <<<"${gbps[$dut]:-}")"
done
h=$(bench_median "${gbps[hvswitch]:-}" 3)
o=$(bench_median "${gbps[ovs]:-}" 3)
echo "SUMMARY ratio=hvswitch/ovs value=$(awk -v a="$h" -v b="$o" 'BEGIN { if (a > 0 && b > 0) printf "%.2f", a / b; else print "n/a" }')"
[ "$ovs_ok" = 1 ] || [[ " ${HV_BENCH_DUTS:-ovs} " != *" ovs "* ]] || note "OVS was not measured: $ovs_why"
[ "$failures" -eq 0 ] || die "$failures run(s) failed"
exit 0
