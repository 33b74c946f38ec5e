/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A minimal TAP producer for the libzerosleep tests.  Call ok() and diag()
 * from one thread only; stdout is flushed after each line so that a fork()
 * never duplicates buffered output.
 */
#ifndef ZEROSLEEP_TAP_H
#define ZEROSLEEP_TAP_H

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int tap_count, tap_failed;

/* Print one test line; returns @pass. */
static int __attribute__((format(printf, 2, 3)))
ok(int pass, const char *fmt, ...)
{
	va_list ap;

	tap_count++;
	if (!pass)
		tap_failed++;
	printf("%sok %d - ", pass ? "" : "not ", tap_count);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	return pass;
}

static void __attribute__((format(printf, 1, 2)))
diag(const char *fmt, ...)
{
	va_list ap;

	fputs("# ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

/*
 * Check that a call failed with -1 and @want_errno; on failure say what it
 * did instead.
 */
static void __attribute__((format(printf, 4, 5), unused))
ok_fail(long ret, int err, int want_errno, const char *fmt, ...)
{
	char desc[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(desc, sizeof(desc), fmt, ap);
	va_end(ap);
	/* ENOTSUP and EOPNOTSUPP are one value on Linux; say the former. */
	if (!ok(ret == -1 && err == want_errno, "%s: -1 with %s", desc,
		want_errno == ENOTSUP ? "ENOTSUP" : strerrorname_np(want_errno)))
		diag("got %ld, errno %d (%s)", ret, err, strerror(err));
}

static int tap_done(void)
{
	printf("1..%d\n", tap_count);
	if (tap_failed)
		diag("%d of %d failed", tap_failed, tap_count);
	fflush(stdout);
	return tap_failed ? 1 : 0;
}

#endif /* ZEROSLEEP_TAP_H */
