#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Fetch what the arm64 guest needs from Debian, without changing the
# machine's apt sources, architectures or installed packages:
#
#   scripts/arm64-fetch.sh DIR
#
# leaves
#   DIR/toolchain        Debian's gcc-12-aarch64-linux-gnu, its binutils and
#                        the cross libc (libc6-dev-arm64-cross), unpacked
#                        with "dpkg-deb -x";
#   DIR/toolchain-armhf  the same for AArch32 (gcc-12-arm-linux-gnueabihf).
#                        A cross compiler cannot be installed here:
#                        bookworm's gcc-multilib, which make test needs,
#                        conflicts with it.  GCC finds its own programs
#                        relative to where it lies, so it runs from
#                        DIR/toolchain/usr/bin; the linker scripts that
#                        name the libc by absolute path are rewritten to
#                        point into the copy (scripts/arm64-env.sh);
#   DIR/rootfs           the guest's root filesystem: arm64 bash,
#                        coreutils, util-linux, python3, bc and the dynamic
#                        C library (libc6:arm64), unpacked with "dpkg-deb
#                        -x" (no maintainer script runs: nothing here can
#                        execute arm64 code), which qemu/run.sh shares with
#                        the guest.
#
# The package lists, the cache and an empty dpkg status (so that apt
# resolves the guest's packages from nothing, for arm64 alone) live in
# DIR/apt.
set -euo pipefail

dir=$1
mirror=${ZEROSLEEP_DEBIAN_MIRROR:-http://deb.debian.org/debian}
suite=bookworm
keyring=/usr/share/keyrings/debian-archive-keyring.gpg

# The cross toolchain (amd64 packages that build for arm64).  Their host
# libraries (libmpc3, libisl23, libbinutils...) are gcc's and binutils'
# own, which "make deps" installs.
toolchain=(
	gcc-12-aarch64-linux-gnu cpp-12-aarch64-linux-gnu gcc-12-aarch64-linux-gnu-base
	gcc-12-cross-base binutils-aarch64-linux-gnu
	libgcc-12-dev-arm64-cross libgcc-s1-arm64-cross libgomp1-arm64-cross
	libitm1-arm64-cross libatomic1-arm64-cross libasan8-arm64-cross
	liblsan0-arm64-cross libtsan2-arm64-cross libubsan1-arm64-cross
	libhwasan0-arm64-cross
	libc6-arm64-cross libc6-dev-arm64-cross linux-libc-dev-arm64-cross
)
# AArch32 (armhf), for a 32-bit program under the supervisor on arm64.
toolchain_armhf=(
	gcc-12-arm-linux-gnueabihf cpp-12-arm-linux-gnueabihf
	gcc-12-arm-linux-gnueabihf-base gcc-12-cross-base
	binutils-arm-linux-gnueabihf libgcc-12-dev-armhf-cross
	libgcc-s1-armhf-cross libgomp1-armhf-cross libatomic1-armhf-cross
	libasan8-armhf-cross libubsan1-armhf-cross
	libc6-armhf-cross libc6-dev-armhf-cross linux-libc-dev-armhf-cross
)
# The guest's userland: what qemu/guest-init.sh, the TAP runners, the
# launcher's tests (python3 with ctypes for its loop and exit-status
# checks, strace for the preload's count of system calls) and
# bench/supervisor.sh (bc) call.
rootfs=(
	bash dash coreutils mount util-linux bsdutils procps grep sed mawk
	findutils diffutils debianutils libc6 libc-bin python3 strace bc
)

# A stamp for each part records its package list: when it matches, that
# part is not fetched again (a toolchain in use by a build stays put).
key() { printf '%s\n' v2 "$mirror" "$suite" "$@" | sha256sum | cut -d' ' -f1; }
rootfs_key=$(key "${rootfs[@]}")
have_rootfs=$(cat "$dir/rootfs.stamp" 2>/dev/null || true)
if [ "$(cat "$dir/toolchain.stamp" 2>/dev/null)" = "$(key "${toolchain[@]}")" ] &&
   [ "$(cat "$dir/toolchain-armhf.stamp" 2>/dev/null)" = "$(key "${toolchain_armhf[@]}")" ] &&
   [ "$have_rootfs" = "$rootfs_key" ]; then
	exit 0
fi

apt=$dir/apt
rm -rf "$apt"
mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/toolchain" "$apt/preferences.d"
apt=$(realpath "$apt")
echo "deb [signed-by=$keyring arch=amd64,arm64] $mirror $suite main" > "$apt/sources.list"
: > "$apt/preferences"
: > "$apt/status"
common=(
	-o "Dir::Etc::sourcelist=$apt/sources.list"
	-o Dir::Etc::sourceparts=-
	-o "Dir::State::Lists=$apt/lists"
	-o "Dir::Cache=$apt/cache"
	-o "Dir::Etc::preferencesparts=$apt/preferences.d"
	-o "Dir::Etc::preferences=$apt/preferences"
	-o APT::Get::List-Cleanup=0
	-o Debug::NoLocking=1
	# Files in DIR/apt are root's: "_apt" could not write the downloads.
	-o APT::Sandbox::User=root
	-o APT::Architectures::=amd64 -o APT::Architectures::=arm64
)

echo "  FETCH   $suite amd64+arm64 package lists (private apt configuration in $apt)"
if ! apt-get "${common[@]}" -qq update > "$apt/update.log" 2>&1; then
	cat "$apt/update.log" >&2
	echo "arm64-fetch.sh: apt-get update of $mirror $suite failed" >&2
	exit 1
fi

# toolchain NAME TRIPLET PACKAGE...: unpack a cross toolchain into DIR/NAME,
# unless its stamp says that it holds these packages already.
toolchain() {
	local name=$1 triplet=$2 key deb t
	shift 2
	key=$(key "$@")
	[ "$(cat "$dir/$name.stamp" 2>/dev/null)" = "$key" ] && return 0
	echo "  FETCH   $name: $*"
	rm -rf "${apt:?}/$name" "$dir/$name.tmp"
	mkdir -p "$apt/$name" "$dir/$name.tmp"
	(cd "$apt/$name" && apt-get "${common[@]}" -qq download "$@")
	for deb in "$apt/$name"/*.deb; do
		dpkg-deb -x "$deb" "$dir/$name.tmp"
	done
	# libc.so and its kind are linker scripts naming
	# /usr/TRIPLET/lib/...: point them at the copy here.
	grep -l -s 'GNU ld script' "$dir/$name.tmp/usr/$triplet/lib/"*.so | while read -r f; do
		sed -i "s|/usr/$triplet/|$(realpath "$dir")/$name/usr/$triplet/|g" "$f"
	done
	# The unversioned names, which gcc-TRIPLET would install, and which
	# the kernel's CROSS_COMPILE expects.
	for t in gcc cpp gcc-ar gcc-nm gcc-ranlib; do
		ln -sf "$triplet-$t-12" "$dir/$name.tmp/usr/bin/$triplet-$t"
	done
	rm -rf "${dir:?}/$name"
	mv "$dir/$name.tmp" "$dir/$name"
	echo "$key" > "$dir/$name.stamp"
}
toolchain toolchain aarch64-linux-gnu "${toolchain[@]}"
toolchain toolchain-armhf arm-linux-gnueabihf "${toolchain_armhf[@]}"

# The guest's packages, with their dependencies, resolved by apt as if for
# an empty arm64 system (the empty status file), and downloaded only.
[ "$have_rootfs" = "$rootfs_key" ] && exit 0
echo "  FETCH   the guest's arm64 packages: ${rootfs[*]} and their dependencies"
apt-get "${common[@]}" -o "Dir::State::status=$apt/status" -o APT::Architecture=arm64 \
	-o APT::Install-Recommends=0 -qq -y -d install "${rootfs[@]/%/:arm64}" > "$apt/rootfs.log"
rm -rf "$dir/rootfs.tmp"
mkdir -p "$dir/rootfs.tmp"
for deb in "$apt/cache/archives"/*.deb; do
	dpkg-deb -x "$deb" "$dir/rootfs.tmp"
done
# Debian's merged /usr: /bin, /sbin and /lib are symbolic links that the
# usrmerge of base-files' postinst would make.
for d in bin sbin lib; do
	if [ -d "$dir/rootfs.tmp/$d" ] && [ ! -L "$dir/rootfs.tmp/$d" ]; then
		mkdir -p "$dir/rootfs.tmp/usr/$d"
		cp -a "$dir/rootfs.tmp/$d/." "$dir/rootfs.tmp/usr/$d/"
		rm -rf "${dir:?}/rootfs.tmp/$d"
	fi
	[ -e "$dir/rootfs.tmp/$d" ] || ln -s "usr/$d" "$dir/rootfs.tmp/$d"
done
# What maintainer scripts would have made: the alternatives and the
# shell that the tests call by name.
ln -sfn dash "$dir/rootfs.tmp/usr/bin/sh"
ln -sfn mawk "$dir/rootfs.tmp/usr/bin/awk"
ln -sfn which.debianutils "$dir/rootfs.tmp/usr/bin/which"
mkdir -p "$dir/rootfs.tmp/"{proc,sys,dev,tmp,run,root,var/tmp,etc}
echo 'root:x:0:0:root:/root:/bin/bash' > "$dir/rootfs.tmp/etc/passwd"
echo 'nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin' >> "$dir/rootfs.tmp/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' > "$dir/rootfs.tmp/etc/group"
rm -rf "$dir/rootfs"
mv "$dir/rootfs.tmp" "$dir/rootfs"
echo "$rootfs_key" > "$dir/rootfs.stamp"
echo "  FETCH   $(find "$apt/cache/archives" -name '*.deb' | wc -l) guest packages"
