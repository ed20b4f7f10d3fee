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
# (default 200000). Prints the profile (functions by exclusive cost) and
# "PROFILE_IR ring=split|packed size=... frames=... ir=... ir_per_frame=...".
set -u -o pipefail

size=${1:-64}
build=${2:-./build}
ring=split
[ "${HV_PROF_PACKED:-0}" = 1 ] && ring=packed
out=$(mktemp -d /tmp/hvprofir.XXXXXX)
prefix=hvir$$
trap 'rm -rf "/var/run/dpdk/$prefix"' EXIT

HV_IR_PACKED=${HV_PROF_PACKED:-0} HV_IR_SIZE=$size HV_IR_FRAMES=${HV_IR_FRAMES:-200000} \
	valgrind --tool=callgrind --collect-atstart=no --toggle-collect=hv_vhost_rx_burst \
	--toggle-collect=hv_vhost_tx_burst --toggle-collect=hv_vhost_rx_done \
	--callgrind-out-file="$out/callgrind.out" \
	"$build/tests/perf/vhost_ir" -l 0 --no-pci --no-huge -m 512 --file-prefix "$prefix" \
	--log-level=hvswitch:warning >"$out/run.log" 2>&1 ||
	{ echo "profile_vhost_ir: vhost_ir failed, see $out/run.log" >&2; exit 1; }
frames=$(awk '$1 == "FRAMES" { print $2 }' "$out/run.log")
total=$(callgrind_annotate --auto=no "$out/callgrind.out" 2>/dev/null |
	awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }')
callgrind_annotate --auto=no "$out/callgrind.out" | sed -n '/file:function/,$p' | head -25
grep -q "packed=$([ $ring = packed ] && echo 1 || echo 0)" "$out/run.log" || { echo "profile_vhost_ir: not the $ring ring" >&2; exit 1; }
echo "PROFILE_IR ring=$ring size=$size frames=$frames ir=$total" \
	"ir_per_frame=$(awk -v t="$total" -v f="$frames" 'BEGIN { if (f > 0) printf "%.0f", t / f; else print "n/a" }')"
echo "profile_vhost_ir: callgrind output in $out/callgrind.out"
