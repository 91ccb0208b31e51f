/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copies of the stacks a reading of the BPF maps found, by stack id, kept
 * from one reading to the next: a stack id is a hash of the stack's frames
 * (bpf/stack.bpf.h, python.bpf.h), so what it names never changes, and a
 * report of 200,000 stacks asks the kernel only for the few that are new
 * since the last, instead of three map lookups for each of them every
 * INTERVAL. A reading lends its sites the cache's own copies (counted
 * references), so a report copies no frames either. A copy no reading used
 * is let go of when the reading ends: the cache holds what the live sites
 * name, never what the run ever saw.
 */
#ifndef STACKCACHE_H
#define STACKCACHE_H

#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>
#include "memleak.h"

/* One stack, as a site names it: native frames and, in Python, its frames. */
struct stack_copy {
	uint64_t *ips;		/* nr_ips frames, innermost first */
	uint32_t nr_ips;
	uint32_t flags;		/* STACK_* */
	uint32_t proc;		/* --follow: the tag of the process whose stack it is */
	struct py_stack *py;	/* frames[0..nr) only (stackcache__py_size); NULL: none */
};

/* A stack_copy in one block of memory, shared by its holders. */
struct stack_blob {
	uint32_t refs;		/* atomic */
	struct stack_copy s;	/* its arrays follow in the block */
};

/* A blob holding a copy of s, held once by the caller; NULL without memory. */
struct stack_blob *stack_blob__new(const struct stack_copy *s);
struct stack_blob *stack_blob__hold(struct stack_blob *b);
/* Let go of one hold; the last frees it. NULL is nothing. */
void stack_blob__put(struct stack_blob *b);
/* The bytes of a py_stack holding its first nr frames. */
size_t stackcache__py_size(uint32_t nr);

struct stackcache;

struct stackcache *stackcache__new(void);
void stackcache__free(struct stackcache *c);

/* A reading begins: the copies it does not use are let go of at its end. */
void stackcache__begin(struct stackcache *c);
/* The copy of id, now used by this reading, held for the caller; NULL when not kept. */
struct stack_blob *stackcache__get(struct stackcache *c, uint64_t id);
/* Keep b under id (the cache holds it too). 0 or -ENOMEM. */
int stackcache__put(struct stackcache *c, uint64_t id, struct stack_blob *b);
/* The reading ends: let go of the copies it did not use. */
void stackcache__end(struct stackcache *c);

size_t stackcache__nr(const struct stackcache *c);
size_t stackcache__bytes(const struct stackcache *c);

#endif
