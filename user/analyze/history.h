/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the reports saw over the run, for what one report cannot tell: which
 * stacks keep growing (a leak) and which hold a steady amount (a cache), how
 * fast each stack allocates (churn), the live-heap high-water mark, and the
 * timeline of live bytes against the target's memory. Pure: fed one
 * snapshot per report and a light sample of the live figures now and then,
 * so the unit tests drive it with hand-made ones.
 *
 * Memory stays bounded on long runs: a stack keeps at most HISTORY_POINTS
 * points of its outstanding bytes; when they are full every other point is
 * dropped, so the points always span the whole run, ever more coarsely.
 * They are kept as runs of one value (history_points.h): most stacks hold
 * the same bytes from report to report.
 */
#ifndef HISTORY_H
#define HISTORY_H

#include <stddef.h>
#include <stdint.h>
#include "history_points.h"
#include "model/report.h"
#include "probe/snapshot.h"
#include "target/memstat.h"

#define HISTORY_MIN_POINTS 3	/* a trend needs this many reports */
#define HISTORY_MIN_R2 0.8	/* a steady trend: its line fits at least this well */
/*
 * A steady trend moves its stack by at least this many bytes over the
 * points fitted (by its line). A line fits a few blocks as well as a
 * leak: a stack that gains a 16-byte block now and then (a thread's state,
 * a table filled lazily) over four reports fits with R² 1.00 at +2 B/s.
 * Bytes rather than blocks: under pymalloc one block is a 1 MiB arena of
 * objects. A floor on the growth, not on the rate: a slow leak crosses it
 * as the points span more time.
 */
#define HISTORY_MIN_GROWTH 1024
/*
 * And by this many of its heap blocks (its mean size now): torch's CPU
 * allocator gained a 6 KiB block at one stack in two of four intervals
 * after start-up, R² 0.80, a fixed job's "leak" at +516 B/s. Not for
 * mmaps: one region holds many objects (pymalloc's arenas).
 */
#define HISTORY_MIN_GROWTH_BLOCKS 4
/*
 * And the live blocks as a whole by this share of their level: a heap of
 * 95 MiB that loses 0.2 MiB over four reports holds steady to its reader.
 * A floor on the change, as HISTORY_MIN_GROWTH: a slow rise crosses it as
 * the points span more time, and a leak's stack is judged on its own.
 */
#define HISTORY_MIN_LIVE_SHARE 0.01
/*
 * Start-up. Code that runs for the first time (imports, library loads, a
 * first request) allocates from stacks never seen before, and what it builds
 * (modules, tables, caches) grows the heap for as long as it runs, a leak's
 * shape without being one. An interval in which stacks new in it made at
 * least this share of the allocations ran new code in bulk; trends are
 * measured over the reports after the last one that ended such an interval,
 * and a stack with fewer than HISTORY_MIN_POINTS points there is
 * TREND_STARTUP.
 * Allocations whose stack could not be stored (stack map full) count as
 * from new stacks: a stored one would have been found.
 */
#define HISTORY_STARTUP_SHARE 0.25

struct history;

/* The sample of the live figures that held the most heap blocks (mmaps apart). */
struct history_peak {
	double t_s;
	uint64_t bytes, allocs;		/* the heap blocks */
	const struct snap_live *sites;	/* the stacks then, with outstanding bytes */
	size_t nr;
};

/*
 * The target's memory as read at t_s, when the live blocks held live bytes:
 * usually the moment of the report, else the last reading before it exited.
 */
struct mem_reading {
	struct memstat ms;
	double t_s;
	uint64_t live;
};

struct history *history__new(void);
void history__free(struct history *h);
/* A new image (exec): forget the stacks and the peak, start up anew; the timeline goes on. */
void history__reset(struct history *h);
/* The target's memory when tracing began (nothing was live then). */
void history__set_base(struct history *h, const struct memstat *ms);
/*
 * One report at t_s seconds since tracing began: the snapshot, its totals,
 * the target's memory (NULL when it was never read). 0 or -ENOMEM.
 */
int history__add(struct history *h, double t_s, const struct snapshot *snap,
		 const struct report_totals *totals, const struct mem_reading *mem);
/* A light sample of the live figures (for the peak). 0 or -ENOMEM. */
int history__tick(struct history *h, double t_s, const struct snap_live *live, size_t nr);

/*
 * The growth of one stack, given the age of its oldest block (< 0: unknown).
 * A stack never seen holding bytes is TREND_UNKNOWN with no intervals.
 */
void history__growth(const struct history *h, uint64_t stack_id, uint32_t api, double age_s,
		     struct report_growth *g);
/* The bytes the history holds (-v: memuse.h), and in *stacks how many stacks. */
size_t history__bytes(const struct history *h, size_t *stacks);
/*
 * The same for site i of the snapshot history__add took last (the merge
 * found each site's stack already): no search for a report's 200,000
 * stacks. A site past that snapshot's has no growth.
 */
void history__growth_site(const struct history *h, size_t site, double age_s,
			  struct report_growth *g);
/*
 * The same, but a stack whose points all hold the same bytes is told
 * stable without its line fitted (what the fit would say: a slope the
 * mean's rounding makes, far below HISTORY_MIN_GROWTH): its slope and r2
 * are left 0 and g->unfitted set, for history__growth_site to give where
 * they are shown. Most of a report's 200,000 stacks hold what they did.
 */
void history__trend_site(const struct history *h, size_t site, double age_s,
			 struct report_growth *g);
/*
 * The same for a stack that never grew nor shrank after its first point,
 * told without being caught up (its points neither read nor written):
 * true if it was such a stack and flat, g as history__trend_site's. Kept
 * from report to report while the stack is left alone (history_flat.c).
 */
bool history__flat_site(struct history *h, size_t site, double age_s,
			struct report_growth *g);
/*
 * Site i's stack brought up to date in place (history_merge.c's implicit
 * points made explicit), before its growth is read: a report reads that
 * of every site it lists, which would otherwise each be caught up in a copy.
 */
void history__catch_up_site(struct history *h, size_t site);
/*
 * Site i's stack asked of the memory ahead of reading it, a report's
 * 200,000 of them each a few cache misses apart: stage 0 its index, 1 its
 * figures (the index read).
 */
void history__prefetch_site(const struct history *h, size_t site, int stage);
/* The growth of the live total. */
void history__live_growth(const struct history *h, struct report_growth *g);
/*
 * The sites of snap (the last one added) that allocated most often, freed or
 * not, most calls first: up to max of them into out, their rates into rates.
 * Returns how many. -ENOMEM.
 */
int history__churn(const struct history *h, const struct snapshot *snap,
		   const struct snap_site **out, struct report_rate *rates, size_t max);
/*
 * Folding (history_fold.c): the sites of snap (the last one added) that no
 * later report needs by themselves, should their retired figures be
 * folded into the totals: they hold nothing, and are neither among the
 * max_churn that allocated most (history__churn's, which they can never
 * overtake: those only grow) nor among pins (the stacks the peak lists).
 * Their indexes into out (room for snap->nr): how many. It keeps the
 * churn's cut-off for history_fold__unseen.
 */
size_t history_fold__pick(struct history *h, const struct snapshot *snap,
			  size_t max_churn, const struct snap_live *pins, size_t nr_pins,
			  uint32_t *out);
/*
 * The stacks of the site keys folded (retired__site_key, n of them) go:
 * they held nothing and their totals are the snapshot's forgotten ones now.
 * One that comes back starts anew, its life from the report before it held
 * bytes again (as any stack's), its totals those it had (snap_site's
 * folded_*), and it is no new code (start-up). 0 or -ENOMEM.
 */
int history_fold__drop(struct history *h, const uint64_t *keys, size_t n);
/*
 * Folding a retired site at a reading, unread: has the history never seen
 * (stack_id, api), and are its figures (allocs, bytes) below the churn's
 * at the last pick (they can never be listed then, history_fold__pick)?
 */
bool history_fold__unseen(const struct history *h, uint64_t stack_id, uint32_t api,
			  uint64_t allocs, uint64_t bytes);
/* Is the churn's cut-off known (a pick made it), for history_fold__floor? */
bool history_fold__cut_known(const struct history *h);
/*
 * Before a pick makes it: a cut-off at figures (allocs, bytes) that max_churn
 * sites have reached already (the retired store's max_churn-th): no site
 * below them can be among the churn's at the next pick, whose figures only
 * grow; a torch import retires 450,000 sites before its first report, which
 * could fold none of them unread and held them all while it was built.
 */
void history_fold__floor(struct history *h, uint64_t allocs, uint64_t bytes);
/* Start-up (above) as of the last report. */
const struct report_startup *history__startup(const struct history *h);
/* The sample that held the most heap blocks; NULL before any sample. */
const struct history_peak *history__peak(const struct history *h);
/* One row per report, in order, and the figures at the start. */
const struct report_sample *history__samples(const struct history *h, size_t *nr);
const struct report_sample *history__base(const struct history *h);

/*
 * The last report (history__add) was made after the target exited: a stack
 * idle in that last interval is judged rising or not on the points before.
 */
/*
 * -k: start-up is the first interval only, where every stack is new. The
 * kernel was running long before: a later burst of code paths never seen
 * is no program starting, and its trends must not wait for one.
 */
void history__startup_first(struct history *h);

void history__exited(struct history *h);

/* Least-squares fit and trend of the points (t, y); exported for the verdict. */
void history_fit__classify(const double *t, const double *y, size_t n, struct report_growth *g);
/*
 * The same, whether it still rises told by the first active points of the n
 * fitted; by less than HISTORY_MIN_GROWTH over them, stable.
 */
void history_fit__classify_until(const double *t, const double *y, size_t n, size_t active,
			     struct report_growth *g);

#endif
