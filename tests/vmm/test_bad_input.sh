#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# KVM: bad input to "hvctl guest" gets one clear line on stderr and exit 1.
set -uo pipefail
HVSWITCH=${HVSWITCH:-unused}
. "$(dirname "$0")/lib.sh"
skip_without_kvm

# expect EXIT REGEX -- ARGS...: run hvctl, check the status and stderr
expect() {
	local want=$1 re=$2 out rc
	shift 3
	out=$(timeout 30 "$HVCTL" "$@" 2>&1 >/dev/null)
	rc=$?
	[ "$rc" -eq "$want" ] || fail "hvctl $*: exit $rc, expected $want ($out)"
	echo "$out" | grep -Eq -- "$re" || fail "hvctl $*: '$out' does not match '$re'"
	[ "$(echo "$out" | wc -l)" -eq 1 ] || fail "hvctl $*: more than one line: $out"
	echo "ok: $out"
}

head -c 65536 /dev/urandom >"$run/garbage"
printf 'MZ' >"$run/short"
expect 1 "kernel /nonexistent/vmlinuz: No such file or directory" -- \
	guest run g --kernel /nonexistent/vmlinuz
# the missing kernel, not the missing port after it
expect 1 "^hvctl: guest g: kernel /nonexistent/vmlinuz: No such file or directory$" -- \
	guest run g --kernel /nonexistent/vmlinuz --port "$run/none.sock"
expect 1 "^hvctl: guest g: initrd /nonexistent/initrd: No such file or directory$" -- \
	guest run g --kernel builtin --initrd /nonexistent/initrd --port "$run/none.sock"
expect 1 "kernel .*/garbage: not a bzImage .* nor an ELF vmlinux" -- \
	guest run g --kernel "$run/garbage"
expect 1 "kernel .*/short: not a bzImage" -- guest run g --kernel "$run/short"
expect 1 "memory: 8 MiB is too little \(at least 16 MiB\)" -- \
	guest run g --kernel builtin --memory 8M
expect 1 "--memory: bad size" -- guest run g --kernel builtin --memory lots
expect 1 "no switch port at $run/none.sock: No such file or directory" -- \
	guest run g --kernel builtin --port "$run/none.sock"
expect 1 "--queue-size: a power of 2 in 64..1024" -- \
	guest run g --kernel builtin --queue-size 300
expect 1 "--queue-size: a power of 2 in 64..1024" -- \
	guest run g --kernel builtin --queue-size 2048
expect 1 "queue size: the built-in guest needs at least 512" -- \
	guest run g --kernel builtin --queue-size 256
echo PASS
