# SPDX-License-Identifier: GPL-2.0
#
# zerosleep: per-thread policy for zero-length sleeps.
#
#   make            the same as make lib: builds the userspace only, as the
#                   user who types it; installs nothing, builds no kernel
#   make demo       boot the patched kernel and show the four policies
#   make test       build both kernels and everything else, run every test
#   make test-arm64 the 6.12 series and the userspace on arm64: cross-built
#                   with a private copy of Debian's gcc-aarch64-linux-gnu,
#                   booted in qemu-system-aarch64 (not part of make test)
#   make test-debug the guest tests again, on a PREEMPT_RT kernel with
#                   KASAN, UBSAN and lockdep
#   make run CMD=.. run a command in the guest, exit with its status
#   make series     regenerate series/X.Y/ from the kernel tree in build/
#   make bench      benchmark vanilla and patched 6.12 and 7.3
#   make bench-supervisor  the launcher's supervised fallback, on this host
#   make strace     build strace 7.2 with strace/series and run its new tests
#                   (installs the few packages that strace needs, no more)
#   make kernel-deb [KCONFIG=path] [KDEB_DIR=dir]
#                   a Debian linux-image package of the patched kernel
#                   (bindeb-pkg), configured by KCONFIG (default: the
#                   running system's /boot/config-$(uname -r)), built in
#                   build/kernel-deb, into its packages/ (scripts/kernel-deb.sh)
#
#   make lib        build libzerosleep, the preload fallback and the launcher
#                   into build/libc-wrapper (no kernel); says where they are
#   make install    install them and every man page (PREFIX=/usr/local,
#                   DESTDIR=, and LIBDIR, BINDIR, MANDIR...)
#   make uninstall  remove what make install put there (same variables)
#   make dist       the upstream tarball of the commit (DISTREF=HEAD):
#                   build/zerosleep-VERSION.tar.gz, the same bytes every time
#   make loop-figures  time README's loop.py on this machine (no kernel),
#                   into doc/loop-figures.txt, README.md and zerosleep(1)
#
#   KERNEL=6.12|7.3 picks the kernel of demo, run, test-debug, series and
#   the other single-kernel targets (default 6.12, what users run).
#   V=1 shows every command of lib, install and uninstall (debian/rules
#   asks for it); they are quiet by default.
#
# All build output lives under build/ (git-ignored).

SHELL    := /bin/bash
TOP      := $(CURDIR)
BUILD    := $(TOP)/build

# The two kernels, both Debian's linux-source packages (SPEC 2):
#  - 6.12, the default: the LTS kernel that users run, from bookworm's own
#    apt sources (scripts/deps.sh installs linux-source-6.12).
#  - 7.3: the newest kernel Debian ships (trixie-backports), the first
#    after Linux 7.2 changed how expired sleepers behave; fetched through
#    a private apt configuration by scripts/fetch-linux-source.sh.
# Each has its own tree, objdir, selftests and series/X.Y/.
KERNEL   ?= 6.12
ifeq ($(KERNEL),6.12)
KSUFFIX  :=
TARBALL  := /usr/src/linux-source-6.12.tar.xz
else ifeq ($(KERNEL),7.3)
KSUFFIX  := -7.3
TARBALL  := $(BUILD)/linux-source-7.3/usr/src/linux-source-7.3.tar.xz
else
$(error KERNEL must be 6.12 or 7.3, not "$(KERNEL)")
endif
KSERIES  := series/$(KERNEL)
TREE     := $(BUILD)/linux$(KSUFFIX)
KOBJ     := $(BUILD)/kernel$(KSUFFIX)
BZIMAGE  := $(KOBJ)/arch/x86/boot/bzImage
KHDR     := $(KOBJ)/usr/include
KSFT_OUT := $(BUILD)/selftests$(KSUFFIX)
CC       ?= cc
# lib, install and uninstall: quiet, unless V=1.
V        ?= 0
QUIET    := $(if $(filter 1,$(V)),,-s)

.PHONY: all deps tree kernel headers selftests lib demo-progs demo run test test-arm64 test-debug bench bench-supervisor hardening \
	series check-series check-uapi uapi checkpatch install uninstall loop-figures clean distclean help strace \
	kernel-deb dist

# The default: the userspace only, safe in a fresh checkout as any user.
# The targets that build kernels (demo, test, kernel...) install Debian
# packages first, as root: they are asked for by name.
all: lib
	@echo "make: built the userspace only; 'make test' and 'make demo' (as root) also"
	@echo "make: install Debian packages and build kernels to run in QEMU (see README.md)"

help:
	@sed -n '3,/^# All build output/p' Makefile | sed 's/^# \{0,1\}//'

deps:
	@scripts/deps.sh

tree: deps
	@scripts/kernel-source.sh $(KERNEL) > /dev/null
	@scripts/tree.sh $(TREE) $(KSERIES) $(TARBALL)

kernel: tree
	@scripts/build-kernel.sh $(TREE) $(KOBJ) qemu/kernel.config qemu/kernel-$(KERNEL).config

headers: kernel

# A Debian package of the patched kernel with a configuration of the
# user's (by default the running system's), built with the kernel's own
# bindeb-pkg in its own objdir, KDEB_DIR; the packages land in KDEB_DIR/packages.
# Not "tree", whose "deps" installs all that make test needs: the script
# makes the tree and names the few packages it needs, if missing.
KCONFIG  ?=
KDEB_DIR ?= $(BUILD)/kernel-deb$(KSUFFIX)
kernel-deb:
	@scripts/kernel-deb.sh -o $(KDEB_DIR) $(KERNEL) $(KCONFIG)

# The selftests that the series carries (selftests/ mirrors the tree's
# tools/testing/selftests/) are copied into the tree, where the tree's own
# selftests Makefiles build them, as upstream would; "make series" turns
# the copy into the last patch.  Of timers/ and proc/, only the programs
# that the guests run are built (KSFT_PROGS: the series' two and the
# upstream timers/nanosleep and posix_timers), each by its directory's
# Makefile; a dry run of the whole "make -C tools/testing/selftests
# TARGETS='timers proc'" checks that it would build the series' two.  The
# series' two are built a second time as 32-bit programs (USERCFLAGS=-m32,
# gcc-multilib) into $(KSFT_OUT)-m32, to run on the IA-32 entry points.
# The upstream prctl selftests that the guest kernel can run (see
# qemu/upstream-prctl.sh for the two left out): prctl/Makefile builds in
# its source directory, so they are compiled here.
KSFT_TARGETS   := timers proc
KSFT_OWN       := $(patsubst selftests/%.c,%,$(wildcard selftests/*/*.c))
KSFT_PROGS     := $(KSFT_OWN) timers/nanosleep timers/posix_timers
UPSTREAM_PRCTL := disable-tsc-test disable-tsc-ctxt-sw-stress-test set-process-name

selftests: kernel
	@scripts/sync-selftests.sh $(TREE) selftests
	@mkdir -p $(KSFT_OUT)
	@$(MAKE) -s -n -B -C $(TREE)/tools/testing/selftests TARGETS="$(KSFT_TARGETS)" \
		BUILD=$(KSFT_OUT) FORCE_TARGETS=1 KHDR_INCLUDES="-isystem $(KHDR)" all | \
		tr ' ' '\n' > $(KSFT_OUT)/.all-targets
	@for p in $(KSFT_OWN); do grep -qxF $(KSFT_OUT)/$$p $(KSFT_OUT)/.all-targets || \
		{ echo "make selftests: TARGETS='$(KSFT_TARGETS)' does not build $$p" >&2; exit 1; }; done
	@for d in $(KSFT_TARGETS); do \
		$(MAKE) -s -C $(TREE)/tools/testing/selftests/$$d OUTPUT=$(KSFT_OUT)/$$d \
			KHDR_INCLUDES="-isystem $(KHDR)" \
			$$(for p in $(KSFT_PROGS); do case $$p in $$d/*) echo $(KSFT_OUT)/$$p;; esac; done) || exit 1; \
		mkdir -p $(KSFT_OUT)-m32/$$d && \
		$(MAKE) -s -C $(TREE)/tools/testing/selftests/$$d OUTPUT=$(KSFT_OUT)-m32/$$d \
			KHDR_INCLUDES="-isystem $(KHDR)" USERCFLAGS=-m32 USERLDFLAGS=-m32 \
			$$(for p in $(KSFT_OWN); do case $$p in $$d/*) echo $(KSFT_OUT)-m32/$$p;; esac; done) || exit 1; \
	done
	@mkdir -p $(KSFT_OUT)/prctl
	@for t in $(UPSTREAM_PRCTL); do \
		$(CC) -O2 -isystem $(KHDR) -I$(TREE)/tools/testing/selftests -o $(KSFT_OUT)/prctl/$$t \
			$(TREE)/tools/testing/selftests/prctl/$$t.c || exit 1; \
	done

hardening: kernel
	@$(MAKE) -s -C hardening O=$(BUILD)/hardening

lib:
	@$(MAKE) $(QUIET) -C libc-wrapper O=$(BUILD)/libc-wrapper all tests
	@echo "make lib: the launcher is $(BUILD)/libc-wrapper/zerosleep"
	@echo "make lib: libzerosleep.so, libzerosleep.a and libzerosleep-preload.so are in $(BUILD)/libc-wrapper"

demo-progs:
	@mkdir -p $(BUILD)/demo
	@$(CC) -std=c11 -Wall -Wextra -Werror -O2 -D_GNU_SOURCE -Iuapi \
		-o $(BUILD)/demo/sleep0-rate demo/sleep0-rate.c
	@$(CC) -std=c11 -Wall -Wextra -Werror -O2 -D_GNU_SOURCE -Iuapi \
		-o $(BUILD)/demo/timerslack demo/timerslack.c
	@$(CC) -std=c11 -Wall -Wextra -Werror -O2 -D_GNU_SOURCE -Iuapi \
		-o $(BUILD)/demo/zero-sleep-cost demo/zero-sleep-cost.c

run: kernel
	@qemu/run.sh -k $(BZIMAGE) -- '$(CMD)'

demo: kernel lib demo-progs
	@qemu/run.sh -k $(BZIMAGE) -- demo/demo.sh

test:
	@scripts/test.sh

test-debug:
	@scripts/test.sh --debug $(KERNEL)

# arm64 (SPEC 4, "Architectures"): its own target, as CI has no time for
# two more cold kernel builds in make test.  Always 6.12.
test-arm64:
	@scripts/test-arm64.sh

bench: lib
	@bench/bench.sh

# No kernel: the supervised fallback on the host's own.
bench-supervisor:
	@bench/supervisor.sh

# strace 7.2 (../shared/upstream) with strace/series, reused while nothing
# changed.  It installs the few packages that strace needs (strace/build.sh
# deps), not "deps": no kernel source, no QEMU.
strace:
	@strace/build.sh deps
	@strace/build.sh check

series: tree
	@scripts/series.sh $(TREE) $(KSERIES) selftests

check-series: tree
	@scripts/series.sh --check $(TREE) $(KSERIES) selftests

# uapi/linux/prctl.h is 6.12's exported header; on 7.3 the zerosleep
# block of the header must be the same, byte for byte.
uapi: kernel
	@scripts/uapi.sh update $(KERNEL) $(KHDR)/linux/prctl.h

check-uapi: kernel
	@scripts/uapi.sh check $(KERNEL) $(KHDR)/linux/prctl.h

# The trees are Debian's source without git history, so checkpatch cannot
# look up the mainline commits that Fixes: tags and changelogs cite
# (UNKNOWN_COMMIT_ID); everything else it checks.  The selftests patch adds
# files without a MAINTAINERS line, since the entries of their directories
# (timers/ and proc/) already list them, which make test checks with
# get_maintainer.pl: there checkpatch's FILE_PATH_CHANGES is ignored too.
checkpatch: tree
	@cd $(TREE) && export PATH=/usr/bin:$$PATH && for p in $(addprefix $(TOP)/$(KSERIES)/,$(shell cat $(KSERIES)/series)); do \
		ign=UNKNOWN_COMMIT_ID; case $$p in *-selftests-*) ign=$$ign,FILE_PATH_CHANGES;; esac; \
		scripts/checkpatch.pl --strict -q --no-summary --ignore $$ign $$p || exit 1; done

# PREFIX, DESTDIR and the other GNU directory variables are passed on.
# Every man page comes from man/Makefile, once: the library's Makefile
# installs only the rest (install-bin).
install: lib
	@$(MAKE) $(QUIET) -C libc-wrapper O=$(BUILD)/libc-wrapper install-bin
	@$(MAKE) $(QUIET) -C man install

# Builds nothing: removes what install put there, with the same variables.
uninstall:
	@$(MAKE) $(QUIET) -C libc-wrapper O=$(BUILD)/libc-wrapper uninstall-bin
	@$(MAKE) $(QUIET) -C man uninstall

# The upstream tarball (Debian's orig.tar.gz, debian/watch): git archive of
# a commit, so only tracked files (never build/), with the commit's time as
# every file's mtime (git archive does so for a commit, not for a tree),
# gzip without a name or time stamp: the same commit gives the same bytes.
# debian/ is left out: the Debian packaging travels in its own
# debian.tar.xz.  The version is the library's (<zerosleep.h>).
DISTREF  ?= HEAD
zs_version = $(shell sed -n 's/^\#define ZEROSLEEP_VERSION_$(1)[[:space:]]*\([0-9]*\)$$/\1/p' \
		libc-wrapper/include/zerosleep.h)
DISTVER  := $(call zs_version,MAJOR).$(call zs_version,MINOR).$(call zs_version,PATCH)
DISTNAME := zerosleep-$(DISTVER)
dist:
	@commit=$$(git rev-parse --verify -q '$(DISTREF)^{commit}') || \
		{ echo "make dist: '$(DISTREF)' is not a commit" >&2; exit 1; }; \
	git diff --quiet HEAD -- 2>/dev/null || [ '$(DISTREF)' != HEAD ] || \
		echo "make dist: uncommitted changes are not in the tarball (it is $${commit:0:12}'s)" >&2; \
	mkdir -p $(BUILD) && \
	git archive --format=tar --prefix=$(DISTNAME)/ $$commit -- . ':(exclude)debian' | \
		gzip -9 -n > $(BUILD)/$(DISTNAME).tar.gz.tmp && \
	mv $(BUILD)/$(DISTNAME).tar.gz.tmp $(BUILD)/$(DISTNAME).tar.gz && \
	echo "make dist: $(BUILD)/$(DISTNAME).tar.gz ($${commit:0:12}); for Debian: ../zerosleep_$(DISTVER).orig.tar.gz"

# The figures of README's loop.py example, on this machine, through the
# fallback (or the kernel series, if it runs): builds no kernel.  Written
# to doc/loop-figures.txt, then copied into README.md and zerosleep(1),
# which quote it (scripts/test-readme.sh checks that they do, and that
# it was made from the code as it is).
loop-figures: lib
	@doc/loop-figures.sh $(BUILD)/libc-wrapper > doc/loop-figures.txt.tmp
	@mv doc/loop-figures.txt.tmp doc/loop-figures.txt
	@cat doc/loop-figures.txt
	@scripts/loop-figures-docs.sh update

clean:
	rm -rf $(BUILD)/kernel-arm64 $(BUILD)/kernel-arm64-vanilla $(BUILD)/arm64/libc-wrapper $(BUILD)/arm64/selftests \
		$(BUILD)/arm64/bench $(BUILD)/arm64/results
	rm -rf $(KOBJ) $(KDEB_DIR) $(KSFT_OUT) $(KSFT_OUT)-m32 $(BUILD)/libc-wrapper $(BUILD)/demo $(BUILD)/run

distclean:
	rm -rf $(BUILD)
