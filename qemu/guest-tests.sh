#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The guest half of "make test": run every test that needs the patched
# kernel and leave one TAP file per group in $ZEROSLEEP_OUT.  Each group's
# output is also copied to stdout.  Every group adds one line of its own,
# for its exit status, so that a crash after some passing lines still
# counts as a failure.
#
#   qemu/guest-tests.sh [GROUP...]     (default: all groups)
#   qemu/guest-tests.sh --lowres       (a boot with "highres=off nohz=off")
#
# --lowres runs the tests that need a kernel without high-resolution timers
# and NOHZ, where a CPU's clock offsets are updated only at its tick; it
# first checks that the boot really has low resolution.
#
# The same groups run on 6.12 and on 7.3.  What differs is taken from the
# running kernel: the selftests built against its tree (build/selftests for
# 6.12, build/selftests-7.3 for 7.3: timers/, proc/ and prctl/ as in the
# tree; the series' two also as 32-bit programs, in build/selftests-m32 and
# build/selftests-7.3-m32) and the list of upstream checks that fail on
# that vanilla kernel too (qemu/posix_timers-X.Y.known-failures).  The
# group names of the series' own tests must not start with "timers_":
# scripts/tap-summary.sh lets only upstream suites (timers_*) skip.
set -u
lowres=
if [ "${1:-}" = --lowres ]; then
	lowres=1
	shift
fi
top=$(cd "$(dirname "$0")/.." && pwd)
out=${ZEROSLEEP_OUT:-/tmp/zerosleep-out}
mkdir -p "$out"
b=$top/build
export LD_LIBRARY_PATH=$b/libc-wrapper
kv=$(uname -r | cut -d. -f1,2)
case $kv in
6.12) ksft=$b/selftests ;;
*) ksft=$b/selftests-$kv ;;
esac
if [ ! -x "$ksft/timers/zero_sleep_policy" ]; then
	echo "not ok - no selftests built for Linux $kv in $ksft (make selftests KERNEL=$kv)"
	exit 1
fi
echo "# guest: Linux $(uname -r), selftests from $ksft"

# group, clock_ok, wait_for_highres
# shellcheck source=qemu/guest-lib.sh
. "$top/qemu/guest-lib.sh"

# Every timing test assumes a guest with high-resolution timers (but for
# --lowres, which needs a boot without them: it checks that).  A boot
# without them, which a loaded host may cause (a clock that fails its
# calibration), runs no test and exits with status 3: scripts/test.sh
# boots again.  High resolution starts once a clocksource that allows it
# is up, a second or two after boot: wait for it, up to 20 s.
if [ -n "$lowres" ]; then
	clock_ok	# for $res
	if [ -n "$res" ] && [ "$res" != 1 ] && grep -qw 'highres=off' /proc/cmdline &&
	   grep -qw 'nohz=off' /proc/cmdline; then
		echo "ok - guest clock: low resolution ($res ns), no NOHZ"
	else
		echo "not ok - guest clock: timer resolution ${res:-?} ns, command line $(cat /proc/cmdline): not a low-resolution boot"
	fi > "$out/guest_clock_lowres.tap"
	cat "$out/guest_clock_lowres.tap"
	grep -q '^ok' "$out/guest_clock_lowres.tap" || exit 1
	# Absolute sleeps right after the clock was stepped: without high
	# resolution and NOHZ the CPU's offsets stay stale until its tick.
	group clockstep_lowres 300 "$b/hardening/clockstep"
	grep -q '^ok' "$out/clockstep_lowres.tap" && ! grep -q '^not ok' "$out/clockstep_lowres.tap"
	exit
fi
if wait_for_highres; then
	echo "ok - guest clock: clocksource $cs, high-resolution timers"
else
	echo "not ok - guest clock: clocksource ${cs:-?}, timer resolution ${res:-?} ns: the timing tests below cannot hold"
	dmesg | grep -E 'clocksource|tsc:|APIC timer' | sed 's/^/# /'
fi > "$out/guest_clock.tap"
cat "$out/guest_clock.tap"
grep -q '^ok' "$out/guest_clock.tap" || exit 3

# posix_timers' ITIMER_VIRTUAL and ITIMER_PROF checks spin for 2 s of CPU
# time and allow 0.5 s more of wall time.  A vCPU that the host does not
# run misses ticks, and the spin is charged one tick for several: on a
# busy host these checks fail.  When scripts/test.sh boots guests side by
# side, it leaves "quiet-arbiter" in $ZEROSLEEP_OUT and gives the guests
# turns, one at a time (the spinning vCPU gets a host core and more): each runs
# posix_timers first, in its turn, while the others wait and nothing
# compiles on the host.  Ask for the turn, wait for it, give it back, and
# wait until every guest has had its own (at most 600 s each).
quiet_begin() {
	[ -e "$out/quiet-arbiter" ] || return 0
	touch "$out/quiet-wanted"
	local t0=$SECONDS
	while [ ! -e "$out/quiet-granted" ] && [ $((SECONDS - t0)) -lt 600 ]; do
		sleep 0.5
	done
	echo "# CPU-time checks: $([ -e "$out/quiet-granted" ] && echo "our turn" || echo "no turn") after $((SECONDS - t0)) s"
}
quiet_end() {
	[ -e "$out/quiet-arbiter" ] || return 0
	rm -f "$out/quiet-wanted"
	touch "$out/quiet-released"
	local t0=$SECONDS
	while [ ! -e "$out/quiet-over" ] && [ $((SECONDS - t0)) -lt 600 ]; do
		sleep 0.5
	done
	echo "# CPU-time checks: every guest's turn over after $((SECONDS - t0)) s more"
}

all="selftests upstream-timers upstream-prctl lib man-examples hardening bench-short strace"
# shellcheck disable=SC2068 # the default list is split on purpose
groups=" $(echo ${@:-$all}) "
# upstream-timers: posix_timers first, in this guest's turn (quiet_begin).
if [ -z "${groups##* upstream-timers *}" ]; then
	quiet_begin
	group timers_posix_timers 600 "$top/qemu/known-failures.sh" \
		"$top/qemu/posix_timers-$kv.known-failures" "$ksft/timers/posix_timers"
	quiet_end
fi
for g in $groups; do
	case $g in
	selftests)
		# The series' contract tests, built by the tree's selftests
		# Makefiles (timers/ and proc/); the rest is in hardening.
		group zero_sleep_policy 300 "$ksft/timers/zero_sleep_policy"
		group proc_timerslack_zero_policy 300 "$ksft/proc/proc-timerslack-zero-policy"
		# The same as 32-bit programs, through the IA-32 entry points.
		group zero_sleep_policy_m32 300 "$ksft-m32/timers/zero_sleep_policy"
		group proc_timerslack_zero_policy_m32 300 "$ksft-m32/proc/proc-timerslack-zero-policy"
		;;
	upstream-timers)
		group timers_nanosleep 300 "$ksft/timers/nanosleep"
		# Non-zero sleeps must not change under the other policies.
		for p in return schedule full-slack; do
			group timers_nanosleep_$p 300 "$b/libc-wrapper/zerosleep" $p -- \
				"$ksft/timers/nanosleep"
		done
		;;
	upstream-prctl)
		group upstream_prctl 600 "$top/qemu/upstream-prctl.sh" "$ksft/prctl"
		;;
	lib)
		group libzerosleep 900 "$top/libc-wrapper/tests/run-guest.sh"
		;;
	man-examples)
		group man_examples 300 "$top/man/check.sh" run-examples "$b/man/examples"
		;;
	hardening)
		group hardening 1200 "$top/hardening/run-guest.sh"
		;;
	bench-short)
		group bench_short 600 "$top/bench/run-guest.sh" --short --kernel zerosleep
		;;
	strace)
		group strace 300 "$top/qemu/strace-guest.sh"
		;;
	*)
		echo "not ok - unknown test group '$g'"
		;;
	esac
done
