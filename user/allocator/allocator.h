/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Which object in the target really provides each allocation function: the
 * first one in the dynamic linker's lookup order that defines it (an
 * LD_PRELOADed tcmalloc, the executable itself, libc...), found from the
 * target's own link map, never from the tracer's environment.
 */
#ifndef ALLOCATOR_H
#define ALLOCATOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/types.h>
#include "memleak.h"
#include "util/procmaps.h"

/* An object in lookup order. */
struct lookup_object {
	char *path;		/* as the target sees it (its maps) */
	char *open_path;	/* as the tracer opens it: /proc/self/fd/FD; NULL if unreadable */
	int fd;			/* the file, opened inside the target's root (rootpath.h); -1 */
	dev_t dev;		/* the file mapped (0, 0: opened by path, -O) */
	ino_t ino;
	/*
	 * allocator__resolve found it to define none of the API's functions:
	 * at a later stop, the same file is not read again (lookup_order__read).
	 */
	bool defines_none;
};

struct lookup_order {
	struct lookup_object *objects;
	size_t nr, cap;
	bool is_static;		/* no dynamic linker: the executable is everything */
	bool complete;		/* the dynamic linker has finished loading (RT_CONSISTENT) */
	uint64_t ldso_base;	/* AT_BASE, 0 when static */
	uint64_t r_debug;	/* the dynamic linker's _r_debug in the target; 0: not found */
	char *ldso_open_path;	/* the dynamic linker's file, for its _dl_debug_state */
	int ldso_fd;		/* what ldso_open_path leads to */
};

/* One function to probe. */
struct alloc_probe {
	uint32_t api;		/* enum memleak_api */
	const char *symbol;	/* from the API table */
	size_t object;		/* index of the providing object in allocator.objects */
	const char *path;	/* target path of the providing object (owned by the allocator) */
	const char *open_path;	/* ... as the tracer opens it */
	uint64_t offset;	/* file offset of the function's first instruction */
	uint64_t vaddr, size;	/* its ELF address and size */
};

/*
 * libstdc++'s operator new, a thin wrapper over the malloc (or aligned_alloc)
 * probed elsewhere: not probed itself, its blocks are seen at malloc, whose
 * innermost frames lie in [start, end) of path's ELF addresses; the report
 * drops those frames and names the block's API as the caller called it.
 */
struct alloc_wrapper {
	char *path;		/* as the target sees it */
	uint64_t start, end;	/* ELF virtual addresses */
	uint32_t api;		/* API_NEW or API_NEW_ARRAY */
};

struct allocator {
	struct alloc_probe *probes;
	size_t nr;
	struct lookup_object *objects;	/* providers, owned */
	size_t nr_objects, cap_objects;
	bool is_static;
	const char *malloc_path;	/* who provides malloc */
	struct alloc_wrapper *wrappers;	/* owned; see struct alloc_wrapper */
	size_t nr_wrappers;
	const char *prefix;	/* -S: the allocator's names carry it (borrowed); NULL: none */
	char **names;		/* the prefixed names, by API table row (owned); NULL: none */
	size_t nr_names;
};

/*
 * Read the lookup order from the live target (auxv, _r_debug). 0 or -errno.
 * prev (NULL: none), the order read at the last stop of the same image:
 * an object whose file is still the one mapped is taken from it (its fd
 * duplicated, what resolving it found kept), not opened again. A PyTorch
 * job stops some 50 times, at each dlopen, with up to 300 objects mapped.
 */
int lookup_order__read(pid_t pid, const struct maps *maps, const struct lookup_order *prev,
		       struct lookup_order **out);
void lookup_order__free(struct lookup_order *lo);

/*
 * Resolve every API function over objs (in lookup order): the first object
 * defining a symbol provides it; two symbols at one address are probed once.
 * Static executables are searched in .symtab too. With prefix (-S, NULL:
 * none), the allocator's functions are prefix + their name: je_malloc.
 * -ENOENT when nothing provides malloc (prefix + malloc). An object marked
 * defines_none is not read; one read and found to define none is marked.
 */
int allocator__resolve(struct lookup_object *objs, size_t nr, bool is_static,
		       const char *prefix, struct allocator **out);
/*
 * Executable ranges of the objects that provide allocation functions: their
 * own mmap calls are the allocator's business. None for a static binary,
 * whose allocator shares its code with the program. Returns the count.
 */
size_t allocator__internal_ranges(const struct allocator *a, const struct maps *maps,
				  struct addr_range *ranges, size_t max);
/*
 * Probe one more function, symbol (a static string) at offset in obj, as
 * api: an allocator of another layer (Python's PyObject_Malloc as malloc).
 * Its nested calls to the others are then its own. 0 or -ENOMEM.
 */
int allocator__add(struct allocator *a, const struct lookup_object *obj, const char *symbol,
		   uint32_t api, uint64_t vaddr, uint64_t offset, uint64_t size);
void allocator__free(struct allocator *a);
void allocator__free_wrappers(struct alloc_wrapper *w, size_t nr);
/* The enum memleak_api of an API function's symbol name, or -ENOENT. */
int allocator__api_of(const char *symbol);

/*
 * obj for the file at path in process pid: through its mapping e
 * (rootpath__open_mapped), or, e NULL (-O), by path inside the target's
 * root. 0; -errno of the open, obj then kept unreadable (fd -1, open_path
 * NULL); -ENOMEM, obj empty.
 */
int lookup_object__init(struct lookup_object *obj, pid_t pid, const char *path,
			const struct map_entry *e);
void lookup_object__release(struct lookup_object *obj);

#endif
