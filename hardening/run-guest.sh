#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run the hardening tests on the patched kernel, in the guest:
#
#   make run CMD='hardening/run-guest.sh [OPTIONS]'
#
#   --stress-seconds N  length of the stress run (default 60)
#   --fuzz-seed N       replay a fuzz run (default: a new seed, printed)
#   --fuzz-calls N      fuzz calls (default and minimum 100000)
#   --bin DIR           the test binaries (default: ../build/hardening)
#
# Each program prints TAP; this script adds one "# ..." line per program
# and exits non-zero if any of them failed.  It only reads the tree; the
# tests themselves write nothing but under /tmp.  Run as root.
set -u

here=$(cd "$(dirname "$0")" && pwd)
bin=$here/../build/hardening
stress_seconds=60
fuzz_args=()

usage() {
	sed -n '4,11p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 2
}

while [ $# -gt 0 ]; do
	case $1 in
	--stress-seconds) [ $# -ge 2 ] || usage; stress_seconds=$2; shift 2 ;;
	--fuzz-seed) [ $# -ge 2 ] || usage; fuzz_args+=(--seed "$2"); shift 2 ;;
	--fuzz-calls) [ $# -ge 2 ] || usage; fuzz_args+=(--calls "$2"); shift 2 ;;
	--bin) [ $# -ge 2 ] || usage; bin=$2; shift 2 ;;
	-h|--help) usage ;;
	*) echo "run-guest.sh: unknown argument '$1'" >&2; usage ;;
	esac
done

# The tests judge sleeps by the policy they set: start from the default
# (0, DEFAULT), which several of them check.
if [ -r /proc/self/timerslack_zero_policy ] &&
   [ "$(cat /proc/self/timerslack_zero_policy)" != 0 ]; then
	echo "0" > /proc/self/timerslack_zero_policy
fi

failed=()
run() {
	local name=$1 rc t0
	shift
	t0=$(date +%s)
	echo "# hardening: $name: $*"
	if [ ! -x "$bin/$name" ]; then
		echo "not ok - hardening/$name: $bin/$name is missing (run make -C hardening)"
		failed+=("$name")
		return
	fi
	(cd /tmp && "$bin/$name" "$@") 2>&1
	rc=$?
	echo "# hardening: $name: exit status $rc, $(( $(date +%s) - t0 )) s"
	[ $rc -eq 0 ] || failed+=("$name")
}

echo "# hardening: $(uname -r), $(nproc) CPUs"
# RT, the interrupt counts and the scheduler first, while the machine is
# quiet; the stress last.  clockstep steps CLOCK_REALTIME and puts it back.
run rt
run interrupts
run sched
run prctl
run procfs
run compat32
run timens
run clockstep
run fuzz "${fuzz_args[@]}"
run stress --seconds "$stress_seconds"

if [ ${#failed[@]} -ne 0 ]; then
	echo "# hardening: FAILED: ${failed[*]}"
	exit 1
fi
echo "# hardening: all passed"
exit 0
