// SPDX-License-Identifier: GPL-2.0
/*
 * v_renew: a pool that grows by a slot every tick while every slot's
 * buffer is freed and made again at each tick, as a server's per-client
 * query buffers do while clients keep connecting. The live bytes grow
 * steadily, yet no block lives longer than a tick: the report must say
 * that what grows is how many are held at once, not blocks never freed.
 *   v_renew [MS]   runs MS milliseconds (default 4000) in ticks of TICK_MS,
 *                  then writes its truth and exits 0.
 * Truth: TRUTH lines (truth.h) to $VICTIM_TRUTH or stdout: site_renew
 * holds one BLOCK per tick run at the end, each made in the last tick;
 * the note "# ticks".
 *
 * valgrind 3.19 (--leak-check=full --show-leak-kinds=all), once, "1000":
 *   still reachable: 81,920 bytes in 20 blocks, the TRUTH line (slots[]
 *   holds them); nothing lost.
 */
#define _GNU_SOURCE
#include <time.h>
#include "truth.h"

#define TICK_MS 50
#define BLOCK 4096
#define MAX_SLOTS 1024

static void *slots[MAX_SLOTS];

SITE void *site_renew(void)
{
	void *p = malloc(BLOCK); TR_ALLOC(p, BLOCK, "malloc"); ESCAPE(p);

	return p;
}

/* Every slot's buffer made again, and one slot more. */
VIA void via_tick(unsigned nr)
{
	TR_ENTER();
	for (unsigned i = 0; i < nr; i++) {
		tr_free(slots[i]);
		free(slots[i]);
		slots[i] = site_renew();
	}
	slots[nr] = site_renew();
	TR_LEAVE();
}

static void sleep_until(const struct timespec *t)
{
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, t, NULL) == EINTR)
		;
}

int main(int argc, char **argv)
{
	long ms = argc > 1 ? atol(argv[1]) : 4000;
	long ticks = ms / TICK_MS < MAX_SLOTS ? ms / TICK_MS : MAX_SLOTS;
	struct timespec next;
	char line[32];

	TR_ENTER();
	clock_gettime(CLOCK_MONOTONIC, &next);
	for (long k = 0; k < ticks; k++) {
		via_tick((unsigned)k);
		next.tv_nsec += TICK_MS * 1000000L;
		if (next.tv_nsec >= 1000000000L) {
			next.tv_sec++;
			next.tv_nsec -= 1000000000L;
		}
		sleep_until(&next);
	}
	snprintf(line, sizeof(line), "%ld", ticks);
	tr_note("ticks", line);
	tr_report();
	TR_LEAVE();
	return 0;
}
