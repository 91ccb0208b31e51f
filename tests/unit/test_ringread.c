// SPDX-License-Identifier: GPL-2.0
/*
 * util/ringread.c: a BPF ring's records read through one mapping of its
 * data, over a ring laid out as the kernel lays it out (a header of length
 * and busy and discard bits, 8-aligned records, positions that only grow).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <linux/bpf.h>
#include "util/ringread.h"
#include "unit.h"

#define RING 128

struct fake_ring {
	unsigned long cons, prod;
	uint8_t data[RING];
};

/* A record of len bytes, each its first byte plus its index, at the producer's position. */
static void put(struct fake_ring *f, uint32_t len, uint32_t flags, uint8_t first)
{
	uint32_t hdr = len | flags;

	memcpy(f->data + (f->prod & (RING - 1)), &hdr, sizeof(hdr));
	for (uint32_t i = 0; i < len; i++)
		f->data[(f->prod + BPF_RINGBUF_HDR_SZ + i) & (RING - 1)] = (uint8_t)(first + i);
	f->prod += (BPF_RINGBUF_HDR_SZ + len + 7) & ~7u;
}

struct seen {
	int n, stop_at;
	uint32_t lens[8];
	uint8_t firsts[8];
	bool whole[8];
};

static int take(void *ctx, void *data, size_t len)
{
	struct seen *s = ctx;
	const uint8_t *b = data;

	s->lens[s->n] = (uint32_t)len;
	s->firsts[s->n] = b[0];
	s->whole[s->n] = true;
	for (size_t i = 0; i < len; i++)
		s->whole[s->n] &= b[i] == (uint8_t)(b[0] + i);
	return ++s->n == s->stop_at ? -EAGAIN : 0;
}

/*
 * Records in order, a discarded one skipped, one that wraps past the end
 * whole; a busy one stops the reading where it is, until committed; a
 * stop asked by the callback consumes its record and no more.
 */
TEST(ringread_reads_records_whole_across_the_end)
{
	struct fake_ring f = { .cons = 96, .prod = 96 };
	struct ring_view v = { &f.cons, &f.prod, f.data, RING };
	struct seen s = { 0 };
	void *wrap = NULL;
	size_t cap = 0;
	unsigned long busy;

	put(&f, 8, 0, 10);				/* 96..112 */
	put(&f, 13, 0, 30);				/* 112..136: its bytes wrap at 128 */
	put(&f, 3, BPF_RINGBUF_DISCARD_BIT, 20);	/* 136..152: discarded */
	busy = f.prod;
	put(&f, 5, BPF_RINGBUF_BUSY_BIT, 40);		/* 152..168: not committed */
	ASSERT(ringread__consume_view(&v, &wrap, &cap, take, &s) == 0);
	ASSERT(s.n == 2 && s.lens[0] == 8 && s.firsts[0] == 10 && s.whole[0]);
	ASSERT(s.lens[1] == 13 && s.firsts[1] == 30 && s.whole[1] && cap >= 13);
	ASSERT_EQ_U64(f.cons, busy);
	/* Committed: read from where it stopped; a stop consumes its record only. */
	f.data[busy & (RING - 1)] = 5;
	f.data[(busy & (RING - 1)) + 3] = 0;
	put(&f, 2, 0, 50);
	s.stop_at = 3;
	ASSERT(ringread__consume_view(&v, &wrap, &cap, take, &s) == -EAGAIN);
	ASSERT(s.n == 3 && s.lens[2] == 5 && s.firsts[2] == 40 && s.whole[2]);
	ASSERT_EQ_U64(f.cons, busy + 16);
	ASSERT(ringread__consume_view(&v, &wrap, &cap, take, &s) == 0);
	ASSERT(s.n == 4 && s.lens[3] == 2 && s.firsts[3] == 50 && f.cons == f.prod);
	free(wrap);
	return true;
}
