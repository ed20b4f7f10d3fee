#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Measurement (not a test): ping RTT between two built-in KVM guests through
# hvswitch for each interrupt moderation setting, in one run. The guests run
# their data path at CPL3 natively and sleep in HLT until an irqfd interrupt
# wakes them, so unlike TCG guests the RTT shows what the window costs.
#
#   HVSWITCH=build/app/hvswitch/hvswitch HVCTL=build/app/hvctl/hvctl \
#       tests/vmm/rxmod_ping.sh [SETTINGS]       (default "0 50 100 200 adaptive 0")
#
# Prints per setting: pings, RTT p50/p99/max (µs), interrupts the switch sent
# and those it held, then "OUTLIERS n" (RTTs over 10 ms).
set -uo pipefail
. "$(dirname "$0")/lib.sh"
skip_without_kvm

settings=${1:-0 50 100 200 adaptive 0}
count=${HV_RXMOD_PINGS:-2000}

# irqs/held summed over both ports' vrings
irq_sum() {
	local f=$1 p total=0 v
	for p in vm0 vm1; do
		v=$(hvctl_sw --json port show "$p" | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
print(sum(r.get(sys.argv[1], 0) for q in d.get("qps", []) for r in (q.get("rx", {}), q.get("tx", {}))))' "$f")
		total=$((total + ${v:-0}))
	done
	echo "$total"
}

sw_start
printf "%-9s %6s %9s %9s %9s %8s %8s\n" rxmod pings p50_us p99_us max_us irqs held
i=0
for s in $settings; do
	i=$((i + 1))
	hvctl_sw port set vm0 rxmod="$s" >/dev/null || fail "rxmod=$s refused"
	hvctl_sw port set vm1 rxmod="$s" >/dev/null || fail "rxmod=$s refused"
	irq0=$(irq_sum irqs) held0=$(irq_sum irqs_held)
	guest "r$i" vm0 "ip=10.0.0.1 mode=respond seconds=600"; pr=$guest_pid
	wait_line "$run/r$i.log" "respond: answering" 20 || fail "responder did not start"
	guest "p$i" vm1 "ip=10.0.0.2 peer=10.0.0.1 mode=ping count=$count interval_ms=1 linger_ms=10"
	wait_guest "$guest_pid" || fail "pinger exited with $?"
	kill -TERM "$pr"; wait "$pr" 2>/dev/null
	irq1=$(irq_sum irqs) held1=$(irq_sum irqs_held)
	sed -n 's/^ping: icmp_seq=[0-9]* rtt=\([0-9.]*\) us.*/\1/p' "$run/p$i.log" | sort -g |
		awk -v s="$s" -v irqs=$((irq1 - irq0)) -v held=$((held1 - held0)) '
		{ v[NR] = $1; if ($1 > 10000) out++ }
		END { printf "%-9s %6d %9.1f %9.1f %9.1f %8d %8d\nOUTLIERS %s %d\n", s, NR,
		      v[int(NR * 0.5) + 1], v[int(NR * 0.99) + 1], v[NR], irqs, held, s, out + 0 }'
done
