#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Make sure that Debian's source tarball of a supported kernel is on the
# machine and print its path:
#
#   scripts/kernel-source.sh 6.12|7.3
#
# 6.12 comes from bookworm's own apt sources (scripts/deps.sh installs
# linux-source-6.12).  7.3 comes from trixie-backports, through a private
# apt configuration under build/ (scripts/fetch-linux-source.sh); the
# Debian version used is in build/linux-source-7.3.version.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
case ${1:-} in
6.12)
	t=/usr/src/linux-source-6.12.tar.xz
	if [ ! -r "$t" ]; then
		echo "kernel-source.sh: $t is missing: run 'make deps' (it installs linux-source-6.12)" >&2
		exit 1
	fi
	;;
7.3)
	"$top/scripts/fetch-linux-source.sh" 7.3 trixie-backports "$top/build/linux-source-7.3" >&2
	t=$top/build/linux-source-7.3/usr/src/linux-source-7.3.tar.xz
	;;
*)
	echo "kernel-source.sh: unknown kernel '${1:-}': the series exists for 6.12 and 7.3" >&2
	exit 2
	;;
esac
echo "$t"
