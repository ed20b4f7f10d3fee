#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The C sources follow .clang-format: lists each file that does not, with the
# first differences, and fails. Fix with: clang-format -i FILE
set -u -o pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 1
cf=${CLANG_FORMAT:-clang-format}
if git rev-parse --git-dir >/dev/null 2>&1; then
	files=$(git ls-files '*.c' '*.h')
else
	files=$(find app drivers lib tests -name '*.[ch]')
fi
bad=0
for f in $files; do
	[ -f "$f" ] || continue
	if ! "$cf" --style=file --dry-run -Werror "$f" >/dev/null 2>&1; then
		echo "not formatted: $f"
		"$cf" --style=file "$f" | diff -u "$f" - | head -n 12
		bad=$((bad + 1))
	fi
done
echo "check_format: $bad file(s) not formatted"
[ "$bad" -eq 0 ]
