// SPDX-License-Identifier: GPL-2.0
/*
 * v_drip: a steady leak of many small blocks, for a block table too small
 * to hold them (--max-allocs below N).
 *
 *   v_drip N SIZE MS
 *
 * Leaks N blocks of SIZE bytes at site_drip (called from via_drip), evenly
 * over MS milliseconds in ticks of TICK_MS, keeps every one, writes the
 * truth and exits 0 without freeing anything. The truth.h registry holds
 * far fewer blocks, so the one TRUTH line is counted here:
 *   TRUTH site=site_drip api=malloc bytes=SIZE*N allocs=N callers=via_drip
 * plus "# blocks: N".
 *
 * Truth with "400000 64 4000": 25,600,000 bytes in 400,000 blocks, 80 ticks
 * of 5,000 blocks.
 */
#define _GNU_SOURCE
#include <time.h>
#include "truth.h"

#define TICK_MS 50

SITE void *site_drip(size_t size)
{
	void *p = malloc(size); ESCAPE(p);
	return p;
}

VIA void via_drip(unsigned long n, size_t size)
{
	for (unsigned long i = 0; i < n; i++)
		if (!site_drip(size))
			tr_die("malloc failed");
}

static void sleep_until(struct timespec *t)
{
	t->tv_nsec += TICK_MS * 1000000L;
	if (t->tv_nsec >= 1000000000L) {
		t->tv_sec++;
		t->tv_nsec -= 1000000000L;
	}
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, t, NULL) == EINTR)
		;
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 3 ? strtoul(argv[1], NULL, 10) : 0, done = 0;
	size_t size = argc > 3 ? strtoul(argv[2], NULL, 10) : 0;
	long ticks = argc > 3 ? atol(argv[3]) / TICK_MS : 0;
	struct timespec next;

	if (!n || !size || ticks < 1) {
		tr_say(2, "usage: v_drip N SIZE MS\n");
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &next);
	for (long k = 0; k < ticks; k++) {
		/* Tick k ends with (k + 1) / ticks of the N leaked. */
		unsigned long upto = n * (unsigned long)(k + 1) / (unsigned long)ticks;

		via_drip(upto - done, size);
		done = upto;
		sleep_until(&next);
	}
	tr_report_counted("site_drip", "via_drip", n, size);
	return 0;
}
