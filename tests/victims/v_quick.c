// SPDX-License-Identifier: GPL-2.0
/*
 * v_quick: leaks and is gone within a few milliseconds, with _exit: every
 * report of it is made after the process, its maps and its /proc entry have
 * gone, so everything must come from what was read while it ran. Notes
 * "# main_us: N", the time from main to _exit, which must stay under
 * 10,000 (tests/e2e/run.py checks it).
 * Comments "@name" mark the call lines tests/e2e/run.py expects.
 * Truth: TRUTH lines (see truth.h) to $VICTIM_TRUTH or stdout; exit status 3.
 *
 * Truth: 2 TRUTH lines; heap 1,234 bytes in 3 blocks (site_quick_malloc 1,000
 * in 2, site_quick_inline 234 in 1).
 */
#define _GNU_SOURCE
#include <time.h>
#include "truth.h"

SITE void site_quick_malloc(size_t n)
{
	void *p = malloc(n); TR_ALLOC(p, n, "malloc"); ESCAPE(p);
}

static inline __attribute__((always_inline)) void site_quick_inline(size_t n)
{
	void *p = malloc(n); TR_ALLOC(p, n, "malloc"); ESCAPE(p);
}

VIA void via_quick(size_t n)
{
	TR_ENTER();
	for (int i = 0; i < 2; i++)
		site_quick_malloc(n);	/* @via_calls_malloc */
	site_quick_inline(n - 266);	/* @via_calls_inline */
	TR_LEAVE();
}

static long us_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000000L + (t.tv_nsec - t0->tv_nsec) / 1000;
}

int main(void)
{
	struct timespec t0;
	char us[32];

	clock_gettime(CLOCK_MONOTONIC, &t0);
	TR_ENTER();
	via_quick(500);		/* @main_calls_via */
	snprintf(us, sizeof(us), "%ld", us_since(&t0));
	tr_note("main_us", us);
	tr_report();
	_exit(3);
}
