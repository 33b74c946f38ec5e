#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Fetch Debian's linux-source-X.Y package from a suite that the machine's own
# apt sources do not carry (trixie-backports for 7.3), with a private apt
# configuration, and unpack it under the build directory:
#
#   scripts/fetch-linux-source.sh X.Y SUITE DIR
#
# leaves DIR/usr/src/linux-source-X.Y.tar.xz and DIR.version (the Debian
# version used, also printed).  The newest linux-source-X.Y in SUITE is
# taken: newer X.Y.z releases replace older ones there.  When DIR already
# holds the tarball, nothing is fetched (remove DIR, or set
# ZEROSLEEP_REFETCH=1, to take a newer release).
#
# /etc/apt and the installed packages are never changed: the source list,
# the package lists and the cache live in DIR.apt/, and the package is
# unpacked with "dpkg -x", not installed.
set -euo pipefail

family=$1
suite=$2
dir=$3
pkg=linux-source-$family
tarball=$dir/usr/src/$pkg.tar.xz
version_file=$dir.version
mirror=${ZEROSLEEP_DEBIAN_MIRROR:-http://deb.debian.org/debian}
keyring=/usr/share/keyrings/debian-archive-keyring.gpg

if [ -z "${ZEROSLEEP_REFETCH:-}" ] && [ -s "$tarball" ] && [ -s "$version_file" ]; then
	exit 0
fi

apt=$dir.apt
rm -rf "$apt"
mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/download" "$apt/preferences.d"
apt=$(realpath "$apt")
echo "deb [signed-by=$keyring] $mirror $suite main" > "$apt/sources.list"
opts=(
	-o "Dir::Etc::sourcelist=$apt/sources.list"
	-o Dir::Etc::sourceparts=-
	-o "Dir::State::Lists=$apt/lists"
	-o "Dir::Cache=$apt/cache"
	-o "Dir::Etc::preferencesparts=$apt/preferences.d"
	-o "Dir::Etc::preferences=$apt/preferences"
	-o APT::Get::List-Cleanup=0
	-o Debug::NoLocking=1
	# Files in DIR.apt are root's: "_apt" could not write the download.
	-o APT::Sandbox::User=root
)
: > "$apt/preferences"

echo "  FETCH   $pkg from $suite (private apt configuration in $apt)"
if ! apt-get "${opts[@]}" -qq update > "$apt/update.log" 2>&1; then
	cat "$apt/update.log" >&2
	echo "fetch-linux-source.sh: apt-get update of $mirror $suite failed" >&2
	exit 1
fi
version=$(apt-cache "${opts[@]}" madison "$pkg" 2>/dev/null | awk -F'|' '{gsub(/ /, "", $2); print $2}' |
	sort -V | tail -n1 || true)
if [ -z "$version" ]; then
	echo "fetch-linux-source.sh: package $pkg is not in $mirror $suite (the $family family is gone from it);" >&2
	echo "fetch-linux-source.sh: no kernel $family tree can be made; see SPEC §2" >&2
	exit 1
fi
(cd "$apt/download" && apt-get "${opts[@]}" -qq download "$pkg=$version")
deb=$(ls "$apt/download/"*.deb)
rm -rf "$dir.tmp"
dpkg -x "$deb" "$dir.tmp"
if [ ! -s "$dir.tmp/usr/src/$pkg.tar.xz" ]; then
	echo "fetch-linux-source.sh: $deb holds no usr/src/$pkg.tar.xz" >&2
	exit 1
fi
rm -rf "$dir"
mv "$dir.tmp" "$dir"
rm -f "$deb"
echo "$version" > "$version_file"
echo "  FETCH   $pkg $version"
