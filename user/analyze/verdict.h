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
 * Judge from base (the start of tracing; its mem may be false), the
 * samples (one per report, in order), the live total's growth, how many
 * stacks grow, and whether the target was attached to (-p).
 */
void verdict__judge(const struct report_sample *base, const struct report_sample *samples,
		    size_t nr, const struct report_growth *live, size_t growing, bool attached,
		    struct report_memory *m);

/*
 * pymalloc's arenas (a Python target's, read from its memory) that are at
 * least half free, by VERDICT_MIN_RETAINED or more, are fragmentation too:
 * they count as live mmaps, but most of them holds no object. Sets
 * m->pymalloc and makes the verdict say fragmentation, whatever the trends.
 */
void verdict__pymalloc(struct report_memory *m, const struct report_pyarenas *a);

/* Does the anonymous memory hold VERDICT_MIN_RETAINED without live blocks (glibc's kind)? */
bool verdict__retained(const struct report_memory *m);

/* "leak", "fragmentation", ...: the JSON value. */
const char *verdict__name(enum report_verdict v);

#endif
