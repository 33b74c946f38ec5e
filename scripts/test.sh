#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make test: build both kernels (6.12 and 7.3, each with its series) and
# everything else, run every check on the host and every test in one boot
# of each patched kernel, and end with "N passed, N failed".
#
# make test-debug (--debug [KERNEL]): the guest tests of the kernel on one kernel
# (6.12 unless KERNEL says 7.3) built with KASAN, UBSAN, lockdep and debug
# objects (qemu/debug.config), and PREEMPT_RT (qemu/rt.config);
# the console is scanned for their reports.  The host checks are left to
# make test.
#
# Each phase prints its duration and, when ccache is installed, its cache
# hit rate (scripts/ccache.sh).  Results are TAP files in build/test/,
# those of one kernel in build/test/X.Y/; the summary counts their "ok"
# and "not ok" lines.  Exit status 0 only when nothing failed.
#
# Two lanes share the machine's cores.  The main lane builds the kernels,
# the test programs, then boots every kernel at once for its guest tests.
# The host lane starts once the trees are ready and runs the work that is
# mostly serial: strace, series hygiene of both kernels (the guests wait
# for these: a compiling host would slow them), then the host checks,
# beside the guests once their CPU-time checks are over (quiet_arbiter).
# Its output is printed, whole, when it ends.  ZEROSLEEP_SERIAL=1 runs the
# host lane's phases in the main lane, one after the other.
#
# ZEROSLEEP_KERNELS (default "6.12 7.3") limits make test to some kernels,
# for a quicker loop; CI always runs both.  ZEROSLEEP_DEBUG_KERNEL=X.Y
# (set by .ci/run) adds make test-debug of X.Y: the main lane builds its
# kernel after the others, and its guest runs beside theirs
# (scripts/test.sh --debug X.Y --guests-only), with its output, summary
# and exit status in build/test/test-debug.log and test-debug.rc.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
variant=
# The configuration fragments of a kernel: the guest's, then either its
# version's preemption model (Debian's) or, for the debug kernel, the
# debug options and PREEMPT_RT.  "@" stands for the version.
frags=(qemu/kernel.config qemu/kernel-@.config)
debug_frags=(qemu/kernel.config qemu/debug.config qemu/rt.config)
res=$top/build/test
kernels=(${ZEROSLEEP_KERNELS:-6.12 7.3})
[ "${CI:-}" = true ] && kernels=(6.12 7.3)
debug_kernel=
guests_only=
if [ "${1:-}" = "--debug" ]; then
	variant=debug
	kernels=("${2:-6.12}")
	[ "${3:-}" = --guests-only ] && guests_only=1
	frags=("${debug_frags[@]}")
	res=$top/build/test-debug
	# KASAN and lockdep under TCG run tens of times slower than the plain
	# kernel, and RCU's stall limit (21 s by default) is wall time: give
	# it the margin that a slow or loaded CI host needs.  A real stall in
	# the code under test still lasts longer than this.
	export ZEROSLEEP_APPEND="${ZEROSLEEP_APPEND:-} rcupdate.rcu_cpu_stall_timeout=100"
else
	debug_kernel=${ZEROSLEEP_DEBUG_KERNEL:-}
	case " ${kernels[*]} " in
	*" $debug_kernel "*) ;;
	*) debug_kernel= ;;
	esac
fi

# Where each kernel lives under build/: 6.12 keeps the one-kernel names.
sfx() { [ "$1" = 6.12 ] || echo "-$1"; }
ktree() { echo "build/linux$(sfx "$1")"; }
kobj() { echo "build/kernel$(sfx "$1")${variant:+-$variant}"; }
ksft() { echo "build/selftests$(sfx "$1")"; }
rm -rf "$res"
mkdir -p "$res/ccache"
[ -n "$debug_kernel" ] && rm -rf "$top/build/test-debug"
t_all=$(date +%s)
fatal=0
. scripts/ccache.sh

# phase_start NAME ... phase_end NAME: a phase, its duration and its
# ccache hit rate.  t0 and CCACHE_STATSLOG are per lane (subshell).
phase_start() {
	t0=$(date +%s)
	echo "==== $1"
	[ -n "${CCACHE_BASEDIR:-}" ] && export CCACHE_STATSLOG=$res/ccache/$1.log
	return 0
}

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
	dpkg-query -W gcc-12 valgrind mandoc groff python3-docutils sparse qemu-system-x86 debhelper lintian 2>/dev/null
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
	# the file SINCE was made, if none of them has a failure.  The other
	# lane writes TAP files at the same time: each phase keeps only its own.
	local c=$cache/$1 files mine
	case $1 in
	guest-*) mine=(-path "./${1#guest-}/guest*") ;;
	hygiene-*) mine=(-path "./${1#hygiene-}/hygiene.tap") ;;
	*) mine=(! -path '*/guest*' ! -name hygiene.tap ! -name 'strace*.tap' ! -name build.tap) ;;
	esac
	rm -rf "$c"
	mapfile -t files < <(cd "$res" && find . -name '*.tap' -newer "$3" "${mine[@]}")
	[ ${#files[@]} -gt 0 ] || return 0
	(cd "$res" && grep -qs -E '^not ok( |$)' "${files[@]}") && return 0
	mkdir -p "$c/tap"
	(cd "$res" && cp -a --parents -t "$c/tap" "${files[@]}") && echo "$2" > "$c/key"
}

cached() {
	# cached PHASE KEY COMMAND...: reuse PHASE's results or run COMMAND.
	local phase=$1 key=$2 since=$res/.since-$1
	shift 2
	touch "$since"
	reuse "$phase" "$key" && return 0
	"$@"
	remember "$phase" "$key" "$since"
}
phase_end() {
	local d=$(( $(date +%s) - t0 )) c=
	[ -s "$res/ccache/$1.log" ] && c=$(zs_ccache_stats "$res/ccache/$1.log")
	unset CCACHE_STATSLOG
	echo "==== $1: ${d}s${c:+, $c}"
	printf '%-20s %5s  from %5s  %s\n' "$1" "$d" "$(( t0 - t_all ))" "$c" >> "$res/phases"
}

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

host_checks() {
	local k t o ign sec
	for k in "${kernels[@]}"; do
		t=$(ktree "$k")
		o=$res/$k
		mkdir -p "$o"
		check "$k/series" "series/$k is current (make series KERNEL=$k)" \
			scripts/series.sh --check "$t" "series/$k" selftests
		check "$k/series" "the exported <linux/prctl.h> of $k carries uapi/'s zerosleep block (make uapi)" \
			scripts/uapi.sh check "$k" "$(kobj "$k")/usr/include/linux/prctl.h"
		for p in $(cat "series/$k/series"); do
			# The selftests patch adds files but no MAINTAINERS line:
			# the entries of their directories list them (below).
			ign=UNKNOWN_COMMIT_ID
			case $p in *-selftests-*) ign=$ign,FILE_PATH_CHANGES ;; esac
			check "$k/checkpatch" "checkpatch --strict: $k/$p" \
				bash -c "cd $t && PATH=/usr/bin:\$PATH scripts/checkpatch.pl --strict -q --no-summary --ignore $ign '$top/series/$k/$p'"
			# Trailers that git cannot parse (no blank line before
			# them) are invisible to b4, stable tooling and git log.
			check "$k/trailers" "the trailers of $k/$p parse, with a Signed-off-by (git interpret-trailers --parse)" \
				bash -c "git interpret-trailers --parse < '$top/series/$k/$p' | grep -q '^Signed-off-by: '"
		done
		for f in $(scripts/sync-selftests.sh --own selftests); do
			case $f in
			*/proc/*) sec="PROC FILESYSTEM" ;;
			*) sec="HIGH-RESOLUTION TIMERS, TIMER WHEEL, CLOCKEVENTS" ;;
			esac
			check "$k/maintainers" "MAINTAINERS of $k: $sec covers $f" \
				bash -c "cd $t && scripts/get_maintainer.pl --no-git --no-git-fallback --sections -f '$f' | grep -qxF '$sec'"
		done
		for f in Documentation/userspace-api/zero-length-sleeps.rst Documentation/userspace-api/index.rst \
			Documentation/filesystems/proc.rst; do
			check "$k/docs" "RST parses without warnings: $k: $f" /usr/bin/python3 scripts/check-rst.py "$t/$f"
		done
	done
	if [ ${#kernels[@]} -gt 1 ]; then
		check series "the series of 6.12 and 7.3 carry the same documentation page and selftests" \
			scripts/compare-series.sh "$(ktree 6.12)" "$(ktree 7.3)"
	fi
	check series "<zerosleep.h> carries the numbers of uapi/linux/prctl.h" \
		make -s -C libc-wrapper check-uapi
	tap man-lint man/check.sh lint
	tap man-render man/check.sh render
	tap install scripts/check-install.sh
	tap apply-series scripts/test-apply-series.sh
	tap lib-host make -s -C libc-wrapper O="$top/build/libc-wrapper" check-host
	tap lib-sanitize make -s -C libc-wrapper O="$top/build/libc-wrapper-san" check-sanitize
	tap lib-valgrind make -s -C libc-wrapper O="$top/build/libc-wrapper" check-valgrind
	# Installing rebuilds the launcher for its PREFIX: not in the build
	# directory that the guests run from at the same time.
	tap lib-install make -s -C libc-wrapper O="$top/build/libc-wrapper-install" check-install
	tap debian scripts/test-debian.sh
	tap readme scripts/test-readme.sh
}

guest() {
	# guest KERNEL: every guest test in one boot of that kernel.
	local k=$1 rc o=$res/$1 groups=
	# The debug kernel checks the kernel's side: the groups that only
	# judge userspace (the benchmark's sanity, the man page examples,
	# strace's decoding) are left to make test.
	[ "$variant" = debug ] && groups="selftests upstream-timers upstream-prctl lib hardening"
	# A boot whose clock is unusable runs nothing (qemu/guest-tests.sh):
	# boot again, up to three times; the last one's result counts.
	local try
	rm -f "$o/guest.ended"
	for try in 1 2 3; do
		rm -rf "$o/guest"
		mkdir -p "$o/guest"
		[ -n "${ZEROSLEEP_QUIET_ARBITER:-}" ] && touch "$o/guest/quiet-arbiter"
		qemu/run.sh -k "$(kobj "$k")/arch/x86/boot/bzImage" -t 2400 -o "$o/guest" -- qemu/guest-tests.sh $groups
		rc=$?
		[ $rc -eq 3 ] && grep -qs '^not ok' "$o/guest/guest_clock.tap" && [ $try -lt 3 ] || break
		echo "# guest $k: boot $try had no usable clock; booting again"
	done
	touch "$o/guest.ended"
	if [ $rc -ne 0 ] || ! ls "$o"/guest/zero_sleep_policy.tap > /dev/null 2>&1; then
		echo "not ok - guest $k: the test kernel booted, ran the tests and shut down cleanly (exit status $rc)" | tee -a "$o/guest.tap"
	else
		echo "ok - guest $k: the test kernel booted, ran the tests and shut down cleanly" >> "$o/guest.tap"
	fi
	# A second, short boot without high resolution and NOHZ, for the
	# tests that only bite there (qemu/guest-tests.sh --lowres).
	rm -rf "$o/guest-lowres"
	mkdir -p "$o/guest-lowres"
	ZEROSLEEP_APPEND="${ZEROSLEEP_APPEND:-} highres=off nohz=off" \
		qemu/run.sh -k "$(kobj "$k")/arch/x86/boot/bzImage" -t 600 -o "$o/guest-lowres" -- qemu/guest-tests.sh --lowres
	rc=$?
	if [ $rc -ne 0 ]; then
		echo "not ok - guest $k: the low-resolution boot ran its tests and shut down cleanly (exit status $rc)" | tee -a "$o/guest.tap"
	else
		echo "ok - guest $k: the low-resolution boot ran its tests and shut down cleanly" >> "$o/guest.tap"
	fi
}

# strace 7.2 with strace/series: built by strace/build.sh (reused while
# the tarball and the series are unchanged), then the tests that the
# series adds to strace's own test suite.  The guest uses this binary.
# Without ../shared/upstream/strace-7.2.tar.xz (a user's machine), one
# line says so and the phase is left out.
strace_phase() {
	local why
	if ! why=$(strace/build.sh have); then
		echo "==== strace: skipped, $why"
		return 0
	fi
	phase_start strace
	check strace "build: strace 7.2 with strace/series" strace/build.sh
	tap strace-tests strace/build.sh check
	phase_end strace
}

hygiene_phase() {
	local k=$1
	phase_start hygiene-$k
	mkdir -p "$res/$k"
	cached hygiene-$k "$(phase_key "hygiene $k" "$(ktree "$k")/.git/zerosleep-series.stamp")" \
		tap "$k/hygiene" scripts/hygiene.sh "$(ktree "$k")" "series/$k"
	phase_end hygiene-$k
}

host_checks_phase() {
	local k key_inputs=()
	phase_start host-checks
	for k in "${kernels[@]}"; do
		key_inputs+=("$(ktree "$k")/.git/zerosleep-series.stamp" "$(kobj "$k")/usr/include/linux/prctl.h")
	done
	cached host-checks "$(phase_key "host-checks ${kernels[*]}" "${key_inputs[@]}")" host_checks
	phase_end host-checks
}

host_lane() {
	local k
	strace_phase
	touch "$res/.strace-done"
	# Hygiene needs the trees, which the main lane makes meanwhile.
	while [ ! -f "$res/.trees-done" ]; do sleep 2; done
	if [ "$(cat "$res/.trees-done")" = 0 ]; then
		for k in "${kernels[@]}"; do
			hygiene_phase "$k"
		done
	fi
	touch "$res/.compile-done"
	while [ ! -f "$res/.userspace-done" ]; do sleep 2; done
	# Beside the guests, but not before their CPU-time checks are over
	# (quiet_arbiter).
	if [ -n "${two_lanes:-}" ]; then
		while [ ! -f "$res/.quiet-done" ] && [ "$(cat "$res/.userspace-done")" = 0 ]; do sleep 2; done
	fi
	[ -n "$debug_kernel" ] && renice -n 10 -p $BASHPID > /dev/null	# as the guests
	[ "$(cat "$res/.userspace-done")" = 0 ] && host_checks_phase
}

start_host_lane() {
	echo "==== host lane: strace, hygiene and host checks, beside the kernels and guests"
	echo "==== (its output follows the guests; $res/host-lane.log meanwhile)"
	two_lanes=1
	host_lane > "$res/host-lane.log" 2>&1 &
	host_lane_pid=$!
}

# --guests-only: make test, which built everything, runs this make
# test-debug's guests beside its own.
if [ -n "$guests_only" ]; then
	for k in "${kernels[@]}"; do
		[ -f "$(kobj "$k")/arch/x86/boot/bzImage" ] || build_step "debug kernel $k" false
	done
else
	phase_start deps
	build_step "install Debian packages" scripts/deps.sh
	phase_end deps
fi

tree() {
	# tree KERNEL: Debian's source of KERNEL with its series applied.
	local k=$1 tarball
	if tarball=$(scripts/kernel-source.sh "$k"); then
		build_step "extract Linux $k and apply series/$k" scripts/tree.sh "$(ktree "$k")" "series/$k" "$tarball"
	else
		echo "not ok - build: Debian's source of Linux $k" | tee -a "$res/build.tap"
		return 1
	fi
}

# The host lane starts with strace, which needs no kernel tree: its
# download and configure overlap the trees' extraction, which is mostly
# the disk's work once the trees are cached (scripts/tree.sh).
[ $fatal -eq 0 ] && [ -z "$variant" ] && [ "${ZEROSLEEP_SERIAL:-}" != 1 ] && start_host_lane

# The trees, both at once: extraction is one core's work each.
if [ $fatal -eq 0 ] && [ -z "$guests_only" ]; then
	phase_start trees
	pids=()
	for k in "${kernels[@]}"; do
		tree "$k" &
		pids+=($!)
	done
	for p in "${pids[@]}"; do wait "$p" || fatal=1; done
	phase_end trees
fi
# The host lane's hygiene waits for this.
echo "$fatal" > "$res/.trees-done"

for k in "${kernels[@]}"; do
	[ $fatal -eq 0 ] && [ -z "$guests_only" ] || break
	phase_start kernel-$k${variant:+-$variant}
	build_step "patched kernel $k${variant:+ ($variant)}" scripts/build-kernel.sh "$(ktree "$k")" "$(kobj "$k")" "${frags[@]//@/$k}"
	phase_end kernel-$k${variant:+-$variant}
done
# The kernel as a Debian package (make kernel-deb), for one kernel only:
# with the guest's configuration, from a copy of the objdir just built, so
# bindeb-pkg recompiles a few files and relinks; then the packaged image
# boots in the guest (scripts/test-kernel-deb.sh).
kdeb=6.12
if [ $fatal -eq 0 ] && [ -z "$variant" ] && [ -z "$guests_only" ] && [[ " ${kernels[*]} " == *" $kdeb "* ]]; then
	phase_start kernel-deb-$kdeb
	mkdir -p "$res/$kdeb"
	tap "$kdeb/kernel-deb" scripts/test-kernel-deb.sh "$kdeb"
	phase_end kernel-deb-$kdeb
fi
# The kernel of the make test-debug that runs beside the guests.
for k in $debug_kernel; do
	[ $fatal -eq 0 ] || break
	phase_start kernel-$k-debug
	build_step "debug kernel $k, for make test-debug" scripts/build-kernel.sh \
		"$(ktree "$k")" "$(variant=debug kobj "$k")" "${debug_frags[@]}"
	phase_end kernel-$k-debug
done

if [ $fatal -eq 0 ] && [ -z "$guests_only" ]; then
	phase_start userspace
	# The kernels are built: "-o kernel" spares make the check of them,
	# their trees and the packages, seconds each.
	for k in "${kernels[@]}"; do
		build_step "selftests for $k" make -s -o kernel selftests KERNEL="$k"
	done
	build_step "libzerosleep and the launcher" make -s lib
	build_step "demo programs" make -s demo-progs
	build_step "hardening tests" make -s -o kernel hardening
	build_step "benchmark program" make -s -C bench
	build_step "man page examples" man/check.sh build-examples build/man/examples > "$res/man-build.tap"
	phase_end userspace
fi
# The host checks wait for this.
echo "$fatal" > "$res/.userspace-done"

if [ -z "${two_lanes:-}" ] && [ $fatal -eq 0 ] && [ -z "$variant" ]; then
	host_lane
fi

guest_phase() {
	local k=$1
	phase_start guest-$k${variant:+-$variant}
	cached guest-$k "$(phase_key "guest $k" "$(kobj "$k")/arch/x86/boot/bzImage" "$(ksft "$k")" \
		"$(ksft "$k")-m32" build/libc-wrapper build/hardening build/bench/zsbench build/man/examples build/strace)" guest "$k"
	phase_end guest-$k${variant:+-$variant}
	mkdir -p "$res/$k"
	touch "$res/$k/guest.ended"	# for quiet_arbiter, also when reused
}

# quiet_arbiter DIR...: the guests whose output directories these are
# run their CPU-time checks first, in this order, one at a time: two at a
# time (one spinning vCPU per host core) failed ITIMER_PROF in all three
# tries on 2026-12-05 (qemu/guest-tests.sh, quiet_begin).  A guest
# has its turn from "quiet-granted" until it gives it back
# ("quiet-released"), at most 300 s, or until it ends; the next in order
# gets it once that guest has asked ("quiet-wanted").  Every guest waits
# until all have had their turn ("quiet-over"); then the host lane's
# checks may start too (.quiet-done).
quiet_arbiter() {
	local pending=("$@") active=() still d
	declare -A since=()
	while [ ${#pending[@]} -gt 0 ] || [ ${#active[@]} -gt 0 ]; do
		[ -f "$res/.guests-done" ] && break
		still=()
		for d in "${active[@]}"; do
			if [ -e "$d/quiet-released" ] || [ -e "$d.ended" ] ||
			   [ $((SECONDS - since[$d])) -ge 300 ]; then
				rm -f "$d/quiet-granted"
			else
				still+=("$d")
			fi
		done
		active=("${still[@]}")
		while [ ${#pending[@]} -gt 0 ] && [ ${#active[@]} -lt 1 ]; do
			d=${pending[0]}
			if [ -e "$d/quiet-released" ] || [ -e "$d.ended" ]; then
				pending=("${pending[@]:1}")
			elif [ -e "$d/quiet-wanted" ]; then
				touch "$d/quiet-granted"
				since[$d]=$SECONDS
				active+=("$d")
				pending=("${pending[@]:1}")
			else
				break
			fi
		done
		sleep 1
	done
	for d in "$@"; do
		rm -f "$d/quiet-granted"
		[ -d "$d" ] && touch "$d/quiet-over"
	done
	touch "$res/.quiet-done"
}

# nice_after_turns PID...: once every guest has had its turn
# (.quiet-done), or once the guests are done, the processes PID and all
# that they started, their qemu among them, go to nice 10.  Not before:
# a turn is for the guest that holds it to have the host's cores, and at
# nice 10 it gave them up to anything else, the guests that only wait
# included.  (7.3's posix_timers failed in its own turn in CI on
# 2026-12-06; whether nice played a part there is not known:
# doc/testing.md.)
nice_after_turns() {
	local p q todo=("$@")
	while [ ! -f "$res/.quiet-done" ] && [ ! -f "$res/.guests-done" ]; do sleep 1; done
	# A parent first, then its children: a child forked after its
	# parent's renice inherits its nice value.
	while [ ${#todo[@]} -gt 0 ]; do
		p=${todo[0]}
		todo=("${todo[@]:1}")
		renice -n 10 -p "$p" > /dev/null 2>&1 || continue
		for q in $(ps -o pid= --ppid "$p"); do todo+=("$q"); done
	done
}

# The guests of both kernels at once, and, with ZEROSLEEP_DEBUG_KERNEL,
# make test-debug's (scripts/test.sh --debug --guests-only, whose output
# and summary are in build/test/test-debug.log).  A guest is mostly idle:
# under TCG one keeps about three quarters of a core busy, and two side
# by side took as long as one alone (doc/testing.md).  They start once
# the host lane has compiled what it compiles (strace, hygiene).  The
# first kernel's output comes as it runs; the others' follows, whole,
# when they end.
if [ $fatal -eq 0 ]; then
	if [ -n "${two_lanes:-}" ]; then
		while [ ! -f "$res/.compile-done" ] && kill -0 "$host_lane_pid" 2> /dev/null; do sleep 2; done
	fi
	# The debug guest, the longest, has the first turn.
	quiet_dirs=()
	for k in $debug_kernel; do quiet_dirs+=("$top/build/test-debug/$k/guest"); done
	for k in "${kernels[@]}"; do quiet_dirs+=("$res/$k/guest"); done
	if [ -n "$guests_only" ]; then
		:	# make test's arbiter serves this one's guests too
	elif [ ${#quiet_dirs[@]} -gt 1 ]; then
		export ZEROSLEEP_QUIET_ARBITER=1
		quiet_arbiter "${quiet_dirs[@]}" &
		arbiter_pid=$!
	else
		export ZEROSLEEP_QUIET_ARBITER=
		touch "$res/.quiet-done"
	fi
	guest_pids=()
	for k in $debug_kernel; do
		echo "==== make test-debug $k, beside the guests (build/test/test-debug.log)"
		scripts/test.sh --debug "$k" --guests-only > "$res/test-debug.log" 2>&1 &
		debug_pid=$!
	done
	# The debug guest takes the longest (KASAN and lockdep under TCG): the
	# others, and the host checks, yield the cores to it when it wants them.
	for k in "${kernels[@]}"; do
		if [ "$k" = "${kernels[0]}" ]; then
			guest_phase "$k" &
		else
			guest_phase "$k" > "$res/guest-$k.log" 2>&1 &
		fi
		guest_pids+=($!)
	done
	# The debug guest takes the longest: the others yield the cores to
	# it, but only once every guest has had its turn (nice_after_turns).
	if [ -n "${debug_pid:-}" ]; then
		nice_after_turns "${guest_pids[@]}" &
		nicer_pid=$!
	fi
	for p in "${guest_pids[@]}"; do wait "$p"; done
	for k in "${kernels[@]:1}"; do
		echo "==== guest $k output"
		cat "$res/guest-$k.log"
	done
	if [ -n "${debug_pid:-}" ]; then
		wait "$debug_pid"
		echo "$?" > "$res/test-debug.rc"
	fi
	touch "$res/.guests-done"
	if [ -n "${arbiter_pid:-}" ]; then
		wait "$arbiter_pid"
	fi
	[ -n "${nicer_pid:-}" ] && wait "$nicer_pid"
fi

if [ -n "${host_lane_pid:-}" ]; then
	wait "$host_lane_pid"
	echo "==== host lane output"
	cat "$res/host-lane.log"
fi
if [ -n "${debug_pid:-}" ]; then
	echo "==== make test-debug $debug_kernel output (exit status $(cat "$res/test-debug.rc"))"
	cat "$res/test-debug.log"
	echo "==== make test"
fi

echo "==== phase times (s): duration, start after the beginning, ccache"
sed 's/^/  /' "$res/phases"
echo "  total $(( $(date +%s) - t_all ))"
dirs=("$res")
for k in "${kernels[@]}"; do dirs+=("$res/$k"); done
scripts/tap-summary.sh "${dirs[@]}"
