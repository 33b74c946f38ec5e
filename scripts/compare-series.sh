#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# One source of truth for what the two series share: the userspace-api
# page, the selftests and the /proc documentation of the new file are the
# same text in the 6.12 and the 7.3 series; only kernel hunks differ.
#
#   scripts/compare-series.sh TREE_6_12 TREE_7_3
set -u -o pipefail
a=$1 b=$2
bad=0
show() { git -C "$1" show "zerosleep:$2" 2>/dev/null; }
section() {
	# The timerslack_zero_policy section of proc.rst, without its number.
	show "$1" Documentation/filesystems/proc.rst |
		sed -n '/^3\.[0-9]* \/proc\/<pid>\/timerslack_zero_policy/,/gives ESRCH\.$/p' | sed '1s/^3\.[0-9]* //'
}
# The series' own selftests files: those that selftests/ holds.
for f in Documentation/userspace-api/zero-length-sleeps.rst \
	$("$(dirname "$0")/sync-selftests.sh" --own "$(dirname "$0")/../selftests"); do
	if [ -z "$(show "$a" "$f")" ] || ! diff -u <(show "$a" "$f") <(show "$b" "$f") | head -n 20; then
		echo "compare-series.sh: $f differs between $a and $b" >&2
		bad=1
	fi
done
if [ -z "$(section "$a")" ] || ! diff -u <(section "$a") <(section "$b") | head -n 20; then
	echo "compare-series.sh: the proc.rst section on timerslack_zero_policy differs" >&2
	bad=1
fi
exit $bad
