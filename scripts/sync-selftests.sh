#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Put the selftests that the series carries into a kernel tree, where they
# build with the tree's own selftests Makefiles.  selftests/ (the source of
# truth) mirrors tools/testing/selftests/: each of its files is copied to
# the same path in the tree, and the tree's own Makefiles and .gitignore
# files get the lines that build and ignore them (below).  MAINTAINERS
# already covers them: the entries of timers/ and proc/ (HIGH-RESOLUTION
# TIMERS, PROC FILESYSTEM) list those directories.  What earlier versions
# of the series added, and this one no longer has, is taken out.  Files
# are copied only when they differ, so mtimes stay meaningful, and a
# second run changes nothing.
#
#   scripts/sync-selftests.sh TREE SELFTESTS_DIR
#   scripts/sync-selftests.sh --paths SELFTESTS_DIR   every tree path that the
#                                   selftests patch may touch, one a line
#   scripts/sync-selftests.sh --own SELFTESTS_DIR     the series' own files
set -euo pipefail
ksft=tools/testing/selftests

# The lines that the series adds to the tree's files, as FILE|AFTER|LINE:
# LINE goes after the line AFTER (whole lines, matched exactly; there must
# be one).  With AFTER as =OLD, LINE replaces the line OLD; as
# SECTION/<BEFORE, it goes before the line BEFORE in the MAINTAINERS
# section SECTION.
edits=(
	"$ksft/timers/Makefile|=	     inconsistency-check raw_skew threadtest rtcpie|	     inconsistency-check raw_skew threadtest rtcpie zero_sleep_policy"
	"$ksft/timers/Makefile|include ../lib.mk|\$(OUTPUT)/zero_sleep_policy: CFLAGS += \$(KHDR_INCLUDES)"
	"$ksft/timers/.gitignore|freq-step|zero_sleep_policy"
	"$ksft/proc/Makefile|TEST_GEN_PROGS += proc-tid0|TEST_GEN_PROGS += proc-timerslack-zero-policy"
	"$ksft/proc/.gitignore|/proc-tid0|/proc-timerslack-zero-policy"
)
# What earlier versions added: a directory and a header, and these lines.
old_files=("$ksft/zerosleep" "$ksft/timers/zero_sleep_policy.h")
old_lines=(
	"$ksft/Makefile|TARGETS += zerosleep"
	"MAINTAINERS|F:	$ksft/zerosleep/"
	"MAINTAINERS|F:	$ksft/proc/proc-timerslack-zero-policy.c"
	"$ksft/timers/Makefile|LOCAL_HDRS += zero_sleep_policy.h"
	"$ksft/proc/Makefile|LOCAL_HDRS += ../timers/zero_sleep_policy.h"
)

own() { (cd "$1" && find . -type f | sed "s|^\./|$ksft/|" | LC_ALL=C sort); }

case ${1:-} in
--own)
	own "$2"
	exit
	;;
--paths)
	{
		own "$2"
		for e in "${edits[@]}" "${old_lines[@]}"; do echo "${e%%|*}"; done
		printf '%s\n' "${old_files[@]}"
	} | LC_ALL=C sort -u
	exit
	;;
esac
tree=$1
src=$(realpath "$2")

# The series' own files.  A list in the tree's .git remembers what was
# copied, so that a file removed from selftests/ leaves the tree too.
list=$tree/.git/zerosleep-selftests.list
if [ -f "$list" ]; then
	own "$src" | LC_ALL=C comm -23 <(LC_ALL=C sort "$list") - | while read -r f; do
		rm -f "$tree/$f"
	done
fi
own "$src" | while read -r f; do
	mkdir -p "$(dirname "$tree/$f")"
	cmp -s "$src/${f#"$ksft"/}" "$tree/$f" || cp -p "$src/${f#"$ksft"/}" "$tree/$f"
done
own "$src" > "$list"

for e in "${edits[@]}"; do
	IFS='|' read -r file after line <<< "$e"
	f=$tree/$file
	grep -qxF -- "$line" "$f" && continue
	section=
	case $after in
	=*) mode=replace; after=${after#=} ;;
	*/\<*) mode=before; section=${after%%/<*}; after=${after#*/<} ;;
	*) mode=after ;;
	esac
	# The one line AFTER (in SECTION, if given) and LINE around it.
	awk -v mode="$mode" -v section="$section" -v after="$after" -v new="$line" '
		BEGIN { in_section = section == "" }
		section != "" && $0 == section { in_section = 1 }
		section != "" && $0 == "" { in_section = 0 }
		in_section && $0 == after {
			n++
			if (mode == "before") print new
			if (mode == "replace") $0 = new
			print
			if (mode == "after") print new
			next
		}
		{ print }
		END { exit n != 1 }' "$f" > "$f.tmp" || {
		rm -f "$f.tmp"
		echo "sync-selftests.sh: $file: not one line '$after'${section:+ in '$section'}" >&2
		exit 1
	}
	cat "$f.tmp" > "$f"
	rm -f "$f.tmp"
done

for f in "${old_files[@]}"; do
	rm -rf "${tree:?}/$f"
done
for e in "${old_lines[@]}"; do
	IFS='|' read -r file line <<< "$e"
	f=$tree/$file
	if grep -qxF -- "$line" "$f"; then
		grep -vxF -- "$line" "$f" > "$f.tmp" || true
		cat "$f.tmp" > "$f"
		rm -f "$f.tmp"
	fi
done
