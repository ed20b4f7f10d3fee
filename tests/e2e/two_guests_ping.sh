#!/usr/bin/env bash
# End-to-end: two real Linux guests (QEMU TCG, Debian cloud kernel, busybox
# initramfs from make_initramfs.sh) ping each other through hvswitch.
#
#   two_guests_ping.sh [--build-dir DIR] [--hvswitch PATH] [--hvctl PATH]
#                      [--cache-dir DIR]
#
#   --build-dir DIR    meson build dir holding app/hvswitch/hvswitch and
#                      app/hvctl/hvctl (default: the repo's build/)
#   --hvswitch PATH    the daemon (default BUILD_DIR/app/hvswitch/hvswitch)
#   --hvctl PATH       the CLI (default BUILD_DIR/app/hvctl/hvctl)
#   --cache-dir DIR    where the initramfs is cached (default: BUILD_DIR/e2e)
#
# Environment:
#   HV_E2E_TIMEOUT     global deadline in seconds for both guests (default 300)
#   HV_E2E_COUNT       pings per guest after the peer answered (default 20)
#   HV_E2E_MIN         replies needed per guest (default: all of them)
#   HV_E2E_QEMU_CPUS   taskset CPU list for both QEMUs; empty = let them float
#                      (default 0: hvswitch's PMD busy-polls CPU 1)
#   HV_E2E_KEEP=1      keep the run directory (logs) after the test
#   HV_E2E_STAGGER=S   start guest 2 S seconds after guest 1 (default 0; to
#                      exercise the guests' wait-for-peer path)
#   HV_E2E_TCP_KB=K    after the pings guest 1 sends K KiB of random data to
#                      guest 2 over TCP (busybox nc); both hashes must match and
#                      neither kernel may count a TCP checksum error (default 0)
#   HV_E2E_DEV1_PROPS, HV_E2E_DEV2_PROPS
#                      extra virtio-net-pci properties of guest 1 / guest 2,
#                      e.g. "guest_tso4=off,guest_tso6=off" (default none)
#   HV_E2E_EXPECT      "PORT:COUNTER" pairs (space separated) of port.show's
#                      stats.offload that must be > 0 at the end, e.g.
#                      "vm2:segments"
#   HV_E2E_BORROWED    ports whose guest lent the switch the tails of long
#                      frames (port.show qps[0].rx.borrowed > 0 at the end:
#                      its TSO sends crossed the switch with one copy)
#   HV_E2E_RXMOD=V     interrupt moderation of both ports (hvctl --rxmod V)
#   HV_E2E_INTERVAL=S  seconds between pings (default 0.2)
#   HV_E2E_TCP_MB=N    each guest sends N MiB over TCP to the other after its
#                      pings and reports the time (default 0: none)
#   HV_E2E_IPERF_KB=K  with HV_E2E_TCP_KB: after the nc transfer, iperf3 -n K KiB
#                      from guest 1 (client) to guest 2 (iperf3 -s -1), both -J;
#                      the client must report K KiB sent (or one 128 KiB block
#                      more: it checks -n after each write), the server > 0
#                      and no more than the client sent (iperf3 does not count
#                      what is in flight at its TEST_END), neither kernel a
#                      checksum error.
#                      The host reads the switch's counters before the server
#                      starts (guest 2 waits for a line on its ttyS1). Without
#                      iperf3 installed this FAILs (default 0: no iperf3)
#   HV_E2E_IPERF_EXPECT "PORT:COUNTER" pairs of stats.offload that must grow
#                      during the iperf3 phase, e.g. "vm2:segments"
#   HV_E2E_IPERF_FLAT  "PORT:COUNTER" pairs that must not grow during it
#   HV_E2E_ETHTOOL1, HV_E2E_ETHTOOL2
#                      "FEATURE=on|off" pairs guest 1 / guest 2's `ethtool -k
#                      eth0` must show (printed with HV_E2E_TCP_KB), e.g.
#                      "rx-gro-hw=off rx-checksumming=on"
#   HV_E2E_UNPRIV=1    as libvirt runs QEMU: both QEMUs run as a user made for the
#                      test (removed after), in the group the switch gives its
#                      sockets (--vhost-owner :GROUP --vhost-perm 0660, run dir
#                      made by hvswitch); vm1 is a server-mode port (QEMU
#                      connects), vm2 a client-mode port (QEMU listens, the
#                      switch connects)
#   HV_E2E_VIRTIO1, HV_E2E_VIRTIO2
#                      "FEATURE=0|1" virtio-net feature bits guest 1 / guest 2
#                      must have negotiated (csum guest_csum guest_tso4
#                      guest_tso6 guest_ecn guest_ufo host_tso4 host_tso6
#                      mrg_rxbuf ring_packed), e.g. "guest_csum=0"
#
# Exit: 0 all checks passed, 1 a check failed, 77 skipped (QEMU, a cloud
# kernel or busybox-static not installed).
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/e2e_lib.sh"
e2e_setup "$@"
timeout_s=${HV_E2E_TIMEOUT:-300}
count=${HV_E2E_COUNT:-20}
min=${HV_E2E_MIN:-$count}
qemu_cpus=${HV_E2E_QEMU_CPUS-0}
iperf_kb=${HV_E2E_IPERF_KB:-0}
[ "${HV_E2E_TCP_KB:-0}" -gt 0 ] || iperf_kb=0
# asked for, iperf3 and ethtool must be there: a failure, not a skip
host_missing=()
if [ "$iperf_kb" -gt 0 ]; then
	for t in /usr/bin/iperf3 /usr/sbin/ethtool; do
		[ -x "$t" ] || host_missing+=("$t")
	done
	[ ${#host_missing[@]} -eq 0 ] ||
		echo "FAIL: iperf3 phase asked for (HV_E2E_IPERF_KB=$iperf_kb) but ${host_missing[*]} not installed (apt-get install iperf3 ethtool)"
fi

initrd=$("$here/make_initramfs.sh" "$cache" "$kver" | tail -n1)
rc=${PIPESTATUS[0]}
[ "$rc" -eq 77 ] && skip "initramfs prerequisites missing"
[ "$rc" -eq 0 ] && [ -f "$initrd" ] || { echo "FAIL: make_initramfs.sh failed ($rc)"; exit 1; }

run=$(mktemp -d /tmp/hvswitch-e2e.XXXXXX)
switch_pid=
qemu_pids=()
unpriv=${HV_E2E_UNPRIV:-0}
swdir=$run         # the switch's run dir
qemu_as=()         # QEMU's user (HV_E2E_UNPRIV)
switch_opts=()
quser=
if [ "$unpriv" = 1 ]; then
	[ "$(id -u)" = 0 ] || skip "HV_E2E_UNPRIV needs root (a user and a group for QEMU)"
	command -v setpriv >/dev/null && command -v useradd >/dev/null || skip "setpriv or useradd missing"
	quser=hvqemu$$
	groupadd "$quser" && useradd --no-create-home --shell /usr/sbin/nologin -g "$quser" "$quser" ||
		{ echo "FAIL: could not make user $quser"; rm -rf "$run"; exit 1; }
	# QEMU's files (logs, its sockets) in $run, its own; the switch's dir made by hvswitch
	chown "$quser:$quser" "$run"
	cp "$kernel" "$initrd" "$run/" && chown "$quser" "$run/$(basename "$kernel")" "$run/$(basename "$initrd")"
	kernel=$run/$(basename "$kernel")
	initrd=$run/$(basename "$initrd")
	swdir=$run/sw
	switch_opts=(--vhost-owner ":$quser" --vhost-perm 0660)
	qemu_as=(setpriv --reuid "$quser" --regid "$quser" --clear-groups)
fi
cleanup() {
	local p
	for p in "${qemu_pids[@]}"; do stop_pid "$p" TERM; done
	stop_pid "$switch_pid" INT
	rm -rf "/var/run/dpdk/hve2e-$$"
	if [ -n "$quser" ]; then userdel "$quser" 2>/dev/null; groupdel "$quser" 2>/dev/null; fi
	if [ "${HV_E2E_KEEP:-0}" = 1 ]; then echo "run directory kept: $run"; else rm -rf "$run"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

hvctl() { "$hvctl_bin" --socket "$swdir/hvswitch.sock" "$@"; }
t0=$(date +%s.%N)
elapsed() { awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }

echo "--- hvswitch: main lcore 0, PMD on lcore 1 (run dir $run)"
"$hvswitch" -l 0,1 --main-lcore 0 --no-pci --no-huge -m 256 --file-prefix "hve2e-$$" \
	-- --run-dir "$swdir" --config "$run/hv.json" "${switch_opts[@]}" >"$run/switch.log" 2>&1 &
switch_pid=$!
for _ in $(seq 200); do
	[ -S "$swdir/hvswitch.sock" ] && break
	kill -0 "$switch_pid" 2>/dev/null || break
	sleep 0.1
done
if ! [ -S "$swdir/hvswitch.sock" ]; then
	echo "FAIL: hvswitch did not start"; cat "$run/switch.log"; exit 1
fi
rxmod_opt=()
[ -n "${HV_E2E_RXMOD:-}" ] && rxmod_opt=(--rxmod "$HV_E2E_RXMOD")
vm2_opt=()
[ "$unpriv" = 1 ] && vm2_opt=(--mode client --socket "$run/vm2.sock")
hvctl port add vm1 --type vhost-user "${rxmod_opt[@]}" >/dev/null &&
	hvctl port add vm2 --type vhost-user "${rxmod_opt[@]}" "${vm2_opt[@]}" >/dev/null ||
	{ echo "FAIL: hvctl port add"; cat "$run/switch.log"; exit 1; }

pin=()
[ -n "$qemu_cpus" ] && pin=(taskset -c "$qemu_cpus")
echo "--- two guests: $kernel, $(basename "$initrd"), QEMU CPUs: ${qemu_cpus:-floating}"
for n in 1 2; do
	peer=$((3 - n))
	[ "$n" = 2 ] && [ "${HV_E2E_STAGGER:-0}" != 0 ] && sleep "$HV_E2E_STAGGER"
	# vm1 connects to the switch's socket; in HV_E2E_UNPRIV vm2 listens on its own
	chardev="socket,id=c0,path=$swdir/vm$n.sock"
	[ "$unpriv" = 1 ] && [ "$n" = 2 ] && chardev="socket,id=c0,path=$run/vm2.sock,server=on,wait=off"
	"${pin[@]}" "${qemu_as[@]}" "$qemu" -accel tcg -cpu max -smp 1 -m 512 -nodefaults -no-reboot \
		-display none -monitor none -serial "file:$run/vm$n.log" \
		-kernel "$kernel" -initrd "$initrd" \
		-append "console=ttyS0 panic=-1 hv.ip=10.0.0.$n/24 hv.peer=10.0.0.$peer hv.count=$count hv.min=$min hv.wait=$((timeout_s / 2)) hv.linger=$timeout_s hv.tcp_kb=${HV_E2E_TCP_KB:-0} hv.tcp_role=$([ "$n" = 1 ] && echo send || echo recv) hv.interval=${HV_E2E_INTERVAL:-0.2} hv.tcp=${HV_E2E_TCP_MB:-0} hv.iperf_kb=$iperf_kb" \
		-chardev "socket,id=ctl,path=$run/ctl$n.sock,server=on,wait=off" -device isa-serial,chardev=ctl \
		-object memory-backend-memfd,id=mem,size=512M,share=on -numa node,memdev=mem \
		-chardev "$chardev" -netdev vhost-user,id=n0,chardev=c0 \
		-device "virtio-net-pci,netdev=n0,mac=52:54:00:00:00:0$n,romfile=,vectors=0$(props=HV_E2E_DEV${n}_PROPS; [ -n "${!props:-}" ] && echo ",${!props}")" \
		</dev/null >"$run/qemu$n.out" 2>&1 &
	qemu_pids+=($!)
done

# Wait for both guests to report (HVTEST END comes after their result and
# statistics); no fixed sleeps: poll the serial logs against one deadline.
deadline=$(( $(date +%s) + timeout_s ))
declare -A done_at=()
go_sent=0
# the switch's port.show of vm1 and vm2 -> $run/$1-vmN.json
snapshot_ports() {
	local p
	for p in vm1 vm2; do hvctl --json port show "$p" >"$run/$1-$p.json" 2>&1; done
}
# one line to guest N's second serial port (its ttyS1)
send_go() {
	python3 - "$run/ctl$1.sock" <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
s.sendall(b"go\n")
s.close()
PY
}
while :; do
	all=1
	# guest 2 waits for the go of the iperf3 phase: the counters first
	if [ "$go_sent" = 0 ] && grep -q '^HVTEST IPERF wait-go' "$run/vm2.log" 2>/dev/null; then
		snapshot_ports before-iperf
		if send_go 2; then
			echo "iperf3 phase: counters read, go sent to guest 2 after $(elapsed) s"
			go_sent=1
		else
			echo "iperf3 phase: could not write to guest 2's ttyS1"
			go_sent=failed
		fi
	fi
	for n in 1 2; do
		[ -n "${done_at[$n]:-}" ] && continue
		if grep -q '^HVTEST END' "$run/vm$n.log" 2>/dev/null; then
			done_at[$n]=$(elapsed)
			echo "guest $n finished after ${done_at[$n]} s"
		elif ! kill -0 "${qemu_pids[$((n - 1))]}" 2>/dev/null; then
			done_at[$n]=exited
			echo "guest $n: QEMU exited before reporting:"; cat "$run/qemu$n.out"
		else
			all=0
		fi
	done
	[ $all = 1 ] && break
	if [ "$(date +%s)" -ge "$deadline" ]; then
		echo "timeout: guests did not report within $timeout_s s"
		break
	fi
	sleep 0.5
done

# Collect the switch's view while both guests are still up.
qemu_users=
if [ "$unpriv" = 1 ]; then
	for p in "${qemu_pids[@]}"; do qemu_users+="$(ps -o user= -p "$p" 2>/dev/null | tr -d ' ') "; done
	vm1_sock=$(stat -c '%A %U:%G' "$swdir/vm1.sock" 2>&1)
	swdir_mode=$(stat -c '%A %U:%G' "$swdir" 2>&1)
fi
hvctl --json fdb show >"$run/fdb.json" 2>&1
hvctl --json stats >"$run/stats.json" 2>&1
for p in vm1 vm2; do hvctl --json port show "$p" >"$run/show-$p.json" 2>&1; done
hvctl fdb show >"$run/fdb.txt" 2>&1
hvctl stats >"$run/stats.txt" 2>&1
for p in "${qemu_pids[@]}"; do stop_pid "$p" TERM; done
qemu_pids=()

passed=0
failed=0
check() { # name, then the command
	local name=$1
	shift
	if "$@"; then
		echo "PASS: $name"; passed=$((passed + 1))
	else
		echo "FAIL: $name"; failed=$((failed + 1))
	fi
}

for n in 1 2; do
	echo "=== guest $n (10.0.0.$n, 52:54:00:00:00:0$n, port vm$n)"
	grep -E '^HVTEST|round-trip|packets transmitted' "$run/vm$n.log" 2>/dev/null
	sed -n '/^--- \/proc\/interrupts/,/^HVTEST END/p' "$run/vm$n.log" 2>/dev/null | grep -v '^HVTEST END'
	if ! grep -q '^HVTEST PING ok' "$run/vm$n.log" 2>/dev/null; then
		echo "--- last lines of guest $n's console:"
		tail -n 40 "$run/vm$n.log" 2>/dev/null
	fi
done
echo "=== hvswitch"
cat "$run/fdb.txt" "$run/stats.txt"

for n in 1 2; do
	check "guest $n pinged 10.0.0.$((3 - n)) ($min/$count replies needed)" \
		grep -q '^HVTEST PING ok' "$run/vm$n.log"
done
# FDB: each guest's MAC learned on its own port.
fdb_ok() { # mac port
	python3 - "$run/fdb.json" "$1" "$2" <<'PY'
import json, sys
try:
    data = json.load(open(sys.argv[1]))
except Exception as e:
    print("  fdb JSON unreadable:", e); sys.exit(1)
if isinstance(data, dict):
    data = data.get("entries", data.get("fdb", []))
for e in data:
    mac = str(e.get("mac", "")).lower()
    port = e.get("port", e.get("port_name"))
    if mac == sys.argv[2] and port == sys.argv[3]:
        sys.exit(0)
print("  no fdb entry", sys.argv[2], "->", sys.argv[3], "in", json.dumps(data))
sys.exit(1)
PY
}
stats_ok() { # port: received and sent at least (count) packets
	python3 - "$run/stats.json" "$1" "$count" <<'PY'
import json, sys
try:
    data = json.load(open(sys.argv[1]))
except Exception as e:
    print("  stats JSON unreadable:", e); sys.exit(1)
want = int(sys.argv[3])
for p in data.get("ports", []):
    if p.get("name") == sys.argv[2]:
        if p.get("rx_packets", 0) >= want and p.get("tx_packets", 0) >= want:
            sys.exit(0)
        print("  port", sys.argv[2], "counted too little:", json.dumps(p)); sys.exit(1)
print("  port", sys.argv[2], "not in stats"); sys.exit(1)
PY
}
for n in 1 2; do
	check "fdb: 52:54:00:00:00:0$n learned on vm$n" fdb_ok "52:54:00:00:00:0$n" "vm$n"
done
for n in 1 2; do
	check "stats: vm$n received and sent >= $count packets" stats_ok "vm$n"
done
if [ "${HV_E2E_TCP_KB:-0}" -gt 0 ]; then
	tcp_field() { # guest field
		sed -n "s/^HVTEST TCP $2 .*$3=\([^ ]*\).*/\1/p" "$run/vm$1.log" | head -n1
	}
	sent_sha=$(tcp_field 1 send sha256)
	recv_sha=$(tcp_field 2 recv sha256)
	echo "TCP: sent $(tcp_field 1 send bytes) bytes sha256 $sent_sha"
	echo "TCP: received $(tcp_field 2 recv bytes) bytes sha256 $recv_sha"
	tcp_same() { [ -n "$sent_sha" ] && [ "$sent_sha" = "$recv_sha" ] &&
		[ "$(tcp_field 1 send bytes)" = $((HV_E2E_TCP_KB * 1024)) ]; }
	check "TCP: ${HV_E2E_TCP_KB} KiB arrived byte-exact (sha256)" tcp_same
	for n in 1 2; do
		csum_ok() { [ "$(sed -n 's/^HVTEST TCP csum_errors=\([0-9]*\).*/\1/p' "$run/vm$1.log")" = 0 ]; }
		check "TCP: guest $n counted no checksum errors" csum_ok "$n"
	done
	# offloads as each guest kernel reports them (ethtool -k eth0)
	ethtool_feature() { # guest feature -> on|off (empty: not printed)
		tr -d '\r' <"$run/vm$1.log" | sed -n "s/^HVTEST ETHTOOL $2: \([a-z]*\).*/\1/p" | head -n1
	}
	for n in 1 2; do
		echo "ethtool -k eth0, guest $n: $(for f in tcp-segmentation-offload tx-checksumming \
			rx-checksumming generic-receive-offload rx-gro-hw large-receive-offload \
			scatter-gather; do printf '%s=%s ' "$f" "$(ethtool_feature "$n" "$f")"; done)"
		props=HV_E2E_ETHTOOL$n
		for e in ${!props:-}; do
			feature_is() { [ "$(ethtool_feature "$1" "$2")" = "$3" ]; }
			check "ethtool: guest $n ${e%%=*} is ${e#*=}" feature_is "$n" "${e%%=*}" "${e#*=}"
		done
	done
	# the virtio-net features the guest driver negotiated (its OFFLOADS line:
	# /sys/bus/virtio/devices/*/features, one character per bit from bit 0)
	declare -A vbit=([csum]=0 [guest_csum]=1 [guest_tso4]=7 [guest_tso6]=8 [guest_ecn]=9
		[guest_ufo]=10 [host_tso4]=11 [host_tso6]=12 [mrg_rxbuf]=15 [ring_packed]=34)
	virtio_bit() { # guest name -> 0|1
		tr -d '\r' <"$run/vm$1.log" | sed -n 's/^HVTEST OFFLOADS \([01]*\).*/\1/p' |
			head -n1 | cut -c$((vbit[$2] + 1))
	}
	for n in 1 2; do
		props=HV_E2E_VIRTIO$n
		for e in ${!props:-}; do
			bit_is() { [ -n "${vbit[$2]:-}" ] && [ "$(virtio_bit "$1" "$2")" = "$3" ]; }
			check "virtio: guest $n negotiated ${e%%=*}=${e#*=}" bit_is "$n" "${e%%=*}" "${e#*=}"
		done
	done
fi
if [ "$iperf_kb" -gt 0 ]; then
	check "iperf3: installed on the host (${host_missing[*]:-iperf3 ethtool} present)" \
		test ${#host_missing[@]} -eq 0
	# the JSON reports of both ends; the byte counts must be the -n asked for
	# (iperf3 stops counting at the client's TEST_END: what is still in flight
	# then is not counted by the server; the nc phase checks every byte)
	iperf_bytes() { # guest role key -> bytes of end.KEY in that guest's JSON
		python3 - "$run/vm$1.log" "$2" "$3" print <<'PY'
import json, re, sys
text = open(sys.argv[1], errors="replace").read().replace("\r", "")
j = re.search(r"^HVTEST IPERF json-begin\n(.*?)^HVTEST IPERF json-end", text, re.M | re.S)
try:
    print(json.loads(j.group(1))["end"][sys.argv[3]]["bytes"])
except Exception:
    print(-1)
PY
	}
	iperf_ok() { # guest role key [want]: rc 0, no error, end.KEY.bytes (want, + a block)
		python3 - "$run/vm$1.log" "$2" "$3" "${4:--1}" <<'PY'
import json, re, sys
log, role, key, want = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
text = open(log, errors="replace").read().replace("\r", "")
m = re.search(r"^HVTEST IPERF %s rc=(\d+)" % role, text, re.M)
if "HVTEST IPERF fail" in text:
    print("  guest:", re.search(r"^HVTEST IPERF fail.*$", text, re.M).group(0)); sys.exit(1)
if not m:
    print("  no 'HVTEST IPERF %s' line" % role); sys.exit(1)
j = re.search(r"^HVTEST IPERF json-begin\n(.*?)^HVTEST IPERF json-end", text, re.M | re.S)
try:
    data = json.loads(j.group(1))
except Exception as e:
    print("  iperf3 JSON unreadable:", e); sys.exit(1)
if data.get("error"):
    print("  iperf3 error:", data["error"]); sys.exit(1)
end = data.get("end", {})
got = end.get(key, {}).get("bytes", -1)
secs = end.get(key, {}).get("seconds", 0)
bps = end.get(key, {}).get("bits_per_second", 0)
print("  iperf3 %s: end.%s.bytes=%d seconds=%.2f Mbit/s=%.1f (rc %s)" % (role, key, got, secs, bps / 1e6, m.group(1)))
# iperf3 checks -n after each write: the last 128 KiB block (TCP's default -l)
# may go out on top, so the client reports -n or -n plus one block
block = 128 * 1024
sys.exit(0 if m.group(1) == "0" and got > 0 and (want < 0 or want <= got <= want + block) else 1)
PY
	}
	check "iperf3: client (guest 1, -n ${iperf_kb}K) completed and sent $iperf_kb KiB (+ at most one 128 KiB block)" \
		iperf_ok 1 send sum_sent "$((iperf_kb * 1024))"
	check "iperf3: server (guest 2, iperf3 -s -1) completed and received bytes > 0" \
		iperf_ok 2 recv sum_received
	sent_b=$(iperf_bytes 1 send sum_sent)
	recv_b=$(iperf_bytes 2 recv sum_received)
	recv_c=$(iperf_bytes 1 send sum_received)
	echo "iperf3: sent $sent_b bytes, server counted $recv_b (client's copy of it: $recv_c)," \
		"$((sent_b - recv_b)) bytes still in flight at TEST_END"
	iperf_counts() {
		[ "$recv_b" -gt 0 ] && [ "$recv_b" -le "$sent_b" ] && [ "$recv_b" = "$recv_c" ] &&
			[ $((recv_b * 2)) -ge "$sent_b" ]
	}
	check "iperf3: server's count ($recv_b) > half of and <= the sent $sent_b, the same in both reports" \
		iperf_counts
	for n in 1 2; do
		iperf_csum_ok() { [ "$(tr -d '\r' <"$run/vm$1.log" | sed -n 's/^HVTEST IPERF csum_errors=\([0-9]*\)$/\1/p')" = 0 ]; }
		check "iperf3: guest $n counted no TCP checksum errors (InCsumErrors)" iperf_csum_ok "$n"
	done
	check "iperf3: switch counters read before the server started" test "$go_sent" = 1
	counter_delta() { # port counter -> final minus before-iperf (stats.offload)
		python3 - "$run/before-iperf-$1.json" "$run/show-$1.json" "$2" <<'PY'
import json, sys
try:
    a, b = (json.load(open(f)).get("stats", {}).get("offload", {}) for f in sys.argv[1:3])
except Exception as e:
    print("unreadable:", e); sys.exit(1)
print(b.get(sys.argv[3], 0) - a.get(sys.argv[3], 0))
PY
	}
	for e in ${HV_E2E_IPERF_EXPECT:-}; do
		d=$(counter_delta "${e%%:*}" "${e#*:}")
		echo "  iperf3 phase: ${e%%:*} stats.offload.${e#*:} +$d"
		check "iperf3: ${e%%:*} stats.offload.${e#*:} grew during the iperf3 phase (+$d)" \
			test "${d:-x}" -gt 0 2>/dev/null
	done
	for e in ${HV_E2E_IPERF_FLAT:-}; do
		d=$(counter_delta "${e%%:*}" "${e#*:}")
		check "iperf3: ${e%%:*} stats.offload.${e#*:} did not grow during the iperf3 phase (+$d)" \
			test "${d:-x}" = 0
	done
fi
offload_counter() { # port counter: stats.offload.<counter> > 0
	python3 - "$run/show-$1.json" "$2" <<'PY'
import json, sys
try:
    p = json.load(open(sys.argv[1]))
except Exception as e:
    print("  port.show JSON unreadable:", e); sys.exit(1)
off = p.get("stats", {}).get("offload", {})
print("  offload counters of", p.get("name"), json.dumps(off))
sys.exit(0 if off.get(sys.argv[2], 0) > 0 else 1)
PY
}
for e in ${HV_E2E_EXPECT:-}; do
	check "offload: ${e%%:*} stats.offload.${e#*:} > 0" offload_counter "${e%%:*}" "${e#*:}"
done
borrowed_count() { # port: qps[0].rx.borrowed > 0
	python3 - "$run/show-$1.json" <<'PY'
import json, sys
try:
    n = json.load(open(sys.argv[1]))["qps"][0]["rx"]["borrowed"]
except Exception as e:
    print("  port.show JSON unreadable:", e); sys.exit(1)
print("  frames with a borrowed tail:", n)
sys.exit(0 if n > 0 else 1)
PY
}
for p in ${HV_E2E_BORROWED:-}; do
	check "borrow: $p lent the switch the tails of its long frames" borrowed_count "$p"
done
if [ "$unpriv" = 1 ]; then
	echo "QEMU users: $qemu_users; switch run dir $swdir_mode; vm1.sock $vm1_sock"
	check "both QEMUs ran as $quser, not root" test "$qemu_users" = "$quser $quser "
	check "switch run dir made drwxr-x--- root:$quser" test "$swdir_mode" = "drwxr-x--- root:$quser"
	check "vm1 (server mode) socket srw-rw---- root:$quser" test "$vm1_sock" = "srw-rw---- root:$quser"
	vm2_client() {
		python3 - "$run/show-vm2.json" "$run/vm2.sock" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
print("  vm2: mode", p.get("mode"), "socket", p.get("socket"), "connected", p.get("connected"))
sys.exit(0 if p.get("mode") == "client" and p.get("socket") == sys.argv[2] else 1)
PY
	}
	check "vm2 is a client-mode port on QEMU's socket" vm2_client
fi
# The switch survived both guests and stops cleanly (sanitizer builds report
# at exit).
e2e_switch_stop
switch_clean() {
	[ "$switch_rc" = 0 ] && ! grep -qE 'Sanitizer|runtime error' "$run/switch.log"
}
check "hvswitch stopped cleanly on SIGINT (exit $switch_rc)" switch_clean
switch_clean || tail -n 40 "$run/switch.log"
[ "$switch_rc" = hung ] || switch_pid=
echo "wall time: $(elapsed) s"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
