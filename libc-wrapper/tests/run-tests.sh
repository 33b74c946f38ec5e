#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Run every libzerosleep test program and the launcher tests as one TAP
# stream: one plan, test lines renumbered and prefixed with the program's
# name, and one more line per program for its exit status and plan.
#
#   run-tests.sh supported|unsupported
#
# Environment: O (the build directory, default ../../build/libc-wrapper from
# here); TEST_WRAPPER, CLI_WRAPPER and PRELOAD_WRAPPER, commands such as
# valgrind to run the test programs, the launcher and the programs under
# the preload library with; NO_SUPERVISOR, a reason not to run the
# supervised fallback's tests.  Reads only the source and build
# trees; writes only under $TMPDIR (default /tmp).
set -u
# The loop that reads each program's output runs in this shell (no /dev/fd
# is needed, which the test guest lacks).
shopt -s lastpipe

mode=${1:-}
case $mode in
supported|unsupported) ;;
*)	echo "usage: $0 supported|unsupported" >&2; exit 2 ;;
esac

here=$(cd "$(dirname "$0")" && pwd)
B=${O:-$here/../../build/libc-wrapper}
export ZEROSLEEP_EXPECT=$mode
export TMPDIR=${TMPDIR:-/tmp}
export LD_LIBRARY_PATH=$B${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export O=$B

read -ra wrapper <<<"${TEST_WRAPPER:-}"

n=0
failed=0

# part NAME COMMAND...: run one TAP producer and merge its output.
part() {
	local name=$1 line desc plan=none count=0 bad=0 status=none start=$SECONDS
	shift
	echo "# $name (ZEROSLEEP_EXPECT=$mode)"
	{ timeout 900 "$@" 2>&1; echo "@@exit $?"; } |
	while IFS= read -r line; do
		if [[ $line =~ ^(not\ )?ok\ [0-9]+(\ -)?\ ?(.*)$ ]]; then
			n=$((n + 1))
			count=$((count + 1))
			desc=${BASH_REMATCH[3]}
			if [[ -n ${BASH_REMATCH[1]} ]]; then
				failed=$((failed + 1))
				bad=$((bad + 1))
				echo "not ok $n - $name: $desc"
			else
				echo "ok $n - $name: $desc"
			fi
		elif [[ $line =~ ^1\.\.([0-9]+)$ ]]; then
			plan=${BASH_REMATCH[1]}
		elif [[ $line =~ ^@@exit\ ([0-9]+)$ ]]; then
			status=${BASH_REMATCH[1]}
		elif [[ $line == \#* ]]; then
			echo "$line"
		elif [[ -n $line ]]; then
			echo "# $name: $line"
		fi
	done

	echo "# $name took $((SECONDS - start)) s"
	n=$((n + 1))
	if [[ $status == 0 && $bad == 0 && $plan == "$count" ]] ||
	   [[ $status != 0 && $bad != 0 ]]; then
		echo "ok $n - $name exited with status $status, plan 1..$plan, $count tests run, $bad failed"
	else
		failed=$((failed + 1))
		echo "not ok $n - $name exited with status $status, plan 1..$plan, $count tests run, $bad failed"
	fi
}

if [[ ! -x $B/zerosleep || ! -x $B/test-lib || ! -x $B/test-internal ||
      ! -x $B/test-preload ]]; then
	echo "# $B lacks the programs: run 'make all tests' in libc-wrapper first"
fi

part test-lib "${wrapper[@]}" "$B/test-lib"
part test-internal "${wrapper[@]}" "$B/test-internal"
part test-preload "${wrapper[@]}" "$B/test-preload"
part test-cli "$here/test-cli.sh"
[[ $mode == unsupported ]] && part test-completion "$here/test-completion.sh"
# The supervised fallback: only on a kernel without the series, where the
# launcher starts it.  zerosleep-early answers full-slack with its own
# timers, as on a kernel whose zero-length sleep returns early.
if [[ $mode == unsupported && -n ${NO_SUPERVISOR:-} ]]; then
	echo "# the supervised fallback's tests not run: $NO_SUPERVISOR"
elif [[ $mode == unsupported ]]; then
	read -ra cli <<<"${CLI_WRAPPER:-}"
	for policy in return schedule full-slack; do
		part "supervised-$policy" "${cli[@]}" "$B/zerosleep" -q "$policy" \
			"$B/test-supervised" "$policy"
	done
	part supervised-full-slack-timers "${cli[@]}" "$B/zerosleep-early" -q \
		full-slack "$B/test-supervised" full-slack
	part test-supervisor "$here/test-supervisor.sh"
fi

echo "1..$n"
if ((failed)); then
	echo "# $failed of $n failed"
	exit 1
fi
exit 0
