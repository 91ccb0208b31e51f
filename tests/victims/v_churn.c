// SPDX-License-Identifier: GPL-2.0
/*
 * v_churn: many distinct stacks with almost nothing live, as fast as the
 * allocator goes; the workload where the tracer's sweep must keep up with
 * the churn of stacks rather than with what is outstanding.
 *
 *   v_churn BITS ROUNDS [LEAK_EVERY [HOLD_EVERY]]
 *
 * Each round walks the 2^BITS paths through via_zero and via_one, BITS
 * levels deep (the bits of the path's number pick the function at each
 * level): 2^BITS distinct stacks. At a path's end site_churn mallocs a block
 * and frees it at once, so at most one block is live (two with LEAK_EVERY).
 * Every LEAK_EVERY-th path (0: none) ends in site_leak instead, which
 * mallocs and frees as well, but in the last round keeps its block. No
 * pause between rounds: the churn outruns a sweep that only looks now and
 * then. Every HOLD_EVERY-th other path (0: none) ends in site_hold, whose
 * stack holds a block from the first round to the last, which frees it:
 * sites that stay among those the churn comes and goes between, as a
 * torch import's 210,000 held ones do (the sweep leaves RETIRED slots
 * between them, which new sites take).
 *
 * Truth: site_leak holds 2^BITS / LEAK_EVERY blocks of 64 bytes (TRUTH
 * lines); notes "# total: allocs=N bytes=B" (every allocation of both
 * sites), "# stacks: S" (distinct stacks), "# leaking: L" (stacks of
 * site_leak) and "# per_stack: ROUNDS" (allocations from each stack).
 */
#define _GNU_SOURCE
#include "truth.h"

#define CHURN_SIZE 48
#define LEAK_SIZE 64
#define HOLD_SIZE 56
#define HOLD_MAX (1u << 19)

static unsigned long allocs, bytes;
static void *held[HOLD_MAX];	/* site_hold's block of each of its paths */

SITE void site_churn(void)
{
	void *p = malloc(CHURN_SIZE); ESCAPE(p);

	free(p);
	allocs++;
	bytes += CHURN_SIZE;
}

SITE void site_leak(int keep)
{
	void *p = malloc(LEAK_SIZE); if (keep) TR_ALLOC(p, LEAK_SIZE, "malloc"); ESCAPE(p);

	if (!keep)
		free(p);
	allocs++;
	bytes += LEAK_SIZE;
}

/* A new block each round in place of the last one, and none after the last round. */
SITE void site_hold(void **slot, int last)
{
	void *p = malloc(HOLD_SIZE); ESCAPE(p);

	free(*slot);
	*slot = p;
	if (last) {
		free(p);
		*slot = NULL;
	}
	allocs++;
	bytes += HOLD_SIZE;
}

struct walk {
	unsigned leak_every, hold_every;
	int last;		/* the last round: site_leak keeps its block */
};

VIA void via_zero(const struct walk *w, unsigned path, unsigned bits, int depth);
VIA void via_one(const struct walk *w, unsigned path, unsigned bits, int depth);

/* The next level of the path: bit `depth` of its number names the function. */
static void descend(const struct walk *w, unsigned path, unsigned bits, int depth)
{
	if (depth == (int)bits) {
		if (w->leak_every && path % w->leak_every == 0)
			site_leak(w->last);
		else if (w->hold_every && path % w->hold_every == w->hold_every - 1)
			site_hold(&held[path / w->hold_every], w->last);
		else
			site_churn();
	} else if (path >> depth & 1) {
		via_one(w, path, bits, depth + 1);
	} else {
		via_zero(w, path, bits, depth + 1);
	}
}

VIA void via_zero(const struct walk *w, unsigned path, unsigned bits, int depth)
{
	descend(w, path, bits, depth);
	OPAQUE(path);	/* not a tail call: each level keeps its frame */
}

VIA void via_one(const struct walk *w, unsigned path, unsigned bits, int depth)
{
	descend(w, path, bits, depth);
	OPAQUE(path);
}

int main(int argc, char **argv)
{
	unsigned bits = argc > 1 ? (unsigned)atoi(argv[1]) : 0;
	int rounds = argc > 2 ? atoi(argv[2]) : 0;
	struct walk w = { argc > 3 ? (unsigned)atoi(argv[3]) : 0,
			  argc > 4 ? (unsigned)atoi(argv[4]) : 0, 0 };
	char note[128];

	if (bits < 1 || bits > 20 || rounds < 1 ||
	    (w.leak_every && (1u << bits) / w.leak_every > TR_CAP / 2) ||
	    (w.hold_every && (w.hold_every < 2 || (1u << bits) / w.hold_every >= HOLD_MAX))) {
		tr_say(2, "usage: v_churn BITS(1-20) ROUNDS [LEAK_EVERY [HOLD_EVERY(2-)]]\n");
		return 2;
	}
	for (int r = 0; r < rounds; r++) {
		w.last = r == rounds - 1;
		for (unsigned path = 0; path < 1u << bits; path++)
			descend(&w, path, bits, 0);
	}
	snprintf(note, sizeof(note), "allocs=%lu bytes=%lu", allocs, bytes);
	tr_note("total", note);
	tr_note_u64("stacks", 1ull << bits);
	tr_note_u64("leaking", w.leak_every ? ((1u << bits) + w.leak_every - 1) / w.leak_every : 0);
	tr_note_u64("per_stack", (unsigned long long)rounds);
	tr_report();
	return 0;
}
