// SPDX-License-Identifier: GPL-2.0
/*
 * v_deep: a leak 200 calls deep, past the tracer's 127-frame limit, and one
 * 10 calls deep that is not. The deep stack must be reported truncated and
 * marked so, its 127 frames the site and 126 via_recurse; the shallow one
 * whole, down to _start, and not marked.
 *   site_deep_leak     64 bytes, from via_recurse at depth DEEP
 *   site_shallow_leak  32 bytes, from via_recurse at depth SHALLOW
 * via_recurse does not TR_ENTER (truth.h keeps 8 callers only): the TRUTH
 * callers of both sites are via_deep,main, which tests/e2e/run.py's CFI
 * section checks as the victim's own frames after the recursion.
 * Truth: TRUTH lines (see truth.h) to $VICTIM_TRUTH or stdout; exit status 0.
 *
 * Truth: 2 TRUTH lines; heap 96 bytes in 2 blocks.
 *
 * valgrind 3.19 (--leak-check=full --show-leak-kinds=all), once:
 *   definitely lost: 96 bytes in 2 blocks; nothing else
 *   = the sum of the TRUTH lines.
 */
#include "truth.h"

#define DEEP 200
#define SHALLOW 10

SITE void site_deep_leak(void)
{
	void *p = malloc(64); TR_ALLOC(p, 64, "malloc"); ESCAPE(p);
}

SITE void site_shallow_leak(void)
{
	void *p = malloc(32); TR_ALLOC(p, 32, "malloc"); ESCAPE(p);
}

/* Not a tail call: the barrier after the recursive call keeps every frame. */
VIA void via_recurse(int n, void (*site)(void))
{
	if (n)
		via_recurse(n - 1, site);
	else
		site();
	asm volatile("" : : : "memory");
}

VIA void via_deep(void)
{
	TR_ENTER();
	via_recurse(DEEP, site_deep_leak);
	via_recurse(SHALLOW, site_shallow_leak);
	TR_LEAVE();
}

int main(void)
{
	TR_ENTER();
	via_deep();
	tr_report();
	TR_LEAVE();
	return 0;
}
