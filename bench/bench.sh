#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench: vanilla Linux 6.12 and 7.3, each with and without the
# zerosleep series, and 6.12 with the 2011 patch, in one run.
#
#   bench/bench.sh [--build-only]
#
# 1. Makes sure that the two patched kernels are current ("make kernel
#    KERNEL=6.12" and "KERNEL=7.3": stamp-based, at once when nothing
#    changed), then builds the comparison kernels from the same trees:
#    - vanilla-6.12: a git worktree of the "vanilla" tag of build/linux, in
#                    build/linux-bench, built into build/kernel-bench;
#    - seed-6.12:    the same worktree with bench/seed-2011.patch applied,
#                    in the same object directory, so that only hrtimer.c
#                    is compiled again; the patch is reverted afterwards;
#    - vanilla-7.3:  a git worktree of the "vanilla" tag of build/linux-7.3,
#                    in build/linux-7.3-bench, built into
#                    build/kernel-7.3-bench.
#    All three use qemu/kernel.config and the version's kernel-X.Y.config,
#    as the patched kernels do.  Their
#    bzImages are kept in build/bench with the hash of what they were built
#    from (the vanilla commit, the configuration fragment, the build script
#    and, for seed, the patch); a current one is not built again.
#    With --build-only, it stops there.
# 2. Boots each of the five kernels in QEMU and runs bench/run-guest.sh,
#    which runs the same build/bench/zsbench in every guest; then boots the
#    four vanilla and zerosleep kernels twice more for the sleeps that are
#    compared across boots.
# 3. Merges the results into build/bench/results.csv, plots
#    build/bench/latency.png and prints the tables (also written to
#    build/bench/summary.md) and each target of the benchmark with its
#    measured value and PASS or FAIL.
#
# Environment: ZEROSLEEP_BENCH_PREBUILT=1 takes the patched kernels in
# build/kernel and build/kernel-7.3 as they are, without "make kernel",
# for a checkout whose build/ links to kernels built elsewhere.
#
# Exit status: 0 when every target passed, 1 when one failed, 2 on error.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

build_only=
case ${1:-} in
'') ;;
--build-only) build_only=1 ;;
-h|--help) sed -n '4,38p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
*) echo "bench.sh: unknown argument '$1'" >&2; exit 2 ;;
esac

out=$top/build/bench
# The comparison kernels are configured as the patched ones: the guest's
# fragment and the version's preemption model.
frags_of() { echo "$top/qemu/kernel.config $top/qemu/kernel-$1.config"; }
patch=$top/bench/seed-2011.patch
hfile=kernel/time/hrtimer.c

t_all=$(date +%s)
say() { printf '==== %s\n' "$*"; }
die() { printf 'bench.sh: %s\n' "$*" >&2; exit 2; }
elapsed() { echo "$(( $(date +%s) - $1 ))s"; }
# Other runnable tasks on the host, mean over a second: the guest's virtual
# CPUs share the host, and its load shows in every number.
host_load() {
	local sum=0 n
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		n=$(awk '/^procs_running/ { print $2 }' /proc/stat)
		sum=$(( sum + n - 1 ))
		sleep 0.1
	done
	printf '%d.%d\n' $(( sum / 10 )) $(( sum % 10 ))
}

mkdir -p "$out"
exec 9> "$out/.lock"
flock -n 9 || die "another bench.sh is running (lock $out/.lock)"

if [ -z "$build_only" ]; then
	command -v gnuplot > /dev/null || die "gnuplot is missing: run 'make deps' (Debian package gnuplot-nox)"
	command -v python3 > /dev/null || die "python3 is missing: run 'make deps'"
fi

# ---- build ----------------------------------------------------------------
t0=$(date +%s)
say "build: zsbench"
make -s -C bench O="$out"

# The patched kernels, one per tree: KERNEL, tree, object directory.
patched=("6.12 build/linux build/kernel" "7.3 build/linux-7.3 build/kernel-7.3")
for p in "${patched[@]}"; do
	read -r v tree obj <<< "$p"
	if [ -n "${ZEROSLEEP_BENCH_PREBUILT:-}" ]; then
		say "build: zerosleep $v kernel: prebuilt $obj (ZEROSLEEP_BENCH_PREBUILT)"
	else
		say "build: zerosleep $v kernel (make kernel KERNEL=$v)"
		make -s -C "$top" kernel KERNEL="$v"
	fi
	[ -s "$obj/arch/x86/boot/bzImage" ] || die "no $obj/arch/x86/boot/bzImage"
	cmp -s "$obj/arch/x86/boot/bzImage" "$out/bzImage-zerosleep-$v" ||
		cp "$obj/arch/x86/boot/bzImage" "$out/bzImage-zerosleep-$v"
done

# What a comparison kernel is built from; one whose bzImage in build/bench
# was made from the same inputs is not built again.
# key_of X.Y COMMIT [PATCH]
key_of() {
	{
		echo "$2"
		# shellcheck disable=SC2046
		cat $(frags_of "$1") scripts/build-kernel.sh
		[ $# -lt 3 ] || cat "$3"
	} | sha256sum | cut -d' ' -f1
}
current() { [ -s "$out/bzImage-$1" ] && [ "$(cat "$out/bzImage-$1.key" 2> /dev/null)" = "$2" ]; }

# git leaves hrtimer.c with a new modification time: newer than the seed's
# hrtimer.o, so the next vanilla build compiles it again.
restore_vanilla() {
	git -C "$1" diff --quiet -- "$hfile" || git -C "$1" checkout -q -- "$hfile"
}

# A worktree of TREE's "vanilla" commit at WT: recreated when it is missing,
# broken (TREE was extracted anew) or not at "vanilla"; a seed patch left
# by an interrupted run is reverted.
vanilla_worktree() {
	local tree=$1 wt=$2 commit=$3
	if [ "$(git -C "$wt" rev-parse --verify -q HEAD 2> /dev/null)" != "$commit" ]; then
		say "build: worktree $wt at vanilla"
		rm -rf "$wt"
		git -C "$tree" worktree prune
		git -C "$tree" worktree add -q --detach "$wt" "$commit"
	fi
	if ! git -C "$wt" diff --quiet HEAD; then
		if git -C "$wt" diff --quiet HEAD -- . ":(exclude)$hfile"; then
			say "build: reverting the seed patch left by an interrupted run"
			restore_vanilla "$wt"
		else
			die "$wt has changes of unknown origin; remove it ('git -C $tree worktree remove --force $wt')"
		fi
	fi
}

# Build one comparison kernel: NAME KEY WT OBJDIR X.Y.
build_one() {
	local name=$1 key=$2 wt=$3 obj=$4
	say "build: $name kernel ($obj)"
	# shellcheck disable=SC2046
	nice -n 10 scripts/build-kernel.sh "$wt" "$obj" $(frags_of "$5")
	cp "$obj/arch/x86/boot/bzImage" "$out/bzImage-$name"
	echo "$key" > "$out/bzImage-$name.key"
}

# 6.12: vanilla, then seed, in the same object directory: the seed build
# compiles hrtimer.c and links.
vanilla=$(git -C build/linux rev-parse --verify -q 'vanilla^{commit}') ||
	die "build/linux has no 'vanilla' tag: run 'make tree KERNEL=6.12'"
wt=$top/build/linux-bench
kvan=$top/build/kernel-bench
base_key=$(key_of 6.12 "$vanilla")
seed_key=$(key_of 6.12 "$vanilla" "$patch")
if ! current vanilla-6.12 "$base_key" || ! current seed-6.12 "$seed_key"; then
	vanilla_worktree build/linux "$wt" "$vanilla"
fi
current vanilla-6.12 "$base_key" || build_one vanilla-6.12 "$base_key" "$wt" "$kvan" 6.12
if ! current seed-6.12 "$seed_key"; then
	trap 'restore_vanilla "$wt"' EXIT
	trap 'restore_vanilla "$wt"; exit 130' INT TERM
	git -C "$wt" apply "$patch"
	build_one seed-6.12 "$seed_key" "$wt" "$kvan" 6.12
	restore_vanilla "$wt"
	trap - EXIT INT TERM
	git -C "$wt" diff --quiet HEAD || die "$wt is not back at vanilla"
fi

# 7.3: vanilla.
vanilla=$(git -C build/linux-7.3 rev-parse --verify -q 'vanilla^{commit}') ||
	die "build/linux-7.3 has no 'vanilla' tag: run 'make tree KERNEL=7.3'"
key=$(key_of 7.3 "$vanilla")
if ! current vanilla-7.3 "$key"; then
	vanilla_worktree build/linux-7.3 "$top/build/linux-7.3-bench" "$vanilla"
	build_one vanilla-7.3 "$key" "$top/build/linux-7.3-bench" "$top/build/kernel-7.3-bench" 7.3
fi
t_build=$(elapsed "$t0")
say "build: done in $t_build"
[ -z "$build_only" ] || exit 0

# ---- run ------------------------------------------------------------------
t0=$(date +%s)
# The full benchmark in one boot of each kernel, then the sleeps that do
# sleep again in two more boots of the vanilla and zerosleep kernels, in
# the reverse order and then the same: they are compared across boots, and
# one boot can be slowed down by the host.  The targets take the median
# over the boots.  Each entry: kernel, boot, options; the results of boot N
# > 1 are named KERNEL.N.
runs=(
	"vanilla-6.12 1" "seed-6.12 1" "zerosleep-6.12 1" "vanilla-7.3 1" "zerosleep-7.3 1"
	"zerosleep-7.3 2 --sleeps-only" "vanilla-7.3 2 --sleeps-only"
	"zerosleep-6.12 2 --sleeps-only" "vanilla-6.12 2 --sleeps-only"
	"vanilla-6.12 3 --sleeps-only" "zerosleep-6.12 3 --sleeps-only"
	"vanilla-7.3 3 --sleeps-only" "zerosleep-7.3 3 --sleeps-only"
)
names=()
for r in "${runs[@]}"; do
	read -r k boot opt <<< "$r"
	name=$k
	[ "$boot" = 1 ] || name=$k.$boot
	names+=("$name")
	t1=$(date +%s)
	rm -rf "${out:?}/$name"
	mkdir -p "$out/$name"
	host_load > "$out/$name/host-load"
	say "run: $name ${opt:+($opt) }(host: $(cat "$out/$name/host-load") other runnable tasks)"
	rc=0
	qemu/run.sh -t 600 -k "$out/bzImage-$k" -o "$out/$name" -- \
		"bench/run-guest.sh --kernel $name $opt" || rc=$?
	[ "$rc" -eq 0 ] || die "the benchmark failed in the $name guest (status $rc); see $out/$name/"
	[ -s "$out/$name/bench-$name.csv" ] || die "no results from the $name guest ($out/$name/bench-$name.csv)"
	say "run: $name done in $(elapsed "$t1")"
done
t_run=$(elapsed "$t0")

# ---- report ---------------------------------------------------------------
{
	head -n 1 "$out/${names[0]}/bench-${names[0]}.csv"
	for n in "${names[@]}"; do
		tail -n +2 "$out/$n/bench-$n.csv"
	done
} > "$out/results.csv"

rc=0
python3 bench/report.py "$out/results.csv" "$out" || rc=$?
[ "$rc" -le 1 ] || die "report.py failed"
gnuplot "$out/latency.gp" || die "gnuplot failed on $out/latency.gp"
[ -s "$out/latency.png" ] || die "gnuplot wrote no $out/latency.png"

loads=
for n in "${names[@]}"; do
	loads+=" $n $(cat "$out/$n/host-load"),"
done
say "host load before each boot (other runnable tasks, 2 CPUs):${loads%,}"
say "results: $out/results.csv"
say "plot:    $out/latency.png"
say "time: build $t_build, runs $t_run, total $(elapsed "$t_all")"
exit "$rc"
