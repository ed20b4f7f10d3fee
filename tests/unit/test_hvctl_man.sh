#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# hvctl(1) and the bash completion file: the man page renders without groff
# warnings and has a section for each verb and sub-verb hvctl knows (its
# completion lists them), each with that command's usage line; the
# completion file makes bash ask hvctl, which offers the verbs and sub-verbs.
# hvswitch(8) renders without warnings and documents every daemon option
# its --help lists.
# usage: test_hvctl_man.sh HVCTL_1 COMPLETION_FILE HVSWITCH_8 ($HVCTL, $HVSWITCH: the binaries)
set -uo pipefail
man=$1 comp=$2 man8=$3
: "${HVCTL:?}" "${HVSWITCH:?}"
fail() { echo "FAIL: $*" >&2; exit 1; }
cands() { COMP_LINE="$1" COMP_POINT=${#1} "$HVCTL" | grep -v '^-'; }

warn=$(groff -man -Tutf8 -ww -z "$man" 2>&1) || fail "groff: $warn"
[ -z "$warn" ] || fail "groff warnings: $warn"
text=$(groff -man -Tascii -P-cbou "$man" 2>/dev/null) || fail "groff could not render $man"
grep -q "^NAME" <<<"$text" || fail "no NAME section"
verbs=$("$HVCTL" --help | sed -n '/^verbs:/,$p' | awk 'NR > 1 { print $1 }')
[ -n "$verbs" ] || fail "hvctl --help lists no verbs"
[ "$(cands "hvctl " | sort)" = "$(echo "$verbs" | sort)" ] ||
	fail "completion offers '$(cands "hvctl " | tr '\n' ' ')', --help lists '$(echo $verbs)'"
n=0
for v in $verbs; do
	[ "$v" = help ] && continue
	grep -q "^   hvctl $v\$" <<<"$text" || fail "no section for verb '$v'"
	for s in $(cands "hvctl $v "); do
		sec=$(echo "$text" | sed -n "/^   hvctl $v $s\$/,/^   hvctl /p")
		[ -n "$sec" ] || fail "no section for 'hvctl $v $s'"
		grep -q "usage: hvctl $v $s" <<<"$sec" || fail "'hvctl $v $s': no usage line"
		n=$((n + 1))
	done
done
[ "$n" -ge 15 ] || fail "only $n sub-verbs documented"
# the completion file: bash runs hvctl for hvctl's words
[ "$(bash -c ". '$comp'; complete -p hvctl")" = "complete -o default -C 'hvctl' hvctl" ] ||
	fail "completion file: $(bash -c ". '$comp'; complete -p hvctl" 2>&1)"
# hvswitch(8): each --option of the daemon's help has its line
warn=$(groff -man -Tutf8 -ww -z "$man8" 2>&1) || fail "groff: $warn"
[ -z "$warn" ] || fail "hvswitch.8: groff warnings: $warn"
text8=$(groff -man -Tascii -P-cbou "$man8" 2>/dev/null) || fail "groff could not render $man8"
grep -q "^NAME" <<<"$text8" || fail "hvswitch.8: no NAME section"
opts=$("$HVSWITCH" -- --help | grep -o -E '^  --[a-z-]+' | tr -d ' ')
[ "$(wc -w <<<"$opts")" -ge 10 ] || fail "hvswitch -- --help lists only: $opts"
for o in $opts; do
	grep -q -- "^ *$o" <<<"$text8" || fail "hvswitch.8: no $o"
done
echo "PASS: $(echo $verbs | wc -w) verbs, $n sub-verbs; hvswitch(8): $(wc -w <<<"$opts") options"
