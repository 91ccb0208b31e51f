/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Stacks stored as shared prefixes: a trie of frames, rooted at the
 * outermost. A torch job's new stacks share their outer 40 to 47 frames
 * with stacks seen before (the interpreter's loop, the import machinery,
 * the training step), so a stack costs the frames no earlier stack had,
 * not all of them: a node is one frame under its caller's node, interned
 * by (caller, frame), and a stack is its innermost node and its depth.
 *
 * Nodes are counted: each holds its caller, and each stack its innermost
 * node; the last hold let go of frees a node and lets go of its caller.
 * A node's frame and caller never change while it is held, so reading a
 * held stack needs no lock; interning and letting go take the store's.
 */
#ifndef PREFIXES_H
#define PREFIXES_H

#include <stddef.h>
#include <stdint.h>

struct prefixes;

/* A store of frames of item bytes each (a multiple of 8); NULL without memory. */
struct prefixes *prefixes__new(size_t item);
void prefixes__free(struct prefixes *p);
/*
 * The node of the innermost of frames[0..nr) (innermost first, item bytes
 * each), held once for the caller, in *leaf: 0 for no frames. 0 or -ENOMEM
 * (nothing held then).
 */
int prefixes__intern(struct prefixes *p, const void *frames, uint32_t nr, uint32_t *leaf);
/* Hold leaf once more. 0 is nothing. */
void prefixes__hold(struct prefixes *p, uint32_t leaf);
/* Let go of one hold of leaf: nodes no longer held are freed. 0 is nothing. */
void prefixes__put(struct prefixes *p, uint32_t leaf);
/*
 * Fetch leaf's node into the cache ahead of a put of it (a miss each, for
 * each of many stacks let go of in a row). 0 is nothing. No lock: a held
 * node never moves.
 */
void prefixes__prefetch(const struct prefixes *p, uint32_t leaf);
/*
 * The frames of the stack whose innermost node is leaf, innermost first,
 * into out (room for max items): how many were copied.
 */
uint32_t prefixes__walk(const struct prefixes *p, uint32_t leaf, void *out, uint32_t max);
/*
 * The frame of every node held (of every stack held, each frame once per
 * caller it is met under), in an array of *nr items the caller frees;
 * NULL without memory.
 */
void *prefixes__frames(struct prefixes *p, size_t *nr);
/* The nodes held, and the bytes the store takes. */
size_t prefixes__nodes(const struct prefixes *p);
size_t prefixes__bytes(const struct prefixes *p);

#endif
