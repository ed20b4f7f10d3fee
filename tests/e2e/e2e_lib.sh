# SPDX-License-Identifier: BSD-3-Clause
#
# Shared by the QEMU end-to-end tests (two_guests_ping.sh, migrate.sh).
# Sourced; $here is the caller's directory.

skip() {
	echo "SKIP: $*"
	exit 77
}

# e2e_setup [--build-dir DIR] [--hvswitch PATH] [--hvctl PATH] [--cache-dir DIR]:
# the options, then what every guest needs (else a skip, 77) and the
# switch's binaries (else a failure). Sets build, cache, hvswitch, hvctl_bin,
# qemu, kernel (the newest Debian cloud kernel) and kver.
e2e_setup() {
	local root b

	root=$(cd "$here/../.." && pwd)
	build=$root/build
	cache=
	hvswitch=
	hvctl_bin=
	while [ $# -gt 0 ]; do
		case $1 in
		--build-dir) build=$2; shift 2 ;;
		--hvswitch) hvswitch=$2; shift 2 ;;
		--hvctl) hvctl_bin=$2; shift 2 ;;
		--cache-dir) cache=$2; shift 2 ;;
		*) echo "usage: $0 [--build-dir DIR] [--hvswitch PATH] [--hvctl PATH] [--cache-dir DIR]" >&2
			exit 2 ;;
		esac
	done
	if [ -z "$hvswitch" ] || [ -z "$hvctl_bin" ] || [ -z "$cache" ]; then
		build=$(cd "$build" 2>/dev/null && pwd) || { echo "FAIL: no build dir $build" >&2; exit 1; }
	fi
	cache=${cache:-$build/e2e}
	qemu=$(command -v qemu-system-x86_64) ||
		skip "qemu-system-x86_64 not installed (apt-get install qemu-system-x86)"
	kernel=$(ls -1 /boot/vmlinuz-*-cloud-amd64 2>/dev/null | sort -V | tail -n1)
	[ -n "$kernel" ] || skip "no /boot/vmlinuz-*-cloud-amd64 (apt-get install linux-image-cloud-amd64)"
	kver=${kernel#/boot/vmlinuz-}
	[ -x /bin/busybox ] || skip "no static busybox (apt-get install busybox-static)"
	command -v python3 >/dev/null || skip "python3 missing"
	hvswitch=${hvswitch:-$build/app/hvswitch/hvswitch}
	hvctl_bin=${hvctl_bin:-$build/app/hvctl/hvctl}
	for b in "$hvswitch" "$hvctl_bin"; do
		[ -x "$b" ] || { echo "FAIL: $b not built (ninja -C $build)"; exit 1; }
	done
}

# stop_pid PID SIGNAL: the signal, up to 5 s, then SIGKILL
stop_pid() {
	local pid=$1 sig=$2

	[ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 0
	kill "-$sig" "$pid" 2>/dev/null
	for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	kill -KILL "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
}

# e2e_switch_stop: SIGINT to $switch_pid; sets switch_rc to its exit status,
# "hung" or "died(STATUS)". 30 s: a loaded 2-CPU host can be slow; a switch
# still there then is stuck: its threads' stacks go into the output (the
# caller's cleanup kills it).
e2e_switch_stop() {
	switch_rc=running
	if ! kill -0 "$switch_pid" 2>/dev/null; then
		switch_rc="died($(wait "$switch_pid"; echo $?))"
		return
	fi
	kill -INT "$switch_pid"
	for _ in $(seq 300); do kill -0 "$switch_pid" 2>/dev/null || break; sleep 0.1; done
	if kill -0 "$switch_pid" 2>/dev/null; then
		command -v gdb >/dev/null &&
			gdb -p "$switch_pid" -batch -ex "thread apply all bt" 2>&1 | grep -E '^(Thread|#)' | head -80
		switch_rc=hung
	else
		wait "$switch_pid"
		switch_rc=$?
	fi
}
