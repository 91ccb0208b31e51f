// SPDX-License-Identifier: GPL-2.0
/* From aggregated sites to a report: symbolizes every captured address. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "pystack.h"
#include "allocator.h"
#include "elfsym.h"
#include "report_build.h"

/* An address the symbolizer could say nothing about still gets its frame. */
static int append_bare_frame(uint64_t ip, struct report_frame **frames, size_t *nr)
{
	struct report_frame *f = realloc(*frames, (*nr + 1) * sizeof(**frames));

	if (!f)
		return -ENOMEM;
	*frames = f;
	f[*nr] = (struct report_frame){ .address = ip };
	(*nr)++;
	return 0;
}

/*
 * Every ip, ips[0] included, is a return address: the stack is captured when
 * the allocation function returns, so even the innermost one points just past
 * a call instruction and must be looked up one byte earlier.
 */
static int resolve_ip(struct symbolizer *sym, const struct modules *mods, uint64_t ip,
		      struct report_stack *st)
{
	size_t first = st->nr_frames;
	int err = 0;

	if (sym)
		err = symbolizer__resolve(sym, mods, ip, true, &st->frames, &st->nr_frames);
	/* Any other failure only costs names: the address is still reported. */
	if (err == -ENOMEM)
		return err;
	if (st->nr_frames == first)
		return append_bare_frame(ip, &st->frames, &st->nr_frames);
	/* Inline frames too: the address shown is always the one captured. */
	for (size_t i = first; i < st->nr_frames; i++)
		st->frames[i].address = ip;
	return 0;
}

/*
 * One function under two names (glibc's memalign and aligned_alloc, and
 * tcmalloc's new and new[]) is probed once, under the first name. The
 * caller's call instruction says which name it imported.
 */
static uint32_t called_api(const struct modules *mods, uint64_t ret, uint32_t api)
{
	const struct module *m;
	struct elf_file *ef;
	const char *name;
	char path[64];
	int called;

	if (api != API_ALIGNED_ALLOC && api != API_MEMALIGN && api != API_NEW &&
	    api != API_NEW_ARRAY)
		return api;
	m = mods ? modules__find(mods, ret) : NULL;
	if (!m || m->fd < 0)
		return api;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", m->fd);
	if (elf_file__open(path, &ef))
		return api;
	called = elf_file__called_symbol(ef, ret - m->bias, &name) ? -ENOENT :
		 allocator__api_of(name);
	elf_file__close(ef);
	return called >= 0 && called < API__ALLOCATING ? (uint32_t)called : api;
}

static int build_stack(const struct snap_site *site, struct symbolizer *sym,
		       const struct modules *mods, struct report_stack *st)
{
	int err;

	st->api = site->api;
	st->bytes = site->stats.outstanding_bytes;
	st->allocs = site->stats.outstanding_allocs;
	st->total_bytes = site->stats.total_bytes;
	st->total_allocs = site->stats.total_allocs;
	st->no_stack = site->stack_id == MEMLEAK_NO_STACK;
	if (site->nr_ips)
		st->api = called_api(mods, site->ips[0], site->api);
	/* The walk found more frames than MEMLEAK_MAX_STACK_DEPTH: not the root. */
	st->truncated = site->stack_flags & STACK_TRUNCATED;
	for (uint32_t i = 0; i < site->nr_ips && i < MEMLEAK_MAX_STACK_DEPTH; i++) {
		err = resolve_ip(sym, mods, site->ips[i], st);
		if (err)
			return err;
	}
	return 0;
}

static void copy_meta(struct report *r, const struct report_meta *meta)
{
	r->pid = meta->pid;
	r->command = meta->command;
	r->duration_s = meta->duration_s;
	r->final = meta->final;
	r->older_ms = meta->older_ms;
	r->top = meta->top;
	r->maps = meta->maps;
	r->freed = meta->freed;
	r->folded_allocs = meta->folded_allocs;
	r->python = meta->python;
}

int report__build(const struct aggregate *agg, struct symbolizer *sym, const struct modules *mods,
		  const struct report_meta *meta, struct report **out)
{
	struct report *r;
	int err;

	*out = NULL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	copy_meta(r, meta);
	r->totals = agg->totals;
	if (agg->nr) {
		r->stacks = calloc(agg->nr, sizeof(*r->stacks));
		if (!r->stacks) {
			free(r);
			return -ENOMEM;
		}
	}
	/* nr_stacks grows as stacks are filled, so report__free sees only those. */
	for (size_t i = 0; i < agg->nr; i++) {
		err = build_stack(agg->sites[i], sym, mods, &r->stacks[i]);
		if (!err && agg->sites[i]->py)
			err = pystack__merge(&r->stacks[i], agg->sites[i]->py, meta->pycode,
					     meta->python ? meta->python->path : NULL);
		if (!err && meta->python && !strcmp(meta->python->malloc, "pymalloc"))
			r->stacks[i].python_arena = pystack__is_arena(&r->stacks[i],
								       meta->python->path);
		r->nr_stacks++;
		if (err) {
			report__free(r);
			return err;
		}
	}
	*out = r;
	return 0;
}

/* Biggest total first; ties broken so that two runs give the same file. */
static int freed_cmp(const void *a, const void *b)
{
	const struct snap_site *x = *(const struct snap_site *const *)a;
	const struct snap_site *y = *(const struct snap_site *const *)b;

	if (x->stats.total_bytes != y->stats.total_bytes)
		return x->stats.total_bytes > y->stats.total_bytes ? -1 : 1;
	if (x->api != y->api)
		return x->api < y->api ? -1 : 1;
	if (x->stack_id != y->stack_id)
		return x->stack_id < y->stack_id ? -1 : 1;
	return 0;
}

int report__build_freed(const struct snapshot *snap, struct symbolizer *sym,
			const struct modules *mods, const struct report_meta *meta,
			struct report **out)
{
	struct aggregate agg = { .sites = calloc(snap->nr ?: 1, sizeof(*agg.sites)) };
	int err;

	*out = NULL;
	if (!agg.sites)
		return -ENOMEM;
	for (size_t i = 0; i < snap->nr; i++) {
		const struct site_stats *st = &snap->sites[i].stats;

		if (!st->outstanding_allocs && st->total_allocs)
			agg.sites[agg.nr++] = &snap->sites[i];
	}
	qsort(agg.sites, agg.nr, sizeof(*agg.sites), freed_cmp);
	err = report__build(&agg, sym, mods, meta, out);
	free(agg.sites);
	return err;
}
