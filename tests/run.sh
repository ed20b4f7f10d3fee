#!/usr/bin/env bash
# The whole test suite: install what is missing, build (warnings are errors),
# run the unit and integration tests, run them again under ASan + UBSan, then
# run each libFuzzer target for a bounded time on its committed corpus.
#
#   tests/run.sh              the suite (what CI runs)
#   tests/run.sh --fuzz-long  only the fuzz targets, each for HV_FUZZ_RUNS inputs
#                             (default 10 000 000; not in CI: about an hour on 2 cores)
#
# The Linux guests of the VMM (suite linux-guest: it builds the guest kernel
# and boots two guests, minutes where guest CPL0 is emulated) run once, after
# the gcc build, as their own step; not under ASan (doc/vmm.rst). Nor are the
# tests of suite sanitizer-skip (tests/*/meson.build say why, each).
#
#   HV_FUZZ_SECONDS   seconds per fuzz target (default 30; 0 skips fuzzing)
#   HV_FUZZ_RUNS      inputs per fuzz target with --fuzz-long
#   HV_TEST_HUGEPAGES 1 to run the DPDK tests on hugepages instead of --no-huge
set -uo pipefail

fuzz_long=0
case "${1:-}" in
"") ;;
--fuzz-long) fuzz_long=1 ;;
*)
	echo "usage: tests/run.sh [--fuzz-long]" >&2
	exit 2
	;;
esac

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 1
"$root/tests/deps.sh" || exit 1

fuzz_seconds=${HV_FUZZ_SECONDS:-30}
passed=0
failed=0
failures=()

# step NAME COMMAND...: run one step, count it, say how long it took (CI has a time limit)
step() {
	local name=$1 start=$SECONDS
	shift
	echo "=== $name"
	if "$@"; then
		passed=$((passed + 1))
		echo "=== $name: passed in $((SECONDS - start)) s"
	else
		failed=$((failed + 1))
		failures+=("$name")
		echo "=== $name: FAILED in $((SECONDS - start)) s"
	fi
}

configure() {
	local dir=$1
	shift
	if [ -f "$dir/build.ninja" ]; then
		meson configure "$dir" "$@" >/dev/null
	else
		meson setup "$dir" "$@"
	fi
}

build_and_test() {
	local dir=$1
	shift
	configure "$dir" --werror "$@" && ninja -C "$dir" &&
		meson test -C "$dir" --print-errorlogs --num-processes 1 --no-suite linux-guest \
			${HV_TEST_NO_SUITE:+--no-suite "$HV_TEST_NO_SUITE"}
}

# failed_tests LOG: each test of a meson run (its testlog.json) that did not
# pass or skip, with its result, duration and first lines that say why (FAIL:,
# sanitizer reports, assertions), a few lines each
failed_tests() {
	[ -f "$1" ] || return 0
	python3 - "$1" <<'PY'
import json, re, sys
why = re.compile(r"^(FAIL|ERROR|timeout)|Sanitizer|runtime error|Assertion|assert|\.c:[0-9]+:")
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r.get("result") in ("OK", "SKIP", "EXPECTEDFAIL"):
        continue
    print("FAILED TEST %s: %s after %.0f s (%s)" % (r["name"], r["result"], r.get("duration", 0), sys.argv[1]))
    out = (r.get("stdout") or "") + (r.get("stderr") or "")
    for text in [l for l in out.splitlines() if why.search(l)][:6]:
        print("    " + text[:200])
PY
}

# The libFuzzer targets: name and seed corpus (tests/fuzz/README.rst).
fuzz_targets=(
	"fuzz_msg tests/fuzz/corpus/msg"
	"fuzz_vring tests/fuzz/corpus/vring"
	"fuzz_packed tests/fuzz/corpus/packed"
	"fuzz_offload tests/fuzz/corpus/offload"
	"fuzz_vmm tests/fuzz/corpus/vmm"
	"fuzz_ctl tests/fuzz/corpus/ctl"
)

# One target on a scratch copy of its seeds, bounded by time or by inputs;
# prints libFuzzer's final statistics (stat::number_of_executed_units: inputs run).
# On a failure it also prints the report (assertion, sanitizer error, stack)
# and the failing input in base64, so that a CI log is enough to replay it.
fuzz_target() {
	local target=$1 corpus=$2 bound=$3 work rc unit
	work=$(mktemp -d)
	mkdir "$work/corpus"
	cp -r "$corpus"/. "$work/corpus"/
	"build-fuzz/tests/fuzz/$target" "$bound" -print_final_stats=1 \
		-artifact_prefix="$work/" "$work/corpus" >"$work/log" 2>&1
	rc=$?
	if [ "$rc" -ne 0 ]; then
		grep -E -A40 -m1 'ERROR|runtime error|\.c:[0-9]+: |deadly signal|leaked' "$work/log" |
			grep -v '^INFO' | head -n 60
		for unit in "$work"/crash-* "$work"/leak-* "$work"/timeout-* "$work"/oom-*; do
			[ -f "$unit" ] || continue
			echo "--- $(basename "$unit"), to replay: base64 -d > FILE; build-fuzz/tests/fuzz/$target FILE"
			base64 "$unit"
		done
	fi
	tail -n 12 "$work/log"
	rm -rf "$work"
	return "$rc"
}

fuzz_all() {
	local bound=$1 label=$2 t
	# only the targets: the rest of the tree is built and tested by the steps before
	local targets=""
	for t in "${fuzz_targets[@]}"; do
		targets+=" tests/fuzz/${t%% *}"
	done
	step "build fuzz targets (clang, libFuzzer)" bash -c \
		"if [ -f build-fuzz/build.ninja ]; then meson configure build-fuzz -Dfuzz=true >/dev/null; else CC=clang meson setup build-fuzz -Dfuzz=true; fi && ninja -C build-fuzz$targets"
	for t in "${fuzz_targets[@]}"; do
		# shellcheck disable=SC2086 # "name corpus"
		step "${t%% *} for $label" fuzz_target $t "$bound"
	done
}

if [ "$fuzz_long" -eq 1 ]; then
	fuzz_runs=${HV_FUZZ_RUNS:-10000000}
	fuzz_all "-runs=$fuzz_runs" "$fuzz_runs inputs"
else
	step "build + tests (gcc, -Wall -Wextra -Werror)" build_and_test build
	step "Linux guests of the VMM (guest kernel, suite linux-guest)" bash -c \
		"ninja -C build guest-kernel guest-initramfs && meson test -C build --no-rebuild --print-errorlogs --suite linux-guest --logbase testlog-linux-guest"
	# suite sanitizer-skip: minutes spent in peers (FRR, QEMU TCG) over code
	# that other tests already run under the sanitizers (tests/*/meson.build)
	step "build + tests under ASan/UBSan" env ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
		UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 HV_TEST_NO_SUITE=sanitizer-skip \
		bash -c "$(declare -f configure build_and_test); build_and_test build-asan -Dsanitizers=address,undefined -Db_lundef=false"
	if [ "$fuzz_seconds" -gt 0 ]; then
		fuzz_all "-max_total_time=$fuzz_seconds" "${fuzz_seconds}s"
	fi
fi

echo
echo "total: $SECONDS s"
for f in "${failures[@]}"; do
	echo "FAILED: $f"
done
# the failed tests of each build, last: a CI log may be read from its end only
for f in build/meson-logs/testlog.json build/meson-logs/testlog-linux-guest.json \
	build-asan/meson-logs/testlog.json; do
	failed_tests "$f"
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
