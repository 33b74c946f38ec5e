#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Regenerate series/ from the kernel tree, or check that it is current.
#
#   scripts/series.sh [--check] TREE SERIES_DIR SELFTESTS_DIR
#
# series/ is "git format-patch vanilla..zerosleep" with a cover letter and
# the file series/series listing the patches in order.  The last patch adds
# the selftests (tools/testing/selftests/timers/ and proc/); it is generated
# from SELFTESTS_DIR and scripts/selftests-commit.txt, so it is amended here
# whenever either changed.  The cover letter text is kept as the branch
# description (seeded from series/ by scripts/tree.sh); edit it with
# "git -C build/linux branch --edit-description" or edit
# series/0000-cover-letter.patch and let "make tree" pick it up.
#
# With --check nothing is written: the exit status is 1 when series/ or the
# selftests patch would change.
set -euo pipefail

check=
if [ "${1:-}" = "--check" ]; then
	check=1
	shift
fi
tree=$1
series=$(realpath "$2")
selftests=$(realpath "$3")
here=$(cd "$(dirname "$0")" && pwd)
ident_name="Zerosleep Developers"
ident_email="zerosleep-devel@example.org"
export GIT_COMMITTER_NAME=$ident_name GIT_COMMITTER_EMAIL=$ident_email
export GIT_AUTHOR_NAME=$ident_name GIT_AUTHOR_EMAIL=$ident_email
git() { command git -C "$tree" -c core.quotepath=off "$@"; }

# The selftests patch is the last: the files that sync-selftests.sh puts in
# the tree (it names them), with scripts/selftests-commit.txt as its
# message.  Debian's .gitignore ignores every new file, hence --ignored and
# -f; the paths are exact files, so no build output comes along.
"$here/sync-selftests.sh" "$tree" "$selftests"
paths=()
while read -r p; do
	if [ -e "$tree/$p" ] || [ -n "$(git ls-files -- "$p")" ]; then
		paths+=("$p")
	fi
done < <("$here/sync-selftests.sh" --paths "$selftests")
msg=$here/selftests-commit.txt
last_is_selftests() { git log -1 --format=%s | grep -qE '^selftests(/[a-z]+)?: '; }
stale=
[ -n "$(git status --porcelain --ignored -- "${paths[@]}")" ] && stale=files
if last_is_selftests && [ "$(git cat-file commit HEAD | sed '1,/^$/d')" != "$(git stripspace < "$msg")" ]; then
	stale=${stale:-message}
fi
if [ -n "$stale" ]; then
	if [ -n "$check" ]; then
		echo "series/ is stale: selftests/ or scripts/selftests-commit.txt differs from the selftests patch ($stale); run 'make series'" >&2
		git status --short --ignored -- "${paths[@]}" >&2
		exit 1
	fi
	git add -f -A -- "${paths[@]}"
	if last_is_selftests; then
		GIT_COMMITTER_DATE=$(git log -1 --format=%aD) git commit -q --amend -F "$msg"
	else
		git commit -q -F "$msg"
	fi
fi
if [ -n "$(git status --porcelain --untracked-files=no)" ]; then
	echo "series.sh: $tree has uncommitted changes; commit them first" >&2
	git status --short --untracked-files=no >&2
	exit 1
fi

cover=$tree/.git/zerosleep-cover.txt
if [ ! -s "$cover" ]; then
	echo "series.sh: no cover letter text in $cover" >&2
	exit 1
fi
# The one size that the cover letter's text gives, the lines that the
# selftests patch adds, is taken from that patch: the sentence "The last
# patch adds N lines" (on one line of the text) gets the current N.
if last_is_selftests; then
	added=$(git diff --shortstat HEAD~1 HEAD | sed -n 's/.* \([0-9][0-9]*\) insertion.*/\1/p')
	sed -i -E "s/(The last patch adds )[0-9]+( lines)/\1${added:-0}\2/" "$cover"
fi
git config branch.zerosleep.description "$(cat "$cover")"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Blob ids of 12 digits, as the kernel abbreviates commit ids: git's own
# length grows with the number of objects in the tree's repository, so a
# tree whose objects git packed would give other patches than a fresh one.
# --notes: a commit's note (scripts/tree.sh) goes below its "---" line.
git format-patch -q --zero-commit --no-signature --cover-letter --abbrev=12 --notes \
	--cover-from-description=subject -o "$tmp/out" vanilla..HEAD
# The cover letter is dated like the newest patch, not "now".
last=$(ls "$tmp"/out/*.patch | tail -n 1)
date=$(grep -m1 '^Date: ' "$last")
sed -i "0,/^Date: .*/s//$date/" "$tmp/out/0000-cover-letter.patch"
(cd "$tmp/out" && ls *.patch | grep -v '^0000-cover-letter.patch$') > "$tmp/out/series"

if [ -n "$check" ]; then
	if ! diff -r -u "$series" "$tmp/out" > "$tmp/diff"; then
		echo "series/ is stale against $tree; run 'make series'" >&2
		head -n 40 "$tmp/diff" >&2
		exit 1
	fi
	exit 0
fi
rm -f "$series"/*.patch "$series/series"
cp "$tmp"/out/* "$series/"
cat "$series/series" | sed 's/^/  SERIES  /'
# The tree and series/ now agree: record that for scripts/tree.sh.
"$here/series-hash.sh" "$series" > "$tree/.git/zerosleep-series.stamp"
git rev-parse HEAD > "$tree/.git/zerosleep-series.stamp.head"
