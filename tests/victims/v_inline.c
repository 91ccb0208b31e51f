// SPDX-License-Identifier: GPL-2.0
/*
 * v_inline: allocations inside always_inline helpers, so that the code that
 * calls the allocator belongs to no function of its own. The tracer must
 * show each inlined call as its own frame, marked inlined, at its own line:
 *   site_inl_direct   inlined into via_inl_host;
 *   site_inl_nested   inlined into via_inl_mid, itself inlined into via_inl_host.
 * Comments "@name" mark the lines tests/e2e/run.py expects the outer frames
 * at (the call lines); the innermost line is the TRUTH line.
 * Also the -g victim of the symbolizer's unit tests (tests/unit/symbolize/).
 * Truth: TRUTH lines (see truth.h) to $VICTIM_TRUTH or stdout; exit status 0.
 *
 * Truth: 2 TRUTH lines; heap 2,724 bytes in 6 blocks (site_inl_direct 300
 * in 3, site_inl_nested 2,424 in 3).
 */
#define _GNU_SOURCE
#include "truth.h"

#define INLINE static inline __attribute__((always_inline))

INLINE void site_inl_direct(size_t n)
{
	void *p = malloc(n); TR_ALLOC(p, n, "malloc"); ESCAPE(p);
}

INLINE void site_inl_nested(size_t n)
{
	void *p = calloc(n, 8); TR_ALLOC(p, n * 8, "calloc"); ESCAPE(p);
}

INLINE void via_inl_mid(size_t n)
{
	TR_ENTER();
	site_inl_nested(n + 1);	/* @mid_calls_nested */
	TR_LEAVE();
}

VIA void via_inl_host(size_t n)
{
	TR_ENTER();
	site_inl_direct(n);	/* @host_calls_direct */
	via_inl_mid(n);		/* @host_calls_mid */
	TR_LEAVE();
}

/* Frees all it gets: nothing outstanding here. */
SITE void site_inl_freed(int rounds)
{
	for (int i = 0; i < rounds; i++) {
		void *p = malloc(32 + i); ESCAPE(p);
		free(p);
	}
}

int main(void)
{
	TR_ENTER();
	for (int i = 0; i < 3; i++)
		via_inl_host(100);	/* @main_calls_host */
	site_inl_freed(10);
	tr_report();
	TR_LEAVE();
	return 0;
}
