// SPDX-License-Identifier: GPL-2.0
/* analyze/reach.c: memcheck's four kinds, over a fake address space. */
#include <stdlib.h>
#include "analyze/reach.h"
#include "analyze/reach_index.h"
#include "unit.h"

/* The fake target: a few segments of words; a read stops where a segment ends. */
struct seg {
	uint64_t addr;
	uint64_t words[64];
	size_t nr;
};

struct space {
	struct seg segs[8];
	size_t nr;
	unsigned reads;
};

static ssize_t space_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct space *s = ctx;

	s->reads++;
	for (size_t i = 0; i < s->nr; i++) {
		const struct seg *g = &s->segs[i];
		uint64_t end = g->addr + g->nr * 8;

		if (addr >= g->addr && addr < end) {
			size_t n = end - addr < len ? end - addr : len;

			memcpy(buf, (const char *)g->words + (addr - g->addr), n);
			return (ssize_t)n;
		}
	}
	return 0;
}

static struct seg *seg_at(struct space *s, uint64_t addr, size_t nr)
{
	struct seg *g = &s->segs[s->nr++];

	g->addr = addr;
	g->nr = nr;
	return g;
}

static bool classify(struct space *s, const struct reach_block *b, size_t nr,
		     const struct reach_range *roots, size_t nr_roots, const uint64_t *regs,
		     size_t nr_regs, uint8_t *kinds, struct reach_stats *st)
{
	struct reach_input in = { b, nr, roots, nr_roots, regs, nr_regs, space_read, s, 0 };

	memset(kinds, 0xff, nr);
	return reach__classify(&in, kinds, st) == 0;
}

/*
 * The heap at 0x10000: a lost list (its head above its nodes, so the
 * first leader is a node that the head then takes in), a block a global
 * points to and its child, a block known only by an interior pointer and
 * the child it points to, a block only a register holds.
 */
TEST(reach_memcheck_kinds)
{
	struct space s = { 0 };
	struct seg *heap = seg_at(&s, 0x10000, 64), *data = seg_at(&s, 0x1000, 4);
	struct reach_block b[] = {
		{ 0x10000, 16 },	/* 0: node 1 -> node 2 */
		{ 0x10010, 16 },	/* 1: node 2 -> node 3 */
		{ 0x10020, 16 },	/* 2: node 3 */
		{ 0x10080, 24 },	/* 3: the head -> node 1: definitely lost */
		{ 0x100a0, 16 },	/* 4: the global's -> 5 */
		{ 0x100b0, 8 },		/* 5: reachable through 4 */
		{ 0x100c0, 32 },	/* 6: an interior pointer only -> 7 */
		{ 0x100e0, 8 },		/* 7: possibly lost through 6 */
		{ 0x100f0, 8 },		/* 8: in a register */
		{ 0x10100, 0 },		/* 9: 0 bytes, a global points at it */
	};
	struct reach_range roots[] = { { 0x1000, 0x1020 } };
	uint64_t regs[] = { 0x100f0, 42 };
	uint8_t k[10];
	struct reach_stats st;
	static const uint8_t want[10] = {
		REACH_INDIRECT, REACH_INDIRECT, REACH_INDIRECT, REACH_DEFINITE, REACH_REACHABLE,
		REACH_REACHABLE, REACH_POSSIBLE, REACH_POSSIBLE, REACH_REACHABLE, REACH_REACHABLE,
	};

	heap->words[0] = 0x10010;
	heap->words[2] = 0x10020;
	heap->words[0x80 / 8] = 0x10000;
	heap->words[0xa0 / 8] = 0x100b0;
	heap->words[0xc0 / 8 + 1] = 0x100e0;
	data->words[0] = 0x100a0;
	data->words[1] = 0x100c8;	/* inside block 6 */
	data->words[2] = 0x10100;
	for (size_t i = 0; i < 10; i++)
		if (!classify(&s, b, 10, roots, 1, regs, 2, k, &st) || k[i] != want[i]) {
			fprintf(stderr, "  block %zu: %u, want %u\n", i, k[i], want[i]);
			return false;
		}
	ASSERT_EQ_U64(st.root_bytes, 32);
	ASSERT_EQ_U64(st.unread_bytes, 0);
	return true;
}

/* A block inside a root range is heap, not root: what it points to is lost. */
TEST(reach_blocks_in_roots_are_not_roots)
{
	struct space s = { 0 };
	struct seg *g = seg_at(&s, 0x2000, 16);
	struct reach_block b[] = { { 0x2010, 16 }, { 0x2040, 16 } };
	struct reach_range roots[] = { { 0x2000, 0x2080 } };
	uint8_t k[2];
	struct reach_stats st;

	g->words[2] = 0x2040;	/* in block 0, which nothing points to */
	ASSERT(classify(&s, b, 2, roots, 1, NULL, 0, k, &st));
	ASSERT_EQ_U64(k[0], REACH_DEFINITE);
	ASSERT_EQ_U64(k[1], REACH_INDIRECT);
	ASSERT_EQ_U64(st.root_bytes, 0x80 - 32);
	g->words[0] = 0x2010;	/* now a root word before it points at it */
	ASSERT(classify(&s, b, 2, roots, 1, NULL, 0, k, &st));
	ASSERT_EQ_U64(k[0], REACH_REACHABLE);
	ASSERT_EQ_U64(k[1], REACH_REACHABLE);
	return true;
}

/*
 * A lost cycle: its lowest block leads, the other is indirect. A block
 * first reached by an interior pointer and then by a start pointer is
 * reachable, and so are its children, whatever the order of the roots.
 */
TEST(reach_cycles_and_upgrades)
{
	struct space s = { 0 };
	struct seg *h = seg_at(&s, 0x30000, 16), *d = seg_at(&s, 0x3000, 2);
	struct reach_block b[] = {
		{ 0x30000, 16 }, { 0x30010, 16 },	/* a lost cycle */
		{ 0x30040, 16 }, { 0x30060, 16 },	/* interior then start; its child */
	};
	struct reach_range roots[] = { { 0x3000, 0x3010 } };
	uint8_t k[4];
	struct reach_stats st;

	h->words[0] = 0x30010;
	h->words[2] = 0x30000;
	h->words[8] = 0x30060;
	d->words[0] = 0x30048;
	d->words[1] = 0x30040;
	ASSERT(classify(&s, b, 4, roots, 1, NULL, 0, k, &st));
	ASSERT_EQ_U64(k[0], REACH_DEFINITE);
	ASSERT_EQ_U64(k[1], REACH_INDIRECT);
	ASSERT_EQ_U64(k[2], REACH_REACHABLE);
	ASSERT_EQ_U64(k[3], REACH_REACHABLE);
	d->words[1] = 0;	/* the interior pointer alone: both possibly lost */
	ASSERT(classify(&s, b, 4, roots, 1, NULL, 0, k, &st));
	ASSERT_EQ_U64(k[2], REACH_POSSIBLE);
	ASSERT_EQ_U64(k[3], REACH_POSSIBLE);
	return true;
}

/* Memory that cannot be read holds no pointer, and is counted. */
TEST(reach_unreadable_roots_are_counted)
{
	struct space s = { 0 };
	struct seg *d = seg_at(&s, 0x5000, 2);
	struct reach_block b[] = { { 0x40000, 16 }, { 0x50000, 16 } };
	struct reach_range roots[] = { { 0x5000, 0x7000 } };
	uint8_t k[2];
	struct reach_stats st;

	seg_at(&s, 0x40000, 2);	/* block 0 is readable, block 1 not */
	d->words[1] = 0x40000;
	ASSERT(classify(&s, b, 2, roots, 1, NULL, 0, k, &st));
	ASSERT_EQ_U64(k[0], REACH_REACHABLE);
	ASSERT_EQ_U64(k[1], REACH_DEFINITE);
	ASSERT_EQ_U64(st.root_bytes, 16);
	ASSERT_EQ_U64(st.block_bytes, 16);
	ASSERT_EQ_U64(st.unread_bytes, 0x2000 - 16 + 16);
	return true;
}

/* The index against a plain search, over clustered and scattered blocks. */
TEST(reach_index_finds_what_a_scan_finds)
{
	enum { N = 3000 };
	struct reach_block *b = calloc(N, sizeof(*b));
	struct reach_index x;
	uint64_t a = 0x100000;
	bool ok = true;

	ASSERT(b);
	srand(7);
	for (size_t i = 0; i < N; i++) {
		a += 16 * (1 + rand() % 8);
		if (i % 500 == 0)
			a += (uint64_t)(rand() % 4 + 1) << 32;	/* another region */
		b[i] = (struct reach_block){ a, i % 97 == 0 ? 0 : (uint64_t)(rand() % 4096) };
		a += b[i].size;
	}
	for (size_t i = 0; i < N; i++) {	/* shuffled: the index sorts */
		size_t j = (size_t)rand() % N;
		struct reach_block t = b[i];

		b[i] = b[j];
		b[j] = t;
	}
	ASSERT(!reach_index__build(&x, b, N));
	{
		/* Many at once: the same answers as one by one. */
		enum { M = 1000 };
		uint64_t v[M];
		uint32_t at[M], one;

		for (int t = 0; t < M; t++)
			v[t] = b[rand() % N].addr - 32 + (uint64_t)(rand() % 4200);
		reach_index__find_many(&x, v, M, at);
		for (int t = 0; t < M && ok; t++)
			ok = reach_index__find(&x, v[t], &one) ? at[t] == one :
							       at[t] == REACH_INDEX_NONE;
	}
	for (int t = 0; t < 200000 && ok; t++) {
		const struct reach_block *p = &b[rand() % N];
		uint64_t v = p->addr - 64 + (uint64_t)(rand() % (int)(p->size + 128));
		uint32_t at;
		long want = -1;

		for (size_t i = 0; i < N; i++)
			if (v >= b[i].addr && v < b[i].addr + (b[i].size ?: 1))
				want = (long)i;
		if (t > 2000 && want < 0)
			continue;	/* the plain search is slow: enough misses checked */
		ok = reach_index__find(&x, v, &at) ? want == (long)x.orig[at] : want < 0;
		if (!ok)
			fprintf(stderr, "  0x%llx: want block %ld\n", (unsigned long long)v, want);
		if (t > 20000)
			break;
	}
	reach_index__free(&x);
	free(b);
	return ok;
}

/*
 * Blocks given in place, in the caller's larger records (reach_run's live
 * blocks, 32 bytes): the same index as of a copy of their addresses and
 * sizes, and their sizes read from the records (a 0-byte block's).
 */
TEST(reach_index_strided_as_copied)
{
	enum { N = 2000 };
	struct rec {
		struct reach_block b;
		uint64_t stack_id;
		uint32_t api;
	} *r = calloc(N, sizeof(*r));
	struct reach_block *b = calloc(N, sizeof(*b));
	struct reach_index x, y;
	uint64_t a = 0x7f0000000000;

	ASSERT(r && b);
	srand(11);
	for (size_t i = 0; i < N; i++) {
		size_t at = (i * 7919) % N;	/* not in address order */

		a += 16 + 16 * (uint64_t)(rand() % 64);
		r[at] = (struct rec){ { a, i % 50 ? 8 + (uint64_t)(rand() % 2048) : 0 }, ~i, 3 };
		b[at] = r[at].b;
		a += r[at].b.size;
	}
	ASSERT(!reach_index__build(&x, b, N));
	ASSERT(!reach_index__build_strided(&y, r, N, sizeof(*r)));
	ASSERT(x.nr == y.nr && x.nr_regions == y.nr_regions);
	ASSERT(!memcmp(x.spans, y.spans, N * sizeof(*x.spans)));
	ASSERT(!memcmp(x.orig, y.orig, N * sizeof(*x.orig)));
	for (uint32_t i = 0; i < N; i++)
		ASSERT_EQ_U64(reach_index__size(&y, i), reach_index__size(&x, i));
	for (int t = 0; t < 20000; t++) {
		uint64_t v = 0x7f0000000000 + (uint64_t)rand() % (a - 0x7f0000000000 + 64);
		uint32_t i = 0, j = 0;
		bool fx = reach_index__find(&x, v, &i), fy = reach_index__find(&y, v, &j);

		ASSERT(fx == fy && i == j);
	}
	reach_index__free(&x);
	reach_index__free(&y);
	free(r);
	free(b);
	return true;
}
