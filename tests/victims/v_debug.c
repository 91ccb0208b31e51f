// SPDX-License-Identifier: GPL-2.0
/*
 * v_debug: the code behind the separate-debug-info victims. The Makefile
 * builds it as usual (.output/victims/v_debug, with its debug info), then
 * derives stripped copies of the same binary (same build id):
 *   v_debug_link      debug info in v_debug_link.debug beside it (.gnu_debuglink)
 *   v_debug_linkdir   .gnu_debuglink, but the file only in .output/debug-root/
 *   v_debug_id        no debuglink; .output/debug-root/.build-id/xx/rest.debug
 *   v_debug_stripped  no debug info anywhere, no .symtab: module+offset only
 * (the last three are found only with --debug-dir .output/debug-root).
 * Comments "@name" mark the call lines tests/e2e/run.py expects.
 * Truth: TRUTH lines (see truth.h) to $VICTIM_TRUTH or stdout; exit status 0.
 *
 * Truth: 2 TRUTH lines; heap 3,700 bytes in 5 blocks (site_dbg_malloc 700
 * in 2, site_dbg_calloc 3,000 in 3).
 */
#define _GNU_SOURCE
#include "truth.h"

SITE void site_dbg_malloc(size_t n)
{
	void *p = malloc(n); TR_ALLOC(p, n, "malloc"); ESCAPE(p);
}

SITE void site_dbg_calloc(size_t n)
{
	void *p = calloc(n, 10); TR_ALLOC(p, n * 10, "calloc"); ESCAPE(p);
}

VIA void via_dbg(size_t n)
{
	TR_ENTER();
	site_dbg_malloc(n);	/* @via_calls_malloc */
	TR_LEAVE();
}

int main(void)
{
	TR_ENTER();
	for (int i = 0; i < 2; i++)
		via_dbg(300 + 100 * i);	/* @main_calls_via */
	for (int i = 0; i < 3; i++)
		site_dbg_calloc(100);	/* @main_calls_calloc */
	tr_report();
	TR_LEAVE();
	return 0;
}
