#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Tests of debian/, TAP on stdout: dpkg-buildpackage -us -uc -b builds
# libzerosleep2, libzerosleep-dev and zerosleep from a copy of the
# checkout; lintian accepts them (no error or warning); each holds what it
# should; installed with dpkg into a scratch root, the launcher runs from
# there and a program builds with the -dev package's pkg-config module and
# runs; purged, they leave nothing behind.
#
# The scratch root is an overlay of this machine's root whose writes go to
# a tmpfs, mounted in a private mount namespace (unshare -m): dpkg --root
# and chroot work on it with this machine's C library and compiler, and
# the real root and its dpkg database are never written.  Needs root, as
# make test.
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
arch=$(dpkg --print-architecture)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)

# ---- build ------------------------------------------------------------

# A copy of the checkout's files (tracked, and new ones not ignored): the
# build writes into debian/ and its parent directory.
src=$T/zerosleep-$version
mkdir -p "$src"
(cd "$top" && git ls-files -z -c -o --exclude-standard |
	xargs -0 sh -c 'for f; do [ -e "$f" ] && printf "%s\0" "$f"; done' sh |
	tar --null -T - -cf -) | tar -C "$src" -xf -
start=$SECONDS
(cd "$src" && dpkg-buildpackage -us -uc -b) >"$T/build.log" 2>&1
rc=$?
echo "# dpkg-buildpackage -us -uc -b took $((SECONDS - start)) s"
tail -n 40 "$T/build.log" >"$T/log"
[[ $rc == 0 ]] && : >"$T/log"
check "dpkg-buildpackage -us -uc -b: exit 0" eval '[[ $rc == 0 ]]'
debs=()
for p in libzerosleep2 libzerosleep-dev zerosleep; do
	debs+=("$T/${p}_${version}_$arch.deb")
done
check "it builds libzerosleep2, libzerosleep-dev and zerosleep $version" \
	eval 'ls "${debs[@]}" >"$T/log" 2>&1'
((rc == 0)) || finish

# ---- lintian ----------------------------------------------------------

start=$SECONDS
lintian --fail-on error,warning "$T/zerosleep_${version}_$arch.changes" >"$T/lintian" 2>&1
lrc=$?
echo "# lintian zerosleep_${version}_$arch.changes (default level), exit $lrc, $((SECONDS - start)) s:"
if [[ -s $T/lintian ]]; then sed 's/^/#   /' "$T/lintian"; else echo "#   (no tags)"; fi
check "lintian: no error and no warning" \
	eval '[[ $lrc == 0 ]] && ! grep -q "^[EW]: " "$T/lintian"'
for o in "$top"/debian/*.lintian-overrides; do
	[[ -e $o ]] || continue
	echo "# override in ${o#"$top"/}: $(grep -v '^#' "$o" | tr '\n' ' ')"
done

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
	has libzerosleep2 "$L/libzerosleep.so.$version" "$L/libzerosleep.so.2"
check "libzerosleep2 has a symbols file naming every versioned symbol" \
	eval 'dpkg-deb -I "$T/libzerosleep2_${version}_$arch.deb" symbols >"$T/symbols" &&
	      grep -q "^ zerosleep_backend@ZEROSLEEP_2.1 " "$T/symbols" &&
	      grep -q "^ zerosleep_set_policy@ZEROSLEEP_1.0 " "$T/symbols"'
check "libzerosleep-dev holds the header, the static library, the .so link, both pkg-config names, the man3 pages" \
	has libzerosleep-dev /usr/include/zerosleep.h "$L/libzerosleep.a" "$L/libzerosleep.so" \
		"$L/pkgconfig/zerosleep.pc" "$L/pkgconfig/libzerosleep.pc" \
		/usr/share/man/man3/zerosleep_set_policy.3.gz /usr/share/man/man3/zerosleep_backend.3.gz
check "zerosleep holds the launcher, the preload library, bash completion, the man1, man2const, man5 and man7 pages" \
	has zerosleep /usr/bin/zerosleep "$L/zerosleep/libzerosleep-preload.so" \
		/usr/share/bash-completion/completions/zerosleep /usr/share/man/man1/zerosleep.1.gz \
		/usr/share/man/man2const/PR_SET_TIMERSLACK_ZERO_POLICY.2const.gz \
		/usr/share/man/man5/proc_pid_timerslack_zero_policy.5.gz \
		/usr/share/man/man7/zerosleep-preload.7.gz
npages=$(cd "$top/man" && find man* -type f | wc -l)
nshipped=$(for p in libzerosleep-dev zerosleep; do contents "$p"; done | grep -c '^/usr/share/man/man.*\.gz$')
check "every man page of man/ is in a package, once ($npages pages)" eval '[[ $npages == "$nshipped" ]]'

# ---- install into a scratch root, use, purge -------------------------

if [[ $(id -u) != 0 ]]; then
	check "the scratch-root install runs as root (as make test does)" false
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
	dpkg --root="$M" -i "${debs[@]}" || return 1
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
	echo "== purge"
	dpkg --root="$M" --purge zerosleep libzerosleep-dev libzerosleep2 || return 1
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
export T version arch multiarch
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
	eval 'section use | grep -qx "zerosleep (zerosleep) $version"'
check "the launcher there preloads the packaged preload library" \
	eval 'section use | grep -qx "LD_PRELOAD=$L/zerosleep/libzerosleep-preload.so"'
check "a program built with pkg-config libzerosleep against the -dev package runs, alone and under the launcher" \
	eval 'section use | grep -qx "none -" && section use | grep -qx "preload return-immediately" &&
	      section use | grep -q "libzerosleep.so.2 => \\(/usr\\)\\?/lib/$multiarch/libzerosleep.so.2"'
check "the packaged bash completion completes a policy" \
	eval 'section use | grep -qx "completion: schedule-once schedule"'
check "dpkg --purge removes them: not installed" \
	eval '[[ $src_rc == 0 ]] && [[ $(section purge | grep -c " not-installed$") == 3 ]] ||
	      section purge | grep -q "no packages found"'
check "nothing is left: no file of the packages, no other file written" \
	eval '[[ $src_rc == 0 ]] && section left | grep -q "^== left" &&
	      ! grep -q "^left: \|^written: " "$T/scratch"'
finish
