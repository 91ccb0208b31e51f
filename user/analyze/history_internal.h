/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The history's state, shared by history.c (the stacks, start-up by
 * stack, trends) and history_sites.c (start-up and growth by site, under
 * sampling). Not for other modules: history.h is the interface.
 */
#ifndef HISTORY_INTERNAL_H
#define HISTORY_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include "history.h"
#include "history_points.h"
#include "util/idmap.h"

#define NONE UINT32_MAX		/* hstack.first: has never held bytes */

struct hstack {
	uint64_t stack_id;
	uint32_t api;
	uint32_t first;		/* its first kept point, or NONE */
	uint32_t grew, shrank, intervals;
	bool idle;		/* it neither allocated nor freed in the last interval */
	/*
	 * Its points' last run holds bytes: a catch-up writes nothing, and
	 * need not read them (a cache miss for each of 700,000 stacks a report).
	 */
	bool points_end_at_bytes;
	uint64_t bytes, blocks;	/* outstanding at the last report (blocks: not the live total's) */
	double var;		/* sampling: the variance of bytes then (bytes^2); exact: 0 */
	uint64_t iv_allocs;	/* allocations in the last interval (sampling: estimated) */
	uint64_t total_allocs, total_bytes;	/* at the last report */
	double last_allocs_per_s, last_bytes_per_s;
	double t_zero;		/* it held nothing at this report: its life starts here */
	struct history_points pts;	/* bytes at the kept points, as runs; none until it holds some */
	/*
	 * Brought up to date to report at (history.reports then); the points
	 * from wrote on were kept since, and hold its bytes (history_merge.c).
	 * A count of reports in 32 bits, as intervals already is (2^32 reports:
	 * 50 days of reports every millisecond, the shortest interval); the
	 * stack is 120 bytes, not 128, one for each of 300,000 to 500,000
	 * stacks at a torch job's reports.
	 */
	uint32_t at;
	uint32_t wrote;
};

/* history.of_site: the site's stack was folded. */
#define HSTACK_GONE UINT32_MAX

struct history {
	struct hstack *stacks;	/* in the order they came */
	size_t nr, cap;
	struct idmap index;	/* site key (retired__site_key) -> index in stacks */
	uint64_t merged;	/* the snapshot's reading merged last (snapshot.reading) */
	uint64_t merged_whole;	/* merges of every site (merge_all): the carry not taken */
	/* The snapshot merged last: its site i is stacks[of_site[i]] (history__growth_site). */
	uint32_t *of_site;
	size_t nr_of_site, cap_of_site;
	/*
	 * A fold moved the stacks (history_fold__drop): of_site's first
	 * folded_sites name their stacks' new indexes (HSTACK_GONE: folded),
	 * for the next merge to move by the snapshot's (snapshot.moved);
	 * nr_of_site is 0 until then.
	 */
	size_t folded_sites;
	/*
	 * The flat stacks told (history_flat.c), by site as of_site: each
	 * its epoch and intervals; flat_epoch the one that holds now (0: none).
	 */
	uint64_t *flat;
	size_t cap_flat;
	uint32_t flat_epoch;
	size_t nr_points, points_bytes;	/* stacks whose points are kept (pts), their bytes */
	struct hstack live;	/* the live total, as a stack of its own */
	double t[HISTORY_POINTS];	/* times of the kept points */
	uint32_t npoints;
	uint32_t stride;	/* every stride-th report is a kept point */
	uint64_t reports;	/* since the last reset */
	double t_last;		/* of the last report; 0 before any */
	struct report_sample base;
	struct report_sample *samples;
	size_t nr_samples, cap_samples;
	struct history_peak peak;
	struct snap_live *peak_sites;
	size_t peak_cap;
	bool peak_known;
	struct report_startup startup;
	uint64_t prev_map_full;	/* stacks_map_full at the last report */
	bool exited;		/* the last report was made after the target exited */
	bool first_only;	/* start-up is the first interval only (-k) */
	/*
	 * Sampling: start-up is judged by the sites (history_sites.c), not by
	 * the stacks; the keys of the sites seen so far, sorted.
	 */
	bool by_site;
	uint64_t *seen;
	size_t nr_seen, cap_seen;
	/*
	 * Folding (history_fold.c): the churn's last listed figures at the
	 * last pick; a stack below them will never be listed unless it
	 * allocates again. Not known with fewer stacks than the churn lists.
	 */
	bool cut_known;
	uint64_t cut_allocs, cut_bytes;
};

/*
 * Site i of the snapshot merged last: its stack, or NULL (none, or folded:
 * a report folds before it is built, run/reports.c, and its other sites
 * keep theirs through of_site).
 */
static inline struct hstack *history__stack_of_site(const struct history *h, size_t site)
{
	return site < h->nr_of_site && h->of_site[site] != HSTACK_GONE ?
		       &h->stacks[h->of_site[site]] : NULL;
}

/*
 * The flat stacks carried over (history_flat.c). The room for nr sites,
 * zeroed: 0 or -1. What was kept holds no more (a new epoch); site's
 * stack was updated (forget); a site moved (move); all of it (free).
 */
int history_flat__reserve(struct history *h, size_t nr);
void history_flat__new_epoch(struct history *h);
void history_flat__forget(struct history *h, size_t site);
void history_flat__move(struct history *h, size_t from, size_t to);
void history_flat__free(struct history *h);
/* history__flat_site's answer for site kept from a report before, into g: true if kept. */
bool history_flat__kept(const struct history *h, size_t site, double age_s,
			struct report_growth *g);
/* Site's stack told flat now (g: history__flat_site's answer): kept for the reports after. */
void history_flat__keep(struct history *h, size_t site, const struct report_growth *g);
/* Is site's answer kept (history_flat__kept would say)? And its entry asked of the memory ahead. */
bool history_flat__held(const struct history *h, size_t site);
void history_flat__prefetch(const struct history *h, size_t site);

/* The allocations of one interval, and those of the stacks first seen in it. */
struct history_interval {
	uint64_t allocs;
	uint32_t new_stacks;
	uint64_t new_allocs;
};

/*
 * The merge (history_merge.c). The snapshot's sites into the stacks at
 * report h->reports, the interval's allocations counted into iv; every
 * stack brought up to date, or of a snapshot that carries the last one
 * merged over, those of the changed sites. 0 or -ENOMEM.
 */
int history_merge__run(struct history *h, const struct snapshot *snap, double t_s,
		       uint32_t point, struct history_interval *iv);
/* One stack's figures at report h->reports (it is brought up to date first). */
int history_merge__update(struct history *h, struct hstack *s, uint64_t bytes, uint64_t allocs,
			  uint64_t total, double t_s, uint32_t point);
void history_merge__stack_init(struct hstack *s, uint64_t stack_id, uint32_t api);
/*
 * The reports before upto that left s alone made explicit: the same
 * figures, idle. 0, or -ENOMEM with s left as it was (implicit still:
 * history_merge__current reads it all the same).
 */
int history_merge__catch_up(struct history *h, struct hstack *s, uint64_t upto);
/*
 * s as of the last report: itself when up to date, else a copy brought up
 * to date in tmp; its kept points in vals (HISTORY_POINTS of them), from
 * s->first on. NULL: NULL.
 */
const struct hstack *history_merge__current(const struct history *h, const struct hstack *s,
					    struct hstack *tmp, uint64_t *vals);
/* The stack of (stack_id, api), or NULL. */
struct hstack *history_merge__find(const struct history *h, uint64_t stack_id, uint32_t api);

/*
 * The growth of s (a stack, or a site's sum made by history_sites.c), its
 * kept points in vals, as history__growth.
 */
void history__growth_of(const struct history *h, const struct hstack *s, const uint64_t *vals,
			double age_s, struct report_growth *g);
/*
 * Start-up as of the interval that ended at t_s, given its share of
 * allocations from new code; later: it is not the first interval.
 */
void history__startup_judge(struct history *h, double t_s, double share, bool later);

#endif
