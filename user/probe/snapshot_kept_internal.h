/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The reading carried over from report to report (snapshot_kept.c), as its
 * compaction after a fold (snapshot_kept_compact.c) sees it.
 */
#ifndef SNAPSHOT_KEPT_INTERNAL_H
#define SNAPSHOT_KEPT_INTERNAL_H

#include <stdatomic.h>
#include "snapshot.h"
#include "util/groupbits.h"
#include "util/idmap.h"

struct probes;

#define NO_SITE UINT32_MAX

/* What the retired store held of a site at the last reading. */
struct retired_part {
	uint64_t bytes, allocs;	/* allocs as blocks (snapshot__blocks_of) */
};

/* A growable list of site indexes. */
struct list {
	uint32_t *v;
	size_t nr, cap;
};

struct snapshot_kept {
	struct snapshot snap;
	size_t cap;		/* snap.sites' room, and the per-site arrays' */
	atomic_bool held;
	struct idmap of_key;	/* site key -> index */
	/*
	 * One per slot of the site table: the site it held at the last
	 * reading (NO_SITE: none), whose key (snap.sites') is the slot's then.
	 * 4 bytes a slot, not 16 with the key beside it: 524,288 slots for
	 * the default --stack-storage-size.
	 */
	uint32_t *slots;
	/*
	 * The groups of slots (the site table's, memleak.h) whose entries of
	 * slots and snap.site_of_slot were set since the last start: a bit
	 * each. Both arrays are calloc'd and only these groups' pages are
	 * touched; a page touched first costs about 25 us on this machine, and
	 * writing both whole made a short command's report 23 ms longer.
	 */
	__u64 slot_groups[MEMLEAK_SITE_GROUP_WORDS];
	unsigned group_shift;	/* the site table's groups: 2^group_shift slots */
	size_t nr_slots;	/* its slots */
	uint32_t *retired_at;	/* the retired store's site i -> ours (NO_SITE: none yet) */
	size_t nr_retired_at, cap_retired_at;
	/* Per site. */
	struct retired_part *retired;
	uint32_t *live_mark;	/* the reading it last had a live slot at */
	uint32_t *done_mark;	/* the reading its figures were last set at */
	uint32_t *pos;		/* with live_mark now: its index in live, acc */
	struct site_stats *acc;	/* the live slots' figures of each site in live */
	size_t cap_acc;
	struct list live, live_was, changed, fresh, stackless, touched;
	uint64_t resets, epoch, retired_seq;	/* the retired store as taken in */
	uint64_t reading;	/* the last one's number */
	bool started;		/* a reading was made since the last start */
	bool compacted;		/* this reading's compaction let go of some of the last one's sites */
	bool ages_unknown;	/* a site with blocks whose age did not hold (set_figures) */
	uint32_t *moved;	/* snapshot.moved */
	size_t cap_moved;
	struct snap_order order;
	/*
	 * Folded unread between readings (snapshot_kept_fold.c): the next
	 * reading's unread_*; fold_mark, the retired store's sites after the
	 * last reading or fold, against which its growth is measured.
	 */
	uint64_t unread_sites, unread_allocs;
	size_t fold_mark;
};

/*
 * The retired store's epoch moved (a fold, a trim): what stays of the last
 * reading is kept, the sites gone leave it, and snap.moved says where
 * each went. 0, or an error: the reading is half moved, restart it.
 */
int snapshot_kept_compact__run(struct snapshot_kept *k, const struct probes *p);

/* The first slot at or after i whose group of k->slots was set since the last start (nr_slots: none). */
static inline size_t snapshot_kept__next_set(const struct snapshot_kept *k, size_t i)
{
	return groupbits__next(k->slot_groups, k->group_shift, k->nr_slots, i);
}

struct retired_site;
struct snap_fold;

/*
 * A retired entry the reading holds in no site (by its key), never folded
 * and foldable, folded unread into the totals and marked: a reading's
 * (read_retired) and between readings' (snapshot_kept_fold.c) rule.
 */
bool snapshot_kept__fold_unread(struct snapshot_kept *k, struct probes *p,
				const struct snap_fold *fold, const struct retired_site *s);

#endif
