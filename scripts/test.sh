#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make test: build everything, run every check on the host and every test
# in one boot of the patched kernel, and end with "N passed, N failed".
#
# Each phase prints its duration.  Results are TAP files in build/test/;
# the summary counts their "ok" and "not ok" lines.  Exit status 0 only
# when nothing failed.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
res=$top/build/test
rm -rf "$res"
mkdir -p "$res"
t_all=$(date +%s)
fatal=0

phase_start() { t0=$(date +%s); echo "==== $1"; }
phase_end() { echo "==== $1: $(( $(date +%s) - t0 ))s"; echo "$1 $(( $(date +%s) - t0 ))" >> "$res/phases"; }

# A host check as one TAP line: "check FILE DESCRIPTION COMMAND...".
check() {
	local file=$res/$1.tap desc=$2 log
	shift 2
	log=$(mktemp)
	if "$@" > "$log" 2>&1; then
		echo "ok - $desc" | tee -a "$file"
	else
		echo "not ok - $desc" | tee -a "$file"
		sed 's/^/#   /' "$log" | head -n 60 | tee -a "$file"
	fi
	rm -f "$log"
}

# A host test program that prints TAP itself: "tap FILE COMMAND...".
tap() {
	local file=$res/$1.tap rc
	shift
	"$@" > "$file.out" 2>&1
	rc=$?
	cat "$file.out" >> "$file"
	rm -f "$file.out"
	cat "$file"
	if [ $rc -eq 0 ]; then
		echo "ok - $*: exit status 0" | tee -a "$file"
	else
		echo "not ok - $*: exit status $rc" | tee -a "$file"
	fi
}

build_step() {
	# A build step that everything after it needs.
	local what=$1
	shift
	if ! "$@"; then
		echo "not ok - build: $what" | tee -a "$res/build.tap"
		fatal=1
		return 1
	fi
	echo "ok - build: $what" >> "$res/build.tap"
}

phase_start deps
build_step "install Debian packages" scripts/deps.sh
phase_end deps

if [ $fatal -eq 0 ]; then
	phase_start tree
	build_step "extract the kernel and apply series/" scripts/tree.sh build/linux series
	phase_end tree
fi

if [ $fatal -eq 0 ]; then
	phase_start kernel
	build_step "patched kernel" scripts/build-kernel.sh build/linux build/kernel qemu/kernel.config
	phase_end kernel
fi

if [ $fatal -eq 0 ]; then
	phase_start userspace
	build_step "selftests" make -s selftests
	build_step "libzerosleep and the launcher" make -s lib
	build_step "demo programs" make -s demo-progs
	build_step "man page examples" man/check.sh build-examples build/man/examples > "$res/man-build.tap"
	phase_end userspace
fi

if [ $fatal -eq 0 ]; then
	phase_start host-checks
	check series "series/ is current (make series)" scripts/series.sh --check build/linux series selftests
	check series "uapi/ matches the patched tree's exported headers (make uapi)" \
		diff -u uapi/linux/prctl.h build/kernel/usr/include/linux/prctl.h
	for p in $(cat series/series); do
		check checkpatch "checkpatch --strict: $p" \
			bash -c "cd build/linux && PATH=/usr/bin:\$PATH scripts/checkpatch.pl --strict -q --no-summary '$top/series/$p'"
	done
	tap man-lint man/check.sh lint
	tap lib-host make -s -C libc-wrapper O="$top/build/libc-wrapper" check-host
	tap lib-sanitize make -s -C libc-wrapper O="$top/build/libc-wrapper-san" check-sanitize
	tap lib-valgrind make -s -C libc-wrapper O="$top/build/libc-wrapper" check-valgrind
	tap lib-install make -s -C libc-wrapper O="$top/build/libc-wrapper" check-install
	phase_end host-checks

	phase_start guest
	mkdir -p "$res/guest"
	qemu/run.sh -t 1500 -o "$res/guest" -- qemu/guest-tests.sh
	rc=$?
	if [ $rc -eq 125 ]; then
		echo "not ok - guest: the test kernel booted, ran the tests and shut down cleanly" | tee -a "$res/guest.tap"
	else
		echo "ok - guest: the test kernel booted, ran the tests and shut down cleanly" >> "$res/guest.tap"
	fi
	phase_end guest
fi

echo "==== phase times (s)"
sed 's/^/  /' "$res/phases"
echo "  total $(( $(date +%s) - t_all ))"
# Upstream selftests may skip what the kernel or the hardware cannot do
# (clocks without nanosleep, say); those skips are reported.  The project's
# own tests never skip: a skip there counts as a failure.
all=$(cat "$res"/*.tap "$res"/guest/*.tap 2>/dev/null)
pass=$(grep -E '^ok( |$)' <<< "$all" | grep -vc '# SKIP')
fail=$(grep -Ec '^not ok( |$)' <<< "$all")
skip=$(cat "$res"/guest/timers_*.tap 2>/dev/null | grep -E '^ok( |$)' | grep -c '# SKIP')
ownskip=$(cat $(ls "$res"/*.tap "$res"/guest/*.tap 2>/dev/null | grep -v '/timers_') 2>/dev/null |
	grep -E '^ok( |$)' | grep -c '# SKIP')
if [ "$fail" -gt 0 ] || [ "$ownskip" -gt 0 ]; then
	echo "==== failures"
	grep -h -E '^not ok( |$)' "$res"/*.tap "$res"/guest/*.tap 2>/dev/null | sed 's/^/  /'
	[ "$ownskip" -gt 0 ] && echo "  $ownskip skipped test(s) outside the upstream suites"
fi
fail=$((fail + ownskip))
if [ "$skip" -gt 0 ]; then
	echo "$pass passed, $fail failed, $skip skipped"
else
	echo "$pass passed, $fail failed"
fi
[ "$fail" -eq 0 ]
