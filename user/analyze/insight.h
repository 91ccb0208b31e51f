/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Leak, cache, churn, peak, fragmentation: what the run's history says,
 * added to each report. Owns the history (history.c), samples the live
 * figures every INSIGHT_TICK_MS for the peak, reads the target's memory at
 * each report (memstat.c) and judges it (verdict.c).
 */
#ifndef INSIGHT_H
#define INSIGHT_H

#include <stdbool.h>
#include <sys/types.h>
#include <time.h>
#include "aggregate.h"
#include "target/modules.h"
#include "symbolize/report_build.h"
#include "probe/snapshot.h"
#include "symbolize/symbolize.h"

#define INSIGHT_TICK_MS 100
#define INSIGHT_MEM_TICKS 5	/* the target's memory is read every 5 ticks, and at each report */
#define INSIGHT_CHURN 20	/* churn stacks in a report (the text shows fewer) */
#define INSIGHT_PEAK 20		/* stacks listed at the peak */

struct insight;
struct probes;

/* attached: -p, where memory from before tracing is unknown. NULL on failure. */
struct insight *insight__new(bool attached);
void insight__free(struct insight *in);
/* The timer to watch; insight__tick when it is readable. */
int insight__fd(const struct insight *in);
/* Tracing of pid began at start (CLOCK_MONOTONIC): the baseline, and the ticks. */
void insight__start(struct insight *in, pid_t pid, const struct timespec *start);
/* pid is a new image (exec): what the old one held is gone. */
void insight__reset(struct insight *in, pid_t pid);
/* The timer fired: sample the live figures. */
void insight__tick(struct insight *in, struct probes *p);
/* A report's snapshot and totals, and the memory of pid now (0: gone). 0 or -errno. */
int insight__add(struct insight *in, pid_t pid, const struct snapshot *snap,
		 const struct aggregate *agg);
/*
 * r's analysis, from the history up to snap (the last one added): r was built
 * from agg with meta; churn and peak stacks are symbolized the same way.
 */
int insight__fill(struct insight *in, const struct snapshot *snap, const struct aggregate *agg,
		  struct symbolizer *sym, const struct modules *mods,
		  const struct report_meta *meta, struct report *r);

#endif
