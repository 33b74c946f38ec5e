/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kselftest_harness.h, with the warnings that -Wextra raises in its code
 * and not in ours silenced: an unused parameter of its own, the setjmp()
 * of its TEST_F() wrappers (-Wclobbered), and the variant that it passes
 * to every fixture function, used or not.  Include it once, after
 * common.h.
 */
#ifndef ZS_HARDENING_HARNESS_H
#define ZS_HARDENING_HARNESS_H

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#pragma GCC diagnostic pop
#pragma GCC diagnostic ignored "-Wclobbered"
#pragma GCC diagnostic ignored "-Wunused-parameter"

#endif
