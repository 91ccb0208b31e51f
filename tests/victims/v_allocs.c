// SPDX-License-Identifier: GPL-2.0
/*
 * v_allocs: blocks whose addresses the victim tells, for -a/--show-allocs,
 * and a known sequence of calls, for -t/--trace. Truth: TRUTH lines (see
 * truth.h) to $VICTIM_TRUTH or stdout, and notes:
 *
 *   # blocks_keep: ADDR,ADDR,ADDR,ADDR   site_keep's, in the order allocated,
 *                                        20 ms apart (the oldest first)
 *   # blocks_pair: ADDR,ADDR             site_pair's
 *   # calls: API:SIZE:ADDR[:OLD];...     the calls of run_calls, in order
 *
 * Sizes are odd (1001, 3 * 337, 2002, 4003) so that a test finds them among
 * the C library's own calls. Exit status 0.
 *
 * Truth: 2 TRUTH lines; heap 1,006 bytes in 6 blocks (site_keep 4 blocks
 * of 101 to 104 bytes, 410 in all; site_pair 2 of 298, 596).
 */
#define _GNU_SOURCE
#include <time.h>
#include "truth.h"

static char calls[320];

static void note_addrs(const char *key, void *const *p, int n)
{
	char buf[160] = "";

	for (int i = 0; i < n; i++)
		snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "%s%p", i ? "," : "", p[i]);
	tr_note(key, buf);
}

static void call(const char *api, size_t size, const void *p, const void *old)
{
	size_t n = strlen(calls);

	snprintf(calls + n, sizeof(calls) - n, "%s%s:%zu:%p", n ? ";" : "", api, size, p);
	if (old) {
		n = strlen(calls);
		snprintf(calls + n, sizeof(calls) - n, ":%p", old);
	}
}

static void pause_ms(long ms)
{
	struct timespec ts = { 0, ms * 1000000L };

	nanosleep(&ts, NULL);
}

SITE void *site_keep(size_t n)
{
	void *p = malloc(n); TR_ALLOC(p, n, "malloc"); ESCAPE(p);
	return p;
}

SITE void *site_pair(size_t n)
{
	void *p = calloc(1, n); TR_ALLOC(p, n, "calloc"); ESCAPE(p);
	return p;
}

/* malloc, calloc, realloc (moved: 1001 to 4003 bytes), free, free: all freed. */
SITE void run_calls(void)
{
	void *a = malloc(1001);

	ESCAPE(a);
	call("malloc", 1001, a, NULL);
	void *b = calloc(3, 337);

	ESCAPE(b);
	call("calloc", 3 * 337, b, NULL);
	void *c = malloc(2002);	/* in the way: realloc(a) cannot grow in place */

	ESCAPE(c);
	call("malloc", 2002, c, NULL);
	void *d = realloc(a, 4003);

	ESCAPE(d);
	call("realloc", 4003, d, a);
	free(b);
	call("free", 3 * 337, b, NULL);
	free(d);
	call("free", 4003, d, NULL);
	free(c);
	call("free", 2002, c, NULL);
}

int main(void)
{
	void *keep[4], *pair[2];

	TR_ENTER();
	for (int i = 0; i < 4; i++) {
		keep[i] = site_keep(101 + i);
		pause_ms(20);	/* ages apart by more than the tracer's 5 ms clock */
	}
	for (int i = 0; i < 2; i++)
		pair[i] = site_pair(298);
	run_calls();
	note_addrs("blocks_keep", keep, 4);
	note_addrs("blocks_pair", pair, 2);
	tr_note("calls", calls);
	pause_ms(300);	/* a periodic report or two with the blocks (INTERVAL 0.1) */
	tr_report();
	TR_LEAVE();
	return 0;
}
