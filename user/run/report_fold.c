// SPDX-License-Identifier: GPL-2.0
/*
 * Folding after a report (report_fold.h). A torch job's import retires
 * some 450,000 stacks of an allocation or two; each kept its place in the
 * stack cache, the retired store, the history and the carried reading for
 * the rest of the run, 850 MiB of our heap at its end for 210,000 stacks
 * live. The analysis picks the sites no later report will list
 * (insight_fold__pick), the retired store folds those whose figures are
 * still what the report took in (reclaim__fold), and the history lets
 * their stacks go (insight_fold__drop); one that comes back takes its figures
 * back, and every figure since tracing began stays exact.
 */
#include <stdio.h>
#include <stdlib.h>
#include "analyze/insight.h"
#include "analyze/insight_fold.h"
#include "cli/opts.h"
#include "probe/probes.h"
#include "probe/snapshot_kept_fold.h"
#include "report/writers.h"
#include "report_fold.h"

/*
 * Fold only this many retired sites at least, and a thirty-second of the
 * reading's: each fold has the next reading move its sites (snapshot_kept.c's
 * compact: its index of sites made anew, every slot's and entry's site).
 * At an eighth, a torch job's loop left 40,000 to 90,000 retired stacks
 * unfolded from one report to the next (300,000 in the cache and the
 * history at the peak's report for 210,000 live), some 1 KiB each.
 */
#define FOLD_MIN 1024
#define FOLD_SHARE 32

/*
 * Not where an output lists every stack freed (pprof's and --html's
 * allocated space, --snapshot-dir's profiles), nor by process (--follow:
 * the forgotten figures are no process's), nor sampled (the retired store
 * keeps weights), nor in the kernel (-k: its own tables).
 */
static bool allowed(const struct tracer *tr)
{
	const struct opts *o = tr->opts;

	return !tr->kmem && !o->sample_mode && !o->follow && !o->snapshot_dir &&
	       !writers__need(o->outputs, WRITER_MAPS | WRITER_FREED);
}

/* snap's size: the fewest sites worth a fold. */
static size_t fold_min(const struct snapshot *snap)
{
	return FOLD_MIN > snap->nr / FOLD_SHARE ? FOLD_MIN : snap->nr / FOLD_SHARE;
}

/*
 * The sites picked that did not fold, to try again between reports: most
 * held nothing but still had their slot (the sweep retires a site only
 * when its table fills), so the report found no retired figures to fold,
 * and at the next they were 300,000 stacks in the cache and the history
 * on a torch job. Only over a carried reading (its indexes stay). sites
 * is taken (NULL: none kept).
 */
static void keep_for_later(struct tracer *tr, const struct snapshot *snap, uint32_t *sites,
			   size_t nr, size_t n)
{
	free(tr->fold_later);
	tr->fold_later = NULL;
	tr->nr_fold_later = 0;
	if (!sites || !snap->held || nr == n) {
		free(sites);
		return;
	}
	tr->fold_later = sites;
	tr->nr_fold_later = nr;	/* those folded fail again: their entries are gone */
	tr->fold_reading = snap->reading;
}

/* The picks of snap (sites, nr) folded where their retired figures are those snap took in. */
static size_t fold_picked(struct tracer *tr, const struct snapshot *snap, const uint32_t *sites,
			  size_t nr)
{
	uint64_t *keys = malloc((nr ?: 1) * sizeof(*keys));
	size_t n = 0;

	if (keys)
		n = reclaim__fold(tr->probes, snap, sites, nr, fold_min(snap), keys);
	/*
	 * The store's growth from here: after a report's fold of 220,000
	 * sites, measured from before it, none folded between reports.
	 */
	snapshot_kept_fold__mark(tr->probes);
	if (n && insight_fold__drop(tr->ins, keys, n))
		fprintf(stderr, "memleakbpf: out of memory folding the history's retired stacks\n");
	free(keys);
	return n;
}

/*
 * The picks (sites, nr) less those that came back since a fold (their
 * folded figures are back with them): folding one again only has the
 * reading after it make it anew, read its stack, take its folded figures
 * back and compact the sites after it, when it comes back again.
 * v_stacks' 262,144 stacks, each allocating once a cycle of 8 rounds,
 * were folded and made anew, 30,000 to 130,000 a report. A site that
 * never came back (a torch import's) still folds. How many are left.
 */
static size_t spare_returning(const struct snapshot *snap, uint32_t *sites, size_t nr)
{
	size_t n = 0;

	for (size_t i = 0; i < nr; i++) {
		const struct snap_site *s = &snap->sites[sites[i]];

		if (!s->folded_allocs && !s->folded_bytes)
			sites[n++] = sites[i];
	}
	return n;
}

void report_fold__run(struct tracer *tr, const struct snapshot *snap)
{
	uint32_t *sites;
	size_t nr = 0, n = 0, picked = 0;

	if (!allowed(tr))
		return;
	sites = malloc((snap->nr ?: 1) * sizeof(*sites));
	if (sites) {
		/* Each report: the churn's cut-off, for the next reading's folds too. */
		picked = insight_fold__pick(tr->ins, snap, sites);
		nr = spare_returning(snap, sites, picked);
		/* Even with too few to fold: the stacks of those folded unread go. */
		n = fold_picked(tr, snap, sites, nr);
	}
	if ((n || snap->unread_sites || picked > nr) && tr->opts->verbose)
		fprintf(stderr, "memleakbpf: folded %zu retired sites into the totals (of %zu picked, "
			"%zu back since a fold spared), and %llu more unread at the reading\n",
			n, picked, picked - nr, (unsigned long long)snap->unread_sites);
	keep_for_later(tr, snap, sites, nr, n);
}

/*
 * How long a report waits for the sweep before its reading: one took up
 * to a second on a loaded machine in a torch import (0.1 to 0.2 s of
 * CPU). Past it, the reading goes on: only less folds.
 */
#define SWEEP_WAIT_MS 3000

/*
 * A site that holds nothing folds only once a sweep has retired its slot,
 * and sweeps came only when the site table reached its mark, which a
 * torch job's loop never did: the 57,000 to 67,000 sites freed at the end
 * of its import kept their slots, and with them their places in the stack
 * cache, the history and the carried reading (some 1 KiB each), while
 * the reports after them and the last were built (peak RSS 372 to 381 MiB
 * against 341 to 352 with this sweep). A sweep changes no figure
 * (probe/reclaim.c); it costs the sweeper's CPU, not the report's.
 */
void report_fold__sweep_first(struct tracer *tr)
{
	if (!allowed(tr))
		return;
	reclaim__sweep_wait(tr->probes, SWEEP_WAIT_MS);
}

/* Between reports: the last report's picks that could not fold, again. */
static size_t fold_later(struct tracer *tr)
{
	const struct snapshot *snap;
	size_t n;

	if (!tr->nr_fold_later)
		return 0;
	snap = snapshot_kept_fold__hold(tr->probes, tr->fold_reading);
	if (!snap) {	/* a reading since (its report picks anew), or one runs */
		keep_for_later(tr, NULL, NULL, 0, 0);
		return 0;
	}
	n = fold_picked(tr, snap, tr->fold_later, tr->nr_fold_later);
	snapshot__free((struct snapshot *)snap);	/* handed back */
	if (n)	/* once: the others wait for the next report's picks */
		keep_for_later(tr, NULL, NULL, 0, 0);
	return n;
}

/*
 * Between reports: once the retired store has this many sites more than at
 * the last reading (a torch import retires 450,000 between two reports, one
 * or two allocations each), those a reading would fold unread fold now,
 * and the last report's picks that could not fold are tried again.
 */
#define FOLD_LOOP_MIN 8192

void report_fold__loop(struct tracer *tr)
{
	struct snap_fold rule;
	size_t n, later;

	/* Only over the carried reading (reports.c's build). */
	if (tr->opts->older_ms || tr->opts->show_allocs || !allowed(tr) ||
	    !snapshot_kept_fold__due(tr->probes, FOLD_LOOP_MIN))
		return;
	n = snapshot_kept_fold__unread(tr->probes, report_fold__rule(tr, &rule));
	later = fold_later(tr);
	if ((n || later) && tr->opts->verbose)
		fprintf(stderr, "memleakbpf: folded %zu retired sites unread between reports, and %zu "
			"the last report picked\n", n, later);
}

static bool foldable(void *ctx, uint64_t stack_id, uint32_t api, uint64_t allocs, uint64_t bytes)
{
	return insight_fold__foldable(ctx, stack_id, api, allocs, bytes);
}

const struct snap_fold *report_fold__rule(struct tracer *tr, struct snap_fold *rule)
{
	uint64_t allocs, bytes;

	if (!allowed(tr))
		return NULL;
	insight_fold__prepare(tr->ins);
	/* Before the first report's pick: the retired store's own cut-off. */
	if (insight_fold__wants_floor(tr->ins) &&
	    snapshot_kept_fold__nth_most(tr->probes, INSIGHT_CHURN, &allocs, &bytes))
		insight_fold__floor(tr->ins, allocs, bytes);
	*rule = (struct snap_fold){ .foldable = foldable, .ctx = tr->ins };
	return rule;
}
