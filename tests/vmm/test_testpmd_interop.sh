#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# KVM interop: our VMM's vhost-user frontend against DPDK's own vhost
# backend. Two built-in guests on dpdk-testpmd's net_vhost ports (io
# forwarding): they ping each other, then a stream of N frames arrives
# byte-exact at a sink that re-arms through EVENT_IDX after every frame (so
# DPDK's used_event handling is exercised), and one that polls like NAPI.
# Needs /dev/kvm and dpdk-testpmd (skipped, exit 77, without either).
set -uo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_testpmd.sh"
skip_without_kvm
command -v "${TESTPMD:-dpdk-testpmd}" >/dev/null || { echo "SKIP: no dpdk-testpmd"; exit 77; }
trap 'tp_stop; cleanup' EXIT

N=${HV_VMM_STREAM_FRAMES:-20000}
SIZE=1000

tp_start
echo "--- pings both ways through testpmd"
guest a vm0 "ip=10.0.0.1 peer=10.0.0.2 mode=ping count=5 linger_ms=2000"; pa=$guest_pid
guest b vm1 "ip=10.0.0.2 peer=10.0.0.1 mode=ping count=5 linger_ms=2000"; pb=$guest_pid
wait_guest "$pa" || fail "guest a exited with $?"
wait_guest "$pb" || fail "guest b exited with $?"
for g in a b; do
	grep -q "ping: 5 sent, 5 received" "$run/$g.log" || fail "guest $g: pings lost"
done

for rxirq in frame napi; do
	echo "--- a stream of $N frames of $SIZE bytes, sink rxirq=$rxirq"
	guest "k$rxirq" vm0 "ip=10.0.0.1 mode=sink count=$N size=$SIZE timeout_ms=60000 rxirq=$rxirq"
	ps=$guest_pid
	wait_line "$run/k$rxirq.log" "sink: ready" 20 || fail "sink did not start"
	guest "s$rxirq" vm1 "ip=10.0.0.2 peer=10.0.0.1 mode=stream count=$N size=$SIZE"
	wait_guest "$guest_pid" || fail "stream exited with $?"
	wait_guest "$ps" || fail "sink exited with $?"
	grep -q "sink: received $N/$N frames, $((N * SIZE)) bytes, 0 bad, 0 duplicate" \
		"$run/k$rxirq.log" || fail "stream not received byte-exact"
	grep -h "^sink:\|^stream:" "$run/k$rxirq.log" "$run/s$rxirq.log"
done
grep -q "rxirq frame, event_idx" "$run/kframe.log" || fail "EVENT_IDX not negotiated with DPDK's vhost"
echo PASS
