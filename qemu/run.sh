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
# Environment: ZEROSLEEP_APPEND adds words to the kernel command line;
# ZEROSLEEP_BOOT_TIMEOUT (300) bounds the time to reach the guest's init
# script; ZEROSLEEP_TIMEOUT (600) is the default for -t.
#
# TCG is the default accelerator.  ZEROSLEEP_ACCEL=kvm opts into KVM, which
# hangs on nested machines.
set -u

here=$(cd "$(dirname "$0")" && pwd)
kernel=${ZEROSLEEP_KERNEL:-$here/../build/kernel/arch/x86/boot/bzImage}
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

# Under TCG the guest's TSC is the host's.  The machine has no HPET and
# no ACPI PM timer: on a loaded host the TSC's calibration against the
# PIT fails ("Fast TSC calibration failed"), and the clocksource watchdog,
# which then has only jiffies to compare with, finds lost ticks and marks
# the TSC unstable ("skewed 200149603 ns over watchdog 'refined-jiffies'").
# Either leaves the guest on jiffies, without high-resolution timers.  So
# the guest is given the host's TSC frequency (tsc_early_khz) and told
# that its TSC is reliable, as a virtual machine's is (tsc=reliable).
tsc=
case ${ZEROSLEEP_ACCEL:-tcg} in
kvm) accel=(-accel kvm -cpu host) ;;
tcg)
	accel=(-accel tcg,thread=multi -cpu max)
	khz=$(awk -F: '/^cpu MHz/ { printf "%d", $2 * 1000; exit }' /proc/cpuinfo 2> /dev/null)
	tsc=tsc=reliable
	[ -n "$khz" ] && [ "$khz" -gt 0 ] && tsc+=" tsc_early_khz=$khz"
	;;
*) echo "$0: ZEROSLEEP_ACCEL must be tcg or kvm" >&2; exit 125 ;;
esac

# The machine is QEMU's "microvm": no PCI, no ACPI, no firmware beyond
# qboot, so the guest kernel needs neither (qemu/kernel.config).  Its
# devices are virtio-mmio, announced on the kernel command line by QEMU
# itself; the CPUs come from an MP table.  It has one serial port: the
# kernel console, kept in CONSOLE_LOG.  COMMAND's output comes through a
# virtio console (hvc0 in the guest).
#
# The kernel command line: ZEROSLEEP_APPEND adds more words, from the
# caller.  reboot=t: the guest's reboot is a triple fault, which ends
# QEMU (-no-reboot); microvm has no reset register or keyboard controller.
cmdline="console=ttyS0 loglevel=6 reboot=t $tsc ${ZEROSLEEP_APPEND:-}"
cmdline+=" root=hostroot rootfstype=9p rootflags=trans=virtio,version=9p2000.L,msize=512000,cache=loose ro"
cmdline+=" init=$here/guest-init.sh panic=-1 oops=panic sysrq_always_enabled"

shares=()
share() {
	# share TAG PATH [ro]: a 9p export on virtio-mmio.
	shares+=(-fsdev "local,id=$1,path=$2,security_model=none,multidevs=remap${3:+,readonly=on}"
		-device "virtio-9p-device,fsdev=$1,mount_tag=$1")
}
share hostroot / ro
share hostout "$out"
share hostrepo "$top" ro

: > "$console"
timeout -k 10 "$timeout" qemu-system-x86_64 \
	-M microvm,acpi=off,rtc=on,isa-serial=on \
	-nodefaults -no-user-config -nographic -no-reboot \
	"${accel[@]}" -smp 2 -m 2G \
	-kernel "$kernel" \
	-append "$cmdline" \
	"${shares[@]}" \
	-serial "file:$console" \
	-device virtio-serial-device -chardev stdio,id=result -device virtconsole,chardev=result \
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
