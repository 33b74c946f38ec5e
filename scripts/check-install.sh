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
# shellcheck source=scripts/tap.sh
. "$top/scripts/tap.sh"
# quiet COMMAND...: COMMAND, its output dropped.
quiet() { "$@" > /dev/null 2>&1; }
# A build directory of its own: installing rebuilds the launcher for its
# PREFIX, and the guest tests may be running the one in build/.
check "make install PREFIX=/usr DESTDIR=..." quiet make -s -C "$top" install BUILD="$dest.build" PREFIX=/usr DESTDIR="$dest"
for f in usr/include/zerosleep.h usr/bin/zerosleep; do
	check "installed /$f" quiet test -f "$dest/$f"
done
check "installed libzerosleep.so.2 and libzerosleep.a" \
	quiet bash -c "ls '$dest'/usr/lib*/libzerosleep.so.2 '$dest'/usr/lib*/libzerosleep.a ||
		ls '$dest'/usr/lib/*/libzerosleep.so.2 '$dest'/usr/lib/*/libzerosleep.a"
check "installed zerosleep.pc" quiet bash -c "find '$dest' -name zerosleep.pc | grep -q ."
check "installed libzerosleep-preload.so where the launcher looks for it" \
	quiet bash -c "f=\$(find '$dest' -name libzerosleep-preload.so) && [ -n \"\$f\" ] &&
		grep -aq \"\${f#$dest}\" '$dest/usr/bin/zerosleep'"
# The version is the header's, as the library's Makefile takes it.
version=$(sed -n 's/^#define ZEROSLEEP_VERSION_\(MAJOR\|MINOR\|PATCH\)[[:space:]]*\([0-9]*\)$/\2/p' \
	"$top/libc-wrapper/include/zerosleep.h" | paste -sd.)
check "the installed launcher runs: zerosleep --version is $version" \
	quiet bash -c "'$dest/usr/bin/zerosleep' --version | grep -qx 'zerosleep (zerosleep) $version'"
for page in $(cd "$top/man" && ls man*/*); do
	f=$dest/usr/share/man/$page
	check "installed and man -l renders /usr/share/man/$page" \
		quiet bash -c "test -s '$f' && out=\$(MANWIDTH=80 man -l '$f' 2>&1 >/dev/null) && [ -z \"\$out\" ] &&
			MANWIDTH=80 man -l '$f' 2>/dev/null | grep -q ."
done
tap_end
