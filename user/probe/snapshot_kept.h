/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A reading of the BPF tables carried over from report to report: the
 * sites of the last reading stay at their indexes, holding their stacks;
 * a reading reads the slots and the retired sites that changed again, and
 * the stacks of new sites only, and says which sites changed, so that what
 * follows (the order, the history, Python's code) touches only those.
 */
#ifndef SNAPSHOT_KEPT_H
#define SNAPSHOT_KEPT_H

#include "snapshot.h"

struct probes;

/*
 * snapshot__collect's snapshot without older_ns, carried over from the
 * last reading: each figure as snapshot__collect gives it, and with
 * snapshot.reading, follows, changed and fresh set. When the carried
 * reading is in use (a snapshot of it not freed yet), a snapshot of its
 * own. Free it with snapshot__free, which hands it back. 0 or -errno.
 */
/*
 * Folding at a reading (reclaim__fold's, earlier): a retired site no
 * reading took in, none of whose figures a report will list by itself
 * (foldable says, as the history knows), goes to the forgotten figures
 * without a site of its own; the snapshot counts it in unread_*. A torch
 * import retires 200,000 such sites between two reports.
 */
struct snap_fold {
	bool (*foldable)(void *ctx, uint64_t stack_id, uint32_t api, uint64_t allocs,
			 uint64_t bytes);
	void *ctx;
};

/* fold: NULL, none folds. */
int snapshot_kept__collect(struct probes *p, const struct snap_fold *fold, struct snapshot **out);
/* What the carried reading holds; when the probes go (reclaim__free, through rc.kept_free). */
void snapshot_kept__free(struct probes *p);
/* The bytes it holds beside its snapshot's sites (-v). */
size_t snapshot_kept__bytes(const struct probes *p);
/* Of its per-slot arrays, the bytes whose pages it has not written: malloc has them, our RSS not. */
size_t snapshot_kept__unwritten_bytes(const struct probes *p);

#endif
