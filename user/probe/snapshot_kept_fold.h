/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Folding between readings, over the carried reading (snapshot_kept.h):
 * snapshot_kept_fold.c.
 */
#ifndef SNAPSHOT_KEPT_FOLD_H
#define SNAPSHOT_KEPT_FOLD_H

#include "snapshot_kept.h"

/*
 * Between readings, once the retired store has min sites more than at the
 * last reading or fold (snapshot_kept_fold__due): the sites a reading
 * would fold unread fold now, by fold's rule, and their stacks go; the next
 * reading counts them in its unread_*. How many folded.
 */
bool snapshot_kept_fold__due(struct probes *p, size_t min);
/*
 * The retired store's size now is what its growth is measured from: after
 * a fold of its own (reclaim__fold), which a reading would not see.
 */
void snapshot_kept_fold__mark(struct probes *p);
size_t snapshot_kept_fold__unread(struct probes *p, const struct snap_fold *fold);
/*
 * The carried reading, held (snapshot__free hands it back), if it is
 * reading number reading and no report holds it; else NULL.
 */
const struct snapshot *snapshot_kept_fold__hold(struct probes *p, uint64_t reading);
/* The retired store's n-th entry by allocations (retired__nth_most), under its lock. */
bool snapshot_kept_fold__nth_most(struct probes *p, size_t n, uint64_t *allocs, uint64_t *bytes);

#endif
