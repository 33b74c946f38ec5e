#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The guest half of "make test-arm64": in the arm64 guest (qemu/run.sh with
# ZEROSLEEP_ARCH=arm64), run the programs that scripts/test-arm64.sh
# cross-built into build/arm64, and leave one TAP file per group in
# $ZEROSLEEP_OUT.  Each group's output is also copied to stdout, and each
# adds one line of its own for its exit status, so that a crash after some
# passing lines still counts as a failure.
#
#   qemu/guest-tests-arm64.sh patched    the 6.12 kernel with the series
#   qemu/guest-tests-arm64.sh vanilla    the same tree without it
#
# patched: the series' selftests (arm64 and AArch32 programs), upstream's
# timers/nanosleep (plain and under each policy: non-zero sleeps must not
# change), and the library's and the launcher's tests for a kernel with
# the feature.  vanilla: the library's tests for a kernel without it, the
# preload (dynamically linked, against the guest's arm64 libc) and the
# supervisor (statically linked programs: test-supervised under each
# policy, test-supervisor.sh, and test-supervised built for AArch32), then
# the supervisor's figures (bench/supervisor.sh), which are printed, not
# judged.  The group names of the project's own tests must not start with
# "timers_": scripts/tap-summary.sh lets only upstream suites skip.
set -u
mode=${1:-}
top=$(cd "$(dirname "$0")/.." && pwd)
out=${ZEROSLEEP_OUT:-/tmp/zerosleep-out}
mkdir -p "$out"
a=$top/build/arm64
ksft=$a/selftests
B=$a/libc-wrapper
echo "# guest: Linux $(uname -r) $(uname -m), $(nproc) CPUs, $mode"

# group, clock_ok, wait_for_highres
# shellcheck source=qemu/guest-lib.sh
. "$top/qemu/guest-lib.sh"

# The timing tests assume high-resolution timers (the arch timer), which
# start a moment after boot: wait for them, up to 20 s.
if wait_for_highres; then
	echo "ok - arm64 guest clock: clocksource $cs, high-resolution timers"
else
	echo "not ok - arm64 guest clock: clocksource ${cs:-?}, timer resolution ${res:-?} ns"
fi > "$out/guest_clock_arm64.tap"
cat "$out/guest_clock_arm64.tap"

# The libzerosleep tests (run-tests.sh), with the arm64 build; test-cli.sh
# gets a static program built on the host, as the guest has no compiler.
lib_tests=(env O="$B" STATIC_THREE="$B/three-static" TMPDIR=/tmp
	"$top/libc-wrapper/tests/run-tests.sh")

case $mode in
patched)
	group zero_sleep_policy_arm64 300 "$ksft/timers/zero_sleep_policy"
	group proc_timerslack_zero_policy_arm64 300 "$ksft/proc/proc-timerslack-zero-policy"
	# The same as AArch32 programs, through the compat entry points.
	group zero_sleep_policy_aarch32 300 "$ksft-armhf/timers/zero_sleep_policy"
	group proc_timerslack_zero_policy_aarch32 300 "$ksft-armhf/proc/proc-timerslack-zero-policy"
	group timers_nanosleep_arm64 300 "$ksft/timers/nanosleep"
	for p in return schedule full-slack; do
		group timers_nanosleep_${p}_arm64 300 "$B/zerosleep" $p -- "$ksft/timers/nanosleep"
	done
	group libzerosleep_arm64 1200 "${lib_tests[@]}" supported
	;;
vanilla)
	group libzerosleep_unsupported_arm64 1200 "${lib_tests[@]}" unsupported
	# An AArch32 program (CONFIG_COMPAT) under the supervisor: arm's
	# numbers, time32 and time64 calls.
	for p in return schedule full-slack; do
		group supervised_aarch32_$p 300 "$B/zerosleep" -q $p "$B/test-supervised-armhf" $p
	done
	echo "# ---- the supervisor's figures (bench/supervisor.sh; its goals are the x86 host's)"
	ZEROSLEEP_BENCH_BUILT=$B:$a/bench "$top/bench/supervisor.sh" 2>&1 |
		tee "$out/supervisor-bench.txt" | sed 's/^/# /'
	;;
*)
	echo "not ok - guest-tests-arm64.sh: mode is patched or vanilla, not '$mode'"
	exit 2
	;;
esac
