// SPDX-License-Identifier: GPL-2.0
/* pymalloc's arenas, pool by pool, from their headers (pyarena.h). */
#include <errno.h>
#include <string.h>
#include "pyarena.h"

#define ALIGNMENT 16			/* ALIGNMENT_SHIFT 4 on 64-bit builds */
#define SIZE_CLASSES (512 / ALIGNMENT)	/* SMALL_REQUEST_THRESHOLD / ALIGNMENT */
#define POOL_OVERHEAD 48		/* sizeof(struct pool_header), already 16-aligned */

/* Objects/obmalloc.c's struct pool_header, on x86-64. */
struct pool_header {
	uint64_t ref;		/* union { block *_padding; uint count; }: blocks handed out */
	uint64_t freeblock, nextpool, prevpool;
	uint32_t arenaindex;	/* the arena's index in arenas[] */
	uint32_t szidx;		/* size class: blocks of (szidx + 1) * 16 bytes */
	uint32_t nextoffset;	/* the first block never handed out */
	uint32_t maxnextoffset;	/* POOL_SIZE - block size */
};

struct arena_count {
	uint64_t pools, used_pools, blocks, bytes;
	uint32_t index;		/* every used pool's arenaindex: one arena, one index */
};

/* A pool's figures into c: 0, 1 for a header that is not pymalloc's. */
static int count_pool(const struct pool_header *h, struct arena_count *c)
{
	uint32_t count = (uint32_t)h->ref, size = (h->szidx + 1) * ALIGNMENT;

	c->pools++;
	/* Never used (zeroes), or emptied and on the arena's free list. */
	if (!count)
		return 0;
	if (h->szidx >= SIZE_CLASSES || h->maxnextoffset != PYARENA_POOL_SIZE - size ||
	    h->nextoffset < POOL_OVERHEAD || h->nextoffset > PYARENA_POOL_SIZE ||
	    count > (PYARENA_POOL_SIZE - POOL_OVERHEAD) / size ||
	    (c->used_pools && h->arenaindex != c->index))
		return 1;
	c->index = h->arenaindex;
	c->used_pools++;
	c->blocks += count;
	c->bytes += (uint64_t)count * size;
	return 0;
}

/* The pools of the arena at base, their headers read at once: the first at the next 16 KiB. */
static int read_arena(uint64_t base, pyarena_read_fn *read, void *ctx, struct arena_count *c)
{
	uint64_t pool = (base + PYARENA_POOL_SIZE - 1) & ~(PYARENA_POOL_SIZE - 1);
	struct pool_header h[PYARENA_MAX_POOLS];
	uint64_t addrs[PYARENA_MAX_POOLS] = { 0 };
	size_t n = 0;
	int err;

	memset(c, 0, sizeof(*c));
	for (; pool + PYARENA_POOL_SIZE <= base + PYARENA_SIZE; pool += PYARENA_POOL_SIZE)
		addrs[n++] = pool;
	err = read(ctx, addrs, n, sizeof(*h), h);
	if (err)
		return err;
	for (size_t i = 0; i < n; i++)
		if (count_pool(&h[i], c))
			return 1;
	return c->used_pools ? 0 : 1;
}

int pyarena__read(const uint64_t *bases, size_t nr, pyarena_read_fn *read, void *ctx,
		  struct report_pyarenas *out)
{
	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < nr; i++) {
		struct arena_count c;
		int err = read_arena(bases[i], read, ctx, &c);

		/* Unmapped since it was listed (a running target): not one now. */
		if (err < 0 && err != -EFAULT)
			return err;
		if (err) {
			out->skipped++;
			continue;
		}
		out->arenas++;
		out->pools += c.pools;
		out->used_pools += c.used_pools;
		out->used_blocks += c.blocks;
		out->used_bytes += c.bytes;
	}
	out->bytes = out->arenas * PYARENA_SIZE;
	out->known = true;
	return 0;
}
