/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What a report may fold (insight_fold.c): its sites that no later report
 * lists by themselves, and the rule a reading folds retired sites unread by.
 */
#ifndef INSIGHT_FOLD_H
#define INSIGHT_FOLD_H

#include "insight.h"

/*
 * The sites of snap (the last one added) whose retired figures a report
 * may fold (history_fold__pick: none the churn or the peak will list),
 * their indexes into out (room for snap->nr): how many.
 */
size_t insight_fold__pick(struct insight *in, const struct snapshot *snap, uint32_t *out);
/* Before a reading: the peak's stacks, which insight_fold__foldable never folds. */
void insight_fold__prepare(struct insight *in);
/*
 * Before the first pick: the churn's cut-off from (allocs, bytes), the
 * INSIGHT_CHURN-th retired site's figures (history_fold__floor); true if
 * one is wanted, else the cut is known already.
 */
bool insight_fold__wants_floor(const struct insight *in);
void insight_fold__floor(struct insight *in, uint64_t allocs, uint64_t bytes);
/*
 * May a reading fold a retired site unread (snapshot_kept.h's snap_fold):
 * never seen by the history, below the churn's cut-off, not the peak's?
 */
bool insight_fold__foldable(const struct insight *in, uint64_t stack_id, uint32_t api,
			    uint64_t allocs, uint64_t bytes);
/* Those folded (their site keys): their stacks leave the history (history_fold__drop). */
int insight_fold__drop(struct insight *in, const uint64_t *keys, size_t n);

#endif
