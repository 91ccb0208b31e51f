// SPDX-License-Identifier: GPL-2.0
/*
 * v_prefix: a program linked with an allocator whose functions carry a
 * prefix, as redis links jemalloc's je_malloc, je_free...: here a small
 * arena allocator of its own, exported (the Makefile links every v_prefix*
 * with -rdynamic) as pfx_malloc, pfx_calloc, pfx_realloc, pfx_free. Traced
 * with --symbols-prefix pfx_, its blocks are exact; the C library's malloc
 * is then not probed, and this victim's one block from it (site_libc) is in
 * no TRUTH line: a report that shows it probed the wrong names.
 * Truth: TRUTH lines (see truth.h) to $VICTIM_TRUTH or stdout; exit status 0.
 *
 * Truth: 3 TRUTH lines; pfx_ heap 1,876 bytes in 6 blocks (site_pfx_malloc
 * 3 of 200, site_pfx_calloc 1 of 5 * 52, site_pfx_realloc 2 of 508).
 */
#define _GNU_SOURCE
#include "truth.h"

#define PFX_API __attribute__((noinline, noipa, used, visibility("default")))
#define PFX_ARENA (1 << 20)

/* A block's header: its size, and the next free block of the free list. */
struct pfx_head {
	size_t size;
	struct pfx_head *next;
};

static _Alignas(16) unsigned char pfx_arena[PFX_ARENA];
static size_t pfx_used;
static struct pfx_head *pfx_free_list;
static pthread_mutex_t pfx_lock = PTHREAD_MUTEX_INITIALIZER;

/* A freed block of exactly n bytes, or a new one from the arena. */
PFX_API void *pfx_malloc(size_t n)
{
	struct pfx_head **at, *h = NULL;
	size_t need = (sizeof(struct pfx_head) + n + 15) & ~(size_t)15;

	pthread_mutex_lock(&pfx_lock);
	for (at = &pfx_free_list; *at; at = &(*at)->next)
		if ((*at)->size == n) {
			h = *at;
			*at = h->next;
			break;
		}
	if (!h && pfx_used + need <= PFX_ARENA) {
		h = (struct pfx_head *)(pfx_arena + pfx_used);
		pfx_used += need;
		h->size = n;
	}
	pthread_mutex_unlock(&pfx_lock);
	return h ? h + 1 : NULL;
}

PFX_API void pfx_free(void *p)
{
	struct pfx_head *h = (struct pfx_head *)p - 1;

	if (!p)
		return;
	pthread_mutex_lock(&pfx_lock);
	h->next = pfx_free_list;
	pfx_free_list = h;
	pthread_mutex_unlock(&pfx_lock);
}

PFX_API void *pfx_calloc(size_t nmemb, size_t size)
{
	void *p = pfx_malloc(nmemb * size);

	if (p)
		memset(p, 0, nmemb * size);
	return p;
}

PFX_API void *pfx_realloc(void *old, size_t n)
{
	void *p;

	if (!old)
		return pfx_malloc(n);
	p = pfx_malloc(n);
	if (p) {
		size_t had = ((struct pfx_head *)old - 1)->size;

		memcpy(p, old, had < n ? had : n);
		pfx_free(old);
	}
	return p;
}

SITE void site_pfx_malloc(size_t n)
{
	void *p = pfx_malloc(n); TR_ALLOC(p, n, "malloc"); ESCAPE(p);
}

SITE void site_pfx_calloc(size_t nmemb, size_t size)
{
	void *p = pfx_calloc(nmemb, size); TR_ALLOC(p, nmemb * size, "calloc"); ESCAPE(p);
}

SITE void *site_pfx_start(size_t n)
{
	void *p = pfx_malloc(n); TR_ALLOC(p, n, "malloc"); ESCAPE(p);
	return p;
}

SITE void *site_pfx_realloc(void *old, size_t n)
{
	void *p = pfx_realloc(old, n); ESCAPE(p); if (p) TR_MOVE(old, p, n, "realloc");
	return p ? p : old;
}

SITE void site_pfx_freed(size_t n)
{
	void *p = pfx_malloc(n); TR_ALLOC(p, n, "malloc"); ESCAPE(p);
	pfx_free(p); tr_free(p);
}

/* The C library's malloc: not the prefixed allocator's, so not traced under -S pfx_. */
SITE void site_libc(size_t n)
{
	void *p = malloc(n); ESCAPE(p);
}

int main(void)
{
	void *a;

	TR_ENTER();
	for (int i = 0; i < 3; i++)
		site_pfx_malloc(200);
	site_pfx_calloc(5, 52);
	for (int i = 0; i < 2; i++) {
		a = site_pfx_start(100);
		a = site_pfx_realloc(a, 508);
		ESCAPE(a);
	}
	for (int i = 0; i < 50; i++)
		site_pfx_freed(64 + i);
	site_libc(777);
	tr_report();
	TR_LEAVE();
	return 0;
}
