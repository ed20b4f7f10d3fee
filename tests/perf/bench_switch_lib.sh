# SPDX-License-Identifier: BSD-3-Clause
#
# The DUTs, generators and turns of bench_switch.sh. Sourced by it after its
# settings (rundir, prefix, run, pids, the binaries, CPUs and memory options,
# ovs_dir) and bench_lib.sh; uses its note() and die().

# ---------------------------------------------------------------- DUTs
# Start a DUT in the background; sets dut_pid. $3: ports (hvswitch only),
# $4...: extra hvswitch options.
start_dut() {
	local dut=$1 log=$2 nports=${3:-2} i

	shift 3 2>/dev/null || shift $#
	# sockets per run: with HV_BENCH_SLICES the DUTs run side by side
	mkdir -p "$rundir/s$run"
	rm -f "$rundir"/ovs*.sock
	case $dut in
	hvswitch | base | hvcap | hvbase | hvpacked | hvbasepacked)
		local ports=() bin=$hvswitch

		[[ $dut == hvbase || $dut == hvbasepacked ]] && bin=$rundir/bin/hvswitch-base
		for ((i = 0; i < nports; i++)); do
			ports+=(--port "$rundir/s$run/p$i.sock")
		done
		# a run dir per run: with turns, hvswitch DUTs run side by side
		rm -rf "$rundir/hv$run" && mkdir -p "$rundir/hv$run"
		# main lcore (control plane, sleeps in poll) on the generator's CPU,
		# the PMD lcore alone on its CPU
		[ "$dut" = base ] && bin=$rundir/bin/hvswitch-base
		"$bin" -l "$dut_lcores" --main-lcore "$gen_cpu" --no-pci "${dut_mem[@]}" \
			--file-prefix "${prefix}d$run" -- --run-dir "$rundir/hv$run" \
			--config "$rundir/hv$run/hvswitch.json" --mbufs 16384 "$@" "${ports[@]}" \
			>"$log" 2>&1 &
		dut_pid=$!
		;;
	testpmd | tpmdpacked)
		testpmd_start "$rundir/testpmd.in" "$log" "$rundir/s$run/p0.sock" \
			"$rundir/s$run/p1.sock" "$testpmd" -l "$dut_lcores" --main-lcore "$gen_cpu" \
			--no-pci "${dut_mem[@]}" --file-prefix "${prefix}d$run" \
			-- --txd=1024 --rxd=1024 || die "mkfifo failed"
		dut_pid=$testpmd_pid
		;;
	ovs)
		ovs_ports "$nports" || die "OVS ports: $(tail -2 "$ovs_dir/vsctl.log")"
		rm -f "$ovs_dir/vswitchd.ctl" "$ovs_dir/vswitchd.pid"
		# all of it on the generator's CPU; the PMD thread pins itself to
		# pmd-cpu-mask. Own network namespace: its bridge port is a tap device.
		taskset -c "$gen_cpu" unshare --net -- "$vswitchd" "unix:$ovs_dir/db.sock" \
			--unixctl="$ovs_dir/vswitchd.ctl" --pidfile="$ovs_dir/vswitchd.pid" \
			--log-file="$log" >"$log.out" 2>&1 &
		dut_pid=$!
		;;
	esac
	pids+=("$dut_pid")
}

# stop_dut DUT PID RUN: RUN is the run that started it
stop_dut() {
	local dut=$1 pid=$2 r=$3

	[[ $dut == testpmd || $dut == tpmdpacked ]] && testpmd_quit
	if [ "$dut" = ovs ]; then
		stop_pid "$pid" 15 TERM
	else
		stop_pid "$pid" 10 INT
	fi
	forget_pid "$pid"
	rm -rf "$rundir/s$r" "$rundir"/ovs*.sock "$rundir/testpmd.in"
	rm -rf /var/run/dpdk/"${prefix}d$r" 2>/dev/null
}

# hvcap: capture port0 (both directions: every frame the switch forwards)
# into /dev/null, hvctl on the generator's CPU; 0, or 1 if it did not start
start_capture() {
	local i

	"$hvctl" --socket "$rundir/hv$run/hvswitch.sock" capture port0 -w /dev/null \
		>/dev/null 2>"$rundir/logs/$run-capture.log" &
	pids+=("$!")
	for ((i = 0; i < 50; i++)); do
		grep -q 'capturing' "$rundir/logs/$run-capture.log" 2>/dev/null && return 0
		sleep 0.1
	done
	note "run $run: hvctl capture did not start: $(cat "$rundir/logs/$run-capture.log")"
	return 1
}

# wait_ready DUT PID PORTS LOG: wait until the DUT is ready for the
# generator: server sockets exist (hvswitch, testpmd) or the control socket
# answers and LOG shows the bridge up (OVS); 30 s at most.
wait_ready() {
	local dut=$1 pid=$2 nports=$3 log=$4 i j ok

	for ((i = 0; i < 300; i++)); do
		kill -0 "$pid" 2>/dev/null || return 1
		case $dut in
		ovs)
			[ -S "$ovs_dir/vswitchd.ctl" ] && grep -q 'using datapath ID' "$log" 2>/dev/null &&
				return 0
			;;
		*)
			ok=1
			for ((j = 0; j < nports; j++)); do
				[ -S "$rundir/s$run/p$j.sock" ] || { ok=0; break; }
			done
			[ "$ok" = 1 ] && return 0
			;;
		esac
		sleep 0.1
	done
	return 1
}

# start_gen DUT LOG LIMIT SIZE PORTS SRC_MACS DST_MACS [hv_pktgen options...]:
# the generator of run $run, in the background on its CPU (its EAL control
# threads too), interrupted after LIMIT seconds in case a server-mode
# frontend never gets its client; sets gen_pid (of timeout)
start_gen() {
	local dut=$1 gen_log=$2 limit=$3 size=$4 nports=$5 smacs=$6 dmacs=$7 i vdevs=() ring= eal=()

	shift 7
	# the packed DUTs: the frontends ask for the packed ring, on the AVX-512
	# paths if asked (their Rx path needs mergeable buffers off)
	if [[ $dut == hvpacked || $dut == tpmdpacked || $dut == hvbasepacked ]]; then
		ring=,packed_vq=1
		if [ "$packed_vec" = 1 ]; then
			ring+=,vectorized=1,mrg_rxbuf=0
			eal=(--force-max-simd-bitwidth=512)
		fi
	fi
	for ((i = 0; i < nports; i++)); do
		if [ "$dut" = ovs ]; then
			# OVS is the vhost-user client: our frontends are the servers. EAL
			# init blocks in accept() until OVS (re)connects (it retries every second).
			vdevs+=(--vdev "net_virtio_user$i,path=$rundir/ovs$i.sock,server=1,queues=1,queue_size=1024")
		else
			vdevs+=(--vdev "net_virtio_user$i,path=$rundir/s$run/p$i.sock,queues=1,queue_size=1024$ring")
		fi
	done
	# virtio's init log says which Rx/Tx paths it took (gen_paths); of two
	# --log-level patterns that match, the first given wins
	timeout -s INT -k 10 "$limit" taskset -c "$gen_cpu" "$pktgen" -l "$gen_cpu" --no-pci \
		"${gen_mem[@]}" --file-prefix "${prefix}g$run" \
		--log-level=pmd.net.virtio.init:info --log-level='pmd.net.virtio.*:warning' \
		"${eal[@]}" "${vdevs[@]}" \
		-- --size "$size" --ports "$nports" --src-macs "$smacs" --dst-macs "$dmacs" \
		--learn-first --link-timeout-s 30 --burst "$gen_burst" "$@" >"$gen_log" 2>&1 &
	gen_pid=$!
	pids+=("$gen_pid")
}
# gen_paths LOG: the Rx and Tx paths the generator's virtio-user took on its
# port 0, as "rx:PATH,tx:PATH" (words joined by "_"), "?" where not logged
gen_paths() {
	awk '/set_rxtx_funcs\(\).* path on port 0$/ {
		sub(/.*using /, ""); sub(/ path on port 0$/, "")
		dir = $NF == "Rx" ? "rx" : "tx"; NF--; gsub(/ /, "_"); p[dir] = $0 }
	END { printf "rx:%s,tx:%s\n", "rx" in p ? p["rx"] : "?", "tx" in p ? p["tx"] : "?" }' "$1"
}
# turn_index ROUND K N: who takes turn K of round ROUND among N: the order
# rotates every round and runs backwards every other N rounds, so that over
# 2N rounds each one goes before each other as often as after
turn_index() {
	local r=$1 k=$2 n=$3

	(((r / n) % 2)) && k=$((n - 1 - k))
	echo $(((k + r) % n))
}
# start_ready DUT LOG PORTS [hvswitch options...]: start_dut, then wait until
# it is ready (and capturing, for hvcap); 1, with the DUT stopped, its log
# shown and the failure counted, when it did not get there
start_ready() {
	local dut=$1 log=$2 nports=$3

	shift 3
	start_dut "$dut" "$log" "$nports" "$@"
	if ! wait_ready "$dut" "$dut_pid" "$nports" "$log"; then
		note "run $run: $dut did not get ready; its log:"
		tail -20 "$log" >&2
	elif [ "$dut" != hvcap ] || start_capture; then
		return 0
	fi
	stop_dut "$dut" "$dut_pid" "$run"
	failures=$((failures + 1))
	return 1
}

# run_turns SIZE INSTANCE...: each INSTANCE, "LABEL:DUT:PORTS:MACS[:BURST]" (MACS source
# and as many destination addresses, BURST the generator's bursts [gen_burst]; a DUT is hvswitch, base, hvcap, hvbase, hvpacked,
# hvbasepacked, testpmd, tpmdpacked or ovs, at most one ovs), starts once with its
# generator, learns and warms up; then HV_BENCH_SLICES rounds of turns: the instance
# whose turn it is runs, the others are paused (SIGSTOP). hvswitch instances get the
# options in the array turn_sw_opts. Sets turn[LABEL,ROUND] (frames/s; 0 for a turn
# without ticks), turn_full[LABEL,ROUND] (the share of the generator's TX bursts
# the DUT's ring did not take whole, %: near 100, the DUT is the bottleneck, not
# the generator) and turn_order (the labels that got going); counts failures.
run_turns() {
	local size=$1 spec label dut nports macs r i k t0 t1 v settle_ns=300000000 limit ticks
	local calls full burst bursts=$gen_burst gen_burst
	local -A dpid gpid gen grun glog

	shift
	turn=()
	turn_full=()
	turn_order=()
	for spec in "$@"; do
		IFS=: read -r label dut nports macs burst <<<"$spec"
		# start_gen's bursts
		gen_burst=${burst:-$bursts}
		run=$((run + 1))
		glog[$label]=$rundir/logs/$run-$label-gen.log
		start_ready "$dut" "$rundir/logs/$run-$label.log" "$nports" "${turn_sw_opts[@]}" ||
			continue
		# the turns, and the learning of 2 x MACS addresses (OVS: slowly)
		limit=$(awk -v n="$slices" -v s="$slice_s" -v d="$#" -v k="$macs" \
			'BEGIN { printf "%d", 300 + n * d * (s + 1) + k / 500 }')
		start_gen "$dut" "${glog[$label]}" "$limit" "$size" "$nports" "$macs" "$macs" \
			--warmup-s "$warmup" --duration-s 3600 --report-ms 100
		# learned, warmed up and forwarding: ticks past the warm-up
		ticks=$(awk -v w="$warmup" 'BEGIN { printf "%d", w * 10 + 5 }')
		for ((i = 0; i < 600 + macs / 100; i++)); do
			# the generator's shell may not have created its log yet
			v=$(awk '$1 == "TICK" { n++ } END { print n + 0 }' "${glog[$label]}" 2>/dev/null)
			v=${v:-0}
			[ "$v" -gt "$ticks" ] && break
			kill -0 "$gen_pid" 2>/dev/null || break
			sleep 0.1
		done
		gen[$label]=$(pgrep -P "$gen_pid")
		if [ "$v" -le "$ticks" ] || [ -z "${gen[$label]}" ]; then
			note "turns: $label's generator did not get going; its log:"
			grep -v '^EAL\|^TELEMETRY\|virtio_user_dev_init_mac\|^TICK' "${glog[$label]}" | tail -5 >&2
			stop_pid "$gen_pid" 10 INT
			forget_pid "$gen_pid"
			stop_dut "$dut" "$dut_pid" "$run"
			failures=$((failures + 1))
			continue
		fi
		kill -STOP "${gen[$label]}" "$dut_pid"
		gen_path[$dut]=$(gen_paths "${glog[$label]}")
		dpid[$label]=$dut_pid
		gpid[$label]=$gen_pid
		grun[$label]=$run:$dut
		turn_order+=("$label")
	done
	[ "${#turn_order[@]}" -gt 0 ] || return
	for ((r = 1; r <= slices; r++)); do
		for ((k = 0; k < ${#turn_order[@]}; k++)); do
			label=${turn_order[$(turn_index "$r" "$k" "${#turn_order[@]}")]}
			kill -CONT "${dpid[$label]}" "${gen[$label]}"
			t0=$(date +%s%N)
			sleep "$slice_s"
			t1=$(date +%s%N)
			kill -STOP "${gen[$label]}" "${dpid[$label]}"
			turn[$label,$r]=$(bench_tick_rate "${glog[$label]}" rx_pkts $((t0 + settle_ns)) "$t1")
			[ "${turn[$label,$r]}" -gt 0 ] || failures=$((failures + 1))
			calls=$(bench_tick_rate "${glog[$label]}" tx_calls $((t0 + settle_ns)) "$t1")
			full=$(bench_tick_rate "${glog[$label]}" tx_full $((t0 + settle_ns)) "$t1")
			turn_full[$label,$r]=$(awk -v c="$calls" -v f="$full" \
				'BEGIN { if (c > 0) printf "%.0f", 100 * f / c; else print "n/a" }')
		done
	done
	for label in "${turn_order[@]}"; do
		kill -CONT "${dpid[$label]}" "${gen[$label]}"
		stop_pid "${gpid[$label]}" 10 INT
		forget_pid "${gpid[$label]}"
		rm -rf /var/run/dpdk/"${prefix}g${grun[$label]%%:*}" 2>/dev/null
		stop_dut "${grun[$label]#*:}" "${dpid[$label]}" "${grun[$label]%%:*}"
	done
}

ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0 && b > 0) printf "%.2f", a / b; else print "n/a" }'
}
# not_below RATIOS: how many of the ratios are 1 or more, "K/N"
not_below() {
	tr ' ' '\n' <<<"$1" | awk 'NF { n++; k += $1 >= 1 } END { printf "%d/%d\n", k, n }'
}
# rounds_median RATIOS [DECIMALS]: their median (two decimals), n/a for none
rounds_median() {
	[ -n "$1" ] || { echo n/a; return; }
	tr ' ' '\n' <<<"$1" | sed '/^$/d' | sort -g |
		awk -v f="%.${2:-2}f\n" '{ v[NR] = $1 } END { if (NR % 2) printf f, v[(NR + 1) / 2];
		     else printf f, (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
mpps() {
	awk -v a="$1" 'BEGIN { if (a > 0) printf "%.3f", a / 1e6; else print "-" }'
}
