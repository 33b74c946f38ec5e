#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run the upstream tools/testing/selftests/prctl programs in the guest and
# print TAP.  Only set-process-name uses the kselftest harness; the
# disable-tsc programs report a failure on stdout or stderr and still exit
# 0, so their output is judged here:
#   disable-tsc-test                 rdtsc() raises SIGSEGV after
#                                    PR_SET_TSC(PR_TSC_SIGSEGV), and no
#                                    prctl() call fails;
#   disable-tsc-ctxt-sw-stress-test  no "FATAL ERROR" line in 10 s of
#                                    switching between tasks in both modes.
# Left out:
#   set-anon-vma-name-test           PR_SET_VMA_ANON_NAME needs
#                                    CONFIG_ANON_VMA_NAME, which the guest's
#                                    tinyconfig-based kernel lacks: it fails
#                                    there by design, with or without the
#                                    series;
#   disable-tsc-on-off-stress-test   under QEMU TCG, rdtsc() does not always
#                                    fault right after a task turns
#                                    PR_TSC_SIGSEGV on; it fails the same way
#                                    on vanilla 6.12.118 in this guest.
#
#   qemu/upstream-prctl.sh [DIR]      (default: build/selftests/prctl)
set -u
dir=${1:-$(cd "$(dirname "$0")/.." && pwd)/build/selftests/prctl}
n=0
failed=0

result() {
	n=$((n + 1))
	if [ "$1" = ok ]; then
		echo "ok $n - prctl/$2"
	else
		echo "not ok $n - prctl/$2: $3"
		failed=$((failed + 1))
	fi
}

# run NAME: the program's output in $out (also printed as comments), its
# exit status in $rc.  The stress test runs for 10 s, but on the KASAN
# kernel under TCG on a loaded host its tasks took more than 60 s to
# finish: the limit is generous, a hang still ends.
run() {
	out=$(cd /tmp && timeout -k 5 240 "$dir/$1" 2>&1)
	rc=$?
	printf '%s\n' "$out" | sed 's/^/# /'
}

echo "TAP version 13"
echo "1..3"

run disable-tsc-test
if [ $rc -ne 0 ]; then
	result fail disable-tsc-test "exit status $rc"
elif ! grep -q '\[ SIG_SEGV \]' <<< "$out"; then
	result fail disable-tsc-test "rdtsc() did not fault under PR_TSC_SIGSEGV"
elif grep -q '^prctl: ' <<< "$out"; then
	result fail disable-tsc-test "a prctl() call failed"
else
	result ok disable-tsc-test
fi

run disable-tsc-ctxt-sw-stress-test
if [ $rc -ne 0 ]; then
	result fail disable-tsc-ctxt-sw-stress-test "exit status $rc"
elif grep -q 'FATAL ERROR' <<< "$out"; then
	result fail disable-tsc-ctxt-sw-stress-test "$(grep -m1 'FATAL ERROR' <<< "$out")"
else
	result ok disable-tsc-ctxt-sw-stress-test
fi

run set-process-name
if [ $rc -eq 0 ]; then
	result ok set-process-name
else
	result fail set-process-name "exit status $rc"
fi

[ $failed -eq 0 ]
