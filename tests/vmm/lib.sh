# SPDX-License-Identifier: BSD-3-Clause
# Shared by the KVM tests: start/stop hvswitch, run built-in guests, check logs.
# Every process started here is remembered by PID and killed by cleanup().

: "${HVSWITCH:?}" "${HVCTL:?}"
pids=()
run=$(mktemp -d /tmp/hv-vmm-test.XXXXXX)
prefix="hvvmm$$"
sw_pid=

cleanup() {
	local p
	for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null; done
	if [ -n "$sw_pid" ]; then kill -TERM "$sw_pid" 2>/dev/null; fi
	for p in "${pids[@]}" $sw_pid; do
		for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$p" 2>/dev/null
	done
	rm -rf "/var/run/dpdk/$prefix"
	[ -n "${HV_VMM_KEEP:-}" ] && echo "logs kept in $run" || rm -rf "$run"
}
trap cleanup EXIT

fail() {
	echo "FAIL: $*" >&2
	for f in "$run"/*.log; do [ -f "$f" ] && { echo "--- $f"; tail -30 "$f"; }; done >&2
	exit 1
}

skip_without_kvm() {
	if [ ! -c /dev/kvm ] || [ ! -r /dev/kvm ]; then
		echo "SKIP: /dev/kvm is absent (KVM tests need it)"
		exit 77
	fi
}

hvctl_sw() { "$HVCTL" --socket "$run/hvswitch.sock" "$@"; }

# sw_start: hvswitch with ports vm0 and vm1 (kept in its config file);
# $SW_EXTRA: more switch options (e.g. --pmd-sleep US)
sw_start() {
	# shellcheck disable=SC2086 # a list of options
	"$HVSWITCH" -l 0,1 --main-lcore 0 --no-pci --no-huge -m 256 --file-prefix "$prefix" \
		-- --run-dir "$run" --config "$run/hvswitch.json" ${SW_EXTRA:-} >>"$run/switch.log" 2>&1 &
	sw_pid=$!
	for _ in $(seq 200); do
		hvctl_sw version >/dev/null 2>&1 && break
		kill -0 "$sw_pid" 2>/dev/null || fail "hvswitch exited"
		sleep 0.1
	done
	hvctl_sw version >/dev/null 2>&1 || fail "hvswitch did not answer"
	if [ ! -f "$run/ports.done" ]; then
		hvctl_sw port add vm0 --type vhost-user >/dev/null || fail "port add vm0"
		hvctl_sw port add vm1 --type vhost-user >/dev/null || fail "port add vm1"
		touch "$run/ports.done"
	fi
	for _ in $(seq 100); do [ -S "$run/vm0.sock" ] && [ -S "$run/vm1.sock" ] && return; sleep 0.1; done
	fail "port sockets did not appear"
}

sw_stop() {
	kill -TERM "$sw_pid" 2>/dev/null
	for _ in $(seq 100); do kill -0 "$sw_pid" 2>/dev/null || break; sleep 0.1; done
	kill -KILL "$sw_pid" 2>/dev/null
	wait "$sw_pid" 2>/dev/null
	sw_pid=
	rm -rf "/var/run/dpdk/$prefix"
}

# guest NAME PORT CMDLINE: a built-in guest in the background; its PID in $guest_pid
# ($GUEST_EXTRA: more options for hvctl guest run)
# $GUEST_WRAP: a command the VMM runs under (e.g. "taskset -c 0 chrt -f 10")
guest() {
	# shellcheck disable=SC2086 # GUEST_WRAP is a command line
	timeout -s TERM 120 ${GUEST_WRAP:-} "$HVCTL" guest run "$1" --kernel builtin --memory 64M \
		--port "$run/$2.sock" --cmdline "$3" ${GUEST_EXTRA:-} >"$run/$1.log" 2>&1 &
	guest_pid=$!
	pids+=("$guest_pid")
}

# wait_line FILE REGEX SECONDS
wait_line() {
	local i
	for i in $(seq $(($3 * 10))); do
		grep -Eq "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# wait_guest PID: its exit status
wait_guest() {
	wait "$1"
}

# The value of field NAME on "[vmm] mark N cpu0:" lines of FILE
mark_field() {
	sed -n "s/^\[vmm\] mark $2 cpu0: .*\b$3=\([0-9]*\).*/\1/p" "$1" | head -1
}
