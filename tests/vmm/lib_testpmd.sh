# SPDX-License-Identifier: BSD-3-Clause
# dpdk-testpmd as the vhost-user backend of the KVM tests and benchmarks:
# io forwarding between two net_vhost ports at $run/vm0.sock and
# $run/vm1.sock (the sockets sw_start's hvswitch would serve). Sourced after
# lib.sh; $TESTPMD picks the binary (default dpdk-testpmd). The caller stops
# it with tp_stop (its trap too).
. "$(dirname "${BASH_SOURCE[0]}")/../lib/testpmd.sh"
tp_pid=

tp_start() {
	rm -f "$run/vm0.sock" "$run/vm1.sock"
	testpmd_start "$run/tp.in" "$run/testpmd.log" "$run/vm0.sock" "$run/vm1.sock" \
		"${TESTPMD:-dpdk-testpmd}" -l 0,1 --main-lcore 0 --no-pci --no-huge -m 512 \
		--file-prefix "${prefix}tp" || fail "mkfifo"
	tp_pid=$testpmd_pid
	for _ in $(seq 100); do [ -S "$run/vm0.sock" ] && [ -S "$run/vm1.sock" ] && return; sleep 0.1; done
	fail "testpmd sockets did not appear"
}

tp_stop() {
	[ -n "$tp_pid" ] || return 0
	testpmd_quit
	kill -TERM "$tp_pid" 2>/dev/null
	wait "$tp_pid" 2>/dev/null
	tp_pid=
	rm -rf "/var/run/dpdk/${prefix}tp" "$run/vm0.sock" "$run/vm1.sock"
}
