// SPDX-License-Identifier: GPL-2.0
/*
 * v_basic: the portable subset of the allocation APIs, for running under
 * other allocators (LD_PRELOAD=libtcmalloc_minimal.so.4 / libjemalloc.so.2).
 * Only malloc, calloc, realloc (grow in place or not, moved, from NULL), free,
 * posix_memalign and aligned_alloc: jemalloc has no pvalloc/reallocarray,
 * tcmalloc has no reallocarray, and realloc(p, 0) differs between them.
 * Truth: TRUTH lines (see truth.h) to $VICTIM_TRUTH or stdout, and a
 * "# malloc: <object>" note naming the allocator really in use; exit status 0.
 *
 * Truth: 9 TRUTH lines; heap 331,609 bytes in 17 blocks (no mappings).
 *
 * valgrind 3.19 (--leak-check=full --show-leak-kinds=all), once, glibc:
 *   definitely lost: 331,609 bytes in 17 blocks
 *   indirectly lost: 0, possibly lost: 0, still reachable: 0 bytes in 0 blocks
 *   = the sum of the TRUTH lines.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include "truth.h"

#define KiB 1024

SITE void site_malloc(size_t n)
{
	void *p = malloc(n); TR_ALLOC(p, n, "malloc"); ESCAPE(p);
}

SITE void site_deep(size_t n)
{
	void *p = malloc(n); TR_ALLOC(p, n, "malloc"); ESCAPE(p);
}

VIA void via_mid(size_t n)
{
	TR_ENTER();
	site_deep(n);
	TR_LEAVE();
}

VIA void via_top(size_t n)
{
	TR_ENTER();
	via_mid(n);
	via_mid(n + 1);
	TR_LEAVE();
}

SITE void site_calloc(size_t nmemb, size_t size)
{
	void *p = calloc(nmemb, size); TR_ALLOC(p, nmemb * size, "calloc"); ESCAPE(p);
}

SITE void *site_chain_start(size_t n)
{
	void *p = malloc(n); TR_ALLOC(p, n, "malloc"); ESCAPE(p);
	return p;
}

/* Small growth: most allocators keep the block where it is; still a new record. */
SITE void *site_realloc_grow(void *old, size_t n)
{
	void *p = realloc(old, n); ESCAPE(p); if (p) TR_MOVE(old, p, n, "realloc");
	return p ? p : old;
}

/* Into another size class: the block moves. */
SITE void *site_realloc_move(void *old, size_t n)
{
	void *p = realloc(old, n); ESCAPE(p); if (p) TR_MOVE(old, p, n, "realloc");
	return p ? p : old;
}

SITE void site_realloc_null(size_t n)
{
	void *z = NULL;

	OPAQUE(z);	/* gcc folds realloc(NULL, n) into malloc(n) */
	void *p = realloc(z, n); TR_ALLOC(p, n, "realloc"); ESCAPE(p);
}

SITE void site_posix_memalign(size_t align, size_t n)
{
	void *p = NULL;
	int err = posix_memalign(&p, align, n); ESCAPE(p); if (!err) TR_ALLOC(p, n, "posix_memalign");
}

SITE void site_aligned_alloc(size_t align, size_t n)
{
	void *p = aligned_alloc(align, n); TR_ALLOC(p, n, "aligned_alloc"); ESCAPE(p);
}

/* Large enough for every allocator to take it straight from mmap. */
SITE void site_large(size_t n)
{
	void *p = malloc(n); TR_ALLOC(p, n, "malloc"); ESCAPE(p);
}

SITE void site_freed(int rounds)
{
	void *p, *q, *z = NULL;

	OPAQUE(z);
	for (int i = 0; i < rounds; i++) {
		p = malloc(16 + i * 8); ESCAPE(p);
		q = realloc(p, 4000 + i); ESCAPE(q);
		free(q ? q : p);
		p = calloc(i + 1, 12); ESCAPE(p); free(p);
		p = realloc(z, 48); ESCAPE(p); free(p);
		if (!posix_memalign(&p, 128, 256)) { ESCAPE(p); free(p); }
		p = aligned_alloc(32, 96); ESCAPE(p); free(p);
	}
	p = malloc(1024 * KiB); ESCAPE(p); free(p);
	free(z);	/* free(NULL) */
}

/* "# malloc: <object>": lets the tests check that LD_PRELOAD took effect. */
static void note_allocator(void)
{
	Dl_info info;

	if (dladdr((void *)malloc, &info) && info.dli_fname)
		tr_note("malloc", info.dli_fname);
}

int main(void)
{
	void *a;
	int i;

	TR_ENTER();
	site_large(256 * KiB);
	for (i = 0; i < 5; i++)
		site_malloc(48);
	via_top(100);
	site_calloc(10, 10);
	site_calloc(3, 1000);

	a = site_chain_start(40);
	a = site_realloc_grow(a, 44);
	ESCAPE(a);
	a = site_chain_start(24);
	a = site_realloc_move(a, 60000);
	ESCAPE(a);
	site_realloc_null(72);
	site_realloc_null(72);

	site_posix_memalign(64, 1000);
	site_posix_memalign(4096, 4096);
	site_aligned_alloc(64, 640);

	site_freed(200);
	note_allocator();
	tr_report();
	TR_LEAVE();
	return 0;
}
