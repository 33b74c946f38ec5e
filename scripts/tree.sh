#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Maintain a kernel tree under the build directory: one of Debian's
# linux-source-X.Y tarballs as a git repository, tagged "vanilla", with a
# series applied on the branch "zerosleep".
#
#   scripts/tree.sh TREE SERIES_DIR [TARBALL]
#
# SERIES_DIR holds the patches and the file "series" that orders them;
# "-" means no series: the branch stays at "vanilla".  TARBALL defaults to
# $LINUX_TARBALL, else Debian's /usr/src/linux-source-6.12.tar.xz.  A
# tree is extracted once; another TARBALL needs another TREE.
#
# The tree is (re)built only when the series changed since the last sync.  When
# the series is re-applied, files whose content did not change get their old
# modification time back, so that kbuild does not rebuild them.
set -euo pipefail

tree=$1
series=$2
tarball=${3:-${LINUX_TARBALL:-/usr/src/linux-source-6.12.tar.xz}}
if [ ! -r "$tarball" ]; then
	echo "tree.sh: no kernel tarball at $tarball" >&2
	exit 1
fi
stamp=$tree/.git/zerosleep-series.stamp

export GIT_COMMITTER_NAME="Zerosleep Developers" GIT_COMMITTER_EMAIL=zerosleep-devel@example.org
git() { command git -C "$tree" -c core.quotepath=off -c advice.detachedHead=false "$@"; }


if [ ! -d "$tree/.git" ]; then
	echo "  TREE    extracting $(basename "$tarball")"
	rm -rf "$tree" "$tree.tmp"
	mkdir -p "$tree.tmp"
	tar -C "$tree.tmp" --strip-components=1 -xJf "$tarball"
	mv "$tree.tmp" "$tree"
	git init -q -b zerosleep
	git config gc.auto 0
	git add -A -f .
	GIT_AUTHOR_NAME=$GIT_COMMITTER_NAME GIT_AUTHOR_EMAIL=$GIT_COMMITTER_EMAIL \
	GIT_AUTHOR_DATE='2000-01-01T00:00:00Z' GIT_COMMITTER_DATE='2000-01-01T00:00:00Z' \
		git commit -q -m "Linux $(make -s -C "$tree" kernelversion) (Debian $(basename "$tarball" .tar.xz))"
	git tag vanilla
fi

# No "git gc --auto": after git am it would repack the tree's 90,000
# objects in the background, minutes of both cores taken from the kernel
# builds that follow.  Trees made before this line get it here too.
git config gc.auto 0

if [ "$series" = - ]; then
	want=vanilla
else
	want=$("$(dirname "$0")/series-hash.sh" "$series")
fi
have=$(cat "$stamp" 2>/dev/null || true)
if [ "$want" = "$have" ]; then
	exit 0
fi

if [ -n "$(git status --porcelain --untracked-files=no)" ]; then
	echo "tree.sh: $tree has uncommitted changes; commit them and run 'make series', or discard them" >&2
	exit 1
fi
synced=$(cat "$stamp.head" 2>/dev/null || true)
if [ -n "$synced" ] && [ "$(git rev-parse HEAD)" != "$synced" ]; then
	echo "tree.sh: both series/ and the commits in $tree changed since the last sync;" >&2
	echo "tree.sh: run 'make series' to keep the tree, or 'git -C $tree reset --hard $synced' to keep series/" >&2
	exit 1
fi

echo "  TREE    applying ${series/#-/no series} to $tree"
old=$(git rev-parse HEAD)
mtimes=$(mktemp)
trap 'rm -f "$mtimes"' EXIT
git diff --name-only -z vanilla "$old" | (cd "$tree" && xargs -0r stat -c '%Y %n' 2>/dev/null) > "$mtimes" || true

git checkout -q -B zerosleep vanilla -- 2>/dev/null || git checkout -q -B zerosleep vanilla
git reset -q --hard vanilla
if [ "$series" != - ]; then
	while read -r p; do
		git am -q --committer-date-is-author-date "$(realpath "$series/$p")"
	done < "$series/series"
fi
new=$(git rev-parse HEAD)

# Restore the mtime of every file that the re-application left unchanged.
while read -r t f; do
	if git diff --quiet "$old" "$new" -- "$f" 2>/dev/null; then
		touch -m -d "@$t" "$tree/$f"
	fi
done < "$mtimes"

# The cover letter becomes the branch description, for "make series".
cover=$series/0000-cover-letter.patch
if [ "$series" != - ] && [ -f "$cover" ]; then
	"$(dirname "$0")/cover.sh" extract "$cover" > "$tree/.git/zerosleep-cover.txt"
fi

echo "$want" > "$stamp"
git rev-parse HEAD > "$stamp.head"
