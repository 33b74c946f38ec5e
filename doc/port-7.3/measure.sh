#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run in a guest (qemu/run.sh -k BZIMAGE -- doc/port-7.3/measure.sh PROBE MODE):
# zero-length sleeps under a few timer slacks, and under each zero-sleep
# policy when MODE is "policy" (a kernel with PR_SET_TIMERSLACK_ZERO_POLICY).
# PROBE is the zsprobe binary.  Output: one zsprobe line per case.
set -u
probe=$1
mode=${2:-vanilla}
echo "# $(uname -r), clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource), $(nproc) CPUs"
# COUNT per slack: about 0.2 s of sleeping at the slack, at least 200 calls.
run() { "$probe" "$@" || echo "zsprobe $* failed: $?"; }
for kind in rel abs; do
	for slack in 1 50000 10000000; do
		case $slack in 10000000) n=20 ;; *) n=2000 ;; esac
		run "$slack" - "$n" "$kind"
		if [ "$mode" = policy ]; then
			for p in 0 1 2 3; do
				run "$slack" "$p" "$n" "$kind"
			done
		fi
	done
done
