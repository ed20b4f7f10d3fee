#!/usr/bin/env bash
# Interrupt moderation with real Linux guests: two_guests_ping.sh once per
# rxmod setting, each guest pinging the other COUNT times INTERVAL apart and
# then sending TCP_MB MiB over TCP (both at once), and a reStructuredText
# table of what the guests saw: virtio interrupts per MB moved (guest
# /proc/interrupts over its eth0 rx+tx bytes), ping RTT p50/p99/max and the
# TCP transfer time.
#
#   rxmod_table.sh [two_guests_ping.sh options]
#
# Environment: HV_RXMOD_SETTINGS (default "0 50 100 200 adaptive"; a setting
# may repeat, e.g. 0 first and last to see the drift of the machine),
# HV_E2E_COUNT (default 2000), HV_E2E_INTERVAL (default 0.01),
# HV_E2E_TCP_MB (default 8); the rest as two_guests_ping.sh.
# HV_RXMOD_TABLE_LOGS=DIR makes the table from the logs of an earlier run.
# "switch irqs/MB": interrupts hvswitch sent to both guests per MB it moved;
# "guest irqs/MB": virtio interrupts in the guests' /proc/interrupts per MB
# their eth0 moved (QEMU may merge callfd writes into one INTx interrupt).
# Exit: 0, 1 when a run failed, 77 when two_guests_ping.sh skips.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
settings=${HV_RXMOD_SETTINGS:-0 50 100 200 adaptive}
export HV_E2E_COUNT=${HV_E2E_COUNT:-2000}
export HV_E2E_INTERVAL=${HV_E2E_INTERVAL:-0.01}
export HV_E2E_TCP_MB=${HV_E2E_TCP_MB:-8}
# TCG guests lose the odd ping at 100/s: 95 % replies is a pass
export HV_E2E_MIN=${HV_E2E_MIN:-$((HV_E2E_COUNT * 95 / 100))}
export HV_E2E_TIMEOUT=${HV_E2E_TIMEOUT:-$((HV_E2E_COUNT / 20 + 300))}
logs=$(mktemp -d /tmp/hvswitch-rxmod-table.XXXXXX)
rows=()
failed=0

i=0
for s in $settings; do
	i=$((i + 1))
	if [ -n "${HV_RXMOD_TABLE_LOGS:-}" ]; then
		# tables again from the logs of an earlier run
		log=$HV_RXMOD_TABLE_LOGS/rxmod-$i-$s.log
		[ -f "$log" ] || log=$HV_RXMOD_TABLE_LOGS/rxmod-$s.log
		rc=0
	else
		log=$logs/rxmod-$i-$s.log
		echo "--- rxmod $s: $HV_E2E_COUNT pings every $HV_E2E_INTERVAL s, $HV_E2E_TCP_MB MiB TCP each way" >&2
		HV_E2E_RXMOD=$s "$here/two_guests_ping.sh" "$@" >"$log" 2>&1
		rc=$?
	fi
	[ "$rc" -eq 77 ] && { cat "$log"; exit 77; }
	[ "$rc" -eq 0 ] || { echo "rxmod $s: two_guests_ping.sh failed ($rc), see $log" >&2; failed=1; }
	# per guest, in order: RTT line, TCP line, virtio interrupts, rx_bytes, tx_bytes
	row=$(awk -v s="$s" '
		/^=== guest/ { g = $3; skip = 0 }
		/^=== hvswitch/ { g = "sw"; skip = 0 }
		/^--- last lines/ { skip = 1 }
		skip { next }
		/^HVTEST RTT/ { for (i = 3; i <= NF; i++) { split($i, kv, "="); r[g, kv[1]] = kv[2] } }
		/^HVTEST TCP/ { for (i = 3; i <= NF; i++) { split($i, kv, "="); t[g, kv[1]] = kv[2] } }
		/virtio/ && /^ *[0-9]+:/ { for (i = 2; i <= NF && $i ~ /^[0-9]+$/; i++) irq[g] += $i }
		/^rx_bytes=/ { split($0, kv, "="); by[g] += kv[2] }
		/^tx_bytes=/ { split($0, kv, "="); by[g] += kv[2] }
		g == "sw" && $1 == "TOTAL" { sw_bytes = $3; sw_irqs = $7 }
		END {
			p50 = (r[1, "p50"] + r[2, "p50"]) / 2
			p99 = r[1, "p99"] > r[2, "p99"] ? r[1, "p99"] : r[2, "p99"]
			mx = r[1, "max"] > r[2, "max"] ? r[1, "max"] : r[2, "max"]
			tcp = t[1, "seconds"] > t[2, "seconds"] ? t[1, "seconds"] : t[2, "seconds"]
			ipm = 0
			for (k = 1; k <= 2; k++) if (by[k] > 0) ipm += irq[k] / (by[k] / 1e6) / 2
			swpm = sw_bytes > 0 ? sw_irqs / (sw_bytes / 1e6) : 0
			printf "%-8s  %11.0f  %11.0f  %8.2f  %8.2f  %8.2f  %8.2f", s, swpm, ipm, p50, p99, mx, tcp
		}' "$log")
	rows+=("$row")
	echo "$row" >&2
done

sep="========  ===========  ===========  ========  ========  ========  ========"
echo "$sep"
echo "rxmod     switch       guest        RTT p50   RTT p99   RTT max   TCP"
echo "          irqs/MB      irqs/MB      ms        ms        ms        s"
echo "$sep"
for r in "${rows[@]}"; do echo "$r"; done
echo "$sep"
echo "logs: $logs" >&2
exit $failed
