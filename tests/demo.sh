#!/usr/bin/env bash
# The demo: hvswitch forwards between two vhost-user ports while a guest-side
# traffic generator (two DPDK virtio-user frontends) sends through it; prints
# the generator's rate and the switch's per-ring counters.
#
#   HV_DEMO_SECONDS  how long to send (default 5)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
"$root/tests/deps.sh"
[ -f build/build.ninja ] || meson setup build --werror
ninja -C build

run=$(mktemp -d /tmp/hvswitch-demo.XXXXXX)
switch_pid=
cleanup() {
	if [ -n "$switch_pid" ] && kill -0 "$switch_pid" 2>/dev/null; then
		kill -INT "$switch_pid"
		for _ in $(seq 50); do kill -0 "$switch_pid" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$switch_pid" 2>/dev/null || true
	fi
	rm -rf "$run"
}
trap cleanup EXIT

hvctl() { build/app/hvctl/hvctl --socket "$run/hvswitch.sock" "$@"; }

sw_lcores=0,1; gen_cpu=0
echo "--- starting hvswitch: control plane on CPU 0, one PMD on CPU 1"
build/app/hvswitch/hvswitch -l "$sw_lcores" --main-lcore 0 --no-pci --no-huge -m 256 \
	--file-prefix "hvdemo-sw-$$" -- --run-dir "$run" --config "$run/hvswitch.json" \
	>"$run/switch.log" 2>&1 &
switch_pid=$!
for _ in $(seq 100); do
	[ -S "$run/hvswitch.sock" ] && break
	kill -0 "$switch_pid" 2>/dev/null || { cat "$run/switch.log"; exit 1; }
	sleep 0.1
done
[ -S "$run/hvswitch.sock" ] || { echo "hvswitch did not start"; cat "$run/switch.log"; exit 1; }

echo "--- two guest ports, added with hvctl"
hvctl port add vm0 --type vhost-user
hvctl port add vm1 --type vhost-user
hvctl port list

echo "--- two guests (DPDK virtio-user frontends) send 64-byte and 1518-byte frames through it"
for size in 64 1518; do
	taskset -c "$gen_cpu" build/tests/perf/hv_pktgen -l "$gen_cpu" --no-pci --no-huge -m 256 \
		--file-prefix "hvdemo-gen-$$" \
		--vdev "net_virtio_user0,path=$run/vm0.sock,queues=1,queue_size=1024,mac=02:00:00:00:00:00" \
		--vdev "net_virtio_user1,path=$run/vm1.sock,queues=1,queue_size=1024,mac=02:00:00:00:00:01" \
		-- --size "$size" --warmup-s 1 --duration-s "${HV_DEMO_SECONDS:-5}" 2>/dev/null |
		grep RESULT
done
echo "--- what the switch counted"
hvctl stats
hvctl fdb show
echo "--- config written by hvctl ($run/hvswitch.json)"
cat "$run/hvswitch.json"
