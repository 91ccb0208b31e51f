// SPDX-License-Identifier: GPL-2.0
/*
 * v_nopie: built with -no-pie (the Makefile's victim rule does that for a
 * name with "nopie" in it): an ET_EXEC at its link-time addresses, load bias
 * 0, where every other victim is a PIE.
 * Comments "@name" mark the call lines tests/e2e/run.py expects.
 * Truth: TRUTH lines (see truth.h) to $VICTIM_TRUTH or stdout; exit status 0.
 *
 * Truth: 2 TRUTH lines; heap 2,400 bytes in 4 blocks (site_nopie_malloc
 * 1,200 in 2, site_nopie_realloc 1,200 in 2).
 */
#define _GNU_SOURCE
#include "truth.h"

SITE void site_nopie_malloc(size_t n)
{
	void *p = malloc(n); TR_ALLOC(p, n, "malloc"); ESCAPE(p);
}

SITE void site_nopie_realloc(size_t n)
{
	void *z = NULL;

	OPAQUE(z);
	void *p = realloc(z, n); TR_ALLOC(p, n, "realloc"); ESCAPE(p);
}

VIA void via_nopie(size_t n)
{
	TR_ENTER();
	site_nopie_malloc(n);	/* @via_calls_malloc */
	TR_LEAVE();
}

int main(void)
{
	TR_ENTER();
	for (int i = 0; i < 2; i++) {
		via_nopie(600);		/* @main_calls_via */
		site_nopie_realloc(600);	/* @main_calls_realloc */
	}
	tr_report();
	TR_LEAVE();
	return 0;
}
