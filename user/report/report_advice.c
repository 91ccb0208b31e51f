// SPDX-License-Identifier: GPL-2.0
/*
 * Retained memory, per allocator: where the one serving malloc keeps what
 * was freed, and its own knobs to give it back. glibc, tcmalloc
 * (gperftools') and jemalloc each have theirs; the names are those the
 * libraries read (glibc 2.36, gperftools 2.10, jemalloc 5.3). Advice the
 * program has already taken (memory given back since) is left out.
 */
#include <stdio.h>
#include "model/report.h"
#include "report_advice.h"

#define SIZE_LEN 64

static const char *size_str(int64_t v, char *buf)
{
	return report__human_size(v > 0 ? (uint64_t)v : 0, buf, SIZE_LEN);
}

/* glibc's [heap] and arena heaps are its own: the memory maps say how much they grew. */
static void glibc_where(const struct report_memory *m, FILE *f)
{
	char a[SIZE_LEN];

	if (m->worst_in_heap * 2 >= m->worst_retained)
		fprintf(f, "  glibc's [heap] and thread arenas grew by %s: freed blocks it keeps.\n",
			size_str(m->worst_in_heap, a));
	else
		fprintf(f, "  Only %s of it is in glibc's [heap] and arenas:\n"
			"  the rest is in other anonymous mappings (another allocator's, thread stacks, mmaps not traced).\n",
			size_str(m->worst_in_heap, a));
}

void report_advice__retained_where(const struct report *r, FILE *f)
{
	switch (r->allocator) {
	case ALLOCATOR_GLIBC:
		glibc_where(&r->analysis->memory, f);
		break;
	case ALLOCATOR_TCMALLOC:
		fputs("  tcmalloc keeps freed memory in its spans and caches,\n"
		      "  and gives free spans back to the system a little at a time.\n", f);
		break;
	case ALLOCATOR_JEMALLOC:
		fputs("  jemalloc keeps freed pages (dirty, then muzzy) until they decay,\n"
		      "  and the pages that still hold a live block.\n", f);
		break;
	default:
		fputs("  The allocator serving malloc (not glibc's, tcmalloc or jemalloc) keeps it,\n"
		      "  or mappings not traced hold it.\n", f);
		break;
	}
}

/* One of a "What helps" list: a line each, ";" between them. */
static void item(bool *first, const char *s, FILE *f)
{
	if (!*first)
		fputs(";\n  ", f);
	fputs(s, f);
	*first = false;
}

static void glibc_advice(const struct report_memory *m, FILE *f)
{
	bool first = true;

	fputs("  What helps (glibc's malloc): ", f);
	if (!m->released)
		item(&first, "malloc_trim(0) after freeing much", f);
	if (m->worst.arenas)
		item(&first, "MALLOC_ARENA_MAX=2 (fewer per-thread arenas)", f);
	item(&first, "a lower trim threshold (mallopt M_TRIM_THRESHOLD, or MALLOC_TRIM_THRESHOLD_=131072)", f);
	item(&first, "or tcmalloc or jemalloc, which give freed memory back on their own", f);
	fputs(".\n", f);
}

static void tcmalloc_advice(const struct report_memory *m, FILE *f)
{
	bool first = true;

	fputs("  What helps (tcmalloc): ", f);
	if (!m->released)
		item(&first, "MallocExtension::instance()->ReleaseFreeMemory() after freeing much\n"
		     "  (from C: MallocExtension_ReleaseFreeMemory())", f);
	item(&first, "TCMALLOC_RELEASE_RATE=10 (free spans back sooner: the default is 1, 0 never)", f);
	item(&first, "TCMALLOC_AGGRESSIVE_DECOMMIT=true (each free span back at once)", f);
	fputs(".\n", f);
}

static void jemalloc_advice(const struct report_memory *m, FILE *f)
{
	bool first = true;

	fputs("  What helps (jemalloc): ", f);
	if (!m->released)
		item(&first, "mallctl(\"arena.4096.purge\", NULL, NULL, NULL, 0) after freeing much\n"
		     "  (4096: MALLCTL_ARENAS_ALL)", f);
	item(&first, "MALLOC_CONF=dirty_decay_ms:0,muzzy_decay_ms:0 (freed pages back at once)", f);
	item(&first, "MALLOC_CONF=background_thread:true (purged even while the program is idle)", f);
	item(&first, "MALLOC_CONF=narenas:2 (fewer arenas: four per CPU by default)", f);
	fputs(".\n", f);
}

void report_advice__text(const struct report *r, FILE *f)
{
	const struct report_memory *m = &r->analysis->memory;

	switch (r->allocator) {
	case ALLOCATOR_GLIBC:
		glibc_advice(m, f);
		break;
	case ALLOCATOR_TCMALLOC:
		tcmalloc_advice(m, f);
		break;
	case ALLOCATOR_JEMALLOC:
		jemalloc_advice(m, f);
		break;
	default:
		fputs("  What helps: the allocator's own call or setting that gives freed memory back.\n", f);
		break;
	}
}
