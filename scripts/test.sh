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
	# KASAN and lockdep under TCG run tens of times slower than the plain
	# kernel, and RCU's stall limit (21 s by default) is wall time: give
	# it the margin that a slow or loaded CI host needs.  A real stall in
	# the code under test still lasts longer than this.
	export ZEROSLEEP_APPEND="${ZEROSLEEP_APPEND:-} rcupdate.rcu_cpu_stall_timeout=100"
fi
rm -rf "$res"
mkdir -p "$res"
t_all=$(date +%s)
fatal=0

phase_start() { t0=$(date +%s); echo "==== $1"; }

# Results are reused when nothing they depend on changed.  A phase's key
# covers every file of the repository (tracked or not, but not ignored),
# the Debian packages that the checks run, the host kernel, and what the
# phase itself takes from build/ (the kernel image, the test programs).
# When the key equals that of the last run of the phase, and that run
# passed, its TAP files are copied instead of running it again.  Any
# change, a failure, CI=true or ZEROSLEEP_RERUN=1 runs the phase.
cache=$top/build/test-cache/${variant:-main}
src_key=$({
	git ls-files -c -o --exclude-standard -z | sort -z | xargs -0 sha256sum 2>/dev/null
	dpkg-query -W gcc-12 valgrind mandoc groff python3-docutils sparse qemu-system-x86 2>/dev/null
	uname -r
} | sha256sum | cut -d' ' -f1)

phase_key() {
	# phase_key PHASE [FILE-OR-DIR...]: the key of PHASE with those inputs.
	local phase=$1
	shift
	{
		echo "$phase $src_key"
		# Not kbuild's records, and not zerosleep.pc, which every make
		# rewrites for its PREFIX (make install PREFIX=/usr, say).
		[ $# -gt 0 ] && find "$@" -type f ! -name '*.cmd' ! -name '*.d' ! -name '*.pc' -print0 |
			sort -z | xargs -0 sha256sum
	} | sha256sum | cut -d' ' -f1
}

reuse() {
	# reuse PHASE KEY: copy the results of the last passing run with KEY.
	local c=$cache/$1
	[ -z "${ZEROSLEEP_RERUN:-}" ] && [ "${CI:-}" != true ] || return 1
	[ -f "$c/key" ] && [ "$(cat "$c/key")" = "$2" ] || return 1
	grep -rqs -E '^not ok( |$)' "$c/tap" && return 1
	cp -a "$c/tap/." "$res/"
	echo "# $1: nothing it depends on changed since its run of $(date -r "$c/key" '+%F %T'):"
	echo "# its results are reused (ZEROSLEEP_RERUN=1 runs it again)"
	return 0
}

remember() {
	# remember PHASE KEY SINCE: keep the TAP files that PHASE wrote after
	# the file SINCE was made, if none of them has a failure.
	local c=$cache/$1 files
	rm -rf "$c"
	mapfile -t files < <(cd "$res" && find . -name '*.tap' -newer "$3")
	[ ${#files[@]} -gt 0 ] || return 0
	(cd "$res" && grep -qs -E '^not ok( |$)' "${files[@]}") && return 0
	mkdir -p "$c/tap"
	(cd "$res" && cp -a --parents -t "$c/tap" "${files[@]}") && echo "$2" > "$c/key"
}

cached() {
	# cached PHASE KEY COMMAND...: reuse PHASE's results or run COMMAND.
	local phase=$1 key=$2 since=$res/.since
	shift 2
	touch "$since"
	reuse "$phase" "$key" && return 0
	"$@"
	remember "$phase" "$key" "$since"
}
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

# strace with strace/series: built by strace/build.sh (reused while the
# source package and the series are unchanged), then the tests that the
# series adds to strace's own test suite.  The guest uses this binary.
if [ $fatal -eq 0 ] && [ -z "$variant" ]; then
	phase_start strace
	check strace "build: Debian's strace with strace/series" strace/build.sh
	tap strace-tests strace/build.sh check
	phase_end strace
fi

host_checks() {
	check series "series/ is current (make series)" scripts/series.sh --check build/linux series selftests
	check series "uapi/ matches the patched tree's exported headers (make uapi)" \
		diff -u uapi/linux/prctl.h build/kernel/usr/include/linux/prctl.h
	check series "<zerosleep.h> carries the numbers of uapi/linux/prctl.h" \
		make -s -C libc-wrapper check-uapi
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
	tap apply-series scripts/test-apply-series.sh
	tap lib-host make -s -C libc-wrapper O="$top/build/libc-wrapper" check-host
	tap lib-sanitize make -s -C libc-wrapper O="$top/build/libc-wrapper-san" check-sanitize
	tap lib-valgrind make -s -C libc-wrapper O="$top/build/libc-wrapper" check-valgrind
	tap lib-install make -s -C libc-wrapper O="$top/build/libc-wrapper" check-install
}

guest() {
	local rc
	mkdir -p "$res/guest"
	qemu/run.sh -k "$kobj/arch/x86/boot/bzImage" -t 2400 -o "$res/guest" -- qemu/guest-tests.sh
	rc=$?
	if [ $rc -ne 0 ] || ! ls "$res"/guest/zerosleep_test.tap > /dev/null 2>&1; then
		echo "not ok - guest: the test kernel booted, ran the tests and shut down cleanly (exit status $rc)" | tee -a "$res/guest.tap"
	else
		echo "ok - guest: the test kernel booted, ran the tests and shut down cleanly" >> "$res/guest.tap"
	fi
}

if [ $fatal -eq 0 ] && [ -z "$variant" ]; then
	phase_start host-checks
	cached host-checks "$(phase_key host-checks build/linux/.git/zerosleep-series.stamp \
		build/kernel/usr/include/linux/prctl.h)" host_checks
	phase_end host-checks

	phase_start hygiene
	cached hygiene "$(phase_key hygiene)" tap hygiene scripts/hygiene.sh build/linux series
	phase_end hygiene
fi

if [ $fatal -eq 0 ]; then
	phase_start guest${variant:+-$variant}
	cached guest "$(phase_key guest "$kobj/arch/x86/boot/bzImage" build/selftests build/libc-wrapper \
		build/hardening build/bench/zsbench build/man/examples)" guest
	phase_end guest${variant:+-$variant}
fi

echo "==== phase times (s)"
sed 's/^/  /' "$res/phases"
echo "  total $(( $(date +%s) - t_all ))"
scripts/tap-summary.sh "$res"
