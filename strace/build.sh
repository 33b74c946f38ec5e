#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build strace 7.2 with the patches in strace/series, which teach it the
# zerosleep prctl options, and run the tests that they add to strace's
# own test suite.
#
#   strace/build.sh          bootstrap, patch, configure and build src/strace
#   strace/build.sh check    the same, then run the new tests (TAP on stdout)
#   strace/build.sh have     exit 0 when the source tree is there; else say
#                            in one line why not, and exit 1
#   strace/build.sh deps     install the Debian packages that this script
#                            needs, and only those (make strace; no kernel
#                            source, no QEMU: not scripts/deps.sh)
#   strace/build.sh newer-headers [SUITE]
#                            build it again, and run the new tests, as on a
#                            host whose linux-libc-dev is SUITE's
#                            (trixie-backports': 7.3), newer than the
#                            bundled 7.2 headers (TAP on stdout; root)
#
# strace is configured with --enable-bundled=yes: the constants of the
# series are only in its bundled <linux/prctl.h>, and with the default
# (check) a host whose kernel headers are newer than the bundled ones
# builds against its own, which lack them.  newer-headers proves it:
# SUITE's linux-libc-dev, fetched with a private apt configuration (as
# scripts/fetch-linux-source.sh fetches linux-source-7.3: the machine's
# sources are never changed), is installed in a scratch root, an overlay
# of this machine's root whose writes go to a tmpfs in a private mount
# namespace, where strace is configured and built in build/strace/newer.
#
# The source is strace's git tree of tag v7.2, packed as
# ../shared/upstream/strace-7.2.tar.xz next to the repository
# (STRACE_TARBALL overrides it); Debian does not serve 7.2's source.  A
# user's machine has no ../shared: there the script says so and stops.
#
# A git tree must be bootstrapped before it is configured.  strace's
# ./bootstrap generates some 800 xlat headers, one shell pipeline each
# (six to ten minutes of both cores beside a kernel build), then links
# its test directories and runs autoreconf (one to two minutes), always
# with the same result for the same input.  So, in a cache shared by the
# clones (ZEROSLEEP_TREE_CACHE, as scripts/tree.sh; 0 turns it off):
# - the xlat headers of the unpatched tree, once per tarball: a changed
#   series has only the xlat files it touches generated again, and the
#   rest of ./bootstrap runs as it is;
# - the bootstrapped tree of the latest key (below), about 45 MB;
# - configure's results (config.cache), keyed on the configure script and
#   the compiler.
# Only src/ is built; the tests build only their own programs.
# configure's options (one list for every build, with its cache key):
configure_args=(--enable-bundled=yes --enable-mpers=no --disable-stacktrace
	--without-libselinux --disable-dependency-tracking)
# The Debian packages that this script needs: strace's INSTALL-git.md
# (autoconf, automake, gawk), the tarball, git and the compiler.
deb_pkgs=(xz-utils git make gcc libc6-dev autoconf automake gawk)
#
# The build under build/strace is reused while the tarball, the patches,
# autoconf, automake and this script are unchanged (the key).  Output:
# build/strace/obj/src/strace.
set -eu -o pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/ccache.sh
. "$top/scripts/ccache.sh"	# compilations through ccache, when installed
tarball=${STRACE_TARBALL:-$top/../shared/upstream/strace-7.2.tar.xz}
out=$top/build/strace
tree=$out/tree
obj=$out/obj
patches=$top/strace
cache=${ZEROSLEEP_TREE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/zerosleep/trees}
[ "$cache" = 0 ] && cache=
# The tests that strace/series adds (tests/gen_tests.in names).
test_re='^prctl-timerslack-zero-policy[^[:space:]]*'
git=(git -c user.name=zerosleep -c user.email=zerosleep@localhost -c gc.auto=0)

msg() { echo "  STRACE  $*"; }
die() { echo "strace/build.sh: $*" >&2; exit 1; }

have() {
	[ -r "$tarball" ] && return 0
	echo "no strace 7.2 source tree (${STRACE_TARBALL:-../shared/upstream/strace-7.2.tar.xz}), so no strace is built"
	return 1
}

key() {
	local p
	mapfile -t p < "$patches/series"
	{
		sha256sum < "$tarball"
		autoconf --version | head -n 1
		automake --version | head -n 1
		cd "$patches"
		sha256sum series build.sh "${p[@]}"
	} | sha256sum | cut -d' ' -f1
}

xlat_vanilla() {
	# The generated files of src/xlat for the unpatched tree: from the
	# cache, or made by src/xlat/gen.sh (and cached).
	# As in ./bootstrap, src/mpers_xlat.h first: gen.sh reads it.
	local sum cached
	./src/generate_mpers_am.sh
	sum=$({ sha256sum < "$tarball"; gawk --version | head -n 1; } | sha256sum | cut -c1-32)
	cached=${cache:+$cache/strace-xlat-v2-$sum.tar}
	if [ -n "$cached" ] && [ -r "$cached" ] && tar -C src/xlat -xf "$cached"; then
		msg "xlat headers of strace 7.2 from $cached"
		return 0
	fi
	msg "generating strace's xlat headers (once per tarball)"
	./src/xlat/gen.sh > "$out/xlat.log" 2>&1 ||
		die "src/xlat/gen.sh failed, see $out/xlat.log"
	[ -n "$cached" ] || return 0
	mkdir -p "$cache"
	# What gen.sh made: the files of src/xlat that git does not track.
	if git ls-files -o -- src/xlat | sed 's|^src/xlat/||' |
	   tar -C src/xlat -cf "$cached.tmp.$$" -T -; then
		mv "$cached.tmp.$$" "$cached"
	else
		rm -f "$cached.tmp.$$"
	fi
}

xlat_series() {
	# Generate again what the series changes in src/xlat; all of it when
	# the series changes what gen.sh reads besides the .in files.
	local f names
	cp src/mpers_xlat.h "$out/mpers_xlat.h.orig"
	./src/generate_mpers_am.sh
	if ! cmp -s src/mpers_xlat.h "$out/mpers_xlat.h.orig" ||
	   ! git diff --quiet v7.2 HEAD -- src/defs.h src/xlat/gen.sh; then
		msg "generating strace's xlat headers (the series changes their inputs)"
		./src/xlat/gen.sh > "$out/xlat.log" 2>&1 ||
			die "src/xlat/gen.sh failed, see $out/xlat.log"
		return 0
	fi
	for f in $(git diff --name-only --diff-filter=D v7.2 HEAD -- 'src/xlat/*.in'); do
		rm -f "${f%.in}.h" "${f%.in}.m4"
	done
	for f in $(git diff --name-only --diff-filter=AM v7.2 HEAD -- 'src/xlat/*.in'); do
		# An #enum list would change configure's checks too.
		! grep -q '^#enum' "$f" || die "$f: #enum xlat files are not regenerated here"
		./src/xlat/gen.sh "./$f" "./${f%.in}.h" 2>> "$out/xlat.log" ||
			die "src/xlat/gen.sh $f failed, see $out/xlat.log"
	done
	names=$(cd src/xlat && for f in *.in; do echo "${f%.in}"; done)
	sed '/^main "\$@"$/d' src/xlat/gen.sh > "$out/xlat-gen.sh"
	# shellcheck disable=SC2086 # one argument per xlat name
	sh -efu -c '. "$0"; gen_make src/xlat/Makemodule.am "$@"; gen_git src/xlat/.gitignore "$@"' \
		"$out/xlat-gen.sh" $names 2>> "$out/xlat.log"
}

bootstrap() {
	# The tree: tag v7.2, the series on top, then what ./bootstrap does.
	rm -rf "$tree"
	mkdir -p "$tree"
	tar -C "$tree" --strip-components=1 -xJf "$tarball"
	cd "$tree"
	grep -q -x '\./src/xlat/gen\.sh' bootstrap ||
		die "$tarball: ./bootstrap does not run ./src/xlat/gen.sh as expected"
	# Fixed names and dates: the same commits, so the same version
	# string (git describe of the annotated tag) and the same configure
	# script in every clone, which keeps configure's cache valid.
	"${git[@]}" init -q
	"${git[@]}" add -A -f
	GIT_AUTHOR_DATE=2026-08-18T00:00:00Z GIT_COMMITTER_DATE=2026-08-18T00:00:00Z \
		"${git[@]}" commit -q -m "strace 7.2 ($(basename "$tarball"))"
	GIT_COMMITTER_DATE=2026-08-18T00:00:00Z "${git[@]}" tag -a -m "strace 7.2" v7.2
	xlat_vanilla
	msg "applying strace/series ($(wc -l < "$patches/series") patches)"
	(cd "$patches" && sed "s|^|$patches/|" series) |
		xargs "${git[@]}" am -q --committer-date-is-author-date ||
		die "strace/series does not apply to strace 7.2"
	xlat_series
	msg "bootstrapping"
	sed '/^\.\/src\/xlat\/gen\.sh$/d' bootstrap > "$out/bootstrap"
	sh -eu "$out/bootstrap" > "$out/bootstrap.log" 2>&1 ||
		die "./bootstrap failed, see $out/bootstrap.log"
}

configure() {
	local sum cached
	mkdir -p "$obj"
	cd "$obj"
	# The configure checks depend on the script, its options, the
	# compiler and the kernel headers' version only.
	sum=$({ sha256sum < "$tree/configure"; echo "${configure_args[*]}"
		gcc --version | head -n 1; cat /usr/include/linux/version.h; } | sha256sum | cut -c1-32)
	cached=${cache:+$cache/strace-config-v2-$sum.cache}
	cp "$cached" config.cache 2> /dev/null || true
	msg "configuring"
	# No dependency tracking: its stubs for the thousands of test
	# programs took config.status minutes, and a changed key rebuilds
	# everything anyway.
	"$tree/configure" -q --cache-file=config.cache "${configure_args[@]}" \
		> "$out/configure.log" 2>&1 ||
		die "configure failed, see $out/configure.log"
	if [ -n "$cached" ] && [ ! -f "$cached" ] && mkdir -p "$cache"; then
		cp config.cache "$cached.tmp.$$" && mv "$cached.tmp.$$" "$cached"
	fi
}

build() {
	local k cached
	k=$(key)
	if [ -f "$out/stamp" ] && [ "$(cat "$out/stamp")" = "$k" ] && [ -x "$obj/src/strace" ]; then
		return 0
	fi
	rm -rf "$tree" "$obj" "$out/stamp"
	mkdir -p "$out"
	# The bootstrapped tree depends on the key only: a clean clone takes
	# it from the cache, which keeps the latest one.
	cached=${cache:+$cache/strace-tree-v1-$k.tar}
	if [ -n "$cached" ] && [ -r "$cached" ] && mkdir -p "$tree" && tar -C "$tree" -xf "$cached"; then
		msg "bootstrapped tree from $cached"
	else
		bootstrap
		if [ -n "$cached" ] && mkdir -p "$cache" && tar -C "$tree" -cf "$cached.tmp.$$" .; then
			rm -f "$cache"/strace-tree-v1-*.tar
			mv "$cached.tmp.$$" "$cached"
		else
			rm -f "$cached.tmp.$$"
		fi
	fi
	configure
	msg "building src/strace"
	# "all": the first rule of src/Makefile is not its default target.
	make -s -j2 -C src all > "$out/make.log" 2>&1 || {
		tail -n 30 "$out/make.log" >&2
		die "the build failed, see $out/make.log"
	}
	"$obj/src/strace" -V > /dev/null
	echo "$k" > "$out/stamp"
}

check() {
	local progs tests t r rc=0
	progs=$(grep -o -E "$test_re" "$tree/tests/gen_tests.in" | tr '\n' ' ')
	[ -n "$progs" ] || die "no test in tests/gen_tests.in matches $test_re"
	tests=$(for t in $progs; do printf '%s.gen.test ' "$t"; done)
	rm -f "$obj"/tests/prctl-timerslack-zero-policy*.{log,trs}
	make -s -j2 -C "$obj/tests" check TESTS="$tests" check_PROGRAMS="$progs" \
		> "$out/check.log" 2>&1 || rc=$?
	for t in $progs; do
		r=$(sed -n 's/^:test-result: //p' "$obj/tests/$t.gen.trs" 2>/dev/null || true)
		case $r in
		PASS) echo "ok - strace test suite: $t" ;;
		*)
			# SKIP too: every one of them runs on any kernel.
			echo "not ok - strace test suite: $t (${r:-not run})"
			sed 's/^/#   /' "$obj/tests/$t.gen.log" 2>/dev/null | head -n 40
			rc=1
			;;
		esac
	done
	if [ $rc -ne 0 ]; then
		grep -E 'error|Error' "$out/check.log" | head -n 20 | sed 's/^/# /'
	fi
	return $rc
}

lint() {
	# strace's own order and words, where the series adds to them: the
	# lists stay in C order (upstream's have a few old disorders, so
	# only the series' lines and their neighbours are judged), and NEWS's
	# first title is underlined to its length.
	local f first last title under rc=0
	for f in tests/.gitignore tests/gen_tests.in tests/pure_executables.list; do
		first=$(grep -n -E "$test_re" "$tree/$f" | head -n 1 | cut -d: -f1)
		last=$(grep -n -E "$test_re" "$tree/$f" | tail -n 1 | cut -d: -f1)
		if [ -n "$first" ] &&
		   sed -n "$((first - 1)),$((last + 1))p" "$tree/$f" | LC_ALL=C sort -c 2> /dev/null; then
			echo "ok - strace/series: $f: its lines in C order with their neighbours (sort -c)"
		else
			echo "not ok - strace/series: $f: its lines in C order with their neighbours (sort -c)"
			sed -n "$((first - 1)),$((last + 1))p" "$tree/$f" | sed 's/^/#   /'
			rc=1
		fi
	done
	title=$(sed -n 1p "$tree/NEWS")
	under=$(sed -n 2p "$tree/NEWS")
	if [ "${#title}" = "${#under}" ] && [ -z "${under//=/}" ]; then
		echo "ok - strace/series: NEWS: the title is underlined to its length (${#title})"
	else
		echo "not ok - strace/series: NEWS: the title is underlined to its length (${#title}, not ${#under})"
		rc=1
	fi
	return $rc
}

deps() {
	local p s missing=()
	for p in "${deb_pkgs[@]}"; do
		s=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2> /dev/null || true)
		[ "$s" = installed ] || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	[ "$(id -u)" = 0 ] ||
		die "these packages are missing and installing them needs root: ${missing[*]}"
	msg "installing: ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${missing[@]}" > /dev/null
}

# newer-headers SUITE: fetch SUITE's linux-libc-dev, then build in a
# scratch root that has it (newer_root, in a private mount namespace).
newer_headers() {
	local suite=$1 apt version deb
	local mirror=${ZEROSLEEP_DEBIAN_MIRROR:-http://deb.debian.org/debian}
	local keyring=/usr/share/keyrings/debian-archive-keyring.gpg
	[ "$(id -u)" = 0 ] || die "newer-headers needs root (a mount namespace and chroot)"
	build
	apt=$out/linux-libc-dev.apt
	rm -rf "$apt" "$out/newer"
	mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/download" \
		"$apt/preferences.d" "$out/newer"
	echo "deb [signed-by=$keyring] $mirror $suite main" > "$apt/sources.list"
	: > "$apt/preferences"
	local opts=(-o "Dir::Etc::sourcelist=$apt/sources.list" -o Dir::Etc::sourceparts=-
		-o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache"
		-o "Dir::Etc::preferences=$apt/preferences" -o "Dir::Etc::preferencesparts=$apt/preferences.d"
		-o APT::Get::List-Cleanup=0 -o Debug::NoLocking=1 -o APT::Sandbox::User=root)
	msg "fetching linux-libc-dev from $suite (private apt configuration in $apt)"
	apt-get "${opts[@]}" -qq update > "$apt/update.log" 2>&1 ||
		die "apt-get update of $mirror $suite failed, see $apt/update.log"
	version=$(apt-cache "${opts[@]}" madison linux-libc-dev 2> /dev/null |
		awk -F'|' '{ gsub(/ /, "", $2); print $2 }' | sort -V | tail -n 1)
	[ -n "$version" ] || die "no linux-libc-dev in $mirror $suite"
	(cd "$apt/download" && apt-get "${opts[@]}" -qq download "linux-libc-dev=$version") ||
		die "apt-get download linux-libc-dev=$version failed"
	deb=$(ls "$apt/download/"*.deb)
	unshare -m --propagation private "$top/strace/build.sh" newer-root "$deb" "$suite" "$version"
}

newer_root() {
	local deb=$1 suite=$2 version=$3 T M rc=0
	T=$(mktemp -d "${TMPDIR:-/tmp}/strace-newer.XXXXXX")
	M=$T/root
	mkdir -p "$T/rw" "$M"
	if ! { mount -t tmpfs tmpfs "$T/rw" && mkdir "$T/rw/upper" "$T/rw/work" &&
		mount -t overlay overlay -o "lowerdir=/,upperdir=$T/rw/upper,workdir=$T/rw/work" "$M" &&
		mount --rbind /dev "$M/dev" && mount -t proc proc "$M/proc" &&
		mount --bind "$out/newer" "$M$out/newer"; }; then
		die "cannot make the scratch root in $T"
	fi
	dpkg --root="$M" --log="$M/var/log/dpkg.log" --force-depends --force-breaks -i "$deb" > "$out/newer/dpkg.log" 2>&1 ||
		die "dpkg -i $(basename "$deb") in the scratch root failed, see $out/newer/dpkg.log"
	echo "# the scratch root's kernel headers: linux-libc-dev $(dpkg-query --root="$M" -W -f '${Version}' linux-libc-dev)," \
		"$(sed -n 's/^#define LINUX_VERSION_\(MAJOR\|PATCHLEVEL\|SUBLEVEL\) //p' "$M/usr/include/linux/version.h" | paste -sd.)"
	chroot "$M" "$top/strace/build.sh" newer-build "$suite" "$version" || rc=$?
	umount -l "$M" 2> /dev/null
	umount "$T/rw" 2> /dev/null && rm -rf "$T"
	return $rc
}

# In the scratch root: configure (no cache: its key does not know the
# headers' origin), build src/strace and the new tests in build/strace/newer.
newer_build() {
	local suite=$1 version=$2 bundled rc=0
	out=$out/newer
	obj=$out/obj
	cache=
	configure
	bundled=$(sed -n 's/^st_cv_use_bundled_headers=//p' "$obj/config.log")
	msg "building src/strace against linux-libc-dev $version"
	if make -s -j2 -C "$obj/src" all > "$out/make.log" 2>&1 && "$obj/src/strace" -V > /dev/null; then
		echo "ok - strace builds on a host whose linux-libc-dev is $version ($suite; bundled headers used: $bundled)"
	else
		tail -n 30 "$out/make.log" | sed 's/^/#   /'
		echo "not ok - strace builds on a host whose linux-libc-dev is $version ($suite; bundled headers used: $bundled)"
		return 1
	fi
	check || rc=$?
	return $rc
}

case ${1:-} in
have) have; exit ;;
deps) deps; exit ;;
newer-root) shift; newer_root "$@"; exit ;;
newer-build) shift; newer_build "$@"; exit ;;
''|check|newer-headers) ;;
*) die "unknown argument '$1' (usage: strace/build.sh [check|have|deps|newer-headers [SUITE]])" ;;
esac
have > /dev/null || die "$(have)"
if [ "${1:-}" = newer-headers ]; then
	newer_headers "${2:-trixie-backports}"
	exit
fi
build
echo "  STRACE  $obj/src/strace (strace 7.2 + strace/series)"
if [ "${1:-}" = check ]; then
	rc=0
	lint || rc=$?
	check || rc=$?
	exit $rc
fi
