// SPDX-License-Identifier: GPL-2.0
/*
 * v_aliases: the allocation API under its other names, each an entry point
 * of its own in some allocator. Built with _FILE_OFFSET_BITS=64, as Debian
 * builds python3, so that mmap() is mmap64(): tcmalloc defines mmap64 apart
 * from mmap (glibc's are one function). glibc's __libc_malloc & co. are
 * malloc's own address in glibc and tcmalloc, glibc's heap under jemalloc,
 * which does not define them, and (__libc_free, __libc_realloc) functions
 * of their own in tbbmalloc_proxy. jemalloc's mallocx, rallocx,
 * sdallocx and dallocx and tcmalloc's tc_malloc_skip_new_handler are called
 * when the allocator defines them (dlsym), as their malloc, realloc and
 * free, and jemalloc's xallocx, a resize in place counted at its real size. Truth: TRUTH lines (see truth.h) to $VICTIM_TRUTH or stdout; exit
 * status 0.
 *
 * Truth (x86-64, glibc 2.36): mappings 16,777,216 bytes in 4 (site_mmap64)
 * + 12,288 (site_mmap_lfs, a 16 KiB mmap whose front page was unmapped)
 * + 20,480 (site_mremap64); heap 3,000 bytes in 3 (site_libc_malloc 1,000,
 * site_libc_calloc 1,200, site_libc_realloc 800). Under jemalloc 5.3, also
 * site_mallocx 2,300 in 2 (2,000 and the 300 xallocx could not grow),
 * site_rallocx 3,000 in 1 and site_xallocx 7,168 in 1; under tcmalloc,
 * site_skip_new_handler 500 in 1.
 *
 * valgrind 3.19 (--leak-check=full --show-leak-kinds=all), glibc, once:
 *   definitely lost: 3,000 bytes in 3 blocks
 *   indirectly lost: 0, possibly lost: 0, still reachable: 0 bytes in 0 blocks
 *   = the heap sum of the TRUTH lines (valgrind does not track mmap/mremap).
 */
#define _GNU_SOURCE
#define _FILE_OFFSET_BITS 64
#include <dlfcn.h>
#include <sys/mman.h>
#include "truth.h"

#define MiB (1024 * 1024)

/* glibc's names for its own malloc, exported for programs that wrap it. */
extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t nmemb, size_t size);
extern void *__libc_realloc(void *p, size_t n);
extern void __libc_free(void *p);

static size_t page;

#define MMAP64(len) mmap64(NULL, (len), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
/* mmap() under _FILE_OFFSET_BITS=64: the call goes to mmap64. */
#define MMAP(len) mmap(NULL, (len), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)

/* ---- mmap64 ---- */

SITE void site_mmap64(size_t len)
{
	void *p = MMAP64(len); ESCAPE(p); if (p != MAP_FAILED) TR_ALLOC(p, len, "mmap");
}

/* Four pages mapped, the front one unmapped: three stay outstanding here. */
SITE void site_mmap_lfs(void)
{
	size_t len = 4 * page;

	char *p = MMAP(len); ESCAPE(p); if (p != MAP_FAILED) TR_ALLOC(p, len, "mmap");
	if (p != MAP_FAILED && !munmap(p, page))
		tr_munmap(p, page);
}

SITE void *site_mremap64_src(size_t len)
{
	void *p = MMAP64(len); ESCAPE(p); if (p != MAP_FAILED) TR_ALLOC(p, len, "mmap");
	return p;
}

SITE void site_mremap64(void *old, size_t oldlen, size_t len)
{
	void *p = mremap(old, oldlen, len, MREMAP_MAYMOVE); ESCAPE(p); if (p != MAP_FAILED) TR_MOVE(old, p, len, "mremap");
}

/* ---- glibc's __libc_* ---- */

SITE void site_libc_malloc(size_t n)
{
	void *p = __libc_malloc(n); TR_ALLOC(p, n, "malloc"); ESCAPE(p);
}

SITE void site_libc_calloc(size_t nmemb, size_t size)
{
	void *p = __libc_calloc(nmemb, size); TR_ALLOC(p, nmemb * size, "calloc"); ESCAPE(p);
}

SITE void site_libc_realloc(size_t n)
{
	void *z = NULL;

	OPAQUE(z);
	void *p = __libc_realloc(z, n); TR_ALLOC(p, n, "realloc"); ESCAPE(p);
}

/* ---- allocator-specific names, when the allocator has them ---- */

SITE void site_skip_new_handler(void *(*fn)(size_t), size_t n)
{
	void *p = fn(n); TR_ALLOC(p, n, "malloc"); ESCAPE(p);
}

SITE void *site_mallocx(void *(*fn)(size_t, int), size_t n)
{
	void *p = fn(n, 0); TR_ALLOC(p, n, "malloc"); ESCAPE(p);
	return p;
}

SITE void site_rallocx(void *(*fn)(void *, size_t, int), void *old, size_t n)
{
	void *p = fn(old, n, 0); ESCAPE(p); if (p) TR_MOVE(old, p, n, "realloc");
}

typedef size_t (*xallocx_fn)(void *, size_t, size_t, int);

/* Resized in place: the block is here now, of the size xallocx says. */
SITE void site_xallocx(xallocx_fn fn, void *p, size_t n)
{
	size_t got = fn(p, n, 0, 0); if (got >= n) TR_MOVE(p, p, got, "xallocx");
}

/* Cannot grow in place that far: the block stays where it was. */
SITE void site_xallocx_fail(xallocx_fn fn, void *p)
{
	size_t n = 64 * MiB;
	size_t got = fn(p, n, 0, 0); if (got >= n) TR_MOVE(p, p, got, "xallocx");
}

/* ---- given back: no stack of theirs may show ---- */

SITE void site_freed_aliases(void)
{
	void *p = MMAP64(3 * page), *q;

	ESCAPE(p);
	if (p != MAP_FAILED)
		munmap(p, 3 * page);
	p = __libc_malloc(70); ESCAPE(p); __libc_free(p);
	p = __libc_calloc(3, 30); ESCAPE(p); q = __libc_realloc(p, 5000); ESCAPE(q);
	__libc_free(q ? q : p);
}

SITE void site_freed_jemalloc(void *(*mallocx)(size_t, int), void (*dallocx)(void *, int),
			      void (*sdallocx)(void *, size_t, int))
{
	void *p = mallocx(90, 0);

	ESCAPE(p);
	dallocx(p, 0);
	p = mallocx(4000, 0); ESCAPE(p);
	sdallocx(p, 4000, 0);
}

/* tcmalloc's and jemalloc's own entry points, where they are defined. */
VIA void via_allocator_names(void)
{
	void *(*skip)(size_t) = (void *(*)(size_t))dlsym(RTLD_DEFAULT, "tc_malloc_skip_new_handler");
	void *(*mallocx)(size_t, int) = (void *(*)(size_t, int))dlsym(RTLD_DEFAULT, "mallocx");
	void *(*rallocx)(void *, size_t, int) =
		(void *(*)(void *, size_t, int))dlsym(RTLD_DEFAULT, "rallocx");
	void (*dallocx)(void *, int) = (void (*)(void *, int))dlsym(RTLD_DEFAULT, "dallocx");
	void (*sdallocx)(void *, size_t, int) =
		(void (*)(void *, size_t, int))dlsym(RTLD_DEFAULT, "sdallocx");
	xallocx_fn xallocx = (xallocx_fn)dlsym(RTLD_DEFAULT, "xallocx");

	TR_ENTER();
	if (skip)
		site_skip_new_handler(skip, 500);
	if (mallocx && rallocx && dallocx && sdallocx && xallocx) {
		site_mallocx(mallocx, 2000);
		site_rallocx(rallocx, site_mallocx(mallocx, 100), 3000);
		/* 7,000 bytes are in jemalloc's class of 7,168: 7,100 fit in place. */
		site_xallocx(xallocx, site_mallocx(mallocx, 7000), 7100);
		site_xallocx_fail(xallocx, site_mallocx(mallocx, 300));
		site_freed_jemalloc(mallocx, dallocx, sdallocx);
	}
	TR_LEAVE();
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
	void *m;

	TR_ENTER();
	page = (size_t)sysconf(_SC_PAGESIZE);
	note_allocator();

	for (int i = 0; i < 4; i++)
		site_mmap64(4 * MiB);
	site_mmap_lfs();
	m = site_mremap64_src(2 * page);
	if (m != MAP_FAILED)
		site_mremap64(m, 2 * page, 5 * page);

	site_libc_malloc(1000);
	site_libc_calloc(4, 300);
	site_libc_realloc(800);
	via_allocator_names();

	site_freed_aliases();
	tr_report();
	TR_LEAVE();
	return 0;
}
