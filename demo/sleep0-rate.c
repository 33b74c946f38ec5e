// SPDX-License-Identifier: GPL-2.0
/*
 * sleep0-rate [SECONDS]: call sleep(0) in a loop for SECONDS (default 1)
 * and print one line: calls per second, then voluntary and involuntary
 * context switches per call.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char *argv[])
{
	double seconds = argc > 1 ? atof(argv[1]) : 1.0;
	struct rusage r0, r1;
	unsigned long calls = 0;
	double start, elapsed;

	if (seconds <= 0 || seconds > 60) {
		fprintf(stderr, "sleep0-rate: SECONDS must be in (0, 60]\n");
		return 1;
	}
	getrusage(RUSAGE_SELF, &r0);
	start = now();
	do {
		for (int i = 0; i < 16; i++)
			sleep(0);
		calls += 16;
		elapsed = now() - start;
	} while (elapsed < seconds);
	getrusage(RUSAGE_SELF, &r1);
	printf("%.0f %.2f %.2f\n", calls / elapsed,
	       (double)(r1.ru_nvcsw - r0.ru_nvcsw) / calls,
	       (double)(r1.ru_nivcsw - r0.ru_nivcsw) / calls);
	return 0;
}
