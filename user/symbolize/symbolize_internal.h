/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the symbolizer's files share: the files read, their symbol and
 * DWARF function indexes, and the cache of answers. symbolize.c holds the
 * public API; symbolize_file.c finds and reads each object file once,
 * symbolize_names.c names functions from the symbol table (and cuts
 * clones' suffixes),
 * symbolize_dwarf.c finds lines and inlined frames, symbolize_cache.c keeps
 * the answers per (file, address), symbolize_calls.c says which function a
 * call instruction imported.
 */
#ifndef SYMBOLIZE_INTERNAL_H
#define SYMBOLIZE_INTERNAL_H

#include <elfutils/libdwfl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "symbolize.h"

#define BUILD_ID_MAX 64		/* GNU ids are 20 bytes (SHA-1); longer is not one */

/* A function of a file's symbol table. */
struct sym_func {
	uint64_t start, size;
	const char *name;	/* in the file's string table: lives as long as its Dwfl */
	int rank;		/* between aliases: global over weak over local */
};

/* A function's code range, to find the function around a pc. */
struct die_range {
	uint64_t lo, hi;
	Dwarf_Die die;		/* valid as long as the file's Dwfl */
};

/*
 * The functions of one compilation unit, by start, indexed the first time a
 * pc falls in it: dwarf_getscopes would walk the whole unit for every pc.
 */
struct cu_funcs {
	Dwarf_Off cu;		/* the unit's DIE offset */
	struct die_range *v;
	uint64_t *max_end;	/* the highest end among v[0..i] */
	size_t nr;
};

struct sym_file {
	unsigned char build_id[BUILD_ID_MAX];
	size_t build_id_len;	/* 0: known by device, inode and path instead */
	dev_t dev;
	ino_t inode;
	char *path;
	Dwfl *dwfl;
	Dwfl_Module *dwmod;	/* NULL: unreadable, its frames get module+offset */
	bool has_dwarf;
	struct sym_func *funcs;	/* by start */
	uint64_t *max_end;	/* the highest end among funcs[0..i] */
	size_t nr_funcs;
	struct cu_funcs *cus;	/* by cu */
	size_t nr_cus, cap_cus;
	unsigned int failures;	/* failed debug-info lookups */
	struct elf_file *elf;	/* its relocations, for symbolize_calls.c; opened on first use */
	bool elf_tried;
};

/* Which file a (device, inode) of the current image is. */
struct file_ref {
	dev_t dev;
	ino_t inode;
	struct sym_file *file;
};

/* The frames of one address of one file; address, module and offset unset. */
struct cache_entry {
	struct cache_entry *next;
	const struct sym_file *file;
	uint64_t vaddr;		/* the address in the file's own terms */
	bool return_address;
	struct report_frame *frames;
	size_t nr;
};

/* What a call instruction imported, per (file, return address); name NULL: nothing known. */
struct call_entry {
	const struct sym_file *file;	/* NULL: a free slot */
	uint64_t vaddr;
	const char *name;	/* the file's string table's, open as long as the file */
};

struct symbolizer {
	char *debuginfo_path;
	Dwfl_Callbacks callbacks;	/* points at debuginfo_path */
	struct sym_file **files;
	size_t nr_files, cap_files;
	struct file_ref *refs;
	size_t nr_refs, cap_refs;
	struct cache_entry **buckets;	/* a power of two of them */
	size_t nr_buckets, nr_entries;
	struct call_entry *calls;	/* open addressing, a power of two of slots */
	size_t nr_calls, cap_calls;
	struct perfmap *jit;
	pid_t jit_pid, jit_nspid;	/* whose perf map, and its name there */
};

/* Frames under construction. */
struct frame_buf {
	struct report_frame *v;
	size_t nr, cap;
};

/* symbolize.c: frames, built and freed. */
void symbolize_frames__free(struct report_frame *frames, size_t nr);
int symbolize_frames__push(struct frame_buf *b, const char *function, const char *file, int line,
		   bool inlined);

/* symbolize_file.c: the file of module m, read on first use. */
int symbolize_file__for(struct symbolizer *s, const struct module *m, struct sym_file **out);
void symbolize_file__free(struct sym_file *f);

/* symbolize_names.c: the symbol table, and names as people read them. */
int symbolize_names__read_funcs(struct sym_file *f);
const struct sym_func *symbolize_names__func_at(const struct sym_file *f, uint64_t pc);
uint64_t symbolize_names__lookup_pc(const struct sym_file *f, uint64_t vaddr, bool return_address);
size_t symbolize_names__source_len(const char *name);
char *symbolize_names__demangle(const char *name);

/* symbolize_dwarf.c: the frames of pc, inlined ones first. */
int symbolize_dwarf__describe(struct sym_file *f, uint64_t pc, struct frame_buf *b);

/* symbolize_cache.c: the frames already found per (file, address). */
struct cache_entry *symbolize_cache__find(const struct symbolizer *s, const struct sym_file *f,
				   uint64_t vaddr, bool return_address);
int symbolize_cache__add(struct symbolizer *s, const struct sym_file *f, uint64_t vaddr,
		  bool return_address, struct frame_buf *b, struct cache_entry **out);
void symbolize_cache__clear(struct symbolizer *s);

/* symbolize_calls.c: what it knows of calls, forgotten. */
void symbolize_calls__clear(struct symbolizer *s);

#endif
