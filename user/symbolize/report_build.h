/* SPDX-License-Identifier: GPL-2.0 */
/* Turns an aggregate into a symbolized report (needs the symbolizer). */
#ifndef REPORT_BUILD_H
#define REPORT_BUILD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "allocator/allocator.h"
#include "analyze/aggregate.h"
#include "analyze/sites.h"
#include "model/frame_table.h"
#include "model/report.h"
#include "python/pycode.h"
#include "symbolize.h"
#include "target/modules.h"

/* What the report says about the run, beside the figures. */
struct report_meta {
	int pid;
	bool kernel;		/* -k: the kernel's allocations (report.kernel) */
	const char *command;	/* borrowed by the report: must outlive it; may be NULL */
	double duration_s;
	bool final;
	uint64_t older_ms;
	size_t top;
	const struct maps *maps;	/* borrowed by the report, like command; may be NULL */
	const struct report_image_maps *image_maps;	/* --follow: borrowed too; may be NULL */
	size_t nr_image_maps;
	const struct report *freed;	/* borrowed too; may be NULL */
	bool folded_allocs;
	const struct report_python *python;	/* borrowed; NULL: not a Python target */
	enum report_allocator allocator;
	const struct pycode *pycode;	/* names Python frames; only while building */
	const struct alloc_wrapper *wrappers;	/* operator new seen at malloc; borrowed */
	size_t nr_wrappers;
	bool all_stacks;	/* --all-stacks: the files get every stack */
	bool folded_by_process;	/* --folded-by-process: folded stacks rooted at their process */
	bool brief;		/* a periodic text report (report.brief) */
	bool show_allocs;	/* -a: each stack's blocks (report.show_allocs) */
	uint32_t allocs_per_stack;
	bool sort_count;	/* --sort count (report.sort_count) */
	bool full_names;	/* --full-names (report.full_names) */
	struct images *images;	/* --follow: an exec'd process's own files; may be NULL */
	struct sites_own own;	/* --own: the user's code (analyze/sites.h); borrowed */
	const struct report_sampling *sampling;	/* borrowed; NULL: exact */
	/*
	 * Where the stacks' frames are kept, each distinct one once
	 * (report_stack.refs); it must outlive the reports built. NULL: each
	 * stack a copy of its own.
	 */
	struct frame_table *frames;
};

/*
 * One report_stack per site of agg (every outstanding site, not only the top
 * ones: the JSON and folded writers want them all), in agg's order, each ip
 * resolved by sym among mods. sym may be NULL: frames then carry addresses
 * only. Free with report__free. 0 or -errno.
 */
int report_build__report(const struct aggregate *agg, struct symbolizer *sym, const struct modules *mods,
		  const struct report_meta *meta, struct report **out);

/*
 * report_build__report's stacks alone, into *out (*nr of them; free each with the
 * report that takes them): the churn and peak stacks of an analysis.
 */
int report_build__stacks(const struct aggregate *agg, struct symbolizer *sym,
			 const struct modules *mods, const struct report_meta *meta,
			 struct report_stack **out, size_t *nr);

/*
 * report_build__report in two steps, for a report that will not print every stack:
 * the figures of every stack, frameless, operator new's frames taken off
 * (new or new[] for the api); then, for the stacks with want[i] (NULL: all
 * of them), the frames, and the api of a function with two names as the
 * caller imported it (memalign for aligned_alloc). Resolving a deep stack
 * costs far more than its figures, and the text report shows only a few
 * (report_text__shown). On an error the report is left for report__free.
 * With carry (NULL: none), the sites of agg being snap's, what operator
 * new's frames were is kept from report to report (report_sites__unwrapped).
 * 0 or -errno.
 */
struct report_sites_carry;
struct snapshot;
int report_build__figures(const struct aggregate *agg, const struct modules *mods,
			  const struct report_meta *meta, const struct snapshot *snap,
			  struct report_sites_carry *carry, struct report **out);
int report_build__symbolize(struct report *r, const struct aggregate *agg, struct symbolizer *sym,
		      const struct modules *mods, const struct report_meta *meta,
		      const bool *want);

/*
 * Sites (analyze/sites.h) of r's stacks, built from agg by
 * report_build__figures: report_sites__frames finds each stack's site
 * frame, without resolving the rest of its frames (see report_sites.c);
 * report_sites__group, once the stacks have their growth when there is an
 * analysis (under sampling it is judged by site: insight.c), groups them
 * with sites__group, which also marks the stacks the files leave out unless
 * meta->all_stacks. 0 or -errno.
 */
struct report_sites_carry;
int report_sites__frames(struct report *r, const struct aggregate *agg, struct symbolizer *sym,
			 const struct modules *mods, const struct report_meta *meta,
			 const struct snapshot *snap, struct report_sites_carry *carry);
/*
 * The site frames report_sites__frames keeps from report to report, by
 * the sites' indexes in snap, a reading carried over (probe/snapshot_kept.h):
 * those found in a Python stack, lent to the reports (site_frame_kept).
 * NULL carry: none kept. The carry must outlive the reports that borrow.
 */
struct report_sites_carry *report_sites__carry_new(void);
void report_sites__carry_free(struct report_sites_carry *c);
/*
 * unwrap()'s answer for site (its wrapper frames, its api), kept from a
 * report before, into st: true if it holds (the same target modules, by
 * count, and wrappers). report_sites__keep_unwrapped keeps st's.
 */
bool report_sites__unwrapped(struct report_sites_carry *c, const struct snapshot *snap,
			     const struct report_meta *meta, const struct modules *mods,
			     const struct snap_site *site, struct report_stack *st);
void report_sites__keep_unwrapped(struct report_sites_carry *c, const struct snapshot *snap,
				  const struct snap_site *site, const struct report_stack *st);
/*
 * The site frame kept for site, if it holds, lent to st (site_frame_kept)
 * with its figures, while its memo is in the cache: report_sites__frames
 * passes over it then. True if lent.
 */
bool report_sites__lend(struct report_sites_carry *c, const struct snapshot *snap,
			const struct report_meta *meta, const struct modules *mods,
			const struct snap_site *site, struct report_stack *st);
/* What report_sites__lend and _unwrapped will read of site's memo, asked of the memory ahead. */
void report_sites__prefetch(const struct report_sites_carry *c, const struct snapshot *snap,
			    const struct snap_site *site);
/* The bytes it holds (-v); 0 for NULL. */
size_t report_sites__carry_bytes(const struct report_sites_carry *c);
int report_sites__group(struct report *r, const struct report_meta *meta);

/*
 * The sites of snap that hold nothing outstanding but allocated something
 * (all freed, or with -o all younger), as a report whose stacks carry only
 * their totals, total_bytes descending: what a heap profile's alloc figures
 * need beside the outstanding stacks. meta as for report_build__report. 0 or -errno.
 */
int report_build__freed(const struct snapshot *snap, struct symbolizer *sym,
			const struct modules *mods, const struct report_meta *meta,
			struct report **out);

#endif
