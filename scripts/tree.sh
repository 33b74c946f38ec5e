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
#
# Extracting a tarball and adding its 90,000 files to git takes about a
# minute of CPU, and every clean clone did it again, with the same result:
# names and dates are fixed, so the commit "vanilla" is the same.  So the
# first extraction of a tarball keeps a bare copy of the repository in a
# cache, under the tarball's SHA-256, and later trees clone it (git's
# local clone hard-links the object files, which git never changes) and
# check it out.  The cache is ZEROSLEEP_TREE_CACHE, by default
# ${XDG_CACHE_HOME:-~/.cache}/zerosleep/trees; ZEROSLEEP_TREE_CACHE=0
# turns it off.  Nothing removes its entries (about 600 MB each, shared
# with the trees made from them while those exist).
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


cache=${ZEROSLEEP_TREE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/zerosleep/trees}
[ "$cache" = 0 ] && cache=
if [ ! -d "$tree/.git" ]; then
	rm -rf "$tree" "$tree.tmp"
	# v1: how the repository below is made; change it when that changes.
	cached=${cache:+$cache/v1-$(sha256sum < "$tarball" | cut -d' ' -f1).git}
	if [ -n "$cached" ] && command git -C "$cached" rev-parse -q --verify vanilla > /dev/null 2>&1; then
		echo "  TREE    cloning $(basename "$tarball") from $cached"
		command git clone -q --no-checkout "$cached" "$tree.tmp"
		mv "$tree.tmp" "$tree"
		git remote remove origin
		git reset -q --hard vanilla
	else
		echo "  TREE    extracting $(basename "$tarball")"
		mkdir -p "$tree.tmp"
		tar -C "$tree.tmp" --strip-components=1 -xJf "$tarball"
		mv "$tree.tmp" "$tree"
		git init -q -b zerosleep
		git config gc.auto 0
		git add -A -f .
		GIT_AUTHOR_NAME=$GIT_COMMITTER_NAME GIT_AUTHOR_EMAIL=$GIT_COMMITTER_EMAIL \
		GIT_AUTHOR_DATE='2000-01-01T00:00:00Z' GIT_COMMITTER_DATE='2000-01-01T00:00:00Z' \
			git commit -q -m "Linux $(make -s --no-print-directory -C "$tree" kernelversion) (Debian $(basename "$tarball" .tar.xz))"
		git tag vanilla
		if [ -n "$cached" ] && mkdir -p "$cache" &&
		   command git clone -q --bare "$tree" "$cached.tmp.$$"; then
			command git -C "$cached.tmp.$$" remote remove origin
			# Another tree may have put it there meanwhile.
			mv -T "$cached.tmp.$$" "$cached" 2>/dev/null || rm -rf "$cached.tmp.$$"
		fi
	fi
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
# What a patch says below its "---" line, where "git format-patch --notes"
# puts a commit's note ("Notes:", then the note indented by four spaces):
# remarks for the reviewers that are not part of the changelog.  git am
# drops it, so it is put back as the note of the commit just made, and
# scripts/series.sh writes it out again.
patch_notes() {
	awk 'state == 0 && /^---$/ { state = 1; next }
	     state == 1 { if ($0 == "") next; if ($0 == "Notes:") { state = 2; next } exit }
	     state == 2 { if ($0 == "") exit; sub(/^    /, ""); print }' "$1"
}
git config notes.rewriteRef refs/notes/commits
git update-ref -d refs/notes/commits 2>/dev/null || true
if [ "$series" != - ]; then
	while read -r p; do
		git am -q --committer-date-is-author-date "$(realpath "$series/$p")"
		notes=$(patch_notes "$series/$p")
		if [ -n "$notes" ]; then
			printf '%s\n' "$notes" | GIT_AUTHOR_NAME=$GIT_COMMITTER_NAME \
				GIT_AUTHOR_EMAIL=$GIT_COMMITTER_EMAIL git notes add -f -F - HEAD
		fi
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
