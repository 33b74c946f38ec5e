#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Tests of scripts/apply-series.sh, TAP on stdout.
#
# The pristine tree is the part of Debian's linux-source-6.12 that the
# series touches, plus its Makefile: taken from the tag "vanilla" of
# build/linux when scripts/tree.sh made it, else from the tarball.  Also: a
# git work tree, a second run, a tree the series does not fit, a version
# without a series, something that is not a kernel tree, and the layout
# series/X.Y/series.
# Conditions are passed to check() in single quotes and evaluated there.
# shellcheck disable=SC2016
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
apply=$top/scripts/apply-series.sh
tarball=${LINUX_TARBALL:-/usr/src/linux-source-6.12.tar.xz}
T=$(mktemp -d "$top/build/apply-series.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
n=0
failed=0

check() {
	local desc=$1
	shift
	n=$((n + 1))
	if "$@"; then
		echo "ok $n - $desc"
	else
		failed=$((failed + 1))
		echo "not ok $n - $desc"
		echo "#   exit status: $rc"
		sed 's/^/#   /' "$T/log"
	fi
}
run() { "$apply" "$@" >"$T/log" 2>&1; rc=$?; }
status_is() { [[ $rc == "$1" ]]; }
says() { grep -q -- "$1" "$T/log"; }

# The pristine files.
mapfile -t files < <(grep -h '^diff --git' "$top"/series/0*.patch "$top"/series/*/0*.patch 2>/dev/null |
	awk '{ print substr($3, 3) }' | sort -u)
pristine=$T/pristine
mkdir -p "$pristine"
if git -C "$top/build/linux" rev-parse -q --verify vanilla >/dev/null 2>&1; then
	src="the tag vanilla of build/linux"
	mapfile -t there < <(git -C "$top/build/linux" ls-tree -r --name-only vanilla -- "${files[@]}")
	git -C "$top/build/linux" archive vanilla Makefile "${there[@]}" | tar -C "$pristine" -x
else
	src=$(basename "$tarball")
	dir=$(tar -tJf "$tarball" | head -n 1)
	dir=${dir%%/*}
	# Files that the series creates are not in the tarball: tar says so.
	tar -C "$pristine" --strip-components=1 -xJf "$tarball" "$dir/Makefile" \
		"${files[@]/#/$dir/}" 2>/dev/null
fi
echo "# pristine Linux $(sed -n 's/^VERSION = //p' "$pristine/Makefile" | head -1).$(sed -n 's/^PATCHLEVEL = //p' "$pristine/Makefile" | head -1) files from $src"
check "the pristine tree has a Makefile and include/uapi/linux/prctl.h" \
	test -f "$pristine/Makefile" -a -f "$pristine/include/uapi/linux/prctl.h"

# A plain directory: git apply.
cp -a "$pristine" "$T/plain"
run "$T/plain"
check "a pristine 6.12 tree: exit 0, the series applied" \
	eval 'status_is 0 && says "applied the zerosleep series for Linux 6.12" &&
	      grep -q PR_SET_TIMERSLACK_ZERO_POLICY "$T/plain/include/uapi/linux/prctl.h" &&
	      test -f "$T/plain/Documentation/userspace-api/zero-length-sleeps.rst"'
check "and it says how to check the running kernel" \
	says "/proc/self/timerslack_zero_policy"
run "$T/plain"
check "a second run: exit 0, already applied, nothing changed" \
	eval 'status_is 0 && says "already has the zerosleep series"'

# A git work tree: git am, one commit per patch.
cp -a "$pristine" "$T/git"
git -C "$T/git" init -q
git -C "$T/git" add -A
git -C "$T/git" -c user.name=t -c user.email=t@t commit -q -m vanilla
GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@t run "$T/git"
npatches=$(grep -vc '^#' "$top/series/series")
check "a git tree: exit 0, $npatches commits (git am)" \
	eval 'status_is 0 && [[ $(git -C "$T/git" rev-list --count HEAD) == $((npatches + 1)) ]] &&
	      [[ -z $(git -C "$T/git" status --porcelain) ]]'

# A tree the series does not fit: refused, unchanged.
cp -a "$pristine" "$T/changed"
sed -i 's/^#define PR_SET_TIMERSLACK\b.*/#define PR_SET_TIMERSLACK 1234/' "$T/changed/include/uapi/linux/prctl.h"
sed -i '1,$s/^/ /' "$T/changed/kernel/sys.c"
cp -a "$T/changed" "$T/changed.orig"
run "$T/changed"
check "a 6.12 tree the series does not fit: exit 1, says so, tree unchanged" \
	eval 'status_is 1 && says "did not apply" && says "unchanged" &&
	      diff -r "$T/changed.orig" "$T/changed" >/dev/null'

# Unsupported versions and things that are not kernel trees.
mkdir -p "$T/v5"
printf 'VERSION = 5\nPATCHLEVEL = 10\nSUBLEVEL = 209\n' >"$T/v5/Makefile"
run "$T/v5"
check "Linux 5.10: exit 2, names the version and the supported ones" \
	eval 'status_is 2 && says "Linux 5.10.209" && says "does not support" && says "6.12"'
mkdir -p "$T/empty"
run "$T/empty"
check "a directory that is not a kernel tree: exit 2, says so" \
	eval 'status_is 2 && says "not a Linux source tree"'
run "$T/nonexistent"
check "a missing directory: exit 2" eval 'status_is 2 && says "no such directory"'
run
check "no argument: exit 2, usage" eval 'status_is 2 && says "usage"'

# The layout series/X.Y/series, as for 7.3.
mkdir -p "$T/series/7.3" "$T/v73"
printf 'VERSION = 7\nPATCHLEVEL = 3\nSUBLEVEL = 4\n' >"$T/v73/Makefile"
echo old >"$T/v73/file"
cat >"$T/series/7.3/0001-test.patch" <<'EOF'
From: Test <t@t>
Subject: [PATCH] test

---
diff --git a/file b/file
--- a/file
+++ b/file
@@ -1 +1 @@
-old
+new
EOF
echo 0001-test.patch >"$T/series/7.3/series"
cp "$top/series/series" "$T/series/series"
ZEROSLEEP_SERIES=$T/series run "$T/v73"
check "series/7.3/series applies to a 7.3 tree" \
	eval 'status_is 0 && [[ $(cat "$T/v73/file") == new ]] && says "Linux 7.3"'
ZEROSLEEP_SERIES=$T/series run "$T/v5"
check "the refusal lists both 6.12 and 7.3" \
	eval 'status_is 2 && says "6.12, 7.3"'

echo "1..$n"
((failed == 0))
