// SPDX-License-Identifier: GPL-2.0
/*
 * v_wait: a target to attach to with -p. Protocol (stdin/stdout, one line each):
 *   1. allocates its "pre" blocks, then prints "READY pid=<pid>" on stdout;
 *   2. waits for a line on stdin (EOF: exits 3 without doing anything else);
 *   3. frees/reallocs some pre blocks, leaks its "post" blocks, writes its
 *      truth, then prints "LEAKED" on stdout;
 *   4. waits for another line on stdin (or EOF), then exits 0.
 * Truth: TRUTH lines (see truth.h) to $VICTIM_TRUTH or stdout, each with
 * phase=pre (allocated before the trigger) or phase=post. A tracer attached
 * between READY and the trigger must report exactly the phase=post lines, and
 * nothing at a phase=pre site (site_pre_leak): it was not there to see them.
 * Traced from the start (-c), it must report both phases. The pre blocks that
 * are freed or realloc'ed after the trigger (site_pre_freed, site_pre_moved)
 * end up in no TRUTH line: those frees are of blocks the tracer never saw (-p).
 *
 * Truth: 4 TRUTH lines; phase=pre: site_pre_leak 333 bytes in 3 blocks;
 * phase=post: 6,225 bytes in 8 blocks (site_post_realloc 5,000 in 1,
 * site_post_malloc 615 in 5, site_post_calloc 610 in 2). Heap 6,558 bytes in
 * 11 blocks.
 *
 * valgrind 3.19 (--leak-check=full --show-leak-kinds=all), once, with
 * stdin "go\nexit\n":
 *   definitely lost: 6,558 bytes in 11 blocks
 *   indirectly lost: 0, possibly lost: 0, still reachable: 0 bytes in 0 blocks
 *   = the sum of all TRUTH lines, both phases.
 */
#define _GNU_SOURCE
#include "truth.h"

#define NPRE_FREED 4

/* One line from stdin, without stdio: 1 when a line (or partial line) came, 0 at EOF. */
static int wait_line(void)
{
	char c;
	ssize_t n;
	int got = 0;

	for (;;) {
		n = read(0, &c, 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return got;
		got = 1;
		if (c == '\n')
			return 1;
	}
}

SITE void site_pre_leak(size_t n)
{
	void *p = malloc(n); TR_ALLOC(p, n, "malloc"); ESCAPE(p);
}

SITE void *site_pre_freed(size_t n)
{
	void *p = malloc(n); TR_ALLOC(p, n, "malloc"); ESCAPE(p);
	return p;
}

SITE void *site_pre_moved(size_t n)
{
	void *p = malloc(n); TR_ALLOC(p, n, "malloc"); ESCAPE(p);
	return p;
}

/* Reallocs a block from before the attach: a new block here, an unknown one gone. */
SITE void site_post_realloc(void *old, size_t n)
{
	void *p = realloc(old, n); ESCAPE(p); if (p) TR_MOVE(old, p, n, "realloc");
}

SITE void site_post_malloc(size_t n)
{
	void *p = malloc(n); TR_ALLOC(p, n, "malloc"); ESCAPE(p);
}

SITE void site_post_calloc(size_t nmemb, size_t size)
{
	void *p = calloc(nmemb, size); TR_ALLOC(p, nmemb * size, "calloc"); ESCAPE(p);
}

SITE void site_post_freed(int rounds)
{
	for (int i = 0; i < rounds; i++) {
		void *p = malloc(100 + i); ESCAPE(p);
		free(p);
	}
}

int main(void)
{
	void *freed[NPRE_FREED], *moved;
	char line[64];
	int i, n;

	TR_ENTER();
	tr_set_phase("pre");
	for (i = 0; i < 3; i++)
		site_pre_leak(111);
	for (i = 0; i < NPRE_FREED; i++)
		freed[i] = site_pre_freed(222);
	moved = site_pre_moved(50);

	n = snprintf(line, sizeof(line), "READY pid=%d\n", (int)getpid());
	tr_write_all(1, line, n);
	if (!wait_line())
		_exit(3);

	tr_set_phase("post");
	for (i = 0; i < NPRE_FREED; i++) {
		tr_free(freed[i]);
		free(freed[i]);
	}
	site_post_realloc(moved, 5000);
	for (i = 0; i < 5; i++)
		site_post_malloc(123);
	site_post_calloc(5, 61);
	site_post_calloc(5, 61);
	site_post_freed(50);
	tr_report();
	tr_say(1, "LEAKED\n");

	wait_line();
	TR_LEAVE();
	return 0;
}
