// SPDX-License-Identifier: GPL-2.0
/*
 * v_apis: every allocation API of glibc, with leaked, freed, moved, failed and
 * partly unmapped blocks. Truth: TRUTH lines (see truth.h) to $VICTIM_TRUTH or
 * stdout; exit status 0.
 *
 * Decisions this victim pins down (the tracer's contract):
 *  - malloc(0) returns a unique pointer in glibc: one 0-byte allocation;
 *  - realloc(p, 0) frees p (glibc returns NULL); realloc(NULL, n) is api
 *    realloc; a failed realloc/reallocarray leaves p at its original site;
 *  - pvalloc counts whole pages (at least one), calloc n*size, mmap the
 *    requested length; munmap of a mapping's front page leaves the rest;
 *  - blocks >= 128 KiB (glibc mmaps them, and mremaps them in realloc) are
 *    plain mallocs/reallocs at the user's site, allocated here before any
 *    large block is freed (freeing one raises glibc's mmap threshold).
 *
 * Truth (x86-64, glibc 2.36): 24 TRUTH lines; heap 1,297,767 bytes in 27
 * blocks, mappings 42,768 bytes in 3 (10,000 mmap, 12,288 left of a 16 KiB
 * mmap whose front page was unmapped, 20,480 mremapped).
 *
 * valgrind 3.19 (--leak-check=full --show-leak-kinds=all), once. Memcheck
 * aborts the program at pvalloc() ("Program aborting because of call to
 * pvalloc"), so it ran with VICTIM_NO_PVALLOC=1, which skips the pvalloc
 * calls (23 TRUTH lines, heap 1,285,479 bytes in 25 blocks):
 *   definitely lost: 1,285,479 bytes in 25 blocks
 *   indirectly lost: 0, possibly lost: 0, still reachable: 0 bytes in 0 blocks
 *   = the heap sum of the TRUTH lines (valgrind does not track mmap/mremap);
 *   the two pvalloc blocks (8,192 + 4,096) make the 1,297,767 in 27.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <malloc.h>
#include <stdint.h>
#include <sys/mman.h>
#include "truth.h"

#define KiB 1024

static size_t page;
static int no_pvalloc;	/* $VICTIM_NO_PVALLOC: valgrind aborts at pvalloc() */

/* ---- malloc ---- */

SITE void site_malloc(size_t n)
{
	void *p = malloc(n); TR_ALLOC(p, n, "malloc"); ESCAPE(p);
}

SITE void site_malloc_zero(void)
{
	size_t n = 0;

	OPAQUE(n);
	void *p = malloc(n); TR_ALLOC(p, n, "malloc"); ESCAPE(p);
}

/* Caller chain main -> via_top -> via_mid -> site_deep, checked in frames[1..3]. */
SITE void site_deep(size_t n)
{
	void *p = malloc(n); TR_ALLOC(p, n, "malloc"); ESCAPE(p);
}

VIA void via_mid(size_t n)
{
	TR_ENTER();
	site_deep(n);
	site_deep(n * 2);
	TR_LEAVE();
}

VIA void via_top(size_t n)
{
	TR_ENTER();
	via_mid(n);
	TR_LEAVE();
}

/* ---- calloc ---- */

SITE void site_calloc(size_t nmemb, size_t size)
{
	void *p = calloc(nmemb, size); TR_ALLOC(p, nmemb * size, "calloc"); ESCAPE(p);
}

/* ---- realloc ---- */

/* One block walks through four sites: only the last one holds it. */
SITE void *site_chain_start(size_t n)
{
	void *p = malloc(n); TR_ALLOC(p, n, "malloc"); ESCAPE(p);
	return p;
}

SITE void *site_chain_grow(void *old, size_t n)
{
	void *p = realloc(old, n); ESCAPE(p); if (p) TR_MOVE(old, p, n, "realloc");
	return p ? p : old;
}

SITE void *site_chain_shrink(void *old, size_t n)
{
	void *p = realloc(old, n); ESCAPE(p); if (p) TR_MOVE(old, p, n, "realloc");
	return p ? p : old;
}

/* A block behind it keeps the chunk from growing in place: realloc must move it. */
SITE void *site_move_src(size_t n)
{
	void *p = malloc(n); TR_ALLOC(p, n, "malloc"); ESCAPE(p);
	return p;
}

SITE void *site_move_blocker(size_t n)
{
	void *p = malloc(n); TR_ALLOC(p, n, "malloc"); ESCAPE(p);
	return p;
}

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

SITE void *site_rzero_src(size_t n)
{
	void *p = malloc(n); TR_ALLOC(p, n, "malloc"); ESCAPE(p);
	return p;
}

/* realloc(p, 0) frees p; glibc returns NULL (anything else would be recorded). */
SITE void site_realloc_zero(void *old)
{
	size_t n = 0;

	OPAQUE(n);
	void *p = realloc(old, n); tr_free(old); TR_ALLOC(p, n, "realloc"); ESCAPE(p);
}

SITE void *site_rfail_src(size_t n)
{
	void *p = malloc(n); TR_ALLOC(p, n, "malloc"); ESCAPE(p);
	return p;
}

/* Fails (ENOMEM): the block stays where site_rfail_src put it. */
SITE void site_realloc_fail(void *old)
{
	size_t n = (size_t)PTRDIFF_MAX + 1;

	OPAQUE(n);
	void *p = realloc(old, n); ESCAPE(p); if (p) TR_MOVE(old, p, n, "realloc");
}

/* ---- reallocarray ---- */

SITE void site_reallocarray_new(size_t nmemb, size_t size)
{
	void *z = NULL;

	OPAQUE(z);
	void *p = reallocarray(z, nmemb, size); TR_ALLOC(p, nmemb * size, "reallocarray"); ESCAPE(p);
}

SITE void *site_ra_src(size_t n)
{
	void *p = malloc(n); TR_ALLOC(p, n, "malloc"); ESCAPE(p);
	return p;
}

SITE void site_reallocarray_grow(void *old, size_t nmemb, size_t size)
{
	void *p = reallocarray(old, nmemb, size); ESCAPE(p); if (p) TR_MOVE(old, p, nmemb * size, "reallocarray");
}

SITE void *site_raof_src(size_t n)
{
	void *p = malloc(n); TR_ALLOC(p, n, "malloc"); ESCAPE(p);
	return p;
}

/* nmemb * size overflows: ENOMEM, the block stays at site_raof_src. */
SITE void site_reallocarray_overflow(void *old)
{
	size_t nmemb = SIZE_MAX / 2, size = 3;

	OPAQUE(nmemb);
	void *p = reallocarray(old, nmemb, size); ESCAPE(p); if (p) TR_MOVE(old, p, nmemb * size, "reallocarray");
}

/* ---- aligned ---- */

SITE void site_posix_memalign(size_t align, size_t n)
{
	void *p = NULL;
	int err = posix_memalign(&p, align, n); ESCAPE(p); if (!err) TR_ALLOC(p, n, "posix_memalign");
}

SITE void site_aligned_alloc(size_t align, size_t n)
{
	void *p = aligned_alloc(align, n); TR_ALLOC(p, n, "aligned_alloc"); ESCAPE(p);
}

SITE void site_memalign(size_t align, size_t n)
{
	void *p = memalign(align, n); TR_ALLOC(p, n, "memalign"); ESCAPE(p);
}

SITE void site_valloc(size_t n)
{
	void *p = valloc(n); TR_ALLOC(p, n, "valloc"); ESCAPE(p);
}

/* Counted as whole pages, at least one. */
SITE void site_pvalloc(size_t n)
{
	size_t pages = n ? (n + page - 1) / page : 1;

	void *p = pvalloc(n); TR_ALLOC(p, pages * page, "pvalloc"); ESCAPE(p);
}

/* ---- mmap / munmap / mremap ---- */

static void *map_anon(size_t len)
{
	return mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
}

#define MMAP(len) mmap(NULL, (len), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)

/* The requested length counts, not the pages behind it. */
SITE void site_mmap(size_t len)
{
	void *p = MMAP(len); ESCAPE(p); if (p != MAP_FAILED) TR_ALLOC(p, len, "mmap");
}

/* Four pages mapped, the front one unmapped: three stay outstanding here. */
SITE void site_mmap_partial(void)
{
	size_t len = 4 * page;

	char *p = MMAP(len); ESCAPE(p); if (p != MAP_FAILED) TR_ALLOC(p, len, "mmap");
	if (p != MAP_FAILED && !munmap(p, page))
		tr_munmap(p, page);
}

SITE void *site_mremap_src(size_t len)
{
	void *p = MMAP(len); ESCAPE(p); if (p != MAP_FAILED) TR_ALLOC(p, len, "mmap");
	return p;
}

/* Grows and (since the next pages are taken) moves: realloc-like, api mremap. */
SITE void site_mremap(void *old, size_t oldlen, size_t len)
{
	void *p = mremap(old, oldlen, len, MREMAP_MAYMOVE); ESCAPE(p); if (p != MAP_FAILED) TR_MOVE(old, p, len, "mremap");
}

/* ---- large blocks: glibc mmaps (and mremaps) them itself ---- */

SITE void site_large_malloc(size_t n)
{
	void *p = malloc(n); TR_ALLOC(p, n, "malloc"); ESCAPE(p);
}

SITE void site_large_calloc(size_t nmemb, size_t size)
{
	void *p = calloc(nmemb, size); TR_ALLOC(p, nmemb * size, "calloc"); ESCAPE(p);
}

SITE void *site_large_src(size_t n)
{
	void *p = malloc(n); TR_ALLOC(p, n, "malloc"); ESCAPE(p);
	return p;
}

SITE void site_large_realloc(void *old, size_t n)
{
	void *p = realloc(old, n); ESCAPE(p); if (p) TR_MOVE(old, p, n, "realloc");
}

SITE void site_large_posix_memalign(size_t n)
{
	void *p = NULL;
	int err = posix_memalign(&p, 4096, n); ESCAPE(p); if (!err) TR_ALLOC(p, n, "posix_memalign");
}

/* ---- sites that give everything back: no stack of theirs may show ---- */

SITE void site_freed_malloc(int rounds)
{
	for (int i = 0; i < rounds; i++) {
		void *p = malloc(24 + i); ESCAPE(p);
		free(p);
	}
}

SITE void site_freed_apis(void)
{
	void *p, *q, *z = NULL;

	OPAQUE(z);
	p = calloc(3, 50); ESCAPE(p); free(p);
	p = malloc(10); ESCAPE(p); q = realloc(p, 9000); ESCAPE(q); free(q ? q : p);
	p = realloc(z, 77); ESCAPE(p); free(p);
	p = reallocarray(z, 4, 25); ESCAPE(p); free(p);
	if (!posix_memalign(&p, 32, 100)) { ESCAPE(p); free(p); }
	p = aligned_alloc(64, 128); ESCAPE(p); free(p);
	p = memalign(256, 40); ESCAPE(p); free(p);
	p = valloc(5); ESCAPE(p); free(p);
	if (!no_pvalloc) {
		p = pvalloc(5); ESCAPE(p); free(p);
	}
	p = malloc(0); ESCAPE(p); free(p);
	free(z);	/* free(NULL) */
	p = map_anon(3 * page); ESCAPE(p); if (p != MAP_FAILED) munmap(p, 3 * page);
	p = map_anon(page);
	if (p != MAP_FAILED) {
		q = mremap(p, page, 8 * page, MREMAP_MAYMOVE); ESCAPE(q);
		munmap(q != MAP_FAILED ? q : p, q != MAP_FAILED ? 8 * page : page);
	}
}

SITE void site_freed_large(void)
{
	void *p = malloc(1024 * KiB); ESCAPE(p);
	void *q = realloc(p, 2048 * KiB); ESCAPE(q);
	free(q ? q : p);
	p = calloc(1, 300 * KiB); ESCAPE(p); free(p);
}

/* Failures: nothing to record (unless one unexpectedly succeeds). */
SITE void site_failures(void)
{
	size_t huge = (size_t)PTRDIFF_MAX + 1, half = SIZE_MAX / 2, zero = 0, three = 3;
	void *p, *z = NULL;

	OPAQUE(huge); OPAQUE(half); OPAQUE(zero); OPAQUE(three); OPAQUE(z);
	p = malloc(huge); TR_ALLOC(p, huge, "malloc"); ESCAPE(p);
	p = calloc(half, 4); TR_ALLOC(p, half * 4, "calloc"); ESCAPE(p);
	p = realloc(z, huge); TR_ALLOC(p, huge, "realloc"); ESCAPE(p);
	p = reallocarray(z, half, 3); TR_ALLOC(p, half * 3, "reallocarray"); ESCAPE(p);
	p = NULL;
	if (!posix_memalign(&p, three, 100)) TR_ALLOC(p, 100, "posix_memalign");
	ESCAPE(p);
	p = MMAP(zero); ESCAPE(p); if (p != MAP_FAILED) TR_ALLOC(p, 0, "mmap");
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
	void *a, *b, *blocker, *m;
	int i;

	TR_ENTER();
	page = (size_t)sysconf(_SC_PAGESIZE);
	no_pvalloc = getenv("VICTIM_NO_PVALLOC") != NULL;
	note_allocator();

	/* Large ones first, before any large free raises the mmap threshold. */
	site_large_malloc(256 * KiB);
	site_large_calloc(2, 100 * KiB);
	site_large_realloc(site_large_src(200 * KiB), 600 * KiB);
	site_large_posix_memalign(130 * KiB);

	for (i = 0; i < 3; i++)
		site_malloc(100);
	site_malloc_zero();
	via_top(40);

	site_calloc(7, 13);
	site_calloc(7, 13);

	a = site_chain_start(16);
	a = site_chain_grow(a, 5000);
	a = site_chain_shrink(a, 100);
	ESCAPE(a);

	a = site_move_src(64);
	blocker = site_move_blocker(64);
	ESCAPE(blocker);
	a = site_realloc_move(a, 64 * KiB);
	ESCAPE(a);

	site_realloc_null(64);
	site_realloc_zero(site_rzero_src(50));
	site_realloc_fail(site_rfail_src(77));

	site_reallocarray_new(10, 12);
	site_reallocarray_grow(site_ra_src(8), 20, 30);
	site_reallocarray_overflow(site_raof_src(40));

	site_posix_memalign(64, 1000);
	site_posix_memalign(64, 1000);
	site_aligned_alloc(256, 512);
	site_memalign(128, 300);
	site_valloc(1000);
	if (!no_pvalloc) {
		site_pvalloc(5000);
		site_pvalloc(1);
	}

	site_mmap(10000);
	site_mmap_partial();
	m = site_mremap_src(2 * page);
	/* Take the pages right after it so that growing has to move. */
	b = map_anon(page);
	if (m != MAP_FAILED && b != (char *)m + 2 * page) {
		munmap(b, page);
		b = mmap((char *)m + 2 * page, page, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	}
	if (m != MAP_FAILED)
		site_mremap(m, 2 * page, 5 * page);
	if (b != MAP_FAILED)
		munmap(b, page);

	site_freed_malloc(100);
	site_freed_apis();
	site_freed_large();
	site_failures();

	tr_report();
	TR_LEAVE();
	return 0;
}
