#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build a Debian linux-image package of a kernel with the zerosleep series,
# with the kernel's own "make bindeb-pkg" and a configuration of your own:
#
#   scripts/kernel-deb.sh [-o OBJDIR] 6.12|7.3 [CONFIG]
#
# (make kernel-deb KERNEL=6.12|7.3 [KCONFIG=CONFIG] [KDEB_DIR=OBJDIR]).
#
# The tree is the one that "make tree" keeps under build/: Debian's
# linux-source-X.Y with the series applied (build/linux for 6.12,
# build/linux-7.3 for 7.3).  CONFIG defaults to the running system's
# /boot/config-$(uname -r).  The kernel is built out of tree in OBJDIR
# (default build/kernel-deb, build/kernel-deb-7.3: under build/, beside
# the tree, as the guests' objdirs are, so that ccache's relative paths
# are the same), never in the source tree nor in build/kernel*, the
# guests' objdirs; OBJDIR is kept, so that building again is incremental.
# bindeb-pkg writes the packages beside OBJDIR: they are moved into
# OBJDIR/packages.
#
# The steps: copy CONFIG to OBJDIR/.config; clear SYSTEM_TRUSTED_KEYS and
# SYSTEM_REVOCATION_KEYS when they name a file that is not there (Debian's
# configuration names its own certificates, which are not in
# linux-source); "make olddefconfig"; "make bindeb-pkg" with
# LOCALVERSION=-zerosleep, so the kernel release (uname -r) and the
# package name end in -zerosleep (linux-image-6.12.118-zerosleep), and a
# package version X.Y.Z-zerosleepN, N counting the builds in OBJDIR.
# Then it prints the packages and how to install and boot them.
#
# Environment: LOCALVERSION (default -zerosleep) and KDEB_PKGVERSION
# replace the suffix and the package version; JOBS (default: CPUs + 1)
# the number of parallel jobs; DEBFULLNAME and DEBEMAIL the maintainer,
# and KDEB_COMPRESS the packages' compressor (bindeb-pkg's own: zstd
# packs the large -dbg package of a configuration with debug information
# much faster than xz).  The build needs what deps.sh installs (dpkg-dev,
# debhelper, bc, bison, flex, cpio, kmod, libelf-dev, libssl-dev,
# libdw-dev, rsync, dwarves for BTF: the script names those missing), not
# root.  It makes the tree when it is not there, or brings it up to date
# with series/ (scripts/kernel-source.sh, scripts/tree.sh).  The source
# tree must stay clean: the script fails if the build changed it.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
me='kernel-deb.sh'

usage() {
	echo "usage: $0 [-o OBJDIR] 6.12|7.3 [CONFIG]" >&2
	exit 2
}
dir=
while getopts "o:" opt; do
	case $opt in
	o) dir=$OPTARG ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
if [ $# -lt 1 ] || [ $# -gt 2 ]; then usage; fi
kernel=$1
case $kernel in
6.12) sfx= ;;
7.3) sfx=-7.3 ;;
*) echo "$me: unknown kernel '$kernel': the series exists for 6.12 and 7.3" >&2; exit 2 ;;
esac
config=${2:-/boot/config-$(uname -r)}
if [ -z "${2:-}" ] && [ ! -r "$config" ]; then
	echo "$me: no configuration of the running kernel at $config;" >&2
	echo "$me: name one: make kernel-deb KCONFIG=PATH (or $0 $kernel PATH)" >&2
	exit 1
fi
if [ ! -r "$config" ] || [ -d "$config" ]; then
	echo "$me: no configuration file at $config" >&2
	exit 1
fi
config=$(realpath "$config")

# What bindeb-pkg and the tree need, by Debian package: only these, not
# everything that make test installs (scripts/deps.sh).
need=(dpkg-dev debhelper gcc make libc6-dev bc bison flex cpio kmod libelf-dev libssl-dev
	rsync perl python3 git xz-utils)
[ "$kernel" = 7.3 ] && need+=(libdw-dev debian-archive-keyring)
[ "$kernel" = 6.12 ] && need+=(linux-source-6.12)
grep -q '^CONFIG_DEBUG_INFO_BTF=y' "$config" && need+=(dwarves)
missing=()
for p in "${need[@]}"; do
	[ "$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null)" = installed ] || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	echo "$me: the build needs these Debian packages: sudo apt install ${missing[*]}" >&2
	exit 1
fi

# The tree: Debian's source with the series applied, made or brought up
# to date with series/ (nothing to do when it is current).
tree=$top/build/linux$sfx
tarball=$("$top/scripts/kernel-source.sh" "$kernel")
"$top/scripts/tree.sh" "$tree" "$top/series/$kernel" "$tarball"
# The same path as scripts/build-kernel.sh gives make: a tree reached
# through a symbolic link is then the same source to kbuild.
tree=$(realpath "$tree")
dir=${dir:-$top/build/kernel-deb$sfx}
b=$(realpath -m "$top/build")
case $(realpath -m "$dir") in
"$b"/kernel-deb*) ;;
"$b"/kernel | "$b"/kernel-*)
	echo "$me: $dir is where a guest kernel is built; choose another OBJDIR" >&2
	exit 2
	;;
esac
mkdir -p "$dir"
# bindeb-pkg puts the packages into the parent of the objdir it works in:
# through a link they would go elsewhere.  An objdir of
# scripts/build-kernel.sh (its stamp) is a guest kernel's.
if [ -L "$dir" ] || [ -e "$dir/.zerosleep-stamp" ]; then
	echo "$me: $dir is a link or a guest kernel's objdir (scripts/build-kernel.sh): choose another" >&2
	exit 2
fi
obj=$(realpath "$dir")
pkgs=$obj/packages

clean_before=$(git -C "$tree" status --porcelain)

# Under "make kernel-deb", make's variables (KERNEL=, KCONFIG=) and
# options would reach kbuild through MAKEFLAGS: it gets only its own.
unset MAKEFLAGS MFLAGS
arch=()
[ "$(uname -m)" = x86_64 ] && arch=(ARCH=x86_64)
kmake() { make -s -C "$tree" O="$obj" "${arch[@]}" "$@"; }

export LOCALVERSION=${LOCALVERSION--zerosleep}
kver=$(kmake kernelversion)
# The builds in OBJDIR are counted in OBJDIR/build-number: kbuild's own count,
# .version, does not move when KBUILD_BUILD_VERSION is set, as the
# package's debian/rules sets it (to the version's revision).
build=$(( $(cat "$obj/build-number" 2>/dev/null || echo 0) + 1 ))
# A Debian version "UPSTREAM-REVISION": the suffix "-zerosleep" and the
# build number are its revision, "zerosleepN"; without a suffix, "N".
export KDEB_PKGVERSION=${KDEB_PKGVERSION:-$kver${LOCALVERSION:--}$build}
case ${KDEB_PKGVERSION} in
*-*) ;;
*) KDEB_PKGVERSION=$KDEB_PKGVERSION-$build ;;
esac

echo "  CONFIG  $obj/.config (from $config)"
cp "$config" "$obj/.config"
for k in SYSTEM_TRUSTED_KEYS SYSTEM_REVOCATION_KEYS; do
	v=$(sed -n "s/^CONFIG_$k=\"\(.*\)\"$/\1/p" "$obj/.config")
	if [ -n "$v" ] && [ ! -e "$v" ] && [ ! -e "$tree/$v" ] && [ ! -e "$obj/$v" ]; then
		echo "  CONFIG  CONFIG_$k=\"$v\" is not there: set to \"\""
		"$tree/scripts/config" --file "$obj/.config" --set-str "$k" ''
	fi
done
kmake olddefconfig

jobs=${JOBS:-$(( $(nproc) + 1 ))}
echo "  DEB     make bindeb-pkg LOCALVERSION=$LOCALVERSION KDEB_PKGVERSION=$KDEB_PKGVERSION in $obj"
rm -rf "$pkgs"
start=$SECONDS
# bindeb-pkg writes debian/ into the objdir and the packages into its
# parent, build/.
log=$obj/bindeb-pkg.log
kmake -j"$jobs" bindeb-pkg > "$log" 2>&1 || {
	tail -n 40 "$log" >&2
	echo "$me: make bindeb-pkg failed; its output is in $log" >&2
	exit 1
}
took=$((SECONDS - start))
mkdir -p "$pkgs"
# What dpkg-buildpackage wrote: debian/files lists the packages.
while read -r f _; do
	mv "$obj/../$f" "$pkgs/"
done < "$obj/debian/files"
mv "$obj/../linux-upstream_${KDEB_PKGVERSION}_"*.buildinfo "$obj/../linux-upstream_${KDEB_PKGVERSION}_"*.changes "$pkgs/" 2>/dev/null || true
echo "$build" > "$obj/build-number"

if [ "$(git -C "$tree" status --porcelain)" != "$clean_before" ]; then
	echo "$me: the build changed the source tree $tree:" >&2
	git -C "$tree" status --short >&2
	exit 1
fi

release=$(cat "$obj/include/config/kernel.release")
debarch=$(cat "$obj/debian/arch")
image=$pkgs/linux-image-${release}_${KDEB_PKGVERSION}_$debarch.deb
if [ ! -f "$image" ]; then
	echo "$me: bindeb-pkg made no $image" >&2
	exit 1
fi
rel() { realpath --relative-to="$PWD" "$1"; }
echo "$me: built Linux $release, package version $KDEB_PKGVERSION, in ${took}s (log: $(rel "$log")):"
for f in "$pkgs"/*.deb; do
	echo "  $(rel "$f")"
done
echo "$me: the kernel is linux-image-$release; linux-headers-$release (if built) is for"
echo "$me: out-of-tree modules (DKMS); do not install linux-libc-dev, which replaces Debian's."
echo "$me: install it as root (its hooks put it in /boot, make its initramfs and run update-grub):"
echo "  sudo apt install ./$(rel "$image")      # or: sudo dpkg -i $(rel "$image")"
echo "$me: then reboot into it (GRUB's 'Advanced options' if it is not the default);"
echo "$me: 'uname -r' prints $release and 'cat /proc/self/timerslack_zero_policy' prints 0."
echo "$me: remove it with: sudo apt remove linux-image-$release"
