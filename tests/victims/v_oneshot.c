// SPDX-License-Identifier: GPL-2.0
/*
 * v_oneshot: a short command with one leak: 30,000 bytes allocated and
 * never freed, then LINGER_MS of nothing and exit 0. Traced with reports
 * every 0.1 s, its stack is flat over several reports ("stable"): the final
 * verdict must still say what is outstanding at exit.
 * Truth: TRUTH lines (see truth.h) to $VICTIM_TRUTH or stdout.
 *
 * Truth: site_leak 30,000 bytes in 1 block.
 *
 * valgrind 3.19 (--leak-check=full --show-leak-kinds=all), once:
 *   definitely lost: 30,000 bytes in 1 blocks = the TRUTH line.
 */
#define _GNU_SOURCE
#include <time.h>
#include "truth.h"

#define LEAK_BYTES 30000
#define LINGER_MS 500

SITE void site_leak(size_t n)
{
	void *p = malloc(n); TR_ALLOC(p, n, "malloc"); ESCAPE(p);
}

int main(void)
{
	struct timespec ts = { 0, LINGER_MS * 1000000L };

	TR_ENTER();
	site_leak(LEAK_BYTES);
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
	tr_report();
	TR_LEAVE();
	return 0;
}
