# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# dpdk-testpmd as a vhost-user backend: io forwarding between two net_vhost
# ports (server sockets), the reference of the benchmarks (bench_switch.sh,
# bench_vhost.sh, profile_vhost.sh) and of the KVM tests (tests/vmm/lib_testpmd.sh).
# Sourced (bash). Sets testpmd_pid and testpmd_fd (its stdin, held open while
# it runs); the caller stops it with testpmd_quit, then by its PID if need be.

testpmd_pid=
testpmd_fd=

# testpmd_start FIFO LOG SOCK0 SOCK1 CMD [ARG...] [-- TESTPMD_ARG...]
# Start CMD (testpmd, or a wrapper and testpmd) with its EAL ARGs (lcores,
# memory, --file-prefix), the ports net_vhost0 at SOCK0 and net_vhost1 at
# SOCK1, and io forwarding on one core, plus the TESTPMD_ARGs; its stdin is
# the fifo FIFO (made anew), its output is appended to LOG. Does not wait for
# the sockets. 1 when the fifo cannot be made.
testpmd_start() {
	local fifo=$1 log=$2 s0=$3 s1=$4 tp_cmd=() tp_opts=()

	shift 4
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		tp_cmd+=("$1")
		shift
	done
	[ $# -gt 0 ] && shift
	tp_opts=("$@")
	rm -f "$fifo"
	mkfifo "$fifo" || return 1
	# -i with stdin on a fifo: the main lcore sleeps in read();
	# --disable-link-check: the start-up link check busy-waits until the
	# frontends connect
	"${tp_cmd[@]}" --vdev "net_vhost0,iface=$s0,queues=1" --vdev "net_vhost1,iface=$s1,queues=1" \
		-- -i --forward-mode=io --auto-start --nb-cores=1 --txq=1 --rxq=1 \
		--no-lsc-interrupt --disable-link-check --total-num-mbufs=16384 "${tp_opts[@]}" \
		<"$fifo" >>"$log" 2>&1 &
	testpmd_pid=$!
	exec {testpmd_fd}>"$fifo"
}

# testpmd_quit: send the testpmd of testpmd_start "quit", close its stdin and
# give it 5 s to exit. It may still run then: the caller stops it by PID.
testpmd_quit() {
	local i

	[ -n "$testpmd_fd" ] || return 0
	echo quit 1>&"$testpmd_fd" 2>/dev/null
	exec {testpmd_fd}>&-
	testpmd_fd=
	for ((i = 0; i < 50; i++)); do
		kill -0 "$testpmd_pid" 2>/dev/null || break
		sleep 0.1
	done
}
