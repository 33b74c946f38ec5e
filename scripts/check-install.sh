#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# "make install PREFIX=/usr DESTDIR=<tmp>" installs the library, its header
# and pkg-config file, the launcher and every man page, and each installed
# page renders with man -l.  TAP output.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
dest=$(mktemp -d)
trap 'rm -rf "$dest" "$dest.build"' EXIT
n=0
bad=0
t() {
	n=$((n + 1))
	if "$@" > /dev/null 2>&1; then echo "ok $n - ${desc}"; else echo "not ok $n - ${desc}"; bad=1; fi
}
# A build directory of its own: installing rebuilds the launcher for its
# PREFIX, and the guest tests may be running the one in build/.
desc="make install PREFIX=/usr DESTDIR=..." t make -s -C "$top" install BUILD="$dest.build" PREFIX=/usr DESTDIR="$dest"
for f in usr/include/zerosleep.h usr/bin/zerosleep; do
	desc="installed /$f" t test -f "$dest/$f"
done
desc="installed libzerosleep.so.2 and libzerosleep.a" \
	t bash -c "ls '$dest'/usr/lib*/libzerosleep.so.2 '$dest'/usr/lib*/libzerosleep.a ||
		ls '$dest'/usr/lib/*/libzerosleep.so.2 '$dest'/usr/lib/*/libzerosleep.a"
desc="installed zerosleep.pc" t bash -c "find '$dest' -name zerosleep.pc | grep -q ."
desc="installed libzerosleep-preload.so where the launcher looks for it" \
	t bash -c "f=\$(find '$dest' -name libzerosleep-preload.so) && [ -n \"\$f\" ] &&
		grep -aq \"\${f#$dest}\" '$dest/usr/bin/zerosleep'"
# The version is the header's, as the library's Makefile takes it.
version=$(sed -n 's/^#define ZEROSLEEP_VERSION_\(MAJOR\|MINOR\|PATCH\)[[:space:]]*\([0-9]*\)$/\2/p' \
	"$top/libc-wrapper/include/zerosleep.h" | paste -sd.)
desc="the installed launcher runs: zerosleep --version is $version" \
	t bash -c "'$dest/usr/bin/zerosleep' --version | grep -qx 'zerosleep (zerosleep) $version'"
for page in $(cd "$top/man" && ls man*/*); do
	f=$dest/usr/share/man/$page
	desc="installed and man -l renders /usr/share/man/$page" \
		t bash -c "test -s '$f' && out=\$(MANWIDTH=80 man -l '$f' 2>&1 >/dev/null) && [ -z \"\$out\" ] &&
			MANWIDTH=80 man -l '$f' 2>/dev/null | grep -q ."
done
echo "1..$n"
exit $bad
