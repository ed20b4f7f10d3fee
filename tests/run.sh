#!/usr/bin/env bash
# The whole test suite: install what is missing, build (warnings are errors),
# run the unit and integration tests, run them again under ASan + UBSan, then
# run each libFuzzer target for a bounded time on its committed corpus.
#
#   HV_FUZZ_SECONDS   seconds per fuzz target (default 60; 0 skips fuzzing)
#   HV_TEST_HUGEPAGES 1 to run the DPDK tests on hugepages instead of --no-huge
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
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
		meson test -C "$dir" --print-errorlogs --num-processes 1
}

step "build + tests (gcc, -Wall -Wextra -Werror)" build_and_test build
step "build + tests under ASan/UBSan" env ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	bash -c "$(declare -f configure build_and_test); build_and_test build-asan -Dsanitizers=address,undefined -Db_lundef=false"

fuzz_target() {
	local target=$1 corpus=$2 work
	work=$(mktemp -d)
	cp -r "$corpus"/. "$work"/
	"build-fuzz/tests/fuzz/$target" -max_total_time="$fuzz_seconds" -print_final_stats=1 \
		"$work" 2>&1 | tail -n 12
	local rc=${PIPESTATUS[0]}
	rm -rf "$work"
	return "$rc"
}

if [ "$fuzz_seconds" -gt 0 ]; then
	step "build fuzz targets (clang, libFuzzer)" bash -c \
		"if [ -f build-fuzz/build.ninja ]; then meson configure build-fuzz -Dfuzz=true >/dev/null; else CC=clang meson setup build-fuzz -Dfuzz=true; fi && ninja -C build-fuzz"
	step "fuzz_msg for ${fuzz_seconds}s" fuzz_target fuzz_msg tests/fuzz/corpus/msg
	step "fuzz_vring for ${fuzz_seconds}s" fuzz_target fuzz_vring tests/fuzz/corpus/vring
	step "fuzz_offload for ${fuzz_seconds}s" fuzz_target fuzz_offload tests/fuzz/corpus/offload
fi

echo
for f in "${failures[@]}"; do
	echo "FAILED: $f"
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
