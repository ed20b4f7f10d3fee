# SPDX-License-Identifier: BSD-3-Clause
#
# Shared by the benchmarks that start processes and OVS-DPDK
# (bench_switch.sh, bench_vhost.sh, bench_iperf3.sh, bench_offload.sh,
# bench_guest_rxmod.sh;
# profile_vhost.sh for stop_pid, bench_tick_rate and the testpmd launcher).
# Sourced; the caller defines note(), the array pids (processes to stop on
# exit, newest last) and, for OVS, ovs_dir. Brings tests/lib/testpmd.sh
# (testpmd_start, testpmd_quit: the testpmd reference of the benchmarks).

. "$(dirname "${BASH_SOURCE[0]}")/../lib/testpmd.sh"

# Stop one process: @3 (default INT), then SIGKILL after @2 seconds.
stop_pid() {
	local pid=$1 grace=${2:-10} sig=${3:-INT} i

	kill -0 "$pid" 2>/dev/null || { wait "$pid" 2>/dev/null; return 0; }
	kill "-$sig" "$pid" 2>/dev/null
	# one that was paused (SIGSTOP) only sees the signal once it runs again
	kill -CONT "$pid" 2>/dev/null
	pkill -CONT -P "$pid" 2>/dev/null
	for ((i = 0; i < grace * 10; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		note "pid $pid ignored SIG$sig, killing it"
		kill -KILL "$pid" 2>/dev/null
	fi
	wait "$pid" 2>/dev/null
	return 0
}

# Drop a process that was stopped already from pids.
forget_pid() {
	local p keep=()

	for p in "${pids[@]}"; do
		[ "$p" = "$1" ] || keep+=("$p")
	done
	pids=("${keep[@]}")
}

ovs_vsctl() {
	ovs-vsctl --db="unix:$ovs_dir/db.sock" --no-wait --timeout=10 "$@"
}

# A private ovsdb-server on CPU @2 for ovs-vswitchd @1, its files in
# $ovs_dir; sets ovsdb_pid. 1 with the reason in ovs_why when OVS cannot run.
ovs_db_start() {
	local vswitchd=$1 cpu=$2 i

	if [ ! -x "$vswitchd" ]; then
		ovs_why="no $vswitchd (apt-get install openvswitch-switch-dpdk)"
		return 1
	fi
	if ! command -v ovsdb-server >/dev/null || ! command -v ovs-vsctl >/dev/null; then
		ovs_why="no ovsdb-server/ovs-vsctl"
		return 1
	fi
	if ! unshare --net true 2>/dev/null; then
		ovs_why="unshare --net fails here (OVS must run in its own network namespace)"
		return 1
	fi
	mkdir -p "$ovs_dir"
	export OVS_RUNDIR=$ovs_dir OVS_DBDIR=$ovs_dir OVS_LOGDIR=$ovs_dir OVS_SYSCONFDIR=$ovs_dir
	ovsdb-tool create "$ovs_dir/conf.db" /usr/share/openvswitch/vswitch.ovsschema \
		>"$ovs_dir/ovsdb-tool.log" 2>&1 || { ovs_why="ovsdb-tool create failed"; return 1; }
	taskset -c "$cpu" ovsdb-server "$ovs_dir/conf.db" --remote="punix:$ovs_dir/db.sock" \
		--unixctl="$ovs_dir/ovsdb.ctl" --log-file="$ovs_dir/ovsdb.log" \
		--pidfile="$ovs_dir/ovsdb.pid" >"$ovs_dir/ovsdb.out" 2>&1 &
	ovsdb_pid=$!
	pids+=("$ovsdb_pid")
	for ((i = 0; i < 100; i++)); do
		[ -S "$ovs_dir/db.sock" ] && break
		kill -0 "$ovsdb_pid" 2>/dev/null || break
		sleep 0.1
	done
	[ -S "$ovs_dir/db.sock" ] ||
		{ ovs_why="ovsdb-server did not start: $(tail -2 "$ovs_dir/ovsdb.log")"; return 1; }
	return 0
}

# ovs_db_bridge SOCK0 SOCK1 OTHER_CONFIG...: in the ovsdb of ovs_db_start,
# DPDK on with OTHER_CONFIG (other_config:key=value, the caller's CPUs and
# memory), and the bridge br0 (netdev datapath) with the ports p0 and p1,
# dpdkvhostuserclient to the vhost-user servers at SOCK0 and SOCK1. Output in
# $ovs_dir/vsctl.log; 1 with the reason in ovs_why on failure.
ovs_db_bridge() {
	local s0=$1 s1=$2

	shift 2
	{ ovs_vsctl init &&
		ovs_vsctl set Open_vSwitch . other_config:dpdk-init=true "$@" &&
		ovs_vsctl add-br br0 -- set bridge br0 datapath_type=netdev &&
		ovs_vsctl add-port br0 p0 -- set Interface p0 type=dpdkvhostuserclient \
			"options:vhost-server-path=$s0" &&
		ovs_vsctl add-port br0 p1 -- set Interface p1 type=dpdkvhostuserclient \
			"options:vhost-server-path=$s1"; } \
		>>"$ovs_dir/vsctl.log" 2>&1 || { ovs_why="ovs-vsctl failed: $(tail -2 "$ovs_dir/vsctl.log")"; return 1; }
	return 0
}

# Whether a run uses 2 MiB hugepages, from HV_BENCH_HUGEPAGES: auto (when
# hugetlbfs is mounted with 2 MiB pages and $1 [1024] are free), 1 (required)
# or 0 (--no-huge). Prints 1 or 0; fails when 1 is required and not possible.
bench_hugepages() {
	local want=${HV_BENCH_HUGEPAGES:-auto} need=${1:-1024} free size ok=0

	free=$(awk '/^HugePages_Free:/ { print $2 }' /proc/meminfo)
	size=$(awk '/^Hugepagesize:/ { print $2 }' /proc/meminfo)
	grep -q hugetlbfs /proc/mounts && [ "${size:-0}" = 2048 ] && [ "${free:-0}" -ge "$need" ] &&
		ok=1
	case $want in
	auto) echo "$ok" ;;
	1) [ "$ok" = 1 ] && echo 1 ;;
	*) echo 0 ;;
	esac
}

# bench_tick_rate LOG FIELD FROM_NS TO_NS: FIELD's growth per second between
# the first and the last "TICK ns=.. FIELD=.." line of LOG inside
# [FROM_NS, TO_NS] (generators that print their counts as they go, for
# turns); 0 with fewer than two such lines
bench_tick_rate() {
	awk -v f="$2" -v a="$3" -v b="$4" '
		$1 == "TICK" {
			ns = -1; v = -1
			for (i = 2; i <= NF; i++) {
				split($i, kv, "=")
				if (kv[1] == "ns") ns = kv[2] + 0
				else if (kv[1] == f) v = kv[2] + 0
			}
			if (ns < a || ns > b || v < 0) next
			if (n++ == 0) { ns0 = ns; v0 = v }
			ns1 = ns; v1 = v }
		END { if (n < 2 || ns1 <= ns0) print 0; else printf "%.0f\n", (v1 - v0) * 1e9 / (ns1 - ns0) }' "$1"
}

# bench_median LIST [DECIMALS]: the median of the space-separated numbers in LIST
# (the mean of the middle two for an even count, with DECIMALS decimals,
# default 0); 0 for none
bench_median() {
	tr ' ' '\n' <<<"$1" | sed '/^$/d' | sort -g |
		awk -v d="${2:-0}" '{ v[NR] = $1 } END { if (NR == 0) print 0;
		     else if (NR % 2) print v[(NR + 1) / 2];
		     else printf "%.*f\n", d, (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# bench_field NAME LINE: the value of NAME=... in a "RESULT ..." line of a generator
bench_field() {
	sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<"$2"
}

# bench_send_go SOCK: one line "go" to a guest's second serial port (its
# ttyS1, a QEMU socket chardev at SOCK): the e2e initramfs' iperf3 receiver
# waits for it (the benchmarks read the switch's counters first)
bench_send_go() {
	python3 - "$1" <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
s.sendall(b"go\n")
s.close()
PY
}
