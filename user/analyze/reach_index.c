// SPDX-License-Identifier: GPL-2.0
/* Which live block a word points into (reach_index.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "reach_index.h"
#include "util/vec.h"

#define REGION_GAP (1ull << 20)	/* blocks further apart start a region of their own */
#define PAGE_SHIFT 12

static int block_cmp(const void *a, const void *b)
{
	const struct reach_index_block *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/*
 * A region's page index. A huge sparse region (an mmap'ed block of
 * terabytes reserved) gets coarser pages: at most a few per block.
 */
static int index_region(struct reach_index *x, struct reach_region *g)
{
	uint64_t span = g->end - g->start, budget = 4ull * (g->last - g->first) + 1024;
	uint32_t k = g->first;

	g->shift = PAGE_SHIFT;
	while ((span >> g->shift) + 1 > budget)
		g->shift++;
	g->pages = (size_t)(span >> g->shift) + 1;
	g->page_first = malloc(g->pages * sizeof(*g->page_first));
	if (!g->page_first)
		return -ENOMEM;
	for (size_t p = 0; p < g->pages; p++) {
		uint64_t at = g->start + ((uint64_t)p << g->shift);

		while (k < g->last && x->blocks[k].end <= at)
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
	*g = (struct reach_region){ .start = x->blocks[first].start, .end = end, .first = first,
				    .last = last };
	return index_region(x, g);
}

static int make_regions(struct reach_index *x)
{
	size_t cap = 0;
	uint32_t first = 0;
	uint64_t end = x->blocks[0].end;
	int err;

	for (uint32_t i = 1; i < x->nr; i++) {
		if (x->blocks[i].start > end + REGION_GAP) {
			err = add_region(x, &cap, first, i, end);
			if (err)
				return err;
			first = i;
		}
		if (x->blocks[i].end > end)
			end = x->blocks[i].end;
	}
	x->hi = end;
	return add_region(x, &cap, first, x->nr, end);
}

int reach_index__build(struct reach_index *x, const struct reach_block *blocks, size_t nr)
{
	memset(x, 0, sizeof(*x));
	if (nr >= UINT32_MAX)
		return -E2BIG;
	if (!nr)
		return 0;
	x->blocks = malloc(nr * sizeof(*x->blocks));
	if (!x->blocks)
		return -ENOMEM;
	for (size_t i = 0; i < nr; i++)
		x->blocks[i] = (struct reach_index_block){
			.start = blocks[i].addr,
			.end = blocks[i].addr + (blocks[i].size ?: 1),
			.size = blocks[i].size,
			.orig = (uint32_t)i,
		};
	x->nr = (uint32_t)nr;
	qsort(x->blocks, nr, sizeof(*x->blocks), block_cmp);
	x->lo = x->blocks[0].start;
	return make_regions(x);
}

/* The last region that starts at or below v, or NULL. */
static const struct reach_region *region_of(const struct reach_index *x, uint64_t v)
{
	size_t lo = 0, hi = x->nr_regions;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (x->regions[mid].start <= v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? &x->regions[lo - 1] : NULL;
}

bool reach_index__find(const struct reach_index *x, uint64_t v, uint32_t *at)
{
	const struct reach_region *g;
	uint32_t lo, hi;
	size_t p;

	if (v < x->lo || v >= x->hi)
		return false;
	g = region_of(x, v);
	if (!g || v >= g->end)
		return false;
	p = (size_t)((v - g->start) >> g->shift);
	/* The blocks over page p: from its first to the next page's first, which may start in p. */
	lo = g->page_first[p];
	hi = p + 1 < g->pages ? g->page_first[p + 1] + 1 : g->last;
	hi = hi < g->last ? hi : g->last;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (x->blocks[mid].start <= v)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || lo <= g->first || v >= x->blocks[lo - 1].end)
		return false;
	*at = lo - 1;
	return true;
}

uint32_t reach_index__first_after(const struct reach_index *x, uint64_t addr)
{
	uint32_t lo = 0, hi = x->nr;

	/* Blocks do not overlap: their ends are in order too. */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (x->blocks[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

void reach_index__free(struct reach_index *x)
{
	for (size_t i = 0; i < x->nr_regions; i++)
		free(x->regions[i].page_first);
	free(x->regions);
	free(x->blocks);
	memset(x, 0, sizeof(*x));
}
