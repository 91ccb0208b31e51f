// SPDX-License-Identifier: GPL-2.0
/*
 * v_stacks: churn from many more distinct stacks than the tracer's tables
 * hold, as a torch import does, around one small leak.
 *
 *   v_stacks BITS ROUNDS [keep|hot]
 *
 * Each round walks 2^BITS paths through via_zero and via_one, BLOCK_BITS +
 * BITS levels deep (the bits of the path's number pick the function at each
 * level), and at the end of each path site_churn mallocs a block and frees
 * it at once. Round r takes the paths of block r % BLOCKS: BLOCKS * 2^BITS
 * distinct stacks in all, each used once every BLOCKS rounds, so a stack
 * reclaimed after its round comes back later, and its figures must add up.
 * site_keep mallocs 100 bytes per round and keeps them. Rounds are 0.1 s
 * apart, so that the tracer sweeps between them. With "keep", each churn
 * block lives until its stack comes back BLOCKS rounds later (then freed,
 * and a new one kept): up to BLOCKS * 2^BITS stacks hold a block at once,
 * as a torch job's 210,000 do (make bench's reports); its truth is the
 * same but for site_churn's outstanding blocks, not written. With "hot",
 * each round also walks HOT_PATHS short paths (HOT_DEPTH levels) twice to
 * site_hot, which mallocs and frees: stacks that allocate more than any
 * of site_churn's, so that the churn's list is theirs and site_churn's,
 * once retired, may fold unread (a torch job's import beside its loop).
 *
 * Truth: site_keep holds 100 * ROUNDS bytes in ROUNDS blocks; notes
 * "# total: site_churn malloc allocs=N bytes=B" (all freed), "# stacks: S"
 * (distinct stacks of site_churn) and "# per_stack: K" (allocations from
 * each of them, when ROUNDS is a multiple of BLOCKS; else 0); with "hot",
 * "# hot: site_hot malloc allocs=N bytes=B" (all freed).
 */
#define _GNU_SOURCE
#include <stdbool.h>
#include <time.h>
#include "truth.h"

#define CHURN_SIZE 48
#define BLOCK_BITS 3
#define BLOCKS (1u << BLOCK_BITS)
#define HOT (1u << 31)		/* a path's whole number: to site_hot */
#define HOT_SIZE 40
#define HOT_PATHS 32
#define HOT_DEPTH 5

static unsigned long hot;

static unsigned long churned;
static void **kept;	/* "keep": each stack's live block, by its path */

SITE void site_churn(unsigned path)
{
	void *p = malloc(CHURN_SIZE); ESCAPE(p);

	if (kept) {
		free(kept[path]);
		kept[path] = p;
	} else {
		free(p);
	}
	churned++;
}

SITE void site_hot(void)
{
	void *p = malloc(HOT_SIZE); ESCAPE(p);

	free(p);
	hot++;
}

SITE void site_keep(void)
{
	void *p = malloc(100); TR_ALLOC(p, 100, "malloc"); ESCAPE(p);
}

VIA void via_zero(unsigned path, unsigned whole, int depth);
VIA void via_one(unsigned path, unsigned whole, int depth);

/* The next level of the path: its lowest bit names the function. */
static void descend(unsigned path, unsigned whole, int depth)
{
	if (!depth && whole & HOT)
		site_hot();
	else if (!depth)
		site_churn(whole);
	else if (path & 1)
		via_one(path >> 1, whole, depth - 1);
	else
		via_zero(path >> 1, whole, depth - 1);
}

VIA void via_zero(unsigned path, unsigned whole, int depth)
{
	descend(path, whole, depth);
	OPAQUE(path);	/* not a tail call: each level keeps its frame */
}

VIA void via_one(unsigned path, unsigned whole, int depth)
{
	descend(path, whole, depth);
	OPAQUE(path);
}

VIA void via_round(int bits, unsigned block, bool hot_too)
{
	TR_ENTER();
	for (unsigned i = 0; hot_too && i < 2 * HOT_PATHS; i++)
		descend(i % HOT_PATHS, HOT | i, HOT_DEPTH);
	for (unsigned path = 0; path < 1u << bits; path++)
		descend(block << bits | path, block << bits | path, bits + BLOCK_BITS);
	site_keep();
	TR_LEAVE();
}

int main(int argc, char **argv)
{
	int bits = argc > 1 ? atoi(argv[1]) : 16, rounds = argc > 2 ? atoi(argv[2]) : 4;
	struct timespec pause = { 0, 100 * 1000 * 1000 };
	char note[128];

	if (bits < 1 || bits > 20 || rounds < 1)
		return 2;
	bool hot_too = argc > 3 && !strcmp(argv[3], "hot");

	if (argc > 3 && !strcmp(argv[3], "keep") && !(kept = calloc(BLOCKS << bits, sizeof(*kept))))
		return 2;
	TR_ENTER();
	for (int r = 0; r < rounds; r++) {
		via_round(bits, (unsigned)r % BLOCKS, hot_too);
		nanosleep(&pause, NULL);
	}
	snprintf(note, sizeof(note), "site_churn malloc allocs=%lu bytes=%lu", churned,
		 churned * CHURN_SIZE);
	tr_note("total", note);
	snprintf(note, sizeof(note), "%u", (rounds < (int)BLOCKS ? (unsigned)rounds : BLOCKS) << bits);
	tr_note("stacks", note);
	snprintf(note, sizeof(note), "%u", rounds % BLOCKS ? 0 : rounds / BLOCKS);
	tr_note("per_stack", note);
	if (hot_too) {
		snprintf(note, sizeof(note), "site_hot malloc allocs=%lu bytes=%lu", hot,
			 hot * HOT_SIZE);
		tr_note("hot", note);
	}
	tr_report();
	return 0;
}
