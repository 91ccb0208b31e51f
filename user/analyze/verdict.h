/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Leak or not: the live bytes memleakbpf accounts for, against the memory
 * the target really holds. Pure: it works on the history's samples.
 */
#ifndef VERDICT_H
#define VERDICT_H

#include <stdbool.h>
#include <stddef.h>
#include "model/report.h"

/*
 * Retention is worth a verdict from this much anonymous memory that holds
 * no live block, and only when it is at least half of the anonymous growth.
 */
#define VERDICT_MIN_RETAINED (16ull << 20)
/*
 * Allocations not tracked count as growth when more of them went untracked
 * in this many intervals at least (a trend's HISTORY_MIN_POINTS reports
 * make two intervals), and in half of those since the first.
 */
#define VERDICT_MIN_RISES 2

/*
 * Judge from base (the start of tracing; its mem may be false), the
 * samples (one per report, in order, with their drops), the live total's
 * growth, how many stacks grow, and whether the target was attached to (-p).
 */
void verdict__judge(const struct report_sample *base, const struct report_sample *samples,
		    size_t nr, const struct report_growth *live, size_t growing, bool attached,
		    struct report_memory *m);

/*
 * -k: the kernel has no process memory to set its live blocks against:
 * their growth, and the stacks', alone decide.
 */
void verdict__kernel(struct report_memory *m);

/*
 * pymalloc's arenas (a Python target's, read from its memory) that are at
 * least half free, by VERDICT_MIN_RETAINED or more, are fragmentation too:
 * they count as live mmaps, but most of them holds no object. Sets
 * m->pymalloc and makes the verdict say fragmentation, whatever the trends.
 */
void verdict__pymalloc(struct report_memory *m, const struct report_pyarenas *a);

/*
 * The target exited (m->exited) with no block outstanding, under -c (not
 * attached: nothing allocated before tracing began) and on complete
 * figures: no leak, though too few reports for a trend were made (jq's
 * run of 0.7 s was "too early"). Sets m->all_freed and VERDICT_NO_LEAK
 * over an unknown trend or start-up; other verdicts say more.
 */
void verdict__all_freed(struct report_memory *m, uint64_t outstanding_allocs);

/*
 * g: the last leak an earlier report of this image named (none: g->stacks
 * is 0). When no stack grows now, that is said: "no leak seen" becomes
 * VERDICT_STOPPED, and fragmentation keeps its verdict but no longer says
 * "not a leak". A leak, growth of the live total, start-up or incomplete
 * figures are left as they are: they say more.
 */
void verdict__stopped(struct report_memory *m, const struct report_grew *g);

/*
 * Does the anonymous memory hold VERDICT_MIN_RETAINED without live blocks
 * (the allocator's, not pymalloc's)? Never when allocations went untracked:
 * their blocks are in it.
 */
bool verdict__retained(const struct report_memory *m);

/* The same amount, while allocations went untracked: theirs, or the allocator's. */
bool verdict__unexplained(const struct report_memory *m);

/*
 * A --max-allocs that holds every block that may have been live at once
 * (those tracked and every one the full table dropped), a power of two; 0
 * when the table never was full.
 */
uint64_t verdict__max_allocs_hint(const struct report_totals *t);

/* "leak", "fragmentation", ...: the JSON value. */
const char *verdict__name(enum report_verdict v);

#endif
