#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# After make install or make uninstall: refresh the dynamic linker's cache
# only where that helps, and otherwise say what to set.
#
#   ldconfig.sh install|uninstall LIBDIR [DESTDIR]
#
# With a DESTDIR (a staging tree, a package build) nothing is done: the
# cache of this machine is not the one that will find the files.  When
# LIBDIR is one of the directories that ldconfig scans (/etc/ld.so.conf and
# the default ones), ldconfig runs, as root, or is asked for.  Otherwise
# ldconfig would not help: programs linked with -lzerosleep need
# LD_LIBRARY_PATH or a file in /etc/ld.so.conf.d/ (the launcher needs
# neither: the library is linked into it).
set -u
what=$1 libdir=$2 destdir=${3:-}

[ -n "$destdir" ] && exit 0
ldconfig=$(command -v ldconfig || echo /sbin/ldconfig)
[ -x "$ldconfig" ] || exit 0
want=$(readlink -m "$libdir")
# The directories ldconfig scans, one a line ("DIR: (from ...)").
"$ldconfig" -v -N -X 2>/dev/null | sed -n 's/^\([^[:space:]][^:]*\):.*$/\1/p' |
	while read -r dir; do readlink -m "$dir"; done | grep -qxF "$want"
in_path=$?
if [ "$in_path" = 0 ]; then
	if [ "$(id -u)" = 0 ]; then
		echo ldconfig
		"$ldconfig"
	else
		echo "make $what: run ldconfig as root, to update the dynamic linker's cache for $libdir"
	fi
elif [ "$what" = install ]; then
	echo "make install: $libdir is not in the dynamic linker's search path, so ldconfig was not run:"
	echo "make install: run programs linked with -lzerosleep with LD_LIBRARY_PATH=$libdir, or name"
	echo "make install: $libdir in a file in /etc/ld.so.conf.d/ and run ldconfig (the launcher needs neither)"
fi
exit 0
