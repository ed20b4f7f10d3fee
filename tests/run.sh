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
# the gcc build, as their own step; not under ASan (doc/vmm.rst).
#
#   HV_FUZZ_SECONDS   seconds per fuzz target (default 60; 0 skips fuzzing)
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

fuzz_seconds=${HV_FUZZ_SECONDS:-60}
passed=0
failed=0
failures=()

step() {
	local name=$1
	shift
	echo "=== $name"
	if "$@"; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		failures+=("$name")
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
		meson test -C "$dir" --print-errorlogs --num-processes 1 --no-suite linux-guest
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
fuzz_target() {
	local target=$1 corpus=$2 bound=$3 work
	work=$(mktemp -d)
	cp -r "$corpus"/. "$work"/
	"build-fuzz/tests/fuzz/$target" "$bound" -print_final_stats=1 \
		"$work" 2>&1 | tail -n 12
	local rc=${PIPESTATUS[0]}
	rm -rf "$work"
	return "$rc"
}

fuzz_all() {
	local bound=$1 label=$2 t
	step "build fuzz targets (clang, libFuzzer)" bash -c \
		"if [ -f build-fuzz/build.ninja ]; then meson configure build-fuzz -Dfuzz=true >/dev/null; else CC=clang meson setup build-fuzz -Dfuzz=true; fi && ninja -C build-fuzz"
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
		"ninja -C build guest-kernel guest-initramfs && meson test -C build --no-rebuild --print-errorlogs --suite linux-guest"
	step "build + tests under ASan/UBSan" env ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
		UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		bash -c "$(declare -f configure build_and_test); build_and_test build-asan -Dsanitizers=address,undefined -Db_lundef=false"
	if [ "$fuzz_seconds" -gt 0 ]; then
		fuzz_all "-max_total_time=$fuzz_seconds" "${fuzz_seconds}s"
	fi
fi

echo
for f in "${failures[@]}"; do
	echo "FAILED: $f"
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
