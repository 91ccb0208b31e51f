// SPDX-License-Identifier: GPL-2.0
/* Which live block a word points into (reach_index.h). */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "reach_index.h"
#include "util/bound.h"
#include "util/vec.h"

#define REGION_GAP (1ull << 20)	/* blocks further apart start a region of their own */
#define MIN_SHIFT 4		/* no block is smaller than 16 bytes apart from the next */

/*
 * A block while sorting: its start and where it came from; then, in the
 * same place, its span (the sort's array becomes the index's spans).
 */
union sorting {
	struct {
		uint64_t start;
		uint32_t orig;
	} s;
	struct reach_index_span span;
};

static int block_cmp(const void *a, const void *b)
{
	const union sorting *x = a, *y = b;

	return x->s.start < y->s.start ? -1 : x->s.start > y->s.start;
}

/*
 * A region's page index: pages of about the bytes per block (2 pages a
 * block at most), so that a page holds one or two blocks and a lookup
 * reads one entry and a block or two, whatever the block size; a huge
 * sparse region (terabytes reserved) gets coarse pages, not terabytes.
 */
static int index_region(struct reach_index *x, struct reach_region *g)
{
	uint64_t span = g->end - g->start, budget = 2ull * (g->last - g->first) + 1024;
	uint32_t k = g->first;

	g->shift = MIN_SHIFT;
	while ((span >> g->shift) + 1 > budget)
		g->shift++;
	g->pages = (size_t)(span >> g->shift) + 1;
	g->page_first = malloc(g->pages * sizeof(*g->page_first));
	if (!g->page_first)
		return -ENOMEM;
	for (size_t p = 0; p < g->pages; p++) {
		uint64_t at = g->start + ((uint64_t)p << g->shift);

		while (k < g->last && x->spans[k].end <= at)
			k++;
		g->page_first[p] = k;
	}
	return 0;
}

static int add_region(struct reach_index *x, size_t *cap, uint32_t first, uint32_t last,
		      uint64_t end)
{
	struct reach_region *g;

	if (vec__reserve(&x->regions, cap, x->nr_regions + 1, sizeof(*x->regions)))
		return -ENOMEM;
	g = &x->regions[x->nr_regions++];
	*g = (struct reach_region){ .start = x->spans[first].start, .end = end, .first = first,
				    .last = last };
	return index_region(x, g);
}

static int make_regions(struct reach_index *x)
{
	size_t cap = 0;
	uint32_t first = 0;
	uint64_t end = x->spans[0].end;
	int err;

	for (uint32_t i = 1; i < x->nr; i++) {
		if (x->spans[i].start > end + REGION_GAP) {
			err = add_region(x, &cap, first, i, end);
			if (err)
				return err;
			first = i;
		}
		if (x->spans[i].end > end)
			end = x->spans[i].end;
	}
	x->hi = end;
	return add_region(x, &cap, first, x->nr, end);
}

/* Sort the blocks by address into x->spans and x->orig. 0 or -ENOMEM. */
static int sort_blocks(struct reach_index *x, size_t nr)
{
	union sorting *t = malloc(nr * sizeof(*t));

	x->orig = malloc(nr * sizeof(*x->orig));
	if (!t || !x->orig) {
		free(t);
		return -ENOMEM;
	}
	for (size_t i = 0; i < nr; i++)
		t[i].s = (typeof(t[i].s)){ reach_index__in(x, i)->addr, (uint32_t)i };
	qsort(t, nr, sizeof(*t), block_cmp);
	for (size_t i = 0; i < nr; i++) {
		uint32_t orig = t[i].s.orig;
		const struct reach_block *b = reach_index__in(x, orig);

		x->orig[i] = orig;
		t[i].span = (struct reach_index_span){ b->addr, b->addr + (b->size ?: 1) };
	}
	x->spans = &t->span;
	return 0;
}

int reach_index__build_strided(struct reach_index *x, const void *blocks, size_t nr,
			       size_t stride)
{
	int err;

	memset(x, 0, sizeof(*x));
	if (nr >= UINT32_MAX)
		return -E2BIG;
	if (!nr)
		return 0;
	x->in = blocks;
	x->stride = stride;
	x->nr = (uint32_t)nr;
	err = sort_blocks(x, nr);
	if (err)
		return err;
	x->lo = x->spans[0].start;
	return make_regions(x);
}

int reach_index__build(struct reach_index *x, const struct reach_block *blocks, size_t nr)
{
	return reach_index__build_strided(x, blocks, nr, sizeof(*blocks));
}

/* The last region that starts at or below v, or NULL. */
static const struct reach_region *region_of(const struct reach_index *x, uint64_t v)
{
	size_t n = bound__upper_u64(x->regions, x->nr_regions, sizeof(*x->regions),
				    offsetof(struct reach_region, start), v);

	return n ? &x->regions[n - 1] : NULL;
}

/* The page of v in its region, or NULL when v is in none. */
static const struct reach_region *page_of(const struct reach_index *x, uint64_t v, size_t *p)
{
	const struct reach_region *g;

	if (v < x->lo || v >= x->hi)
		return NULL;
	g = region_of(x, v);
	if (!g || v >= g->end)
		return NULL;
	*p = (size_t)((v - g->start) >> g->shift);
	return g;
}

/* The blocks over page p: from its first to the next page's first, which may start in p. */
static uint32_t page_end(const struct reach_region *g, size_t p)
{
	uint32_t hi = p + 1 < g->pages ? g->page_first[p + 1] + 1 : g->last;

	return hi < g->last ? hi : g->last;
}

/* The block among [lo, hi) of g that v points into. */
static bool search(const struct reach_index *x, const struct reach_region *g, uint64_t v,
		   uint32_t lo, uint32_t hi, uint32_t *at)
{
	lo += (uint32_t)bound__upper_u64(x->spans + lo, hi - lo, sizeof(*x->spans),
					 offsetof(struct reach_index_span, start), v);
	if (!lo || lo <= g->first || v >= x->spans[lo - 1].end)
		return false;
	*at = lo - 1;
	return true;
}

bool reach_index__find(const struct reach_index *x, uint64_t v, uint32_t *at)
{
	size_t p;
	const struct reach_region *g = page_of(x, v, &p);

	return g && search(x, g, v, g->page_first[p], page_end(g, p), at);
}

#define AHEAD 8	/* lookups whose memory is being fetched at each step */

/* A lookup under way: its page, then the blocks over it. */
struct pending {
	const struct reach_region *g;	/* NULL: in no region */
	size_t p;
	uint32_t lo, hi;
};

/*
 * A pipeline of three steps, AHEAD lookups apart: find the page and fetch
 * its entry; read it and fetch the first block's span; search. So that
 * 2 * AHEAD misses are under way at once.
 */
void reach_index__find_many(const struct reach_index *x, const uint64_t *v, size_t n,
			    uint32_t *at)
{
	struct pending ring[2 * AHEAD];

	for (size_t i = 0; i < n + 2 * AHEAD; i++) {
		struct pending *s = &ring[i % (2 * AHEAD)], *m = &ring[(i + AHEAD) % (2 * AHEAD)];

		if (i >= 2 * AHEAD) {
			at[i - 2 * AHEAD] = REACH_INDEX_NONE;
			if (s->g)
				search(x, s->g, v[i - 2 * AHEAD], s->lo, s->hi, &at[i - 2 * AHEAD]);
		}
		if (i >= AHEAD && i - AHEAD < n && m->g) {
			m->lo = m->g->page_first[m->p];
			m->hi = page_end(m->g, m->p);
			__builtin_prefetch(&x->spans[m->lo ? m->lo - 1 : 0]);
		}
		if (i < n && (s->g = page_of(x, v[i], &s->p)))
			__builtin_prefetch(&s->g->page_first[s->p]);
	}
}

uint32_t reach_index__first_after(const struct reach_index *x, uint64_t addr)
{
	/* Blocks do not overlap: their ends are in order too. */
	return (uint32_t)bound__upper_u64(x->spans, x->nr, sizeof(*x->spans),
					  offsetof(struct reach_index_span, end), addr);
}

void reach_index__free(struct reach_index *x)
{
	for (size_t i = 0; i < x->nr_regions; i++)
		free(x->regions[i].page_first);
	free(x->regions);
	free(x->spans);
	free(x->orig);
	memset(x, 0, sizeof(*x));
}
