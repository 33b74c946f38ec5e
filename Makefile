# SPDX-License-Identifier: GPL-2.0
#
# zerosleep: per-thread policy for zero-length sleeps.
#
#   make demo       boot the patched kernel and show the three policies
#   make test       build everything and run every test (host and guest)
#   make test-debug the guest tests again, on a KASAN/UBSAN/lockdep kernel
#   make run CMD=.. run a command in the guest, exit with its status
#   make series     regenerate series/ from the kernel tree in build/linux
#   make bench      benchmark vanilla, the 2011 patch and zerosleep
#   make strace     build strace with strace/series and run its new tests
#
# All build output lives under build/ (git-ignored).

SHELL    := /bin/bash
TOP      := $(CURDIR)
BUILD    := $(TOP)/build
TREE     := $(BUILD)/linux
KOBJ     := $(BUILD)/kernel
BZIMAGE  := $(KOBJ)/arch/x86/boot/bzImage
KHDR     := $(KOBJ)/usr/include
KSFT_OUT := $(BUILD)/selftests
CC       ?= cc

.PHONY: all deps tree kernel headers selftests lib demo-progs demo run test test-debug bench hardening \
	series check-series check-uapi uapi checkpatch install clean distclean help strace

all: kernel selftests lib demo-progs

help:
	@sed -n '3,15p' Makefile | sed 's/^# \{0,1\}//'

deps:
	@scripts/deps.sh

tree: deps
	@scripts/tree.sh $(TREE) series

kernel: tree
	@scripts/build-kernel.sh $(TREE) $(KOBJ) qemu/kernel.config

headers: kernel

# The selftests are copied into the tree, where they build with lib.mk as
# they would upstream; "make series" turns the copy into the last patch.
# The upstream prctl selftests that the guest kernel can run (see
# qemu/upstream-prctl.sh for the two left out).
UPSTREAM_PRCTL := disable-tsc-test disable-tsc-ctxt-sw-stress-test set-process-name

selftests: kernel
	@scripts/sync-selftests.sh $(TREE) selftests
	@mkdir -p $(KSFT_OUT)/timers
	@$(MAKE) -s -C $(TREE)/tools/testing/selftests/zerosleep \
		OUTPUT=$(KSFT_OUT) KHDR_INCLUDES="-isystem $(KHDR)" all
	@$(MAKE) -s -C $(TREE)/tools/testing/selftests/timers \
		OUTPUT=$(KSFT_OUT)/timers KHDR_INCLUDES="-isystem $(KHDR)" \
		$(KSFT_OUT)/timers/nanosleep $(KSFT_OUT)/timers/posix_timers
	@mkdir -p $(KSFT_OUT)/prctl
	@for t in $(UPSTREAM_PRCTL); do \
		$(CC) -O2 -isystem $(KHDR) -o $(KSFT_OUT)/prctl/$$t \
			$(TREE)/tools/testing/selftests/prctl/$$t.c || exit 1; \
	done

hardening: kernel
	@$(MAKE) -s -C hardening O=$(BUILD)/hardening

lib:
	@$(MAKE) -s -C libc-wrapper O=$(BUILD)/libc-wrapper all tests

demo-progs:
	@mkdir -p $(BUILD)/demo
	@$(CC) -std=c11 -Wall -Wextra -Werror -O2 -D_GNU_SOURCE -Iuapi \
		-o $(BUILD)/demo/sleep0-rate demo/sleep0-rate.c
	@$(CC) -std=c11 -Wall -Wextra -Werror -O2 -D_GNU_SOURCE -Iuapi \
		-o $(BUILD)/demo/timerslack demo/timerslack.c
	@$(CC) -std=c11 -Wall -Wextra -Werror -O2 -D_GNU_SOURCE -Iuapi \
		-o $(BUILD)/demo/zero-sleep-cost demo/zero-sleep-cost.c

run: kernel
	@qemu/run.sh -- '$(CMD)'

demo: kernel lib demo-progs
	@qemu/run.sh -- demo/demo.sh

test:
	@scripts/test.sh

test-debug:
	@scripts/test.sh --debug

bench: kernel lib
	@bench/bench.sh

# Debian's strace with strace/series, reused while nothing changed.
strace: deps
	@strace/build.sh check

series: tree
	@scripts/series.sh $(TREE) series selftests

check-series: tree
	@scripts/series.sh --check $(TREE) series selftests

uapi: kernel
	@cp $(KHDR)/linux/prctl.h uapi/linux/prctl.h

check-uapi: kernel
	@diff -u uapi/linux/prctl.h $(KHDR)/linux/prctl.h || \
		{ echo "uapi/ is stale: run 'make uapi'" >&2; exit 1; }

checkpatch: tree
	@cd $(TREE) && export PATH=/usr/bin:$$PATH && for p in $(addprefix $(TOP)/series/,$(shell cat series/series)); do \
		scripts/checkpatch.pl --strict -q --no-summary $$p || exit 1; done

# PREFIX, DESTDIR and the other GNU directory variables are passed on.
install: lib
	@$(MAKE) -s -C libc-wrapper O=$(BUILD)/libc-wrapper install
	@$(MAKE) -s -C man install

clean:
	rm -rf $(KOBJ) $(KSFT_OUT) $(BUILD)/libc-wrapper $(BUILD)/demo $(BUILD)/run

distclean:
	rm -rf $(BUILD)
