/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reachability of the live blocks, with valgrind memcheck's meanings
 * (mc_leakcheck.c), from a memory reader and the roots: no recompiling,
 * no valgrind. Pure: the target's memory comes through a callback
 * (target/reach_hold.c reads it), so the tests give it a fake one.
 *
 * A root is a word of non-heap writable memory or a register. A pointer to
 * a block's first byte is a start pointer; to any other of its bytes an
 * interior pointer (memcheck's meaning: LeakSanitizer counts interior
 * pointers as reachable, memcheck as "possibly lost", and this follows
 * memcheck). Only aligned 8-byte words are pointers.
 *
 * - still reachable: a chain of start pointers from a root;
 * - possibly lost: reached from the roots, but only through an interior
 *   pointer somewhere on every chain;
 * - definitely lost: no root reaches it, nor does another lost block;
 * - indirectly lost: no root reaches it, but a lost block does (a list
 *   whose head is lost: the head is definitely lost, its nodes indirectly).
 *
 * Lost blocks are gathered as memcheck does: in address order, each block
 * not reached yet leads the blocks it reaches (by start or interior
 * pointers) that nothing else had reached, and a leader reached later
 * from another becomes indirect too.
 */
#ifndef REACH_H
#define REACH_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "reach_index.h"	/* struct reach_block */

enum reach_kind {
	REACH_DEFINITE,		/* definitely lost */
	REACH_INDIRECT,		/* indirectly lost */
	REACH_POSSIBLE,		/* possibly lost */
	REACH_REACHABLE,	/* still reachable */
	REACH__COUNT,
};

struct reach_range {
	uint64_t start, end;	/* [start, end) */
};

/*
 * Read len bytes of the target at addr into buf: the bytes read, short
 * where a page cannot be read (0 at an unreadable first page), or -errno.
 */
typedef ssize_t (*reach_read_fn)(void *ctx, uint64_t addr, void *buf, size_t len);

struct reach_input {
	const struct reach_block *blocks;	/* the live heap blocks, any order, not overlapping */
	size_t nr_blocks;
	const struct reach_range *roots;	/* memory scanned as roots; blocks in it are not */
	size_t nr_roots;
	const uint64_t *regs;	/* register values, roots too */
	size_t nr_regs;
	reach_read_fn read;
	void *ctx;
	/*
	 * The bytes from one block to the next (0: a struct reach_block's):
	 * blocks may be the caller's larger records that start with one.
	 */
	size_t stride;
};

struct reach_stats {
	uint64_t root_bytes;	/* of roots read */
	uint64_t block_bytes;	/* of blocks read (a block read twice counts twice) */
	uint64_t unread_bytes;	/* roots and blocks that could not be read */
};

/*
 * The kind of each block, into kinds[i] for in->blocks[i]. 0, or -ENOMEM.
 * Unreadable memory holds no pointer (counted in st->unread_bytes).
 */
int reach__classify(const struct reach_input *in, uint8_t *kinds, struct reach_stats *st);

/* "definitely lost", ...: the words of memcheck's summary. */
const char *reach__kind_text(enum reach_kind k);
/* "definitely_lost", ...: the JSON keys. */
const char *reach__kind_key(enum reach_kind k);

#endif
