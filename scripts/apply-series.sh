#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Apply the zerosleep series that fits a kernel source tree.
#
#   scripts/apply-series.sh KERNEL_TREE
#
# The kernel version comes from the tree's Makefile (VERSION, PATCHLEVEL).
# The series for Linux X.Y is series/X.Y/series when that exists; series/
# itself holds the one for 6.12.  In a git work tree the patches become
# commits (git am); otherwise they are applied to the files (git apply).
# A tree that already has the series is left alone.
#
# Exit status: 0 applied (or already there); 1 a patch did not apply and
# the tree was left as it was; 2 bad usage, not a kernel tree, or a kernel
# version that no series supports.
#
# Environment: ZEROSLEEP_SERIES, the directory of the series (default:
# series/ next to this script).
set -euo pipefail

prog=apply-series.sh
top=$(cd "$(dirname "$0")/.." && pwd)
root=${ZEROSLEEP_SERIES:-$top/series}

die() { echo "$prog: $2" >&2; exit "$1"; }

if [ $# -ne 1 ] || [ "$1" = -h ] || [ "$1" = --help ]; then
	die 2 "usage: $prog KERNEL_TREE"
fi
tree=$1
[ -d "$tree" ] || die 2 "$tree: no such directory"
tree=$(cd "$tree" && pwd)

field() { sed -n "s/^$1 *= *\([0-9]*\) *$/\1/p" "$tree/Makefile" | head -n 1; }
if [ ! -f "$tree/Makefile" ] || [ -z "$(field VERSION)" ] || [ -z "$(field PATCHLEVEL)" ]; then
	die 2 "$tree is not a Linux source tree (its Makefile has no VERSION and PATCHLEVEL)"
fi
version=$(field VERSION).$(field PATCHLEVEL)
full=$version.$(field SUBLEVEL)

# The versions that have a series, for the messages.
supported() {
	local d list=
	for d in "$root"/*/series; do
		[ -f "$d" ] && list="$list ${d%/series}" && list=${list/"$root/"/}
	done
	[ -f "$root/series" ] && [ ! -f "$root/6.12/series" ] && list=" 6.12$list"
	echo "${list# }"
}

if [ -f "$root/$version/series" ]; then
	dir=$root/$version
elif [ "$version" = 6.12 ] && [ -f "$root/series" ]; then
	dir=$root
else
	die 2 "$tree is Linux $full, which the zerosleep series does not support; it applies to Linux $(supported | sed 's/ /, /g')"
fi

mapfile -t patches < <(grep -v -e '^#' -e '^[[:space:]]*$' "$dir/series")
[ ${#patches[@]} -gt 0 ] || die 2 "$dir/series lists no patch"
for p in "${patches[@]}"; do
	[ -f "$dir/$p" ] || die 2 "$dir/series names $p, which is missing"
done

is_git=
if git -C "$tree" rev-parse --is-inside-work-tree >/dev/null 2>&1 &&
   [ "$(git -C "$tree" rev-parse --show-toplevel)" = "$tree" ]; then
	is_git=1
else
	# Not a repository of its own: git apply must not take an enclosing
	# one for it, where it would skip every path outside the tree.
	export GIT_CEILING_DIRECTORIES=${tree%/*}
fi

# Already applied: the last patch applies in reverse (the patches go in
# order, so the others are there too).
if git -C "$tree" apply --reverse --check "$dir/${patches[-1]}" >/dev/null 2>&1; then
	echo "$prog: $tree (Linux $full) already has the zerosleep series; nothing to do"
	exit 0
fi

if [ -n "$is_git" ]; then
	[ -z "$(git -C "$tree" status --porcelain --untracked-files=no)" ] ||
		die 2 "$tree has uncommitted changes; commit or stash them first"
	paths=()
	for p in "${patches[@]}"; do paths+=("$dir/$p"); done
	if ! git -C "$tree" am -q --3way "${paths[@]}"; then
		git -C "$tree" am --abort >/dev/null 2>&1 || true
		die 1 "the series did not apply to $tree (Linux $full); the tree is unchanged"
	fi
	how="as ${#patches[@]} commits (git am)"
else
	applied=()
	for p in "${patches[@]}"; do
		if ! (cd "$tree" && git apply --whitespace=nowarn "$dir/$p"); then
			for ((i = ${#applied[@]} - 1; i >= 0; i--)); do
				(cd "$tree" && git apply -R "$dir/${applied[i]}")
			done
			die 1 "$p did not apply to $tree (Linux $full); the tree is unchanged"
		fi
		applied+=("$p")
	done
	how="${#patches[@]} patches (git apply)"
fi

echo "$prog: applied the zerosleep series for Linux $version to $tree, $how"
echo "$prog: build as usual (no new configuration option); on the new kernel,"
echo "$prog: 'cat /proc/self/timerslack_zero_policy' prints 0"
