#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Checks for the zerosleep manual pages.  Every subcommand prints TAP on
# standard output and exits non-zero if anything failed.
#
#   check.sh lint                  mandoc and groff lint, page style and
#                                  cross references (host)
#   check.sh build-examples OUTDIR extract every example program from the
#                                  EXAMPLES sections and compile it (host)
#   check.sh run-examples OUTDIR   run the compiled examples, each in a
#                                  scratch directory under $TMPDIR or /tmp;
#                                  needs the patched kernel (guest)
#   check.sh render                render each page with man(1) (host)
#
# An example program is the .EX/.EE block between the man-pages project's
#   .\" SRC BEGIN (NAME.c)      and      .\" SRC END
# comments inside an EXAMPLES section; it is written to OUTDIR/NAME.c and
# compiled to OUTDIR/NAME.  Programs that include <zerosleep.h> are built
# against libzerosleep: by default the header in ../libc-wrapper/include and
# the library in ../build/libc-wrapper, or $ZEROSLEEP_INCDIR and
# $ZEROSLEEP_LIBDIR.  $CC (default cc) compiles.

set -u

MANDIR=$(cd "$(dirname "$0")" && pwd) || exit 2
TOP=$(dirname "$MANDIR")
INCDIR=${ZEROSLEEP_INCDIR:-$TOP/libc-wrapper/include}
LIBDIR=${ZEROSLEEP_LIBDIR:-$TOP/build/libc-wrapper}
CC=${CC:-cc}
CFLAGS="-std=c11 -Wall -Wextra -Werror -D_GNU_SOURCE"

# Pages that must carry at least one example program.
PAGES_WITH_PROGRAMS="
man3/zerosleep_set_policy.3
man3/zerosleep_is_supported.3
"

# shellcheck source=scripts/tap.sh
. "$TOP/scripts/tap.sh"
ok() { tap_result 0 "$1"; }
not_ok() { tap_result 1 "$1"; }

# Print the file named by $1 as TAP diagnostics.
diag() {
	sed 's/^/# /' "$1"
}

finish() {
	if [ "$tap_n" -eq 0 ]; then
		not_ok "$1: nothing was checked"
	fi
	tap_end
	exit $?
}

usage() {
	echo "usage: $0 lint | build-examples OUTDIR | run-examples OUTDIR | render" >&2
	exit 2
}

# The pages, relative to MANDIR, one a line.
pages() {
	(cd "$MANDIR" && find man* -type f | LC_ALL=C sort)
}

# Run "$@" in MANDIR (where .so requests resolve); succeed only if it
# exits 0 and prints nothing.  Its output goes to $out.
quiet_in_mandir() {
	(cd "$MANDIR" && "$@") >"$out" 2>&1 && [ ! -s "$out" ]
}

tmpdir=
# shellcheck disable=SC2317 # called through trap
cleanup() {
	if [ -n "$tmpdir" ]; then
		rm -rf "$tmpdir"
	fi
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM
tmpdir=$(mktemp -d "${TMPDIR:-/tmp}/zerosleep-man.XXXXXX") || exit 2
out=$tmpdir/out

# The man-pages style rules that a linter does not check: an SPDX line,
# a .TH line with a YYYY-MM-DD date and a source, the conventional
# sections in their conventional order, and SEE ALSO references to this
# project's pages that exist.
style() {
	awk -v page="$1" -v mandir="$MANDIR" '
	BEGIN {
		order = "NAME LIBRARY SYNOPSIS CONFIGURATION DESCRIPTION " \
			"OPTIONS EXIT_STATUS RETURN_VALUE ERRORS ENVIRONMENT " \
			"FILES ATTRIBUTES VERSIONS STANDARDS HISTORY NOTES " \
			"CAVEATS BUGS EXAMPLES AUTHORS SEE_ALSO"
		nsec = split(order, known, " ")
		for (i = 1; i <= nsec; i++)
			rank[known[i]] = i
		# The sections every page of its kind has here.
		need = "NAME DESCRIPTION STANDARDS HISTORY SEE_ALSO"
		if (page ~ /^man[23]/)
			need = need " LIBRARY SYNOPSIS RETURN_VALUE ERRORS"
		else if (page ~ /^man1\//)
			need = "NAME SYNOPSIS DESCRIPTION OPTIONS EXIT_STATUS SEE_ALSO"
		split(need, needed, " ")
		sec = ""
		last = 0
		bad = 0
	}
	function complain(msg) {
		printf "%s:%d: %s\n", page, FNR, msg
		bad = 1
	}
	/^\.\\" SPDX-License-Identifier: [A-Za-z0-9.+-]+$/ { spdx = 1 }
	/^\.TH / {
		th = 1
		base = page
		sub(/.*\//, "", base)
		if ($2 "." $3 != base || page !~ ("^man" $3 "/"))
			complain(".TH " $2 " " $3 " does not match the file name")
		if ($4 !~ /^[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]$/)
			complain("the .TH date is not YYYY-MM-DD")
		if (NF < 5)
			complain("the .TH line names no source")
	}
	/^\.SH / {
		sec = substr($0, 5)
		gsub(/"/, "", sec)
		gsub(/ /, "_", sec)
		seen[sec] = 1
		if (!(sec in rank))
			complain("unconventional section " sec)
		else if (rank[sec] < last)
			complain("section " sec " is out of order")
		else
			last = rank[sec]
		next
	}
	sec == "SEE_ALSO" && /^\.BR / {
		name = $2
		s = $3
		sub(/^\(/, "", s)
		sub(/\).*/, "", s)
		gsub(/\\-/, "-", name)
		if (name ~ /^(zerosleep|proc_pid_timerslack_zero_policy|PR_[GS]ET_TIMERSLACK_ZERO_POLICY)/) {
			file = mandir "/man" s "/" name "." s
			if ((getline line < file) <= 0)
				complain("SEE ALSO names " name "(" s "), which is not in " mandir)
			close(file)
		}
	}
	END {
		if (!spdx)
			complain("no SPDX-License-Identifier comment")
		if (!th)
			complain("no .TH line")
		for (i in needed)
			if (!(needed[i] in seen))
				complain("no " needed[i] " section")
		exit bad
	}' "$MANDIR/$1"
}

cmd_lint() {
	if ! command -v mandoc >/dev/null || ! command -v groff >/dev/null; then
		not_ok "mandoc and groff are installed (apt-get install mandoc groff)"
		finish lint
	fi
	for page in $(pages); do
		if quiet_in_mandir mandoc -Tlint -W warning "$page"; then
			ok "mandoc -Tlint -W warning $page"
		else
			not_ok "mandoc -Tlint -W warning $page"
			diag "$out"
		fi
		if quiet_in_mandir groff -man -ww -z "$page"; then
			ok "groff -man -ww -z $page"
		else
			not_ok "groff -man -ww -z $page"
			diag "$out"
		fi
		if style "$page" >"$out" 2>&1; then
			ok "man-pages style of $page"
		else
			not_ok "man-pages style of $page"
			diag "$out"
		fi
	done

	# Every function of the library has its own page.
	header=$INCDIR/zerosleep.h
	if [ -r "$header" ]; then
		funcs=$(sed -n 's/^[a-z].*[ *]\(zerosleep_[a-z_]*\)(.*/\1/p' "$header")
		[ -n "$funcs" ] || not_ok "$header declares functions"
		for f in $funcs; do
			if [ -f "$MANDIR/man3/$f.3" ]; then
				ok "$f has a page"
			else
				not_ok "$f has a page (man3/$f.3)"
			fi
		done
	else
		not_ok "the library header $header exists"
	fi
	finish lint
}

# Write the example programs of page $1 into directory $2 and print their
# names (without .c), one a line.  Fails, with a message, on a program
# outside SRC markers or on a roff escape it does not know.
extract() {
	awk -v page="$1" -v outdir="$2" '
	function fail(msg) {
		printf "%s:%d: %s\n", page, FNR, msg > "/dev/stderr"
		error = 1
		exit 1
	}
	# Replace every "from" in s by "to", literally.
	function lit(s, from, to,    r, i) {
		r = ""
		while ((i = index(s, from)) > 0) {
			r = r substr(s, 1, i - 1) to
			s = substr(s, i + length(from))
		}
		return r s
	}
	# The roff escapes that the pages use in code, back to C.
	function unescape(s) {
		s = lit(s, "\\[rs]", "\001")
		s = lit(s, "\\(rs", "\001")
		s = lit(s, "\\e", "\001")
		s = lit(s, "\\-", "-")
		s = lit(s, "\\[aq]", "\047")
		s = lit(s, "\\(aq", "\047")
		s = lit(s, "\\[dq]", "\"")
		s = lit(s, "\\(dq", "\"")
		s = lit(s, "\\[ha]", "^")
		s = lit(s, "\\[ti]", "~")
		s = lit(s, "\\[ga]", "`")
		s = lit(s, "\\&", "")
		s = lit(s, "\\%", "")
		if (index(s, "\\") > 0)
			fail("unknown roff escape in example: " s)
		return lit(s, "\001", "\\")
	}
	/^\.SH / {
		if (file != "")
			fail("section ends inside SRC BEGIN")
		examples = ($0 ~ /^\.SH "?EXAMPLES"?$/)
		next
	}
	!examples { next }
	/^\.\\" SRC BEGIN \(/ {
		if (file != "")
			fail("nested SRC BEGIN")
		name = $0
		sub(/^\.\\" SRC BEGIN \(/, "", name)
		sub(/\)[ \t]*$/, "", name)
		if (name !~ /^[A-Za-z0-9_][A-Za-z0-9_.-]*\.c$/)
			fail("bad program name \"" name "\"")
		if (name in done)
			fail("two programs named " name)
		done[name] = 1
		file = outdir "/" name
		printf "" > file
		inex = 0
		lines = 0
		next
	}
	/^\.\\" SRC END/ {
		if (file == "" || inex || lines == 0)
			fail("SRC END without a complete .EX/.EE block")
		close(file)
		sub(/\.c$/, "", name)
		print name
		file = ""
		next
	}
	file != "" {
		if ($0 == ".EX") {
			if (inex) fail("nested .EX")
			inex = 1
		} else if ($0 == ".EE") {
			if (!inex) fail(".EE without .EX")
			inex = 0
		} else if (!inex) {
			fail("text outside .EX/.EE inside SRC BEGIN/END")
		} else if ($0 ~ /^[.\047]/) {
			fail("roff request inside an example program: " $0)
		} else {
			print unescape($0) > file
			lines++
		}
		next
	}
	# A program that is not between SRC markers would go unchecked.
	$0 == ".EX" { loose = 1; next }
	$0 == ".EE" { loose = 0; next }
	loose && /^#include/ {
		fail("an example program outside SRC BEGIN/END")
	}
	END {
		if (!error && file != "")
			fail("SRC BEGIN without SRC END")
	}' "$MANDIR/$1"
}

cmd_build_examples() {
	outdir=$1
	mkdir -p "$outdir" || exit 2
	outdir=$(cd "$outdir" && pwd) || exit 2
	list=$outdir/examples.list
	: >"$list"
	for p in $PAGES_WITH_PROGRAMS; do
		[ -f "$MANDIR/$p" ] || not_ok "$p exists and has an example program"
	done
	for page in $(pages); do
		case $(head -n 1 "$MANDIR/$page") in
		.so\ *) continue ;;
		esac
		if ! extract "$page" "$outdir" >"$tmpdir/names" 2>"$out"; then
			not_ok "extract the example programs of $page"
			diag "$out"
			continue
		fi
		count=$(wc -l <"$tmpdir/names")
		for p in $PAGES_WITH_PROGRAMS; do
			if [ "$p" = "$page" ] && [ "$count" -eq 0 ]; then
				not_ok "$page has an example program"
			fi
		done
		while read -r name; do
			src=$outdir/$name.c
			libs=
			if grep -q '^#include <zerosleep.h>' "$src"; then
				libs="-I$INCDIR -L$LIBDIR -lzerosleep"
				if [ ! -e "$LIBDIR/libzerosleep.so" ] &&
				   [ ! -e "$LIBDIR/libzerosleep.a" ]; then
					not_ok "compile $name.c from $page"
					echo "# libzerosleep is not built in $LIBDIR (run 'make lib')"
					continue
				fi
			fi
			# shellcheck disable=SC2086 # word splitting wanted
			if $CC $CFLAGS -o "$outdir/$name" "$src" $libs >"$out" 2>&1 &&
			   [ ! -s "$out" ]; then
				ok "compile $name.c from $page"
				echo "$name" >>"$list"
			else
				not_ok "compile $name.c from $page"
				diag "$out"
			fi
		done <"$tmpdir/names"
	done
	finish build-examples
}

cmd_run_examples() {
	outdir=$1
	list=$outdir/examples.list
	if [ ! -s "$list" ]; then
		not_ok "$list lists the compiled examples (run build-examples first)"
		finish run-examples
	fi
	while read -r name; do
		prog=$(cd "$outdir" && pwd)/$name
		rundir=$(mktemp -d "$tmpdir/run.XXXXXX") || exit 2
		(cd "$rundir" &&
		 LD_LIBRARY_PATH=$LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
		 timeout 300 "$prog") >"$out" 2>&1 </dev/null
		status=$?
		if [ "$status" -eq 0 ]; then
			ok "example $name exits 0"
		else
			not_ok "example $name exits 0 (status $status)"
		fi
		diag "$out"
	done <"$list"
	finish run-examples
}

cmd_render() {
	if ! command -v man >/dev/null; then
		not_ok "man is installed (apt-get install man-db)"
		finish render
	fi
	for page in $(pages); do
		if (cd "$MANDIR" && MANWIDTH=80 \
		    man --warnings -E UTF-8 -l "$page") >"$tmpdir/page" 2>"$out" &&
		   [ ! -s "$out" ] && grep -q '^NAME' "$tmpdir/page"; then
			ok "man -l $page"
		else
			not_ok "man -l $page"
			diag "$out"
		fi
	done
	finish render
}

[ $# -ge 1 ] || usage
case $1 in
lint)
	[ $# -eq 1 ] || usage
	cmd_lint ;;
build-examples)
	[ $# -eq 2 ] || usage
	cmd_build_examples "$2" ;;
run-examples)
	[ $# -eq 2 ] || usage
	cmd_run_examples "$2" ;;
render)
	[ $# -eq 1 ] || usage
	cmd_render ;;
*)
	usage ;;
esac
