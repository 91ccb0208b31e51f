// SPDX-License-Identifier: GPL-2.0
/*
 * v_sample: the truth for --sample and -s, whose figures are estimates.
 * One thread (its draws are then the same in every run under
 * MEMLEAKBPF_SAMPLE_SEED), sites of known sizes:
 *   site_small  100,000 blocks of 48 bytes, kept: far below any mean, few sampled;
 *   site_mid    2,000 blocks of 16 KiB, every other one freed: frees of
 *               sampled and unsampled blocks alike; 1,000 kept;
 *   site_big    8 blocks of 4 MiB, kept: far above the mean, always sampled;
 *   site_churn  20,000 blocks of 1,000 bytes, each freed at once: nothing kept;
 *   site_grow   1,000 blocks of 100 bytes, each realloc'ed to 32 KiB, kept;
 *   site_shrink 1,000 blocks of 32 KiB, each realloc'ed to 64 bytes, kept.
 * Truth: TRUTH lines (see truth.h) to $VICTIM_TRUTH or stdout; exit status 0.
 *
 * Truth: site_small 4,800,000 bytes in 100,000; site_mid 16,384,000 in
 * 1,000; site_big 33,554,432 in 8; site_grow (realloc) 32,768,000 in 1,000;
 * site_shrink (realloc) 64,000 in 1,000.
 */
#include "truth.h"

#define SMALL_BLOCKS 100000
#define SMALL_SIZE 48
#define MID_BLOCKS 2000
#define MID_SIZE 16384
#define BIG_BLOCKS 8
#define BIG_SIZE (4u << 20)
#define CHURN_BLOCKS 20000
#define CHURN_SIZE 1000
#define GROW_BLOCKS 1000
#define GROW_FROM 100
#define GROW_TO 32768
#define SHRINK_TO 64

static void *mid[MID_BLOCKS];

SITE void *site_small(void)
{
	void *p = malloc(SMALL_SIZE); TR_ALLOC(p, SMALL_SIZE, "malloc"); ESCAPE(p);
	return p;
}

SITE void *site_mid(void)
{
	void *p = malloc(MID_SIZE); TR_ALLOC(p, MID_SIZE, "malloc"); ESCAPE(p);
	return p;
}

SITE void *site_big(void)
{
	void *p = malloc(BIG_SIZE); TR_ALLOC(p, BIG_SIZE, "malloc"); ESCAPE(p);
	return p;
}

SITE void site_churn(void)
{
	void *p = malloc(CHURN_SIZE); TR_ALLOC(p, CHURN_SIZE, "malloc"); ESCAPE(p);
	free(p); tr_free(p);
}

SITE void *site_grow(void)
{
	void *p = malloc(GROW_FROM); TR_ALLOC(p, GROW_FROM, "malloc"); ESCAPE(p);
	void *q = realloc(p, GROW_TO); TR_MOVE(p, q, GROW_TO, "realloc"); ESCAPE(q);
	return q;
}

SITE void *site_shrink(void)
{
	void *p = malloc(GROW_TO); TR_ALLOC(p, GROW_TO, "malloc"); ESCAPE(p);
	memset(p, 1, GROW_TO);
	void *q = realloc(p, SHRINK_TO); TR_MOVE(p, q, SHRINK_TO, "realloc"); ESCAPE(q);
	return q;
}

int main(void)
{
	for (int i = 0; i < SMALL_BLOCKS; i++)
		site_small();
	for (int i = 0; i < MID_BLOCKS; i++)
		mid[i] = site_mid();
	for (int i = 0; i < MID_BLOCKS; i += 2) {
		free(mid[i]);
		tr_free(mid[i]);
	}
	for (int i = 0; i < BIG_BLOCKS; i++)
		site_big();
	for (int i = 0; i < CHURN_BLOCKS; i++)
		site_churn();
	for (int i = 0; i < GROW_BLOCKS; i++)
		site_grow();
	for (int i = 0; i < GROW_BLOCKS; i++)
		site_shrink();
	tr_report();
	return 0;
}
