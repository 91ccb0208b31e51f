// SPDX-License-Identifier: GPL-2.0
/* A report's stacks grouped into sites (see sites.h). */
#include <errno.h>
#include <fnmatch.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "kernel_sites.h"
#include "runtime_blocks.h"
#include "runtime_frames.h"
#include "sites.h"
#include "util/hash.h"

/*
 * Where libraries are installed (the FHS's, and their 32-bit and x32 kin;
 * Debian's multiarch folders and Python's standard library are under them):
 * a shared object or a Python file there is a library's, however the
 * program uses it.
 */
static const char *const library_dirs[] = {
	"/lib/", "/lib32/", "/lib64/", "/libx32/",
	"/usr/lib/", "/usr/lib32/", "/usr/lib64/", "/usr/libx32/", "/usr/local/lib/",
};

/* Python's third-party packages, wherever the environment is (a venv, conda, pyenv). */
static const char *const package_dirs[] = { "/site-packages/", "/dist-packages/" };

/*
 * Where the system's and the compilers' headers are: the C and C++
 * libraries' (libstdc++'s containers, strings, allocators), GCC's and
 * clang's own (intrinsics, stddef.h), wherever a toolchain is installed
 * (its include/c++/VERSION and lib/gcc/TRIPLE/VERSION/include). Code a
 * frame inlined from them, or an out-of-line copy of one of their
 * templates, has such a file.
 */
static const char *const header_dirs[] = { "/usr/include/", "/usr/local/include/" };
static const char *const toolchain_dirs[] = { "/include/c++/", "/lib/gcc/", "/lib/clang/" };

/* importlib's frozen bootstrap: _bootstrap and _bootstrap_external. */
#define IMPORTLIB_FILE "<frozen importlib._bootstrap"
/* Python's frozen modules (importlib, os, runpy, ... in 3.11): the standard library's. */
#define FROZEN_FILE "<frozen "

static bool under_any(const char *path, const char *const *dirs, size_t n, bool anywhere)
{
	for (size_t i = 0; i < n; i++)
		if (anywhere ? strstr(path, dirs[i]) != NULL : report__starts(path, dirs[i]))
			return true;
	return false;
}

#define UNDER(path, dirs, anywhere) under_any(path, dirs, sizeof(dirs) / sizeof(dirs[0]), anywhere)

static bool is_library_path(const char *path)
{
	return UNDER(path, library_dirs, false) || UNDER(path, package_dirs, true);
}

/*
 * A standard library outside the library dirs: .../lib/python3.11/ of a
 * pyenv or a build in a home (a venv's own files are its site-packages).
 */
static bool is_python_stdlib(const char *file)
{
	for (const char *p = strstr(file, "/lib/python"); p; p = strstr(p + 1, "/lib/python")) {
		const char *v = p + strlen("/lib/python");

		if (*v >= '0' && *v <= '9' && strchr(v, '/'))
			return true;
	}
	return false;
}

bool sites__system_source(const char *file)
{
	return file && file[0] == '/' &&
	       (UNDER(file, header_dirs, false) || UNDER(file, toolchain_dirs, true));
}

/* Is path under dir (a directory, or a file itself)? At a '/' boundary. */
static bool under_dir(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	while (n > 1 && dir[n - 1] == '/')
		n--;
	if (n == 1 && dir[0] == '/')
		return path[0] == '/';
	return !strncmp(path, dir, n) && (path[n] == '/' || path[n] == '\0');
}

/*
 * A relative path names a directory under the working directory, and is
 * also matched as written: the debug information's file names are often
 * relative to where the program was built (src/model.cc).
 */
static bool own_match(const struct sites_own *own, const char *pattern, const char *path)
{
	size_t n;

	if (strpbrk(pattern, "*?["))
		return !fnmatch(pattern, path, 0);
	while (report__starts(pattern, "./"))
		pattern += 2;
	if (*pattern && strcmp(pattern, ".") && under_dir(path, pattern))
		return true;
	if (pattern[0] == '/' || path[0] != '/' || !own->cwd)
		return false;
	n = strlen(own->cwd);
	while (n > 1 && own->cwd[n - 1] == '/')
		n--;
	if (strncmp(path, own->cwd, n) || path[n] != '/')
		return false;
	return !*pattern || !strcmp(pattern, ".") || under_dir(path + n + 1, pattern);
}

bool sites__own_matches(const struct sites_own *own, const char *path)
{
	if (!path)
		return false;
	for (size_t i = 0; i < own->nr; i++)
		if (own_match(own, own->paths[i], path))
			return true;
	return false;
}

bool sites__own_module(const char *module, const char *interp)
{
	const char *slash;

	if (!module || module[0] != '/' || (interp && !strcmp(module, interp)))
		return false;
	slash = strrchr(module, '/');
	return !report__is_shared_object(slash + 1) || !is_library_path(module);
}

/* The qualified name in a demangled function's, without its arguments: into buf. */
static const char *bare_name(const char *function, char *buf, size_t size)
{
	const char *name = runtime_frames__name(function);
	size_t n = 0;
	int depth = 0;

	for (; name[n] && (name[n] != '(' || depth); n++)
		depth += name[n] == '<' ? 1 : name[n] == '>' && depth ? -1 : 0;
	if (n >= size)
		n = size - 1;
	memcpy(buf, name, n);
	buf[n] = '\0';
	return buf;
}

/* --alloc-fn: is function one of the program's allocation functions? */
static bool alloc_fn(const struct sites_own *own, const char *function)
{
	char buf[1024];
	const char *name;

	if (!own || !own->nr_alloc_fns || !function)
		return false;
	name = bare_name(function, buf, sizeof(buf));
	for (size_t i = 0; i < own->nr_alloc_fns; i++)
		if (!fnmatch(own->alloc_fns[i], name, 0) || !fnmatch(own->alloc_fns[i], function, 0))
			return true;
	return false;
}

bool sites__own_native(const struct report_frame *f, const struct sites_own *own,
		       const char *interp)
{
	/* The kernel's (-k): any named function but the allocators' (kernel_sites.h). */
	if (f->language == FRAME_KERNEL)
		return f->function && !kernel_sites__allocator(f->function);
	if (f->language != FRAME_NATIVE || alloc_fn(own, f->function))
		return false;
	/* --own: the frame's source file names it, else (relative or none) its object. */
	if (own && own->nr)
		return sites__own_matches(own, f->file && f->file[0] == '/' ? f->file : f->module);
	/*
	 * Not a header's code (its file), nor the runtime's or a container's
	 * instantiated here: a stripped program's std::map insert, named by its
	 * dynamic symbols without a file, is no line of the user's.
	 */
	return sites__own_module(f->module, interp) && !sites__system_source(f->file) &&
	       !runtime_frames__internal(f);
}

bool sites__own_frame(const struct report_frame *f, bool python, const struct sites_own *own,
		      const char *interp)
{
	if (python)
		return f->language == FRAME_PYTHON && sites__own_python_file(f->file, own);
	return sites__own_native(f, own, interp);
}

bool sites__import_file(const char *file)
{
	return file && report__starts(file, IMPORTLIB_FILE);
}

bool sites__own_python_file(const char *file, const struct sites_own *own)
{
	if (own && own->nr)
		return sites__own_matches(own, file);
	/* Unknown code (NULL), <string>, <stdin>: the program's. */
	return !file || !(report__starts(file, FROZEN_FILE) || is_library_path(file) ||
			  is_python_stdlib(file));
}

/* ------------------------------------------------------------ grouping */

/* A frame named well enough to be its site whatever instruction it is at. */
static bool by_name(const struct report_frame *f)
{
	return (f->file && f->line > 0) || (f->language == FRAME_KERNEL && f->function);
}

/* Names borrowed from one cache (the symbolizer's, the code table's) are often the same string. */
static int cmp_name(const char *a, const char *b)
{
	return a == b ? 0 : report__cmp_name(a, b);
}

/*
 * One site or two: by module, function, file and line; without a line, by
 * instruction, but a kernel function (-k: kallsyms gives no lines) is one site.
 */
static int cmp_frame(const struct report_frame *a, const struct report_frame *b)
{
	int c;

	if (!a || !b)
		return !a - !b;
	if ((c = (int)a->language - (int)b->language) || (c = cmp_name(a->module, b->module)) ||
	    (c = cmp_name(a->function, b->function)) || (c = cmp_name(a->file, b->file)) ||
	    (c = a->line - b->line))
		return c;
	if (by_name(a))
		return 0;
	return report__cmp_u64(a->module ? a->module_offset : a->address,
		       b->module ? b->module_offset : b->address);
}

/* What cmp_frame compares, hashed: equal frames hash alike. */
static uint64_t hash_frame(const struct report_frame *f)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	if (!f)
		return h;
	h = hash__str(hash__str(hash__str(h ^ f->language, f->module), f->function), f->file);
	h = hash__mix(h ^ (uint32_t)f->line);
	if (!by_name(f))
		h = hash__mix(h ^ (f->module ? f->module_offset : f->address));
	return h;
}

uint64_t sites__key(const struct report_frame *f)
{
	return hash_frame(f);
}

/* The first table of groups, in slots: a power of two, grown as groups come. */
#define GROUPS_FIRST 256

/*
 * The groups found so far: in each slot the index + 1 of a group's first
 * stack (0: free) and its key. Sized by the groups, not the stacks: a
 * torch job's 210,000 stacks are a few thousand sites, and a table of
 * twice the stacks (4 MiB, its pages fresh at each report) was probed
 * at random for each of them.
 */
struct groups {
	size_t *slots;
	uint64_t *keys;
	size_t mask, nr;
};

static uint64_t stack_key(const struct report_stack *s)
{
	return s->site_keyed ? s->site_key : hash_frame(s->site_frame);
}

static int groups_make(struct groups *g, size_t cap)
{
	g->slots = calloc(cap, sizeof(*g->slots));
	g->keys = malloc(cap * sizeof(*g->keys));
	g->mask = cap - 1;
	return g->slots && g->keys ? 0 : -ENOMEM;
}

static void groups_free(struct groups *g)
{
	free(g->slots);
	free(g->keys);
}

/* Twice the slots, each group where its key puts it (no two are one frame). 0 or -ENOMEM. */
static int groups_grow(struct groups *g)
{
	struct groups big = { .nr = g->nr };

	if (groups_make(&big, 2 * (g->mask + 1))) {
		groups_free(&big);
		return -ENOMEM;
	}
	for (size_t i = 0; i <= g->mask; i++) {
		size_t at = g->keys[i] & big.mask;

		if (!g->slots[i])
			continue;
		while (big.slots[at])
			at = (at + 1) & big.mask;
		big.slots[at] = g->slots[i];
		big.keys[at] = g->keys[i];
	}
	groups_free(g);
	*g = big;
	return 0;
}

/*
 * Each stack's group: the first stack whose site frame equals its own, by
 * a hash table checked with cmp_frame. One comparison of names per stack,
 * where sorting 200,000 stacks by their names took 18 each.
 */
int sites__stack_groups(const struct report *r, size_t *group)
{
	struct groups g = { 0 };
	int err = groups_make(&g, GROUPS_FIRST);

	for (size_t i = 0; !err && i < r->nr_stacks; i++) {
		const struct report_frame *f = r->stacks[i].site_frame;
		uint64_t key = stack_key(&r->stacks[i]);
		size_t at = key & g.mask;

		while (g.slots[at] && cmp_frame(r->stacks[g.slots[at] - 1].site_frame, f))
			at = (at + 1) & g.mask;
		if (!g.slots[at]) {
			g.slots[at] = i + 1;
			g.keys[at] = key;
			g.nr++;
		}
		group[i] = g.slots[at] - 1;
		/* Half full at most: a probe stays short. */
		if (2 * g.nr > g.mask + 1)
			err = groups_grow(&g);
	}
	groups_free(&g);
	return err;
}

/*
 * The stacks by group, in the order of the groups' first stacks; in each
 * the growing ones first, then the others, each by index (bytes
 * descending): the biggest growing stack is what a leak's site shows
 * first. A counting sort: two passes, where sorting 210,000 stacks took
 * 18 comparisons each.
 */
static int order_by_group(const struct report *r, const size_t *group, size_t *order)
{
	size_t *at = calloc(r->nr_stacks ?: 1, sizeof(*at));	/* by group: its next place */
	size_t end = 0;

	if (!at)
		return -ENOMEM;
	for (size_t i = 0; i < r->nr_stacks; i++)
		at[group[i]]++;
	for (size_t i = 0; i < r->nr_stacks; i++) {
		size_t n = group[i] == i ? at[i] : 0;	/* a group's first stack: its place */

		if (group[i] == i) {
			at[i] = end;
			end += n;
		}
	}
	for (int growing = 1; growing >= 0; growing--)
		for (size_t i = 0; i < r->nr_stacks; i++)
			if ((r->stacks[i].growth.trend == TREND_GROWING) == growing)
				order[at[group[i]]++] = i;
	free(at);
	return 0;
}

/*
 * Where a site comes: the program's made while it ran first, then those
 * made before main by initializers (start-up: static registries, usually
 * held by design; fstminimize's ten biggest buried its four made in
 * fst::Minimize), then the runtime's own by kind (runtime_blocks.h: no line
 * of the program's to fix). A negative, zero or positive as cmp's.
 */
static int cmp_site_class(const struct report_site *a, const struct report_site *b)
{
	if (a->runtime != b->runtime)	/* the runtime's by kind, each said once */
		return a->runtime > b->runtime ? 1 : -1;
	if (a->preinit != b->preinit)
		return a->preinit ? 1 : -1;
	return 0;
}

/*
 * By class (cmp_site_class), each the biggest first; the tie-breakers keep
 * two reports of one snapshot equal.
 */
static int cmp_site(const void *pa, const void *pb)
{
	const struct report_site *a = pa, *b = pb;
	int c = cmp_site_class(a, b);

	if (c)
		return c;
	if (a->bytes != b->bytes)
		return a->bytes > b->bytes ? -1 : 1;
	if (a->allocs != b->allocs)
		return a->allocs > b->allocs ? -1 : 1;
	return report__cmp_u64(a->stacks[0], b->stacks[0]);
}

/* --sort count: by class, then the most blocks first, then as cmp_site. */
static int cmp_site_count(const void *pa, const void *pb)
{
	const struct report_site *a = pa, *b = pb;
	int c = cmp_site_class(a, b);

	if (c)
		return c;
	if (a->allocs != b->allocs)
		return a->allocs > b->allocs ? -1 : 1;
	return cmp_site(pa, pb);
}

/*
 * The growing sites, the most leak-like first. Scores equal to two decimals
 * are a tie (one leak's stacks differ by noise: PyTorch's all score about
 * 0.99), broken by the faster growth, so that the fastest of equally
 * leak-like sites leads.
 */
static int cmp_growing(const void *pa, const void *pb)
{
	const struct report_site *a = *(const struct report_site *const *)pa;
	const struct report_site *b = *(const struct report_site *const *)pb;
	long sa = lround(a->score * 100), sb = lround(b->score * 100);

	if (sa != sb)
		return sa > sb ? -1 : 1;
	if (a->slope != b->slope)
		return a->slope > b->slope ? -1 : 1;
	return a < b ? -1 : a > b;
}

/* The figures of a site whose stacks (indices into r->stacks) are set. */
static void sum_site(const struct report *r, struct report_site *site)
{
	for (size_t i = 0; i < site->nr_stacks; i++) {
		const struct report_stack *s = &r->stacks[site->stacks[i]];

		site->bytes += s->bytes;
		site->allocs += s->allocs;
		site->total_bytes += s->total_bytes;
		site->total_allocs += s->total_allocs;
		site->samples += s->samples;
		site->var += s->var;
		if (s->growth.trend != TREND_GROWING)
			continue;
		site->slope += s->growth.slope;
		if (!site->growing++ || s->growth.score > site->score)
			site->score = s->growth.score;
	}
	site->frame = r->stacks[site->stacks[0]].site_frame;
	site->own = r->stacks[site->stacks[0]].site_own;
	site->import = site->preinit = site->nr_stacks > 0;
	for (size_t i = 0; i < site->nr_stacks; i++) {
		site->preinit = site->preinit && r->stacks[site->stacks[i]].site_preinit;
		site->import = site->import && r->stacks[site->stacks[i]].site_import;
		site->runtime = runtime_blocks__merge(site->runtime,
						      r->stacks[site->stacks[i]].site_runtime, !i);
	}
}

/* Runs of order (sorted by group) into sites: 0 or -ENOMEM. */
static int make_sites(struct report *r, size_t *order, const size_t *group)
{
	size_t n = 0;

	for (size_t i = 0; i < r->nr_stacks; i++) {
		n += !i || group[order[i - 1]] != group[order[i]];
		/* Each stack's kind as its blocks now allow (the site frames' memo keeps its frames'). */
		r->stacks[i].site_runtime = runtime_blocks__held(r->stacks[i].site_runtime,
								 r->stacks[i].allocs);
	}
	r->sites = calloc(n ?: 1, sizeof(*r->sites));
	if (!r->sites)
		return -ENOMEM;
	for (size_t i = 0, start = 0; i < r->nr_stacks; i++) {
		if (i + 1 < r->nr_stacks && group[order[i]] == group[order[i + 1]])
			continue;
		r->sites[r->nr_sites] = (struct report_site){ .stacks = &order[start],
							      .nr_stacks = i + 1 - start };
		sum_site(r, &r->sites[r->nr_sites++]);
		start = i + 1;
	}
	return 0;
}

static int rank_growing(struct report *r)
{
	struct report_site **v = calloc(r->nr_sites ?: 1, sizeof(*v));
	size_t n = 0;

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < r->nr_sites; i++)
		if (r->sites[i].growing)
			v[n++] = &r->sites[i];
	qsort(v, n, sizeof(*v), cmp_growing);
	for (size_t i = 0; i < n; i++)
		v[i]->rank = i + 1;
	free(v);
	return 0;
}

/* Which stacks the files hold; each stack's site. */
static void keep(struct report *r, size_t file_sites, size_t file_stacks)
{
	for (size_t i = 0; i < r->nr_sites; i++) {
		struct report_site *site = &r->sites[i];

		if (i < file_sites || site->growing)
			site->kept = site->nr_stacks < file_stacks ? site->nr_stacks : file_stacks;
		for (size_t j = 0; j < site->nr_stacks; j++) {
			r->stacks[site->stacks[j]].site = i;
			r->stacks[site->stacks[j]].left_out = j >= site->kept;
		}
	}
	r->all_stacks = file_sites == SIZE_MAX && file_stacks == SIZE_MAX;
}

int sites__group(struct report *r, size_t file_sites, size_t file_stacks)
{
	size_t *order = malloc((r->nr_stacks ?: 1) * sizeof(*order));
	size_t *group = malloc((r->nr_stacks ?: 1) * sizeof(*group));
	int err = order && group ? sites__stack_groups(r, group) : -ENOMEM;

	if (err) {
		free(order);
		free(group);
		return err;
	}
	err = order_by_group(r, group, order);
	if (err) {
		free(order);
		free(group);
		return err;
	}
	r->site_stacks = order;
	err = make_sites(r, order, group);
	free(group);
	if (err)
		return err;
	qsort(r->sites, r->nr_sites, sizeof(*r->sites), r->sort_count ? cmp_site_count : cmp_site);
	err = rank_growing(r);
	if (!err)
		keep(r, file_sites, file_stacks);
	return err;
}

static void add_left_out(struct sites_left_out *out, const struct report_stack *s)
{
	out->stacks++;
	out->bytes += s->bytes;
	out->allocs += s->allocs;
}

struct sites_left_out sites__left_out(const struct report *r, const struct report_site *site)
{
	struct sites_left_out out = { 0 };

	if (site) {
		for (size_t i = site->kept; i < site->nr_stacks; i++)
			add_left_out(&out, &r->stacks[site->stacks[i]]);
		return out;
	}
	for (size_t i = 0; i < r->nr_stacks; i++)
		if (r->stacks[i].left_out)
			add_left_out(&out, &r->stacks[i]);
	return out;
}
