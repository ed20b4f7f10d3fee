#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# KVM, end to end: two Linux guests of our VMM (the guest kernel of guest/,
# `ninja -C build guest-kernel`, and its busybox initramfs) on two
# vhost-user ports of hvswitch. Each guest must enumerate the PCI root bus
# from our ACPI tables and probe virtio-net [1af4:1041] at 00:01.0, bring
# eth0 up, ping the other (0 % loss), move 1 MiB over TCP byte-exact (busybox
# nc; both ends print a sha256, compared here; no TCP checksum error
# counted), and power off (ACPI S5) when told on its console: that must end
# both VMs. During the TCP transfer no exit to userspace may come from the
# NIC (kicks are ioeventfds, interrupts irqfds): MMIO exits to the VMM stay
# flat and port I/O exits stay at what the console output costs.
# Waits on console lines only; the bound is generous (HV_LINUX_TIMEOUT,
# default 1200 s) since on hosts without VT-x/AMD-V guest CPL0 is emulated.
# For the same reason the guests boot the way that costs the fewest guest
# instructions (doc/vmm.rst, "Boot time"): the ELF vmlinux through its PVH
# entry (no decompression), 64 MiB, 256-entry NIC queues; and the switch's
# PMD sleeps when idle, so that it leaves its core to the guests.
#   test_linux_guests.sh KERNEL INITRAMFS
# Skipped (77) without /dev/kvm.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
skip_without_kvm
kernel=$1
initrd=$2
limit=${HV_LINUX_TIMEOUT:-1200}
[ -f "$kernel" ] || fail "no guest kernel $kernel (ninja -C build guest-kernel)"
[ -f "$initrd" ] || fail "no initramfs $initrd (ninja -C build guest-initramfs)"
export HV_GUEST_RUN_DIR=$run/guests
g() { timeout 60 "$HVCTL" guest "$@"; }
stop_all() { g stop l1 --force >/dev/null 2>&1; g stop l2 --force >/dev/null 2>&1; }
trap 'stop_all; cleanup' EXIT
t0=$(date +%s)
left() { echo $((limit - ($(date +%s) - t0))); }
# wait_con GUEST REGEX: until the console shows REGEX; a panic or a stopped
# VM (KVM internal error, triple fault) fails at once
wait_con() {
	local log=$HV_GUEST_RUN_DIR/$1.log end=$(($(date +%s) + $(left)))
	while [ "$(date +%s)" -lt "$end" ]; do
		grep -Eq "$2" "$log" 2>/dev/null && return 0
		if grep -Eq "Kernel panic|hvctl: guest $1 stopped" "$log" 2>/dev/null; then
			grep -E "Kernel panic|segfault|stopped:" "$log" >&2
			return 1
		fi
		sleep 0.2
	done
	return 1
}

# the field NAME of vCPU 0 in `hvctl --json guest stats GUEST`
stat0() {
	"$HVCTL" --json guest stats "$1" | tr -d ' \t\n' |
		sed -n "s/.*\"vcpu\":0[,}][^}]*\"$2\":\([0-9]*\).*/\1/p"
}
console() { # GUEST TEXT: a line on the guest's serial console
	/usr/bin/python3 -c '
import json, socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.sendall((json.dumps({"cmd": "guest.console", "args": {"input": sys.argv[2] + "\n"}}) + "\n").encode())
print(json.loads(s.makefile().readline())["result"]["queued"])' "$HV_GUEST_RUN_DIR/$1.sock" "$2"
}

SW_EXTRA="--pmd-sleep 50" sw_start
common="console=ttyS0 hv.count=20 hv.interval=0.2 hv.hold=1 hv.tcp_kb=1024"
# the boot parameters of guest/kernel.config's comment (doc/vmm.rst)
common="$common $(cat "$(dirname "$0")/../../guest/cmdline")"
opts=(--initrd "$initrd" --memory 64M --queue-size 256 --switch-dir "$run")
g start l1 --kernel "$kernel" "${opts[@]}" --port vm0 \
	--cmdline "$common hv.ip=10.0.0.1/24 hv.peer=10.0.0.2 hv.tcp_role=send" || fail "start l1"
g start l2 --kernel "$kernel" "${opts[@]}" --port vm1 \
	--cmdline "$common hv.ip=10.0.0.2/24 hv.peer=10.0.0.1 hv.tcp_role=recv" || fail "start l2"
l1=$HV_GUEST_RUN_DIR/l1.log
l2=$HV_GUEST_RUN_DIR/l2.log
vmm_pid() { "$HVCTL" --json guest show "$1" | tr -d ' \t\n' | sed -n 's/.*"pid":\([0-9]*\).*/\1/p'; }

for g in l1 l2; do
	wait_con $g "pci 0000:00:01.0: \[1af4:1041\]" || fail "$g: the NIC was not enumerated"
	wait_con $g "HVTEST BOOT " || fail "$g: no userspace"
	wait_con $g "HVTEST LINK state=up" || fail "$g: eth0 not up"
done
for g in l1 l2; do
	# the guest's driver took the ring size offered (--queue-size)
	"$HVCTL" --json guest show $g | tr -d ' \t\n' | grep -q '"queue_size":256' ||
		fail "$g: guest show does not report queue_size 256"
	[ "$("$HVCTL" guest stats $g | awk '$2 == "rx" || $2 == "tx" { print $3 }' | sort -u)" = 256 ] ||
		fail "$g: the NIC's queues are not 256 entries: $("$HVCTL" guest stats $g | grep -E ' (rx|tx) ')"
	log=$HV_GUEST_RUN_DIR/$g.log
	grep -q "virtio_net virtio0 eth0: renamed\|virtio_net virtio0\|HVTEST NIC mac=" "$log" ||
		fail "$g: virtio-net did not probe"
	grep -q "HVTEST NIC mac=" "$log" || fail "$g: no eth0"
	sed -n 's/.*HVTEST BOOT .*uptime=\([0-9.]*\).*/boot to userspace: '"$g"' \1 s (guest uptime)/p' "$log"
done

# the TCP window: the sender prints its hash, then sends; sample in between
wait_con l1 "HVTEST TCP send bytes=" || fail "l1: no TCP send"
mmio0=$(stat0 l1 vmm_mmio_exits); io0=$(stat0 l1 vmm_io_exits); inj0=$(stat0 l1 irq_injections)
mmio0b=$(stat0 l2 vmm_mmio_exits); io0b=$(stat0 l2 vmm_io_exits); inj0b=$(stat0 l2 irq_injections)
wait_con l2 "HVTEST TCP recv bytes=" || fail "l2: nothing received"
wait_con l1 "HVTEST TCP sent tries=" || fail "l1: send did not finish"
mmio1=$(stat0 l1 vmm_mmio_exits); io1=$(stat0 l1 vmm_io_exits); inj1=$(stat0 l1 irq_injections)
mmio1b=$(stat0 l2 vmm_mmio_exits); io1b=$(stat0 l2 vmm_io_exits); inj1b=$(stat0 l2 irq_injections)
echo "TCP window l1: mmio_exits +$((mmio1 - mmio0)) io_exits +$((io1 - io0)) irq_injections +$((inj1 - inj0))"
echo "TCP window l2: mmio_exits +$((mmio1b - mmio0b)) io_exits +$((io1b - io0b)) irq_injections +$((inj1b - inj0b))"

for g in l1 l2; do
	wait_con $g "HVTEST HOLD" || fail "$g: did not finish"
done
tr -d '\r' <"$l1" >"$run/c1.txt"
tr -d '\r' <"$l2" >"$run/c2.txt"
grep "HVTEST RTT\|HVTEST PING\|HVTEST TCP" "$run/c1.txt" "$run/c2.txt"
grep -q "HVTEST PING ok sent=20 received=20" "$run/c1.txt" || fail "l1: ping loss"
grep -q "HVTEST PING ok sent=20 received=20" "$run/c2.txt" || fail "l2: ping loss"
sent=$(sed -n 's/.*HVTEST TCP send bytes=1048576 sha256=\([0-9a-f]*\).*/\1/p' "$run/c1.txt")
got=$(sed -n 's/.*HVTEST TCP recv bytes=1048576 sha256=\([0-9a-f]*\).*/\1/p' "$run/c2.txt")
[ -n "$sent" ] && [ "$sent" = "$got" ] || fail "TCP: sent sha256 '$sent', received '$got'"
grep -q "HVTEST TCP csum_errors=0" "$run/c1.txt" || fail "l1: TCP checksum errors"
grep -q "HVTEST TCP csum_errors=0" "$run/c2.txt" || fail "l2: TCP checksum errors"
# the data path made no MMIO exit to the VMM, and port I/O exits only for the
# console lines printed in the window (a UART byte costs ~10 exits: the
# 8250 driver polls LSR around each THR write), not per packet: 1 MiB is ~730
# segments, each with kicks and interrupts
[ "$((mmio1 - mmio0))" -eq 0 ] && [ "$((mmio1b - mmio0b))" -eq 0 ] || fail "MMIO exits to userspace during TCP"
[ "$((io1 - io0))" -lt 2000 ] && [ "$((io1b - io0b))" -lt 2000 ] || fail "port I/O exits during TCP"
[ "$((inj1b - inj0b))" -gt 100 ] || fail "l2: no interrupts during TCP"
"$HVCTL" guest stats l1
"$HVCTL" guest show l1

p1=$(vmm_pid l1); p2=$(vmm_pid l2)
[ "$(console l1 poweroff)" -gt 0 ] && [ "$(console l2 poweroff)" -gt 0 ] || fail "console input"
for p in $p1 $p2; do
	for _ in $(seq $(($(left) * 10))); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
	kill -0 "$p" 2>/dev/null && fail "a VMM still runs after poweroff"
done
grep -q "guest powered off (ACPI S5)" "$l1" || fail "l1: not powered off through ACPI"
grep -q "guest powered off (ACPI S5)" "$l2" || fail "l2: not powered off through ACPI"
echo "total $(($(date +%s) - t0)) s"
echo PASS
