/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The analysis' state, shared by insight.c (feeding the history, reading
 * it out) and insight_fold.c (what a report may fold). Not for other
 * modules: insight.h is the interface.
 */
#ifndef INSIGHT_INTERNAL_H
#define INSIGHT_INTERNAL_H

#include "insight.h"
#include "target/memstat.h"

struct insight {
	struct history *h;
	bool attached;
	bool started;
	pid_t pid;
	uint64_t start_ns;
	int timerfd;
	uint64_t mem_next_ns;	/* no tick reads the target's memory before */
	struct mem_reading last;	/* the target's memory, read now and then */
	bool have_last;
	bool exited;		/* the last report was made after the target exited */
	bool kernel;		/* -k: pid 0 is the kernel, not a target gone */
	struct report_grew grew;	/* the last leak a report of this image named */
	/* The peak's stacks when folding last asked (insight_fold__prepare): never folded. */
	struct snap_live pins[INSIGHT_PEAK];
	size_t nr_pins;
	/* The report's stack of each site, by the site's index (insight.c's growth). */
	uint32_t *stack_of;
	size_t cap_stack_of;
};

/* The biggest max of the n sites of a sample, biggest first, into top: how many. */
size_t insight__top_of(const struct snap_live *v, size_t n, struct snap_live *top, size_t max);

#endif
