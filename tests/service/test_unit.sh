#!/usr/bin/env bash
# hvswitch.service as installed, and the daemon run the way the unit runs it.
#
#   test_unit.sh BUILD_DIR BINDIR
#
# PID 1 is not systemd where this runs (CI containers), so systemctl and
# systemd-run cannot start the unit. Instead:
#  1. meson install --destdir: the unit names BINDIR/hvswitch, which is there;
#     systemd-analyze verify accepts it (its paths put under the destdir);
#     systemd-sysusers creates its group from the installed sysusers.d file.
#  2. hvswitch --version, hvswitch -- --help: no EAL (no "EAL:" line).
#  3. The daemon started as the unit starts it: its Environment= and an
#     EnvironmentFile, Group= (a group made for the test), UMask=, a
#     RuntimeDirectory made as systemd makes it, $NOTIFY_SOCKET (a listener of
#     ours) and $JOURNAL_STREAM (stdout and stderr into one file, as journald
#     takes them), ExecStartPre first. READY=1 must come, and when it comes the
#     control socket and the configured server port's socket must exist.
#  4. ExecStartPre (--check-config) again next to the running daemon: it
#     succeeds without EAL (before, EAL failed on the daemon's lock).
#  5. Logging to journald once: no connect() to /dev/log (syslog, strace),
#     each EAL line once, with its priority ("<6>EAL: ...").
#  6. hvctl as a member of the unit's group, through the RuntimeDirectory.
set -uo pipefail

build=${1:?build dir}
bindir=${2:?bindir}
skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "needs root (groups, users, setpriv)"
for t in systemd-analyze systemd-sysusers python3 strace setpriv groupadd useradd; do
	command -v "$t" >/dev/null || skip "$t not installed"
done

tmp=$(mktemp -d /tmp/hvswitch-unit.XXXXXX)
chmod 0755 "$tmp"
grp=hvu$$
usr=hvu$$
pid=
listener=
passed=0
failed=0
check() { # name, then the command
	local name=$1
	shift
	if "$@"; then echo "PASS: $name"; passed=$((passed + 1)); else echo "FAIL: $name"; failed=$((failed + 1)); fi
}
stop_pid() {
	[ -n "$1" ] && kill -0 "$1" 2>/dev/null || return 0
	kill -TERM "$1"
	for _ in $(seq 100); do kill -0 "$1" 2>/dev/null || break; sleep 0.1; done
	kill -KILL "$1" 2>/dev/null
	wait "$1" 2>/dev/null
}
cleanup() {
	stop_pid "$pid"
	stop_pid "$listener"
	userdel "$usr" 2>/dev/null
	groupdel "$grp" 2>/dev/null
	[ "${HV_KEEP:-0}" = 1 ] && echo "kept $tmp" || rm -rf "$tmp" "/var/run/dpdk/hvunit-$$"
}
trap cleanup EXIT

# 1. installed unit
dest=$tmp/dest
meson install -C "$build" --destdir "$dest" --no-rebuild >"$tmp/install.log" 2>&1 ||
	{ cat "$tmp/install.log"; echo "FAIL: meson install"; exit 1; }
unit=$(find "$dest" -path '*/systemd/system/hvswitch.service' | head -n1)
sysusers=$(find "$dest" -path '*/sysusers.d/hvswitch.conf' | head -n1)
check "unit installed under lib/systemd/system (${unit#"$dest"})" test -f "$unit"
check "sysusers.d file installed (${sysusers#"$dest"})" test -f "$sysusers"
grep '^Exec' "$unit"
exec_ok() { # every Exec line runs BINDIR/hvswitch, which was installed
	local n
	n=$(grep -c "^Exec[A-Za-z]*=$bindir/hvswitch " "$unit")
	[ "$n" = 2 ] && [ "$(grep -c '^Exec' "$unit")" = 2 ] && [ -x "$dest$bindir/hvswitch" ]
}
check "ExecStartPre and ExecStart run $bindir/hvswitch (the configured prefix)" exec_ok
sed "s|=$bindir/|=$dest$bindir/|" "$unit" >"$tmp/hvswitch.service"
verify() {
	systemd-analyze verify --man=no "$tmp/hvswitch.service" >"$tmp/verify.log" 2>&1
	local rc=$?
	cat "$tmp/verify.log"
	[ $rc = 0 ] && ! grep -q . "$tmp/verify.log"
}
check "systemd-analyze verify: no complaint" verify
mkdir -p "$tmp/sysroot/etc"
: >"$tmp/sysroot/etc/group"
: >"$tmp/sysroot/etc/passwd"
systemd-sysusers --root="$tmp/sysroot" "$sysusers" >/dev/null 2>&1
check "systemd-sysusers creates group hvswitch from it" grep -q '^hvswitch:' "$tmp/sysroot/etc/group"
ukey() { sed -n "s/^$1=//p" "$unit" | head -n1; }
check "Type=notify, RuntimeDirectory=hvswitch, UMask=0007, Group=hvswitch, EnvironmentFile" \
	test "$(ukey Type) $(ukey RuntimeDirectory) $(ukey UMask) $(ukey Group)" = \
	"notify hvswitch 0007 hvswitch" -a -n "$(ukey EnvironmentFile)"

# 2. no EAL for --version and --help
hvswitch=$dest$bindir/hvswitch
hvctl=$dest$bindir/hvctl
"$hvswitch" --version >"$tmp/version" 2>&1
check "hvswitch --version: '$(cat "$tmp/version")'" grep -qE '^hvswitch [0-9.]+ \(DPDK [0-9.]+' "$tmp/version"
"$hvswitch" --huge-dir /nonexistent -- --help >"$tmp/help" 2>&1
help_ok() { grep -q -- '--check-config' "$tmp/help" && ! grep -q 'EAL: Detected' "$tmp/help"; }
check "hvswitch -- --help: usage, no EAL init" help_ok

# 3. as the unit runs it
groupadd "$grp" || { echo "FAIL: groupadd"; exit 1; }
useradd --no-create-home --shell /usr/sbin/nologin -g "$grp" "$usr" || { echo "FAIL: useradd"; exit 1; }
run=$tmp/run
mkdir -m 0750 "$run" && chgrp "$grp" "$run" # RuntimeDirectory=, RuntimeDirectoryMode=, Group=
cat >"$tmp/hv.json" <<EOF
{"ports": [{"name": "vm0", "type": "vhost-user"}, {"name": "vm1", "type": "vhost-user", "socket": "$tmp/vm1.sock"}]}
EOF
# EnvironmentFile=: this host's EAL (no hugepages here) and options; the later
# --config and --run-dir win over the unit's
cat >"$tmp/default" <<EOF
HVSWITCH_EAL="-l 0,1 --main-lcore 0 --no-pci --no-huge -m 256 --file-prefix hvunit-$$"
HVSWITCH_OPTS="--config $tmp/hv.json --run-dir $run --group $grp"
EOF
# systemd's command line: \$VAR splits at whitespace
cmdline() { # Exec key -> the words, variables expanded
	local line
	line=$(ukey "$1")
	line=${line//\$HVSWITCH_EAL/$HVSWITCH_EAL}
	line=${line//\$HVSWITCH_OPTS/$HVSWITCH_OPTS}
	echo "${line/#$bindir/$dest$bindir}"
}
set -a
# shellcheck disable=SC1090
. "$tmp/default"
set +a
read -r -a pre <<<"$(cmdline ExecStartPre)"
read -r -a start <<<"$(cmdline ExecStart)"
echo "ExecStartPre: ${pre[*]}"
echo "ExecStart: ${start[*]}"

# the $NOTIFY_SOCKET listener: at READY=1, which sockets exist
python3 - "$tmp/notify.sock" "$tmp/notify.log" "$run/hvswitch.sock" "$run/vm0.sock" "$tmp/vm1.sock" <<'PY' &
import os, socket, stat, sys, time
path, log = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(path)
os.chmod(path, 0o777)
s.settimeout(60)
with open(log, "w") as out:
    out.write("listening\n"); out.flush()
    try:
        while True:
            msg = s.recv(4096).decode(errors="replace")
            seen = " ".join("%s=%s" % (os.path.basename(p),
                            "sock" if os.path.exists(p) and stat.S_ISSOCK(os.stat(p).st_mode) else "missing")
                            for p in sys.argv[3:])
            for line in msg.split("\n"):
                out.write("%s | %s\n" % (line, seen)); out.flush()
            if "STOPPING=1" in msg:
                break
    except socket.timeout:
        out.write("timeout\n")
PY
listener=$!
for _ in $(seq 100); do grep -q listening "$tmp/notify.log" 2>/dev/null && break; sleep 0.1; done
gid=$(getent group "$grp" | cut -d: -f3)
# Group=, UMask=, Environment=, stdout+stderr to "the journal"
(
	umask 0007
	"${pre[@]}" >"$tmp/pre.log" 2>&1 || exit 3
	exec >"$tmp/journal.log" 2>&1
	js=$(stat -c '%d:%i' "$tmp/journal.log")
	NOTIFY_SOCKET=$tmp/notify.sock JOURNAL_STREAM=$js exec setpriv --regid "$gid" --clear-groups \
		strace -f -qq -e trace=connect,sendto -o "$tmp/strace.log" "${start[@]}"
) &
pid=$!
for _ in $(seq 300); do
	grep -q '^READY=1' "$tmp/notify.log" 2>/dev/null && break
	kill -0 "$pid" 2>/dev/null || break
	sleep 0.1
done
echo "notify messages:"; sed 's/^/  /' "$tmp/notify.log"
check "ExecStartPre (--check-config) passed: $(cat "$tmp/pre.log")" grep -q 'settings valid' "$tmp/pre.log"
check "READY=1 sent" grep -q '^READY=1' "$tmp/notify.log"
check "at READY=1, the control socket and both server ports' sockets existed" \
	grep -q '^READY=1 | hvswitch.sock=sock vm0.sock=sock vm1.sock=sock$' "$tmp/notify.log"
check "STATUS= tells the ports and the control socket" grep -q "^STATUS=2 port(s), control socket $run/hvswitch.sock" "$tmp/notify.log"
modes() { stat -c '%A %G' "$run/hvswitch.sock" "$run/vm0.sock" | tr '\n' ' '; }
echo "sockets: $(modes)"
check "the vhost-user socket has Group= and UMask=0007 (srwxrwx--- $grp)" \
	test "$(stat -c '%A %G' "$run/vm0.sock")" = "srwxrwx--- $grp"

# 4. --check-config next to the running daemon (the same EAL file prefix)
"${pre[@]}" >"$tmp/pre2.log" 2>&1
rc=$?
cat "$tmp/pre2.log"
check "ExecStartPre next to the running daemon: exit 0, no EAL" \
	test $rc = 0 -a "$(grep -c 'settings valid' "$tmp/pre2.log")" = 1 -a "$(grep -c EAL "$tmp/pre2.log")" = 0
# a second daemon on the same EAL prefix: the EAL refuses it (its lock) and
# leaves rte_errno 0; the reason is in its own lines, not "Success"
"${start[@]/%$run/$tmp/run2}" >"$tmp/second.log" 2>&1
rc=$?
grep -v '^EAL: \(Detected\|Multi\|Selected\|Physical\)' "$tmp/second.log"
second_ok() { [ $rc = 1 ] && grep -q '^hvswitch: EAL init failed (see the EAL messages above)$' "$tmp/second.log" &&
	! grep -q Success "$tmp/second.log"; }
check "a second daemon on the same prefix: 'EAL init failed (see the EAL messages above)', exit 1" second_ok
"$hvswitch" -- --check-config --config "$tmp/none/x.json" --vhost-owner "nosuch$$" >"$tmp/bad.log" 2>&1
rc=$?
check "--check-config: a bad option is one line, exit 1 ($(cat "$tmp/bad.log"))" \
	test $rc = 1 -a "$(wc -l <"$tmp/bad.log")" = 1

# 6. a member of the group through the RuntimeDirectory, with hvctl
setpriv --reuid "$usr" --regid "$grp" --init-groups "$hvctl" --socket "$run/hvswitch.sock" port list \
	>"$tmp/member.log" 2>&1
check "hvctl port list as $usr (group $grp): $(head -n1 "$tmp/member.log")" grep -q vm0 "$tmp/member.log"

# 5. journald: stopped (SIGTERM to hvswitch, strace's child), then read what it wrote
daemon=$(pgrep -P "$pid" -x hvswitch)
check "hvswitch runs under strace (pid ${daemon:-none})" test -n "$daemon"
[ -n "$daemon" ] && kill -TERM "$daemon"
for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
stop_pid "$pid"
pid=
wait "$listener" 2>/dev/null
listener=
check "STOPPING=1 sent on SIGTERM" grep -q '^STOPPING=1' "$tmp/notify.log"
echo "first lines to the journal:"; head -n 5 "$tmp/journal.log" | sed 's/^/  /'
# DPDK's openlog(LOG_NDELAY) connects once; every syslog() would send on it,
# or, with no /dev/log (containers), try to connect again
no_syslog() {
	local c s
	c=$(grep -c 'connect(.*"/dev/log"' "$tmp/strace.log")
	s=$(grep -cE 'sendto\([0-9]+, "<[0-9]+>' "$tmp/strace.log")
	echo "  strace: $c connect() to /dev/log, $s syslog message(s) sent"
	[ "$c" -le 1 ] && [ "$s" = 0 ]
}
check "no syslog: at most DPDK's one connect() to /dev/log, nothing sent (strace)" no_syslog
check "EAL lines carry their priority (<6>EAL: Detected CPU lcores)" \
	grep -q '^<6>EAL: Detected CPU lcores' "$tmp/journal.log"
check "each EAL line once" test "$(grep -c 'EAL: Detected CPU lcores' "$tmp/journal.log")" = 1

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
