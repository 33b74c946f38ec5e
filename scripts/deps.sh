#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Install the Debian packages that building and testing zerosleep needs.
# Nothing is done when they are all present; otherwise "apt-get update" runs
# once, then one "apt-get install".
set -eu
pkgs=(
	# kernel tree and build
	linux-source-6.12 xz-utils git make gcc libc6-dev flex bison bc
	libelf-dev libssl-dev perl python3 kmod
	# the kernel's bindeb-pkg (scripts/kernel-deb.sh), beside the above
	# and dpkg-dev and debhelper below: cpio (kheaders), rsync (its
	# headers_install), libdw-dev (7.3's build dependencies), dwarves
	# (pahole, for the BTF of a Debian configuration)
	cpio rsync libdw-dev dwarves
	# the guest
	qemu-system-x86 seabios
	# guest tools and tests
	util-linux procps strace coreutils
	# userspace library and its checks
	pkg-config valgrind binutils gcc-multilib
	# man pages and documentation
	mandoc groff man-db python3-docutils python3-ply python3-git
	# benchmark plots, kernel static analysis
	gnuplot-nox sparse
	# compiler cache for the kernels, hygiene and strace (optional: builds
	# work the same without it)
	ccache
	# strace 7.2 from its git tree (strace/build.sh): ./bootstrap needs
	# autoconf, automake and gawk (strace's INSTALL-git.md)
	autoconf automake gawk
	# Debian's archive key (scripts/fetch-linux-source.sh)
	debian-archive-keyring
	# the Debian packages of debian/ (scripts/test-debian.sh)
	dpkg-dev debhelper lintian
)
missing=()
for p in "${pkgs[@]}"; do
	case $p in \#*) continue ;; esac
	s=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
	[ "$s" = installed ] || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "  DEPS    installing: ${missing[*]}"
if [ "$(id -u)" != 0 ]; then
	echo "deps.sh: these packages are missing and installing them needs root: ${missing[*]}" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" > /dev/null
