// SPDX-License-Identifier: GPL-2.0
/*
 * Reachability with memcheck's meanings (reach.h). The blocks are sorted by
 * address and indexed by page (reach_index.c), so that a word is known to
 * point into a block or not in a few steps; the marking runs in rounds, each
 * round's blocks read in address order through a window of the target's
 * memory, so that neighbours cost one read.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "reach.h"
#include "reach_index.h"
#include "util/vec.h"

#define REACH_CHUNK (1u << 20)	/* at most this much read for one scan step */
#define REACH_WINDOW (64u << 10)	/* and at least this much, for the neighbours */
#define REACH_PAGE 4096u
#define NO_CLIQUE UINT32_MAX
#define BATCH 512		/* words that may point into a block, looked up together */

/* A block's state while marking; at the end, UNREACHED ones are definitely lost. */
enum state { UNREACHED, POSSIBLE, REACHABLE, INDIRECT };

struct reach {
	struct reach_index idx;
	uint8_t *state;
	uint8_t *pending;	/* in work already */
	uint32_t *work, *round;
	size_t nr_work, cap_work, cap_round;
	uint8_t *win;		/* the window: win_len bytes of the target at win_start */
	uint64_t win_start;
	size_t win_len;
	bool win_short;		/* the read stopped at memory it could not read */
	reach_read_fn read;
	void *ctx;
	struct reach_stats *st;
	int err;
	uint64_t cand[BATCH];	/* words within the blocks' range, to look up */
	uint32_t found[BATCH];
	size_t nr_cand;
};

static void push(struct reach *r, uint32_t i)
{
	if (r->pending[i])
		return;
	if (vec__reserve_min(&r->work, &r->cap_work, r->nr_work + 1, sizeof(*r->work), 1024)) {
		r->err = -ENOMEM;
		return;
	}
	r->pending[i] = 1;
	r->work[r->nr_work++] = i;
}

/* A word found while marking from the roots (memcheck: lc_push_without_clique...). */
static void mark(struct reach *r, uint32_t i, bool start, bool definite)
{
	if (r->state[i] == REACHABLE)
		return;
	if (start && definite) {
		r->state[i] = REACHABLE;
		push(r, i);
	} else if (r->state[i] == UNREACHED) {
		r->state[i] = POSSIBLE;
		push(r, i);
	}
}

/* A word found in a lost block: what it reaches joins the leader's clique. */
static void gather(struct reach *r, uint32_t i, uint32_t leader)
{
	if (r->state[i] != UNREACHED || i == leader)
		return;
	r->state[i] = INDIRECT;
	push(r, i);
}

static void on_word(struct reach *r, uint64_t v, uint32_t i, bool definite, uint32_t clique)
{
	if (clique == NO_CLIQUE)
		mark(r, i, v == r->idx.spans[i].start, definite);
	else
		gather(r, i, clique);
}

/* The words collected, looked up together (reach_index__find_many), then marked. */
static void flush(struct reach *r, bool definite, uint32_t clique)
{
	reach_index__find_many(&r->idx, r->cand, r->nr_cand, r->found);
	for (size_t k = 0; k < r->nr_cand; k++)
		if (r->found[k] != REACH_INDEX_NONE)
			on_word(r, r->cand[k], r->found[k], definite, clique);
	r->nr_cand = 0;
}

/*
 * Up to len bytes of the target at addr, from the window or read into it
 * (at least REACH_WINDOW: the blocks after it are likely next); *got is
 * short where the memory cannot be read.
 */
static const uint8_t *fetch(struct reach *r, uint64_t addr, size_t len, size_t *got)
{
	size_t want = len > REACH_WINDOW ? len : REACH_WINDOW;
	ssize_t n;

	if (addr >= r->win_start && addr - r->win_start < r->win_len) {
		size_t off = addr - r->win_start, have = r->win_len - off;

		if (have >= len || r->win_short) {
			*got = have < len ? have : len;
			return r->win + off;
		}
	}
	n = r->read(r->ctx, addr, r->win, want);
	r->win_start = addr;
	r->win_len = n > 0 ? (size_t)n : 0;
	r->win_short = r->win_len < want;
	*got = r->win_len < len ? r->win_len : len;
	return r->win;
}

/* Every aligned word of [start, end) of the target, as a pointer from there. */
static void scan(struct reach *r, uint64_t start, uint64_t end, bool definite, uint32_t clique,
		 uint64_t *counted)
{
	uint64_t a = (start + 7) & ~7ull;

	end &= ~7ull;
	while (a < end && !r->err) {
		uint64_t len = end - a < REACH_CHUNK ? end - a : REACH_CHUNK;
		size_t got;
		const uint8_t *p = fetch(r, a, len, &got);

		got &= ~(size_t)7;
		if (!got) {
			/* An unreadable page: skip to the next one. */
			uint64_t next = (a | (REACH_PAGE - 1)) + 1;

			next = next < end ? next : end;
			r->st->unread_bytes += next - a;
			a = next;
			continue;
		}
		*counted += got;
		for (size_t o = 0; o < got; o += 8) {
			uint64_t v;

			memcpy(&v, p + o, sizeof(v));
			if (v < r->idx.lo || v >= r->idx.hi)
				continue;
			r->cand[r->nr_cand++] = v;
			if (r->nr_cand == BATCH)
				flush(r, definite, clique);
		}
		a += got;
	}
	/* This scan's words are marked as its own: the next may be definite or not. */
	flush(r, definite, clique);
}

/* A root range less the blocks inside it: the heap is not a root, only what points into it. */
static void scan_root(struct reach *r, const struct reach_range *root)
{
	uint64_t s = root->start;
	uint32_t i = reach_index__first_after(&r->idx, s);

	for (; i < r->idx.nr && r->idx.spans[i].start < root->end && !r->err; i++) {
		if (r->idx.spans[i].start > s)
			scan(r, s, r->idx.spans[i].start, true, NO_CLIQUE, &r->st->root_bytes);
		if (r->idx.spans[i].end > s)
			s = r->idx.spans[i].end;
	}
	if (s < root->end)
		scan(r, s, root->end, true, NO_CLIQUE, &r->st->root_bytes);
}

static int u32_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * Scan what is pending, in rounds: each round in address order (the
 * blocks' order), so that the window serves neighbours. A block's
 * pointers are as definite as its state when it is scanned (memcheck:
 * from a possibly lost block, nothing is more than possibly lost).
 */
static void drain(struct reach *r, uint32_t clique)
{
	while (r->nr_work && !r->err) {
		uint32_t *t = r->round;
		size_t cap = r->cap_round, nr = r->nr_work;

		r->round = r->work;
		r->cap_round = r->cap_work;
		r->work = t;
		r->cap_work = cap;
		r->nr_work = 0;
		qsort(r->round, nr, sizeof(*r->round), u32_cmp);
		for (size_t k = 0; k < nr && !r->err; k++) {
			uint32_t i = r->round[k];
			uint64_t start = r->idx.spans[i].start;

			r->pending[i] = 0;
			scan(r, start, start + reach_index__size(&r->idx, i), r->state[i] != POSSIBLE,
			     clique, &r->st->block_bytes);
		}
	}
}

/* The lost blocks, in address order, each leading those only it reaches. */
static void gather_cliques(struct reach *r)
{
	for (uint32_t i = 0; i < r->idx.nr && !r->err; i++) {
		if (r->state[i] != UNREACHED)
			continue;
		push(r, i);
		drain(r, i);
	}
}

static const uint8_t kind_of[] = {
	[UNREACHED] = REACH_DEFINITE,
	[POSSIBLE] = REACH_POSSIBLE,
	[REACHABLE] = REACH_REACHABLE,
	[INDIRECT] = REACH_INDIRECT,
};

static void reach_free(struct reach *r)
{
	reach_index__free(&r->idx);
	free(r->state);
	free(r->pending);
	free(r->work);
	free(r->round);
	free(r->win);
}

int reach__classify(const struct reach_input *in, uint8_t *kinds, struct reach_stats *st)
{
	struct reach r = { .read = in->read, .ctx = in->ctx, .st = st };

	memset(st, 0, sizeof(*st));
	r.err = reach_index__build_strided(&r.idx, in->blocks, in->nr_blocks,
					   in->stride ?: sizeof(*in->blocks));
	r.state = calloc(in->nr_blocks ?: 1, 1);
	r.pending = calloc(in->nr_blocks ?: 1, 1);
	r.win = malloc(REACH_CHUNK > REACH_WINDOW ? REACH_CHUNK : REACH_WINDOW);
	if (!r.err && (!r.state || !r.pending || !r.win))
		r.err = -ENOMEM;
	for (size_t i = 0; i < in->nr_regs && !r.err; i++) {
		uint32_t at;

		if (reach_index__find(&r.idx, in->regs[i], &at))
			on_word(&r, in->regs[i], at, true, NO_CLIQUE);
	}
	for (size_t i = 0; i < in->nr_roots && !r.err; i++)
		scan_root(&r, &in->roots[i]);
	drain(&r, NO_CLIQUE);
	gather_cliques(&r);
	for (uint32_t i = 0; i < r.idx.nr && !r.err; i++)
		kinds[r.idx.orig[i]] = kind_of[r.state[i]];
	reach_free(&r);
	return r.err;
}

const char *reach__kind_text(enum reach_kind k)
{
	static const char *const text[REACH__COUNT] = {
		"definitely lost", "indirectly lost", "possibly lost", "still reachable",
	};

	return k < REACH__COUNT ? text[k] : "?";
}

const char *reach__kind_key(enum reach_kind k)
{
	static const char *const key[REACH__COUNT] = {
		"definitely_lost", "indirectly_lost", "possibly_lost", "still_reachable",
	};

	return k < REACH__COUNT ? key[k] : "?";
}
