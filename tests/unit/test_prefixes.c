// SPDX-License-Identifier: GPL-2.0
/* model/prefixes.c: stacks as shared prefixes read back frame for frame. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <linux/types.h>
#include "memleak.h"
#include "model/prefixes.h"
#include "unit.h"

#define DEPTH 60

static uint64_t rng(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/*
 * A stack as a torch job makes them: most of an earlier one's outer frames
 * (all but up to 8), then up to 8 new inner ones.
 */
static uint32_t make_stack(uint64_t *seed, uint64_t (*stacks)[DEPTH], const uint32_t *nrs,
			   uint32_t i, uint64_t *out)
{
	uint32_t nr = 1 + rng(seed) % DEPTH, keep = 0;

	if (i) {
		uint32_t from = rng(seed) % i, cut = rng(seed) % 9;

		keep = nrs[from] > cut ? nrs[from] - cut : 0;
		nr = keep + 1 + rng(seed) % 8;
		nr = nr < DEPTH ? nr : DEPTH;
		keep = keep < nr ? keep : nr;
		/* The outer keep frames of stack from, at the outer end of this one. */
		memcpy(out + nr - keep, stacks[from] + nrs[from] - keep, keep * sizeof(*out));
	}
	for (uint32_t j = 0; j < nr - keep; j++)
		/* Few addresses (many equal frames, in other places), told apart in any byte. */
		out[j] = 0x400000 + ((rng(seed) % 64) << (8 * (rng(seed) % 8)));
	return nr;
}

/* Does the stack of leaf read back as frames[0..nr), and stop there? */
static bool reads_back(const struct prefixes *p, uint32_t leaf, const uint64_t *frames, uint32_t nr)
{
	uint64_t got[DEPTH + 1];

	memset(got, 0xff, sizeof(got));
	return prefixes__walk(p, leaf, got, DEPTH + 1) == nr &&
	       !memcmp(got, frames, nr * sizeof(*got));
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The distinct outer prefixes of the stacks (the nodes a trie needs), by a hash of each. */
static size_t distinct_prefixes(uint64_t (*stacks)[DEPTH], const uint32_t *nrs, const bool *live,
				uint32_t n)
{
	uint64_t *h = malloc(n * DEPTH * sizeof(*h));
	size_t nr = 0, distinct = 0;

	for (uint32_t i = 0; i < n; i++) {
		uint64_t x = 0x9e3779b97f4a7c15ull;

		for (uint32_t k = nrs[i]; live[i] && k-- > 0;) {
			x = (x ^ stacks[i][k]) * 0xff51afd7ed558ccdull;
			x ^= x >> 29;
			h[nr++] = x;
		}
	}
	qsort(h, nr, sizeof(*h), cmp_u64);
	for (size_t i = 0; i < nr; i++)
		distinct += !i || h[i] != h[i - 1];
	free(h);
	return distinct;
}

/* Let go of the live stacks: no node is left. Frees the store and the arrays. */
static bool let_go_of_all(struct prefixes *p, uint64_t (*stacks)[DEPTH], uint32_t *nrs,
			  uint32_t *leaf, bool *live, uint32_t n)
{
	bool none;

	for (uint32_t i = 0; i < n; i++)
		if (live[i])
			prefixes__put(p, leaf[i]);
	none = prefixes__nodes(p) == 0;
	prefixes__free(p);
	free(stacks);
	free(nrs);
	free(leaf);
	free(live);
	return none;
}

TEST(prefixes_read_back_every_frame_and_share_outer_ones)
{
	enum { N = 3000 };
	uint64_t (*stacks)[DEPTH] = calloc(N, sizeof(*stacks)), seed = 42;
	uint32_t *nrs = calloc(N, sizeof(*nrs)), *leaf = calloc(N, sizeof(*leaf));
	bool *live = calloc(N, sizeof(*live));
	struct prefixes *p = prefixes__new(sizeof(uint64_t));
	size_t frames = 0;

	ASSERT(p && stacks && nrs && leaf && live);
	for (uint32_t i = 0; i < N; i++) {
		nrs[i] = make_stack(&seed, stacks, nrs, i, stacks[i]);
		frames += nrs[i];
		ASSERT(prefixes__intern(p, stacks[i], nrs[i], &leaf[i]) == 0 && leaf[i]);
		live[i] = true;
	}
	for (uint32_t i = 0; i < N; i++)
		ASSERT(reads_back(p, leaf[i], stacks[i], nrs[i]));
	/* One node per distinct outer prefix: far fewer than the frames. */
	ASSERT_EQ_U64(prefixes__nodes(p), distinct_prefixes(stacks, nrs, live, N));
	ASSERT(prefixes__nodes(p) < frames / 2);
	/* Let go of two thirds, the nodes only they held go; the rest still read back. */
	for (uint32_t i = 0; i < N; i++)
		if (i % 3) {
			prefixes__put(p, leaf[i]);
			live[i] = false;
		}
	ASSERT_EQ_U64(prefixes__nodes(p), distinct_prefixes(stacks, nrs, live, N));
	for (uint32_t i = 0; i < N; i++)
		ASSERT(!live[i] || reads_back(p, leaf[i], stacks[i], nrs[i]));
	/* New stacks take the freed nodes: all read back still, old and new. */
	for (uint32_t i = 0; i < N; i++)
		if (!live[i]) {
			nrs[i] = make_stack(&seed, stacks, nrs, i, stacks[i]);
			ASSERT(prefixes__intern(p, stacks[i], nrs[i], &leaf[i]) == 0);
			live[i] = true;
		}
	for (uint32_t i = 0; i < N; i++)
		ASSERT(reads_back(p, leaf[i], stacks[i], nrs[i]));
	ASSERT_EQ_U64(prefixes__nodes(p), distinct_prefixes(stacks, nrs, live, N));
	return let_go_of_all(p, stacks, nrs, leaf, live, N);
}

TEST(prefixes_a_stack_inside_another_and_holds_counted)
{
	struct prefixes *p = prefixes__new(sizeof(uint64_t));
	uint64_t inner[] = { 3, 2, 1 }, outer[] = { 2, 1 }, swapped[] = { 1, 2 }, got[4];
	uint32_t a, b, c, d;

	ASSERT(prefixes__intern(p, inner, 3, &a) == 0);
	/* The outer two frames of the first: a node of it, no new one. */
	ASSERT(prefixes__intern(p, outer, 2, &b) == 0 && prefixes__nodes(p) == 3);
	ASSERT(prefixes__walk(p, b, got, 4) == 2 && got[0] == 2 && got[1] == 1);
	/* The same frames in another order are another stack. */
	ASSERT(prefixes__intern(p, swapped, 2, &c) == 0 && c != b && prefixes__nodes(p) == 5);
	ASSERT(prefixes__walk(p, c, got, 4) == 2 && got[0] == 1 && got[1] == 2);
	ASSERT(prefixes__walk(p, a, got, 2) == 2 && got[0] == 3 && got[1] == 2);	/* max */
	ASSERT(prefixes__intern(p, NULL, 0, &d) == 0 && d == 0 && prefixes__walk(p, 0, got, 4) == 0);
	/* The longer one let go of: the shorter keeps its two. */
	prefixes__put(p, a);
	ASSERT(prefixes__nodes(p) == 4 && prefixes__walk(p, b, got, 4) == 2 && got[0] == 2);
	prefixes__hold(p, b);
	prefixes__prefetch(p, b);	/* fetched ahead of a put: nothing changes */
	prefixes__prefetch(p, 0);
	prefixes__put(p, b);
	ASSERT(prefixes__nodes(p) == 4 && prefixes__walk(p, b, got, 4) == 2 && got[1] == 1);
	prefixes__put(p, b);
	prefixes__put(p, c);
	ASSERT(prefixes__nodes(p) == 0);
	prefixes__free(p);
	return true;
}

/*
 * prefixes__frames: the frame of every node held, each once, and none of a
 * node let go of (whose room a later frame may take).
 */
TEST(prefixes_frames_of_every_node_held)
{
	struct prefixes *p = prefixes__new(sizeof(uint64_t));
	uint64_t a_frames[] = { 3, 2, 1 }, b_frames[] = { 4, 2, 1 }, *got;
	uint32_t a, b;
	size_t nr;
	int seen[5] = { 0 };

	ASSERT(prefixes__intern(p, a_frames, 3, &a) == 0);
	ASSERT(prefixes__intern(p, b_frames, 3, &b) == 0 && prefixes__nodes(p) == 4);
	ASSERT((got = prefixes__frames(p, &nr)) != NULL && nr == 4);
	for (size_t i = 0; i < nr; i++)
		seen[got[i] < 5 ? got[i] : 0]++;
	ASSERT(!seen[0] && seen[1] == 1 && seen[2] == 1 && seen[3] == 1 && seen[4] == 1);
	free(got);
	prefixes__put(p, a);
	ASSERT((got = prefixes__frames(p, &nr)) != NULL && nr == 3);
	for (size_t i = 0; i < nr; i++)
		ASSERT(got[i] != 3);
	free(got);
	prefixes__put(p, b);
	ASSERT((got = prefixes__frames(p, &nr)) != NULL && nr == 0);
	free(got);
	prefixes__free(p);
	return true;
}

TEST(prefixes_of_python_frames_tell_every_field)
{
	struct prefixes *p = prefixes__new(sizeof(struct py_frame));
	struct py_frame f[2] = { { 1, 2, 3, 4 }, { 5, 6, 7, 8 } }, g[2], got[2];
	uint32_t a, b;

	ASSERT(prefixes__new(12) == NULL);	/* frames are whole words */
	ASSERT(prefixes__intern(p, f, 2, &a) == 0);
	memcpy(g, f, sizeof(g));
	g[1].born |= 1ull << 56;	/* the outer frame differs in its last byte only */
	ASSERT(prefixes__intern(p, g, 2, &b) == 0 && b != a && prefixes__nodes(p) == 4);
	ASSERT(prefixes__walk(p, a, got, 2) == 2 && !memcmp(got, f, sizeof(f)));
	ASSERT(prefixes__walk(p, b, got, 2) == 2 && !memcmp(got, g, sizeof(g)));
	prefixes__put(p, a);
	prefixes__put(p, b);
	ASSERT(prefixes__nodes(p) == 0);
	prefixes__free(p);
	return true;
}

/*
 * An index sized for many nodes shrinks when most are let go of, and keeps
 * every node still held: the same frames interned again find the same
 * node (no new one), and every stack still reads back.
 */
TEST(prefixes_index_shrinks_and_keeps_every_held_node)
{
	enum { N = 20000 };
	uint64_t (*stacks)[DEPTH] = calloc(N, sizeof(*stacks)), seed = 7;
	uint32_t *nrs = calloc(N, sizeof(*nrs)), *leaf = calloc(N, sizeof(*leaf));
	bool *live = calloc(N, sizeof(*live));
	struct prefixes *p = prefixes__new(sizeof(uint64_t));
	size_t full, nodes;

	ASSERT(p && stacks && nrs && leaf && live);
	for (uint32_t i = 0; i < N; i++) {
		nrs[i] = make_stack(&seed, stacks, nrs, i, stacks[i]);
		ASSERT(prefixes__intern(p, stacks[i], nrs[i], &leaf[i]) == 0 && leaf[i]);
		live[i] = true;
	}
	full = prefixes__bytes(p);
	/* Keep one in 64, let go of the rest in an order apart from the interning's. */
	for (uint32_t k = 0; k < N; k++) {
		uint32_t i = (uint32_t)((uint64_t)k * 7919 % N);

		if (i % 64) {
			prefixes__put(p, leaf[i]);
			live[i] = false;
		}
	}
	nodes = prefixes__nodes(p);
	ASSERT_EQ_U64(nodes, distinct_prefixes(stacks, nrs, live, N));
	/* The chunks of nodes stay; the index went to a few pages. */
	ASSERT(prefixes__bytes(p) < full - 256 * 1024);
	for (uint32_t i = 0; i < N; i++) {
		uint32_t again;

		if (!live[i])
			continue;
		ASSERT(reads_back(p, leaf[i], stacks[i], nrs[i]));
		ASSERT(prefixes__intern(p, stacks[i], nrs[i], &again) == 0);
		ASSERT(again == leaf[i]);
		ASSERT_EQ_U64(prefixes__nodes(p), nodes);
		prefixes__put(p, again);
	}
	return let_go_of_all(p, stacks, nrs, leaf, live, N);
}
