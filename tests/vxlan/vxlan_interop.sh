#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# VXLAN flood-and-learn against plain Linux VTEPs (no BGP), in network
# namespaces (doc/vxlan.rst):
#
#   guest a (vm0, 10.0.0.1) -+                            +- VTEP A (.2) - host A (10.0.0.11)
#                            +- hvswitch vx0 (VNI 100) -- up0 (af_packet, 192.168.77.1)
#   guest b (vm1, 10.0.0.2) -+              underlay bridge (namespace)  +- VTEP B (.3) - host B (10.0.0.12)
#
# Each Linux VTEP is a bridge + vxlan (learning) + a veth to a "host"
# namespace, flooding to the other two VTEPs. The guests are the built-in
# KVM guests (lib/vmm/guest). Checks: pings both ways with 0 % loss; each
# side learned the other's MACs behind the right VTEP; every broadcast a
# guest sent reached each Linux VTEP exactly once (head-end replication),
# a host's broadcast came back to no VTEP (split horizon); hvswitch's per
# VTEP counters equal the VXLAN frames the VTEPs' captures saw; a frame too
# long for the underlay once encapsulated is dropped and counted.
# Needs root, /dev/kvm, iproute2, tcpdump and tshark (skipped, exit 77).
set -uo pipefail
: "${HVSWITCH:?}" "${HVCTL:?}"

skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "needs root (network namespaces)"
[ -c /dev/kvm ] && [ -r /dev/kvm ] || skip "/dev/kvm is absent (built-in guests need it)"
for t in ip bridge tcpdump tshark ping python3; do
	command -v "$t" >/dev/null || skip "$t not installed"
done

id=$$
run=$(mktemp -d /tmp/hv-vxlan-test.XXXXXX)
prefix="hvvx$id"
nss=()
pids=()
sw_pid=
hvu=hvu$id
# stop_pids: SIGINT (captures flush their files), then SIGTERM, SIGKILL after 5 s each
stop_pids() {
	local p sig
	for sig in INT TERM KILL; do
		for p in "${pids[@]}"; do kill -"$sig" "$p" 2>/dev/null; done
		for p in "${pids[@]}"; do
			for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
		done
	done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
	pids=()
}
cleanup() {
	stop_pids
	if [ -n "$sw_pid" ]; then
		kill -CONT "$sw_pid" 2>/dev/null # stopped by the overrun checks
		kill -TERM "$sw_pid" 2>/dev/null
		for _ in $(seq 100); do kill -0 "$sw_pid" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$sw_pid" 2>/dev/null
	fi
	ip link del "$hvu" 2>/dev/null
	ip link del "hvw$id" 2>/dev/null
	ip link del "hvm$id" 2>/dev/null
	ip link del "hvq$id" 2>/dev/null
	ip link del "hvb$id" 2>/dev/null
	for n in "${nss[@]}"; do ip netns del "$n" 2>/dev/null; done
	rm -rf "/var/run/dpdk/$prefix"
	[ -n "${HV_VXLAN_KEEP:-}" ] && echo "logs kept in $run" || rm -rf "$run"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

fail() {
	echo "FAIL: $*" >&2
	for f in "$run"/*.log; do [ -f "$f" ] && { echo "--- $f"; tail -20 "$f"; }; done >&2
	exit 1
}
passed=0
# ping_logged LOG NETNS ARGS...: ping from NETNS, its output into LOG (not check's)
ping_logged() {
	local log=$1 ns=$2
	shift 2
	nsx "$ns" ping -q "$@" >"$log" 2>&1
}
check() { # name, then the command
	local name=$1
	shift
	if "$@"; then
		echo "PASS: $name"; passed=$((passed + 1))
	else
		fail "$name"
	fi
}
hvctl_sw() { "$HVCTL" --socket "$run/hvswitch.sock" "$@"; }
# HV_MIRROR_RCVBUF: the mirror's netlink buffer small enough that a test can overrun it
start_switch() {
	HV_MIRROR_RCVBUF=16384 "$HVSWITCH" -l 0,1 --main-lcore 0 --no-pci --no-huge -m 256 --file-prefix "$prefix" \
		-- --run-dir "$run" --config "$run/hvswitch.json" >>"$run/switch.log" 2>&1 &
	sw_pid=$!
	wait_for 20 hvctl_sw version >/dev/null 2>&1 || fail "hvswitch did not answer"
}
# wait_for SECONDS COMMAND...: until it succeeds
wait_for() {
	local s=$1
	shift
	for _ in $(seq $((s * 10))); do "$@" && return 0; sleep 0.1; done
	return 1
}
# a namespace that sends nothing of its own (no IPv6, no IGMP for link-local groups)
mkns() { ip netns add "$1" && nss+=("$1") && nsx "$1" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 &&
	nsx "$1" sysctl -qw net.ipv4.igmp_link_local_mcast_reports=0 &&
	nsx "$1" sysctl -qw net.ipv6.conf.default.disable_ipv6=1 && nsx "$1" ip link set lo up; }
nsx() { local n=$1; shift; ip netns exec "$n" "$@"; }

echo "--- underlay and two Linux VTEPs"
und=hvxu$id
mkns "$und" || fail "netns $und"
nsx "$und" ip link add ubr type bridge || fail "underlay bridge"
nsx "$und" ip link set ubr up
ip link add "$hvu" type veth peer name u0 netns "$und" || fail "veth to the underlay"
sysctl -qw "net.ipv6.conf.$hvu.disable_ipv6=1"
ip link set "$hvu" up
nsx "$und" ip link set u0 master ubr up
# make_vtep NAME UNDERLAY_IP HOST_IP FLOOD_TO...
make_vtep() {
	local n=$1 uip=$2 hip=$3 vt=hvxv$1$id ho=hvxh$1$id r
	shift 3
	mkns "$vt" && mkns "$ho" || return 1
	ip link add "u$n" netns "$und" type veth peer name ul netns "$vt" || return 1
	nsx "$und" ip link set "u$n" master ubr up
	nsx "$vt" ip addr add "$uip/24" dev ul
	nsx "$vt" ip link set ul up
	nsx "$vt" ip link add vx100 type vxlan id 100 local "$uip" dstport 4789 dev ul || return 1
	nsx "$vt" ip link add br0 type bridge
	nsx "$vt" ip link set vx100 master br0
	ip link add hv netns "$vt" type veth peer name eth0 netns "$ho" || return 1
	nsx "$vt" ip link set hv master br0
	for r in "$@"; do nsx "$vt" bridge fdb append 00:00:00:00:00:00 dev vx100 dst "$r" || return 1; done
	nsx "$vt" ip link set vx100 up
	nsx "$vt" ip link set hv up
	nsx "$vt" ip link set br0 up
	nsx "$ho" ip link set eth0 mtu 1450 up
	nsx "$ho" ip addr add "$hip/24" dev eth0
}
make_vtep a 192.168.77.2 10.0.0.11 192.168.77.1 192.168.77.3 || fail "VTEP A"
make_vtep b 192.168.77.3 10.0.0.12 192.168.77.1 192.168.77.2 || fail "VTEP B"

echo "--- hvswitch: uplink up0 (af_packet on $hvu), vm0, vm1, vx0"
start_switch
# the uplink in a VLAN of its own: the guests' floods stay off the bare underlay
hvctl_sw port add up0 --type ethdev --devargs "net_af_packet$id,iface=$hvu" --vlan 4000 \
	>/dev/null || fail "port add up0"
hvctl_sw port add vm0 >/dev/null && hvctl_sw port add vm1 >/dev/null || fail "port add vm0/vm1"
out=$(hvctl_sw port add vx0 --type vxlan --vni 100 --local 192.168.77.1 --uplink vm0 2>&1) &&
	fail "a vhost-user uplink was accepted"
echo "refused as it should: $out"
hvctl_sw port add vx0 --type vxlan --vni 100 --local 192.168.77.1 --uplink up0 \
	--remote 192.168.77.2,192.168.77.3 >/dev/null || fail "port add vx0"
out=$(hvctl_sw port del up0 2>&1) && fail "the uplink of a tunnel was deleted"
echo "refused as it should: $out"
out=$(hvctl_sw port set vx0 trunk=true 2>&1) && fail "a tunnel became a trunk"
echo "refused as it should: $out"

echo "--- captures on both VTEPs' underlay, guests' frames into the switch"
for n in a b; do
	# not through a function: $! must be the capture itself, to be stopped by PID
	ip netns exec "hvxv$n$id" tcpdump -U -n -i ul -w "$run/vtep-$n.pcap" udp port 4789 \
		2>"$run/tcpdump-$n.log" &
	pids+=($!)
done
for p in vm0 vm1; do
	"$HVCTL" --socket "$run/hvswitch.sock" capture "$p" --direction rx -w "$run/$p-rx.pcapng" \
		2>"$run/cap-$p.log" &
	pids+=($!)
done
wait_for 10 grep -q "listening on" "$run/tcpdump-a.log" || fail "tcpdump A did not start"
wait_for 10 grep -q "listening on" "$run/tcpdump-b.log" || fail "tcpdump B did not start"
# the counters from here on are what the captures see
hvctl_sw --json port show vx0 >"$run/vx0-start.json"

guest() { # NAME PORT CMDLINE
	timeout -s TERM 120 "$HVCTL" guest run "$1" --kernel builtin --memory 64M \
		--port "$run/$2.sock" --cmdline "$3" >"$run/$1.log" 2>&1 &
	pids+=($!)
	guest_pid=$!
}
echo "--- guest b pings host A across the tunnel; host A and B ping both guests"
guest a vm0 "ip=10.0.0.1 mode=respond seconds=60"
guest b vm1 "ip=10.0.0.2 peer=10.0.0.11 mode=ping count=5 linger_ms=60000"
wait_for 60 grep -q "ping: 5 sent" "$run/b.log" || fail "guest b did not finish pinging"
check "guest b pinged host A (10.0.0.11) through the tunnel, 0 % loss" \
	grep -q "ping: 5 sent, 5 received" "$run/b.log"
for h in a b; do
	for g in 10.0.0.1 10.0.0.2; do
		check "host $h pings $g with 0 % loss" \
			ping_logged "$run/ping-$h-$g.log" "hvxh$h$id" -c 5 -i 0.2 -W 2 "$g"
	done
done

echo "--- what each side learned"
mac_a=$(nsx "hvxha$id" cat /sys/class/net/eth0/address)
mac_b=$(nsx "hvxhb$id" cat /sys/class/net/eth0/address)
hvctl_sw --json fdb show >"$run/fdb.json"
fdb_has() { # MAC PORT REMOTE
	python3 - "$run/fdb.json" "$@" <<'PY'
import json, sys
f, mac, port, remote = sys.argv[1:]
for e in json.load(open(f)):
    if e["mac"].lower() == mac.lower() and e["port"] == port and e.get("remote") == remote:
        sys.exit(0)
print("  no", mac, "->", port, remote, "in", json.load(open(f)))
sys.exit(1)
PY
}
check "hvswitch learned host A's MAC behind VTEP 192.168.77.2" fdb_has "$mac_a" vx0 192.168.77.2
check "hvswitch learned host B's MAC behind VTEP 192.168.77.3" fdb_has "$mac_b" vx0 192.168.77.3
guest_mac() { # PORT: the MAC the switch learned there (lower case, as bridge prints it)
	python3 - "$run/fdb.json" "$1" <<'PY'
import json, sys
print(" ".join(e["mac"].lower() for e in json.load(open(sys.argv[1])) if e["port"] == sys.argv[2]))
PY
}
gm0=$(guest_mac vm0)
gm1=$(guest_mac vm1)
check "the guests' MACs learned on vm0 ($gm0) and vm1 ($gm1)" test -n "$gm0" -a -n "$gm1"
for n in a b; do
	for m in $gm0 $gm1; do
		check "VTEP $n learned guest $m behind 192.168.77.1" \
			bash -c "ip netns exec hvxv$n$id bridge fdb show dev vx100 | grep -q '^$m dst 192.168.77.1 '"
	done
done 2>/dev/null

echo "--- host A's broadcast: to the guests, never back into the tunnel"
nsx "hvxha$id" ping -q -b -c 3 -i 0.2 -W 1 10.0.0.255 >/dev/null 2>&1
# every frame in: the captures stop only after the switch's counters are read
sleep_until_quiet() { # the VTEP captures stop growing (no traffic left in flight)
	local a b
	a=$(stat -c %s "$run/vtep-a.pcap" "$run/vtep-b.pcap" | tr '\n' ' ')
	sleep 0.5
	b=$(stat -c %s "$run/vtep-a.pcap" "$run/vtep-b.pcap" | tr '\n' ' ')
	[ "$a" = "$b" ]
}
wait_for 10 sleep_until_quiet || fail "traffic did not stop"
hvctl_sw --json port show vx0 >"$run/vx0.json"
hvctl_sw --json port show vm0 >"$run/vm0.json"
stop_pids

count() { # PCAP FILTER: frames matching
	tshark -r "$1" -Y "$2" 2>/dev/null | wc -l
}
# broadcasts the guests sent into the switch
bc_guests=$(( $(count "$run/vm0-rx.pcapng" "eth.dst == ff:ff:ff:ff:ff:ff") +
	$(count "$run/vm1-rx.pcapng" "eth.dst == ff:ff:ff:ff:ff:ff") ))
echo "broadcasts from the guests: $bc_guests"
check "the guests sent broadcasts (their ARP)" test "$bc_guests" -gt 0
for n in a b; do
	got=$(count "$run/vtep-$n.pcap" "ip.src#1 == 192.168.77.1 && vxlan.vni == 100 && eth.dst#2 == ff:ff:ff:ff:ff:ff")
	check "VTEP $n got each of the $bc_guests broadcasts exactly once (got $got)" \
		test "$got" = "$bc_guests"
done
back=$(count "$run/vtep-b.pcap" "ip.src#1 == 192.168.77.1 && icmp && eth.dst#2 == ff:ff:ff:ff:ff:ff")
check "host A's broadcast pings were not sent back into the tunnel (got $back)" test "$back" = 0
counters_match() { # VTEP_LETTER VTEP_IP
	local n=$1 ip=$2 to from
	# the outer header's addresses (ip.src would match the inner one too)
	to=$(count "$run/vtep-$n.pcap" "ip.src#1 == 192.168.77.1 && ip.dst#1 == $ip && vxlan")
	from=$(count "$run/vtep-$n.pcap" "ip.src#1 == $ip && ip.dst#1 == 192.168.77.1 && vxlan")
	python3 - "$run/vx0-start.json" "$run/vx0.json" "$ip" "$to" "$from" <<'PY'
import json, sys
def remote(f, ip):
    for r in json.load(open(f))["vxlan"]["remotes"]:
        if r["ip"] == ip:
            return r
    return {"tx_packets": 0, "rx_packets": 0}
ip, to, frm = sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
a, b = remote(sys.argv[1], ip), remote(sys.argv[2], ip)
tx, rx = b["tx_packets"] - a["tx_packets"], b["rx_packets"] - a["rx_packets"]
print("  %s: tx %d (capture %d), rx %d (capture %d)" % (ip, tx, to, rx, frm))
sys.exit(0 if tx == to and rx == frm and to > 0 and frm > 0 else 1)
PY
}
check "vx0's counters of VTEP A equal its capture" counters_match a 192.168.77.2
check "vx0's counters of VTEP B equal its capture" counters_match b 192.168.77.3
encap_sum() {
	python3 - "$run/vx0.json" <<'PY'
import json, sys
v = json.load(open(sys.argv[1]))["vxlan"]
tx = sum(r["tx_packets"] for r in v["remotes"])
rx = sum(r["rx_packets"] for r in v["remotes"])
print("  encap %d = sum of remotes' tx %d, decap %d = their rx %d" % (v["encap"], tx, v["decap"], rx))
sys.exit(0 if v["encap"] == tx and v["decap"] == rx else 1)
PY
}
check "vx0's encap/decap equal the sums over its VTEPs" encap_sum

echo "--- underlay MTU: a frame that does not fit once encapsulated is dropped, counted"
guest a vm0 "ip=10.0.0.1 mode=respond seconds=30"
port_up() { "$HVCTL" --socket "$run/hvswitch.sock" --json port show "$1" |
	python3 -c 'import json,sys; sys.exit(json.load(sys.stdin)["state"] != "up")'; }
wait_for 20 port_up vm0 || fail "guest a did not come back"
mtu_before=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["vxlan"]["mtu_drops"])' "$run/vx0.json")
# host A's MTU is 1450: a 1464-byte frame, 1500 bytes of IPv4 once encapsulated, fits
nsx "hvxha$id" ping -q -c 3 -i 0.2 -W 1 -s 1422 -M do 10.0.0.1 >"$run/ping-big.log" 2>&1
check "a frame of 1464 bytes (1500 once encapsulated) crosses" grep -q " 0% packet loss" "$run/ping-big.log"
hvctl_sw --json port show vx0 >"$run/vx0-mtu.json"
mtu_after=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["vxlan"]["mtu_drops"])' "$run/vx0-mtu.json")
check "no MTU drop for frames that fit ($mtu_before -> $mtu_after)" test "$mtu_after" = "$mtu_before"
# guest b streams 4 frames of 1500 bytes to host A: 1536 once encapsulated
guest b vm1 "ip=10.0.0.2 peer=10.0.0.11 mode=stream count=4 window=4 size=1500"
wait_guest_exit() { ! kill -0 "$guest_pid" 2>/dev/null; }
wait_for 30 wait_guest_exit || fail "the streaming guest did not end"
hvctl_sw --json port show vx0 >"$run/vx0-mtu2.json"
mtu_drops=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["vxlan"]["mtu_drops"])' "$run/vx0-mtu2.json")
echo "mtu_drops: $mtu_before -> $mtu_drops"
check "guest b's 4 frames of 1500 bytes did not fit a 1500-byte underlay: 4 MTU drops" \
	test "$mtu_drops" = $((mtu_before + 4))
nsx "hvxha$id" ping -q -c 3 -i 0.2 -W 1 10.0.0.1 >"$run/ping-small.log" 2>&1
check "small frames still cross" grep -q " 0% packet loss" "$run/ping-small.log"

stop_switch() {
	kill -TERM "$sw_pid"
	for _ in $(seq 100); do kill -0 "$sw_pid" 2>/dev/null || break; sleep 0.1; done
	wait "$sw_pid"
	rc=$?
	sw_pid=
	check "hvswitch stopped cleanly (exit $rc)" test "$rc" = 0
}

echo "--- a kernel vxlan netdev's FDB (what FRR's zebra programs) drives vx0"
ip link add "hvm$id" type vxlan id 100 dstport 4789 nolearning || fail "mirror netdev"
# the push port: a bridge port (zebra's would share the mirror's bridge; not needed here)
ip link add "hvb$id" type bridge && ip link add "hvq$id" type veth peer name "hvqp$id" &&
	ip link set "hvq$id" master "hvb$id" && ip link set "hvq$id" up && ip link set "hvb$id" up ||
	fail "push port"
hvctl_sw port del vx0 >/dev/null || fail "port del vx0"
hvctl_sw port add vx0 --type vxlan --vni 100 --local 192.168.77.1 --uplink up0 \
	--mirror "hvm$id" --push "hvq$id" >/dev/null || fail "port add vx0 with a mirror"
bridge fdb append 00:00:00:00:00:00 dev "hvm$id" dst 192.168.77.2 || fail "bridge fdb append"
bridge fdb append 00:00:00:00:00:00 dev "hvm$id" dst 192.168.77.3 || fail "bridge fdb append"
bridge fdb add 02:42:00:00:00:09 dev "hvm$id" dst 192.168.77.3 extern_learn || fail "bridge fdb add"
mirror_state() { # FLOOD_IPS STATIC_REMOTE_OF_02:42:00:00:00:09 (- for none)
	"$HVCTL" --socket "$run/hvswitch.sock" --json port show vx0 >"$run/vx0-mirror.json" &&
		"$HVCTL" --socket "$run/hvswitch.sock" --json fdb show >"$run/fdb-mirror.json" &&
		python3 - "$run/vx0-mirror.json" "$run/fdb-mirror.json" "$1" "$2" <<'PY'
import json, sys
v = json.load(open(sys.argv[1]))["vxlan"]["remotes"]
flood = sorted(r["ip"] for r in v if r["mirror_flood"])
want = sorted(x for x in sys.argv[3].split(",") if x)
e = [x for x in json.load(open(sys.argv[2])) if x["mac"].lower() == "02:42:00:00:00:09"]
st = e[0].get("remote") if e and e[0].get("static") and e[0]["port"] == "vx0" else "-"
sys.exit(0 if flood == want and st == sys.argv[4] else 1)
PY
}
check "vx0 took the mirror's flood list and its MAC as static behind 192.168.77.3" \
	wait_for 10 mirror_state 192.168.77.2,192.168.77.3 192.168.77.3
bridge fdb del 02:42:00:00:00:09 dev "hvm$id" dst 192.168.77.3 || fail "bridge fdb del"
bridge fdb del 00:00:00:00:00:00 dev "hvm$id" dst 192.168.77.3 || fail "bridge fdb del"
check "what left the mirror left vx0 (flood list 192.168.77.2, the MAC gone)" \
	wait_for 10 mirror_state 192.168.77.2 -
bridge fdb add 02:42:00:00:00:09 dev "hvm$id" dst 192.168.77.2 extern_learn || fail "bridge fdb add"
check "a MAC the mirror moves to VTEP A follows" wait_for 10 mirror_state 192.168.77.2 192.168.77.2

echo "--- a burst that overruns the mirror's netlink socket: hvswitch reads the mirror again"
# hvswitch stopped while 400 MACs arrive, one leaves and the flood list changes:
# far more than its 32 KiB socket holds, so the kernel drops changes (ENOBUFS)
burst() { # add|del: the 400 MACs 02:43:00:00:0x:yy behind 192.168.77.3
	for ((i = 0; i < 400; i++)); do
		printf 'fdb %s 02:43:00:00:%02x:%02x dev %s dst 192.168.77.3%s\n' "$1" $((i / 256)) \
			$((i % 256)) "hvm$id" "$([ "$1" = add ] && echo ' extern_learn')"
	done >"$run/burst-$1.batch"
	bridge -batch "$run/burst-$1.batch"
}
mirror_after_burst() { # FLOOD_IPS MAC_09_REMOTE BURST_MACS OVERRUNS_AT_LEAST
	mirror_state "$1" "$2" && python3 - "$run/vx0-mirror.json" "$run/fdb-mirror.json" "$3" "$4" <<'PY'
import json, sys
vx = json.load(open(sys.argv[1]))["vxlan"]
burst = [x for x in json.load(open(sys.argv[2]))
         if x["mac"].lower().startswith("02:43:00:00:") and x.get("static") and x["port"] == "vx0"
         and x.get("remote") == "192.168.77.3"]
print("  burst MACs:", len(burst), "overruns:", vx["mirror_overruns"], "re-reads:",
      vx["mirror_rereads"], "swept:", vx["mirror_swept"], "unswept:", vx["mirror_unswept"])
sys.exit(0 if len(burst) == int(sys.argv[3]) and vx["mirror_overruns"] >= int(sys.argv[4])
         and vx["mirror_rereads"] >= int(sys.argv[4]) else 1)
PY
}
kill -STOP "$sw_pid"
burst add || { kill -CONT "$sw_pid"; fail "bridge -batch add"; }
bridge fdb del 02:42:00:00:00:09 dev "hvm$id" dst 192.168.77.2 &&
	bridge fdb append 00:00:00:00:00:00 dev "hvm$id" dst 192.168.77.3 &&
	bridge fdb del 00:00:00:00:00:00 dev "hvm$id" dst 192.168.77.2 ||
	{ kill -CONT "$sw_pid"; fail "bridge fdb changes in the burst"; }
kill -CONT "$sw_pid"
check "after the overrun vx0 has the mirror's state: 400 MACs, 02:42:00:00:00:09 swept, flood list .3" \
	wait_for 20 mirror_after_burst 192.168.77.3 - 400 1
check "the overrun was logged" grep -q "mirror: netlink overrun, reading the mirror again" \
	"$run/switch.log"
# back to where the restart below starts from (deletes at full speed may overrun again)
burst del || fail "bridge -batch del"
bridge fdb append 00:00:00:00:00:00 dev "hvm$id" dst 192.168.77.2 &&
	bridge fdb del 00:00:00:00:00:00 dev "hvm$id" dst 192.168.77.3 &&
	bridge fdb add 02:42:00:00:00:09 dev "hvm$id" dst 192.168.77.2 extern_learn ||
	fail "bridge fdb changes back"
check "the burst's MACs left vx0 with the mirror's" wait_for 20 mirror_after_burst 192.168.77.2 192.168.77.2 0 1

echo "--- restart: the config brings the tunnels back after their uplinks; traffic flows again"
# a second tunnel whose port index is below its uplink's (the config lists it first)
ip link add "hvw$id" type veth peer name "hvx$id" || fail "second veth"
ip link set "hvw$id" up
hvctl_sw port add tmp0 >/dev/null || fail "port add tmp0"
hvctl_sw port add up1 --type ethdev --devargs "net_af_packet$((id + 1)),iface=hvw$id" \
	--vlan 4001 >/dev/null || fail "port add up1"
hvctl_sw port del tmp0 >/dev/null || fail "port del tmp0"
hvctl_sw port add vx1 --type vxlan --vni 200 --local 192.168.88.1 --uplink up1 >/dev/null ||
	fail "port add vx1"
stop_pids
stop_switch
start_switch
hvctl_sw --json port list >"$run/list-restart.json"
all_running() {
	python3 - "$run/list-restart.json" <<'PY'
import json, sys
ports = {p["name"]: p for p in json.load(open(sys.argv[1]))}
bad = {n: p.get("error", p["state"]) for n, p in ports.items() if p["state"] == "error"}
print("  ports:", sorted(ports), "in error:", bad)
sys.exit(0 if not bad and {"up0", "up1", "vx0", "vx1", "vm0", "vm1"} <= set(ports) else 1)
PY
}
check "after a restart every port is back, no tunnel in error" all_running
hvctl_sw port list >"$run/list.txt" || fail "port list"
check "port list shows the tunnel's VNI and uplink" grep -q "vni 100 on up0" "$run/list.txt"
check "after the restart vx0 read the mirror's entries again" \
	wait_for 10 mirror_state 192.168.77.2 192.168.77.2
hvctl_sw port show vx0 >"$run/show-vx0.txt" || fail "port show vx0"
guest a vm0 "ip=10.0.0.1 mode=respond seconds=30"
wait_for 20 port_up vm0 || fail "guest a did not come back after the restart"
resolved() { # the remote VTEPs of vx0 have their next hop again (hvswitch's own ARP)
	"$HVCTL" --socket "$run/hvswitch.sock" --json port show vx0 | python3 -c '
import json, sys
r = json.load(sys.stdin)["vxlan"]["remotes"]
sys.exit(not (r and all(x["next_hop_mac"] for x in r)))'
}
check "vx0 resolved its remote VTEPs again after the restart" wait_for 20 resolved
check "host A pings guest a after the restart, 0 % loss" \
	ping_logged "$run/ping-restart.log" "hvxha$id" -c 5 -i 0.2 -W 2 10.0.0.1

echo "--- --push: the guests' MACs go to the push port, and come back after an overrun lost a delete"
# the FDB's MACs on vm0/vm1 are extern_learn entries of the push port (which also keeps,
# for an FDB age, what the run before the restart pushed); they go to $run/local.txt
pushed_local() {
	"$HVCTL" --socket "$run/hvswitch.sock" --json fdb show >"$run/fdb-push.json" &&
		bridge fdb show dev "hvq$id" >"$run/push-fdb.txt" &&
		python3 - "$run/fdb-push.json" "$run/push-fdb.txt" "$run/local.txt" <<'PY'
import json, sys
local = sorted(x["mac"].lower() for x in json.load(open(sys.argv[1])) if x["port"] in ("vm0", "vm1"))
pushed = sorted(l.split()[0].lower() for l in open(sys.argv[2]) if "extern_learn" in l)
print("  local:", local, "pushed:", pushed)
open(sys.argv[3], "w").write("\n".join(local) + "\n")
sys.exit(0 if local and set(local) <= set(pushed) else 1)
PY
}
check "guest a's MAC is pushed to the push port (extern_learn)" wait_for 10 pushed_local
mac_a=$(head -n1 "$run/local.txt")
# the delete comes after 400 changes, into a full socket: its event is lost
kill -STOP "$sw_pid"
burst add || { kill -CONT "$sw_pid"; fail "bridge -batch add"; }
bridge fdb del "$mac_a" dev "hvq$id" master || { kill -CONT "$sw_pid"; fail "bridge fdb del"; }
kill -CONT "$sw_pid"
check "after the overrun the 400 MACs are in and guest a's MAC ($mac_a) is pushed again" \
	wait_for 20 eval 'mirror_after_burst 192.168.77.2 192.168.77.2 400 1 && pushed_local'
burst del || fail "bridge -batch del"
stop_pids
stop_switch
! grep -qE 'Sanitizer|runtime error' "$run/switch.log" || fail "sanitizer report in the switch's log"
echo "$passed checks passed"
