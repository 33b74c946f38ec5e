#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Regenerate series/ from the kernel tree, or check that it is current.
#
#   scripts/series.sh [--check] TREE SERIES_DIR SELFTESTS_DIR
#
# series/ is "git format-patch vanilla..zerosleep" with a cover letter and
# the file series/series listing the patches in order.  The last patch adds
# tools/testing/selftests/zerosleep/; it is generated from SELFTESTS_DIR, so
# it is amended here whenever selftests/ changed.  The cover letter text is
# kept as the branch description (seeded from series/ by scripts/tree.sh);
# edit it with "git -C build/linux branch --edit-description" or edit
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

ksft=tools/testing/selftests
"$here/sync-selftests.sh" "$tree" "$selftests"
if [ -n "$(git status --porcelain --ignored -- "$ksft/zerosleep" "$ksft/Makefile" MAINTAINERS)" ]; then
	if [ -n "$check" ]; then
		echo "series/ is stale: selftests/ differs from the selftests patch; run 'make series'" >&2
		git status --short --ignored -- "$ksft/zerosleep" "$ksft/Makefile" MAINTAINERS >&2
		exit 1
	fi
	git add -f -A -- "$ksft/zerosleep" "$ksft/Makefile" MAINTAINERS
	if git log -1 --format=%s | grep -q '^selftests/zerosleep:'; then
		GIT_COMMITTER_DATE=$(git log -1 --format=%aD) git commit -q --amend --no-edit
	else
		git commit -q -F "$here/selftests-commit.txt"
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
git config branch.zerosleep.description "$(cat "$cover")"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git format-patch -q --zero-commit --no-signature --cover-letter \
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
