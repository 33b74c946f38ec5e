#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make test: build everything, run every check on the host and every test
# in one boot of the patched kernel, and end with "N passed, N failed".
#
# make test-debug (--debug): the same guest tests on a kernel built with
# KASAN, UBSAN, lockdep and debug objects (qemu/debug.config); the console
# is scanned for their reports.  The host checks are left to make test.
#
# Each phase prints its duration.  Results are TAP files in build/test/;
# the summary counts their "ok" and "not ok" lines.  Exit status 0 only
# when nothing failed.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
variant=
kobj=build/kernel
frags=(qemu/kernel.config)
res=$top/build/test
if [ "${1:-}" = "--debug" ]; then
	variant=debug
	kobj=build/kernel-debug
	frags+=(qemu/debug.config)
	res=$top/build/test-debug
fi
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
	build_step "patched kernel${variant:+ ($variant)}" scripts/build-kernel.sh build/linux "$kobj" "${frags[@]}"
	phase_end kernel
fi

if [ $fatal -eq 0 ]; then
	phase_start userspace
	build_step "selftests" make -s selftests
	build_step "libzerosleep and the launcher" make -s lib
	build_step "demo programs" make -s demo-progs
	build_step "hardening tests" make -s hardening
	build_step "benchmark program" make -s -C bench
	build_step "man page examples" man/check.sh build-examples build/man/examples > "$res/man-build.tap"
	phase_end userspace
fi

if [ $fatal -eq 0 ] && [ -z "$variant" ]; then
	phase_start host-checks
	check series "series/ is current (make series)" scripts/series.sh --check build/linux series selftests
	check series "uapi/ matches the patched tree's exported headers (make uapi)" \
		diff -u uapi/linux/prctl.h build/kernel/usr/include/linux/prctl.h
	for p in $(cat series/series); do
		check checkpatch "checkpatch --strict: $p" \
			bash -c "cd build/linux && PATH=/usr/bin:\$PATH scripts/checkpatch.pl --strict -q --no-summary '$top/series/$p'"
	done
	tap man-lint man/check.sh lint
	tap man-render man/check.sh render
	for f in Documentation/userspace-api/zero-length-sleeps.rst Documentation/userspace-api/index.rst \
		Documentation/filesystems/proc.rst; do
		check docs "RST parses without warnings: $f" /usr/bin/python3 scripts/check-rst.py "build/linux/$f"
	done
	tap install scripts/check-install.sh
	tap lib-host make -s -C libc-wrapper O="$top/build/libc-wrapper" check-host
	tap lib-sanitize make -s -C libc-wrapper O="$top/build/libc-wrapper-san" check-sanitize
	tap lib-valgrind make -s -C libc-wrapper O="$top/build/libc-wrapper" check-valgrind
	tap lib-install make -s -C libc-wrapper O="$top/build/libc-wrapper" check-install
	phase_end host-checks

	phase_start hygiene
	tap hygiene scripts/hygiene.sh build/linux series
	phase_end hygiene
fi

if [ $fatal -eq 0 ]; then
	phase_start guest${variant:+-$variant}
	mkdir -p "$res/guest"
	qemu/run.sh -k "$kobj/arch/x86/boot/bzImage" -t 2400 -o "$res/guest" -- qemu/guest-tests.sh
	rc=$?
	if [ $rc -ne 0 ] || ! ls "$res"/guest/zerosleep_test.tap > /dev/null 2>&1; then
		echo "not ok - guest: the test kernel booted, ran the tests and shut down cleanly (exit status $rc)" | tee -a "$res/guest.tap"
	else
		echo "ok - guest: the test kernel booted, ran the tests and shut down cleanly" >> "$res/guest.tap"
	fi
	phase_end guest${variant:+-$variant}
fi

echo "==== phase times (s)"
sed 's/^/  /' "$res/phases"
echo "  total $(( $(date +%s) - t_all ))"
scripts/tap-summary.sh "$res"
