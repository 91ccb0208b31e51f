// SPDX-License-Identifier: GPL-2.0
/*
 * v_static: simple leaks in a statically linked binary (the Makefile adds
 * -static because the name holds "static"): malloc lives in the executable
 * itself, and so do glibc's own mmaps for large blocks.
 * Truth: TRUTH lines (see truth.h) to $VICTIM_TRUTH or stdout; exit status 0.
 *
 * Truth: 8 TRUTH lines; heap 264,694 bytes in 14 blocks, mappings 8,192 bytes in 1.
 *
 * valgrind 3.19 (--leak-check=full --show-leak-kinds=all), once: valgrind
 * cannot intercept malloc in a static binary, so it reports
 *   in use at exit: 0 bytes in 0 blocks; total heap usage: 0 allocs
 * and no leak at all. The truth was checked instead by building this file
 * dynamically (same flags, without -static) and running that under valgrind:
 *   definitely lost: 264,694 bytes in 14 blocks
 *   indirectly lost: 0, possibly lost: 0, still reachable: 0 bytes in 0 blocks
 *   = the heap sum of the TRUTH lines (plus the 8,192-byte mmap, untracked).
 */
#define _GNU_SOURCE
#include <malloc.h>
#include <stdint.h>
#include <sys/mman.h>
#include "truth.h"

#define KiB 1024

SITE void site_static_malloc(size_t n)
{
	void *p = malloc(n); TR_ALLOC(p, n, "malloc"); ESCAPE(p);
}

SITE void site_static_calloc(size_t nmemb, size_t size)
{
	void *p = calloc(nmemb, size); TR_ALLOC(p, nmemb * size, "calloc"); ESCAPE(p);
}

SITE void *site_static_src(size_t n)
{
	void *p = malloc(n); TR_ALLOC(p, n, "malloc"); ESCAPE(p);
	return p;
}

SITE void site_static_realloc(void *old, size_t n)
{
	void *p = realloc(old, n); ESCAPE(p); if (p) TR_MOVE(old, p, n, "realloc");
}

SITE void site_static_memalign(size_t align, size_t n)
{
	void *p = memalign(align, n); TR_ALLOC(p, n, "memalign"); ESCAPE(p);
}

SITE void site_static_posix_memalign(size_t align, size_t n)
{
	void *p = NULL;
	int err = posix_memalign(&p, align, n); ESCAPE(p); if (!err) TR_ALLOC(p, n, "posix_memalign");
}

SITE void site_static_large(size_t n)
{
	void *p = malloc(n); TR_ALLOC(p, n, "malloc"); ESCAPE(p);
}

SITE void site_static_deep(size_t n)
{
	void *p = malloc(n); TR_ALLOC(p, n, "malloc"); ESCAPE(p);
}

VIA void via_static(size_t n)
{
	TR_ENTER();
	site_static_deep(n);
	TR_LEAVE();
}

/* The program's own mmap counts, also in a static binary. */
SITE void site_static_mmap(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0); ESCAPE(p); if (p != MAP_FAILED) TR_ALLOC(p, len, "mmap");
}

SITE void site_static_freed(int rounds)
{
	for (int i = 0; i < rounds; i++) {
		void *p = malloc(32 + i); ESCAPE(p);
		void *q = realloc(p, 3000 + i); ESCAPE(q);
		free(q ? q : p);
		p = calloc(2, 200 * KiB); ESCAPE(p); free(p);
	}
}

int main(void)
{
	int i;

	TR_ENTER();
	site_static_large(256 * KiB);
	for (i = 0; i < 4; i++)
		site_static_malloc(100);
	site_static_calloc(5, 20);
	site_static_calloc(5, 20);
	site_static_realloc(site_static_src(10), 1000);
	site_static_memalign(64, 200);
	site_static_posix_memalign(32, 300);
	site_static_posix_memalign(32, 300);
	for (i = 0; i < 3; i++)
		via_static(50);
	site_static_mmap(8192);
	site_static_freed(50);

	tr_report();
	TR_LEAVE();
	return 0;
}
