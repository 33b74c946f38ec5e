#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# In the guest: trace a zero-length sleep under the launcher with the
# strace 7.2 that strace/build.sh patched, and check that strace names the
# new prctl and its policy.  The time of every sleep is printed too: this
# is the line that README shows.  The distribution's strace, which does
# not know the options, is run first for comparison.  TAP on stdout.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
b=$top/build
strace=$b/strace/obj/src/strace
launcher=$b/libc-wrapper/zerosleep
export LD_LIBRARY_PATH=$b/libc-wrapper
cmd=("$launcher" return -- python3 -c 'import time; time.sleep(0)')
opts=(-f -T -e trace=prctl,nanosleep,clock_nanosleep)
log=$(mktemp)
trap 'rm -f "$log"' EXIT

if [ ! -x "$strace" ]; then
	# make test builds it on the host first and reports a failed build;
	# without strace's source tree it says so and builds none.
	echo "1..0 # SKIP no patched strace at $strace (make strace, which needs ../shared/upstream/strace-7.2.tar.xz)"
	exit 0
fi
# shellcheck source=scripts/tap.sh
. "$top/scripts/tap.sh"
tap_plan 6
if [ -x /usr/bin/strace ] && /usr/bin/strace "${opts[@]}" -o "$log" "${cmd[@]}"; then
	echo "# the distribution's $(/usr/bin/strace -V | head -n 1):"
	sed 's/^/#   /' "$log"
fi

check "the patched strace traces 'zerosleep return -- python3' (exit status 0)" \
	"$strace" "${opts[@]}" -o "$log" "${cmd[@]}"
echo "# the patched strace ($("$strace" -V | head -n 1)):"
sed 's/^/#   /' "$log"
check "PR_SET_TIMERSLACK_ZERO_POLICY is decoded with the policy name PR_TIMERSLACK_ZERO_RETURN" \
	grep -q 'prctl(PR_SET_TIMERSLACK_ZERO_POLICY, PR_TIMERSLACK_ZERO_RETURN, 0, 0, 0) = 0' "$log"
check "no prctl is left undecoded (PR_???)" \
	bash -c '! grep -q "PR_???" "$1"' - "$log"
check "the sleep of time.sleep(0) is traced" \
	grep -q -E 'clock_nanosleep(_time64)?\(CLOCK_MONOTONIC, TIMER_ABSTIME, .*= 0 <[0-9.]+>$' "$log"
# The <time> of each sleep, in microseconds.
sed -n -E 's/^([0-9]+ +)?((clock_)?nanosleep)\(.* = (-?[0-9]+).* <([0-9.]+)>$/\2 \4 \5/p' "$log" |
	while read -r call rc secs; do
		echo "# $call = $rc: $(awk -v s="$secs" 'BEGIN { printf "%.0f", s * 1e6 }') us"
	done
check "the launcher's policy reaches the traced program (exit status 0)" \
	"$strace" -f -e trace=prctl -o "$log" "$launcher" return -- \
	python3 -c 'import ctypes; exit(ctypes.CDLL(None).prctl(0x545a5047, 0, 0, 0, 0) != 1)'
sed 's/^/#   /' "$log"
check "the return value of PR_GET_TIMERSLACK_ZERO_POLICY is decoded as PR_TIMERSLACK_ZERO_RETURN" \
	grep -q 'prctl(PR_GET_TIMERSLACK_ZERO_POLICY, 0, 0, 0, 0) = 1 (PR_TIMERSLACK_ZERO_RETURN)' "$log"
tap_end
