#!/usr/bin/env bash
# The demo: hvswitch with two KVM guests of our own VMM (hvctl guest, the
# built-in test guest) on two vhost-user ports. The guests ping each other,
# then one streams frames to the other for a few seconds while the switch's
# live counters (rates, interrupts) scroll by; the guests' consoles and KVM
# statistics show what arrived and how. Everything is torn down at the end.
#
#   HV_DEMO_SECONDS  how long to stream (default 5)
#   HV_DEMO_GUEST    builtin (default) or linux: two Linux guests instead (the
#                    guest kernel of guest/ and its busybox initramfs, built
#                    here: minutes), which ping each other, move 1 MiB over
#                    TCP (sha256 on both ends) and power off. Where guest CPL0
#                    is emulated (no VT-x/AMD-V) they take several minutes to
#                    boot (doc/vmm.rst)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
"$root/tests/deps.sh"
[ -f build/build.ninja ] || meson setup build --werror
ninja -C build

secs=${HV_DEMO_SECONDS:-5}
run=$(mktemp -d /tmp/hvswitch-demo.XXXXXX)
export HV_GUEST_RUN_DIR=$run/guests
switch_pid=
hvctl() { build/app/hvctl/hvctl --socket "$run/hvswitch.sock" "$@"; }
cleanup() {
	for g in vm-a vm-b; do hvctl guest stop "$g" >/dev/null 2>&1 || true; done
	if [ -n "$switch_pid" ] && kill -0 "$switch_pid" 2>/dev/null; then
		kill -INT "$switch_pid"
		for _ in $(seq 50); do kill -0 "$switch_pid" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$switch_pid" 2>/dev/null || true
	fi
	rm -rf "$run" "/var/run/dpdk/hvdemo-sw-$$"
}
trap cleanup EXIT
[ -c /dev/kvm ] || { echo "the demo's guests need /dev/kvm"; exit 1; }

echo "--- starting hvswitch: control plane on CPU 0, one PMD on CPU 1"
# with Linux guests the PMD sleeps when idle: the guests' vCPUs need the cores
sw_opts=()
[ "${HV_DEMO_GUEST:-builtin}" = linux ] && sw_opts=(--pmd-sleep 50)
build/app/hvswitch/hvswitch -l 0,1 --main-lcore 0 --no-pci --no-huge -m 256 \
	--file-prefix "hvdemo-sw-$$" -- --run-dir "$run" --config "$run/hvswitch.json" \
	"${sw_opts[@]}" >"$run/switch.log" 2>&1 &
switch_pid=$!
for _ in $(seq 300); do
	[ -S "$run/hvswitch.sock" ] && break
	kill -0 "$switch_pid" 2>/dev/null || { cat "$run/switch.log"; exit 1; }
	sleep 0.1
done
[ -S "$run/hvswitch.sock" ] || { echo "hvswitch did not start"; cat "$run/switch.log"; exit 1; }

echo "--- two guest ports, added with hvctl"
hvctl port add vm0 --type vhost-user
hvctl port add vm1 --type vhost-user

# wait_console GUEST REGEX [SECONDS]: until the guest's console shows REGEX (30 s)
wait_console() {
	for _ in $(seq $((${3:-30} * 10))); do
		grep -Eq "$2" "$HV_GUEST_RUN_DIR/$1.log" 2>/dev/null && return 0
		sleep 0.1
	done
	echo "guest $1: '$2' did not appear"; cat "$HV_GUEST_RUN_DIR/$1.log"; exit 1
}

if [ "${HV_DEMO_GUEST:-builtin}" = linux ]; then
	echo "--- building the guest kernel and initramfs (ninja guest-kernel guest-initramfs)"
	ninja -C build guest-kernel guest-initramfs
	args="console=ttyS0 $(cat guest/cmdline) hv.count=10 hv.hold=1 hv.tcp_kb=1024"
	echo "--- two Linux guests (hvctl guest start --kernel build/guest/vmlinux, its PVH entry)"
	hvctl guest start vm-a --kernel build/guest/vmlinux --initrd build/guest/initramfs.cpio \
		--memory 64M --queue-size 256 --port vm0 --switch-dir "$run" \
		--cmdline "$args hv.ip=10.0.0.1/24 hv.peer=10.0.0.2 hv.tcp_role=send"
	hvctl guest start vm-b --kernel build/guest/vmlinux --initrd build/guest/initramfs.cpio \
		--memory 64M --queue-size 256 --port vm1 --switch-dir "$run" \
		--cmdline "$args hv.ip=10.0.0.2/24 hv.peer=10.0.0.1 hv.tcp_role=recv"
	hvctl guest list
	for g in vm-a vm-b; do
		wait_console $g "pci 0000:00:01.0: \[1af4:1041\]" 1800
		echo "$g: virtio-net found on the PCI root bus"
		wait_console $g "HVTEST LINK state=up" 1800
		echo "$g: $(grep -h "HVTEST BOOT" "$HV_GUEST_RUN_DIR/$g.log" | tr -d '\r')"
	done
	wait_console vm-a "HVTEST HOLD" 1800
	wait_console vm-b "HVTEST HOLD" 1800
	echo "--- what the guests say (the receiver's sha256 must be the sender's)"
	grep -h "HVTEST PING\|HVTEST RTT\|HVTEST TCP" "$HV_GUEST_RUN_DIR/vm-a.log" \
		"$HV_GUEST_RUN_DIR/vm-b.log" | tr -d '\r'
	echo "--- KVM's and the NIC's view of vm-b"
	hvctl guest stats vm-b
	echo "--- what the switch counted"
	hvctl stats
	echo "--- poweroff in both guests (a line on their consoles)"
	for g in vm-a vm-b; do echo poweroff | timeout 600 build/app/hvctl/hvctl guest console $g >/dev/null; done
	grep -h "stopped:" "$HV_GUEST_RUN_DIR/vm-a.log" "$HV_GUEST_RUN_DIR/vm-b.log"
	exit 0
fi

echo "--- two KVM guests (hvctl guest start, the built-in test guest), pinging each other"
hvctl guest start vm-a --kernel builtin --memory 64M --port vm0 --switch-dir "$run" \
	--cmdline "ip=10.0.0.1 peer=10.0.0.2 mode=ping count=5 linger_ms=2000"
hvctl guest start vm-b --kernel builtin --memory 64M --port vm1 --switch-dir "$run" \
	--cmdline "ip=10.0.0.2 peer=10.0.0.1 mode=ping count=5 linger_ms=2000"
hvctl guest list
wait_console vm-a "^result:"
wait_console vm-b "^result:"
grep -h "^ping:" "$HV_GUEST_RUN_DIR/vm-a.log" "$HV_GUEST_RUN_DIR/vm-b.log"
for g in vm-a vm-b; do
	for _ in $(seq 100); do hvctl guest list | grep -q "^$g " || break; sleep 0.1; done
done

frames=$((secs * 150000))
echo "--- vm-b streams $frames frames of 1000 bytes to vm-a; the switch's counters, live"
hvctl guest start vm-a --kernel builtin --memory 64M --port vm0 --switch-dir "$run" \
	--cmdline "ip=10.0.0.1 mode=sink count=$frames size=1000 timeout_ms=$((secs * 4000))"
wait_console vm-a "sink: ready"
hvctl guest start vm-b --kernel builtin --memory 64M --port vm1 --switch-dir "$run" \
	--cmdline "ip=10.0.0.2 peer=10.0.0.1 mode=stream count=$frames size=1000 linger_ms=1000"
hvctl stats --watch 1 --count "$secs" || true
wait_console vm-a "^result:"
wait_console vm-b "^result:"
echo "--- what the guests say (the stream is verified byte for byte by the sink)"
grep -h "^stream:\|^sink:\|^result:" "$HV_GUEST_RUN_DIR/vm-b.log" "$HV_GUEST_RUN_DIR/vm-a.log"
echo "--- KVM's view of the sink's data phase (no exit to userspace between the marks)"
grep -h "^\[vmm\] mark" "$HV_GUEST_RUN_DIR/vm-a.log"
echo "--- what the switch counted"
hvctl stats
hvctl fdb show
