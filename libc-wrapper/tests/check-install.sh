#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Install into a temporary DESTDIR with PREFIX=/usr, as a distribution
# package would, and use the result as a consumer would: TAP on stdout.
#
# A consumer program is compiled and linked with nothing but
# `pkg-config --cflags --libs zerosleep` (PKG_CONFIG_PATH and
# PKG_CONFIG_SYSROOT_DIR point into DESTDIR), then run against the
# installed library.  Also checks the soname, the exported symbols and
# their versions, the static library, the preload library, that the
# launcher runs and finds the preload library without any help, and
# uninstall.  Then the same for the project's top-level `make install`
# (libraries, launcher and every man page, each installed once) and
# `make uninstall`, which must leave nothing but empty directories.
#
# Environment: O (the build directory), MAKE, CC.
# Conditions are passed to check() in single quotes and evaluated there, so
# variables set only for them look unused to shellcheck.
# shellcheck disable=SC2016,SC2034
set -u

here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/.." && pwd)
B=${O:-$src/../build/libc-wrapper}
MAKE=${MAKE:-make}
CC=${CC:-cc}
prefix=/usr
libdir=$prefix/lib

# shellcheck source=scripts/tap.sh
. "$src/../scripts/tap.sh"
D=$(mktemp -d "${TMPDIR:-/tmp}/zerosleep-install.XXXXXX") || exit 1
trap 'rm -rf "$D"' EXIT
dest=$D/root

# A check's diagnostics: what it wrote to $D/log, emptied after each check.
show_log() { [[ -s $D/log ]] && sed 's/^/#   /' "$D/log"; }
empty_log() { : >"$D/log"; }
tap_on_fail=show_log
tap_after_check=empty_log

# run COMMAND...: run it with its output in $D/log for check() to show.
run() { "$@" >"$D/log" 2>&1; }

# map_symbols MAP: "NODE SYMBOL" for each global symbol of a version
# script ("- SYMBOL" in an unnamed node), comments dropped.
map_symbols() {
	sed -e 's|/\*.*\*/||' -e '/\/\*/,/\*\//d' "$1" | awk '
		/^[A-Za-z_][A-Za-z0-9_.]*[[:space:]]*\{/ { node = $1; next }
		/^\{/ { node = "-"; next }
		/^}/ { node = ""; next }
		/global:|local:/ { next }
		node != "" && /^[[:space:]]*[A-Za-z_][A-Za-z0-9_]*;/ {
			gsub(/[[:space:];]/, ""); print node, $0 }'
}

check "make install PREFIX=$prefix DESTDIR=..." \
	run "$MAKE" -C "$src" --no-print-directory O="$B" PREFIX=$prefix \
		DESTDIR="$dest" install

check "the real library, the two symlinks and the archive are installed" \
	eval '[[ -f $dest$libdir/libzerosleep.so.2.2.0 && ! -L $dest$libdir/libzerosleep.so.2.2.0 &&
	        $(readlink "$dest$libdir/libzerosleep.so.2") == libzerosleep.so.2.2.0 &&
	        $(readlink "$dest$libdir/libzerosleep.so") == libzerosleep.so.2 &&
	        -f $dest$libdir/libzerosleep.a ]]'
# What preload.map exports: the five sleep functions, and whatever else
# it names.
preload_want=$(map_symbols "$src/preload.map" | awk '{ print $2 }' | sort | tr "\n" " ")
preload_sleeps=0
for f in clock_nanosleep nanosleep sleep thrd_sleep usleep; do
	[[ " $preload_want" == *" $f "* ]] && preload_sleeps=$((preload_sleeps + 1))
done
check "the preload library is installed in LIBDIR/zerosleep and exports only what preload.map names: $preload_want" \
	eval '[[ -f $dest$libdir/zerosleep/libzerosleep-preload.so ]] &&
	      ((preload_sleeps == 5)) &&
	      [[ $(nm -D --defined-only "$dest$libdir/zerosleep/libzerosleep-preload.so" |
	           awk "{ print \$3 }" | sort | tr "\n" " ") == "$preload_want" ]]'
check "the header, zerosleep.pc and the launcher are installed" \
	eval '[[ -f $dest$prefix/include/zerosleep.h &&
	        -f $dest$libdir/pkgconfig/zerosleep.pc &&
	        -x $dest$prefix/bin/zerosleep ]]'
manpages=0
for f in "$src"/../man/man1/*.1 "$src"/../man/man3/*.3; do
	[[ -f $f ]] || continue
	manpages=$((manpages + 1))
	s=${f##*.}
	[[ -f $dest$prefix/share/man/man$s/${f##*/} ]] || manpages=-1000
done
check "each page of ../man/man1 and man3 is installed ($manpages found)" \
	eval '((manpages >= 0))'

check "readelf -d: SONAME is libzerosleep.so.2" \
	eval 'readelf -d "$dest$libdir/libzerosleep.so.2.2.0" |
	      grep -q "(SONAME).*\[libzerosleep.so.2\]"'

# Every defined dynamic symbol: the API, each in the node of the release
# that added it (as libzerosleep.map has it), and the version nodes
# themselves.  The functions of the first two releases are named here too,
# so that a map that lost one fails.
nm -D --defined-only "$dest$libdir/libzerosleep.so.2.2.0" >"$D/nm"
map_symbols "$src/libzerosleep.map" >"$D/map"
want=$( (awk '{ print "T " $2 "@@" $1 }' "$D/map"
	 awk '{ print "A " $1 }' "$D/map" | sort -u) | sort)
for f in zerosleep_get_policy zerosleep_get_tid_policy zerosleep_is_supported \
	 zerosleep_policy_from_name zerosleep_policy_name zerosleep_set_policy \
	 zerosleep_set_tid_policy; do
	grep -qx "ZEROSLEEP_1.0 $f" "$D/map" || want="$want (missing: $f@@ZEROSLEEP_1.0)"
done
grep -qx "ZEROSLEEP_2.0 zerosleep_set_process_policy" "$D/map" ||
	want="$want (missing: zerosleep_set_process_policy@@ZEROSLEEP_2.0)"
got=$(awk '{ print $2, $3 }' "$D/nm" | sort)
check "nm -D exports only the API, in the nodes of libzerosleep.map: $(awk '{ print $1 }' "$D/map" | sort -u | tr "\n" " ")" \
	eval '[[ $got == "$want" ]] ||
	      { echo "$want" >"$D/want"; echo "$got" >"$D/got"; diff "$D/want" "$D/got" >"$D/log"; false; }'

export PKG_CONFIG_PATH=$dest$libdir/pkgconfig
export PKG_CONFIG_LIBDIR=$dest$libdir/pkgconfig
export PKG_CONFIG_SYSROOT_DIR=$dest
# PREFIX=/usr puts the flags in the default search paths, which pkg-config
# would drop; keep them so that they point into DESTDIR.
export PKG_CONFIG_ALLOW_SYSTEM_CFLAGS=1 PKG_CONFIG_ALLOW_SYSTEM_LIBS=1

check "pkg-config --modversion zerosleep is 2.2.0" \
	eval '[[ $(pkg-config --modversion zerosleep) == 2.2.0 ]]'
flags=$(pkg-config --cflags --libs zerosleep)
echo "# pkg-config --cflags --libs zerosleep: $flags"
check "pkg-config --cflags --libs points into DESTDIR" \
	eval '[[ $flags == *"-I$dest$prefix/include"* && $flags == *"-L$dest$libdir"* &&
	        $flags == *-lzerosleep* ]]'

check "pkg-config finds the module as libzerosleep too, with the same flags" \
	eval '[[ -L $dest$libdir/pkgconfig/libzerosleep.pc &&
	        $(pkg-config --modversion libzerosleep) == 2.2.0 &&
	        $(pkg-config --cflags --libs libzerosleep) == "$flags" ]]'

cat >"$D/consumer.c" <<'EOF'
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <zerosleep.h>

int main(void)
{
#if !ZEROSLEEP_CHECK_VERSION(2, 0)
# error "ZEROSLEEP_CHECK_VERSION(2, 0) is false"
#endif
	int policy = zerosleep_policy_from_name("return");
	const char *name = zerosleep_policy_name(policy), *got_name;
	int supported = zerosleep_is_supported();
	int got = zerosleep_get_policy();

	/* A newer kernel may return a value this library has no name for. */
	got_name = got >= 0 ? zerosleep_policy_name(got) : strerror(errno);
	printf("%s %d %s\n", name ? name : "(null)", supported,
	       got_name ? got_name : "(unknown)");
	return !(policy == ZEROSLEEP_RETURN && name &&
		 PR_SET_TIMERSLACK_ZERO_POLICY == 0x545a5053 &&
		 (supported ? got >= 0 : got == -1 && errno == ENOTSUP));
}
EOF
# What the consumer should print here.
if [[ -e /proc/self/timerslack_zero_policy ]]; then
	case $(cat /proc/self/timerslack_zero_policy) in
	0) expected="return-immediately 1 default" ;;
	1) expected="return-immediately 1 return-immediately" ;;
	2) expected="return-immediately 1 schedule-once" ;;
	*) expected="return-immediately 1 full-slack" ;;
	esac
else
	expected="return-immediately 0 Operation not supported"
fi

# shellcheck disable=SC2086 # $flags is a list of options
check "a consumer compiles and links with only the pkg-config flags" \
	run "$CC" -std=c11 -Wall -Wextra -Werror -o "$D/consumer" "$D/consumer.c" $flags
check "the consumer needs libzerosleep.so.2 and has versioned references" \
	eval 'readelf -d "$D/consumer" | grep -q "(NEEDED).*\[libzerosleep.so.2\]" &&
	      objdump -T "$D/consumer" | grep -q "ZEROSLEEP_1.0.*zerosleep_policy_name"'
check "the consumer resolves libzerosleep.so.2 inside DESTDIR" \
	eval 'LD_LIBRARY_PATH=$dest$libdir ldd "$D/consumer" |
	      grep -q "libzerosleep.so.2 => $dest$libdir/libzerosleep.so.2"'
out=$(LD_LIBRARY_PATH=$dest$libdir "$D/consumer" 2>&1)
check "the consumer runs against the installed library: '$out'" \
	eval '[[ $out == "$expected" ]] || { echo "expected: $expected" >"$D/log"; false; }'

static_flags=$(pkg-config --static --cflags --libs zerosleep)
# shellcheck disable=SC2086
check "a static consumer links with pkg-config --static and -static" \
	run "$CC" -std=c11 -static -o "$D/consumer-static" "$D/consumer.c" $static_flags
out=$("$D/consumer-static" 2>&1)
check "the static consumer needs no shared libzerosleep and runs: '$out'" \
	eval '[[ $out == "$expected" ]] && ! readelf -d "$D/consumer-static" 2>/dev/null | grep -q libzerosleep'

if command -v c++ >/dev/null; then
	echo '#include <sys/prctl.h>
#include <zerosleep.h>
int main() { return zerosleep_policy_name(ZEROSLEEP_FULL_SLACK) == nullptr; }' >"$D/consumer.cc"
	# shellcheck disable=SC2086
	check "the header works from C++" \
		run c++ -std=c++11 -Wall -Wextra -Werror -o "$D/consumer-cc" "$D/consumer.cc" $flags
fi

check "the installed launcher has the library linked in: no libzerosleep.so, no rpath" \
	eval 'readelf -d "$dest$prefix/bin/zerosleep" >"$D/log" &&
	      ! grep -q "(NEEDED).*libzerosleep" "$D/log" &&
	      ! grep -Eq "RPATH|RUNPATH" "$D/log"'
out=$("$dest$prefix/bin/zerosleep" --version 2>&1)
check "the installed launcher runs without LD_LIBRARY_PATH: '$out'" \
	eval '[[ $out == "zerosleep (zerosleep) 2.2.0" ]]'
check "the installed launcher looks for the preload in $libdir/zerosleep" \
	eval 'grep -aq "$libdir/zerosleep/libzerosleep-preload.so" "$dest$prefix/bin/zerosleep"'

# The launcher's bash completion, as installed, in a bash without
# bash-completion: "WORDS -> what it offers for the last one".
comp=$dest$prefix/share/bash-completion/completions/zerosleep
complete_words() {
	bash -c 'source "$1"; shift; PATH=$2:$PATH; shift 2
		COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _zerosleep
		echo "${COMPREPLY[*]}"' bash "$comp" x "$dest$prefix/bin" "$@" 2>"$D/log"
}
check "bash completion is installed in share/bash-completion/completions" \
	eval '[[ -f $comp ]] && bash -n "$comp"'
out=$(complete_words zerosleep "")
check "completion: the first word is a policy: '$out'" \
	eval '[[ $out == "default return-immediately schedule-once full-slack return schedule full" ]]'
out=$(complete_words zerosleep -q sch)
check "completion: after an option, policies again: '$out'" \
	eval '[[ $out == "schedule-once schedule" ]]'
out=$(complete_words zerosleep --)
check "completion: long options, from the installed launcher's --help: '$out'" \
	eval '[[ " $out " == *" --pid "* && " $out " == *" --kernel-only "* && " $out " == *" --version "* ]]'
out=$(complete_words zerosleep return zerosle)
check "completion: after POLICY, a command name: '$out'" \
	eval '[[ " $out " == *" zerosleep "* ]]'
out=$(complete_words zerosleep -a -p return "$$")
check "completion: -p POLICY, then a PID (this shell's, $$): '$out'" \
	eval '[[ " $out " == *" $$ "* && " $out " != *" default "* ]]'
out=$(complete_words zerosleep -p "")
check "completion: -p, then a policy or a PID" \
	eval '[[ " $out " == *" full-slack "* && " $out " == *" 1 "* ]]'

check "make uninstall" \
	run "$MAKE" -C "$src" --no-print-directory O="$B" PREFIX=$prefix \
		DESTDIR="$dest" uninstall
check "uninstall leaves no files behind" \
	eval '[[ -z $(find "$dest" ! -type d) ]] || { find "$dest" ! -type d >"$D/log"; false; }'
check "uninstall removes LIBDIR/zerosleep, the preload library's own directory" \
	eval '[[ ! -e $dest$libdir/zerosleep ]]'

# ---- the project's make install and make uninstall ----------------------

top=$(cd "$src/.." && pwd)
tdest=$D/top
# An install(1) that logs every file it installs, to count them.
cat >"$D/install-log" <<'END'
#!/bin/bash
all=("$@") dirs=0 files=()
while (($#)); do
	case $1 in
	-d) dirs=1; shift ;;
	-m|-o|-g) shift 2 ;;
	-*) shift ;;
	*) files+=("$1"); shift ;;
	esac
done
if ((!dirs && ${#files[@]} >= 2)); then
	to=${files[-1]}
	for f in "${files[@]:0:${#files[@]}-1}"; do
		if [[ -d $to ]]; then echo "${to%/}/${f##*/}"; else echo "$to"; fi
	done >>"$INSTALL_LOG"
fi
exec install "${all[@]}"
END
chmod 755 "$D/install-log"
export INSTALL_LOG=$D/installed
: >"$INSTALL_LOG"

# A build directory of its own: make install rebuilds the launcher for its
# PREFIX, and other tests may be using build/libc-wrapper.
"$MAKE" -C "$top" --no-print-directory BUILD="$D/build" PREFIX=$prefix \
	DESTDIR="$tdest" INSTALL="$D/install-log" install >"$D/install-out" 2>&1
rc=$?
check "top-level make install PREFIX=$prefix DESTDIR=... (a build directory of its own)" \
	eval '((rc == 0)) || { cp "$D/install-out" "$D/log"; false; }'
check "make lib, which install runs, says where the launcher and the libraries are" \
	eval 'grep -q "the launcher is $D/build/libc-wrapper/zerosleep$" "$D/install-out" &&
	      grep -q "libzerosleep-preload.so are in $D/build/libc-wrapper$" "$D/install-out"'
pages=$(cd "$top/man" && ls man*/*.[0-9]*)
missing=
for page in $pages; do
	[[ -f $tdest$prefix/share/man/$page ]] || missing="$missing $page"
done
check "every man page is installed, man2const and man5 too ($(wc -w <<<"$pages") pages)" \
	eval '[[ -n $pages && -z $missing ]] || { echo "missing:$missing" >"$D/log"; false; }'
# The pages name this installation's paths, '-' escaped as roff has it.
roff_libdir=${libdir//-/\\-}
check "the installed zerosleep(1) and zerosleep-preload(7) name $libdir/zerosleep and $prefix/bin/zerosleep, not /usr/local" \
	eval 'grep -qF "$roff_libdir/zerosleep/libzerosleep\-preload.so" "$tdest$prefix/share/man/man1/zerosleep.1" &&
	      grep -qF "ExecStart=$prefix/bin/zerosleep " "$tdest$prefix/share/man/man1/zerosleep.1" &&
	      grep -qF "LD_PRELOAD=$roff_libdir/zerosleep/libzerosleep\-preload.so" "$tdest$prefix/share/man/man7/zerosleep-preload.7" &&
	      ! grep -q /usr/local "$tdest$prefix/share/man/man1/zerosleep.1" "$tdest$prefix/share/man/man7/zerosleep-preload.7"'
check "each file is installed once (the man1 and man3 pages too)" \
	eval '[[ -s $INSTALL_LOG && -z $(sort "$INSTALL_LOG" | uniq -d) ]] ||
	      { sort "$INSTALL_LOG" | uniq -d >"$D/log"; false; }'
check "the libraries, the preload library, the header, zerosleep.pc and the launcher are installed" \
	eval '[[ -f $tdest$libdir/libzerosleep.so.2.2.0 && -L $tdest$libdir/libzerosleep.so.2 &&
	        -L $tdest$libdir/libzerosleep.so && -f $tdest$libdir/libzerosleep.a &&
	        -f $tdest$libdir/zerosleep/libzerosleep-preload.so &&
	        -f $tdest$prefix/include/zerosleep.h && -f $tdest$libdir/pkgconfig/zerosleep.pc &&
	        -x $tdest$prefix/bin/zerosleep ]]'
echo "# make install put $(find "$tdest" ! -type d | wc -l) files and links under DESTDIR"
check "top-level make uninstall PREFIX=$prefix DESTDIR=..." \
	run "$MAKE" -C "$top" --no-print-directory BUILD="$D/build" PREFIX=$prefix \
		DESTDIR="$tdest" uninstall
check "make uninstall leaves no file or link" \
	eval '[[ -z $(find "$tdest" ! -type d) ]] || { find "$tdest" ! -type d >"$D/log"; false; }'
check "nor LIBDIR/zerosleep; with its empty directories removed, DESTDIR is empty" \
	eval '[[ ! -e $tdest$libdir/zerosleep ]] &&
	      find "$tdest" -mindepth 1 -depth -type d -empty -delete &&
	      [[ -z $(ls -A "$tdest") ]]'
check "make uninstall with nothing installed succeeds" \
	run "$MAKE" -C "$top" --no-print-directory BUILD="$D/build" PREFIX=$prefix \
		DESTDIR="$tdest" uninstall
help=$("$MAKE" -s -C "$top" --no-print-directory help)
check "make help lists lib, install and uninstall" \
	eval 'grep -q "^ *make lib " <<<"$help" && grep -q "^ *make install " <<<"$help" &&
	      grep -q "^ *make uninstall " <<<"$help"'

# ---- ldconfig, only where it helps ---------------------------------------

# A fake ldconfig first in PATH: it notes each run that would change the
# cache, and answers the directory listing (-v -N -X) as the real one does.
mkdir -p "$D/fakebin"
cat >"$D/fakebin/ldconfig" <<END
#!/bin/sh
[ "\$*" = "-v -N -X" ] && exec $(command -v ldconfig || echo /sbin/ldconfig) "\$@"
echo ran >>"$D/ldconfig-ran"
END
chmod 755 "$D/fakebin/ldconfig"
ldc() { rm -f "$D/ldconfig-ran"; PATH=$D/fakebin:$PATH "$src/ldconfig.sh" "$@" 2>&1; }
system_dir=$(ldconfig -v -N -X 2>/dev/null | sed -n 's/^\(\/[^:]*\):.*/\1/p' | head -n 1)
out=$(ldc install "$D/nowhere/lib")
check "make install to a LIBDIR outside the linker's path runs no ldconfig and says to set LD_LIBRARY_PATH or ld.so.conf.d" \
	eval '[[ ! -e $D/ldconfig-ran && $out == *"LD_LIBRARY_PATH=$D/nowhere/lib"* &&
	        $out == *"/etc/ld.so.conf.d/"* ]] || { echo "$out" >"$D/log"; false; }'
out=$(ldc install "$system_dir" "$D/staging")
check "with a DESTDIR, no ldconfig and no message" \
	eval '[[ ! -e $D/ldconfig-ran && -z $out ]]'
out=$(ldc install "$system_dir")
if [[ $(id -u) == 0 ]]; then
	check "make install as root to $system_dir, which ldconfig scans, runs ldconfig" \
		eval '[[ -e $D/ldconfig-ran && $out == ldconfig ]] || { echo "$out" >"$D/log"; false; }'
else
	check "make install as a user to $system_dir, which ldconfig scans, asks for ldconfig as root" \
		eval '[[ ! -e $D/ldconfig-ran && $out == *"run ldconfig as root"* ]]'
fi
out=$(ldc uninstall "$D/nowhere/lib")
check "make uninstall from a LIBDIR outside the linker's path runs no ldconfig" \
	eval '[[ ! -e $D/ldconfig-ran && -z $out ]]'

tap_end
