#!/usr/bin/env bash
# Non-root users and hvswitch's sockets, as real users (made for the test):
#
#   test_access.sh HVSWITCH HVCTL
#
#  - hvswitch makes its run dir itself (--run-dir under a world-readable
#    parent): a member of --group lists the ports with hvctl, a user outside
#    is refused by the file system;
#  - --vhost-owner :GROUP --vhost-perm 0660: every server socket is
#    root:GROUP srw-rw----, a member of GROUP connects, an outsider gets EACCES;
#  - a port's own owner and perm (hvctl port add --owner USER --perm 0600)
#    win: only that user connects;
#  - bad owner/perm: one-line errors, nothing added; owner/perm on a
#    client-mode port: refused; the config file keeps a port's owner and perm.
set -uo pipefail

hvswitch=${1:?hvswitch}
hvctl_bin=${2:?hvctl}
skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "needs root (users, groups, setpriv)"
for t in python3 setpriv groupadd useradd; do
	command -v "$t" >/dev/null || skip "$t not installed"
done

# the system's python (one under root's home is not the users')
py=/usr/bin/python3
[ -x "$py" ] || skip "no /usr/bin/python3"
tmp=$(mktemp -d /tmp/hvswitch-access.XXXXXX)
chmod 0755 "$tmp"
grp=hva$$
member=hva$$
outsider=hvo$$
qemu=hvq$$
pid=
passed=0
failed=0
check() { # name, then the command
	local name=$1
	shift
	if "$@"; then echo "PASS: $name"; passed=$((passed + 1)); else echo "FAIL: $name"; failed=$((failed + 1)); fi
}
cleanup() {
	if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
		kill -TERM "$pid"
		for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$pid" 2>/dev/null
	fi
	for u in "$member" "$outsider" "$qemu"; do userdel "$u" 2>/dev/null; done
	groupdel "$grp" 2>/dev/null
	rm -rf "$tmp" "/var/run/dpdk/hvacc-$$"
}
trap cleanup EXIT

groupadd "$grp" || { echo "FAIL: groupadd"; exit 1; }
useradd --no-create-home --shell /usr/sbin/nologin -g "$grp" "$member" &&
	useradd --no-create-home --shell /usr/sbin/nologin -U "$outsider" &&
	useradd --no-create-home --shell /usr/sbin/nologin -U "$qemu" || { echo "FAIL: useradd"; exit 1; }
as() { # user command...: run as that user, with its groups
	local u=$1
	shift
	setpriv --reuid "$u" --regid "$(id -g "$u")" --init-groups "$@"
}
# connect to a unix socket: prints ok or the errno name
sock_connect() { # user path
	as "$1" "$py" -c '
import errno, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    s.connect(sys.argv[1]); print("ok")
except OSError as e:
    print(errno.errorcode.get(e.errno, e.errno))' "$2"
}

run=$tmp/run
"$hvswitch" -l 0,1 --main-lcore 0 --no-pci --no-huge -m 256 --file-prefix "hvacc-$$" -- \
	--run-dir "$run" --config "$tmp/hv.json" --group "$grp" \
	--vhost-owner ":$grp" --vhost-perm 0660 >"$tmp/switch.log" 2>&1 &
pid=$!
for _ in $(seq 300); do
	[ -S "$run/hvswitch.sock" ] && break
	kill -0 "$pid" 2>/dev/null || break
	sleep 0.1
done
[ -S "$run/hvswitch.sock" ] || { cat "$tmp/switch.log"; echo "FAIL: hvswitch did not start"; exit 1; }
hvctl() { "$hvctl_bin" --socket "$run/hvswitch.sock" "$@"; }

echo "run dir: $(stat -c '%A %U:%G' "$run")"
check "run dir made root:$grp drwxr-x---" test "$(stat -c '%A %U:%G' "$run")" = "drwxr-x--- root:$grp"
as "$member" "$hvctl_bin" --socket "$run/hvswitch.sock" port list >"$tmp/member.log" 2>&1
check "hvctl port list as $member (group $grp): exit 0 ($(head -n1 "$tmp/member.log"))" \
	grep -q '^NAME' "$tmp/member.log"
as "$outsider" "$hvctl_bin" --socket "$run/hvswitch.sock" port list >"$tmp/outsider.log" 2>&1
check "hvctl as $outsider (no group): $(cat "$tmp/outsider.log")" grep -q 'Permission denied' "$tmp/outsider.log"

hvctl port add vm0 >/dev/null &&
	hvctl port add vm1 --owner "$qemu" --perm 0600 >/dev/null || echo "FAIL: port add"
echo "sockets: $(stat -c '%n %A %U:%G' "$run/vm0.sock" "$run/vm1.sock" | sed "s|$run/||" | tr '\n' ' ')"
check "vm0 (daemon-wide --vhost-owner :$grp --vhost-perm 0660): srw-rw---- root:$grp" \
	test "$(stat -c '%A %U:%G' "$run/vm0.sock")" = "srw-rw---- root:$grp"
check "vm1 (--owner $qemu --perm 0600, replacing the daemon-wide owner): srw------- $qemu:root" \
	test "$(stat -c "%A %U:%G" "$run/vm1.sock")" = "srw------- $qemu:root"
check "$member connects to vm0" test "$(sock_connect "$member" "$run/vm0.sock")" = ok
check "$outsider cannot reach vm0 (EACCES)" test "$(sock_connect "$outsider" "$run/vm0.sock")" = EACCES
check "$member cannot connect to vm1 (EACCES)" test "$(sock_connect "$member" "$run/vm1.sock")" = EACCES
# vm1's owner is not in the run dir's group: it reaches its socket by the path
# only if the dir lets it through; here it is not, so the operator puts such a
# socket elsewhere (port add --socket): one outside the run dir
hvctl port add vm2 --socket "$tmp/vm2.sock" --owner "$qemu" --perm 0600 >/dev/null ||
	echo "FAIL: port add vm2"
check "$qemu connects to vm2 ($tmp/vm2.sock, owner $qemu)" test "$(sock_connect "$qemu" "$tmp/vm2.sock")" = ok
check "$member cannot connect to vm2 (EACCES)" test "$(sock_connect "$member" "$tmp/vm2.sock")" = EACCES

bad() { # expected error, then the port add arguments
	local want=$1 out rc
	shift
	out=$(hvctl port add "$@" 2>&1)
	rc=$?
	echo "  hvctl port add $*: $out"
	[ $rc != 0 ] && [ "$out" = "$want" ] && ! hvctl port list | grep -q "^$1 "
}
check "unknown user refused" bad "hvctl: port.add: owner: no user nosuch$$" x1 --owner "nosuch$$"
check "unknown group refused" bad "hvctl: port.add: owner: no group nosuch$$" x2 --owner ":nosuch$$"
check "bad perm refused" bad "hvctl: port.add: perm must be octal permissions 1..0777, e.g. 0660" x3 --perm 0888
check "owner on a client-mode port refused" \
	bad "hvctl: port.add: 'owner' and 'perm' are for server mode: a client-mode port connects to its frontend's socket" \
	x4 --mode client --socket "$tmp/x4.sock" --owner "$qemu"
saved() {
	python3 - "$tmp/hv.json" "$qemu" <<'PY'
import json, sys
ports = {p["name"]: p for p in json.load(open(sys.argv[1]))["ports"]}
v = ports["vm1"]
print("  config file, vm1:", json.dumps(v))
sys.exit(0 if v.get("owner") == sys.argv[2] and v.get("perm") == "0600" and "owner" not in ports["vm0"] else 1)
PY
}
check "config file keeps vm1's owner and perm (not vm0's daemon-wide ones)" saved

# stops cleanly, sockets removed (sanitizer builds report at exit)
kill -TERM "$pid"
for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
wait "$pid"
rc=$?
pid=
stopped() { [ $rc = 0 ] && ! grep -qE 'Sanitizer|runtime error' "$tmp/switch.log" && [ ! -e "$run/vm0.sock" ]; }
check "hvswitch stopped cleanly on SIGTERM (exit $rc), sockets removed" stopped
stopped || tail -n 20 "$tmp/switch.log"

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
