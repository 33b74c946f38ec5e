// SPDX-License-Identifier: GPL-2.0
/*
 * timerslack NS COMMAND [ARG...]: run COMMAND with a timer slack of NS
 * nanoseconds (PR_SET_TIMERSLACK), as a power-tuned system would.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

int main(int argc, char *argv[])
{
	unsigned long ns;
	char *end;

	if (argc < 3) {
		fprintf(stderr, "usage: timerslack NS COMMAND [ARG...]\n");
		return 1;
	}
	errno = 0;
	ns = strtoul(argv[1], &end, 10);
	if (errno || end == argv[1] || *end || argv[1][0] == '-' || ns == 0) {
		fprintf(stderr, "timerslack: invalid slack '%s'\n", argv[1]);
		return 1;
	}
	if (prctl(PR_SET_TIMERSLACK, ns, 0, 0, 0)) {
		fprintf(stderr, "timerslack: PR_SET_TIMERSLACK: %s\n", strerror(errno));
		return 1;
	}
	execvp(argv[2], argv + 2);
	fprintf(stderr, "timerslack: %s: %s\n", argv[2], strerror(errno));
	return errno == ENOENT ? 127 : 126;
}
