/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Timing helpers for the test programs that tell a sleep that returns at
 * once from one that sleeps, by medians and ratios (test-supervised.c,
 * raw-sleep.c).
 */
#ifndef ZEROSLEEP_TIMING_H
#define ZEROSLEEP_TIMING_H

#include <stdlib.h>
#include <time.h>

#define NSEC		1000000000LL

/* The time on @clock, in ns. */
static inline long long now_ns(clockid_t clock)
{
	struct timespec t;

	clock_gettime(clock, &t);
	return t.tv_sec * NSEC + t.tv_nsec;
}

static inline int compare_ns(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return (x > y) - (x < y);
}

/* The median of the @n times in @t, which are sorted on the way. */
static inline long long median_ns(long long *t, size_t n)
{
	qsort(t, n, sizeof(t[0]), compare_ns);
	return t[n / 2];
}

#endif /* ZEROSLEEP_TIMING_H */
