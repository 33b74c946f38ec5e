# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# Sourced by the shell test scripts that print TAP, as kselftest's
# ktap_helpers.sh is upstream: numbered results, "#" diagnostics, the plan,
# and a non-zero status when a test failed.
#
#   . "$top/scripts/tap.sh"
#   check DESC COMMAND...   run COMMAND in this shell, so that the script's
#                           functions and variables work (and
#                           "eval 'CONDITION'"), and print "ok N - DESC"
#                           when it succeeds, else "not ok N - DESC"
#   tap_result STATUS DESC  the same for a status already known: ok when
#                           STATUS is 0
#   tap_skip DESC REASON    "ok N - DESC # SKIP REASON"
#   tap_plan N              print the plan "1..N" now, before the tests
#   tap_end                 print the plan "1..N" after the tests (unless
#                           tap_plan did); return 1 if a test failed, or
#                           if tap_plan's N was not the number run
#
# Hooks, which a script sets to the name of one of its functions:
#   tap_on_fail             run after each "not ok" line of check, to print
#                           the script's own diagnostics ("#   ..." lines)
#                           on what failed: the last command's status and
#                           output, its log
#   tap_after_check         run after each check, passed or failed: to
#                           empty a log that the next check fills
#
# tap_n is the number of tests so far, tap_failed the number that failed.
# Only builtins run for a test that passes (the test guest runs under TCG,
# where every program started costs a fifth of a second), and nothing here
# needs more than sh.

tap_n=0
tap_failed=0
tap_planned=

tap_result() {
	tap_n=$((tap_n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $tap_n - $2"
	else
		tap_failed=$((tap_failed + 1))
		echo "not ok $tap_n - $2"
	fi
}

check() {
	tap_desc=$1
	shift
	if "$@"; then
		tap_result 0 "$tap_desc"
	else
		tap_result 1 "$tap_desc"
		[ -z "${tap_on_fail:-}" ] || "$tap_on_fail"
	fi
	[ -z "${tap_after_check:-}" ] || "$tap_after_check"
}

tap_skip() {
	tap_result 0 "$1 # SKIP $2"
}

tap_plan() {
	tap_planned=$1
	echo "1..$1"
}

tap_end() {
	if [ -z "$tap_planned" ]; then
		echo "1..$tap_n"
	elif [ "$tap_n" != "$tap_planned" ]; then
		echo "# planned $tap_planned tests, ran $tap_n"
		return 1
	fi
	[ "$tap_failed" = 0 ]
}
