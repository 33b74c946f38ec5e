#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench-supervisor: on this host, with no kernel built, the cost of a
# statically linked program's nanosleep() under the launcher's supervised
# fallback (zerosleep return, which the host's kernel lacks the series
# for), against the same program run plain:
#   - a zero-length sleep at the default timer slack (50 us) and at 10 ms;
#   - a non-zero sleep (1 us), which the supervisor lets continue: what the
#     round trip through it adds.
# Prints each figure (median and mean per call) and the goals of issue 30
# with PASS or FAIL.  Then what this machine allows any supervisor: one
# system call (getppid()), and the floor, a seccomp notification answered
# with nothing but SECCOMP_IOCTL_NOTIF_RECV and _SEND (supervisor-bench
# --floor), which the launcher's supervisor's own work is measured against.
#
# ZEROSLEEP_BENCH_BUILT=LIBDIR:BENCHDIR builds nothing and takes the
# launcher from LIBDIR and supervisor-bench from BENCHDIR: in a guest with
# no compiler (make test-arm64 cross-builds them).
#
# Exit status: 0 when every goal is met, 1 when one is not, 2 on error.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
if [ -n "${ZEROSLEEP_BENCH_BUILT:-}" ]; then
	B=${ZEROSLEEP_BENCH_BUILT%%:*}
	O=${ZEROSLEEP_BENCH_BUILT#*:}
else
	B=$top/build/libc-wrapper
	O=$top/build/bench
	make -s -C "$top/libc-wrapper" O="$B" all || exit 2
	make -s -C "$top/bench" O="$O" "$O/supervisor-bench" || exit 2
fi
ZS=$B/zerosleep
P=$O/supervisor-bench

# run LABEL COMMAND...: "median mean" of the run, in ns, into $LABEL.
declare -A med mean
run() {
	local label=$1 out
	shift
	out=$("$@") || exit 2
	med[$label]=${out% *}
	mean[$label]=${out#* }
	printf '  %-44s median %9.2f us, mean %9.2f us\n' "$label" \
		"$(bc -l <<<"${med[$label]} / 1000")" "$(bc -l <<<"${mean[$label]} / 1000")"
}

echo "supervisor benchmark: $(uname -r) $(uname -m), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
run "plain, zero-length, 50 us slack" "$P" 50000 0 2000
run "return, zero-length, 50 us slack" "$ZS" -q return "$P" 50000 0 20000
run "plain, zero-length, 10 ms slack" "$P" 10000000 0 100
run "return, zero-length, 10 ms slack" "$ZS" -q return "$P" 10000000 0 20000
run "plain, 1 us, 1 ns slack" "$P" 1 1000 2000
run "return, 1 us, 1 ns slack (continued)" "$ZS" -q return "$P" 1 1000 2000

pass=0
goal() {
	if (( $(bc -l <<<"$2") )); then
		echo "  PASS  $1"
	else
		echo "  FAIL  $1"
		pass=1
	fi
}
echo "goals (medians):"
goal "return: at most 10 us per zero-length call ($(bc <<<"${med[return, zero-length, 50 us slack]} / 1000") us)" \
	"${med[return, zero-length, 50 us slack]} <= 10000"
goal "at default slack, 5x faster than plain ($(bc <<<"${med[plain, zero-length, 50 us slack]} / ${med[return, zero-length, 50 us slack]}")x)" \
	"${med[plain, zero-length, 50 us slack]} >= 5 * ${med[return, zero-length, 50 us slack]}"
goal "at 10 ms slack, 1000x faster than plain ($(bc <<<"${med[plain, zero-length, 10 ms slack]} / ${med[return, zero-length, 10 ms slack]}")x)" \
	"${med[plain, zero-length, 10 ms slack]} >= 1000 * ${med[return, zero-length, 10 ms slack]}"
extra=$(( ${med[return, 1 us, 1 ns slack (continued)]} - ${med[plain, 1 us, 1 ns slack]} ))
goal "a non-zero sleep pays at most 15 us more ($((extra / 1000)) us)" "$extra <= 15000"

echo "what this machine allows any supervisor:"
run "one system call, getppid()" "$P" --syscall 100000
run "floor: zero-length, RECV and SEND alone" "$P" --floor 20000
own=$(( ${med[return, zero-length, 50 us slack]} - ${med[floor: zero-length, RECV and SEND alone]} ))
echo "  the supervisor's own work above the floor: $(bc <<<"scale=2; $own / 1000") us a call"
echo "  return at 50 us slack against the floor: $(bc <<<"scale=2; ${med[return, zero-length, 50 us slack]} / ${med[floor: zero-length, RECV and SEND alone]}")x (SPEC: at most 1.5x)"
exit $pass
