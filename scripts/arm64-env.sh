# SPDX-License-Identifier: GPL-2.0
#
# Sourced by the scripts of make test-arm64: puts the private cross
# toolchains that scripts/arm64-fetch.sh unpacked into build/arm64 on PATH
# and sets CROSS_COMPILE (for the kernel), ARM64_CC (for the userspace)
# and ARMHF_CC (AArch32 programs, for the supervisor).  Their binutils
# find their libbfd and libopcodes (builds for one target, named so that
# they never shadow the host's) through LD_LIBRARY_PATH, since they are
# not where the dynamic linker looks.
arm64_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/build/arm64
export PATH=$arm64_dir/toolchain/usr/bin:$arm64_dir/toolchain-armhf/usr/bin:$PATH
export LD_LIBRARY_PATH=$arm64_dir/toolchain/usr/lib/x86_64-linux-gnu:$arm64_dir/toolchain-armhf/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export CROSS_COMPILE=aarch64-linux-gnu-
export ARM64_CC=aarch64-linux-gnu-gcc
export ARMHF_CC=arm-linux-gnueabihf-gcc
