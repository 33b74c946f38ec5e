#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Tests of scripts/apply-series.sh, TAP on stdout.
#
# For each kernel with a series (6.12 and 7.3), the pristine tree is the
# part of Debian's linux-source-X.Y that the series touches, plus its
# Makefile: taken from the tag "vanilla" of build/linux (build/linux-7.3)
# when scripts/tree.sh made it, else from the tarball.  Each is patched as a
# plain directory and as a git work tree, a second time, and in a version
# that the series does not fit.  Also: a version without a series,
# something that is not a kernel tree, and the layout series/X.Y/series.
# Conditions are passed to check() in single quotes and evaluated there.
# shellcheck disable=SC2016
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
apply=$top/scripts/apply-series.sh
T=$(mktemp -d "$top/build/apply-series.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
# shellcheck source=scripts/tap.sh
. "$top/scripts/tap.sh"

# On a failed check: the last run's status and output.
last_run() {
	echo "#   exit status: $rc"
	sed 's/^/#   /' "$T/log"
}
tap_on_fail=last_run
run() { "$apply" "$@" >"$T/log" 2>&1; rc=$?; }
status_is() { [[ $rc == "$1" ]]; }
says() { grep -q -- "$1" "$T/log"; }

# apply_tests X.Y TREE TARBALL: the tests on a pristine X.Y tree.
apply_tests() {
	local kv=$1 ktree=$2 tarball=$3 src dir pristine npatches
	local -a files there
	# The pristine files.
	mapfile -t files < <(grep -h '^diff --git' "$top/series/$kv"/0*.patch |
		awk '{ print substr($3, 3) }' | sort -u)
	pristine=$T/pristine-$kv
	mkdir -p "$pristine"
	if git -C "$ktree" rev-parse -q --verify vanilla >/dev/null 2>&1; then
		src="the tag vanilla of ${ktree#"$top"/}"
		mapfile -t there < <(git -C "$ktree" ls-tree -r --name-only vanilla -- "${files[@]}")
		git -C "$ktree" archive vanilla Makefile "${there[@]}" | tar -C "$pristine" -x
	else
		src=$(basename "$tarball")
		dir=$(tar -tJf "$tarball" | head -n 1)
		dir=${dir%%/*}
		# Files that the series creates are not in the tarball: tar says so.
		tar -C "$pristine" --strip-components=1 -xJf "$tarball" "$dir/Makefile" \
			"${files[@]/#/$dir/}" 2>/dev/null
	fi
	echo "# pristine Linux $(sed -n 's/^VERSION = //p' "$pristine/Makefile" | head -1).$(sed -n 's/^PATCHLEVEL = //p' "$pristine/Makefile" | head -1) files from $src"
	check "the pristine $kv tree has a Makefile and include/uapi/linux/prctl.h" \
		test -f "$pristine/Makefile" -a -f "$pristine/include/uapi/linux/prctl.h"

	# A plain directory: git apply.
	cp -a "$pristine" "$T/plain-$kv"
	run "$T/plain-$kv"
	check "a pristine $kv tree: exit 0, the series applied" \
		eval 'status_is 0 && says "applied the zerosleep series for Linux $kv" &&
		      grep -q PR_SET_TIMERSLACK_ZERO_POLICY "$T/plain-$kv/include/uapi/linux/prctl.h" &&
		      test -f "$T/plain-$kv/Documentation/userspace-api/zero-length-sleeps.rst"'
	check "$kv: and it says how to check the running kernel" \
		says "/proc/self/timerslack_zero_policy"
	run "$T/plain-$kv"
	check "a second run on $kv: exit 0, already applied, nothing changed" \
		eval 'status_is 0 && says "already has the zerosleep series"'

	# A git work tree: git am, one commit per patch.
	cp -a "$pristine" "$T/git-$kv"
	git -C "$T/git-$kv" init -q
	git -C "$T/git-$kv" add -A
	git -C "$T/git-$kv" -c user.name=t -c user.email=t@t commit -q -m vanilla
	GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@t run "$T/git-$kv"
	npatches=$(grep -vc '^#' "$top/series/$kv/series")
	check "a $kv git tree: exit 0, $npatches commits (git am)" \
		eval 'status_is 0 && [[ $(git -C "$T/git-$kv" rev-list --count HEAD) == $((npatches + 1)) ]] &&
		      [[ -z $(git -C "$T/git-$kv" status --porcelain) ]]'

	# A tree the series does not fit: refused, unchanged.
	cp -a "$pristine" "$T/changed-$kv"
	sed -i 's/^#define PR_SET_TIMERSLACK\b.*/#define PR_SET_TIMERSLACK 1234/' "$T/changed-$kv/include/uapi/linux/prctl.h"
	sed -i '1,$s/^/ /' "$T/changed-$kv/kernel/sys.c"
	cp -a "$T/changed-$kv" "$T/changed-$kv.orig"
	run "$T/changed-$kv"
	check "a $kv tree the series does not fit: exit 1, says so, tree unchanged" \
		eval 'status_is 1 && says "did not apply" && says "unchanged" &&
		      diff -r "$T/changed-$kv.orig" "$T/changed-$kv" >/dev/null'
}

apply_tests 6.12 "$top/build/linux" "${LINUX_TARBALL:-/usr/src/linux-source-6.12.tar.xz}"
apply_tests 7.3 "$top/build/linux-7.3" "$top/build/linux-source-7.3/usr/src/linux-source-7.3.tar.xz"

# README's session "In /tmp/src": each command it quotes, run here on the
# pristine trees (and a git clone, and a 6.1 tree), must print what README
# shows, with this directory for /tmp/src.  On a difference, the session
# as run here is shown, ready to paste.
readme_session() {
	local line cmd
	mkdir -p "$T/src/linux-6.1"
	cp -a "$T/pristine-6.12" "$T/src/linux-source-6.12"
	cp -a "$T/pristine-7.3" "$T/src/linux-source-7.3"
	cp -a "$T/pristine-6.12" "$T/src/linux-6.12"
	git -C "$T/src/linux-6.12" init -q
	git -C "$T/src/linux-6.12" add -A
	git -C "$T/src/linux-6.12" -c user.name=t -c user.email=t@t commit -q -m vanilla
	printf 'VERSION = 6\nPATCHLEVEL = 1\nSUBLEVEL = 158\n' >"$T/src/linux-6.1/Makefile"
	awk '/In `\/tmp\/src`:$/ { at = 1; next }
	     at == 1 && /^```$/ { at = 2; next }
	     at == 2 && /^```$/ { exit }
	     at == 2' "$top/README.md" >"$T/readme-session"
	while IFS= read -r line; do
		[[ $line == '$ '* ]] || continue
		echo "$line"
		cmd=${line#'$ '}
		cmd=${cmd%%  *#*}
		(cd "$T/src" && GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@t \
			bash -c "${cmd/scripts\/apply-series.sh/$apply}" 2>&1) |
			sed "s|$T/src|/tmp/src|g"
	done <"$T/readme-session"
}
readme_session >"$T/session" 2>&1
check "README's apply-series.sh session in /tmp/src is what the commands print ($(grep -c '^\$ ' "$T/readme-session") commands)" \
	eval '[[ -s $T/readme-session ]] && cmp -s "$T/readme-session" "$T/session" ||
	      { echo "as run here:" >"$T/log"; cat "$T/session" >>"$T/log"; rc=1; false; }'

# README's counts of patches, "N patches for 6.12, M for 7.3", against
# the series files.
counts=$(tr '\n' ' ' <"$top/README.md" | grep -o 'lists them: [0-9]* patches for 6\.12, [0-9]* for 7\.3')
want="lists them: $(grep -vc '^#' "$top/series/6.12/series") patches for 6.12, $(grep -vc '^#' "$top/series/7.3/series") for 7.3"
check "README's patch counts are what series/*/series list: '$want'" \
	eval '[[ $counts == "$want" ]] || { echo "README: $counts" >"$T/log"; rc=1; false; }'

# Unsupported versions and things that are not kernel trees.
mkdir -p "$T/v5"
printf 'VERSION = 5\nPATCHLEVEL = 10\nSUBLEVEL = 209\n' >"$T/v5/Makefile"
run "$T/v5"
check "Linux 5.10: exit 2, names the version and the supported ones" \
	eval 'status_is 2 && says "Linux 5.10.209" && says "does not support" && says "6.12, 7.3"'
mkdir -p "$T/empty"
run "$T/empty"
check "a directory that is not a kernel tree: exit 2, says so" \
	eval 'status_is 2 && says "not a Linux source tree"'
run "$T/nonexistent"
check "a missing directory: exit 2" eval 'status_is 2 && says "no such directory"'
run
check "no argument: exit 2, usage" eval 'status_is 2 && says "usage"'

# The layout series/X.Y/series, with a made-up 7.3 series.
mkdir -p "$T/series/7.3" "$T/series/6.12" "$T/v73"
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
cp "$top/series/6.12/series" "$T/series/6.12/series"
ZEROSLEEP_SERIES=$T/series run "$T/v73"
check "series/7.3/series applies to a 7.3 tree" \
	eval 'status_is 0 && [[ $(cat "$T/v73/file") == new ]] && says "Linux 7.3"'
ZEROSLEEP_SERIES=$T/series run "$T/v5"
check "the refusal lists both 6.12 and 7.3" \
	eval 'status_is 2 && says "6.12, 7.3"'

tap_end
