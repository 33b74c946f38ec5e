# SPDX-License-Identifier: GPL-2.0
#
# Sourced by the scripts that compile: the kernels, the hygiene objdirs,
# strace.  Sets up ccache when it is installed, and makes kernel builds
# reproducible so that a clean clone in another directory hits the cache
# that an earlier build filled.
#
#   . scripts/ccache.sh
#   zs_ccache_stats LOG     print "N/M hits (P %)" for a stats log
#
# ccache is found through Debian's masquerade directory /usr/lib/ccache,
# put first on PATH: the compiler stays "gcc" on every command line, so a
# build with and without ccache runs the same commands, and turning it on
# or off rebuilds nothing.  ZEROSLEEP_CCACHE=0 turns it off.
#
# The cache is ccache's own (CCACHE_DIR, by default ~/.cache/ccache), so
# every clone on the machine shares it; its size is capped at
# CCACHE_MAXSIZE (default 5G).  Paths below the repository are hashed
# relative to it (CCACHE_BASEDIR), and the working directory is not
# hashed (CCACHE_NOHASHDIR): the guest kernels are built without debug
# information, and a test program built with -g may name another clone's
# directory in its own, which only a debugger reads.
# ZEROSLEEP_CCACHE_LOG, when set, names
# a file to which every compilation appends its counters (ccache's stats
# log), for the hit rate of one phase.

# Whatever the cache: a kernel's version string does not depend on who
# built it, where, when or how often.
export KBUILD_BUILD_TIMESTAMP='Sat Jan  1 00:00:00 UTC 2000'
export KBUILD_BUILD_USER=zerosleep KBUILD_BUILD_HOST=zerosleep KBUILD_BUILD_VERSION=1

if [ "${ZEROSLEEP_CCACHE:-1}" != 0 ] && [ -x /usr/lib/ccache/gcc ] && command -v ccache > /dev/null; then
	case ":$PATH:" in
	*:/usr/lib/ccache:*) ;;
	*) export PATH=/usr/lib/ccache:$PATH ;;
	esac
	export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
	export CCACHE_NOHASHDIR=1
	export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-5G}
	# Freshly generated headers (autoconf.h and the like) would otherwise
	# push every compilation out of direct mode.
	export CCACHE_SLOPPINESS=${CCACHE_SLOPPINESS:-include_file_mtime,include_file_ctime}
	# The kernel's tools/ builds (objtool and its libsubcmd) name the
	# target of their dependency file by the object's absolute path
	# (-Wp,-MT,/.../build/kernel/tools/objtool/check.o), which ccache
	# hashes as it is: every clone, every kernel and every hygiene objdir
	# compiled objtool anew.  The target does not change the object, and
	# tools/build's fixdep, which reads the file, skips it.
	export CCACHE_IGNOREOPTIONS=${CCACHE_IGNOREOPTIONS:-'-Wp,-MT,*'}
	[ -n "${ZEROSLEEP_CCACHE_LOG:-}" ] && export CCACHE_STATSLOG=$ZEROSLEEP_CCACHE_LOG
fi

zs_ccache_stats() {
	# zs_ccache_stats LOG: hits and compilations in a stats log.
	local log=$1 hit miss
	if [ ! -s "$log" ]; then
		echo "no compilation through ccache"
		return 0
	fi
	hit=$(grep -c -x -E '(direct|preprocessed)_cache_hit' "$log")
	miss=$(grep -c -x 'cache_miss' "$log")
	if [ $((hit + miss)) -eq 0 ]; then
		echo "no cacheable compilation"
	else
		echo "ccache $hit/$((hit + miss)) hits ($((100 * hit / (hit + miss))) %)"
	fi
}
