#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs in the guest (make demo): sleep(0) in a loop, in C and in Python,
# under a 10 ms timer slack, started through each zero-length sleep policy
# by the zerosleep launcher.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
zs=$top/build/libc-wrapper/zerosleep
export LD_LIBRARY_PATH=$top/build/libc-wrapper
rate=$top/build/demo/sleep0-rate
slack=$top/build/demo/timerslack
py='import resource, time
r0 = resource.getrusage(resource.RUSAGE_SELF)
n = 0
t0 = time.monotonic()
while True:
    for _ in range(16):
        time.sleep(0)
    n += 16
    t = time.monotonic() - t0
    if t >= 1.0:
        break
r1 = resource.getrusage(resource.RUSAGE_SELF)
print(round(n / t), (r1.ru_nvcsw - r0.ru_nvcsw) / n, (r1.ru_nivcsw - r0.ru_nivcsw) / n)'

row() {
	awk -v p="$1" -v pol="$2" -v cps="$3" -v sw="$4" -v isw="$5" 'BEGIN {
		printf "%-24s %-20s %10d %12.1f %14.2f\n", p, pol, cps, 1e6 / cps, sw + isw }'
}

echo
echo "Kernel: $(uname -r), QEMU TCG guest, $(nproc) CPUs"
echo "Every program below runs under a 10 ms timer slack (PR_SET_TIMERSLACK),"
echo "as on power-tuned systems, and is started as:"
echo "    timerslack 10000000 zerosleep POLICY -- PROGRAM"
echo
printf '%-24s %-20s %10s %12s %14s\n' program policy calls/s "us/call" "switches/call"
printf '%-24s %-20s %10s %12s %14s\n' ------- ------ ------- ------- -------------
for policy in default return-immediately schedule-once full-slack; do
	read -r cps vcs ics < <("$slack" 10000000 "$zs" "$policy" -- "$rate" 1)
	row "C sleep(0)" "$policy" "$cps" "$vcs" "$ics"
done
for policy in default return-immediately schedule-once full-slack; do
	read -r cps vcs ics < <("$slack" 10000000 "$zs" "$policy" -- python3 -c "$py")
	row "python3 time.sleep(0)" "$policy" "$cps" "$vcs" "$ics"
done
echo
echo "default is the kernel's own behaviour: on Linux 6.12 each zero-length sleep"
echo "arms a timer and sleeps for the whole slack; full-slack does that on every"
echo "kernel, also on 7.2 and later, which often return early.  return-immediately"
echo "returns at once, without entering the scheduler; schedule-once gives the CPU"
echo "away once, like sched_yield(), so other runnable threads still get their turn."
