// SPDX-License-Identifier: GPL-2.0
/*
 * Folding unread between readings (snapshot_kept.h). A reading folds the
 * retired sites that no reading took in and that no report will list by
 * themselves (read_retired's fold_unread), and their stacks go once the
 * reading's sites have read theirs (let_go_unread); until that reading
 * they stayed: a report that falls in a torch job's import held 331,000 of
 * them beside the 415,000 of the stack cache. Here the same sites, by the
 * same rule, fold as soon as the
 * retired store has grown past a bound since the last reading, and their
 * stacks go at once; the next reading counts them among its unread ones,
 * as if it had folded them itself, so every figure stays what it was.
 */
#include <pthread.h>
#include <stdatomic.h>
#include "probes.h"
#include "probes_internal.h"
#include "snapshot_kept_fold.h"
#include "snapshot_kept_internal.h"
#include "model/retired.h"
#include "util/idmap.h"

bool snapshot_kept_fold__due(struct probes *p, size_t min)
{
	const struct snapshot_kept *k = p->rc.kept;
	bool due;

	if (!k || p->sample.mode)
		return false;
	pthread_mutex_lock(&p->rc.retired_lock);
	due = retired__nr_sites(p->rc.retired) >= k->fold_mark + min;
	pthread_mutex_unlock(&p->rc.retired_lock);
	return due;
}

void snapshot_kept_fold__mark(struct probes *p)
{
	struct snapshot_kept *k = p->rc.kept;

	if (!k)
		return;
	pthread_mutex_lock(&p->rc.retired_lock);
	k->fold_mark = retired__nr_sites(p->rc.retired);
	pthread_mutex_unlock(&p->rc.retired_lock);
}

/* A retired entry changed since the last reading, to fold unread as a reading would. */
static bool fold_one(struct snapshot_kept *k, struct probes *p, const struct snap_fold *fold,
		     const struct retired_site *s)
{
	return s->seq > k->retired_seq && snapshot_kept__fold_unread(k, p, fold, s);
}

/* Under stacks_lock and retired_lock: those folded, their stacks let go of but the reading's. */
static size_t fold_all(struct snapshot_kept *k, struct probes *p, const struct snap_fold *fold)
{
	struct retired *r = p->rc.retired;
	size_t n = 0;

	for (size_t i = 0; i < retired__nr_sites(r); i++) {
		const struct retired_site *s = retired__site_at(r, i);

		if (!fold_one(k, p, fold, s))
			continue;
		k->unread_sites++;
		k->unread_allocs += s->total_allocs;
		n++;
	}
	/* Without the reading's stacks to keep, every stack stays (as a reading's fold). */
	if (n)
		(void)retired__fold_end(r, reclaim__held, &(struct reclaim_held){ &k->snap, NULL });
	k->fold_mark = retired__nr_sites(r);
	return n;
}

size_t snapshot_kept_fold__unread(struct probes *p, const struct snap_fold *fold)
{
	struct snapshot_kept *k = p->rc.kept;
	bool busy = false;
	size_t n = 0;

	/* Not while a report holds the reading, nor before one was made. */
	if (!k || !fold || p->sample.mode || !atomic_compare_exchange_strong(&k->held, &busy, true))
		return 0;
	pthread_mutex_lock(&p->rc.stacks_lock);
	pthread_mutex_lock(&p->rc.retired_lock);
	if (k->started && p->rc.resets == k->resets)
		n = fold_all(k, p, fold);
	pthread_mutex_unlock(&p->rc.retired_lock);
	pthread_mutex_unlock(&p->rc.stacks_lock);
	atomic_store(&k->held, false);
	return n;
}

bool snapshot_kept_fold__nth_most(struct probes *p, size_t n, uint64_t *allocs, uint64_t *bytes)
{
	bool known;

	pthread_mutex_lock(&p->rc.retired_lock);
	known = retired__nth_most(p->rc.retired, n, allocs, bytes);
	pthread_mutex_unlock(&p->rc.retired_lock);
	return known;
}

const struct snapshot *snapshot_kept_fold__hold(struct probes *p, uint64_t reading)
{
	struct snapshot_kept *k = p->rc.kept;
	bool busy = false;

	if (!k || !atomic_compare_exchange_strong(&k->held, &busy, true))
		return NULL;
	if (k->started && k->snap.reading == reading && k->snap.held)
		return &k->snap;
	atomic_store(&k->held, false);
	return NULL;
}
