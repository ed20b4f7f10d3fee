#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# BGP EVPN through FRR (doc/vxlan.rst), in network namespaces:
#
#   guest a (vm0, 10.0.0.1) -+
#                            +- hvswitch vx0 (VNI 100, local 192.168.77.1, --mirror vxm100
#   guest b (vm1, 10.0.0.2) -+     --push hvp100) -- up0 (af_packet on hvu)
#                                                      |
#   namespace A: hvswitch, underlay bridge ubr (192.168.77.10, FRR#1: zebra + bgpd) -- ns B
#                mirror: bridge br100 = vxm100 (vxlan 100, local .1, nolearning) + hvp100 (veth)
#   namespace B: 192.168.77.3, FRR#2, Linux VTEP: br0 = vx100 (nolearning) + veth to ns H
#   namespace H: the remote host (10.0.0.12)
#
# iBGP l2vpn evpn between A and B, advertise-all-vni on both. Checks: pings
# both ways with 0 % loss; both BGP tables hold the type-2 routes of both
# guests (from .1) and of the host (from .3) and the type-3 routes of both
# VTEPs; hvswitch has the host's MAC behind vx0 (VTEP .3) and floods to .3
# only; every broadcast reaches the other VTEP exactly once; a pushed entry
# deleted by hand is pushed again; a guest's MAC taken over by the host
# moves (withdrawn by A, re-learned behind .3) and back when the guest
# returns; FRR#1 restarted converges; hvswitch restarted keeps its MACs
# advertised, withdraws those not learned again within an age; an idle MAC
# ages out and is withdrawn.
# Needs root, /dev/kvm, iproute2, tcpdump, tshark and FRR (skipped, exit 77).
set -uo pipefail
: "${HVSWITCH:?}" "${HVCTL:?}"

skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "needs root (network namespaces)"
[ -c /dev/kvm ] && [ -r /dev/kvm ] || skip "/dev/kvm is absent (built-in guests need it)"
for t in ip bridge tcpdump tshark ping python3 vtysh; do
	command -v "$t" >/dev/null || skip "$t not installed (vtysh: package frr)"
done
frr=/usr/lib/frr
[ -x "$frr/zebra" ] && [ -x "$frr/bgpd" ] || skip "FRR's zebra and bgpd are not installed (package frr)"
id -u frr >/dev/null 2>&1 || skip "no user frr (package frr)"

id=$$
run=$(mktemp -d /tmp/hv-evpn-test.XXXXXX)
chmod 755 "$run" # FRR's daemons run as user frr
prefix="hvev$id"
nsa=hveva$id nsb=hvevb$id nsh=hvevh$id
nss=()
pids=()
sw_pid=
declare -A frr_pid
gm0=02:00:0a:00:00:01 gm1=02:00:0a:00:00:02 mac_h=02:00:0a:00:00:12

stop_pid() { # PID: SIGINT (captures flush their files), then SIGTERM, SIGKILL after 5 s each
	local p=$1 sig
	for sig in INT TERM KILL; do
		kill -"$sig" "$p" 2>/dev/null || break
		for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
	done
	wait "$p" 2>/dev/null
}
stop_pids() {
	local p
	for p in "${pids[@]}"; do stop_pid "$p"; done
	pids=()
}
stop_frr() { # a or b
	local d
	for d in bgpd zebra; do
		[ -n "${frr_pid[$1$d]:-}" ] && stop_pid "${frr_pid[$1$d]}"
		frr_pid[$1$d]=
	done
}
cleanup() {
	stop_pids
	stop_frr a
	stop_frr b
	[ -n "$sw_pid" ] && stop_pid "$sw_pid"
	for n in "${nss[@]}"; do ip netns del "$n" 2>/dev/null; done
	rm -rf "/var/run/dpdk/$prefix"
	[ -n "${HV_EVPN_KEEP:-}" ] && echo "logs kept in $run" || rm -rf "$run"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

fail() {
	echo "FAIL: $*" >&2
	for f in "$run"/*.log "$run"/frr-*/*.log; do [ -f "$f" ] && { echo "--- $f"; tail -20 "$f"; }; done >&2
	exit 1
}
passed=0
check() { # name, then the command
	local name=$1
	shift
	if "$@"; then
		echo "PASS: $name (${SECONDS}s)"; passed=$((passed + 1))
	else
		fail "$name"
	fi
}
# wait_for SECONDS COMMAND...: until it succeeds
wait_for() {
	local s=$1
	shift
	for _ in $(seq $((s * 10))); do "$@" && return 0; sleep 0.1; done
	return 1
}
nsx() { local n=$1; shift; ip netns exec "$n" "$@"; }
# a namespace that sends nothing of its own (no IPv6, no IGMP for link-local groups)
mkns() { ip netns add "$1" && nss+=("$1") && nsx "$1" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 &&
	nsx "$1" sysctl -qw net.ipv4.igmp_link_local_mcast_reports=0 &&
	nsx "$1" sysctl -qw net.ipv6.conf.default.disable_ipv6=1 && nsx "$1" ip link set lo up; }
hvctl_sw() { "$HVCTL" --socket "$run/hvswitch.sock" "$@"; }

echo "--- namespaces: A (underlay bridge, mirror, FRR#1, hvswitch), B (FRR#2, Linux VTEP), H"
mkns "$nsa" && mkns "$nsb" && mkns "$nsh" || fail "netns"
nsx "$nsa" ip link add ubr type bridge || fail "underlay bridge"
nsx "$nsa" ip addr add 192.168.77.10/24 dev ubr
nsx "$nsa" ip link set ubr up
nsx "$nsa" ip link add hvu type veth peer name u0 || fail "veth for the uplink"
nsx "$nsa" ip link set u0 master ubr up
nsx "$nsa" ip link set hvu up
ip link add ub netns "$nsa" type veth peer name ul netns "$nsb" || fail "veth A-B"
nsx "$nsa" ip link set ub master ubr up
# the mirror of VNI 100: zebra watches it, it carries no traffic
nsx "$nsa" ip link add br100 type bridge || fail "mirror bridge"
nsx "$nsa" ip link add vxm100 type vxlan id 100 local 192.168.77.1 dstport 4789 nolearning ||
	fail "mirror vxlan"
nsx "$nsa" ip link add hvp100 type veth peer name hvp100p || fail "mirror push port"
nsx "$nsa" ip link set vxm100 master br100
nsx "$nsa" ip link set hvp100 master br100
for d in hvp100p hvp100 vxm100 br100; do nsx "$nsa" ip link set "$d" up; done
# B: a plain Linux VTEP whose bridge learns the host's MAC
nsx "$nsb" ip addr add 192.168.77.3/24 dev ul
nsx "$nsb" ip link set ul up
nsx "$nsb" ip link add vx100 type vxlan id 100 local 192.168.77.3 dstport 4789 nolearning dev ul ||
	fail "VTEP B"
nsx "$nsb" ip link add br0 type bridge
nsx "$nsb" ip link set vx100 master br0
ip link add hv netns "$nsb" type veth peer name eth0 netns "$nsh" || fail "veth B-H"
nsx "$nsb" ip link set hv master br0
for d in vx100 hv br0; do nsx "$nsb" ip link set "$d" up; done
nsx "$nsh" ip link set eth0 address "$mac_h" mtu 1450 up
nsx "$nsh" ip addr add 10.0.0.12/24 dev eth0

echo "--- FRR: zebra + bgpd in A and B, own config, sockets and PIDs"
frr_conf() { # a|b ROUTER_ID PEER
	local d=$run/frr-$1
	mkdir -p "$d" && chmod 777 "$d"
	echo "hostname $1" >"$d/zebra.conf"
	cat >"$d/bgpd.conf" <<EOF
hostname $1
router bgp 65000
 bgp router-id $2
 no bgp default ipv4-unicast
 neighbor $3 remote-as 65000
 address-family l2vpn evpn
  neighbor $3 activate
  advertise-all-vni
 exit-address-family
EOF
	chmod 644 "$d"/*.conf
}
frr_conf a 192.168.77.10 192.168.77.3
frr_conf b 192.168.77.3 192.168.77.10
start_frr() { # a|b
	local n=$1 ns d=$run/frr-$1 x
	[ "$n" = a ] && ns=$nsa || ns=$nsb
	for x in zebra bgpd; do
		# in the foreground: $! is the daemon, stopped by that PID
		ip netns exec "$ns" "$frr/$x" -f "$d/$x.conf" -i "$d/$x.pid" -z "$d/zserv.api" \
			--vty_socket "$d" -P 0 --log "file:$d/$x.log" >>"$d/$x.out" 2>&1 &
		frr_pid[$n$x]=$!
		# bgpd connects to zebra's socket
		[ "$x" = zebra ] && { wait_for 10 test -S "$d/zserv.api" || fail "zebra $n did not start"; }
	done
	wait_for 10 test -S "$d/bgpd.vty" || fail "bgpd $n did not start"
}
vty() { vtysh --vty_socket "$run/frr-$1" -c "$2"; }
established() { # a|b
	vty "$1" "show bgp l2vpn evpn summary json" 2>/dev/null | python3 2>/dev/null -c '
import json, sys
p = json.load(sys.stdin).get("peers", {})
sys.exit(not p or any(x.get("state") != "Established" for x in p.values()))'
}
start_frr a
start_frr b
check "the BGP EVPN session A-B is established" wait_for 60 established a

# routes a|b SPEC... (quiet), routes_say: the same, saying what is missing
# routes a|b SPEC...: the EVPN table holds each SPEC, "2,MAC,NEXTHOP" or "3,IP,NEXTHOP" (a best
# path), or "!2,MAC,NEXTHOP" (no path of that MAC from that next hop)
routes() {
	local n=$1
	shift
	vty "$n" "show bgp l2vpn evpn route json" >"$run/routes-$n.json" 2>/dev/null &&
		python3 - "$run/routes-$n.json" "$@" <<'PY'
import json, os, sys
t = json.load(open(sys.argv[1]))
best, anyp = set(), set()
for rd in t.values():
    if not isinstance(rd, dict):
        continue
    for pfx, r in rd.items():
        if not isinstance(r, dict) or "paths" not in r:
            continue
        for group in r["paths"]:
            for p in group if isinstance(group, list) else [group]:
                what = p.get("mac", p.get("ip", "")).lower()
                for nh in p.get("nexthops", []):
                    k = (str(p.get("routeType")), what, nh.get("ip"))
                    anyp.add(k)
                    if p.get("bestpath"):
                        best.add(k)
ok = True
say = os.environ.get("ROUTES_SAY")
for s in sys.argv[2:]:
    neg = s.startswith("!")
    k = tuple(s.lstrip("!").lower().split(","))
    if (k in anyp) if neg else (k not in best):
        ok = False
        if say:
            print("  not as wanted:", s)
sys.exit(0 if ok else 1)
PY
}
routes_say() { ROUTES_SAY=1 routes "$@"; }
wait_routes() { # SECONDS a|b SPEC...: until routes holds, else say what is missing
	local s=$1
	shift
	wait_for "$s" routes "$@" || routes_say "$@"
}
check "A and B originate their type-3 routes, each has the other's" \
	wait_routes 30 a 3,192.168.77.1,192.168.77.1 3,192.168.77.3,192.168.77.3
check "B has both type-3 routes" wait_routes 30 b 3,192.168.77.1,192.168.77.1 3,192.168.77.3,192.168.77.3

echo "--- hvswitch in A: uplink up0 (af_packet on hvu), vm0, vm1, vx0 following the mirror"
start_switch() { # [hvswitch options...]
	ip netns exec "$nsa" "$HVSWITCH" -l 0,1 --main-lcore 0 --no-pci --no-huge -m 256 \
		--file-prefix "$prefix" -- --run-dir "$run" --config "$run/hvswitch.json" "$@" \
		>>"$run/switch.log" 2>&1 &
	sw_pid=$!
	wait_for 20 hvctl_sw version >/dev/null 2>&1 || fail "hvswitch did not answer"
}
start_switch
hvctl_sw port add up0 --type ethdev --devargs "net_af_packet$id,iface=hvu" --vlan 4000 \
	>/dev/null || fail "port add up0"
hvctl_sw port add vm0 >/dev/null && hvctl_sw port add vm1 >/dev/null || fail "port add vm0/vm1"
out=$(hvctl_sw port add vx9 --type vxlan --vni 9 --local 192.168.77.1 --uplink up0 \
	--push hvp100 2>&1) && fail "--push without --mirror was accepted"
echo "refused as it should: $out"
hvctl_sw port add vx0 --type vxlan --vni 100 --local 192.168.77.1 --uplink up0 \
	--mirror vxm100 --push hvp100 >/dev/null || fail "port add vx0"
vx0_json() { hvctl_sw --json port show vx0 >"$run/vx0.json"; }
flood_is() { # IP...: vx0's flood list, exactly
	vx0_json && python3 - "$run/vx0.json" "$@" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["vxlan"]["remotes"]
sys.exit(sorted(x["ip"] for x in r if x["flood"] or x["mirror_flood"]) != sorted(sys.argv[2:]))
PY
}
check "vx0 floods to VTEP B only (its type-3 route, through the mirror)" wait_for 30 flood_is 192.168.77.3
resolved() { # vx0's remote VTEPs have their next hop (hvswitch's own ARP): no flood is lost
	vx0_json && python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))["vxlan"]["remotes"]
sys.exit(not (r and all(x["next_hop_mac"] for x in r)))' "$run/vx0.json"
}
wait_for 20 resolved || fail "vx0 did not resolve VTEP B's address"

echo "--- captures: the underlay at both VTEPs, what the guests and the host sent"
# not through a function: $! must be the capture itself, to be stopped by PID
ip netns exec "$nsb" tcpdump -U -n -i ul -w "$run/vtep-b.pcap" udp port 4789 2>"$run/tcpdump-b.log" &
pids+=($!)
ip netns exec "$nsa" tcpdump -U -n -i u0 -w "$run/vtep-a.pcap" udp port 4789 2>"$run/tcpdump-a.log" &
pids+=($!)
ip netns exec "$nsh" tcpdump -U -n -i eth0 -w "$run/host.pcap" ether src "$mac_h" \
	2>"$run/tcpdump-h.log" &
pids+=($!)
for p in vm0 vm1; do
	hvctl_sw capture "$p" --direction rx -w "$run/$p-rx.pcapng" 2>"$run/cap-$p.log" &
	pids+=($!)
done
for c in a b h; do
	wait_for 10 grep -q "listening on" "$run/tcpdump-$c.log" || fail "tcpdump $c did not start"
done

guest_pid=()
guest() { # a|b PORT MAC CMDLINE
	timeout -s TERM 300 "$HVCTL" guest run "$1" --kernel builtin --memory 64M \
		--port "$run/$2.sock" --mac "$3" --cmdline "$4" >"$run/guest-$1.log" 2>&1 &
	guest_pid[$([ "$1" = a ] && echo 0 || echo 1)]=$!
}
stop_guest() { # 0|1
	[ -n "${guest_pid[$1]:-}" ] && stop_pid "${guest_pid[$1]}"
	guest_pid[$1]=
}
port_up() { hvctl_sw --json port show "$1" |
	python3 -c 'import json,sys; sys.exit(json.load(sys.stdin)["state"] != "up")'; }
hping() { # LOG PING_ARGS...: host H pings, output to LOG (0 % loss: success)
	local log=$1
	shift
	ip netns exec "$nsh" ping -q "$@" >"$log" 2>&1
}
echo "--- guest b pings host H across the tunnel; H pings both guests"
guest a vm0 "$gm0" "ip=10.0.0.1 mode=respond seconds=280"
guest b vm1 "$gm1" "ip=10.0.0.2 peer=10.0.0.12 mode=ping count=5 linger_ms=280000"
wait_for 60 grep -q "ping: 5 sent" "$run/guest-b.log" || fail "guest b did not finish pinging"
check "guest b pinged host H (10.0.0.12) through the tunnel, 0 % loss" \
	grep -q "ping: 5 sent, 5 received" "$run/guest-b.log"
for g in 10.0.0.1 10.0.0.2; do
	check "host H pings $g with 0 % loss" hping "$run/ping-$g.log" -c 5 -i 0.2 -W 2 "$g"
done
nsx "$nsh" ping -q -b -c 3 -i 0.2 -W 1 10.0.0.255 >/dev/null 2>&1

echo "--- EVPN routes on both sides, hvswitch's FDB and pushed MACs"
all_routes=(2,$gm0,192.168.77.1 2,$gm1,192.168.77.1 2,$mac_h,192.168.77.3
	3,192.168.77.1,192.168.77.1 3,192.168.77.3,192.168.77.3)
check "A's table: type-2 of both guests (.1) and the host (.3), type-3 of both" \
	wait_routes 30 a "${all_routes[@]}"
check "B's table: the same routes" wait_routes 30 b "${all_routes[@]}"
fdb_has() { # MAC PORT REMOTE|-: hvswitch's FDB has it (REMOTE -: none)
	hvctl_sw --json fdb show >"$run/fdb.json" && python3 - "$run/fdb.json" "$@" <<'PY'
import json, sys
f, mac, port, remote = sys.argv[1:]
for e in json.load(open(f)):
    if e["mac"].lower() == mac.lower():
        sys.exit(0 if e["port"] == port and e.get("remote", "-") == remote else 1)
sys.exit(port != "none")
PY
}
check "hvswitch has host H's MAC behind vx0, VTEP 192.168.77.3" wait_for 10 fdb_has "$mac_h" vx0 192.168.77.3
pushed() { # MAC...: exactly these are extern_learn entries of the push port in the mirror
	local got want
	got=$(nsx "$nsa" bridge fdb show dev hvp100 | awk '/extern_learn/ {print $1}' | sort | tr '\n' ' ')
	want=$(printf '%s\n' "$@" | sed '/^$/d' | sort | tr '\n' ' ')
	[ "$got" = "$want" ]
}
check "the guests' MACs are pushed into the mirror bridge (hvp100, extern_learn)" pushed "$gm0" "$gm1"

echo "--- BUM: each broadcast reaches the other VTEP exactly once"
quiet() { # the captures stop growing (nothing left in flight)
	local a b
	a=$(stat -c %s "$run"/vtep-*.pcap | tr '\n' ' ')
	sleep 0.5
	b=$(stat -c %s "$run"/vtep-*.pcap | tr '\n' ' ')
	[ "$a" = "$b" ]
}
wait_for 10 quiet || fail "traffic did not stop"
stop_pids
count() { tshark -r "$1" -Y "$2" 2>/dev/null | wc -l; }
bc_guests=$(($(count "$run/vm0-rx.pcapng" "eth.dst == ff:ff:ff:ff:ff:ff") +
	$(count "$run/vm1-rx.pcapng" "eth.dst == ff:ff:ff:ff:ff:ff")))
got=$(count "$run/vtep-b.pcap" "ip.src#1 == 192.168.77.1 && vxlan.vni == 100 && eth.dst#2 == ff:ff:ff:ff:ff:ff")
check "the guests sent broadcasts ($bc_guests)" test "$bc_guests" -gt 0
check "VTEP B got each of the guests' $bc_guests broadcasts exactly once (got $got)" \
	test "$got" = "$bc_guests"
bc_host=$(count "$run/host.pcap" "eth.dst == ff:ff:ff:ff:ff:ff")
got=$(count "$run/vtep-a.pcap" "ip.src#1 == 192.168.77.3 && ip.dst#1 == 192.168.77.1 && eth.dst#2 == ff:ff:ff:ff:ff:ff")
check "the host sent broadcasts ($bc_host)" test "$bc_host" -gt 0
check "hvswitch's VTEP got each of the host's $bc_host broadcasts exactly once (got $got)" \
	test "$got" = "$bc_host"
up_mac=$(nsx "$nsa" cat /sys/class/net/hvu/address)
got=$(count "$run/vtep-b.pcap" "ip.src#1 == 192.168.77.1 && eth.src#1 != $up_mac")
check "every VXLAN frame from .1 came from hvswitch's uplink (the mirror sent none; got $got)" \
	test "$got" = 0

echo "--- a pushed entry deleted in the kernel comes back while the MAC is local"
nsx "$nsa" bridge fdb del "$gm1" dev hvp100 master || fail "bridge fdb del"
check "hvswitch pushed guest b's MAC again" wait_for 10 pushed "$gm0" "$gm1"
check "B's table has guest b's route" wait_routes 30 b 2,$gm1,192.168.77.1

echo "--- MAC move: guest a stops, host H takes its MAC"
stop_guest 0
nsx "$nsh" ip link set eth0 address "$gm0"
wait_for 30 hping /dev/null -c 1 -W 1 10.0.0.2 || fail "host H, now $gm0, did not reach guest b"
moved=(2,$gm0,192.168.77.3 !2,$gm0,192.168.77.1)
check "A's table: $gm0 behind .3 now, A's own route withdrawn" wait_routes 30 a "${moved[@]}"
check "host H, now $gm0, pings guest b with 0 % loss" \
	hping "$run/ping-move.log" -c 3 -i 0.2 -W 2 10.0.0.2
check "B's table: $gm0 behind .3, A's route gone" wait_routes 30 b "${moved[@]}"
check "hvswitch has $gm0 behind vx0, VTEP .3" wait_for 10 fdb_has "$gm0" vx0 192.168.77.3
check "the push port keeps only guest b's MAC" wait_for 10 pushed "$gm1"
echo "--- MAC move back: host H takes its own MAC again, guest a returns with $gm0"
nsx "$nsh" ip link set eth0 address "$mac_h"
nsx "$nsh" ip neigh flush dev eth0
fdb_moved() { hvctl_sw --json stats | python3 -c 'import json, sys; print(json.load(sys.stdin)["fdb"]["moved"])'; }
moved_before=$(fdb_moved)
guest a vm0 "$gm0" "ip=10.0.0.1 mode=respond seconds=280"
wait_for 20 port_up vm0 || fail "guest a did not come back"
# guest a answers H's ARP: hvswitch learns $gm0 on vm0 (a move from vx0), pushes it
wait_for 30 hping /dev/null -c 1 -W 1 10.0.0.1 || fail "host H did not reach guest a again"
back=(2,$gm0,192.168.77.1 !2,$gm0,192.168.77.3)
check "hvswitch has $gm0 on vm0 again" wait_for 10 fdb_has "$gm0" vm0 -
# moved by guest a's first frame, not deleted when B withdrew it (B's bridge learns too)
moved_after=$(fdb_moved)
check "hvswitch moved $gm0 from vx0 to vm0 itself (fdb moved $moved_before -> $moved_after)" \
	test "$moved_after" -gt "$moved_before"
check "A's table: $gm0 behind .1 again, B's route withdrawn" wait_routes 30 a "${back[@]}"
check "B's table: $gm0 behind .1 again" wait_routes 30 b "${back[@]}"
check "the push port has both guests' MACs again" wait_for 10 pushed "$gm0" "$gm1"
check "host H pings guest a with 0 % loss after the moves" \
	hping "$run/ping-back.log" -c 3 -i 0.2 -W 2 10.0.0.1
stop_guest 0
stop_guest 1

echo "--- FRR#1 restarted: converges with no step of ours"
stop_frr a
start_frr a
check "the session is established again" wait_for 60 established a
guest a vm0 "$gm0" "ip=10.0.0.1 mode=respond seconds=280"
guest b vm1 "$gm1" "ip=10.0.0.2 mode=respond seconds=280"
wait_for 20 port_up vm0 && wait_for 20 port_up vm1 || fail "the guests did not come back"
check "hvswitch has host H's MAC behind VTEP .3 again" wait_for 30 fdb_has "$mac_h" vx0 192.168.77.3
for g in 10.0.0.1 10.0.0.2; do
	nsx "$nsh" ip neigh flush dev eth0
	check "host H pings $g with 0 % loss after FRR's restart" \
		hping "$run/ping-frr-$g.log" -c 5 -i 0.2 -W 2 "$g"
done
check "A's table after FRR's restart" wait_routes 30 a "${all_routes[@]}"
check "B's table after FRR's restart" wait_routes 30 b "${all_routes[@]}"
check "vx0 floods to VTEP B only after FRR's restart" wait_for 30 flood_is 192.168.77.3

echo "--- hvswitch restarted (fdb age 8 s): MACs stay advertised, stale ones go after an age"
stop_pid "$sw_pid"
sw_pid=
stop_guest 0
stop_guest 1
check "hvswitch's MACs stay in the mirror while it is down" pushed "$gm0" "$gm1"
check "B keeps both guests' routes while hvswitch is down" routes_say b 2,$gm0,192.168.77.1 2,$gm1,192.168.77.1
start_switch --fdb-age 8
adopted() {
	vx0_json && python3 -c '
import json, sys
sys.exit(json.load(open(sys.argv[1]))["vxlan"]["push"]["adopted"] != 2)' "$run/vx0.json"
}
check "vx0 took the 2 MACs its earlier run pushed" wait_for 10 adopted
check "hvswitch read host H's MAC from the mirror again" wait_for 10 fdb_has "$mac_h" vx0 192.168.77.3
guest a vm0 "$gm0" "ip=10.0.0.1 mode=respond seconds=280"
wait_for 20 port_up vm0 || fail "guest a did not come back"
nsx "$nsh" ip neigh flush dev eth0
check "host H reaches guest a after hvswitch's restart" \
	wait_for 30 hping /dev/null -c 1 -W 1 10.0.0.1
# guest a stays learned while H pings it; guest b is gone
ip netns exec "$nsh" ping -q -c 100 -i 0.2 -W 2 10.0.0.1 >"$run/ping-restart.log" 2>&1 &
ping_pid=$!
pids+=($ping_pid)
check "guest b's MAC (not learned again) withdrawn after the age" \
	wait_routes 30 b "!2,$gm1,192.168.77.1"
check "guest a's MAC (learned again) still advertised then" routes_say b 2,$gm0,192.168.77.1
check "the push port holds guest a's MAC only" pushed "$gm0"
wait "$ping_pid"
pids=()
check "host H pinged guest a with 0 % loss meanwhile" grep -q " 0% packet loss" "$run/ping-restart.log"

echo "--- ageing: guest a silent, its MAC ages out and is withdrawn"
stop_guest 0
check "guest a's MAC withdrawn after the age" wait_routes 30 b "!2,$gm0,192.168.77.1"
check "the push port is empty" wait_for 10 pushed
stop_pid "$sw_pid"
sw_pid=
! grep -qE 'Sanitizer|runtime error' "$run/switch.log" || fail "sanitizer report in the switch's log"
echo "$passed checks passed"
