/* SPDX-License-Identifier: GPL-2.0 */
/*
 * CFI tables for the BPF unwinder: each executable file the target maps gets
 * its rows (cfi.c) loaded once per build id, shared by every process and
 * image of the run and never removed; the target's executable mappings are
 * republished whenever they change. The tables are written only through
 * struct unwind_ops, which probe/ fills: unwind/ knows nothing of BPF.
 *
 * Lazy (-p): the rows of a PyTorch process take a second or more to read,
 * and the target allocates meanwhile. So its mappings are published at
 * once, a file whose rows are not read yet marked pending (BPF ends a
 * stack there, marked and counted: never a guess), the files on nearly
 * every stack are built before the probes go live (unwind__build_now), and
 * the rest after, a slice at a time (unwind__build), those BPF met first.
 */
#ifndef UNWIND_H
#define UNWIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "util/procmaps.h"

struct unwind;
struct unwind_row;
struct unwind_mapping;

/* --unwind: how user stacks are walked (docs/TRACING.md, "Stacks"). */
enum unwind_mode {
	UNWIND_AUTO,		/* CFI where the kernel can, else frame pointers */
	UNWIND_FP,		/* frame pointers only */
	UNWIND_DWARF,		/* CFI; an error if the kernel cannot */
};

/* A run of rows, one file's: add_rows takes several, placed back to back. */
struct unwind_rows {
	const struct unwind_row *rows;
	size_t nr;
};

/* What unwind asks of the tables BPF reads; each gets ctx back. */
struct unwind_ops {
	void *ctx;
	/*
	 * Append the rows of parts[0..nr) back to back, *first being the index
	 * of the first part's first: 0, or -ENOSPC when full (nothing added).
	 */
	int (*add_rows)(void *ctx, const struct unwind_rows *parts, size_t nr, uint32_t *first);
	/*
	 * Publish the target's executable mappings (sorted by start, at most
	 * MEMLEAK_UNWIND_MAPPINGS) in one switch: 0 or -errno.
	 */
	int (*set_mappings)(void *ctx, const struct unwind_mapping *m, size_t nr);
	/*
	 * Did BPF meet mapping i of the last set_mappings while its rows were
	 * pending? (Which tables to build first.) NULL: never asked.
	 */
	bool (*wanted)(void *ctx, size_t i);
	/*
	 * --follow: publish the executable mappings of image tag (sorted, at
	 * most MEMLEAK_UNWIND_MAPPINGS; unwind_image__update), or with m NULL
	 * forget them: 0, -ENOSPC when no slot is free, or -errno. NULL: no
	 * images.
	 */
	int (*set_image_mappings)(void *ctx, uint32_t image, const struct unwind_mapping *m,
				  size_t nr);
	/* Rows loaded, and the kernel memory of the tables holding them (for -v). */
	uint64_t (*rows)(void *ctx);
	uint64_t (*bytes)(void *ctx);
};

/*
 * --unwind to *tables: CFI rows or frame pointers. auto takes the rows when
 * can_walk() says the kernel can walk them (bpf_loop, Linux 5.17); dwarf
 * insists: -EOPNOTSUPP, said, when it cannot. fp does not ask.
 */
int unwind__choose(enum unwind_mode mode, bool (*can_walk)(void), bool *tables);

/*
 * ops is copied. lazy: tables are built by unwind__build_now and
 * unwind__build, not by unwind__update. verbose > 0: one line per table
 * loaded. NULL when out of memory.
 */
struct unwind *unwind__new(const struct unwind_ops *ops, bool lazy, int verbose);
/*
 * --unwind-cache: keep tables across runs in dir (unwind_cache.h; NULL:
 * UNWIND_CACHE_DIR), "off": not. A directory refused is said in one line
 * (given: always; the default: with -v), and the run goes on without.
 */
void unwind__cache(struct unwind *u, const char *dir);
/*
 * Publish maps as the target's mappings (pid: to open its files as it sees
 * them), the tables of files not seen yet loaded first, or when lazy,
 * published as pending. A file whose CFI cannot be read or loaded is
 * unwound with frame pointers (said once). 0 or -errno.
 */
int unwind__update(struct unwind *u, pid_t pid, const struct maps *maps);	/* u NULL: 0 */
/*
 * Lazy: build now the pending tables of the files mapped (in maps, as last
 * published) at paths[0..nr), in one go, and publish them. 0 or -errno.
 */
int unwind__build_now(struct unwind *u, const struct maps *maps, const char *const *paths,
		      size_t nr);
/*
 * --follow: the mappings of pid, a process of the exec'd image tag (or a
 * fork of the target's, tag its own, that loaded libraries the target has
 * not), as that image's (add: a new image; else only an image published
 * before), its new files' tables built now (it is held meanwhile: its
 * first stacks are walked by them), shared with the target's and every
 * other image's by build id. 0 or -errno; u NULL: 0.
 */
int unwind_image__update(struct unwind *u, uint32_t image, pid_t pid, const struct maps *maps,
			 bool add);
/* The image's last process is gone: its mappings are forgotten. */
void unwind_image__forget(struct unwind *u, uint32_t image);	/* u NULL: nothing */
/* Tables still pending. */
bool unwind__pending(const struct unwind *u);	/* u NULL: false */
/*
 * Build pending tables for about slice_ms, those BPF met while pending
 * first, then by address; publish them. 0 or -errno.
 */
int unwind__build(struct unwind *u, unsigned slice_ms);
/* Files and rows loaded, for the line that says the tables are ready. */
void unwind__totals(const struct unwind *u, size_t *files, uint64_t *rows);
void unwind__free(struct unwind *u);

#endif
