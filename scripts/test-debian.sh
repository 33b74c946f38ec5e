#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Tests of debian/, TAP on stdout.  In a copy of the checkout, committed
# to a git repository of its own: "make dist" makes the upstream tarball
# (the same bytes twice, no build/, no debian/), which becomes
# ../zerosleep_VERSION.orig.tar.gz; then, with a build/ directory left
# in the copy as in a used checkout, dpkg-buildpackage -us -uc builds the
# source package (3.0 (quilt), build/ neither packed nor diffed) and
# libzerosleep2, libzerosleep-dev and zerosleep, with a verbose log,
# DEB_BUILD_OPTIONS' parallel=2 and nocheck honoured; debian/rules'
# dh_auto_test then runs the library's host tests, beside the checks
# below (its sleeps need no CPU); lintian -EI --pedantic on
# both reports no tag but those listed below, each with its reason;
# debian/copyright gives each file the licence of its SPDX line; each
# package holds what it should; installed with dpkg into a scratch root,
# the launcher runs from there, a program builds with the -dev package's
# pkg-config module and runs, and debian/tests (the autopkgtest) passes
# there; purged, they leave nothing behind.
#
# The scratch root is an overlay of this machine's root whose writes go to
# a tmpfs, mounted in a private mount namespace (unshare -m): dpkg --root
# and chroot work on it with this machine's C library and compiler, and
# the real root, its dpkg database and its dpkg log are never written.
# Needs root, as make test.
# Conditions are passed to check() in single quotes and evaluated there.
# shellcheck disable=SC2016,SC2034,SC2317
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
T=$(mktemp -d "${TMPDIR:-/tmp}/zerosleep-deb.XXXXXX") || exit 1
# The scratch root's mounts live only in the namespace that made them;
# should one ever be seen here, nothing under it is removed.
cleanup() {
	if mountpoint -q "$T/root" || mountpoint -q "$T/rw"; then
		echo "# $T/root is still mounted: left in place" >&2
	else
		rm -rf --one-file-system "$T"
	fi
}
trap cleanup EXIT
# shellcheck source=scripts/tap.sh
. "$top/scripts/tap.sh"

# A check's diagnostics: what it wrote to $T/log, emptied after each check.
show_log() { [[ -s $T/log ]] && sed 's/^/#   /' "$T/log" | head -n 60; }
empty_log() { : >"$T/log"; }
tap_on_fail=show_log
tap_after_check=empty_log
finish() {
	tap_end
	exit
}

version=$(dpkg-parsechangelog -l "$top/debian/changelog" -S Version)
upstream=${version%-*}
arch=$(dpkg --print-architecture)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
host_gnu=$(dpkg-architecture -qDEB_HOST_GNU_TYPE)

# lintian -EI --pedantic's tags that are expected, and why; any other
# tag, and any error, fails.  (debian/*.lintian-overrides hold the tags
# that bookworm's lintian gets wrong; they are listed below too.)
lintian_expected=(
	# The changelog's first entry is "Initial release."; Debian's form
	# closes the ITP bug, which is not filed yet: its number goes there.
	initial-upload-closes-no-bugs
	# Standards-Version is the current Policy, 4.7.3; bookworm's lintian
	# (2.116) knows Policy up to 4.6.2.
	newer-standards-version
	# The project has no web site, public repository or bug tracker to
	# name (Homepage:, debian/upstream/metadata), and its tarballs
	# ("make dist") are not signed (debian/watch).
	no-homepage-field
	upstream-metadata-file-is-missing
	debian-watch-does-not-check-openpgp-signature
)

# ---- upstream tarball, build -------------------------------------------

# A copy of the checkout's files (tracked, and new ones not ignored),
# committed, as make dist archives a commit; the build writes into
# debian/ and the copy's parent directory.
src=$T/zerosleep-$upstream
mkdir -p "$src"
(cd "$top" && git ls-files -z -c -o --exclude-standard |
	xargs -0 sh -c 'for f; do [ -e "$f" ] && printf "%s\0" "$f"; done' sh |
	tar --null -T - -cf -) | tar -C "$src" -xf -
git_q=(git -C "$src" -c user.name=zerosleep -c user.email=zerosleep@localhost -c gc.auto=0)
"${git_q[@]}" init -q && "${git_q[@]}" add -A &&
	GIT_AUTHOR_DATE=2026-12-05T13:00:00Z GIT_COMMITTER_DATE=2026-12-05T13:00:00Z \
	"${git_q[@]}" commit -q -m "test-debian.sh: the checkout" >"$T/log" 2>&1
dist=$src/build/zerosleep-$upstream.tar.gz
check "make dist: build/zerosleep-$upstream.tar.gz of the commit, the same bytes twice" \
	eval 'make -s -C "$src" dist >>"$T/log" 2>&1 && cp "$dist" "$T/dist1" &&
	      make -s -C "$src" dist >>"$T/log" 2>&1 && cmp "$dist" "$T/dist1" >>"$T/log" 2>&1'
tar -tzf "$dist" >"$T/dist.list" 2>>"$T/log"
check "the tarball holds every tracked file but debian/, under zerosleep-$upstream/, and no build/" \
	eval '"${git_q[@]}" ls-files | grep -v "^debian/" | sed "s|^|zerosleep-$upstream/|" | sort >"$T/tracked" &&
	      grep -v "/$" "$T/dist.list" | sort | diff - "$T/tracked" >>"$T/log" &&
	      ! grep -q "^zerosleep-$upstream/\(build\|debian\)/" "$T/dist.list"'
cp "$dist" "$T/zerosleep_$upstream.orig.tar.gz"
# A used checkout: build output that the upstream tarball does not have.
mkdir -p "$src/build/kernel" "$src/libc-wrapper/__pycache__"
echo "not for the source package" >"$src/build/kernel/vmlinux"
echo "not for the source package" >"$src/libc-wrapper/__pycache__/x.pyc"

start=$SECONDS
(cd "$src" && DEB_BUILD_OPTIONS="nocheck parallel=2" dpkg-buildpackage -us -uc) >"$T/build.log" 2>&1
rc=$?
echo "# DEB_BUILD_OPTIONS='nocheck parallel=2' dpkg-buildpackage -us -uc took $((SECONDS - start)) s"
tail -n 40 "$T/build.log" >"$T/log"
[[ $rc == 0 ]] && : >"$T/log"
check "dpkg-buildpackage -us -uc (source and binary) in a used checkout: exit 0" eval '[[ $rc == 0 ]]'
debs=()
for p in libzerosleep2 libzerosleep-dev zerosleep; do
	debs+=("$T/${p}_${version}_$arch.deb")
done
check "it builds libzerosleep2, libzerosleep-dev and zerosleep $version" \
	eval 'ls "${debs[@]}" >"$T/log" 2>&1'
((rc == 0)) || finish
dsc=$T/zerosleep_$version.dsc
check "the source package is 3.0 (quilt): the orig tarball and debian.tar.xz, which holds only debian/" \
	eval 'grep -qx "Format: 3.0 (quilt)" "$dsc" &&
	      grep -q " zerosleep_$upstream.orig.tar.gz$" "$dsc" &&
	      grep -q " zerosleep_$version.debian.tar.xz$" "$dsc" &&
	      tar -tJf "$T/zerosleep_$version.debian.tar.xz" >"$T/debian.list" &&
	      ! grep -v "^debian/" "$T/debian.list" >>"$T/log" && ! grep -q "^debian/build/" "$T/debian.list"'
check "dpkg-source -x unpacks it with no patch and no build/: the tree of the commit" \
	eval 'dpkg-source -x "$dsc" "$T/unpacked" >"$T/log" 2>&1 && [[ ! -e $T/unpacked/debian/patches ]] &&
	      [[ ! -e $T/unpacked/build ]] && [[ -x $T/unpacked/debian/rules ]]'
# The build log: every compiler command, with dpkg-buildflags' flags
# (CFLAGS, CPPFLAGS, LDFLAGS) and buildtools.mk's compiler.
compile=$(grep -m1 -- "-c -o .*/pic/zerosleep.o src/zerosleep.c" "$T/build.log")
check "the build log shows the commands: $host_gnu-gcc with dpkg-buildflags' hardening flags" \
	eval 'echo "$compile" >"$T/log"; [[ $compile == "$host_gnu-gcc "* ]] &&
	      [[ $compile == *" -D_FORTIFY_SOURCE=2 "* && $compile == *" -fstack-protector-strong "* ]] &&
	      grep -q -- "-Wl,-z,now .*-o .*/zerosleep " "$T/build.log"'
check "DEB_BUILD_OPTIONS: parallel=2 gives make -j2, nocheck runs no test" \
	eval 'grep -q "^	make -j2 .* lib " "$T/build.log" && ! grep -q "^== test-" "$T/build.log"'
# What dh_auto_test runs, as dpkg-buildpackage without nocheck would run
# it: in the background, judged at the end.
dh_test_start=$SECONDS
(cd "$src" && DEB_BUILD_OPTIONS='' debian/rules override_dh_auto_test) >"$T/dh_test.log" 2>&1 &
dh_test_pid=$!
dh_test_check() {
	wait "$dh_test_pid"
	dh_test_rc=$?
	echo "# debian/rules override_dh_auto_test: exit $dh_test_rc, $((SECONDS - dh_test_start)) s;" \
		"$(grep -c "^ok" "$T/dh_test.log") passed, $(grep -c "^not ok" "$T/dh_test.log") failed"
	grep "^not ok" "$T/dh_test.log" | sed 's/^/#   /'
	check "dh_auto_test runs the library's host tests: test-lib, test-internal, test-preload, none failed" \
		eval '[[ $dh_test_rc == 0 ]] && ! grep -q "^not ok" "$T/dh_test.log" &&
		      for t in test-lib test-internal test-preload; do grep -qx "== $t" "$T/dh_test.log" || return 1; done'
}
# ---- lintian ----------------------------------------------------------

# In the background, beside the checks below: the report is judged last.
lintian_start=$SECONDS
lintian -EI --pedantic "$T/zerosleep_${version}_$arch.changes" >"$T/lintian" 2>&1 &
lintian_pid=$!
lintian_check() {
	wait "$lintian_pid"
	lrc=$?
	echo "# lintian -EI --pedantic zerosleep_${version}_$arch.changes (the source and binary packages), exit $lrc, $((SECONDS - lintian_start)) s:"
	grep -v "^running with root privileges" "$T/lintian" | sed 's/^/#   /'
	for o in "$top"/debian/*.lintian-overrides "$top"/debian/source/lintian-overrides; do
		[[ -e $o ]] || continue
		echo "# override in ${o#"$top"/}: $(grep -v '^#' "$o" | tr '\n' ' ')"
	done
	sed -n 's/^[EWIPX]: [^ ]*\( source\)\?: \([^ ]*\).*/\2/p' "$T/lintian" | sort -u >"$T/tags"
	check "lintian -EI --pedantic: no error, no tag but the ${#lintian_expected[@]} expected ones" \
		eval '[[ $lrc == 0 ]] && ! grep -q "^E: " "$T/lintian" &&
		      ! printf "%s\n" "${lintian_expected[@]}" | sort | comm -23 "$T/tags" - | sed "s/^/unexpected: /" | grep . >"$T/log"'
}

# ---- debian/copyright -------------------------------------------------

# Each file's SPDX-License-Identifier (in its first lines, as README
# says) against the licence that debian/copyright's last matching Files:
# stanza gives it.
copyright_true() {
	python3 - "$src" >"$T/log" 2>&1 <<'PY'
import fnmatch, re, subprocess, sys
src = sys.argv[1]
spdx = {'GPL-2': {'GPL-2.0', 'GPL-2.0-only'}, 'GPL-2+': {'GPL-2.0+', 'GPL-2.0-or-later'},
        'LGPL-2.1+': {'LGPL-2.1+', 'LGPL-2.1-or-later'},
        'GPL-2 with Linux-syscall-note exception': {'GPL-2.0 WITH Linux-syscall-note'},
        'Linux-man-pages-copyleft': {'Linux-man-pages-copyleft'}}
stanzas = []
for para in open(f'{src}/debian/copyright').read().split('\n\n'):
    fields, key = {}, None
    for line in para.splitlines():
        if line[:1] in (' ', '\t'):
            fields[key] += ' ' + line.strip()
        elif ':' in line:
            key, value = line.split(':', 1)
            fields[key] = value.strip()
    if 'Files' in fields:
        stanzas.append((fields['Files'].split(), fields['License']))
files = subprocess.run(['git', '-C', src, 'ls-files'], capture_output=True,
                       text=True, check=True).stdout.split()
bad = 0
for f in files:
    try:
        head = open(f'{src}/{f}', errors='replace').read().splitlines()[:5]
    except OSError:
        continue
    ids = [m.group(1) for line in head
           for m in [re.search(r'SPDX-License-Identifier: (.*?)\s*(\*/)?$', line)] if m]
    if not ids:
        continue
    lic = None
    for pats, l in stanzas:
        if any(fnmatch.fnmatchcase(f, p) for p in pats):
            lic = l
    if ids[0] not in spdx.get(lic, ()):
        print(f'{f}: SPDX {ids[0]}, debian/copyright {lic}')
        bad += 1
sys.exit(1 if bad else 0)
PY
}
check "debian/copyright gives every file with an SPDX line that licence" copyright_true

# ---- contents ---------------------------------------------------------

contents() { dpkg-deb -c "$T/${1}_${version}_$arch.deb" | awk '{ print $6 }' | sed 's|^\./|/|'; }
has() {
	local p=$1 f
	shift
	contents "$p" >"$T/contents"
	for f; do
		grep -qx -- "$f" "$T/contents" || { echo "$p lacks $f" >>"$T/log"; return 1; }
	done
}
L=/usr/lib/$multiarch
check "libzerosleep2 holds the shared library and its soname link" \
	has libzerosleep2 "$L/libzerosleep.so.$upstream" "$L/libzerosleep.so.2"
check "libzerosleep2 has a symbols file naming every versioned symbol" \
	eval 'dpkg-deb -I "$T/libzerosleep2_${version}_$arch.deb" symbols >"$T/symbols" &&
	      grep -q "^ zerosleep_backend@ZEROSLEEP_2.1 " "$T/symbols" &&
	      grep -q "^ zerosleep_set_policy@ZEROSLEEP_1.0 " "$T/symbols" &&
	      grep -q "^ zerosleep_version@ZEROSLEEP_2.2 " "$T/symbols"'
check "libzerosleep-dev holds the header, the static library, the .so link, both pkg-config names, the man3 pages" \
	has libzerosleep-dev /usr/include/zerosleep.h "$L/libzerosleep.a" "$L/libzerosleep.so" \
		"$L/pkgconfig/zerosleep.pc" "$L/pkgconfig/libzerosleep.pc" \
		/usr/share/man/man3/zerosleep_set_policy.3.gz /usr/share/man/man3/zerosleep_backend.3.gz \
		/usr/share/man/man3/libzerosleep.3.gz /usr/share/man/man3/zerosleep_version.3.gz
check "zerosleep ships README and doc/loop-figures.sh in /usr/share/doc/zerosleep" \
	has zerosleep /usr/share/doc/zerosleep/README.md.gz /usr/share/doc/zerosleep/examples/loop-figures.sh
check "zerosleep holds the launcher, the preload library, bash completion, the man1, man2const, man5 and man7 pages" \
	has zerosleep /usr/bin/zerosleep "$L/zerosleep/libzerosleep-preload.so" \
		/usr/share/bash-completion/completions/zerosleep /usr/share/man/man1/zerosleep.1.gz \
		/usr/share/man/man2const/PR_SET_TIMERSLACK_ZERO_POLICY.2const.gz \
		/usr/share/man/man5/proc_pid_timerslack_zero_policy.5.gz \
		/usr/share/man/man7/zerosleep-preload.7.gz
# The installed pages name the package's paths, not make install's default.
page_of() {
	dpkg-deb --fsys-tarfile "$T/zerosleep_${version}_$arch.deb" | tar -xO ".$1" | zcat
}
roff_L=${L//-/\\-}
check "zerosleep(1) and zerosleep-preload(7) in the package name $L/zerosleep and /usr/bin/zerosleep, not /usr/local" \
	eval 'page_of /usr/share/man/man1/zerosleep.1.gz >"$T/zerosleep.1" &&
	      page_of /usr/share/man/man7/zerosleep-preload.7.gz >"$T/zerosleep-preload.7" &&
	      grep -qF "$roff_L/zerosleep/libzerosleep\-preload.so" "$T/zerosleep.1" &&
	      grep -qF "ExecStart=/usr/bin/zerosleep " "$T/zerosleep.1" &&
	      grep -qF "LD_PRELOAD=$roff_L/zerosleep/libzerosleep\-preload.so" "$T/zerosleep-preload.7" &&
	      ! grep -q /usr/local "$T/zerosleep.1" "$T/zerosleep-preload.7"'
npages=$(cd "$top/man" && find man* -type f | wc -l)
nshipped=$(for p in libzerosleep-dev zerosleep; do contents "$p"; done | grep -c '^/usr/share/man/man.*\.gz$')
check "every man page of man/ is in a package, once ($npages pages)" eval '[[ $npages == "$nshipped" ]]'

# ---- install into a scratch root, use, purge -------------------------

if [[ $(id -u) != 0 ]]; then
	check "the scratch-root install runs as root (as make test does)" false
	dh_test_check
	lintian_check
	finish
fi
cat >"$T/consumer.c" <<'END'
#include <stdio.h>
#include <zerosleep.h>

int main(void)
{
	int b = zerosleep_backend();

	printf("%s %s\n", b == ZEROSLEEP_BACKEND_KERNEL ? "kernel" :
	       b == ZEROSLEEP_BACKEND_PRELOAD ? "preload" : "none",
	       b ? zerosleep_policy_name(zerosleep_get_policy()) : "-");
	return 0;
}
END
# In the namespace: M is the scratch root, U its writes.
scratch() {
	set -u
	local M=$T/root U=$T/rw/upper
	mkdir -p "$T/rw" "$M"
	mount -t tmpfs tmpfs "$T/rw" && mkdir "$U" "$T/rw/work" &&
		mount -t overlay overlay -o "lowerdir=/,upperdir=$U,workdir=$T/rw/work" "$M" &&
		mount --rbind /dev "$M/dev" && mount -t proc proc "$M/proc" || return 1
	echo "== install"
	dpkg --root="$M" --log="$M/var/log/dpkg.log" -i "${debs[@]}" || return 1
	dpkg-query --root="$M" -W -f '${Package} ${Version} ${db:Status-Status}\n' \
		libzerosleep2 libzerosleep-dev zerosleep
	echo "== use"
	cp "$T/consumer.c" "$M/tmp/consumer.c"
	chroot "$M" zerosleep --version
	chroot "$M" zerosleep -q return /bin/sh -c 'echo "LD_PRELOAD=$LD_PRELOAD"'
	# The system's compiler, not make test's ccache, whose cache and
	# statistics log would be written in the scratch root.
	chroot "$M" env -u CCACHE_STATSLOG CCACHE_DISABLE=1 PATH=/usr/sbin:/usr/bin:/sbin:/bin \
		sh -c 'cc -o /tmp/consumer /tmp/consumer.c $(pkg-config --cflags --libs libzerosleep) &&
		/tmp/consumer && zerosleep -q return /tmp/consumer && ldd /tmp/consumer | grep libzerosleep'
	chroot "$M" bash -c '. /usr/share/bash-completion/completions/zerosleep
		COMP_WORDS=(zerosleep sched); COMP_CWORD=1; _zerosleep; echo "completion: ${COMPREPLY[*]}"'
	rm -f "$M/tmp/consumer" "$M/tmp/consumer.c"
	# debian/tests, as autopkgtest runs them on an installed system: each
	# test of debian/tests/control with its Depends installed, in a
	# directory of its own (AUTOPKGTEST_TMP); without allow-stderr, a
	# test that writes to stderr fails.
	echo "== autopkgtest"
	local t d deps
	mkdir -p "$M/tmp/autopkgtest"
	cp -r "$src/debian/tests" "$M/tmp/autopkgtest/"
	deps=$(sed -n 's/^Depends: *//p' "$src/debian/tests/control" | tr -d ' ' | tr ',' ' ')
	for d in $deps; do
		echo "depends $d: $(dpkg-query --root="$M" -W -f '${db:Status-Status}' "$d" 2>&1)"
	done
	for t in $(sed -n 's/^Tests: *//p' "$src/debian/tests/control" | tr ',' ' '); do
		mkdir -p "$M/tmp/autopkgtest/tmp-$t"
		chroot "$M" env -u CCACHE_STATSLOG CCACHE_DISABLE=1 PATH=/usr/sbin:/usr/bin:/sbin:/bin \
			AUTOPKGTEST_TMP="/tmp/autopkgtest/tmp-$t" "/tmp/autopkgtest/tests/$t" \
			2>"$T/autopkgtest-$t.err"
		echo "autopkgtest $t: exit $?, $(wc -c <"$T/autopkgtest-$t.err") bytes on stderr"
		sed 's/^/stderr: /' "$T/autopkgtest-$t.err"
	done
	rm -rf "$M/tmp/autopkgtest"
	echo "== purge"
	dpkg --root="$M" --log="$M/var/log/dpkg.log" --purge zerosleep libzerosleep-dev libzerosleep2 || return 1
	dpkg-query --root="$M" -W -f '${Package} ${db:Status-Status}\n' \
		libzerosleep2 libzerosleep-dev zerosleep 2>&1
	echo "== left"
	for p in libzerosleep2 libzerosleep-dev zerosleep; do contents "$p"; done |
		while read -r f; do
			[[ $f == */ ]] && continue
			[[ -e $M$f || -L $M$f ]] && echo "left: $f"
		done
	# Every file that the overlay holds, but dpkg's own records and logs
	# and the dynamic linker's cache, which the ldconfig trigger rewrote.
	(cd "$U" && find . ! -type d ! -path './var/lib/dpkg/*' ! -path './var/log/*' \
		! -path './etc/ld.so.cache' ! -path './var/cache/*' ! -path './tmp/*' | sed 's/^/written: /')
}
export -f scratch contents
export T version arch multiarch src
debs_list=$(printf '%q ' "${debs[@]}")
start=$SECONDS
unshare -m --propagation private bash -c "debs=($debs_list); scratch" >"$T/scratch" 2>&1
src_rc=$?
echo "# install, use and purge in the scratch root took $((SECONDS - start)) s"
sed 's/^/# /' "$T/scratch"
section() { sed -n "/^== $1\$/,/^== /p" "$T/scratch"; }
check "dpkg --root installs the three packages into the scratch root" \
	eval '[[ $(section install | grep -c " $version installed$") == 3 ]]'
check "the launcher runs from the scratch root: zerosleep --version" \
	eval 'section use | grep -qx "zerosleep (zerosleep) $upstream"'
check "the launcher there preloads the packaged preload library" \
	eval 'section use | grep -qx "LD_PRELOAD=$L/zerosleep/libzerosleep-preload.so"'
check "a program built with pkg-config libzerosleep against the -dev package runs, alone and under the launcher" \
	eval 'section use | grep -qx "none -" && section use | grep -qx "preload return-immediately" &&
	      section use | grep -q "libzerosleep.so.2 => \\(/usr\\)\\?/lib/$multiarch/libzerosleep.so.2"'
check "the packaged bash completion completes a policy" \
	eval 'section use | grep -qx "completion: schedule-once schedule"'
autopkgtests=$(sed -n 's/^Tests: *//p' "$top/debian/tests/control" | tr ',' ' ')
check "the autopkgtest (debian/tests: $autopkgtests) passes against the installed packages, its Depends installed" \
	eval 'section autopkgtest | grep -q "^autopkgtest " &&
	      ! section autopkgtest | grep "^depends " | grep -v " installed$" | grep . &&
	      ! section autopkgtest | grep "^autopkgtest " | grep -v ": exit 0, 0 bytes on stderr$" | grep . &&
	      ! section autopkgtest | grep -q "^not ok"'
check "dpkg --purge removes them: not installed" \
	eval '[[ $src_rc == 0 ]] && [[ $(section purge | grep -c " not-installed$") == 3 ]] ||
	      section purge | grep -q "no packages found"'
check "nothing is left: no file of the packages, no other file written" \
	eval '[[ $src_rc == 0 ]] && section left | grep -q "^== left" &&
	      ! grep -q "^left: \|^written: " "$T/scratch"'
dh_test_check
lintian_check
finish
