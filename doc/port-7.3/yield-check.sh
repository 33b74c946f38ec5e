#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# In a guest: zero-length sleeps on CPU 0 while a busy loop also runs there,
# under each policy (PROBE POLICY...).  A sleep that yields shows up as an
# involuntary context switch (the task stays runnable), one that sleeps as
# a voluntary one.
probe=$1
shift
taskset -c 0 sh -c 'while :; do :; done' &
hog=$!
sleep 0.2
for p in "$@"; do
	taskset -c 0 "$probe" 50000 "$p" 200
done
kill "$hog"
