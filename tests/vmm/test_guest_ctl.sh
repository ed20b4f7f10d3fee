#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# KVM: detached guests and their control sockets: hvctl guest start, list,
# show, stats (KVM binary statistics per vCPU), console, stop; a duplicate
# name and a missing switch port are refused with a clear error. The
# defaults follow the control socket: with only $HVCTL_SOCKET set, port names
# are found in its directory and the guests' run directory is created (mode
# 0750, parents too) in it; $HV_GUEST_RUN_DIR moves the latter.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
skip_without_kvm
unset HV_GUEST_RUN_DIR
export HVCTL_SOCKET=$run/hvswitch.sock

g() { timeout 60 "$HVCTL" guest "$@"; }
stop_all() { g stop a >/dev/null 2>&1; g stop b >/dev/null 2>&1; }
trap 'stop_all; cleanup' EXIT

sw_start
[ -e "$run/guests" ] && fail "$run/guests exists before the first start"
g start a --kernel builtin --port vm0 --cpus 2 --memory 48M \
	--cmdline "ip=10.0.0.1 mode=respond" || fail "guest start a"
[ "$(stat -c %a "$run/guests")" = 750 ] || fail "run dir mode $(stat -c %a "$run/guests")"
gdir=$run/guests
out=$(g start a --kernel builtin --port vm0 2>&1) && fail "duplicate start succeeded"
echo "$out" | grep -q "guest a already runs" || fail "duplicate name: '$out'"
echo "ok: $out"
out=$(HV_GUEST_RUN_DIR=$run/deep/er/guests g start b --kernel builtin --port nope 2>&1) &&
	fail "start without a port succeeded"
echo "$out" | grep -q "no switch port at $run/nope.sock" || fail "missing port: '$out'"
[ "$(stat -c %a "$run/deep/er/guests") $(stat -c %a "$run/deep")" = "750 750" ] ||
	fail "nested run dir not made 0750"
echo "ok: $(echo "$out" | head -1)"
out=$(g start c --kernel /nonexistent/vmlinuz --port vm1 2>&1) && fail "start without a kernel succeeded"
echo "$out" | grep -q "hvctl: guest c: kernel /nonexistent/vmlinuz: No such file or directory" ||
	fail "missing kernel: '$out'"
echo "ok: $(echo "$out" | head -1)"

wait_line "$gdir/a.log" "respond: answering" 20 || fail "guest a did not come up"
g list | tee "$run/list.txt"
grep -Eq "^a +[0-9]+ +running +2 +48 +up +52:54:00:" "$run/list.txt" || fail "guest list"
g show a | tee "$run/show.txt"
grep -q "features: *0x1" "$run/show.txt" || fail "guest show: features"
"$HVCTL" --json guest show a | grep -Eq '"state":[[:space:]]*"up"' || fail "guest show --json"

# pings from a second guest move the first one's counters
guest p vm1 "ip=10.0.0.2 peer=10.0.0.1 mode=ping count=3 linger_ms=0"
wait "$guest_pid" || fail "pings to the detached guest failed"
g stats a | tee "$run/stats.txt"
[ "$(sed '/^$/q' "$run/stats.txt" | grep -c '^ *[01] ')" -eq 2 ] || fail "stats: one row per vCPU"
# the NIC's queues follow: rx and tx, set up by the guest's driver
rx_used=$(awk '$2 == "rx" && $4 == "yes" { print $7 }' "$run/stats.txt")
[ "${rx_used:-0}" -ge 3 ] || fail "stats: rx queue row missing or fewer than the 3 pings used: '$rx_used'"
grep -Eq '^ +1 +tx +[0-9]+ +yes ' "$run/stats.txt" || fail "stats: no tx queue row"
inj=$("$HVCTL" --json guest stats a | tr -d ' \t\n' | sed 's/.*"vcpu":0[^}]*"irq_injections":\([0-9]*\).*/\1/')
[ "${inj:-0}" -gt 0 ] || fail "stats: no irq injections on vCPU 0"

g console a --no-follow | grep -q "respond: answering ARP" || fail "console"
# console input lands in the UART's receive FIFO
queued=$(/usr/bin/python3 -c '
import json, socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.sendall(b"{\"cmd\":\"guest.console\",\"args\":{\"input\":\"hello\\n\"}}\n")
print(json.loads(s.makefile().readline())["result"]["queued"])' "$gdir/a.sock")
[ "$queued" = 6 ] || fail "console input: $queued bytes queued"
g stop a | grep -q "guest a stopped" || fail "guest stop"
g list | grep -q "^a " && fail "guest a still listed"
grep -q "stopped (hvctl guest stop)" "$gdir/a.log" || fail "stop reason not logged"
echo PASS
