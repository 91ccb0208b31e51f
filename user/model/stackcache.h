/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The stacks every site of a reading of the BPF maps names, by stack id,
 * kept from one reading to the next: a stack id is a hash of the stack's
 * frames (bpf/stack.bpf.h, python.bpf.h), so what it names never changes,
 * and a report of 700,000 sites asks the kernel only for the few stacks
 * that are new since the last, instead of three map lookups for each of
 * them every INTERVAL. A reading lends its sites the cache's own blobs
 * (counted references), so a report copies no frames either, and the
 * retired store keeps the same blobs for the stacks the maps let go of
 * (model/retired.c): one copy of a stack's frames, however many sites,
 * pairs and stores name it. A stack no reading used is let go of when the
 * reading ends: the cache holds what the sites name, never what the run
 * ever saw.
 */
#ifndef STACKCACHE_H
#define STACKCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>
#include "memleak.h"

/*
 * Stack frames, as a blob is made of them: a native stack's (ips) or a
 * Python stack's (py, ips none).
 */
struct stack_copy {
	uint64_t *ips;		/* nr_ips frames, innermost first */
	uint32_t nr_ips;
	uint32_t flags;		/* STACK_* */
	struct py_stack *py;	/* frames[0..nr) read, at most MEMLEAK_PY_MAX_FRAMES; NULL: none */
};

/*
 * A stack's frames, shared by its holders: the cache, the retired store and
 * the sites of a reading. id is the map's key it was read under (a native
 * stack id, or a Python stack id). The frames themselves are nodes of a
 * frame trie (model/prefixes.h) every blob shares: a blob holds its
 * innermost node, native and Python apart, and is read with
 * stack_blob__ips and stack_blob__py.
 */
struct stack_blob {
	uint32_t refs;		/* atomic */
	uint32_t ips;		/* the innermost native frame's node; 0: none */
	uint64_t id;
	uint8_t nr_ips;		/* native frames, at most MEMLEAK_MAX_STACK_DEPTH */
	uint8_t has_py;		/* Python frames follow (python[0]) */
	uint16_t flags;		/* STACK_* */
	uint32_t py;		/* the innermost Python frame's node; 0: none */
	/*
	 * A 64-bit hash of its native frames, their number and flags (not the
	 * BPF id's hash): a stack sent again is checked against it, not walked.
	 */
	uint64_t ips_hash;
	/* Only in a blob of Python frames: what else its py_stack said. */
	struct stack_blob_py {
		uint32_t nr;	/* py_stack.nr as read (frames kept: at most MEMLEAK_PY_MAX_FRAMES) */
		uint32_t flags;	/* PY_STACK_* */
		uint64_t entries;
	} python[];
};

/* A site's stack: its native frames and, in Python, its Python frames (NULL: none). */
struct stack_ref {
	struct stack_blob *native;
	struct stack_blob *python;
	uint32_t proc;		/* --follow: the tag of the process whose stack it is */
};

/* A blob holding a copy of s, held once by the caller; NULL without memory. */
struct stack_blob *stack_blob__new(uint64_t id, const struct stack_copy *s);
struct stack_blob *stack_blob__hold(struct stack_blob *b);
/* Let go of one hold; the last frees it. NULL is nothing. */
void stack_blob__put(struct stack_blob *b);
/*
 * Fetch its innermost frames' nodes into the cache ahead of a put (b read
 * already, or fetched too): a put that frees it reads them. NULL is
 * nothing.
 */
void stack_blob__prefetch(const struct stack_blob *b);
/*
 * The tracer is about to exit: from now on a put frees nothing, and the
 * exit gives the memory back at once. Freeing 262,000 stacks one by one
 * and the shared prefixes each held kept the tracer 400 to 480 ms after
 * its final report (v_stacks 15 12 keep).
 */
void stack_blob__exiting(void);
/* The bytes the blob takes, not counting its frames: those are shared (stackcache__frame_bytes). */
size_t stack_blob__size(const struct stack_blob *b);
/*
 * The bytes it would take with its frames in arrays of its own: the
 * measure the retired store's budget counts stacks in (model/retired.c).
 */
size_t stack_blob__flat_size(const struct stack_blob *b);
/*
 * Its innermost native frames, into out (room for max): how many, at most
 * nr_ips and MEMLEAK_MAX_STACK_DEPTH. NULL has none.
 */
uint32_t stack_blob__ips(const struct stack_blob *b, uint64_t *out, uint32_t max);
/*
 * Does it hold what c holds (as stack_blob__new keeps it)? A Python stack
 * by its frames, walked, and its nr, flags and entries; a native one by its
 * number of frames, flags and a 64-bit hash of them all, not a walk
 * (v_churn sends a million stacks again): only the count of two stacks
 * under one BPF id (CNT_STACK_MERGED) depends on it, and it misses one only
 * if this hash collides too.
 */
bool stack_blob__same(const struct stack_blob *b, const struct stack_copy *c);
/* The bytes of a py_stack holding its first nr frames (at most MEMLEAK_PY_MAX_FRAMES). */
size_t stackcache__py_size(uint32_t nr);
/* Its Python frames into *out, and out; NULL (out untouched) when it has none. */
const struct py_stack *stack_blob__py(const struct stack_blob *b, struct py_stack *out);
/*
 * Every Python frame of every blob held (each frame of a stack, however
 * many stacks share it: those of every site's stack among them), in an
 * array of *nr the caller frees; NULL without memory.
 */
struct py_frame *stack_blob__py_frames(size_t *nr);
/* Hold, or let go of, both blobs of a ref. */
void stack_ref__hold(const struct stack_ref *r);
void stack_ref__put(const struct stack_ref *r);

struct stackcache;

struct stackcache *stackcache__new(void);
void stackcache__free(struct stackcache *c);

/* A reading begins: the stacks it does not use are let go of at its end. */
void stackcache__begin(struct stackcache *c);
/* The stack of site stack id, now used by this reading, held for the caller; false: not kept. */
bool stackcache__get(struct stackcache *c, uint64_t id, struct stack_ref *out);
/* Keep ref under site stack id (the cache holds it too). 0 or -ENOMEM. */
int stackcache__put(struct stackcache *c, uint64_t id, const struct stack_ref *ref);
/*
 * The blob of a native (or Python) stack id that a kept stack holds, not
 * held for the caller: valid while the caller holds the cache's lock. NULL
 * when none does. A site stack new to the cache shares its frames with the
 * sites that have them already, and so does the retired store.
 */
struct stack_blob *stackcache__native(const struct stackcache *c, uint64_t id);
struct stack_blob *stackcache__python(const struct stackcache *c, uint64_t id);
/* The reading ends: let go of the stacks it did not use. */
void stackcache__end(struct stackcache *c);

size_t stackcache__nr(const struct stackcache *c);
size_t stackcache__bytes(const struct stackcache *c);
/* The frames every blob shares (model/prefixes.h): their nodes, and the bytes they take. */
size_t stackcache__frame_nodes(void);
size_t stackcache__frame_bytes(void);

#endif
