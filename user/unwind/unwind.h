/* SPDX-License-Identifier: GPL-2.0 */
/*
 * CFI tables for the BPF unwinder: each executable file the target maps gets
 * its rows (cfi.c) loaded once per build id, shared by every process and
 * image of the run and never removed; the target's executable mappings are
 * republished whenever they change. The tables are written only through
 * struct unwind_ops, which probe/ fills: unwind/ knows nothing of BPF.
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

/* --unwind: how user stacks are walked (README, "Stacks"). */
enum unwind_mode {
	UNWIND_AUTO,		/* CFI where the kernel can, else frame pointers */
	UNWIND_FP,		/* frame pointers only */
	UNWIND_DWARF,		/* CFI; an error if the kernel cannot */
};

/* What unwind asks of the tables BPF reads; each gets ctx back. */
struct unwind_ops {
	void *ctx;
	/* Append rows, *first being the index of rows[0]: 0, or -ENOSPC when full. */
	int (*add_rows)(void *ctx, const struct unwind_row *rows, size_t nr, uint32_t *first);
	/*
	 * Publish the target's executable mappings (sorted by start, at most
	 * MEMLEAK_UNWIND_MAPPINGS) in one switch: 0 or -errno.
	 */
	int (*set_mappings)(void *ctx, const struct unwind_mapping *m, size_t nr);
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

/* ops is copied. verbose > 0: one line per table loaded. NULL when out of memory. */
struct unwind *unwind__new(const struct unwind_ops *ops, int verbose);
/*
 * Load the tables of the files in maps not seen yet and publish maps as the
 * target's mappings (pid: to open its files as it sees them). A file whose
 * CFI cannot be read or loaded is unwound with frame pointers (said once).
 * 0 or -errno.
 */
int unwind__update(struct unwind *u, pid_t pid, const struct maps *maps);	/* u NULL: 0 */
void unwind__free(struct unwind *u);

#endif
