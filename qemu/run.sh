#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Boot a kernel in QEMU and run one shell command in it.
#
#   qemu/run.sh [-k BZIMAGE] [-t SECONDS] [-o OUTDIR] [-c CONSOLE_LOG] -- COMMAND
#
# The guest sees the host's root filesystem read-only (9p), so host programs
# run there unchanged; OUTDIR is shared read-write and appears in the guest
# as $ZEROSLEEP_OUT (/run/zerosleep).  COMMAND's output is copied to stdout.
# The exit status is COMMAND's, or 125 when the guest misbehaved: a panic,
# an oops, a kernel warning, a hang (timeout) or no result at all.  Then the
# first report and the last 40 console lines are printed to stderr.
#
# ZEROSLEEP_ARCH=arm64 boots an arm64 kernel (an Image, make test-arm64's
# build/kernel-arm64) in qemu-system-aarch64's "virt" machine instead:
# there the root filesystem is build/arm64/rootfs (Debian's arm64
# userland, scripts/arm64-fetch.sh), the repository is mounted at its own
# path, and command output goes to a virtio console.
#
# Environment: ZEROSLEEP_APPEND adds words to the kernel command line;
# ZEROSLEEP_BOOT_TIMEOUT (300) bounds the time to reach the guest's init
# script; ZEROSLEEP_TIMEOUT (600) is the default for -t.
#
# TCG is the default accelerator.  ZEROSLEEP_ACCEL=kvm opts into KVM, which
# hangs on nested machines.
set -u

here=$(cd "$(dirname "$0")" && pwd)
arch=${ZEROSLEEP_ARCH:-x86_64}
case $arch in
x86_64) kernel=${ZEROSLEEP_KERNEL:-$here/../build/kernel/arch/x86/boot/bzImage} ;;
arm64) kernel=${ZEROSLEEP_KERNEL:-$here/../build/kernel-arm64/arch/arm64/boot/Image} ;;
*) echo "$0: ZEROSLEEP_ARCH must be x86_64 or arm64" >&2; exit 125 ;;
esac
timeout=${ZEROSLEEP_TIMEOUT:-600}
out=
console=
while getopts "k:t:o:c:" opt; do
	case $opt in
	k) kernel=$OPTARG ;;
	t) timeout=$OPTARG ;;
	o) out=$OPTARG ;;
	c) console=$OPTARG ;;
	*) echo "usage: $0 [-k BZIMAGE] [-t SECONDS] [-o OUTDIR] [-c LOG] -- COMMAND" >&2; exit 125 ;;
	esac
done
shift $((OPTIND - 1))
[ "${1:-}" = "--" ] && shift
if [ $# -eq 0 ]; then
	echo "$0: no command" >&2
	exit 125
fi
if [ ! -r "$kernel" ]; then
	echo "$0: no kernel at $kernel (run 'make kernel')" >&2
	exit 125
fi

cleanup_out=
if [ -z "$out" ]; then
	mkdir -p "$here/../build/run"
	out=$(mktemp -d "$here/../build/run/XXXXXX")
	cleanup_out=$out
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)
rm -f "$out/exit-status"
[ -n "$console" ] || console=$out/console.log
printf 'export ZEROSLEEP_OUT=/run/zerosleep\n%s\n' "$*" > "$out/cmd"
pwd > "$out/cwd"
top=$(cd "$here/.." && pwd)
echo "$top" > "$out/top"

case ${ZEROSLEEP_ACCEL:-tcg} in
kvm) accel=(-accel kvm -cpu host) ;;
tcg) accel=(-accel tcg,thread=multi -cpu max) ;;
*) echo "$0: ZEROSLEEP_ACCEL must be tcg or kvm" >&2; exit 125 ;;
esac
[ "$arch" = arm64 ] && [ "${ZEROSLEEP_ACCEL:-tcg}" = kvm ] && { echo "$0: no KVM for an arm64 guest on this host" >&2; exit 125; }

# The kernel command line (x86; arm64 below):
#  - acpi=noirq: PCI interrupts are routed from the BIOS's $PIR table, not
#    by running the DSDT's _PRT method.  On a debug kernel (KASAN, lockdep)
#    under TCG on a loaded host, ACPICA's interpreter ran into its 30 s
#    loop limit there, the virtio devices got no interrupt and the guest
#    never mounted its root.  It costs nothing on the other kernels.
#  - no_timer_check: the boot-time check that the 8254 timer interrupt
#    arrives through the IO-APIC waits a fixed number of loops for ticks;
#    a TCG guest that the loaded host does not run for that long fails it
#    and panics ("IO-APIC + timer doesn't work!"), seen once in a CI run
#    of the low-resolution boot.  The check is about the board's wiring,
#    which QEMU gets right; the tests never depend on it.
#  - ZEROSLEEP_APPEND: more words, from the caller.
#
# On arm64 ("virt" has one UART): the console on the PL011, the command's
# output on a virtio console (ZEROSLEEP_TTY, which the kernel hands to
# guest-init.sh as an environment variable); the root is the arm64
# userland, which holds a copy of guest-init.sh (the repository is only
# mounted once it runs) and a directory at the repository's own path.
if [ "$arch" = arm64 ]; then
	rootfs=${ZEROSLEEP_ROOTFS:-$top/build/arm64/rootfs}
	if [ ! -x "$rootfs/bin/bash" ]; then
		echo "$0: no arm64 root filesystem at $rootfs (run scripts/arm64-fetch.sh build/arm64)" >&2
		exit 125
	fi
	install -m 0755 "$here/guest-init.sh" "$rootfs/sbin/zerosleep-guest-init"
	mkdir -p "$rootfs$top"
	cmdline="console=ttyAMA0 loglevel=6 ZEROSLEEP_TTY=hvc0 ${ZEROSLEEP_APPEND:-}"
	init=/sbin/zerosleep-guest-init
	qemu=(qemu-system-aarch64 -M virt "${accel[@]}"
		-device virtio-serial-pci -chardev stdio,id=out -device virtconsole,chardev=out
		-serial "file:$console")
else
	rootfs=/
	cmdline="console=ttyS0 loglevel=6 acpi=noirq no_timer_check ${ZEROSLEEP_APPEND:-}"
	init=$here/guest-init.sh
	qemu=(qemu-system-x86_64 "${accel[@]}" -serial "file:$console" -serial stdio)
fi
cmdline+=" root=hostroot rootfstype=9p rootflags=trans=virtio,version=9p2000.L,msize=512000,cache=loose ro"
cmdline+=" init=$init panic=-1 oops=panic sysrq_always_enabled"

: > "$console"
timeout -k 10 "$timeout" "${qemu[@]}" \
	-nodefaults -no-user-config -nographic -no-reboot \
	-smp 2 -m 2G \
	-kernel "$kernel" \
	-append "$cmdline" \
	-virtfs "local,path=$rootfs,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap" \
	-virtfs "local,path=$out,mount_tag=hostout,security_model=none,multidevs=remap" \
	-virtfs "local,path=$top,mount_tag=hostrepo,security_model=none,readonly=on,multidevs=remap" \
	< /dev/null &
qpid=$!

# A guest that does not reach its init script within the boot limit is
# stopped at once, instead of at the end of the whole run's timeout.
boot_limit=${ZEROSLEEP_BOOT_TIMEOUT:-300}
booted_line='zerosleep-guest: .* running'	# from guest-init.sh
booted=0
waited=0
while kill -0 "$qpid" 2>/dev/null; do
	if grep -q "$booted_line" "$console" 2>/dev/null; then
		booted=1
		break
	fi
	if [ "$waited" -ge "$boot_limit" ]; then
		kill -TERM "$qpid" 2>/dev/null
		break
	fi
	sleep 1
	waited=$((waited + 1))
done
wait "$qpid"
qrc=$?
grep -q "$booted_line" "$console" 2>/dev/null && booted=1

pattern='Kernel panic|BUG:|Oops|WARNING:|KASAN|UBSAN|possible circular locking|inconsistent lock state|lockdep|Call Trace|ACPI Error'
bad=$(grep -E -m1 "$pattern" "$console" 2>/dev/null | tr -d '\r')
if [ "$booted" -eq 0 ]; then
	why="did not reach its init script within ${boot_limit}s (QEMU exited with $qrc)"
elif [ $qrc -eq 124 ] || [ $qrc -eq 137 ]; then
	why="timed out after ${timeout}s"
elif [ -n "$bad" ]; then
	why="kernel reported: $bad"
elif [ ! -s "$out/exit-status" ]; then
	why="no exit status (QEMU exited with $qrc)"
else
	why=
fi
if [ -n "$why" ]; then
	{
		echo "qemu/run.sh: guest misbehaved: $why"
		if [ -n "$bad" ]; then
			echo "---- first report on the console ----"
			grep -E -m1 -A 30 "$pattern" "$console" | tr -d '\r'
		fi
		echo "---- last 40 console lines ($console) ----"
		tail -n 40 "$console" | tr -d '\r'
		echo "---- qemu/run.sh: guest misbehaved: $why"
	} >&2
	rc=125
else
	rc=$(cat "$out/exit-status")
fi
[ -n "$cleanup_out" ] && rm -rf "$cleanup_out"
exit "$rc"
