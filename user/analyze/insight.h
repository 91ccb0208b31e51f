/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Leak, cache, churn, peak, fragmentation: what the run's history says,
 * added to each report. Owns the history (history.c), keeps the live
 * figures its caller samples (at most every INSIGHT_TICK_MS, when the heap
 * passed the peak sampled so far) for the peak, reads the
 * target's memory at each report (memstat.c) and judges it (verdict.c).
 * It reads no BPF map and symbolizes nothing: the caller hands it the
 * figures, and the stacks of the sites it picks (insight_stacks_fn), so
 * that the unit tests drive it with hand-made ones.
 */
#ifndef INSIGHT_H
#define INSIGHT_H

#include <stdbool.h>
#include <sys/types.h>
#include <time.h>
#include "aggregate.h"
#include "model/report.h"
#include "probe/snapshot.h"

#define INSIGHT_TICK_MS 100
#define INSIGHT_MEM_TICKS 5	/* the target's memory is read every 5 ticks at most (insight.c),
				   and at each report */
#define INSIGHT_CHURN 20	/* churn stacks in a report (the text shows fewer) */
#define INSIGHT_PEAK 20		/* stacks listed at the peak */

struct insight;

/*
 * The stacks of sites (in their order, with their figures), built as the
 * report's are, into *out (*nr of them, freed with the report). Insight
 * picks the sites of the churn and the peak; the caller, who holds the
 * symbolizer, builds their stacks. 0 or -errno.
 */
typedef int insight_stacks_fn(const struct aggregate *sites, void *ctx,
			      struct report_stack **out, size_t *nr);

/* attached: -p, where memory from before tracing is unknown. NULL on failure. */
struct insight *insight__new(bool attached);
/* -k: the kernel is the target: it never exits, and has no /proc/PID to read. */
void insight__kernel(struct insight *in);
void insight__free(struct insight *in);
/* The bytes its history holds, and in *stacks how many stacks (-v: memuse.h). */
size_t insight__bytes(const struct insight *in, size_t *stacks);
/* The timer to watch; insight__due when it is readable. */
int insight__fd(const struct insight *in);
/* Tracing of pid began at start (CLOCK_MONOTONIC): the baseline, and the ticks. */
void insight__start(struct insight *in, pid_t pid, const struct timespec *start);
/* pid is a new image (exec): what the old one held is gone. */
void insight__reset(struct insight *in, pid_t pid);
/* The timer fired: true when a tick is due (insight__tick). */
bool insight__due(struct insight *in);
/* A tick at now (CLOCK_MONOTONIC), live_bytes live (BPF's counters, every kind). */
void insight__tick(struct insight *in, const struct timespec *now, uint64_t live_bytes);
/*
 * Is a sample of every site's figures worth its scan of the site table:
 * the heap, at heap_bytes now, past the peak sampled so far by a 64th (the
 * rise BPF is armed to tell of), or no sample yet?
 */
bool insight__peak_due(const struct insight *in, uint64_t heap_bytes);
/* The live figures of every site (nr of them) at now: a sample of the peak. */
void insight__sample(struct insight *in, const struct timespec *now,
		     const struct snap_live *live, size_t nr);
/* A report's snapshot and totals, and the memory of pid now (0: gone). 0 or -errno. */
int insight__add(struct insight *in, pid_t pid, const struct snapshot *snap,
		 const struct aggregate *agg);
/*
 * r's analysis, from the history up to snap (the last one added): r was built
 * from agg; stacks(sites, ctx, ...) builds the churn and peak stacks the same
 * way. 0 or -errno; on an error, what was filled is left for report__free.
 */
int insight__fill(struct insight *in, const struct snapshot *snap, const struct aggregate *agg,
		  insight_stacks_fn *stacks, void *ctx, struct report *r);
/*
 * The same, but the stacks whose points all hold the same bytes are told
 * stable without their lines fitted (report_growth.unfitted): for a report
 * that shows a few of its stacks, which insight__fit gives their slope and
 * R² before they are written. Not under sampling (a stack's slope there
 * counts in its site's growth): insight__fill's.
 */
int insight__fill_unfitted(struct insight *in, const struct snapshot *snap,
			   const struct aggregate *agg, insight_stacks_fn *stacks, void *ctx,
			   struct report *r);
/* The unfitted stacks of r that want (by stack) names fitted: all are as insight__fill's. */
void insight__fit(const struct insight *in, const struct snapshot *snap,
		  const struct aggregate *agg, struct report *r, const bool *want);

#endif
