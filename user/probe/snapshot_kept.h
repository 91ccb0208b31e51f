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
int snapshot_kept__collect(struct probes *p, struct snapshot **out);
/* What the carried reading holds; when the probes go (reclaim__free, through rc.kept_free). */
void snapshot_kept__free(struct probes *p);
/* The bytes it holds beside its snapshot's sites (-v). */
size_t snapshot_kept__bytes(const struct probes *p);

#endif
