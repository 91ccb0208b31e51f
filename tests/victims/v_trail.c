// SPDX-License-Identifier: GPL-2.0
/*
 * v_trail: stacks that meet the thread's last one (bpf/stack_trail.bpf.h)
 * where taking its outer frames would go past the 127-frame limit.
 *   site_trail_mid   16 bytes x ROUNDS, 90 via_recurse deep: whole, not
 *                    truncated, down to _start (its walk is the trail)
 *   site_trail_deep  32 bytes x ROUNDS, 40 via_deeper below the same 90
 *                    via_recurse frames: truncated at 127 frames and marked,
 *                    however much of it the last walk had
 * Both leaves are called through one pointer from one frame of
 * via_recurse, so that frame is the same (return address, stack pointer)
 * in both walks. via_recurse and via_deeper do not TR_ENTER (truth.h keeps
 * 8 callers only): the TRUTH callers of both sites are via_top,main.
 * Truth: TRUTH lines (see truth.h) to $VICTIM_TRUTH or stdout; exit status 0.
 *
 * Truth: 2 TRUTH lines; heap 48 * ROUNDS bytes in 2 * ROUNDS blocks.
 */
#include "truth.h"

#define MID 90
#define DEEPER 40
#define ROUNDS 4

SITE void site_trail_mid(void)
{
	void *p = malloc(16); TR_ALLOC(p, 16, "malloc"); ESCAPE(p);
}

SITE void site_trail_deep(void)
{
	void *p = malloc(32); TR_ALLOC(p, 32, "malloc"); ESCAPE(p);
}

/* Not tail calls: the barrier after each call keeps every frame. */
VIA void via_deeper(int n)
{
	if (n)
		via_deeper(n - 1);
	else
		site_trail_deep();
	asm volatile("" : : : "memory");
}

VIA void via_deep_leaf(void)
{
	via_deeper(DEEPER);
	asm volatile("" : : : "memory");
}

VIA void via_recurse(int n, void (*leaf)(void))
{
	if (n)
		via_recurse(n - 1, leaf);
	else
		leaf();
	asm volatile("" : : : "memory");
}

VIA void via_top(void (*leaf)(void))
{
	TR_ENTER();
	via_recurse(MID, leaf);
	TR_LEAVE();
}

int main(void)
{
	void (*leaf[2])(void) = { site_trail_mid, via_deep_leaf };

	TR_ENTER();
	for (int i = 0; i < 2 * ROUNDS; i++) {
		OPAQUE(i);
		via_top(leaf[i & 1]);
	}
	tr_report();
	TR_LEAVE();
	return 0;
}
