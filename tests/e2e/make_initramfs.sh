#!/usr/bin/env bash
# Build the e2e guest initramfs (cpio.gz) from what is installed on the host:
# busybox-static plus the virtio-net modules (and their modules.dep
# dependencies) of the installed Debian cloud kernel, and, where installed,
# iperf3 and ethtool with the shared libraries ldd lists for them (Debian
# packages iperf3, ethtool). Without them the image still builds (nc and ping
# work); a guest asked for iperf3 then reports "IPERF fail reason=no-iperf3".
#
#   make_initramfs.sh [CACHE_DIR] [KERNEL_VERSION]
#
# KERNEL_VERSION "builtin": for a kernel with virtio-net built in (the guest
# kernel of guest/, `ninja -C build guest-kernel`): no modules, and the cpio
# is left uncompressed (initramfs-builtin.cpio), since unpacking gzip costs
# minutes where guest CPL0 is emulated (doc/vmm.rst).
# CACHE_DIR defaults to build/e2e. Prints the path of the initramfs on stdout
# (the last line). Exit 77 when a prerequisite is missing (test skipped).
# The image is rebuilt only when this script, the busybox binary, the module
# files, the optional tools or their libraries changed, or a tool appeared or
# went away (the stamp file records them).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
cache=${1:-build/e2e}
kver=${2:-}

builtin=0
[ "$kver" = builtin ] && builtin=1
if [ -z "$kver" ]; then
	# newest installed cloud kernel that has its modules
	for k in $(ls -1 /boot/vmlinuz-*-cloud-amd64 2>/dev/null | sort -V -r); do
		v=${k#/boot/vmlinuz-}
		[ -f "/lib/modules/$v/modules.dep" ] && { kver=$v; break; }
	done
fi
if [ $builtin = 0 ] && { [ -z "$kver" ] || [ ! -f "/lib/modules/$kver/modules.dep" ]; }; then
	echo "make_initramfs: no Debian cloud kernel with modules (install linux-image-cloud-amd64)" >&2
	exit 77
fi
busybox=
for b in /bin/busybox /usr/bin/busybox; do
	if [ -x "$b" ] && ! ldd "$b" >/dev/null 2>&1; then busybox=$b; break; fi
done
if [ -z "$busybox" ]; then
	echo "make_initramfs: no statically linked busybox (install busybox-static)" >&2
	exit 77
fi
for t in cpio gzip; do
	command -v "$t" >/dev/null || { echo "make_initramfs: $t missing" >&2; exit 77; }
done

moddir=/lib/modules/$kver
# Resolve the load order from modules.dep: depth-first, dependencies first.
declare -A seen=()
order=()
dep_of() { # module path relative to moddir -> its deps (relative paths)
	awk -v m="$1:" '$1 == m { for (i = 2; i <= NF; i++) print $i }' "$moddir/modules.dep"
}
path_of() { # module name -> relative path (any compression)
	awk -F: -v n="$1" '{ f = $1; sub(/.*\//, "", f); sub(/\.ko(\.(xz|gz|zst))?$/, "", f);
		gsub(/-/, "_", f); if (f == n) { print $1; exit } }' "$moddir/modules.dep"
}
visit() {
	local rel=$1 d
	[ -n "${seen[$rel]:-}" ] && return 0
	seen[$rel]=1
	for d in $(dep_of "$rel"); do visit "$d"; done
	order+=("$rel")
}
mods=(virtio_pci virtio_net)
[ $builtin = 1 ] && mods=()
for m in "${mods[@]}"; do
	rel=$(path_of "$m")
	if [ -z "$rel" ]; then
		# built into the kernel? then nothing to load
		if grep -q "/$m.ko" "$moddir/modules.builtin" 2>/dev/null; then continue; fi
		echo "make_initramfs: module $m not found for $kver" >&2
		exit 77
	fi
	visit "$rel"
done

# Optional dynamically linked tools and every library ldd resolves for them
# (the ELF interpreter included), copied to the same paths in the image.
tools=()
tool_libs=()
declare -A lib_seen=()
opt_tools=(/usr/bin/iperf3 /usr/sbin/ethtool)
[ $builtin = 1 ] && opt_tools=() # keep the image small: every byte is copied at CPL0
for t in "${opt_tools[@]+"${opt_tools[@]}"}"; do
	[ -x "$t" ] || { echo "make_initramfs: $t not installed: left out of the image" >&2; continue; }
	libs=$(ldd "$t" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }') ||
		{ echo "make_initramfs: ldd $t failed: left out of the image" >&2; continue; }
	missing=0
	for l in $libs; do [ -f "$l" ] || missing=1; done
	if [ $missing = 1 ] || [ -z "$libs" ]; then
		echo "make_initramfs: a library of $t is missing: left out of the image" >&2
		continue
	fi
	tools+=("$t")
	for l in $libs; do
		[ -n "${lib_seen[$l]:-}" ] && continue
		lib_seen[$l]=1
		tool_libs+=("$l")
	done
done

mkdir -p "$cache"
cache=$(cd "$cache" && pwd)
out=$cache/initramfs-$kver.cpio.gz
[ $builtin = 1 ] && out=$cache/initramfs-builtin.cpio
stamp_now=$(
	{
		sha256sum "$0" | cut -d' ' -f1
		stat -c '%n %s %Y' "$busybox"
		for rel in "${order[@]+"${order[@]}"}"; do stat -c '%n %s %Y' "$moddir/$rel"; done
		echo "tools: ${tools[*]}"
		for f in "${tools[@]}" "${tool_libs[@]}"; do stat -L -c '%n %s %Y' "$f"; done
	} | sha256sum | cut -d' ' -f1
)
if [ -f "$out" ] && [ "$(cat "$out.stamp" 2>/dev/null)" = "$stamp_now" ]; then
	echo "make_initramfs: up to date ($kver, modules: ${order[*]##*/}, tools: ${tools[*]:-none})" >&2
	echo "$out"
	exit 0
fi

root=$(mktemp -d "$cache/root.XXXXXX")
trap 'rm -rf "$root"' EXIT
mkdir -p "$root"/{bin,sbin,proc,sys,dev,tmp,etc,modules}
cp "$busybox" "$root/bin/busybox"
for applet in sh; do ln -s busybox "$root/bin/$applet"; done
for f in "${tools[@]}" "${tool_libs[@]}"; do
	mkdir -p "$root$(dirname "$f")"
	cp -L "$f" "$root$f"
done

: >"$root/modules/order"
for rel in "${order[@]+"${order[@]}"}"; do
	name=${rel##*/}
	case $name in
	*.ko.xz) xz -dc "$moddir/$rel" >"$root/modules/${name%.xz}"; name=${name%.xz} ;;
	*.ko.gz) gzip -dc "$moddir/$rel" >"$root/modules/${name%.gz}"; name=${name%.gz} ;;
	*.ko.zst) zstd -qdc "$moddir/$rel" >"$root/modules/${name%.zst}"; name=${name%.zst} ;;
	*.ko) cp "$moddir/$rel" "$root/modules/$name" ;;
	esac
	echo "$name" >>"$root/modules/order"
done

cat >"$root/init" <<'INIT'
#!/bin/busybox sh
# hvswitch e2e guest. Kernel command line parameters:
#   hv.ip=A.B.C.D/N   this guest's address      hv.peer=A.B.C.D  whom to ping
#   hv.count=N        pings after the peer answered (default 20)
#   hv.min=N          replies needed to pass (default = count)
#   hv.wait=S         seconds to wait for the first reply (default 120)
#   hv.linger=S       seconds to keep answering after the own test (default 30)
#   hv.hold=1         instead of lingering, wait for a line "poweroff" on the
#                     console (the host sends it once both guests are done)
#   hv.interval=S     seconds between pings (default 0.2)
#   hv.tcp=MB         after the pings, send MB MiB over TCP to the peer (port
#                     5001) and report the time; every guest also listens there
#   hv.tcp_kb=K       with hv.tcp_role=send|recv: K KiB of random data over TCP
#                     (nc, port 5002), both ends print their sha256
#   hv.tcp_bs=B       with hv.tcp_kb: the sender writes B-byte blocks
#                     (dd bs=B | nc: small writes), the receiver times the
#                     transfer from the connection to EOF ("HVTEST TCP
#                     recv_time seconds=S"); both print their virtio
#                     interrupts ("HVTEST IRQS at=tcp-start|tcp-end|iperf-end
#                     virtio=N") around the transfer and after iperf3
#   hv.iperf_kb=K     after that, iperf3 with K KiB (-n) from the sender to the
#                     receiver; the receiver's server starts only once the host
#                     wrote a line to its second serial port (/dev/ttyS1) after
#                     "HVTEST IPERF wait-go" (the host reads the switch's
#                     counters in between). Both print iperf3's JSON between
#                     "HVTEST IPERF json-begin" and "HVTEST IPERF json-end".
#   hv.iperf_s=S      the same for S seconds (-t S) instead of -n (benchmarks;
#                     hv.tcp_kb may then be 0: no nc transfer)
#   hv.migr=ROLE      live migration test (tests/e2e/migrate.sh), instead of the
#                     pings above: "target" (the guest that moves) receives
#                     hv.tcp_kb KiB on TCP port 5002 and prints its sha256;
#                     "peer" once the target answers pings it every 0.1 s
#                     (hv.count of them) while it streams hv.tcp_kb KiB to it
#                     in 4 KiB pieces hv.gap seconds apart, then prints both
# Where guest CPL0 is emulated every system call and every fork costs
# milliseconds: this script reads short files with the shell's read, not
# $(cat) (a fork), and needs no applet links where busybox runs its applets
# itself (Debian's busybox-static does: FEATURE_SH_STANDALONE); else it
# installs them (~400 system calls).
export PATH=/bin:/usr/bin:/usr/sbin
(PATH=/nonexistent; cat </dev/null) 2>/dev/null || /bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
echo 0 >/proc/sys/kernel/printk_ratelimit 2>/dev/null

say() { echo "HVTEST $*"; }
# now: the uptime in UP (seconds, 2 decimals) and UP_S (whole seconds)
now() { read -r UP _ </proc/uptime; UP_S=${UP%.*}; }
finish() {
	echo "--- /proc/interrupts (virtio)"
	grep -i virtio /proc/interrupts
	echo "--- /sys/class/net/eth0/statistics"
	for f in /sys/class/net/eth0/statistics/*; do
		[ -f "$f" ] && read -r v <"$f" && echo "${f##*/}=$v"
	done
	# The host may stop the guest from here on.
	say "END"
	if [ "$hold" = 1 ]; then
		say "HOLD waiting for poweroff on the console"
		while read -r line; do
			case $line in poweroff*) break ;; esac
		done
		now
		say "POWEROFF uptime=$UP"
	elif [ "${linger:-0}" -gt 0 ]; then
		# stay up so the peer can finish its own pings
		sleep "$linger"
	fi
	sync
	poweroff -f
	sleep 5
	echo o >/proc/sysrq-trigger
}

hold=0; ip=; peer=; count=20; min=; wait=120; linger=30; interval=0.2; tcp=0; tcp_kb=0; tcp_role=
iperf_kb=0; iperf_s=0; migr=; gap=0.05; tcp_bs=0
# (cat: the shell's read takes a file byte by byte, two system calls a byte)
for arg in $(cat /proc/cmdline); do
	case $arg in
	hv.ip=*) ip=${arg#hv.ip=} ;;
	hv.peer=*) peer=${arg#hv.peer=} ;;
	hv.count=*) count=${arg#hv.count=} ;;
	hv.min=*) min=${arg#hv.min=} ;;
	hv.wait=*) wait=${arg#hv.wait=} ;;
	hv.linger=*) linger=${arg#hv.linger=} ;;
	hv.hold=*) hold=${arg#hv.hold=} ;;
	hv.tcp_kb=*) tcp_kb=${arg#hv.tcp_kb=} ;;
	hv.tcp_role=*) tcp_role=${arg#hv.tcp_role=} ;;
	hv.tcp_bs=*) tcp_bs=${arg#hv.tcp_bs=} ;;
	hv.iperf_kb=*) iperf_kb=${arg#hv.iperf_kb=} ;;
	hv.iperf_s=*) iperf_s=${arg#hv.iperf_s=} ;;
	hv.interval=*) interval=${arg#hv.interval=} ;;
	hv.tcp=*) tcp=${arg#hv.tcp=} ;;
	hv.migr=*) migr=${arg#hv.migr=} ;;
	hv.gap=*) gap=${arg#hv.gap=} ;;
	esac
done
[ -n "$min" ] || min=$count
read -r krel </proc/sys/kernel/osrelease
now
say "BOOT kernel=$krel ip=$ip peer=$peer count=$count min=$min uptime=$UP"

while read -r m; do
	insmod "/modules/$m" || { say "PING fail reason=insmod-$m"; finish; }
done </modules/order

# the kernel's own count of TCP segments that failed their checksum
csum_errors() {
	awk '$1 == "Tcp:" { if (!h) { for (i = 2; i <= NF; i++) if ($i == "InCsumErrors") c = i; h = 1 }
		else { print (c ? $c : "none"); exit } }' /proc/net/snmp
}

# the virtio interrupts taken so far (all CPUs, all virtio vectors), with hv.tcp_bs
irqs() {
	[ "$tcp_bs" -gt 0 ] || return 0
	say "IRQS at=$1 virtio=$(awk '/virtio/ { for (i = 2; i <= NF && $i ~ /^[0-9]+$/; i++) s += $i }
		END { print s + 0 }' /proc/interrupts)"
}

# iperf3 from the sender to the receiver (hv.iperf_kb), after the nc transfer
run_iperf() {
	local rc deadline i line len
	if ! command -v iperf3 >/dev/null; then
		say "IPERF fail reason=no-iperf3"
		return
	fi
	now
	deadline=$((UP_S + wait))
	if [ "$tcp_role" = recv ]; then
		# the host's go: a line on the second serial port
		# (a failed redirection of exec would end this shell: try it first)
		if ! (: </dev/ttyS1) 2>/dev/null; then say "IPERF fail reason=no-ttyS1"; return; fi
		exec 3</dev/ttyS1
		stty -F /dev/ttyS1 raw -echo clocal
		say "IPERF wait-go"
		line=
		read -t "$wait" line <&3
		exec 3<&-
		case $line in go*) ;; *) say "IPERF fail reason=no-go"; return ;; esac
		now
		say "IPERF server-start uptime=$UP"
		# bounded: a client that never comes must not hold the guest
		timeout "$wait" iperf3 -s -1 -J -i 0 >/tmp/iperf.json 2>&1
		rc=$?
		i=0
	else
		# the receiver's server starts after the host's go: retry
		i=0
		while :; do
			if [ "$iperf_s" -gt 0 ]; then len="-t $iperf_s"; else len="-n ${iperf_kb}K"; fi
			iperf3 -c "$peer" $len -J -i 0 >/tmp/iperf.json 2>&1
			rc=$?
			# with -J, iperf3 3.12 exits 0 on "Connection refused" too
			grep -q '"error"' /tmp/iperf.json && rc=1
			[ $rc -eq 0 ] && break
			i=$((i + 1))
			now
			[ "$UP_S" -ge "$deadline" ] && break
			sleep 0.5
		done
	fi
	say "IPERF json-begin"
	cat /tmp/iperf.json
	echo
	say "IPERF json-end"
	now
	say "IPERF $tcp_role rc=$rc tries=$i uptime=$UP"
	say "IPERF csum_errors=$(csum_errors)"
}

i=0
while [ ! -e /sys/class/net/eth0 ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
[ -e /sys/class/net/eth0 ] || { say "PING fail reason=no-eth0"; finish; }
# the virtio features the driver negotiated (of the first virtio device)
features() {
	feat=
	for f in /sys/bus/virtio/devices/*/features; do
		[ -f "$f" ] && read -r feat <"$f"
		break
	done
}
read -r mac </sys/class/net/eth0/address
features
say "NIC mac=$mac features=$feat"

ip link set lo up
ip addr add "$ip" dev eth0
ip link set eth0 up
i=0
oper() { oper=; carrier=; read -r oper </sys/class/net/eth0/operstate; read -r carrier </sys/class/net/eth0/carrier; } 2>/dev/null
oper
while [ "$oper" != up ] && [ $i -lt 100 ]; do
	sleep 0.1; i=$((i + 1))
	oper
done
# a TCP sink for the peer's transfer (hv.tcp); its stdin must not end (a
# background job's is /dev/null, and nc quits at EOF before anyone connects)
sleep 100000 | nc -l -p 5001 >/dev/null 2>&1 &
oper
now
say "LINK state=$oper carrier=$carrier uptime=$UP"

# The guest that migrates: it only receives (its kernel answers the pings).
if [ "$migr" = target ]; then
	say "MIGR listening"
	nc -l -p 5002 >/tmp/rx
	now
	say "TCP recv bytes=$(wc -c </tmp/rx) sha256=$(sha256sum /tmp/rx | cut -c1-64) uptime=$UP"
	finish
fi

# Wait until the peer answers once (it may still be booting).
now
start=$UP_S
reached=0
while :; do
	if ping -c 1 -W 1 "$peer" >/dev/null 2>&1; then reached=1; break; fi
	sleep 0.2 # in case ping failed at once (e.g. no route yet)
	now
	[ $((UP_S - start)) -ge "$wait" ] && break
done
now
waited=$((UP_S - start))
if [ $reached -ne 1 ]; then
	say "PING fail reason=peer-unreachable waited=${waited}s"
	finish
fi
say "REACHED peer=$peer waited=${waited}s"

# The peer of the guest that migrates: pings and a paced TCP stream that
# last across the migration (the host migrates once it sees MIGR streaming).
if [ "$migr" = peer ]; then
	dd if=/dev/urandom of=/tmp/seed bs=4093 count=1 2>/dev/null
	set --
	i=0
	while [ $i -lt $(( (tcp_kb * 1024 + 4092) / 4093 )) ]; do set -- "$@" /tmp/seed; i=$((i + 1)); done
	cat "$@" | head -c $((tcp_kb * 1024)) >/tmp/tx
	say "TCP send bytes=$(wc -c </tmp/tx) sha256=$(sha256sum /tmp/tx | cut -c1-64)"
	ping -c "$count" -i 0.1 -W 2 "$peer" >/tmp/ping.out 2>&1 &
	pinger=$!
	pieces=$(( (tcp_kb + 3) / 4 ))
	stream() {
		i=0
		while [ $i -lt $pieces ]; do
			# nc gone (the target did not listen yet): retry from the start
			dd if=/tmp/tx bs=4096 skip=$i count=1 2>/dev/null || return 1
			[ $i = 8 ] && say "MIGR streaming" >&2
			sleep "$gap"
			i=$((i + 1))
		done
	}
	i=0
	until stream 2>/dev/console | nc "$peer" 5002; do
		i=$((i + 1)); [ $i -ge 20 ] && break; sleep 0.5
	done
	now
	say "TCP sent tries=$i uptime=$UP"
	wait $pinger
	tail -n 3 /tmp/ping.out
	tx=$(sed -n 's/^\([0-9]*\) packets transmitted.*/\1/p' /tmp/ping.out)
	rx=$(sed -n 's/.* \([0-9]*\) packets received.*/\1/p' /tmp/ping.out)
	# the longest run of sequence numbers without a reply
	gapmax=$(sed -n 's/.*seq=\([0-9]*\) .*/\1/p' /tmp/ping.out |
		awk 'BEGIN { p = -1 } { if ($1 - p - 1 > m) m = $1 - p - 1; p = $1 } END { print m + 0 }')
	say "PING migr sent=${tx:-0} received=${rx:-0} longest_gap=$gapmax"
	finish
fi

# The measured run: $interval s apart, each reply may take up to 2 s (TCG jitter).
ping -c "$count" -i "$interval" -W 2 -w $((count + 30)) "$peer" >/tmp/ping.out 2>&1
if [ "$count" -le 100 ]; then cat /tmp/ping.out; else tail -n 3 /tmp/ping.out; fi
# RTT percentiles (ms) of the replies
sed -n 's/.* time=\([0-9.]*\) ms.*/\1/p' /tmp/ping.out | sort -n >/tmp/rtt
n=$(wc -l </tmp/rtt)
if [ "$n" -gt 0 ]; then
	pick() { sed -n "$(( ($n * $1 + 99) / 100 ))p" /tmp/rtt; }
	say "RTT n=$n p50=$(pick 50) p99=$(pick 99) max=$(tail -n 1 /tmp/rtt)"
fi
tx=$(sed -n 's/^\([0-9]*\) packets transmitted.*/\1/p' /tmp/ping.out)
rx=$(sed -n 's/.* \([0-9]*\) packets received.*/\1/p' /tmp/ping.out)
rtt=$(sed -n 's/^round-trip min\/avg\/max = \(.*\) ms/\1/p' /tmp/ping.out)
tx=${tx:-0}; rx=${rx:-0}
if [ "$rx" -ge "$min" ]; then
	say "PING ok sent=$tx received=$rx rtt_min_avg_max_ms=${rtt:-none}"
else
	say "PING fail sent=$tx received=$rx min=$min rtt_min_avg_max_ms=${rtt:-none}"
fi

# TCP through the switch (offloads as negotiated): the receiver hashes what
# arrived, the sender what it sent; the host compares the two.
if [ "$tcp_kb" -gt 0 ] || [ "$iperf_kb" -gt 0 ] || [ "$iperf_s" -gt 0 ]; then
	features
	say "OFFLOADS $feat"
	if [ "$tcp_kb" -le 0 ]; then
		:
	elif [ "$tcp_role" = recv ] && [ "$tcp_bs" -gt 0 ]; then
		# timed from the connection (nc -e runs the script on it) to EOF
		printf '%s\n' 'read -r a _ </proc/uptime' 'cat >/tmp/rx' 'read -r b _ </proc/uptime' \
			'echo "$a $b" >/tmp/rxtime' >/tmp/rxtimed
		irqs tcp-start
		nc -l -p 5002 -e /bin/sh /tmp/rxtimed
		irqs tcp-end
		read -r a b </tmp/rxtime
		say "TCP recv_time seconds=$(echo "$a $b" | awk '{ printf "%.2f", $2 - $1 }')"
		say "TCP recv bytes=$(wc -c </tmp/rx) sha256=$(sha256sum /tmp/rx | cut -c1-64)"
	elif [ "$tcp_role" = recv ]; then
		nc -l -p 5002 >/tmp/rx
		say "TCP recv bytes=$(wc -c </tmp/rx) sha256=$(sha256sum /tmp/rx | cut -c1-64)"
	else
		# Not all of it from /dev/urandom: that is ChaCha20 in the kernel,
		# minutes for 1 MiB where guest CPL0 is emulated. A random block of
		# 4093 bytes (a prime: no segment or TSO size is a multiple of it),
		# repeated: a lost, doubled or misplaced segment still changes the hash.
		dd if=/dev/urandom of=/tmp/seed bs=4093 count=1 2>/dev/null
		set --
		i=0
		while [ $i -lt $(( (tcp_kb * 1024 + 4092) / 4093 )) ]; do set -- "$@" /tmp/seed; i=$((i + 1)); done
		cat "$@" | head -c $((tcp_kb * 1024)) >/tmp/tx
		say "TCP send bytes=$(wc -c </tmp/tx) sha256=$(sha256sum /tmp/tx | cut -c1-64)"
		# the receiver may not listen yet: retry the connection
		i=0
		irqs tcp-start
		if [ "$tcp_bs" -gt 0 ]; then
			# small writes: dd hands nc B bytes at a time
			until dd if=/tmp/tx bs="$tcp_bs" 2>/dev/null | nc "$peer" 5002; do
				i=$((i + 1)); [ $i -ge 100 ] && break; sleep 0.5
			done
		else
			until nc "$peer" 5002 </tmp/tx; do
				i=$((i + 1)); [ $i -ge 100 ] && break; sleep 0.5
			done
		fi
		irqs tcp-end
		say "TCP sent tries=$i"
	fi
	[ "$tcp_kb" -gt 0 ] && say "TCP csum_errors=$(csum_errors)"
	# the offloads as the guest kernel sees them (ethtool -k), one line each
	if command -v ethtool >/dev/null; then
		ethtool -k eth0 | sed 's/^[[:space:]]*/HVTEST ETHTOOL /'
	else
		say "ETHTOOL none"
	fi
	if [ "$iperf_kb" -gt 0 ] || [ "$iperf_s" -gt 0 ]; then
		run_iperf
		irqs iperf-end
	fi
fi
if [ "$tcp" -gt 0 ]; then
	now
	t0=$UP
	dd if=/dev/zero bs=65536 count=$((tcp * 16)) 2>/dev/null | nc "$peer" 5001
	now
	t1=$UP
	say "TCP bytes=$((tcp * 1048576)) seconds=$(echo "$t0 $t1" | awk '{ printf "%.2f", $2 - $1 }')"
fi
finish
INIT
chmod +x "$root/init"

compress() { if [ $builtin = 1 ]; then cat; else gzip -9; fi; }
(cd "$root" && find . -print0 | sort -z | cpio --null -o -H newc --quiet) | compress >"$out.tmp"
mv "$out.tmp" "$out"
echo "$stamp_now" >"$out.stamp"
echo "make_initramfs: built $out ($kver, modules: $(tr '\n' ' ' <"$root/modules/order")tools: ${tools[*]:-none})" >&2
echo "$out"
