#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# drivers/vhost's instructions per frame, deterministic whatever the load:
# tests/perf/vhost_ir (bursts of 32 frames from a virtio-user frontend
# through port A, into port B, out of B's frontend, one thread) under
# callgrind, collecting only inside hv_vhost_rx_burst(), hv_vhost_tx_burst()
# and hv_vhost_rx_done() (and what they call).
#
# usage: tests/perf/profile_vhost_ir.sh [SIZE] [BUILD_DIR]
# HV_PROF_PACKED=1: both frontends ask for the packed ring. HV_IR_FRAMES
# (default 200000). HV_PROF_BACKEND=dpdk: DPDK's lib/vhost in our place
# (tests/perf/vhost_ir_dpdk, the backend of bench_switch.sh's testpmd),
# collecting inside the dequeue and the enqueue with its mbufs' free.
# Prints the profile (functions by exclusive cost) and
# "PROFILE_IR backend=hvswitch|dpdk ring=split|packed size=... frames=...
# ir=... ir_per_frame=...".
#
# HV_PROF_BACKEND=compare runs all four (both backends, both rings) and
# prints "PROFILE_IR_COMPARE size=... hvswitch_split=... dpdk_split=...
# hvswitch_packed=... dpdk_packed=... split_vs_dpdk=... packed_vs_dpdk=...
# packed_over_split=..." (X_vs_dpdk: lib/vhost's instructions over ours, as
# a speed ratio reads; packed_over_split: the packed ring's ratio over the
# split ring's, the instruction count's side of bench_switch.sh's packed
# target) and "PROFILE_IR_TARGET packed_not_below_split met|missed".
set -u -o pipefail

size=${1:-64}
build=${2:-./build}
if [ "${HV_PROF_BACKEND:-}" = compare ]; then
	declare -A ir
	for b in hvswitch dpdk; do
		for r in split packed; do
			line=$(HV_PROF_BACKEND=$b HV_PROF_PACKED=$([ $r = packed ] && echo 1 || echo 0) \
				"$0" "$size" "$build" | grep '^PROFILE_IR ') || exit 1
			ir[${b}_$r]=$(sed -n 's/.*ir_per_frame=\([0-9]*\).*/\1/p' <<<"$line")
			[ -n "${ir[${b}_$r]}" ] || { echo "profile_vhost_ir: no count for $b $r" >&2; exit 1; }
		done
	done
	awk -v s="$size" -v hs="${ir[hvswitch_split]}" -v ds="${ir[dpdk_split]}" \
		-v hp="${ir[hvswitch_packed]}" -v dp="${ir[dpdk_packed]}" 'BEGIN {
		sr = ds / hs; pr = dp / hp; q = pr / sr
		printf "PROFILE_IR_COMPARE size=%s hvswitch_split=%d dpdk_split=%d hvswitch_packed=%d dpdk_packed=%d split_vs_dpdk=%.2f packed_vs_dpdk=%.2f packed_over_split=%.3f\n", s, hs, ds, hp, dp, sr, pr, q
		printf "PROFILE_IR_TARGET packed_not_below_split %s (%.3f)\n", (q >= 1 ? "met" : "missed"), q
	}'
	exit 0
fi
ring="split"
[ "${HV_PROF_PACKED:-0}" = 1 ] && ring=packed
out=$(mktemp -d /tmp/hvprofir.XXXXXX)
prefix=hvir$$
trap 'rm -rf "/var/run/dpdk/$prefix"' EXIT

backend=${HV_PROF_BACKEND:-hvswitch}
case $backend in
hvswitch)
	prog=vhost_ir
	toggles=(--toggle-collect=hv_vhost_rx_burst --toggle-collect=hv_vhost_tx_burst
		--toggle-collect=hv_vhost_rx_done) ;;
dpdk)
	prog=vhost_ir_dpdk
	toggles=(--toggle-collect=ir_dpdk_rx --toggle-collect=ir_dpdk_tx) ;;
*)
	echo "profile_vhost_ir: HV_PROF_BACKEND must be hvswitch, dpdk or compare, not '$backend'" >&2
	exit 2 ;;
esac

HV_IR_PACKED=${HV_PROF_PACKED:-0} HV_IR_SIZE=$size HV_IR_FRAMES=${HV_IR_FRAMES:-200000} \
	valgrind --tool=callgrind --collect-atstart=no "${toggles[@]}" \
	--callgrind-out-file="$out/callgrind.out" \
	"$build/tests/perf/$prog" -l 0 --no-pci --no-huge -m 512 --file-prefix "$prefix" \
	--log-level=hvswitch:warning >"$out/run.log" 2>&1 ||
	{ echo "profile_vhost_ir: $prog failed, see $out/run.log" >&2; exit 1; }
frames=$(awk '$1 == "FRAMES" { print $2 }' "$out/run.log")
total=$(callgrind_annotate --auto=no "$out/callgrind.out" 2>/dev/null |
	awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }')
callgrind_annotate --auto=no "$out/callgrind.out" | sed -n '/file:function/,$p' | head -25
grep -q "packed=$([ $ring = packed ] && echo 1 || echo 0)" "$out/run.log" || { echo "profile_vhost_ir: not the $ring ring" >&2; exit 1; }
echo "PROFILE_IR backend=$backend ring=$ring size=$size frames=$frames ir=$total" \
	"ir_per_frame=$(awk -v t="$total" -v f="$frames" 'BEGIN { if (f > 0) printf "%.0f", t / f; else print "n/a" }')"
echo "profile_vhost_ir: callgrind output in $out/callgrind.out"
