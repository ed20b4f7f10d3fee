#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Interrupt moderation with Linux guests, against DPDK's vhost: two Linux
# guests move data through hvswitch at rxmod=0, rxmod=100 and rxmod=adaptive
# and through dpdk-testpmd (io forwarding between two net_vhost ports), the
# DUTs taking turns in pairs (A B C D, A B C D, ...). Guest-level figures on
# a shared machine swing 2x with its state, so each hvswitch setting is set
# against the testpmd run and the rxmod=0 run of its own pair; the summary
# gives the median of those per-pair ratios. See doc/performance.rst,
# "Interrupt moderation (rxmod)", "Linux guests".
#
# usage: tests/perf/bench_guest_rxmod.sh [BUILD_DIR]      (default ./build)
#
# Guests (HV_BENCH_GUESTS):
#   qemu  QEMU TCG guests with the Debian cloud kernel and the e2e initramfs
#         (tests/e2e/make_initramfs.sh), as tests/perf/bench_iperf3.sh:
#         small-writes bulk TCP, then iperf3 for HV_BENCH_IPERF_S seconds
#   vmm   our VMM's Linux guests (hvctl guest run, build/guest/vmlinux and
#         build/guest/initramfs.cpio: `ninja -C build guest-kernel
#         guest-initramfs`), small-writes bulk TCP only (no iperf3 in that
#         image; guest CPL0 is emulated on hosts without VT-x/AMD-V: keep
#         HV_BENCH_TCP_KB small)
# Small-writes bulk TCP: guest 1 sends HV_BENCH_TCP_KB KiB to guest 2 as
# `dd bs=HV_BENCH_TCP_BS | nc` (hv.tcp_kb, hv.tcp_bs of the initramfs); the
# receiver times it from the connection to EOF, both print their sha256
# (compared here) and their virtio interrupts around it (/proc/interrupts).
# Each run starts a fresh DUT and two fresh guests. CPUs: both guests and
# the DUT's main thread on HV_BENCH_QEMU_CPU, its forwarding thread alone on
# HV_BENCH_DUT_CPU. The switch's interrupts (callfd writes, `hvctl stats`)
# are read when the receiver starts listening, when it is done and at the end.
#
# Environment (defaults in brackets):
#   HV_BENCH_GUESTS       qemu | vmm                                  [qemu]
#   HV_BENCH_PAIRS        pairs (each: one run per DUT)               [3]
#   HV_BENCH_DUTS         rxmod0 rxmod100 adaptive testpmd, in turn order
#   HV_BENCH_TCP_KB       KiB of the small-writes transfer  [qemu 8192, vmm 256]
#   HV_BENCH_TCP_BS       bytes per write                             [1024]
#   HV_BENCH_IPERF_S      iperf3 -t seconds (qemu; 0: none)           [5]
#   HV_BENCH_QEMU_CPU     CPU of the guests and the DUTs' main threads [0]
#   HV_BENCH_DUT_CPU      CPU of the DUT's forwarding thread         [1]
#   HV_BENCH_TESTPMD      dpdk-testpmd binary                         [dpdk-testpmd]
#   HV_BENCH_RUN_TIMEOUT_S deadline of one run's guests        [qemu 300, vmm 1200]
#   HV_BENCH_KERNEL, HV_BENCH_INITRD  vmm guests' kernel and initramfs
#                         [BUILD_DIR/guest/vmlinux, BUILD_DIR/guest/initramfs.cpio]
#   HV_BENCH_LOCKFILE     if set: before each run, wait while this file
#                         exists (the machine's owner pauses processes then)
# A run during whose measured spans (from the receiver's listen to the end)
# the lock file appeared, or this script stood still for more than 3 s
# (stopped with its guests), is run again (twice at most); boot may pause.
#   HV_BENCH_KEEP_LOGS    1: keep the run directory with every log   [0]
#
# Prints one "RUN ..." line per run, then per-pair tables and the medians
# (reStructuredText). Exit status 0 when every run produced a result.
set -u -o pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-./build}
guests=${HV_BENCH_GUESTS:-qemu}
pairs=${HV_BENCH_PAIRS:-3}
duts=${HV_BENCH_DUTS:-rxmod0 rxmod100 adaptive testpmd}
tcp_bs=${HV_BENCH_TCP_BS:-1024}
qemu_cpu=${HV_BENCH_QEMU_CPU:-0}
dut_cpu=${HV_BENCH_DUT_CPU:-1}
testpmd=${HV_BENCH_TESTPMD:-dpdk-testpmd}

die() {
	echo "bench_guest_rxmod: $*" >&2
	exit 1
}
note() {
	echo "bench_guest_rxmod: $*" >&2
}
# stop_pid, forget_pid, bench_send_go, testpmd_start, testpmd_quit
. "$here/bench_lib.sh"

case $guests in
qemu)
	tcp_kb=${HV_BENCH_TCP_KB:-8192}
	secs=${HV_BENCH_IPERF_S:-5}
	run_timeout=${HV_BENCH_RUN_TIMEOUT_S:-300}
	qemu=$(command -v qemu-system-x86_64) || die "no qemu-system-x86_64"
	kernel=$(ls -1 /boot/vmlinuz-*-cloud-amd64 2>/dev/null | sort -V | tail -n1)
	[ -n "$kernel" ] || die "no /boot/vmlinuz-*-cloud-amd64 (apt-get install linux-image-cloud-amd64)"
	kver=${kernel#/boot/vmlinuz-}
	initrd=$("$root/tests/e2e/make_initramfs.sh" "$build/tests/e2e" "$kver" | tail -n1) ||
		die "make_initramfs.sh failed"
	if [ "$secs" -gt 0 ] && [ ! -x /usr/bin/iperf3 ]; then
		die "no /usr/bin/iperf3 (apt-get install iperf3), or HV_BENCH_IPERF_S=0"
	fi
	;;
vmm)
	tcp_kb=${HV_BENCH_TCP_KB:-256}
	secs=0
	run_timeout=${HV_BENCH_RUN_TIMEOUT_S:-1200}
	kernel=${HV_BENCH_KERNEL:-$build/guest/vmlinux}
	initrd=${HV_BENCH_INITRD:-$build/guest/initramfs.cpio}
	[ -c /dev/kvm ] || die "no /dev/kvm"
	[ -f "$kernel" ] || die "no $kernel (ninja -C $build guest-kernel)"
	[ -f "$initrd" ] || die "no $initrd (ninja -C $build guest-initramfs)"
	grep -aq 'hv.tcp_bs=' "$initrd" || die "$initrd predates hv.tcp_bs (ninja -C $build guest-initramfs)"
	;;
*) die "HV_BENCH_GUESTS: qemu or vmm, not '$guests'" ;;
esac
[ -x "$build/app/hvswitch/hvswitch" ] || die "no $build/app/hvswitch/hvswitch (build first)"
[ -x "$build/app/hvctl/hvctl" ] || die "no $build/app/hvctl/hvctl (build first)"
[ "$qemu_cpu" != "$dut_cpu" ] || die "guests and the DUT's forwarding thread need two different CPUs"
[[ " $duts " == *" testpmd "* ]] && { command -v "$testpmd" >/dev/null || die "no $testpmd"; }
command -v python3 >/dev/null || die "no python3"
[ "$tcp_kb" -gt 0 ] && [ "$tcp_bs" -gt 0 ] || die "HV_BENCH_TCP_KB and HV_BENCH_TCP_BS must be > 0"
if [ "$qemu_cpu" -lt "$dut_cpu" ]; then
	dut_lcores=$qemu_cpu,$dut_cpu
else
	dut_lcores=$dut_cpu,$qemu_cpu
fi

rundir=$(mktemp -d /tmp/hvbench-guest-rxmod.XXXXXX) || die "mktemp failed"
pids=()           # processes to stop on exit (newest last)
prefix=hvgr$$-    # DPDK --file-prefix of everything we start (removed at exit)

cleanup() {
	local i

	[ -n "${testpmd_fd:-}" ] && testpmd_quit
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
cp "$build/app/hvswitch/hvswitch" "$build/app/hvctl/hvctl" "$kernel" "$initrd" "$rundir/bin/" ||
	die "copy failed"
hvswitch=$rundir/bin/hvswitch
hvctl=$rundir/bin/hvctl
kernel=$rundir/bin/$(basename "$kernel")
initrd=$rundir/bin/$(basename "$initrd")
sw() { "$hvctl" --socket "$rundir/hv/hvswitch.sock" "$@"; }

# Start DUT @1 (rxmodV, adaptive, testpmd) in the background until its two
# sockets vm1.sock and vm2.sock are there; sets dut_pid.
start_dut() {
	local dut=$1 log=$2 mod i

	rm -rf "$rundir/hv" && mkdir -p "$rundir/hv"
	case $dut in
	testpmd)
		testpmd_start "$rundir/tp.in" "$log" "$rundir/hv/vm1.sock" "$rundir/hv/vm2.sock" \
			"$testpmd" -l "$dut_lcores" --main-lcore "$qemu_cpu" --no-pci --no-huge -m 512 \
			--file-prefix "${prefix}d$run" || return 1
		dut_pid=$testpmd_pid
		pids+=("$dut_pid")
		;;
	*)
		case $dut in
		rxmod*) mod=${dut#rxmod} ;;
		*) mod=$dut ;;
		esac
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
		sw port add vm1 --type vhost-user --rxmod "$mod" >/dev/null &&
			sw port add vm2 --type vhost-user --rxmod "$mod" >/dev/null || return 1
		;;
	esac
	for ((i = 0; i < 300; i++)); do
		[ -S "$rundir/hv/vm1.sock" ] && [ -S "$rundir/hv/vm2.sock" ] && return 0
		kill -0 "$dut_pid" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

stop_dut() {
	local dut=$1 pid=$2

	if [ "$dut" = testpmd ]; then
		testpmd_quit
		stop_pid "$pid" 5 TERM
	else
		stop_pid "$pid" 10 INT
	fi
	forget_pid "$pid"
	rm -rf "$rundir/hv" /var/run/dpdk/"${prefix}d$run" 2>/dev/null
}

# the interrupts hvswitch sent both guests so far (callfd writes); "-" for testpmd
sw_irqs() {
	[ "$1" = testpmd ] && { echo -; return; }
	sw --json stats 2>/dev/null | python3 -c 'import json, sys
print(sum(p.get("interrupts", 0) for p in json.load(sys.stdin).get("ports", [])
          if p.get("name") in ("vm1", "vm2")))' 2>/dev/null || echo -
}

# start guest N (1 sender, 2 receiver) of run $run on socket vmN.sock
start_guest() {
	local n=$1 peer=$((3 - $1)) role args

	role=$([ "$n" = 1 ] && echo send || echo recv)
	args="console=ttyS0 hv.ip=10.0.0.$n/24 hv.peer=10.0.0.$peer hv.count=3"
	args+=" hv.wait=$((run_timeout / 2)) hv.linger=$run_timeout hv.tcp_role=$role"
	args+=" hv.tcp_kb=$tcp_kb hv.tcp_bs=$tcp_bs hv.iperf_s=$secs"
	if [ "$guests" = qemu ]; then
		taskset -c "$qemu_cpu" "$qemu" -accel tcg -cpu max -smp 1 -m 512 -nodefaults -no-reboot \
			-display none -monitor none -serial "file:$rundir/logs/$run-vm$n.log" \
			-kernel "$kernel" -initrd "$initrd" -append "panic=-1 $args" \
			-chardev "socket,id=ctl,path=$rundir/ctl$n.sock,server=on,wait=off" \
			-device isa-serial,chardev=ctl \
			-object memory-backend-memfd,id=mem,size=512M,share=on -numa node,memdev=mem \
			-chardev "socket,id=c0,path=$rundir/hv/vm$n.sock" -netdev vhost-user,id=n0,chardev=c0 \
			-device "virtio-net-pci,netdev=n0,mac=52:54:00:00:00:0$n,romfile=,vectors=0" \
			</dev/null >"$rundir/logs/$run-qemu$n.out" 2>&1 &
	else
		# the boot parameters the guest kernel needs here (doc/vmm.rst)
		taskset -c "$qemu_cpu" "$hvctl" guest run "g$n" --kernel "$kernel" --initrd "$initrd" \
			--memory 64M --queue-size 256 --port "$rundir/hv/vm$n.sock" \
			--cmdline "$args $(cat "$root/guest/cmdline")" \
			</dev/null >"$rundir/logs/$run-vm$n.log" 2>&1 &
	fi
	qpids+=($!)
	pids+=($!)
}

failures=0
run=0
results=$rundir/results.tsv

lock_wait() {
	[ -n "${HV_BENCH_LOCKFILE:-}" ] || return 0
	while [ -e "$HV_BENCH_LOCKFILE" ]; do sleep 5; done
}

# run_one DUT [TRY]: one run; again if it was paused
run_one() {
	local dut=$1 try=${2:-1} log n deadline all s0=- s1=- s2=- stage=0 r locked=0 t t0 measuring=0
	local qpids=()

	run=$((run + 1))
	lock_wait
	log=$rundir/logs/$run-$dut.log
	if ! start_dut "$dut" "$log"; then
		note "run $run: $dut did not get ready; its log:"
		tail -20 "$log" >&2
		stop_dut "$dut" "$dut_pid"
		failures=$((failures + 1))
		return
	fi
	start_guest 1
	start_guest 2
	# stage 0: until the receiver listens (s0), 1: until it has it all (s1;
	# then iperf3's go), 2: until both guests are done (s2)
	deadline=$(($(date +%s) + run_timeout))
	t0=$(date +%s)
	while :; do
		if [ $stage = 0 ] && grep -q '^HVTEST IRQS at=tcp-start' "$rundir/logs/$run-vm2.log" 2>/dev/null; then
			s0=$(sw_irqs "$dut")
			stage=1
			measuring=1
		fi
		if [ $stage = 1 ] && grep -q '^HVTEST IRQS at=tcp-end' "$rundir/logs/$run-vm2.log" 2>/dev/null; then
			if [ "$secs" -eq 0 ]; then
				s1=$(sw_irqs "$dut")
				stage=2
				measuring=0
			elif grep -q '^HVTEST IPERF wait-go' "$rundir/logs/$run-vm2.log" 2>/dev/null; then
				s1=$(sw_irqs "$dut")
				bench_send_go "$rundir/ctl2.sock" || note "run $run: no go to guest 2"
				stage=2
			fi
		fi
		# stopped for more than 3 s while measuring (or just before)?
		t=$(date +%s)
		[ $measuring = 1 ] && [ $((t - t0)) -gt 3 ] && locked=1
		t0=$t
		all=1
		for n in 1 2; do
			grep -q '^HVTEST END' "$rundir/logs/$run-vm$n.log" 2>/dev/null && continue
			kill -0 "${qpids[$((n - 1))]}" 2>/dev/null || continue
			all=0
		done
		[ "$all" = 1 ] && break
		[ $measuring = 1 ] && [ -n "${HV_BENCH_LOCKFILE:-}" ] && [ -e "$HV_BENCH_LOCKFILE" ] && locked=1
		[ "$(date +%s)" -ge "$deadline" ] && { note "run $run: guests did not finish in $run_timeout s"; break; }
		sleep 0.1
	done
	s2=$(sw_irqs "$dut")
	for ((n = ${#qpids[@]} - 1; n >= 0; n--)); do
		stop_pid "${qpids[n]}" 5 TERM
		forget_pid "${qpids[n]}"
	done
	stop_dut "$dut" "$dut_pid"
	if [ "$locked" = 1 ] && [ "$try" -lt 3 ]; then
		note "run $run ($dut): paused during the run: once more"
		run_one "$dut" $((try + 1))
		return
	fi
	r=$(python3 "$here/bench_guest_rxmod.py" run "$rundir/logs/$run-vm1.log" "$rundir/logs/$run-vm2.log" \
		"$s0" "$s1" "$s2")
	if [ "${r%% *}" = error ]; then
		note "run $run ($dut) failed: ${r#error }; last lines of the guests:"
		tail -5 "$rundir/logs/$run-vm1.log" "$rundir/logs/$run-vm2.log" >&2
		failures=$((failures + 1))
		return
	fi
	echo "RUN pair=$pair dut=$dut $r load=$(cut -d' ' -f1 /proc/loadavg)"
	echo "$pair $dut $r" >>"$results"
}

echo "bench_guest_rxmod: $(date -u +%Y-%m-%dT%H:%M:%SZ) $(uname -r)," \
	"$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) CPUs," \
	"load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "bench_guest_rxmod: $guests guests ($(basename "$kernel"), $(basename "$initrd")) on CPU" \
	"$qemu_cpu, forwarding thread on CPU $dut_cpu; $tcp_kb KiB in $tcp_bs-byte writes$(
		[ "$secs" -gt 0 ] && echo ", iperf3 -t $secs"); $pairs pairs of: $duts"
: >"$results"
for ((pair = 1; pair <= pairs; pair++)); do
	for dut in $duts; do
		run_one "$dut"
	done
done
echo "bench_guest_rxmod: done $(date -u +%H:%M:%SZ), load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo
python3 "$here/bench_guest_rxmod.py" summary "$results"
[ "$failures" -eq 0 ] || die "$failures run(s) failed"
exit 0
