#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Series hygiene, as TAP:
#  - every prefix of the series compiles: the objects of every C file that
#    the series touches, built incrementally, patch after patch;
#  - the final series compiles with CONFIG_HIGH_RES_TIMERS=n, with
#    CONFIG_SMP=n, with CONFIG_POSIX_TIMERS=n and with CONFIG_PREEMPT_RT=y
#    (with no new W=1 warning there);
#  - W=1 and sparse (C=1) report nothing in those files that they do not
#    report on vanilla (for sparse, a warning located in a kernel header
#    that vanilla's kernel/signal.o gets too is the header's, not new).
#
#   scripts/hygiene.sh TREE SERIES_DIR
#
# The work happens in build/hygiene/ for the tree build/linux (and in
# build/hygiene-7.3/ for build/linux-7.3): a worktree of the tree, under
# the tree's own name, and one objdir per configuration beside it, so the
# main tree and kernel are not disturbed.  Seen from an objdir, the
# worktree is where the main kernel's tree is seen from its objdir
# (../linux): with ccache (scripts/ccache.sh), every compilation that is
# the same as one of the main kernel's, or of another objdir's (the host
# programs of scripts/ and objtool, most of all), is a cache hit.
set -u
. "$(dirname "$0")/ccache.sh"
tree=$(realpath "$1")
series=$(realpath "$2")
top=$(cd "$(dirname "$0")/.." && pwd)
sfx=$(basename "$tree")
sfx=${sfx#linux}
b=$top/build
hd=$b/hygiene$sfx
wt=$hd/linux$sfx
h=$hd/hygiene
# shellcheck source=scripts/tap.sh
. "$top/scripts/tap.sh"
ok() { tap_result 0 "$*"; }
notok() { tap_result 1 "$*"; }

if [ ! -d "$wt/.git" ] && [ ! -f "$wt/.git" ]; then
	mkdir -p "$hd"
	git -C "$tree" worktree prune
	git -C "$tree" worktree add -q --detach "$wt" vanilla || { echo "not ok 1 - worktree"; exit 1; }
fi
commits=($(git -C "$tree" rev-list --reverse vanilla..zerosleep))

# The objects that the C files touched by the series end up in.
objs=()
for f in $(git -C "$tree" diff --name-only vanilla zerosleep -- '*.c' ':(exclude)tools'); do
	case $f in
	kernel/sched/syscalls.c) o=kernel/sched/build_policy.o ;;
	*) o=${f%.c}.o ;;
	esac
	objs+=("$o")
done

# checkout COMMIT: move the worktree, keeping the mtimes of unchanged files.
checkout() { git -C "$wt" checkout -q --detach "$1"; }

# configure OBJDIR FRAGMENT...: tinyconfig + fragments, again only when
# the fragments changed.
configure() {
	local obj=$1 key
	shift
	mkdir -p "$obj"
	key=$(cat "$@" | sha256sum | cut -d' ' -f1)
	if [ "$(cat "$obj/.hygiene-configured" 2>/dev/null)" != "$key" ]; then
		make -s -C "$wt" O="$obj" tinyconfig > /dev/null &&
		"$wt/scripts/kconfig/merge_config.sh" -m -O "$obj" "$obj/.config" "$@" > /dev/null &&
		make -s -C "$wt" O="$obj" olddefconfig &&
		echo "$key" > "$obj/.hygiene-configured"
	fi
}

# compile OBJDIR LOG [MAKE ARGS]: build the touched objects, warnings to LOG.
compile() {
	local obj=$1 log=$2
	shift 2
	make -s -C "$wt" O="$obj" -j"$(( $(nproc) + 1 ))" "$@" "${objs[@]}" > "$log" 2>&1
}

warnings() { grep -E 'warning:|error:' "$1" | sed -E "s|$wt/||; s|:[0-9]+:[0-9]+:|:|" | sort; }

main=$hd/main
checkout vanilla
# The guest's configuration of this version (qemu/kernel-X.Y.config: its
# preemption model).
vfrag=$top/qemu/kernel-${sfx#-}.config
[ -n "$sfx" ] || vfrag=$top/qemu/kernel-6.12.config
configure "$main" "$top/qemu/kernel.config" "$vfrag" || { echo "not ok - configure"; exit 1; }
# Baseline: W=1 and sparse warnings of these files on vanilla.
compile "$main" "$h-w1-vanilla.log" W=1 || true
compile "$main" "$h-sparse-vanilla.log" C=2 || true
# sparse reports some warnings of a header at every caller of the header's
# inline helpers: unlock_task_sighand() in <linux/sched/signal.h>, which
# the series calls, dereferences task->sighand (__rcu) without
# rcu_dereference(), and vanilla's own callers get the same warning.  A
# warning located in a header that vanilla's kernel/signal.o, the main
# user of those helpers, also gets is not counted as new.
make -s -C "$wt" O="$main" C=2 kernel/signal.o > "$h-sparse-ref.log" 2>&1 || true

i=0
for c in "${commits[@]}"; do
	i=$((i + 1))
	subj=$(git -C "$tree" log -1 --format=%s "$c")
	checkout "$c"
	if compile "$main" "$h-prefix-$i.log" W=1; then
		ok "patches 1-$i compile (${objs[*]}): $subj"
	else
		notok "patches 1-$i compile: $subj"
		sed 's/^/#   /' "$h-prefix-$i.log" | head -n 30
	fi
done

# Other configurations of the final series, built beside the W=1 and
# sparse runs below (the worktree stays at the final commit meanwhile):
# much of a kbuild run is serial.  Without POSIX timers, nanosleep() and
# clock_nanosleep() come from posix-stubs.c, which calls
# hrtimer_nanosleep() too: compile it as well.  PREEMPT_RT (Debian's
# linux-image-rt-amd64) compiles what no other configuration does: the
# hard-interrupt mode of sleepers' timers, sleeping locks.  It must add no
# W=1 warning either.
cfgs=(HIGH_RES_TIMERS=n SMP=n POSIX_TIMERS=n PREEMPT_RT=y)
pids=()
for cfg in "${cfgs[@]}"; do
	(
		# No "=" in an objdir's name: 6.12's tools/objtool Makefile
		# cannot link libsubcmd from such a path.
		obj=$hd/cfg-${cfg/=/-}
		frag=$obj.config
		extra=()
		[ "$cfg" = POSIX_TIMERS=n ] && extra=(kernel/time/posix-stubs.o)
		printf 'CONFIG_%s\n' "$cfg" > "$frag"
		if [ "${cfg#*=}" = n ]; then
			configure "$obj" "$top/qemu/kernel.config" "$vfrag" "$frag" > "$h-cfg-${cfg/=/-}.log" 2>&1 &&
				! grep -q "^CONFIG_${cfg%=*}=" "$obj/.config" || exit 1
		else
			configure "$obj" "$top/qemu/kernel.config" "$frag" > "$h-cfg-${cfg/=/-}.log" 2>&1 &&
				grep -qx "CONFIG_$cfg" "$obj/.config" || exit 1
		fi
		compile "$obj" "$h-cfg-${cfg/=/-}.log" W=1 "${extra[@]}"
	) &
	pids+=($!)
done

# The final series: W=1 and sparse add nothing.
compile "$main" "$h-w1-final.log" W=1 || true
new=$(comm -13 <(warnings "$h-w1-vanilla.log") <(warnings "$h-w1-final.log"))
if [ -z "$new" ]; then ok "W=1: no new warnings in ${objs[*]}"; else notok "W=1: new warnings"; echo "$new" | sed 's/^/#   /'; fi
compile "$main" "$h-sparse-final.log" C=2 || true
if ! grep -q "CHECK" "$h-sparse-final.log" && ! command -v sparse > /dev/null; then
	notok "sparse is not installed"
else
	new=$(comm -13 <({ warnings "$h-sparse-vanilla.log"; warnings "$h-sparse-ref.log" | grep '^include/'; } | sort -u) \
		<(warnings "$h-sparse-final.log" | sort -u))
	if [ -z "$new" ]; then ok "sparse (C=2): no new warnings in ${objs[*]}"; else notok "sparse: new warnings"; echo "$new" | sed 's/^/#   /'; fi
fi

for i in "${!cfgs[@]}"; do
	cfg=${cfgs[$i]}
	extra=
	[ "$cfg" = POSIX_TIMERS=n ] && extra=kernel/time/posix-stubs.o
	if ! wait "${pids[$i]}"; then
		notok "CONFIG_$cfg: compile"
		sed 's/^/#   /' "$h-cfg-${cfg/=/-}.log" 2>/dev/null | head -n 30
		continue
	fi
	ok "CONFIG_$cfg: ${objs[*]}${extra:+ $extra} compile"
	[ "$cfg" = PREEMPT_RT=y ] || continue
	new=$(comm -13 <(warnings "$h-w1-vanilla.log") <(warnings "$h-cfg-${cfg/=/-}.log"))
	if [ -z "$new" ]; then ok "CONFIG_$cfg: no new W=1 warnings"; else notok "CONFIG_$cfg: new W=1 warnings"; echo "$new" | sed 's/^/#   /'; fi
done
checkout vanilla
tap_end
