/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One reachability scan of a live target: hold it (target/reach_hold.h),
 * take its live blocks (through ops: the probes'), choose its roots
 * (reach_roots.h), classify (reach.h), let it go, and sum by stack
 * (reach_sum.h). The target is held for the scan only.
 */
#ifndef REACH_RUN_H
#define REACH_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include "analyze/reach_sum.h"

struct reach_run_ops {
	void *ctx;
	/* The live blocks now (probe/probes_reach.h: probes_reach__blocks). */
	int (*blocks)(void *ctx, struct live_block **out, size_t *nr);
	/* For the hold to expect, said before a big scan: the live heap now, the last scan. */
	uint64_t heap_bytes;
	const struct report_reach *last;	/* NULL: none yet */
};

#define REACH_RUN_STOP_MS 2000	/* a thread that does not stop by then ends the scan */

/*
 * Scan pid, first saying on stderr how long it will hold pid when its heap
 * is big. 0 and the figures in *out (head.held_ms, scan_ms, threads and
 * the bytes read filled in), or -errno with one line in err.
 */
int reach_run__scan(pid_t pid, const struct reach_run_ops *ops, struct reach_sum **out,
		    char *err, size_t errlen);
/* The line on stderr that says what a scan of pid held and read (h: its figures). */
void reach_run__say(pid_t pid, const struct report_reach *h);

#endif
