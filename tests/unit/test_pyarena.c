// SPDX-License-Identifier: GPL-2.0
/* python/pyarena.c: pool headers read from a fake target's memory; the verdict it feeds. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "analyze/verdict.h"
#include "python/pyarena.h"
#include "unit.h"

/* One arena's memory, mmap'ed at base (4 KiB aligned, so that 63 pools fit). */
struct fake {
	uint64_t base;
	unsigned char *mem;
};

static int fake_read(void *ctx, const uint64_t *addrs, size_t n, size_t len, void *out)
{
	const struct fake *f = ctx;

	for (size_t i = 0; i < n; i++) {
		if (addrs[i] < f->base || addrs[i] + len > f->base + PYARENA_SIZE)
			return -EFAULT;
		memcpy((char *)out + i * len, f->mem + (addrs[i] - f->base), len);
	}
	return 0;
}

/* A used pool's header at offset off: count blocks of class szidx. */
static void put_pool(struct fake *f, uint64_t off, uint32_t count, uint32_t szidx, uint32_t index)
{
	uint32_t size = (szidx + 1) * 16, *w = (uint32_t *)(f->mem + off);

	memset(f->mem + off, 0, 48);
	w[0] = count;
	w[8] = index;				/* arenaindex */
	w[9] = szidx;
	w[10] = 48 + count * size;		/* nextoffset */
	w[11] = PYARENA_POOL_SIZE - size;	/* maxnextoffset */
}

TEST(pyarena_counts_used_pools_and_blocks)
{
	struct fake f = { 0x7f0000001000ull, calloc(1, PYARENA_SIZE) };
	struct report_pyarenas a;
	uint64_t first = PYARENA_POOL_SIZE - 0x1000;	/* the first 16 KiB boundary */

	ASSERT(f.mem);
	put_pool(&f, first, 10, 3, 7);				/* 10 blocks of 64 bytes */
	put_pool(&f, first + PYARENA_POOL_SIZE, 1, 31, 7);	/* 1 of 512 */
	ASSERT_EQ_U64(pyarena__read(&f.base, 1, fake_read, &f, &a), 0);
	ASSERT(a.known);
	ASSERT_EQ_U64(a.arenas, 1);
	ASSERT_EQ_U64(a.bytes, PYARENA_SIZE);
	ASSERT_EQ_U64(a.pools, 63);
	ASSERT_EQ_U64(a.used_pools, 2);
	ASSERT_EQ_U64(a.used_blocks, 11);
	ASSERT_EQ_U64(a.used_bytes, 10 * 64 + 512);
	ASSERT_EQ_U64(a.skipped, 0);
	free(f.mem);
	return true;
}

TEST(pyarena_not_an_arena_skipped)
{
	struct fake f = { 0x7f0000000000ull, calloc(1, PYARENA_SIZE) };
	struct report_pyarenas a;
	uint64_t bad = 0x7f1000000000ull;

	ASSERT(f.mem);
	/* All zeroes: no block in it (another mmap, or the empty arena kept). */
	ASSERT_EQ_U64(pyarena__read(&f.base, 1, fake_read, &f, &a), 0);
	ASSERT(a.known && a.arenas == 0 && a.skipped == 1 && a.bytes == 0);
	/* Two used pools that disagree on their arena's index. */
	put_pool(&f, 0, 1, 0, 1);
	put_pool(&f, PYARENA_POOL_SIZE, 1, 0, 2);
	ASSERT_EQ_U64(pyarena__read(&f.base, 1, fake_read, &f, &a), 0);
	ASSERT(a.arenas == 0 && a.skipped == 1);
	/* A size class pymalloc has not, and a count the pool cannot hold. */
	put_pool(&f, PYARENA_POOL_SIZE, 1, 32, 1);
	ASSERT(!pyarena__read(&f.base, 1, fake_read, &f, &a) && a.skipped == 1);
	put_pool(&f, PYARENA_POOL_SIZE, 1000, 31, 1);
	ASSERT(!pyarena__read(&f.base, 1, fake_read, &f, &a) && a.skipped == 1);
	/* Unmapped since it was listed: skipped too. */
	put_pool(&f, PYARENA_POOL_SIZE, 2, 0, 1);
	ASSERT_EQ_U64(pyarena__read((uint64_t[]){ f.base, bad }, 2, fake_read, &f, &a), 0);
	ASSERT(a.arenas == 1 && a.skipped == 1 && a.used_bytes == 3 * 16);
	free(f.mem);
	return true;
}

TEST(pyarena_verdict_mostly_free)
{
	struct report_memory m = { .verdict = VERDICT_NO_LEAK };
	struct report_pyarenas a = { .known = true, .arenas = 64, .bytes = 64ull << 20,
				     .used_bytes = 6ull << 20 };

	verdict__pymalloc(&m, NULL);
	ASSERT(!m.pymalloc && m.verdict == VERDICT_NO_LEAK);
	verdict__pymalloc(&m, &a);
	ASSERT(m.pymalloc && m.verdict == VERDICT_FRAGMENTATION);
	m = (struct report_memory){ .verdict = VERDICT_LEAK };
	verdict__pymalloc(&m, &a);
	ASSERT(m.verdict == VERDICT_LEAK_AND_FRAGMENTATION);
	/* Half used: not fragmentation; nor 8 MiB free of 10. */
	m = (struct report_memory){ .verdict = VERDICT_NO_LEAK };
	a.used_bytes = 33ull << 20;
	verdict__pymalloc(&m, &a);
	ASSERT(!m.pymalloc && m.verdict == VERDICT_NO_LEAK);
	a = (struct report_pyarenas){ .known = true, .arenas = 10, .bytes = 10ull << 20,
				      .used_bytes = 2ull << 20 };
	verdict__pymalloc(&m, &a);
	ASSERT(!m.pymalloc);
	return true;
}
