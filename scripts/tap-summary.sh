#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
#   scripts/tap-summary.sh DIR...
#
# Count the TAP results in DIR/*.tap (and DIR/guest/*.tap), list the
# results that upstream suites skipped, then the failures, and end with
# the line "N passed, N failed".  Exit status 0 only when nothing failed.
#
# Upstream selftests (files named timers_*) may skip what the kernel or the
# hardware cannot do, such as clocks without nanosleep; those skips are
# reported.  The project's own tests never skip: a skip there is a failure.
set -u
files=()
for d in "$@"; do
	for f in "$d"/*.tap "$d"/guest/*.tap; do
		[ -f "$f" ] && files+=("$f")
	done
done
own=()
upstream=()
for f in "${files[@]}"; do
	case ${f##*/} in
	timers_*) upstream+=("$f") ;;
	*) own+=("$f") ;;
	esac
done
results() { [ $# -gt 0 ] && cat "$@" | grep -E '^(not )?ok( |$)'; }
all=$(results "${files[@]}")
pass=$(grep -E '^ok( |$)' <<< "$all" | grep -vc '# SKIP')
fail=$(grep -Ec '^not ok( |$)' <<< "$all")
skip=$(results "${upstream[@]}" | grep -E '^ok( |$)' | grep -c '# SKIP')
ownskip=$(results "${own[@]}" | grep -E '^ok( |$)' | grep -c '# SKIP')
# Upstream suites skip what the kernel does not offer by design (clocks
# without clock_nanosleep(), say).  They are listed, not counted: the last
# line stays "N passed, N failed".
if [ "$skip" -gt 0 ]; then
	echo "==== $skip upstream results skipped by their own suite:"
	results "${upstream[@]}" | grep -E '^ok( |$)' | grep '# SKIP' | sed 's/^/  /'
fi
# The failures come last, just above the summary, where the tail of a
# long log (a CI report) still shows them.
if [ "$fail" -gt 0 ] || [ "$ownskip" -gt 0 ]; then
	echo "==== failures"
	grep -H -E '^not ok( |$)' "${files[@]}" | sed "s|^$PWD/||; s/^/  /"
	[ "$ownskip" -gt 0 ] && grep -H -E '^ok( |$).*# SKIP' "${own[@]}" | sed "s|^$PWD/||; s/^/  skipped: /"
fi
fail=$((fail + ownskip))
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
