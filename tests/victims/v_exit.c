// SPDX-License-Identifier: GPL-2.0
/*
 * v_exit: leaks and exits at once, so the tracer has to report blocks of a
 * process that is already gone.
 *   v_exit          leaks, writes its truth, _exit(7) (no atexit, no stdio flush)
 *   v_exit return   leaks, writes its truth, returns 5 from main (exit handlers run)
 * Truth: TRUTH lines (see truth.h) to $VICTIM_TRUTH or stdout.
 *
 * Truth: 3 TRUTH lines; heap 4,433 bytes in 7 blocks (both modes).
 *
 * valgrind 3.19 (--leak-check=full --show-leak-kinds=all), once per mode
 * (valgrind checks leaks after _exit too):
 *   definitely lost: 4,433 bytes in 7 blocks
 *   indirectly lost: 0, possibly lost: 0, still reachable: 0 bytes in 0 blocks
 *   = the sum of the TRUTH lines.
 */
#define _GNU_SOURCE
#include "truth.h"

SITE void site_exit_malloc(size_t n)
{
	void *p = malloc(n); TR_ALLOC(p, n, "malloc"); ESCAPE(p);
}

SITE void site_exit_calloc(size_t nmemb, size_t size)
{
	void *p = calloc(nmemb, size); TR_ALLOC(p, nmemb * size, "calloc"); ESCAPE(p);
}

/* The last thing before exiting. */
SITE void site_exit_last(size_t n)
{
	void *p = malloc(n); TR_ALLOC(p, n, "malloc"); ESCAPE(p);
}

int main(int argc, char **argv)
{
	int ret = argc > 1 && !strcmp(argv[1], "return");
	int i;

	TR_ENTER();
	for (i = 0; i < 4; i++)
		site_exit_malloc(1000);
	site_exit_calloc(10, 10);
	site_exit_last(1);
	site_exit_last(332);
	tr_report();
	if (!ret)
		_exit(7);
	TR_LEAVE();
	return 5;
}
