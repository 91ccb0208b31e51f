// SPDX-License-Identifier: GPL-2.0
/* From aggregated sites to a report: the figures, then the symbolized frames. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "allocator/allocator.h"
#include "model/stackcache.h"
#include "python/pystack.h"
#include "report_build.h"
#include "sample.h"
#include "target/images.h"

/* How many stacks ahead report_build__figures asks for a site's lines. */
#define FIGURES_AHEAD 8

/* Frames unwrap reads first: operator new's own are one or two. */
#define UNWRAP_FIRST 4

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
static bool has_alias(uint32_t api)
{
	return api == API_ALIGNED_ALLOC || api == API_MEMALIGN || api == API_NEW ||
	       api == API_NEW_ARRAY;
}

/* The wrapper (operator new) whose code holds the return address ret, or NULL. */
static const struct alloc_wrapper *wrapper_at(const struct report_meta *meta,
					      const struct modules *mods, uint64_t ret)
{
	const struct module *m = meta->nr_wrappers && mods ? modules__find(mods, ret) : NULL;
	uint64_t vaddr;

	if (!m)
		return NULL;
	vaddr = ret - 1 - m->bias;	/* the call instruction, not what follows it */
	for (size_t i = 0; i < meta->nr_wrappers; i++) {
		const struct alloc_wrapper *w = &meta->wrappers[i];

		if (vaddr >= w->start && vaddr < w->end && !strcmp(m->path, w->path))
			return w;
	}
	return NULL;
}

/*
 * A block operator new got from malloc (allocator.h, struct alloc_wrapper):
 * its innermost frames are new's own, and the stack the caller's from there;
 * new[] when new[] appears among them (its nothrow form calls new[]), else
 * new, which the caller's call instruction may still say was new[] (a tail
 * call leaves no frame): called_apis looks.
 */
static void unwrap(const struct snap_site *site, const struct modules *mods,
		   const struct report_meta *meta, struct report_stack *st)
{
	uint64_t ips[MEMLEAK_MAX_STACK_DEPTH];
	const struct alloc_wrapper *w;
	/*
	 * Every site comes here: its innermost frame first (each frame read is
	 * a cache miss, and most stacks start outside new), then a few more,
	 * then all of them if those are all new's.
	 */
	uint32_t n = 0, nr = stack_blob__ips(site->stack, ips, 1);

	if (!nr || !wrapper_at(meta, mods, ips[0])) {
		st->wrapper_ips = 0;
		return;
	}
	nr = stack_blob__ips(site->stack, ips, UNWRAP_FIRST);
	if (nr == UNWRAP_FIRST && wrapper_at(meta, mods, ips[nr - 1]))
		nr = stack_blob__ips(site->stack, ips, MEMLEAK_MAX_STACK_DEPTH);
	while (n < nr && n < UINT8_MAX && (w = wrapper_at(meta, mods, ips[n]))) {
		if (!n || w->api == API_NEW_ARRAY)
			st->api = w->api;
		n++;
	}
	st->wrapper_ips = (uint8_t)n;
}

/*
 * One function under two names: the api as the stack's caller imported it.
 * Only for the stacks a report prints: each call site's answer is cached
 * (symbolize_calls__called), but a run sees far more sites than it prints.
 */
static void name_api(const uint64_t *ips, uint32_t nr, struct symbolizer *sym,
		     const struct modules *mods, struct report_stack *st)
{
	const char *name;
	int api;

	if (!sym || nr <= st->wrapper_ips || !has_alias(st->api) ||
	    symbolize_calls__called(sym, mods, ips[st->wrapper_ips], &name))
		return;
	api = allocator__api_of(name);
	if (api >= 0 && api < API__ALLOCATING)
		st->api = (uint32_t)api;
}

/* A site's figures, its api as probed (name_api may say which alias); its frames are report_build__symbolize's. */
static void stack_figures(const struct snap_site *site, struct report_stack *st)
{
	st->api = site->api;
	st->bytes = site->stats.outstanding_bytes;
	st->allocs = site->stats.outstanding_allocs;
	st->total_bytes = site->stats.total_bytes;
	st->total_allocs = site->stats.total_allocs;
	st->samples = site->stats.outstanding_samples;
	st->var = (double)site->stats.outstanding_var * (double)(1ULL << MEMLEAK_VAR_SHIFT);
	st->no_stack = site->stack_id == MEMLEAK_NO_STACK || (site->proc && !site->nr_ips);
	st->proc = site->proc;
	/* The walk found more frames than MEMLEAK_MAX_STACK_DEPTH: not the root. */
	st->truncated = site->stack_flags & STACK_TRUNCATED;
	/* Cut at a file whose unwind table was not loaded yet: not the root either. */
	st->unwind_pending = site->stack_flags & STACK_PENDING;
}

/* Whether a frame is the user's code: the sites' rules, for the writers that show it (the flame graph). */
static bool frame_own(const struct report_frame *f, const struct report_meta *meta)
{
	const char *interp = meta->python ? meta->python->path : NULL;

	return f->language == FRAME_PYTHON ? sites__own_python_file(f->file, &meta->own) :
					     sites__own_native(f, &meta->own, interp);
}

static void mark_own(struct report_stack *st, const struct report_meta *meta)
{
	for (size_t i = 0; i < st->nr_frames; i++)
		st->frames[i].own = frame_own(&st->frames[i], meta);
}

/*
 * The stack's frames into the report's table: pointers to frames kept
 * once, instead of 64 bytes each (ten million of them at 210,000 torch
 * stacks); own is worked out once per distinct frame, as it depends on
 * nothing else. Its own copies go.
 */
static int share_frames(struct report_stack *st, const struct report_meta *meta)
{
	const struct report_frame **refs = malloc((st->nr_frames ?: 1) * sizeof(*refs));
	struct report_frame *f;
	bool added;

	if (!refs)
		return -ENOMEM;
	for (size_t i = 0; i < st->nr_frames; i++) {
		f = frame_table__intern(meta->frames, &st->frames[i], &added);
		if (!f) {
			/* The strings taken so far are the table's: only the rest are ours. */
			for (size_t j = 0; j < i; j++)
				st->frames[j].borrowed = true;
			free(refs);
			return -ENOMEM;
		}
		if (added)
			f->own = frame_own(f, meta);
		refs[i] = f;
	}
	free(st->frames);
	st->refs = refs;
	st->shared = true;
	return 0;
}

/* A site's api as its caller named it, and its frames: every ip resolved, then its Python frames merged in. */
static int stack_frames(const struct snap_site *site, struct symbolizer *sym,
			const struct modules *mods, const struct report_meta *meta,
			struct report_stack *st)
{
	uint64_t ips[MEMLEAK_MAX_STACK_DEPTH];
	uint32_t nr = stack_blob__ips(site->stack, ips, MEMLEAK_MAX_STACK_DEPTH);
	struct py_stack pybuf;
	const struct py_stack *py = stack_blob__py(site->pystack, &pybuf);
	int err = 0;

	name_api(ips, nr, sym, mods, st);
	for (uint32_t i = st->wrapper_ips; i < nr && !err; i++)
		err = resolve_ip(sym, mods, ips[i], st);
	if (!err && py)
		err = pystack__merge(st, py, meta->pycode,
				     meta->python ? meta->python->path : NULL);
	if (!err && meta->python && !strcmp(meta->python->malloc, "pymalloc"))
		st->python_arena = pystack__is_arena(st, meta->python->path);
	if (!err && meta->frames)
		err = share_frames(st, meta);
	else if (!err)
		mark_own(st, meta);
	return err;
}

static void copy_meta(struct report *r, const struct report_meta *meta)
{
	r->pid = meta->pid;
	r->kernel = meta->kernel;
	r->command = meta->command;
	r->duration_s = meta->duration_s;
	r->final = meta->final;
	r->older_ms = meta->older_ms;
	r->top = meta->top;
	r->maps = meta->maps;
	r->image_maps = meta->image_maps;
	r->nr_image_maps = meta->nr_image_maps;
	r->freed = meta->freed;
	r->folded_allocs = meta->folded_allocs;
	r->folded_by_process = meta->folded_by_process;
	r->python = meta->python;
	r->allocator = meta->allocator;
	r->brief = meta->brief;
	r->sampling = meta->sampling;
	r->show_allocs = meta->show_allocs;
	r->allocs_per_stack = meta->allocs_per_stack;
	r->sort_count = meta->sort_count;
	r->full_names = meta->full_names;
}

/* From this size on, the stacks' array is asked for in huge pages. */
#define HUGE_STACKS (4u << 20)
#define HUGE_PAGE (2u << 20)

/*
 * The report's stacks, zeroed: 60 MiB at 210,000 stacks, fresh pages of
 * which each 4 KiB was a page fault when first written; in 2 MiB pages
 * where the kernel has them (transparent huge pages, asked for), a
 * five-hundredth of the faults for the same zeroing. A hint only.
 */
static struct report_stack *stacks_alloc(size_t nr)
{
	struct report_stack *v = calloc(nr, sizeof(*v));
	uintptr_t start = (uintptr_t)v, end = start + nr * sizeof(*v);

	start = (start + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1);
	end &= ~(uintptr_t)(HUGE_PAGE - 1);
	if (v && nr * sizeof(*v) >= HUGE_STACKS && end > start)
		madvise((void *)start, end - start, MADV_HUGEPAGE);
	return v;
}

/* -a: a copy of the site's blocks (the snapshot goes first). 0 or -ENOMEM. */
static int stack_blocks(const struct snapshot *snap, const struct snap_site *site,
			struct report_stack *st)
{
	const struct report_blocks *b;

	if (!snap || !snap->blocks || site < snap->sites || site >= snap->sites + snap->nr)
		return 0;
	b = &snap->blocks[site - snap->sites];
	if (!b->seen)
		return 0;
	st->blocks = calloc(1, sizeof(*st->blocks));
	if (!st->blocks)
		return -ENOMEM;
	st->blocks->seen = b->seen;
	if (!b->nr)
		return 0;
	st->blocks->v = malloc(b->nr * sizeof(*b->v));
	if (!st->blocks->v)
		return -ENOMEM;
	memcpy(st->blocks->v, b->v, b->nr * sizeof(*b->v));
	st->blocks->nr = st->blocks->cap = b->nr;
	return 0;
}

int report_build__figures(const struct aggregate *agg, const struct modules *mods,
			  const struct report_meta *meta, const struct snapshot *snap,
			  struct report_sites_carry *carry, struct report **out)
{
	struct report *r;

	*out = NULL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	copy_meta(r, meta);
	r->totals = agg->totals;
	r->totals.counters[CNT_PY_CODES_UNNAMED] = pycode__unnamed(meta->pycode);
	if (agg->nr) {
		r->stacks = stacks_alloc(agg->nr);
		if (!r->stacks) {
			free(r);
			return -ENOMEM;
		}
	}
	r->nr_stacks = agg->nr;
	*out = r;	/* freed by the caller on an error, as report__symbolize's */
	/*
	 * operator new's frames off every stack: its site begins after them
	 * (report_sites.c). One pass: each site is a cache miss of its own.
	 */
	for (size_t i = 0; i < agg->nr; i++) {
		const struct snap_site *site = agg->sites[i];

		/* A site and its memo a few stacks ahead asked of the memory: each a cache miss. */
		if (i + FIGURES_AHEAD < agg->nr) {
			__builtin_prefetch(agg->sites[i + FIGURES_AHEAD]);
			__builtin_prefetch((const char *)agg->sites[i + FIGURES_AHEAD] + 64);
			report_sites__prefetch(carry, snap, agg->sites[i + FIGURES_AHEAD]);
		}
		stack_figures(site, &r->stacks[i]);
		/* Its frames, the cache miss of a stack's blob: kept from a report before. */
		if (!report_sites__unwrapped(carry, snap, meta, mods, site, &r->stacks[i])) {
			unwrap(site, images__of(meta->images, site->proc, mods), meta,
			       &r->stacks[i]);
			report_sites__keep_unwrapped(carry, snap, site, &r->stacks[i]);
		}
		report_sites__lend(carry, snap, meta, mods, site, &r->stacks[i]);
		if (stack_blocks(snap, agg->sites[i], &r->stacks[i]))
			return -ENOMEM;
	}
	return 0;
}

int report_build__symbolize(struct report *r, const struct aggregate *agg, struct symbolizer *sym,
		      const struct modules *mods, const struct report_meta *meta,
		      const bool *want)
{
	int err = 0;

	for (size_t i = 0; i < r->nr_stacks && i < agg->nr && !err; i++)
		if (!want || want[i])
			err = stack_frames(agg->sites[i], sym,
					   images__of(meta->images, agg->sites[i]->proc, mods),
					   meta, &r->stacks[i]);
	return err;
}

int report_build__report(const struct aggregate *agg, struct symbolizer *sym, const struct modules *mods,
		  const struct report_meta *meta, struct report **out)
{
	int err = report_build__figures(agg, mods, meta, NULL, NULL, out);

	if (!err)
		err = report_build__symbolize(*out, agg, sym, mods, meta, NULL);
	if (err) {
		report__free(*out);
		*out = NULL;
	}
	return err;
}

int report_build__stacks(const struct aggregate *agg, struct symbolizer *sym,
			 const struct modules *mods, const struct report_meta *meta,
			 struct report_stack **out, size_t *nr)
{
	struct report *sub;
	int err = report_build__report(agg, sym, mods, meta, &sub);

	if (err)
		return err;
	*out = sub->stacks;
	*nr = sub->nr_stacks;
	sub->stacks = NULL;
	sub->nr_stacks = 0;
	report__free(sub);
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

int report_build__freed(const struct snapshot *snap, struct symbolizer *sym,
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
	err = report_build__report(&agg, sym, mods, meta, out);
	free(agg.sites);
	return err;
}
