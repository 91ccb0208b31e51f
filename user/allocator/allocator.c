// SPDX-License-Identifier: GPL-2.0
/* Which object in the target provides each allocation function. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <elf.h>
#include "allocator.h"
#include "util/elfsym.h"
#include "util/proc.h"
#include "util/rootpath.h"
#include "util/vec.h"

/*
 * Each API's names, from its row of alloc_apis.h, NULL-terminated. Order
 * matters: when two names share an address, the first one tried is the one
 * probed: every API's standard names, then every API's aliases
 * (alloc_apis.h says why).
 */
#define API_NAMES(...) (const char *const[]){ __VA_ARGS__ __VA_OPT__(,) NULL }
#define API_ROW(api, name, kind, size, nmemb, ptr, bytes, regs, std, aliases) \
	[API_##api] = { API_NAMES std, API_NAMES aliases },
static const char *const *const api_symbols[API__COUNT][2] = { MEMLEAK_APIS(API_ROW) };
#undef API_ROW
#undef API_NAMES

/* The n-th name in that order, and its API; false past the last. */
static bool api_symbol_at(size_t n, const char **name, uint32_t *api)
{
	for (int tier = 0; tier < 2; tier++)
		for (uint32_t a = 0; a < API__COUNT; a++)
			for (const char *const *s = api_symbols[a][tier]; *s; s++)
				if (!n--) {
					*name = *s;
					*api = a;
					return true;
				}
	return false;
}

int allocator__api_of(const char *symbol)
{
	const char *name;
	uint32_t api;

	for (size_t i = 0; symbol && api_symbol_at(i, &name, &api); i++)
		if (!strcmp(name, symbol))
			return (int)api;
	return -ENOENT;
}

/*
 * The target's file, never one outside its root: a mapped one through its
 * mapping (rootpath.h: its path may mean nothing in either root), -O's by
 * the path the target would name it by.
 */
static int target_open(pid_t pid, const char *path, const struct map_entry *e)
{
	return e ? rootpath__open_mapped(pid, e) : rootpath__open(pid, path, O_RDONLY);
}

/* Own fd (taken) and a path leading to it. */
static int object_set_fd(struct lookup_object *obj, int fd)
{
	char buf[64];

	obj->fd = fd;
	if (fd < 0)
		return 0;
	rootpath__fd_path(fd, buf, sizeof(buf));
	obj->open_path = strdup(buf);
	return obj->open_path ? 0 : -ENOMEM;
}

int lookup_object__init(struct lookup_object *obj, pid_t pid, const char *path,
			const struct map_entry *e)
{
	int fd;

	*obj = (struct lookup_object){ .path = strdup(path), .fd = -1, .dev = e ? e->dev : 0,
				       .ino = e ? e->inode : 0 };
	if (!obj->path)
		return -ENOMEM;
	fd = target_open(pid, path, e);
	if (object_set_fd(obj, fd)) {
		lookup_object__release(obj);
		return -ENOMEM;
	}
	return fd < 0 ? fd : 0;
}

void lookup_object__release(struct lookup_object *obj)
{
	free(obj->path);
	free(obj->open_path);
	if (obj->fd >= 0)
		close(obj->fd);
	*obj = (struct lookup_object){ .fd = -1 };
}

static int object_copy(struct lookup_object *dst, const struct lookup_object *src)
{
	*dst = (struct lookup_object){ .path = strdup(src->path), .fd = -1, .dev = src->dev,
				       .ino = src->ino, .defines_none = src->defines_none };
	if (!dst->path)
		return -ENOMEM;
	if (src->fd < 0)
		return 0;
	/* Out of fds: this copy is unreadable, as if the open had failed. */
	return object_set_fd(dst, fcntl(src->fd, F_DUPFD_CLOEXEC, 0));
}

static void objects_free(struct lookup_object *objs, size_t nr)
{
	for (size_t i = 0; i < nr; i++)
		lookup_object__release(&objs[i]);
	free(objs);
}

void lookup_order__free(struct lookup_order *lo)
{
	if (!lo)
		return;
	objects_free(lo->objects, lo->nr);
	free(lo->ldso_open_path);
	if (lo->ldso_fd >= 0)
		close(lo->ldso_fd);
	free(lo);
}

/* prev's object for the file mapped at e, opened and still that file; NULL if none. */
static const struct lookup_object *order_known(const struct lookup_order *prev,
					       const struct map_entry *e)
{
	for (size_t i = 0; prev && i < prev->nr; i++) {
		const struct lookup_object *o = &prev->objects[i];

		if (o->fd >= 0 && o->dev == e->dev && o->ino == e->inode && !strcmp(o->path, e->path))
			return o;
	}
	return NULL;
}

/* Append the object mapped at e, unless it is already listed. */
static int order_add(struct lookup_order *lo, pid_t pid, const struct map_entry *e,
		     const struct lookup_order *prev)
{
	const struct lookup_object *known;
	struct lookup_object *objs;

	if (!map_entry__is_file(e))
		return 0;
	for (size_t i = 0; i < lo->nr; i++)
		if (!strcmp(lo->objects[i].path, e->path))
			return 0;
	if (vec__reserve(&lo->objects, &lo->cap, lo->nr + 1, sizeof(*lo->objects)))
		return -ENOMEM;
	objs = lo->objects;
	known = e->deleted ? NULL : order_known(prev, e);
	if (known && object_copy(&objs[lo->nr], known) == -ENOMEM) {
		lookup_object__release(&objs[lo->nr]);
		return -ENOMEM;
	}
	/* Unreadable: kept in its place in the order, and skipped. */
	if (!known && lookup_object__init(&objs[lo->nr], pid, e->path, e) == -ENOMEM)
		return -ENOMEM;
	lo->nr++;
	return 0;
}

static int read_auxv_base(pid_t pid, uint64_t *base)
{
	uint64_t aux[2];
	int fd = proc__open(pid, "auxv", O_RDONLY);

	if (fd < 0)
		return fd;
	*base = 0;
	while (read(fd, aux, sizeof(aux)) == sizeof(aux) && aux[0] != AT_NULL) {
		if (aux[0] == AT_BASE)
			*base = aux[1];
	}
	close(fd);
	return 0;
}

static int read_mem(int memfd, uint64_t addr, void *buf, size_t len)
{
	return pread(memfd, buf, len, (off_t)addr) == (ssize_t)len ? 0 : -EIO;
}

/* Offsets in glibc's struct r_debug and struct link_map (x86_64 ABI). */
#define R_MAP_OFF 8
#define R_STATE_OFF 24
#define L_LD_OFF 16
#define L_NEXT_OFF 24
#define RT_CONSISTENT 0

/* The address of the dynamic linker's _r_debug in the target. */
static int r_debug_addr(const struct lookup_order *lo, const struct maps *maps, uint64_t *addr)
{
	const struct map_entry *e = maps__find(maps, lo->ldso_base);
	struct elf_file *ef;
	uint64_t vaddr, bias;
	int err;

	if (!e)
		return -ENOENT;
	err = elf_file__open(lo->ldso_open_path, &ef);
	if (err)
		return err;
	err = elf_file__find_object(ef, "_r_debug", &vaddr);
	if (!err)
		err = elf_file__load_bias(ef, e->start, e->offset, &bias);
	elf_file__close(ef);
	if (!err)
		*addr = bias + vaddr;
	return err;
}

/* Walk the link map: the order in which the dynamic linker looks symbols up. */
static int walk_link_map(struct lookup_order *lo, pid_t pid, const struct maps *maps,
			 const struct lookup_order *prev)
{
	uint64_t rdebug, lm = 0, ld;
	int32_t state;
	int memfd, err, n = 0;

	err = r_debug_addr(lo, maps, &rdebug);
	if (err)
		return err;
	memfd = proc__open(pid, "mem", O_RDONLY);
	if (memfd < 0)
		return memfd;
	lo->r_debug = rdebug;
	err = read_mem(memfd, rdebug + R_MAP_OFF, &lm, sizeof(lm));
	if (!err)
		err = read_mem(memfd, rdebug + R_STATE_OFF, &state, sizeof(state));
	lo->complete = !err && lm && state == RT_CONSISTENT;
	/* Each link_map's l_ld points into its object: find it in the maps. */
	while (!err && lm && n++ < 4096) {
		const struct map_entry *e;

		err = read_mem(memfd, lm + L_LD_OFF, &ld, sizeof(ld));
		if (err)
			break;
		e = maps__find(maps, ld);
		if (e)
			err = order_add(lo, pid, e, prev);
		if (!err)
			err = read_mem(memfd, lm + L_NEXT_OFF, &lm, sizeof(lm));
	}
	close(memfd);
	return err;
}

static int add_exe(struct lookup_order *lo, pid_t pid, const struct maps *maps,
		   const struct lookup_order *prev)
{
	char exe[PATH_MAX];
	ssize_t n = proc__readlink(pid, "exe", exe, sizeof(exe));

	if (n < 0)
		return (int)n;
	/* A deleted executable reads as "PATH (deleted)"; maps strips that. */
	for (size_t i = 0; i < maps->nr; i++) {
		const struct map_entry *e = &maps->entries[i];

		if (!strcmp(e->path, exe) ||
		    (e->deleted && !strncmp(exe, e->path, strlen(e->path))))
			return order_add(lo, pid, e, prev);
	}
	return -ENOENT;
}

int lookup_order__read(pid_t pid, const struct maps *maps, const struct lookup_order *prev,
		       struct lookup_order **out)
{
	struct lookup_order *lo = calloc(1, sizeof(*lo));
	const struct map_entry *ldso;
	struct lookup_object obj;
	int err;

	if (!lo)
		return -ENOMEM;
	lo->ldso_fd = -1;
	err = read_auxv_base(pid, &lo->ldso_base);
	if (err)
		goto fail;
	if (!lo->ldso_base) {
		lo->is_static = lo->complete = true;
		err = add_exe(lo, pid, maps, prev);
		goto done;
	}
	ldso = maps__find(maps, lo->ldso_base);
	if (!ldso) {
		err = -ENOENT;
		goto fail;
	}
	err = lookup_object__init(&obj, pid, ldso->path, ldso);
	if (err) {
		lookup_object__release(&obj);
		goto fail;
	}
	/* The order owns the linker's file: its fd and the path to it. */
	lo->ldso_open_path = obj.open_path;
	lo->ldso_fd = obj.fd;
	free(obj.path);
	err = walk_link_map(lo, pid, maps, prev);
	/* Before the dynamic linker has set up its list, only it and the
	 * executable are there. */
	if (!err && !lo->nr)
		err = add_exe(lo, pid, maps, prev);
done:
	if (err)
		goto fail;
	*out = lo;
	return 0;
fail:
	lookup_order__free(lo);
	return err;
}

void allocator__free(struct allocator *a)
{
	if (!a)
		return;
	allocator__free_wrappers(a->wrappers, a->nr_wrappers);
	objects_free(a->objects, a->nr_objects);
	free(a->probes);
	for (size_t i = 0; i < a->nr_names; i++)
		free(a->names[i]);
	free(a->names);
	free(a);
}

/* The provider's index in a->objects, adding it on first use. */
static int provider_index(struct allocator *a, const struct lookup_object *obj)
{
	struct lookup_object *objs;

	for (size_t i = 0; i < a->nr_objects; i++)
		if (!strcmp(a->objects[i].path, obj->path))
			return (int)i;
	if (vec__reserve(&a->objects, &a->cap_objects, a->nr_objects + 1, sizeof(*a->objects)))
		return -ENOMEM;
	objs = a->objects;
	if (object_copy(&objs[a->nr_objects], obj)) {
		lookup_object__release(&objs[a->nr_objects]);
		return -ENOMEM;
	}
	return (int)a->nr_objects++;
}

static bool probed_at(const struct allocator *a, size_t object, uint64_t offset)
{
	for (size_t i = 0; i < a->nr; i++)
		if (a->probes[i].object == object && a->probes[i].offset == offset)
			return true;
	return false;
}

/*
 * The name symbol s (api's) has in this allocator: with a prefix (jemalloc
 * built with --with-jemalloc-prefix=je_), the allocator's own functions
 * carry it; mmap and its kin are the system's, whoever calls them. NULL:
 * no memory.
 */
static const char *symbol_name(struct allocator *a, size_t s, const char *symbol, uint32_t api)
{
	if (!a->prefix || api == API_MMAP || api == API_MUNMAP || api == API_MREMAP)
		return symbol;
	if (!a->names[s] && asprintf(&a->names[s], "%s%s", a->prefix, symbol) < 0)
		a->names[s] = NULL;
	return a->names[s];
}

/* Find symbol s (api's) in the first object that defines it; -ENOENT if none. */
static int resolve_one(struct allocator *a, struct elf_file **elves, const struct lookup_object *objs,
		       size_t nr, size_t s, const char *symbol, uint32_t api)
{
	const char *name = symbol_name(a, s, symbol, api);
	uint64_t vaddr, offset, size;
	int idx;

	if (!name)
		return -ENOMEM;
	for (size_t o = 0; o < nr; o++) {
		if (!elves[o] || elf_file__find_func_size(elves[o], name, !a->is_static, &vaddr,
							  &offset, &size))
			continue;
		idx = provider_index(a, &objs[o]);
		if (idx < 0)
			return idx;
		if (probed_at(a, idx, offset))
			return 0;
		a->probes[a->nr++] = (struct alloc_probe){
			.api = api,
			.symbol = name,
			.object = idx,
			.offset = offset,
			.vaddr = vaddr,
			.size = size,
		};
		return 0;
	}
	return -ENOENT;
}

int allocator__add(struct allocator *a, const struct lookup_object *obj, const char *symbol,
		   uint32_t api, uint64_t vaddr, uint64_t offset, uint64_t size)
{
	struct alloc_probe *v;
	int idx = provider_index(a, obj);

	if (idx < 0)
		return idx;
	if (probed_at(a, idx, offset))
		return 0;
	v = realloc(a->probes, (a->nr + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	a->probes = v;
	v[a->nr++] = (struct alloc_probe){
		.api = api, .symbol = symbol, .object = idx, .offset = offset, .vaddr = vaddr,
		.size = size, .path = a->objects[idx].path, .open_path = a->objects[idx].open_path,
	};
	return 0;
}

void allocator__free_wrappers(struct alloc_wrapper *w, size_t nr)
{
	for (size_t i = 0; w && i < nr; i++)
		free(w[i].path);
	free(w);
}

/* The object whose file is GNU libstdc++, by name; -1 if none provides anything. */
static int libstdcxx_object(const struct allocator *a)
{
	for (size_t o = 0; o < a->nr_objects; o++) {
		const char *base = strrchr(a->objects[o].path, '/');

		if (!strncmp(base ? base + 1 : a->objects[o].path, "libstdc++.so", 12))
			return (int)o;
	}
	return -1;
}

static bool is_cxx(uint32_t api)
{
	return api == API_NEW || api == API_NEW_ARRAY || api == API_DELETE ||
	       api == API_DELETE_ARRAY;
}

/*
 * libstdc++'s operator new loops on malloc (aligned new on aligned_alloc)
 * with the new_handler, and operator delete jumps to free: thin wrappers.
 * Where the target calls libstdc++'s, and malloc is another object's (and
 * probed), probing them as well would make a C++ pair trap twice as often
 * for the same blocks. They are left unprobed, and their code ranges kept
 * for the report to name the blocks (struct alloc_wrapper). Anything else
 * (a program's own operator new, tcmalloc's or jemalloc's) stays probed.
 */
static int unwrap_cxx(struct allocator *a)
{
	int lib = libstdcxx_object(a);
	size_t n = 0, nw = 0;

	if (lib < 0 || (a->malloc_path && !strcmp(a->malloc_path, a->objects[lib].path)))
		return 0;
	for (size_t i = 0; i < a->nr; i++)
		if (a->probes[i].object == (size_t)lib && (a->probes[i].api == API_NEW ||
		    a->probes[i].api == API_NEW_ARRAY) && !a->probes[i].size)
			return 0;	/* its extent unknown: its frames could not be told */
	a->wrappers = calloc(a->nr ? a->nr : 1, sizeof(*a->wrappers));
	if (!a->wrappers)
		return -ENOMEM;
	for (size_t i = 0; i < a->nr; i++) {
		const struct alloc_probe *p = &a->probes[i];

		if (p->object != (size_t)lib || !is_cxx(p->api)) {
			a->probes[n++] = *p;
			continue;
		}
		if (p->api != API_NEW && p->api != API_NEW_ARRAY)
			continue;
		a->wrappers[nw] = (struct alloc_wrapper){ strdup(a->objects[lib].path), p->vaddr,
							  p->vaddr + p->size, p->api };
		if (!a->wrappers[nw++].path)
			return -ENOMEM;
	}
	a->nr = n;
	a->nr_wrappers = nw;
	return 0;
}

/* Does ef define any of the API's functions (under a's prefix)? */
static bool defines_any(struct allocator *a, const struct elf_file *ef)
{
	uint64_t vaddr, offset, size;
	const char *symbol, *name;
	uint32_t api;

	for (size_t s = 0; api_symbol_at(s, &symbol, &api); s++) {
		name = symbol_name(a, s, symbol, api);
		/* Found, or there but not usable as it is (an IFUNC): it defines it. */
		if (!name || elf_file__find_func_size(ef, name, !a->is_static, &vaddr, &offset,
						       &size) != -ENOENT)
			return true;
	}
	return false;
}

int allocator__resolve(struct lookup_object *objs, size_t nr, bool is_static,
		       const char *prefix, struct allocator **out)
{
	struct elf_file **elves = calloc(nr ? nr : 1, sizeof(*elves));
	struct allocator *a = calloc(1, sizeof(*a));
	const char *symbol;
	uint32_t api;
	size_t nr_symbols = 0;
	int err = 0;

	if (!elves || !a)
		goto nomem;
	a->is_static = is_static;
	a->prefix = prefix && *prefix ? prefix : NULL;
	while (api_symbol_at(nr_symbols, &symbol, &api))
		nr_symbols++;
	a->probes = calloc(nr_symbols, sizeof(*a->probes));
	a->names = a->prefix ? calloc(nr_symbols, sizeof(*a->names)) : NULL;
	a->nr_names = a->names ? nr_symbols : 0;
	if (!a->probes || (a->prefix && !a->names))
		goto nomem;
	for (size_t o = 0; o < nr; o++)	/* unreadable, or known to define none: skipped */
		if (objs[o].open_path && !objs[o].defines_none)
			elf_file__open(objs[o].open_path, &elves[o]);
	for (size_t s = 0; api_symbol_at(s, &symbol, &api) && err != -ENOMEM; s++)
		err = resolve_one(a, elves, objs, nr, s, symbol, api);
	if (err == -ENOMEM)
		goto nomem;
	for (size_t o = 0; o < nr; o++) {
		if (elves[o] && objs[o].dev && !defines_any(a, elves[o]))
			objs[o].defines_none = true;
		elf_file__close(elves[o]);
	}
	free(elves);
	for (size_t i = 0; i < a->nr; i++) {
		struct alloc_probe *p = &a->probes[i];

		p->path = a->objects[p->object].path;
		p->open_path = a->objects[p->object].open_path;
		if (p->api == API_MALLOC)
			a->malloc_path = p->path;
	}
	if (!a->malloc_path) {
		allocator__free(a);
		return -ENOENT;
	}
	if (unwrap_cxx(a)) {
		allocator__free(a);
		return -ENOMEM;
	}
	*out = a;
	return 0;
nomem:
	for (size_t o = 0; elves && o < nr; o++)
		elf_file__close(elves[o]);
	free(elves);
	allocator__free(a);
	return -ENOMEM;
}

size_t allocator__internal_ranges(const struct allocator *a, const struct maps *maps,
				  struct addr_range *ranges, size_t max)
{
	size_t n = 0;

	if (a->is_static)
		return 0;
	for (size_t i = 0; i < maps->nr && n < max; i++) {
		const struct map_entry *e = &maps->entries[i];

		if (!e->executable || !map_entry__is_file(e))
			continue;
		for (size_t o = 0; o < a->nr_objects; o++) {
			if (strcmp(e->path, a->objects[o].path))
				continue;
			ranges[n++] = (struct addr_range){ .start = e->start, .end = e->end };
			break;
		}
	}
	return n;
}
