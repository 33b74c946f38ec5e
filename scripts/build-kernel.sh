#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Configure and build a kernel out of tree, then export its uapi headers.
#
#   scripts/build-kernel.sh TREE OBJDIR FRAGMENT... [-- MAKE_ARGS...]
#
# ZEROSLEEP_KARCH picks the architecture: x86_64 (the default, bzImage) or
# arm64 (Image, cross-compiled with $CROSS_COMPILE, which the caller sets:
# scripts/arm64-env.sh).
# The configuration is "tinyconfig" plus the fragments; every option that a
# fragment sets must survive the merge.  A stamp in OBJDIR records the kernel
# source (the diff of TREE against "vanilla", outside tools/ and
# Documentation/, plus uncommitted changes) and the fragments: when neither
# changed, nothing is rebuilt and the script returns in well under a second.
# Compilations go through ccache when it is installed (scripts/ccache.sh).
set -euo pipefail
. "$(dirname "$0")/ccache.sh"

tree=$(realpath "$1")
obj=$2
shift 2
frags=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
	frags+=("$(realpath "$1")")
	shift
done
[ "${1:-}" = "--" ] && shift
mkdir -p "$obj"
obj=$(realpath "$obj")
stamp=$obj/.zerosleep-stamp

karch=${ZEROSLEEP_KARCH:-x86_64}
case $karch in
x86_64) image=arch/x86/boot/bzImage ;;
arm64) image=arch/arm64/boot/Image ;;
*) echo "build-kernel.sh: ZEROSLEEP_KARCH must be x86_64 or arm64, not $karch" >&2; exit 1 ;;
esac
# Full blob ids: git shortens them to a length that grows with the number
# of objects in the repository, which changes as git packs them.  x86_64's
# key is what it was before arm64 came, so that no x86 kernel is rebuilt.
key=$( {
	[ "$karch" = x86_64 ] || echo "ARCH=$karch"
	git -C "$tree" diff --full-index vanilla -- . ':(exclude)tools' ':(exclude)Documentation' ':(exclude)MAINTAINERS'
	cat "${frags[@]}"
	echo "$*"
} | sha256sum | cut -d' ' -f1)
if [ -f "$obj/$image" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$key" ]; then
	exit 0
fi

kmake() { make -s -C "$tree" O="$obj" ARCH="$karch" "$@"; }
jobs=$(( $(nproc) + 1 ))

echo "  CONFIG  $obj (tinyconfig + ${frags[*]##*/})"
kmake tinyconfig > /dev/null
"$tree/scripts/kconfig/merge_config.sh" -m -O "$obj" "$obj/.config" "${frags[@]}" > /dev/null
kmake olddefconfig
bad=0
for f in "${frags[@]}"; do
	while IFS= read -r l; do
		case $l in
		CONFIG_*=n) o=${l%%=*}; grep -q "^$o=" "$obj/.config" && { echo "build-kernel.sh: $l did not take effect ($f)" >&2; bad=1; } ;;
		CONFIG_*) grep -qxF "$l" "$obj/.config" || { echo "build-kernel.sh: $l did not take effect ($f)" >&2; bad=1; } ;;
		'# CONFIG_'*' is not set') o=${l#\# }; o=${o%% *}; grep -q "^$o=" "$obj/.config" && { echo "build-kernel.sh: $o is set ($f)" >&2; bad=1; } ;;
		esac
	done < "$f"
done
[ $bad -eq 0 ] || exit 1

echo "  BUILD   $obj/$image"
kmake -j"$jobs" "$@" "${image##*/}"
kmake headers > /dev/null
echo "$key" > "$stamp"
