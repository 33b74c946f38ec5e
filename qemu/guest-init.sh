#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# PID 1 of the zerosleep test guest.  The host's root filesystem is mounted
# read-only over 9p; this script gives it the usual virtual filesystems and
# tmpfs mounts for writing, runs the command that qemu/run.sh left in the
# shared output directory, records its exit status there and reboots (which
# ends QEMU, started with -no-reboot).
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root TERM=dumb LANG=C.UTF-8 LC_ALL=C.UTF-8

mount -n -t proc proc /proc
mount -n -t sysfs sysfs /sys
mountpoint -q /dev || mount -n -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts /dev/shm
ln -sfn /proc/self/fd /dev/fd
ln -sfn /proc/self/fd/0 /dev/stdin
ln -sfn /proc/self/fd/1 /dev/stdout
ln -sfn /proc/self/fd/2 /dev/stderr
mount -n -t devpts devpts /dev/pts
mount -n -t tmpfs tmpfs /dev/shm
for d in /tmp /run /var/tmp /root; do
	mount -n -t tmpfs -o mode=1777 tmpfs "$d"
done
chmod 700 /root

out=/run/zerosleep
mkdir -p "$out"
mount -n -t 9p -o trans=virtio,version=9p2000.L,msize=512000 hostout "$out"

# Command output goes to the second serial port, the kernel console stays
# on the first one; on arm64, whose machine has one UART, to the virtio
# console that qemu/run.sh names in ZEROSLEEP_TTY.
tty=/dev/${ZEROSLEEP_TTY:-ttyS1}
stty -F "$tty" raw -echo 2>/dev/null
# The repository is mounted again at its own path: it may lie under a
# directory that the tmpfs mounts above hide (a clone in /tmp, say).
top=$(cat "$out/top")
if [ ! -d "$top/qemu" ]; then
	mkdir -p "$top"
	mount -n -t 9p -o trans=virtio,version=9p2000.L,msize=512000,ro hostrepo "$top"
fi
cwd=$(cat "$out/cwd")
cd "$cwd" || cd /
echo "zerosleep-guest: $(uname -r), $(nproc) CPUs, running $out/cmd" > /dev/kmsg
bash "$out/cmd" < /dev/null > "$tty" 2>&1
rc=$?
echo "$rc" > "$out/exit-status"
echo "zerosleep-guest: command exited with status $rc" > /dev/kmsg
umount "$out"
echo b > /proc/sysrq-trigger
sleep 10
