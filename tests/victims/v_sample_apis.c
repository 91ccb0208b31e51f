// SPDX-License-Identifier: GPL-2.0
/*
 * v_sample_apis: the allocating functions other than malloc under --sample,
 * each at a site of many small blocks (few sampled), kept. Under uprobe
 * sessions each is one program whose entry decides; glibc hands some of
 * them on to malloc itself (realloc(NULL, n), memalign and posix_memalign
 * with an alignment malloc gives anyway): deciding again there would take
 * those blocks twice as often as their weight says. One thread, so that
 * MEMLEAKBPF_SAMPLE_SEED draws the same in every run.
 *   site_calloc        25,000 calloc(1, 256)
 *   site_realloc_null  25,000 realloc(NULL, 256)
 *   site_memalign      25,000 memalign(16, 256)
 *   site_posix         25,000 posix_memalign(&p, 16, 256)
 *   site_aligned       10,000 aligned_alloc(64, 256)
 *   site_valloc         2,000 valloc(4096)
 * 112,000 calls in all. Truth: TRUTH lines (see truth.h) to $VICTIM_TRUTH
 * or stdout; exit status 0.
 */
#include <malloc.h>
#include "truth.h"

#define BLOCKS 25000
#define SIZE 256
#define ALIGNED_BLOCKS 10000
#define PAGES 2000
#define PAGE 4096

SITE void site_calloc(void)
{
	void *p = calloc(1, SIZE); TR_ALLOC(p, SIZE, "calloc"); ESCAPE(p);
}

SITE void site_realloc_null(void)
{
	void *p = realloc(NULL, SIZE); TR_ALLOC(p, SIZE, "realloc"); ESCAPE(p);
}

SITE void site_memalign(void)
{
	void *p = memalign(16, SIZE); TR_ALLOC(p, SIZE, "memalign"); ESCAPE(p);
}

SITE void site_posix(void)
{
	void *p = NULL;

	if (posix_memalign(&p, 16, SIZE))
		abort();
	TR_ALLOC(p, SIZE, "posix_memalign"); ESCAPE(p);
}

SITE void site_aligned(void)
{
	void *p = aligned_alloc(64, SIZE); TR_ALLOC(p, SIZE, "aligned_alloc"); ESCAPE(p);
}

SITE void site_valloc(void)
{
	void *p = valloc(PAGE); TR_ALLOC(p, PAGE, "valloc"); ESCAPE(p);
}

int main(void)
{
	for (int i = 0; i < BLOCKS; i++) {
		site_calloc();
		site_realloc_null();
		site_memalign();
		site_posix();
	}
	for (int i = 0; i < ALIGNED_BLOCKS; i++)
		site_aligned();
	for (int i = 0; i < PAGES; i++)
		site_valloc();
	tr_report();
	return 0;
}
