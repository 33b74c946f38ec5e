// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * For test-cli.sh: whether expired sleeps on CLOCK_MONOTONIC wait for the
 * slack on this kernel, as the C tests probe it (zs_probe_monotonic() of
 * ../../hardening/probe.h).  Prints the probe's "# kernel: ..." line.
 * Exit status 0: they wait, 1: they return at once, 2: the probe cannot
 * tell.
 */
#include "../../hardening/probe.h"

int main(void)
{
	switch (zs_probe_monotonic()) {
	case ZS_MONO_WAITS:
		return 0;
	case ZS_MONO_RETURNS:
		return 1;
	}
	return 2;
}
