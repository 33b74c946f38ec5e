#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench: vanilla 6.12, the 2011 patch and the zerosleep series, in one run.
#
#   bench/bench.sh
#
# 1. Builds three kernels from one extracted tree, reusing objects:
#    - vanilla:   a git worktree of the "vanilla" commit of build/linux, in
#                 build/linux-bench, built into build/kernel-bench;
#    - seed:      the same worktree with bench/seed-2011.patch applied, in
#                 the same object directory, so that only hrtimer.c is
#                 compiled again; the patch is reverted afterwards;
#    - zerosleep: build/kernel, the patched kernel of "make kernel".
#    The bzImages are kept in build/bench with the hash of what they were
#    built from (the vanilla commit, the configuration fragment, the build
#    script and, for seed, the patch); a current one is not built again.
# 2. Boots each kernel in QEMU and runs bench/run-guest.sh, which runs the
#    same build/bench/zsbench in every guest; then boots vanilla and
#    zerosleep twice more for the sleeps that are compared across boots.
# 3. Merges the results into build/bench/results.csv, plots
#    build/bench/latency.png and prints a summary table and each target of
#    the benchmark with its measured value and PASS or FAIL.
#
# Exit status: 0 when every target passed, 1 when one failed, 2 on error.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

out=$top/build/bench
tree=$top/build/linux
wt=$top/build/linux-bench
kvan=$top/build/kernel-bench
frag=$top/qemu/kernel.config
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

command -v gnuplot > /dev/null || die "gnuplot is missing: run 'make deps' (Debian package gnuplot-nox)"
command -v python3 > /dev/null || die "python3 is missing: run 'make deps'"

# ---- build ----------------------------------------------------------------
t0=$(date +%s)
say "build: zsbench"
make -s -C bench O="$out"

say "build: zerosleep kernel (make kernel)"
make -s -C "$top" kernel

# The worktree of the vanilla commit; recreated when it is missing, broken
# (build/linux was extracted anew) or not at "vanilla".
vanilla=$(git -C "$tree" rev-parse --verify -q 'vanilla^{commit}') ||
	die "$tree has no 'vanilla' tag: run 'make tree'"

# What each comparison kernel is built from; a kernel whose bzImage in
# build/bench was made from the same inputs is not built again.
base_key=$( {
	echo "$vanilla"
	cat "$frag" scripts/build-kernel.sh
} | sha256sum | cut -d' ' -f1)
seed_key=$(cat <(echo "$base_key") "$patch" | sha256sum | cut -d' ' -f1)
current() { [ -s "$out/bzImage-$1" ] && [ "$(cat "$out/bzImage-$1.key" 2> /dev/null)" = "$2" ]; }

restore_vanilla() {
	# git leaves hrtimer.c with a new modification time: newer than the
	# seed's hrtimer.o, so the next vanilla build compiles it again.
	git -C "$wt" diff --quiet -- "$hfile" || git -C "$wt" checkout -q -- "$hfile"
}

if ! current vanilla "$base_key" || ! current seed "$seed_key"; then
	if [ "$(git -C "$wt" rev-parse --verify -q HEAD 2> /dev/null)" != "$vanilla" ]; then
		say "build: worktree $wt at vanilla"
		rm -rf "$wt"
		git -C "$tree" worktree prune
		git -C "$tree" worktree add -q --detach "$wt" "$vanilla"
	fi
	if ! git -C "$wt" diff --quiet HEAD; then
		# Left over from an interrupted run: only our patch is expected.
		if git -C "$wt" diff --quiet HEAD -- . ":(exclude)$hfile"; then
			say "build: reverting the seed patch left by an interrupted run"
			restore_vanilla
		else
			die "$wt has changes of unknown origin; remove it ('git -C $tree worktree remove --force $wt')"
		fi
	fi
fi

# vanilla, then seed, in the same object directory: the seed build
# compiles hrtimer.c and links.
if ! current vanilla "$base_key"; then
	say "build: vanilla kernel ($kvan)"
	scripts/build-kernel.sh "$wt" "$kvan" "$frag"
	cp "$kvan/arch/x86/boot/bzImage" "$out/bzImage-vanilla"
	echo "$base_key" > "$out/bzImage-vanilla.key"
fi
if ! current seed "$seed_key"; then
	say "build: seed kernel ($kvan with bench/seed-2011.patch)"
	trap 'restore_vanilla' EXIT
	trap 'restore_vanilla; exit 130' INT TERM
	git -C "$wt" apply "$patch"
	scripts/build-kernel.sh "$wt" "$kvan" "$frag"
	cp "$kvan/arch/x86/boot/bzImage" "$out/bzImage-seed"
	echo "$seed_key" > "$out/bzImage-seed.key"
	restore_vanilla
	trap - EXIT INT TERM
	git -C "$wt" diff --quiet HEAD || die "$wt is not back at vanilla"
fi
cmp -s build/kernel/arch/x86/boot/bzImage "$out/bzImage-zerosleep" ||
	cp build/kernel/arch/x86/boot/bzImage "$out/bzImage-zerosleep"
t_build=$(elapsed "$t0")
say "build: done in $t_build"

# ---- run ------------------------------------------------------------------
t0=$(date +%s)
if [ ! -e "$top/build/READY-guest" ]; then
	say "waiting for build/READY-guest"
	for _ in $(seq 1800); do
		[ -e "$top/build/READY-guest" ] && break
		sleep 1
	done
	[ -e "$top/build/READY-guest" ] || die "build/READY-guest did not appear within 30 minutes"
fi
# The full benchmark in one boot of each kernel, then the sleeps that do
# sleep again in two more boots of vanilla and zerosleep, in the reverse
# order and then the same: they are compared across boots, and one boot can
# be slowed down by the host.  The targets take the median over the boots.
runs=("vanilla" "seed" "zerosleep" "zerosleep.2:--sleeps-only" "vanilla.2:--sleeps-only"
	"vanilla.3:--sleeps-only" "zerosleep.3:--sleeps-only")
for r in "${runs[@]}"; do
	name=${r%%:*}
	opt=
	[ "$name" = "$r" ] || opt=${r#*:}
	k=${name%%.*}
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
	head -n 1 "$out/vanilla/bench-vanilla.csv"
	for r in "${runs[@]}"; do
		tail -n +2 "$out/${r%%:*}/bench-${r%%:*}.csv"
	done
} > "$out/results.csv"

rc=0
python3 bench/report.py "$out/results.csv" "$out" || rc=$?
[ "$rc" -le 1 ] || die "report.py failed"
gnuplot "$out/latency.gp" || die "gnuplot failed on $out/latency.gp"
[ -s "$out/latency.png" ] || die "gnuplot wrote no $out/latency.png"

loads=
for r in "${runs[@]}"; do
	loads+=" ${r%%:*} $(cat "$out/${r%%:*}/host-load"),"
done
say "host load before each boot (other runnable tasks, 2 CPUs):${loads%,}"
say "results: $out/results.csv"
say "plot:    $out/latency.png"
say "time: build $t_build, runs $t_run, total $(elapsed "$t_all")"
exit "$rc"
