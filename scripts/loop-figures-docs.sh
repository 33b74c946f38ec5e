#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# doc/loop-figures.txt is the one source of the loop.py figures that
# README.md and zerosleep(1)'s EXAMPLES quote: `make loop-figures` writes
# it (doc/loop-figures.sh) and then runs this script's "update", which
# copies it into both.  "check" (scripts/test-readme.sh runs it) prints
# TAP: README's block is the file's, zerosleep(1)'s three figures are the
# file's, and the file was made from the code it measures as it is now
# (its "# measured code:" line against loop-figures.sh's hash).
#
#   scripts/loop-figures-docs.sh update|check
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
fig=$top/doc/loop-figures.txt
readme=$top/README.md
page=$top/man/man1/zerosleep.1
begin='<!-- make loop-figures writes the block below from doc/loop-figures.txt -->'

# The figure printed after "$ COMMAND" in the file (after any notice).
figure() {
	awk -v cmd="\$ $1" '$0 == cmd { at = 1; next }
		at && /^zerosleep: / { next }
		at { print; exit }' "$fig"
}

# README with its block replaced by the file (without "# measured code:").
readme_new() {
	awk -v begin="$begin" -v fig="$fig" '
		$0 == begin { print; skip = 1; next }
		skip == 1 && /^```$/ { print; while ((getline l < fig) > 0)
					if (l !~ /^# measured code:/) print l
				      skip = 2; next }
		skip == 2 && /^```$/ { print; skip = 0; next }
		skip == 2 { next }
		{ print }' "$readme"
}

# zerosleep(1) with the line after each of its three loop.py commands set
# to the file's figure for that command (the page runs them with -q).
page_new() {
	awk -v plain="$(figure "python3 loop.py")" \
	    -v ret="$(figure "zerosleep return python3 loop.py")" \
	    -v sched="$(figure "zerosleep -q schedule python3 loop.py")" '
		set { print set; set = ""; next }
		$0 == ".RB $ \" python3 loop.py\"" { set = plain }
		$0 == ".RB $ \" zerosleep \\-q return python3 loop.py\"" { set = ret }
		$0 == ".RB $ \" zerosleep \\-q schedule python3 loop.py\"" { set = sched }
		{ print }' "$page"
}

# The hash of the code that the figures measure, as loop-figures.sh writes it.
measured() { "$top/doc/loop-figures.sh" --hash; }

case ${1:-} in
update)
	if [[ ! -s $fig ]]; then
		echo "loop-figures-docs.sh: no $fig; run 'make loop-figures'" >&2
		exit 1
	fi
	grep -qxF -- "$begin" "$readme" || {
		echo "loop-figures-docs.sh: README.md lacks the line '$begin'" >&2; exit 1; }
	readme_new >"$readme.tmp" && mv "$readme.tmp" "$readme" &&
	page_new >"$page.tmp" && mv "$page.tmp" "$page" &&
	echo "loop-figures-docs.sh: README.md and man/man1/zerosleep.1 quote doc/loop-figures.txt"
	;;
check)
	# shellcheck source=scripts/tap.sh
	. "$top/scripts/tap.sh"
	[[ -s $fig ]]
	tap_result $? "doc/loop-figures.txt exists (make loop-figures writes it)"
	[[ -s $fig ]] || { tap_end; exit 1; }
	readme_new | cmp -s - "$readme"
	tap_result $? "README's loop.py session is doc/loop-figures.txt's (make loop-figures writes both)"
	page_new | cmp -s - "$page"
	tap_result $? "zerosleep(1)'s EXAMPLES quote doc/loop-figures.txt's three figures"
	want=$(measured)
	got=$(sed -n 's/^# measured code: //p' "$fig")
	echo "# doc/loop-figures.txt measured code $got; the code now: $want"
	[[ -n $got && $got == "$want" ]]
	tap_result $? "doc/loop-figures.txt was made from the code it measures as it is now (else: make loop-figures)"
	tap_end
	;;
*)
	echo "usage: $0 update|check" >&2
	exit 2
	;;
esac
