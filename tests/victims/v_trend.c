// SPDX-License-Identifier: GPL-2.0
/*
 * v_trend: a slow leak next to a big stable cache, heavy churn and a pool
 * that drains: which of them is the leak?
 *   v_trend [MS [LEAK_MS]]
 *                  runs MS milliseconds (default 6000) in ticks of TICK_MS,
 *                  then writes its truth and exits 0. With LEAK_MS, the leak
 *                  stops after that many milliseconds (a leak that stopped:
 *                  the rest runs on as before).
 * At the start, site_cache fills a 32 MiB cache (CACHE_BLOCKS of 4 KiB)
 * and site_pool a 1 MiB pool (POOL_BLOCKS of 4 KiB); neither ever grows.
 * Every tick:
 *   site_leak   leaks LEAK_SIZE bytes (40 KiB/s: a thousandth of the cache
 *               after a second; it grows every interval and is the leak),
 *   site_churn  mallocs and frees CHURN_PER_TICK blocks of 64 bytes (the
 *               most calls by far, nothing outstanding),
 *   the pool    frees POOL_DRAIN blocks while it has some (it shrinks).
 * Truth: TRUTH lines (see truth.h) to $VICTIM_TRUTH or stdout, with the notes
 * "# ticks", "# churn_calls" (site_churn's mallocs), "# leak_bytes_per_s",
 * "# leak_ticks" (the ticks that leaked).
 *
 * Truth with the default 6000 ms: 120 ticks; site_cache 33,554,432 bytes in
 * 8,192, site_leak 245,760 in 120, site_pool 65,536 in 16 (256 - 2 * 120);
 * 240,000 churn calls.
 *
 * valgrind 3.19 (--leak-check=full --show-leak-kinds=all), once, "1000":
 *   definitely lost: the sum of the TRUTH lines (the blocks are only ever
 *   referenced through the victim's masked registry).
 */
#define _GNU_SOURCE
#include <time.h>
#include "truth.h"

#define TICK_MS 50
#define CACHE_BLOCKS 8192
#define BLOCK 4096
#define POOL_BLOCKS 256
#define POOL_DRAIN 2
#define LEAK_SIZE 2048
#define CHURN_PER_TICK 2000

static void *pool[POOL_BLOCKS];
static unsigned pool_left;

SITE void site_cache(size_t n)
{
	void *p = malloc(n); TR_ALLOC(p, n, "malloc"); ESCAPE(p);
}

SITE void site_pool(unsigned i)
{
	pool[i] = malloc(BLOCK); TR_ALLOC(pool[i], BLOCK, "malloc"); ESCAPE(pool[i]);
}

SITE void site_leak(size_t n)
{
	void *p = malloc(n); TR_ALLOC(p, n, "malloc"); ESCAPE(p);
}

SITE void site_churn(size_t n)
{
	void *p = malloc(n); ESCAPE(p);
	free(p);
}

VIA void via_fill(void)
{
	unsigned i;

	TR_ENTER();
	for (i = 0; i < CACHE_BLOCKS; i++)
		site_cache(BLOCK);
	for (i = 0; i < POOL_BLOCKS; i++)
		site_pool(i);
	pool_left = POOL_BLOCKS;
	TR_LEAVE();
}

VIA void via_tick(int leak)
{
	TR_ENTER();
	if (leak)
		site_leak(LEAK_SIZE);
	for (int i = 0; i < CHURN_PER_TICK; i++)
		site_churn(64);
	for (int i = 0; i < POOL_DRAIN && pool_left; i++) {
		pool_left--;
		tr_free(pool[pool_left]);
		free(pool[pool_left]);
	}
	TR_LEAVE();
}

static void sleep_until(const struct timespec *t)
{
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, t, NULL) == EINTR)
		;
}

int main(int argc, char **argv)
{
	long ms = argc > 1 ? atol(argv[1]) : 6000;
	long ticks = ms / TICK_MS;
	long leak_ticks = argc > 2 ? atol(argv[2]) / TICK_MS : ticks;
	struct timespec next;
	char line[64];

	TR_ENTER();
	via_fill();
	clock_gettime(CLOCK_MONOTONIC, &next);
	for (long k = 0; k < ticks; k++) {
		via_tick(k < leak_ticks);
		next.tv_nsec += TICK_MS * 1000000L;
		if (next.tv_nsec >= 1000000000L) {
			next.tv_sec++;
			next.tv_nsec -= 1000000000L;
		}
		sleep_until(&next);
	}
	snprintf(line, sizeof(line), "%ld", ticks);
	tr_note("ticks", line);
	snprintf(line, sizeof(line), "%ld", ticks * CHURN_PER_TICK);
	tr_note("churn_calls", line);
	snprintf(line, sizeof(line), "%d", LEAK_SIZE * 1000 / TICK_MS);
	tr_note("leak_bytes_per_s", line);
	snprintf(line, sizeof(line), "%ld", leak_ticks < ticks ? leak_ticks : ticks);
	tr_note("leak_ticks", line);
	tr_report();
	TR_LEAVE();
	return 0;
}
