#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build Debian's strace with the patches in strace/series, which teach it
# the zerosleep prctl options, and run the new tests of its own test suite.
#
#   strace/build.sh          fetch, patch, configure and build src/strace
#   strace/build.sh check    the same, then run the new tests (TAP on stdout)
#
# The source package comes from deb.debian.org through a private apt
# configuration under build/strace-apt (its own source list, lists and
# cache): the machine's apt sources are never read or changed.  The build
# is reused when the source version, the patches and this script are
# unchanged.  Output: build/strace/obj/src/strace.
#
# strace/series is written for bookworm's strace 6.1 (6.1-0.1) and kept
# for its users here: make test builds it, the guest check
# (qemu/strace-guest.sh) traces the launcher with it, and README's trace
# was taken with it.  Its port to strace's current release, sid's
# 7.2+ds-1, waits for that source package: sid's index lists it, but
# deb.debian.org answers 404 for its three files (4 December 2026), and
# a series never applied, built and tested on its tree is not carried.
#
# Environment: STRACE_DEB_SUITE and STRACE_DEB_VERSION (defaults below)
# pick the suite and the source version.  When that version is not in the
# suite's index, or its files cannot be downloaded, the script stops at
# once and names the package and version: there is no fallback.
set -eu -o pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/ccache.sh
. "$top/scripts/ccache.sh"	# compilations through ccache, when installed
suite=${STRACE_DEB_SUITE:-bookworm}
ver=${STRACE_DEB_VERSION:-6.1-0.1}	# bookworm's strace
mirror=http://deb.debian.org/debian
apt_dir=$top/build/strace-apt
dl=$top/build/strace-src
out=$top/build/strace
tree=$out/tree
obj=$out/obj
patches=$top/strace
# The tests that strace/series adds (tests/gen_tests.in names).
test_re='^prctl-timerslack-zero-policy[^[:space:]]*'

msg() { echo "  STRACE  $*"; }
die() { echo "strace/build.sh: $*" >&2; exit 1; }

fetch() {
	local dsc=$dl/strace_$ver.dsc have err
	[ -f "$dsc" ] && return 0
	command -v dpkg-source > /dev/null || die "dpkg-source is missing: install dpkg-dev"
	mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$dl"
	echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror $suite main" \
		> "$apt_dir/sources.list"
	local apt=(-o "Dir::Etc::sourcelist=$apt_dir/sources.list" -o Dir::Etc::sourceparts=-
		-o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir/cache"
		-o APT::Sandbox::User=root)
	msg "fetching source package strace $ver from $mirror $suite"
	apt-get "${apt[@]}" -qq update ||
		die "cannot read the source index of $mirror $suite"
	have=$(apt-cache "${apt[@]}" showsrc --only-source strace 2> /dev/null |
		sed -n 's/^Version: //p' | paste -s -d ' ')
	case " $have " in
	*" $ver "*) ;;
	*) die "source package strace $ver is not in $mirror $suite (it has: ${have:-none})" ;;
	esac
	err=$(cd "$dl" && apt-get "${apt[@]}" -qq source --download-only "strace=$ver" 2>&1) || {
		printf '%s\n' "$err" | grep '^E:' | head -n 3 >&2
		die "source package strace $ver is listed in $mirror $suite, but its files cannot be downloaded"
	}
	[ -f "$dsc" ] || die "apt-get source did not leave $dsc"
}

key() {
	local p
	mapfile -t p < "$patches/series"
	{
		echo "$suite $ver"
		cd "$patches"
		sha256sum series build.sh "${p[@]}"
	} | sha256sum | cut -d' ' -f1
}

gen() {
	# What upstream's ./bootstrap does, for the files that the series
	# touches: regenerating all 700 xlat headers takes minutes.
	local base=$1 f names
	cd "$tree"
	for f in $(git diff --name-only "$base" HEAD -- 'src/xlat/*.in'); do
		src/xlat/gen.sh "$f" "${f%.in}.h" 2> /dev/null
	done
	names=$(cd src/xlat && for f in *.in; do echo "${f%.in}"; done)
	sed '/^main "\$@"$/d' src/xlat/gen.sh > "$out/xlat-gen.sh"
	# shellcheck disable=SC2086 # one argument per xlat name
	sh -efu -c '. "$0"; gen_make src/xlat/Makemodule.am "$@"' "$out/xlat-gen.sh" $names 2> /dev/null
	tests/gen_pure_executables.sh
	tests/gen_tests.sh 2> /dev/null
	# Debian's own patches edit some generated tests (XFAIL): keep them.
	git checkout -q -- 'tests/*.gen.test'
	autoreconf -fi > "$out/autoreconf.log" 2>&1 ||
		die "autoreconf failed, see $out/autoreconf.log"
}

build() {
	local k base
	k=$(key)
	if [ -f "$out/stamp" ] && [ "$(cat "$out/stamp")" = "$k" ] && [ -x "$obj/src/strace" ]; then
		return 0
	fi
	rm -rf "$tree" "$obj" "$out/stamp"
	mkdir -p "$out"
	msg "extracting strace $ver"
	dpkg-source -x "$dl/strace_$ver.dsc" "$tree" > "$out/extract.log" 2>&1 || {
		cat "$out/extract.log" >&2
		die "cannot extract $dl/strace_$ver.dsc"
	}
	cd "$tree"
	git init -q
	git add -A -f
	git -c user.name=zerosleep -c user.email=zerosleep@localhost \
		commit -q -m "strace $ver (Debian $suite)"
	base=$(git rev-parse HEAD)
	msg "applying strace/series ($(wc -l < "$patches/series") patches)"
	(cd "$patches" && sed "s|^|$patches/|" series) | xargs git -c user.name=zerosleep \
		-c user.email=zerosleep@localhost am -q --whitespace=nowarn ||
		die "strace/series does not apply to strace $ver"
	gen "$base"
	mkdir -p "$obj"
	cd "$obj"
	msg "configuring"
	# The cache only depends on the unpatched configure checks.
	[ -f "$out/config.cache.$ver" ] || rm -f "$out"/config.cache.*
	"$tree/configure" -q --cache-file="$out/config.cache.$ver" \
		--enable-mpers=no --disable-stacktrace --without-libselinux \
		> "$out/configure.log" 2>&1 || die "configure failed, see $out/configure.log"
	msg "building src/strace"
	make -s -j"$(nproc)" -C src > "$out/make.log" 2>&1 || {
		tail -n 30 "$out/make.log" >&2
		die "the build failed, see $out/make.log"
	}
	"$obj/src/strace" -V > /dev/null
	echo "$ver" > "$out/version"
	echo "$k" > "$out/stamp"
}

check() {
	local progs tests t r rc=0
	progs=$(grep -o -E "$test_re" "$tree/tests/gen_tests.in" | tr '\n' ' ')
	[ -n "$progs" ] || die "no test in tests/gen_tests.in matches $test_re"
	tests=$(for t in $progs; do printf '%s.gen.test ' "$t"; done)
	make -s -C "$obj/tests" check TESTS="$tests" check_PROGRAMS="$progs" \
		> "$out/check.log" 2>&1 || rc=$?
	for t in $progs; do
		r=$(sed -n 's/^:test-result: //p' "$obj/tests/$t.gen.trs" 2>/dev/null || true)
		case $r in
		PASS) echo "ok - strace test suite: $t" ;;
		SKIP) echo "ok - strace test suite: $t # SKIP" ;;
		*)
			echo "not ok - strace test suite: $t (${r:-not run})"
			sed 's/^/#   /' "$obj/tests/$t.gen.log" 2>/dev/null | head -n 40
			;;
		esac
	done
	if [ $rc -ne 0 ]; then
		grep -E 'error|Error' "$out/check.log" | head -n 20 | sed 's/^/# /'
	fi
	return $rc
}

fetch
build
echo "  STRACE  $obj/src/strace (Debian strace $ver + strace/series)"
if [ "${1:-}" = check ]; then
	check
fi
