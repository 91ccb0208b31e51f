// SPDX-License-Identifier: GPL-2.0
/*
 * -a/--show-allocs: the live blocks of each site of a snapshot, read from
 * the live-block table: the oldest of them, the likeliest leaked, kept
 * while the walk goes (at most max a site, so a site of a million blocks
 * costs max slots), then put in order. The walk is the one the ages take
 * (snapshot.c): about 0.3 s a million live blocks, at every report.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include "probes_internal.h"
#include "snapshot.h"
#include "util/vec.h"

struct blocks_walk {
	struct probes *p;
	struct snapshot *snap;
	uint32_t max;		/* 0: all */
	uint64_t older_ns;
};

/* A block newer than the snapshot's clock is young, not 2^64 ns old. */
static uint64_t age_of(const struct snapshot *snap, uint64_t timestamp_ns)
{
	return timestamp_ns < snap->time_ns ? snap->time_ns - timestamp_ns : 0;
}

/*
 * A site's kept blocks are a heap with the youngest on top, the one a still
 * older block takes the place of: a site of a million blocks costs
 * log(max) a block, not max.
 */
static void swap_blocks(struct report_block *a, struct report_block *b)
{
	struct report_block t = *a;

	*a = *b;
	*b = t;
}

static void sift_up(struct report_block *h, size_t i)
{
	while (i && h[(i - 1) / 2].age_ns > h[i].age_ns) {
		swap_blocks(&h[(i - 1) / 2], &h[i]);
		i = (i - 1) / 2;
	}
}

static void sift_down(struct report_block *h, size_t n)
{
	for (size_t i = 0, c; (c = 2 * i + 1) < n; i = c) {
		if (c + 1 < n && h[c + 1].age_ns < h[c].age_ns)
			c++;
		if (h[i].age_ns <= h[c].age_ns)
			break;
		swap_blocks(&h[i], &h[c]);
	}
}

static int keep_block(void *arg, struct alloc_bucket *bucket, size_t b, int i, uint64_t addr,
		      const struct alloc_info *info)
{
	struct blocks_walk *w = arg;
	uint32_t at = info->site < w->p->tables.slots ? w->snap->site_of_slot[info->site] : 0;
	struct report_block blk = { addr, info->size, age_of(w->snap, info->timestamp_ns) };
	struct report_blocks *s;
	size_t cap;

	if (!at || blk.age_ns < w->older_ns)
		return 0;
	s = &w->snap->blocks[at - 1];
	s->seen++;
	if (w->max && s->nr == w->max) {
		if (blk.age_ns > s->v[0].age_ns) {
			s->v[0] = blk;
			sift_down(s->v, s->nr);
		}
		return 0;
	}
	cap = s->cap;
	if (vec__reserve_min(&s->v, &cap, s->nr + 1, sizeof(*s->v), 4))
		return -ENOMEM;
	s->cap = (uint32_t)cap;
	s->v[s->nr++] = blk;
	sift_up(s->v, s->nr - 1);
	return 0;
}

/* The oldest first; equal ages by address, so that two reports of one table agree. */
static int cmp_block(const void *pa, const void *pb)
{
	const struct report_block *a = pa, *b = pb;

	if (a->age_ns != b->age_ns)
		return a->age_ns > b->age_ns ? -1 : 1;
	return a->addr < b->addr ? -1 : a->addr > b->addr;
}

int snapshot_blocks__read(struct probes *p, struct snapshot *snap, uint32_t max, uint64_t older_ns)
{
	struct blocks_walk w = { p, snap, max, older_ns };
	int err;

	snapshot__free_blocks(snap);
	snap->blocks = calloc(snap->nr ?: 1, sizeof(*snap->blocks));
	if (!snap->blocks)
		return -ENOMEM;
	/* A block's site is never reclaimed while it lives; the lock keeps a clear away. */
	pthread_mutex_lock(&p->rc.tables_lock);
	err = snapshot__each_block(p, keep_block, &w);
	pthread_mutex_unlock(&p->rc.tables_lock);
	for (size_t i = 0; i < snap->nr; i++)
		if (snap->blocks[i].nr > 1)
			qsort(snap->blocks[i].v, snap->blocks[i].nr, sizeof(struct report_block),
			      cmp_block);
	return err;
}
