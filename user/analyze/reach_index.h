/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The live blocks sorted by address, and which of them a word points into
 * (reach.c): clusters of blocks (regions), each indexed by page, so that a
 * lookup is a range check, a region, a page and a short binary search.
 */
#ifndef REACH_INDEX_H
#define REACH_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A live block, as the scan is given it (reach.h). */
struct reach_block {
	uint64_t addr, size;
};

struct reach_region {
	uint64_t start, end;
	uint32_t first, last;	/* its blocks: [first, last) */
	unsigned shift;		/* page size of its index: about a block's worth of bytes */
	uint32_t *page_first;	/* per page: the first block that ends after the page starts */
	size_t pages;
};

/*
 * 20 bytes a block (and the pages' index, 8 at most): a 4 GiB heap of 1 KiB blocks is 4 million of them. A
 * block's size is its span's, but for a 0-byte block (whose span has one
 * byte): then the caller's (reach_index__size).
 */
struct reach_index {
	/*
	 * The blocks by address, their start and end (start + size, at least
	 * start + 1: a 0-byte block has one): all a lookup reads, one cache
	 * line for 4 blocks.
	 */
	struct reach_index_span {
		uint64_t start, end;
	} *spans;
	uint32_t *orig;		/* spans[i]'s index in the caller's array */
	const char *in;		/* the caller's array: kept while the index is */
	size_t stride;		/* the bytes from one of its blocks to the next */
	uint32_t nr;
	uint64_t lo, hi;	/* no block outside [lo, hi) */
	struct reach_region *regions;
	size_t nr_regions;
};

/*
 * Sort and index the blocks, which the index reads until freed. 0, or
 * -ENOMEM (-E2BIG beyond 2^32 blocks).
 */
int reach_index__build(struct reach_index *x, const struct reach_block *blocks, size_t nr);
/*
 * The same of blocks stride bytes apart, each starting with a struct
 * reach_block (a caller's larger records, not a copy of their addresses
 * and sizes: 16 bytes a block fewer).
 */
int reach_index__build_strided(struct reach_index *x, const void *blocks, size_t nr,
			       size_t stride);
/* The caller's block at i (its own order). */
static inline const struct reach_block *reach_index__in(const struct reach_index *x, size_t i)
{
	return (const struct reach_block *)(x->in + i * x->stride);
}
/* The size of the block at i (by address): its span's, but for a 0- or 1-byte block. */
static inline uint64_t reach_index__size(const struct reach_index *x, uint32_t i)
{
	uint64_t d = x->spans[i].end - x->spans[i].start;

	return d != 1 ? d : reach_index__in(x, x->orig[i])->size;
}
/* The block v points into (its first byte or any other): true and its index in *at. */
bool reach_index__find(const struct reach_index *x, uint64_t v, uint32_t *at);
/*
 * reach_index__find for n words at once, into at[i] (REACH_INDEX_NONE
 * when v[i] points into no block): the lookups' memory is fetched ahead,
 * many at a time, not one cache miss after the other.
 */
#define REACH_INDEX_NONE UINT32_MAX
void reach_index__find_many(const struct reach_index *x, const uint64_t *v, size_t n,
			    uint32_t *at);
/* The first block that ends after addr (x->nr if none). */
uint32_t reach_index__first_after(const struct reach_index *x, uint64_t addr);
void reach_index__free(struct reach_index *x);

#endif
