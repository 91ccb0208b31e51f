// SPDX-License-Identifier: GPL-2.0
/*
 * v_reach: blocks of every kind memcheck tells apart at exit, for --reach.
 *   - a list whose head is lost: the head definitely lost, its 3 nodes
 *     indirectly lost (they are reached from the head only);
 *   - 2 blocks no pointer reaches: definitely lost;
 *   - a block a global points to, and the block it points to: still reachable;
 *   - a block a thread-local variable (TLS) points to: still reachable;
 *   - a block whose only pointer is on another thread's stack (the thread
 *     waits, alive, while the process exits): still reachable;
 *   - a block a global points into (16 bytes in), and the block it points
 *     to: possibly lost.
 * Before exit() the stack the sites used is overwritten, so that no copy
 * of a lost block's address stays in a frame that exit() then reuses
 * (memcheck would not count it: it ignores undefined memory; a scan
 * without valgrind cannot tell).
 * Truth: TRUTH lines (see truth.h) to $VICTIM_TRUTH or stdout, and a
 * "# reach: site=kind ..." note: the kind of each site's blocks.
 *
 * Truth: 9 TRUTH lines; heap 668 bytes in 12 blocks (no mappings).
 *
 * valgrind 3.19 (--leak-check=full --show-leak-kinds=all), once: the same
 * kind and bytes for each site, and beside them the thread's DTV (288
 * bytes, calloc'ed by pthread_create), possibly lost: glibc keeps the
 * address of its second entry, an interior pointer:
 *   definitely lost: 80 bytes in 3 blocks (site_head 48, site_lost 2 x 16)
 *   indirectly lost: 96 bytes in 3 blocks (site_node)
 *   possibly lost: 376 bytes in 3 blocks (site_interior 64, its child 24, the DTV)
 *   still reachable: 404 bytes in 4 blocks (site_global 100 and its child 64,
 *                    site_tls 40, site_thread 200)
 */
#define _GNU_SOURCE
#include "truth.h"

static void *keep;		/* a global: what it points to is reachable */
static char *inside;		/* a global pointing into a block: possibly lost */
static __thread void *tls_keep;	/* the main thread's TLS */
static int go[2], never[2];	/* the thread says it holds its block; it waits forever */

SITE void *site_node(void *next)
{
	void **p = malloc(32); TR_ALLOC(p, 32, "malloc"); ESCAPE(p);
	memset(p, 0, 32);
	p[0] = next;
	return p;
}

SITE void site_head(void *first)
{
	void **p = malloc(48); TR_ALLOC(p, 48, "malloc"); ESCAPE(p);
	memset(p, 0, 48);
	p[0] = first;
}

SITE void site_lost(void)
{
	void *p = malloc(16); TR_ALLOC(p, 16, "malloc"); ESCAPE(p);
	memset(p, 0, 16);
}

SITE void *site_global_child(void)
{
	void *p = calloc(1, 64); TR_ALLOC(p, 64, "calloc"); ESCAPE(p);
	return p;
}

SITE void site_global(void)
{
	void **p = calloc(1, 100); TR_ALLOC(p, 100, "calloc"); ESCAPE(p);
	TR_ENTER();
	p[0] = site_global_child();
	TR_LEAVE();
	keep = p;
}

SITE void site_tls(void)
{
	void *p = calloc(1, 40); TR_ALLOC(p, 40, "calloc"); ESCAPE(p);
	tls_keep = p;
}

SITE void *site_interior_child(void)
{
	void *p = calloc(1, 24); TR_ALLOC(p, 24, "calloc"); ESCAPE(p);
	return p;
}

SITE void site_interior(void)
{
	void **p = calloc(1, 64); TR_ALLOC(p, 64, "calloc"); ESCAPE(p);
	TR_ENTER();
	p[0] = site_interior_child();
	TR_LEAVE();
	inside = (char *)p + 16;
}

SITE void *site_thread(void)
{
	void *p = calloc(1, 200); TR_ALLOC(p, 200, "calloc"); ESCAPE(p);
	return p;
}

/* The block's address lives in this frame only, until the process exits. */
VIA void *thr_hold(void *arg)
{
	void *volatile slot = site_thread();
	char c = 0;

	(void)arg;
	if (write(go[1], &c, 1) != 1)
		tr_die("write");
	while (read(never[0], &c, 1) < 0 && errno == EINTR)
		;
	ESCAPE(slot);
	return NULL;
}

VIA void via_leak_list(void)
{
	void *n = NULL;

	TR_ENTER();
	for (int i = 0; i < 3; i++)
		n = site_node(n);
	site_head(n);
	TR_LEAVE();
}

/* The stack the sites ran on, overwritten: no stale address of a lost block stays in it. */
VIA void via_scrub(void)
{
	volatile char junk[32768];

	memset((char *)junk, 0, sizeof(junk));
	ESCAPE(junk);
}

int main(void)
{
	pthread_t t;
	char c;

	TR_ENTER();
	if (pipe(go) || pipe(never) || pthread_create(&t, NULL, thr_hold, NULL))
		tr_die("thread");
	if (read(go[0], &c, 1) != 1)
		tr_die("read");
	via_leak_list();
	site_lost();
	site_lost();
	site_global();
	site_tls();
	site_interior();
	ESCAPE(keep);
	ESCAPE(inside);
	ESCAPE(tls_keep);
	tr_note("reach", "site_head=definitely_lost site_node=indirectly_lost "
		"site_lost=definitely_lost site_global=still_reachable "
		"site_global_child=still_reachable site_tls=still_reachable "
		"site_thread=still_reachable site_interior=possibly_lost "
		"site_interior_child=possibly_lost");
	tr_report();
	via_scrub();
	TR_LEAVE();
	exit(0);	/* the thread still waits, its block on its stack */
}
