#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make test-arm64: the 6.12 series and the userspace on arm64, Debian's
# second architecture, under qemu-system-aarch64 ("virt", TCG).  Outside
# make test, whose CI has no time for two more cold kernel builds.
#
#   scripts/test-arm64.sh
#
# From a clean checkout, as root:
#  1. the packages that the trees need (scripts/deps.sh) and
#     qemu-system-arm, installed by name;
#  2. Debian's gcc-12-aarch64-linux-gnu and an arm64 userland for the
#     guest, both unpacked under build/arm64 (scripts/arm64-fetch.sh): the
#     cross compiler conflicts with gcc-multilib, which make test needs, so
#     it is never installed;
#  3. the trees: build/linux (Debian's linux-source-6.12 with series/6.12,
#     as make tree makes it) and build/linux-vanilla (the same source
#     without the series);
#  4. two kernels, tinyconfig + qemu/arm64.config + qemu/kernel-6.12.config,
#     out of tree in build/kernel-arm64 and build/kernel-arm64-vanilla,
#     each rebuilt only when its source or fragments changed;
#  5. the userspace, cross-built with -Werror into build/arm64/libc-wrapper,
#     the series' selftests and upstream's timers/nanosleep, static, into
#     build/arm64/selftests (the series' two also as AArch32 programs, in
#     build/arm64/selftests-armhf), and the supervisor's benchmark program;
#  6. two boots (qemu/guest-tests-arm64.sh): the patched kernel runs the
#     selftests and the library's and launcher's tests; the vanilla one
#     the same for a kernel without the series, where the launcher falls
#     back to the preload and to the supervisor (the launcher has no way
#     to choose a fallback on a kernel that has the series), then prints
#     the supervisor's figures.  Meanwhile a SCHED_IDLE busy loop per
#     host CPU keeps the host from idling (see below).
# It ends with scripts/tap-summary.sh's "N passed, N failed" line, over the
# TAP files in build/arm64/results/{patched,vanilla}; exit status 0 only
# when nothing failed.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
b=$top/build
a=$b/arm64
t0=$SECONDS
step() { echo "==== $* ($((SECONDS - t0)) s)"; }

step "packages"
scripts/deps.sh
if [ "$(dpkg-query -W -f='${db:Status-Status}' qemu-system-arm 2>/dev/null || true)" != installed ]; then
	echo "  DEPS    installing: qemu-system-arm"
	if [ "$(id -u)" != 0 ]; then
		echo "test-arm64.sh: qemu-system-arm is missing and installing it needs root" >&2
		exit 1
	fi
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends qemu-system-arm > /dev/null
fi

step "cross toolchain and guest userland"
scripts/arm64-fetch.sh "$a"
# shellcheck source=scripts/arm64-env.sh
. scripts/arm64-env.sh

step "trees"
tarball=$(scripts/kernel-source.sh 6.12)
scripts/tree.sh "$b/linux" series/6.12 "$tarball"
scripts/tree.sh "$b/linux-vanilla" - "$tarball"

step "kernels"
frags=(qemu/arm64.config qemu/kernel-6.12.config)
ZEROSLEEP_KARCH=arm64 nice -n 10 scripts/build-kernel.sh "$b/linux" "$b/kernel-arm64" "${frags[@]}"
ZEROSLEEP_KARCH=arm64 nice -n 10 scripts/build-kernel.sh "$b/linux-vanilla" "$b/kernel-arm64-vanilla" "${frags[@]}"

step "userspace"
cross=(CC="$ARM64_CC" AR=aarch64-linux-gnu-ar)
nice -n 10 make -s -C libc-wrapper O="$a/libc-wrapper" "${cross[@]}" WERROR=-Werror all tests
# For test-cli.sh, which would compile it in the guest.
printf 'int main(void) { return 3; }\n' | $ARM64_CC -x c -static -o "$a/libc-wrapper/three-static" -
# test-supervised as an AArch32 program, built as the Makefile builds it.
$ARMHF_CC -std=c11 -Wall -Wextra -Werror -O2 -D_GNU_SOURCE -Ilibc-wrapper/include -static \
	-o "$a/libc-wrapper/test-supervised-armhf" libc-wrapper/tests/test-supervised.c -pthread
nice -n 10 make -s -C bench O="$a/bench" "${cross[@]}" "$a/bench/supervisor-bench"
ksft=$b/linux/tools/testing/selftests
for p in timers/zero_sleep_policy timers/nanosleep proc/proc-timerslack-zero-policy; do
	mkdir -p "$a/selftests/${p%/*}"
	nice -n 10 make -s -C "$ksft/${p%/*}" OUTPUT="$a/selftests/${p%/*}" ARCH=arm64 \
		CROSS_COMPILE="$CROSS_COMPILE" KHDR_INCLUDES="-isystem $b/kernel-arm64/usr/include" \
		USERLDFLAGS=-static "$a/selftests/$p"
done
# The series' two again as AArch32 programs, through the compat entry
# points (as make selftests builds them with -m32 for IA-32); the new
# definitions come from uapi/, the rest from the armhf cross libc's headers.
for p in timers/zero_sleep_policy proc/proc-timerslack-zero-policy; do
	mkdir -p "$a/selftests-armhf/${p%/*}"
	nice -n 10 make -s -C "$ksft/${p%/*}" OUTPUT="$a/selftests-armhf/${p%/*}" ARCH=arm \
		CROSS_COMPILE=arm-linux-gnueabihf- KHDR_INCLUDES="-isystem $top/uapi" \
		USERLDFLAGS=-static "$a/selftests-armhf/$p"
done

# While the guests run, one SCHED_IDLE busy loop per host CPU keeps the
# host's CPUs from going idle.  On a host that is itself a virtual machine
# an idle CPU halts into the hypervisor, and waking it again takes up to
# milliseconds: a wake-up from one guest vCPU to the other then took a
# median 254-278 us, 90th percentile 0.4-1.8 ms, on the development host,
# and 140-145 us, 90th percentile 0.2 ms, with the loops running (a pipe
# ping-pong between two pinned threads in the vanilla guest).  That tail
# is longer than the margins of the supervised fallback's timing checks,
# whose answers cross vCPUs twice (schedule, full-slack); in eight runs of
# those programs, idle: 30 failed checks, kept busy: none.  SCHED_IDLE
# yields the CPU to any other task at once, so the loops take nothing from
# QEMU's threads.  ZEROSLEEP_ARM64_SPIN=0 leaves them out.
spinners=()
stop_spinners() {
	[ ${#spinners[@]} -eq 0 ] || kill "${spinners[@]}" 2> /dev/null || true
	spinners=()
}
trap stop_spinners EXIT
if [ "${ZEROSLEEP_ARM64_SPIN:-1}" != 0 ]; then
	for ((i = 0; i < $(nproc); i++)); do
		chrt -i 0 nice -n 19 sh -c 'while :; do :; done' &
		spinners+=($!)
	done
fi

# A guest that misbehaves (qemu/run.sh's 125: a panic, a hang) leaves a
# failure of its own, as a crash must never pass for a clean run.
boot() {
	local mode=$1 kernel=$2 rc=0
	step "boot: $mode kernel"
	rm -rf "$a/results/$mode"
	mkdir -p "$a/results/$mode"
	ZEROSLEEP_ARCH=arm64 qemu/run.sh -k "$kernel" -t 2400 -o "$a/results/$mode" \
		-- qemu/guest-tests-arm64.sh "$mode" || rc=$?
	if [ "$rc" = 125 ]; then
		echo "not ok - the $mode arm64 guest misbehaved (qemu/run.sh exit status 125)" \
			> "$a/results/$mode/guest_misbehaved.tap"
	fi
}
boot patched "$b/kernel-arm64/arch/arm64/boot/Image"
boot vanilla "$b/kernel-arm64-vanilla/arch/arm64/boot/Image"
stop_spinners

step "summary"
echo "make test-arm64: $((SECONDS - t0)) s"
scripts/tap-summary.sh "$a/results/patched" "$a/results/vanilla"
