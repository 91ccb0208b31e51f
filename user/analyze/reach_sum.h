/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A reachability scan's figures (reach.h) by stack: what the report of it
 * borrows (model/report.h: report_reach). Pure.
 */
#ifndef REACH_SUM_H
#define REACH_SUM_H

#include <stddef.h>
#include <stdint.h>
#include "analyze/aggregate.h"
#include "model/report.h"
#include "probe/probes_reach.h"

#define REACH_SUM_NONE 0xff	/* a block not classified: a tracked mmap */

struct reach_sum_site {
	uint64_t stack_id;
	uint32_t api;
	struct report_reach_figures f;
};

struct reach_sum {
	struct report_reach head;	/* its totals filled in here; the rest the caller's */
	struct reach_sum_site *sites;	/* by (stack_id, api) */
	size_t nr;
};

/*
 * The figures of blocks[i] with kinds[i] (enum reach_kind, or
 * REACH_SUM_NONE), summed by stack and in all. 0 or -ENOMEM.
 */
int reach_sum__build(const struct live_block *blocks, const uint8_t *kinds, size_t nr,
		     struct reach_sum **out);
/* r borrows s: the report and each of its stacks (r->stacks[i] is agg->sites[i]). */
void reach_sum__fill(const struct reach_sum *s, const struct aggregate *agg, struct report *r);
void reach_sum__free(struct reach_sum *s);

#endif
