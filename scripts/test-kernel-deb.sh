#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Tests of make kernel-deb (scripts/kernel-deb.sh), TAP on stdout, cheaply:
#
#   scripts/test-kernel-deb.sh [6.12|7.3]      (default 6.12)
#
# The package is built with the guest's configuration from a copy of the
# guest kernel's objdir (build/kernel, build/kernel-7.3), which make test
# has just built: bindeb-pkg then recompiles only the few files that the
# new kernel release (-zerosleep) and build version touch, and relinks.
# The copy, build/kernel-deb-test[-7.3] (beside the tree, as the guest's
# objdir: ccache gives the compiler paths relative to the objdir, which
# kbuild's dependency records keep), and the test's files,
# build/test-kernel-deb[-7.3], are removed when every check passed and
# left for inspection otherwise.  Checked: make kernel-deb
# succeeds and rebuilds only those files; the kernel release and the
# package carry the suffix; the package holds the image, System.map, the
# configuration, the modules directory and the maintainer scripts that
# run /etc/kernel's hooks (initramfs, update-grub); the source tree stays
# clean; and the image taken out of the package boots in the guest
# (qemu/run.sh), with the release in uname -r and the zero-sleep prctl
# working.
# Conditions are passed to check() in single quotes and evaluated there.
# shellcheck disable=SC2016,SC2034,SC2317
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
k=${1:-6.12}
case $k in
6.12) sfx= ;;
7.3) sfx=-7.3 ;;
*) echo "usage: $0 [6.12|7.3]" >&2; exit 2 ;;
esac
guest=$top/build/kernel$sfx
tree=$top/build/linux$sfx
O=$top/build/kernel-deb-test$sfx
D=$top/build/test-kernel-deb$sfx
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
		[[ -s $D/log ]] && sed 's/^/#   /' "$D/log" | head -n 40
	fi
	: >"$D/log"
}
finish() {
	echo "1..$n"
	if ((failed == 0)); then
		rm -rf "$D" "$O"
	else
		echo "# $failed failed: $D and $O are left for inspection"
	fi
	((failed == 0))
	exit
}

rm -rf "$D" "$O"
mkdir -p "$D"
: >"$D/log"
if [[ ! -f $guest/arch/x86/boot/bzImage || ! -f $guest/.config ]]; then
	echo "no guest kernel in $guest: make test (or make kernel KERNEL=$k) builds it" >"$D/log"
	check "the guest kernel $k is built, to seed the package's objdir" false
	finish
fi

# ---- build ------------------------------------------------------------

start=$SECONDS
# The objdir itself, not a link to it (build/kernel may be one).
cp -a --reflink=auto "$(realpath "$guest")" "$O"
# build-kernel.sh's stamp: kernel-deb.sh refuses a guest's objdir.
rm -f "$O/.zerosleep-stamp"
# objtool's build (tools/) records the objdir's absolute path: left as it
# is, objtool is rebuilt, and with it every object.  The records are
# moved to the copy, their times kept.
g=$(realpath "$guest")
grep -rlZ -F "$g/" --include='.*.cmd' --include='*.d' "$O/tools" 2>/dev/null |
	while IFS= read -r -d '' f; do
		t=$(stat -c %y "$f")
		sed -i "s|$g/|$O/|g" "$f"
		touch -d "$t" "$f"
	done
cp "$guest/.config" "$D/guest.config"
touch "$D/seeded"
echo "# seeding ${O#"$top"/} from ${guest#"$top"/} took $((SECONDS - start)) s ($(du -sh "$O" | cut -f1))"
tree_before=$(git -C "$tree" status --porcelain 2>&1)
kver=$(make -s --no-print-directory -C "$tree" kernelversion)

start=$SECONDS
make -s kernel-deb KERNEL="$k" KCONFIG="$D/guest.config" KDEB_DIR="$O" >"$D/make.log" 2>&1
rc=$?
took=$((SECONDS - start))
echo "# make kernel-deb KERNEL=$k KCONFIG=<the guest's> from the seeded objdir took $took s:"
sed 's/^/#   /' "$D/make.log"
tail -n 30 "$O/bindeb-pkg.log" >"$D/log" 2>/dev/null
check "make kernel-deb KERNEL=$k with the guest's configuration: exit 0" eval '[[ $rc == 0 ]]'
((rc == 0)) || finish

# Only what the release and version strings touch is compiled again: a
# few files, not a cold build (thousands of objects).
mapfile -t rebuilt < <(cd "$O" && find . -name '*.o' -newer "$D/seeded" ! -path './debian/*' | sort)
printf '%s\n' "${rebuilt[@]}" >"$D/log"
echo "# objects compiled again: ${#rebuilt[@]} (of $(find "$O" -name '*.o' ! -path '*/debian/*' | wc -l))"
check "bindeb-pkg reused the seeded objdir: ${#rebuilt[@]} objects compiled again (at most 60)" \
	eval '((${#rebuilt[@]} <= 60))'

release=$(cat "$O/include/config/kernel.release")
echo "$release" >"$D/log"
check "the kernel release is $kver-zerosleep ($release)" eval '[[ $release == "$kver-zerosleep" ]]'

git -C "$tree" status --porcelain >"$D/log" 2>&1
check "the source tree ${tree#"$top"/} is unchanged and clean (git status)" \
	eval '[[ $(cat "$D/log") == "$tree_before" && -z $tree_before ]]'

# ---- the package ------------------------------------------------------

shopt -s nullglob
debs=("$O"/packages/linux-image-"$release"_*.deb)
shopt -u nullglob
ls -l "$O"/packages >"$D/log" 2>&1
check "it built one linux-image-$release package" eval '((${#debs[@]} == 1))'
((${#debs[@]} == 1)) || finish
deb=${debs[0]}
for f in "$O"/packages/*.deb; do echo "# ${f#"$O"/}: $(du -h "$f" | cut -f1)"; done

pkg=$(dpkg-deb -f "$deb" Package)
ver=$(dpkg-deb -f "$deb" Version)
echo "# package $pkg, version $ver"
check "its name carries the suffix: $pkg" eval '[[ $pkg == "linux-image-$kver-zerosleep" ]]'
check "its version carries the suffix: $ver" eval '[[ $ver =~ ^${kver//./\\.}-zerosleep[0-9]+$ ]]'

dpkg-deb -c "$deb" | awk '{ print $6 }' | sed 's|^\./|/|' >"$D/contents"
has() {
	local f
	for f; do
		grep -qx -- "$f" "$D/contents" || { echo "the package lacks $f" >>"$D/log"; return 1; }
	done
}
check "it holds /boot/vmlinuz-$release, System.map-$release and config-$release" \
	has "/boot/vmlinuz-$release" "/boot/System.map-$release" "/boot/config-$release"
# The guest's configuration has no modules: the directory holds only
# modules_install's indexes of the built-in drivers.
mods=$(grep "^/lib/modules/$release/" "$D/contents" | tr '\n' ' ')
echo "# /lib/modules/$release/ holds: ${mods:-nothing}"
check "it holds the modules directory /lib/modules/$release/ (modules.builtin)" \
	has "/lib/modules/$release/" "/lib/modules/$release/modules.builtin"
dpkg-deb -I "$deb" postinst >"$D/postinst" 2>&1
cp "$D/postinst" "$D/log"
check "its postinst runs /etc/kernel/postinst.d's hooks (initramfs, update-grub) for $release" \
	eval 'grep -q "postinst.d" "$D/postinst" && grep -q -- "$release" "$D/postinst"'

dpkg-deb -x "$deb" "$D/root"
img=$D/root/boot/vmlinuz-$release
check "its vmlinuz is the image that bindeb-pkg built" \
	cmp "$img" "$O/arch/x86/boot/bzImage"
# The setup header's kernel_version field: a pointer, less 0x200, at 0x20e.
off=$(od -An -tu2 -j $((0x20e)) -N2 "$img" | tr -d ' ')
banner=$(dd if="$img" bs=1 skip=$((off + 0x200)) count=200 2>/dev/null | tr '\0' '\n' | head -n 1)
echo "# the image says: $banner"
echo "$banner" >"$D/log"
check "the image's version string names $release and build version ${ver##*-}" \
	eval '[[ $banner == "$release ("*"#${ver##*-} "* ]]'
diff <(grep '^CONFIG_' "$D/guest.config") <(grep '^CONFIG_' "$D/root/boot/config-$release") >"$D/log"
check "its configuration is the guest's" eval '[[ ! -s $D/log ]]'

# ---- boot it ----------------------------------------------------------

cat >"$D/prctl.c" <<'END'
#include <stdio.h>
#include <sys/prctl.h>
#include "linux/prctl.h"

int main(void)
{
	int before = prctl(PR_GET_TIMERSLACK_ZERO_POLICY, 0, 0, 0, 0);
	int set = prctl(PR_SET_TIMERSLACK_ZERO_POLICY, PR_TIMERSLACK_ZERO_RETURN, 0, 0, 0);
	int after = prctl(PR_GET_TIMERSLACK_ZERO_POLICY, 0, 0, 0, 0);

	printf("prctl: get %d, set return %d, get %d\n", before, set, after);
	return !(before == PR_TIMERSLACK_ZERO_DEFAULT && set == 0 && after == PR_TIMERSLACK_ZERO_RETURN);
}
END
cc -O2 -Wall -I"$top/uapi" -o "$D/prctl" "$D/prctl.c" >"$D/log" 2>&1
check "the prctl probe builds against uapi/" eval '[[ -x $D/prctl ]]'

start=$SECONDS
qemu/run.sh -k "$img" -t 300 -o "$D/guest" -- \
	"uname -r; cat /proc/self/timerslack_zero_policy; $D/prctl" >"$D/boot.log" 2>&1
brc=$?
echo "# booting the packaged image in the guest took $((SECONDS - start)) s, exit $brc:"
sed 's/^/#   /' "$D/boot.log"
cp "$D/boot.log" "$D/log"
check "the packaged image boots in the guest, runs the probe and shuts down (exit 0)" eval '[[ $brc == 0 ]]'
check "in the guest, uname -r is $release" eval '[[ $(sed -n 1p "$D/boot.log") == "$release" ]]'
check "in the guest, /proc/self/timerslack_zero_policy reads 0" eval '[[ $(sed -n 2p "$D/boot.log") == 0 ]]'
check "in the guest, PR_GET/PR_SET_TIMERSLACK_ZERO_POLICY work (get 0, set return, get 1)" \
	eval 'grep -qx "prctl: get 0, set return 0, get 1" "$D/boot.log"'
finish
