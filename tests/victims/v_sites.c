// SPDX-License-Identifier: GPL-2.0
/*
 * v_sites: one leak reached through many stacks, beside a cache bigger than
 * any one of them, and a thousand tiny stacks of one site.
 *   v_sites [MS]   runs MS milliseconds (default 3000) in ticks of TICK_MS,
 *                  then writes its truth and exits 0.
 * At the start:
 *   site_cache  fills a 1 MiB cache (CACHE_BLOCKS of 4 KiB) from one stack;
 *               it never grows;
 *   site_tiny   allocates TINY_BLOCKS blocks of 16 bytes, each through its
 *               own path of TINY_BITS calls of via_zero or via_one (a bit
 *               of its number each), so 1024 stacks of one site, each far
 *               narrower than a pixel of a flame graph.
 * Every tick, site_leak leaks a LEAK_SIZE block through each of the
 * LEAK_PATHS paths of LEAK_BITS such calls: 16 growing stacks of one line.
 * Each holds a sixteenth of the leak, less than the cache by the end; all
 * together they hold more. Stack by stack, the cache is the biggest; site
 * by site, the leak is, and it is the one growing site.
 * Truth: TRUTH lines (see truth.h) to $VICTIM_TRUTH or stdout (site_leak's
 * and site_tiny's without callers: each has several paths), with the notes
 * "# leak_paths", "# tiny_stacks" and "# ticks".
 *
 * Truth with the default 3000 ms: 60 ticks; site_leak 3,932,160 bytes in
 * 960, site_cache 1,048,576 in 256, site_tiny 16,384 in 1,024.
 */
#define _GNU_SOURCE
#include <time.h>
#include "truth.h"

#define TICK_MS 50
#define CACHE_BLOCKS 256
#define BLOCK 4096
#define LEAK_BITS 4
#define LEAK_PATHS (1 << LEAK_BITS)
#define LEAK_SIZE 4096
#define TINY_BITS 10
#define TINY_BLOCKS (1 << TINY_BITS)
#define TINY_SIZE 16

SITE void site_cache(void)
{
	void *p = malloc(BLOCK); TR_ALLOC(p, BLOCK, "malloc"); ESCAPE(p);
}

SITE void site_leak(void)
{
	void *p = malloc(LEAK_SIZE); TR_ALLOC(p, LEAK_SIZE, "malloc"); ESCAPE(p);
}

SITE void site_tiny(void)
{
	void *p = malloc(TINY_SIZE); TR_ALLOC(p, TINY_SIZE, "malloc"); ESCAPE(p);
}

VIA void via_path(unsigned bits, int depth, void (*site)(void));

/* One bit of the path: which of two functions calls the next, so each path is a stack. */
VIA void via_zero(unsigned bits, int depth, void (*site)(void))
{
	TR_ENTER();
	via_path(bits >> 1, depth - 1, site);
	TR_LEAVE();
}

VIA void via_one(unsigned bits, int depth, void (*site)(void))
{
	TR_ENTER();
	via_path(bits >> 1, depth - 1, site);
	TR_LEAVE();
}

VIA void via_path(unsigned bits, int depth, void (*site)(void))
{
	TR_ENTER();
	if (!depth)
		site();
	else if (bits & 1)
		via_one(bits, depth, site);
	else
		via_zero(bits, depth, site);
	TR_LEAVE();
}

static void sleep_until(const struct timespec *t)
{
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, t, NULL) == EINTR)
		;
}

static void note(const char *key, long v)
{
	char line[32];

	snprintf(line, sizeof(line), "%ld", v);
	tr_note(key, line);
}

int main(int argc, char **argv)
{
	long ms = argc > 1 ? atol(argv[1]) : 3000;
	long ticks = ms / TICK_MS;
	struct timespec next;

	TR_ENTER();
	for (int i = 0; i < CACHE_BLOCKS; i++)
		site_cache();
	for (unsigned i = 0; i < TINY_BLOCKS; i++)
		via_path(i, TINY_BITS, site_tiny);
	clock_gettime(CLOCK_MONOTONIC, &next);
	for (long k = 0; k < ticks; k++) {
		for (unsigned i = 0; i < LEAK_PATHS; i++)
			via_path(i, LEAK_BITS, site_leak);
		next.tv_nsec += TICK_MS * 1000000L;
		if (next.tv_nsec >= 1000000000L) {
			next.tv_sec++;
			next.tv_nsec -= 1000000000L;
		}
		sleep_until(&next);
	}
	note("leak_paths", LEAK_PATHS);
	note("tiny_stacks", TINY_BLOCKS);
	note("ticks", ticks);
	tr_report();
	TR_LEAVE();
	return 0;
}
