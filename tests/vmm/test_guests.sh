#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# KVM: two built-in guests (lib/vmm/guest) through hvswitch.
#  1. they ping each other, both ways at once; an interrupt raised while the
#     RX vector is masked shows in the PBA and arrives on unmask;
#  2. a stream of N frames arrives byte-exact (the sink verifies every byte),
#     and KVM's statistics show no exit to userspace during the data phase:
#     kicks are ioeventfds, interrupts irqfds (irq_injections grow);
#  3. hvswitch restarts: the guests' VMMs reconnect, restore the rings with
#     the same features, and pings pass again.
# Needs /dev/kvm (skipped, exit 77, without it).
set -uo pipefail
. "$(dirname "$0")/lib.sh"
skip_without_kvm

N=${HV_VMM_STREAM_FRAMES:-20000}
SIZE=1000

sw_start

echo "--- 1. pings both ways"
guest a vm0 "ip=10.0.0.1 peer=10.0.0.2 mode=ping count=5 linger_ms=3000"; pa=$guest_pid
guest b vm1 "ip=10.0.0.2 peer=10.0.0.1 mode=ping count=5 linger_ms=3000"; pb=$guest_pid
wait_guest "$pa" || fail "guest a exited with $?"
wait_guest "$pb" || fail "guest b exited with $?"
for g in a b; do
	grep -q "ping: 5 sent, 5 received" "$run/$g.log" || fail "guest $g: pings lost"
	grep "rtt min/avg/max" "$run/$g.log"
done
grep -q "irqs rx=[1-9]" "$run/a.log" || fail "guest a took no RX interrupt"

echo "--- 1b. an interrupt raised while its MSI-X vector is masked is held, then delivered; a remapped vector is followed"
guest r1 vm0 "ip=10.0.0.1 mode=respond seconds=30"; pr1=$guest_pid
wait_line "$run/r1.log" "respond: answering" 20 || fail "responder did not start"
guest m vm1 "ip=10.0.0.2 peer=10.0.0.1 mode=masktest"; pm=$guest_pid
wait_guest "$pm" || fail "masktest guest exited with $?"
grep "^masktest:" "$run/m.log"
kill -TERM "$pr1"; wait "$pr1"

echo "--- 2. a stream of $N frames of $SIZE bytes"
guest sink vm0 "ip=10.0.0.1 mode=sink count=$N size=$SIZE timeout_ms=60000"; ps=$guest_pid
wait_line "$run/sink.log" "sink: ready" 20 || fail "sink did not start"
guest src vm1 "ip=10.0.0.2 peer=10.0.0.1 mode=stream count=$N size=$SIZE kicks=always"; pt=$guest_pid
wait_guest "$pt" || fail "stream guest exited with $?"
wait_guest "$ps" || fail "sink guest exited with $?"
grep -q "sink: received $N/$N frames, $((N * SIZE)) bytes, 0 bad, 0 duplicate" "$run/sink.log" ||
	fail "stream not received byte-exact"
grep "^stream:" "$run/src.log"
kicks=$(sed -n 's/^stream: .*, \([0-9]*\) kicks,.*/\1/p' "$run/src.log")
[ "${kicks:-0}" -gt 0 ] || fail "the stream made no kick"
grep "^sink:" "$run/sink.log"
# userspace exits between the marks: only the closing mark's own MMIO write
for pair in "src 1 2" "sink 3 4"; do
	set -- $pair
	u1=$(mark_field "$run/$1.log" "$2" userspace_exits); u2=$(mark_field "$run/$1.log" "$3" userspace_exits)
	k1=$(mark_field "$run/$1.log" "$2" exits); k2=$(mark_field "$run/$1.log" "$3" exits)
	i1=$(mark_field "$run/$1.log" "$2" irq_injections); i2=$(mark_field "$run/$1.log" "$3" irq_injections)
	[ -n "$u1" ] && [ -n "$u2" ] || fail "$1: no KVM statistics marks"
	echo "$1: data phase: $((k2 - k1)) KVM exits, $((u2 - u1)) to userspace (the mark), $((i2 - i1)) irq injections"
	[ $((u2 - u1)) -eq 1 ] || fail "$1: $((u2 - u1 - 1)) userspace exits on the data path"
	[ $((i2 - i1)) -gt 0 ] || fail "$1: no interrupts injected through irqfd"
done

echo "--- 2b. the same on hugepages (memfd with MFD_HUGETLB), when the host has them"
free=$(awk '/HugePages_Free/ {print $2}' /proc/meminfo)
if [ "${free:-0}" -ge 80 ]; then
	GUEST_EXTRA=--hugepages guest hsink vm0 "ip=10.0.0.1 mode=sink count=5000 size=1500 timeout_ms=60000"
	ps=$guest_pid
	wait_line "$run/hsink.log" "sink: ready" 20 || fail "hugepage sink did not start"
	GUEST_EXTRA=--hugepages guest hsrc vm1 "ip=10.0.0.2 peer=10.0.0.1 mode=stream count=5000 size=1500"
	wait_guest "$guest_pid" || fail "hugepage stream guest exited with $?"
	wait_guest "$ps" || fail "hugepage sink guest exited with $?"
	grep "^sink:" "$run/hsink.log"
else
	echo "skipped: $free free hugepages (echo 512 > /proc/sys/vm/nr_hugepages)"
fi

echo "--- 3. hvswitch restarts under a running guest"
guest r vm0 "ip=10.0.0.1 mode=respond seconds=60"; pr=$guest_pid
wait_line "$run/r.log" "respond: answering" 20 || fail "responder did not start"
sw_stop
wait_line "$run/r.log" "switch port disconnected" 10 || fail "VMM did not notice the switch going away"
sw_start
wait_line "$run/r.log" "reconnected to .*rings restored" 20 || fail "VMM did not reconnect"
grep -q "features 0x" "$run/switch.log" || fail "no features negotiated after the restart"
guest p vm1 "ip=10.0.0.2 peer=10.0.0.1 mode=ping count=3 linger_ms=0"; pp=$guest_pid
wait_guest "$pp" || fail "pings after the switch restart failed ($?)"
grep -q "ping: 3 sent, 3 received" "$run/p.log" || fail "pings lost after the restart"
negotiated=$(grep -o "vhost vm0: features 0x[0-9a-f]* negotiated" "$run/switch.log" | sort -u | wc -l)
[ "$negotiated" -eq 1 ] || fail "features drifted across the reconnect"
kill -TERM "$pr"
wait "$pr"
grep -q "stopped: stopped (SIGTERM)" "$run/r.log" || fail "responder did not stop cleanly"
echo "PASS"
