# SPDX-License-Identifier: BSD-3-Clause
# dpdk-testpmd as the vhost-user backend of the KVM tests and benchmarks:
# io forwarding between two net_vhost ports at $run/vm0.sock and
# $run/vm1.sock (the sockets sw_start's hvswitch would serve). Sourced after
# lib.sh; $TESTPMD picks the binary (default dpdk-testpmd). The caller stops
# it with tp_stop (its trap too).
tp_pid= tp_fd=

tp_start() {
	rm -f "$run/vm0.sock" "$run/vm1.sock" "$run/tp.in"
	mkfifo "$run/tp.in" || fail "mkfifo"
	# -i with stdin on a fifo: the main lcore sleeps in read()
	"${TESTPMD:-dpdk-testpmd}" -l 0,1 --main-lcore 0 --no-pci --no-huge -m 512 \
		--file-prefix "${prefix}tp" \
		--vdev "net_vhost0,iface=$run/vm0.sock,queues=1" \
		--vdev "net_vhost1,iface=$run/vm1.sock,queues=1" \
		-- -i --forward-mode=io --auto-start --nb-cores=1 --txq=1 --rxq=1 \
		--no-lsc-interrupt --disable-link-check --total-num-mbufs=16384 \
		<"$run/tp.in" >>"$run/testpmd.log" 2>&1 &
	tp_pid=$!
	exec {tp_fd}>"$run/tp.in"
	for _ in $(seq 100); do [ -S "$run/vm0.sock" ] && [ -S "$run/vm1.sock" ] && return; sleep 0.1; done
	fail "testpmd sockets did not appear"
}

tp_stop() {
	[ -n "$tp_pid" ] || return 0
	echo quit >&"$tp_fd" 2>/dev/null
	for _ in $(seq 50); do kill -0 "$tp_pid" 2>/dev/null || break; sleep 0.1; done
	kill -TERM "$tp_pid" 2>/dev/null
	wait "$tp_pid" 2>/dev/null
	exec {tp_fd}>&-
	tp_pid=
	rm -rf "/var/run/dpdk/${prefix}tp" "$run/vm0.sock" "$run/vm1.sock"
}
