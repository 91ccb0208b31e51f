// SPDX-License-Identifier: GPL-2.0
/*
 * The frame trie (prefixes.h). Nodes live in chunks that never move, found
 * through a table of chunk pointers sized once (its untouched pages cost
 * nothing), so a reader walking a held stack never meets a moving array.
 * The index from (caller, frame) to node is open-addressed with linear
 * probing; a node let go of leaves it by backward shifting, so lookups
 * never wade through tombstones. Freed nodes are reused, the last freed
 * first.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "prefixes.h"

#define CHUNK_SHIFT 14
#define CHUNK_NODES (1u << CHUNK_SHIFT)
#define MAX_CHUNKS (1u << (32 - CHUNK_SHIFT))
#define INDEX_MIN 1024u
#define PATH_MAX_NODES 128	/* deeper than any stack: MEMLEAK_MAX_STACK_DEPTH */

/* A node: its caller's node (0: the root), its holds, then its frame. */
struct node {
	uint32_t parent;	/* on the free list: the next free node */
	uint32_t refs;
};

struct prefixes {
	size_t item, stride;
	char **chunks;		/* MAX_CHUNKS pointers, allocated as needed */
	uint32_t next;		/* nodes ever handed out; node 0 is the root, never used */
	uint32_t free;		/* the last node freed, 0: none */
	size_t nodes;		/* held */
	size_t nr_chunks;
	/*
	 * A node's id (low half) and its hash's low 32 bits (high half); 0:
	 * empty. The hash tells most other nodes apart without reading them,
	 * and where a node's home is when the index grows or shifts.
	 */
	uint64_t *slots;
	size_t cap;		/* a power of two, or 0 */
	/*
	 * The nodes of the last stack interned, from the outermost: the next
	 * stack shares most of them (consecutive stacks share their outer
	 * frames), found by comparing frames, not by the index. Valid while
	 * no node was freed since (frees unchanged): a freed node may be
	 * reused for another frame.
	 */
	uint32_t path[PATH_MAX_NODES];
	char *path_frames;	/* their frames, path_nr items, outermost first: read without the nodes */
	uint32_t path_nr;
	uint64_t frees, path_frees;
	pthread_mutex_t lock;
};

static struct node *node_at(const struct prefixes *p, uint32_t n)
{
	return (struct node *)(p->chunks[n >> CHUNK_SHIFT] + (size_t)(n & (CHUNK_NODES - 1)) * p->stride);
}

static const void *frame_of(const struct node *n)
{
	return n + 1;
}

/*
 * Are two frames the same? A native frame (8 bytes) as one word: memcmp's
 * call for each of a stack's 40 shared outer frames was a tenth of the
 * stack ring reader's CPU on a torch job.
 */
static bool same_frame(const struct prefixes *p, const void *a, const void *b)
{
	uint64_t x, y;

	if (p->item != sizeof(x))
		return !memcmp(a, b, p->item);
	memcpy(&x, a, sizeof(x));
	memcpy(&y, b, sizeof(y));
	return x == y;
}

static uint64_t hash(uint32_t parent, const void *frame, size_t item)
{
	uint64_t h = (parent + 1) * 0x9e3779b97f4a7c15ull;
	const uint64_t *w = frame;

	for (size_t i = 0; i < item / 8; i++) {
		h = (h ^ w[i]) * 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	return h;
}

struct prefixes *prefixes__new(size_t item)
{
	struct prefixes *p;

	if (!item || item % 8)
		return NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->item = item;
	p->stride = sizeof(struct node) + item;
	p->chunks = calloc(MAX_CHUNKS, sizeof(*p->chunks));
	p->path_frames = malloc(PATH_MAX_NODES * item);
	if (!p->chunks || !p->path_frames) {
		free(p->chunks);
		free(p->path_frames);
		free(p);
		return NULL;
	}
	p->next = 1;
	pthread_mutex_init(&p->lock, NULL);
	return p;
}

void prefixes__free(struct prefixes *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nr_chunks; i++)
		free(p->chunks[i]);
	free(p->chunks);
	free(p->path_frames);
	free(p->slots);
	pthread_mutex_destroy(&p->lock);
	free(p);
}

static uint32_t id_of(uint64_t slot)
{
	return (uint32_t)slot;
}

static size_t home(const struct prefixes *p, uint64_t slot)
{
	return (size_t)(slot >> 32) & (p->cap - 1);
}

/* The slot holding (parent, frame), or the empty slot where it would go; its hash in *tag. */
static size_t find(const struct prefixes *p, uint32_t parent, const void *frame, uint32_t *tag)
{
	size_t i;

	*tag = (uint32_t)hash(parent, frame, p->item);
	for (i = *tag & (p->cap - 1);; i = (i + 1) & (p->cap - 1)) {
		const struct node *x;

		if (!p->slots[i])
			return i;
		if ((uint32_t)(p->slots[i] >> 32) != *tag)
			continue;
		x = node_at(p, id_of(p->slots[i]));
		if (x->parent == parent && same_frame(p, frame_of(x), frame))
			return i;
	}
}

/* The index moved into cap slots (a power of two, room for every node). */
static int reindex(struct prefixes *p, size_t cap)
{
	size_t old = p->cap;
	uint64_t *slots = p->slots;

	p->slots = calloc(cap, sizeof(*p->slots));
	if (!p->slots) {
		p->slots = slots;
		return -ENOMEM;
	}
	p->cap = cap;
	for (size_t i = 0; i < old; i++) {
		size_t j;

		if (!slots[i])
			continue;
		for (j = home(p, slots[i]); p->slots[j]; j = (j + 1) & (cap - 1))
			;
		p->slots[j] = slots[i];
	}
	free(slots);
	return 0;
}

/*
 * Room for one more node in the index, kept at most three quarters full:
 * the hashes in the slots keep the probes off the nodes, so a longer probe
 * is a few more words of the same cache lines (at the torch job's 1.5
 * million nodes, 16 MiB of index instead of 32).
 */
static int grow_index(struct prefixes *p)
{
	if ((p->nodes + 1) * 4 <= p->cap * 3)
		return 0;
	return reindex(p, p->cap ? p->cap * 2 : INDEX_MIN);
}

/*
 * The index halved (or more) once under a quarter of it is used, to under
 * half full: a fold lets go of many of the nodes of a run's import, and an
 * index sized for them would stay (32 MiB for 822,000 nodes on the torch
 * job, grown at 1.6 million). The gap to the three quarters that grows it
 * keeps a run at the edge from moving the index back and forth. Without
 * memory it stays as it is.
 */
static void shrink_index(struct prefixes *p)
{
	size_t cap = p->cap;

	if (cap <= INDEX_MIN || p->nodes * 4 >= cap)
		return;
	while (cap > INDEX_MIN && p->nodes * 4 < cap)
		cap /= 2;
	(void)reindex(p, cap);
}

/* A node no one uses: a freed one, or the next of a chunk. 0 without memory. */
static uint32_t take_node(struct prefixes *p)
{
	uint32_t n = p->free;

	if (n) {
		p->free = node_at(p, n)->parent;
		return n;
	}
	if (p->next == UINT32_MAX)
		return 0;
	if (!(p->next & (CHUNK_NODES - 1)) || p->next == 1) {
		size_t c = p->next >> CHUNK_SHIFT;

		if (!p->chunks[c]) {
			p->chunks[c] = malloc(CHUNK_NODES * p->stride);
			if (!p->chunks[c])
				return 0;
			p->nr_chunks = c + 1;
		}
	}
	return p->next++;
}

/* Take slot i out of the index, moving up the nodes probing past it. */
static void unindex(struct prefixes *p, size_t i)
{
	size_t j = i;

	p->slots[i] = 0;
	for (;;) {
		size_t h;

		j = (j + 1) & (p->cap - 1);
		if (!p->slots[j])
			return;
		h = home(p, p->slots[j]);
		/* Stays where it is if its home lies cyclically in (i, j]. */
		if (i <= j ? (i < h && h <= j) : (i < h || h <= j))
			continue;
		p->slots[i] = p->slots[j];
		p->slots[j] = 0;
		i = j;
	}
}

/* Free n and the callers it alone held, while no one holds them. Under the lock. */
static void release(struct prefixes *p, uint32_t n)
{
	while (n) {
		struct node *x = node_at(p, n);
		uint32_t parent = x->parent;

		if (x->refs)
			return;
		uint32_t tag;

		unindex(p, find(p, parent, frame_of(x), &tag));
		x->parent = p->free;
		p->free = n;
		p->nodes--;
		p->frees++;
		n = parent;
		if (n)
			node_at(p, n)->refs--;
	}
}

/* The node of frame under parent, made when none is. 0 without memory. */
static uint32_t child(struct prefixes *p, uint32_t parent, const void *frame)
{
	size_t i;
	uint32_t n, tag;
	struct node *x;

	if (grow_index(p))
		return 0;
	i = find(p, parent, frame, &tag);
	if (p->slots[i])
		return id_of(p->slots[i]);
	n = take_node(p);
	if (!n)
		return 0;
	x = node_at(p, n);
	x->parent = parent;
	x->refs = 0;
	memcpy(x + 1, frame, p->item);
	p->slots[i] = (uint64_t)tag << 32 | n;
	p->nodes++;
	if (parent)
		node_at(p, parent)->refs++;
	return n;
}

/* How many outer frames of frames[0..nr) the last stack's path has: its nodes are theirs. */
static uint32_t shared_outer(const struct prefixes *p, const char *frames, uint32_t nr)
{
	uint32_t k = 0;

	if (p->path_frees != p->frees)
		return 0;
	while (k < p->path_nr && k < nr &&
	       same_frame(p, p->path_frames + (size_t)k * p->item,
			  frames + (size_t)(nr - 1 - k) * p->item))
		k++;
	return k;
}

int prefixes__intern(struct prefixes *p, const void *frames, uint32_t nr, uint32_t *leaf)
{
	const char *f = frames;
	uint32_t n = 0, k;

	*leaf = 0;
	if (!nr)
		return 0;
	pthread_mutex_lock(&p->lock);
	k = shared_outer(p, f, nr);
	if (k)
		n = p->path[k - 1];
	/* From the outermost frame in: the stack's callers are its prefix. */
	for (uint32_t j = k; j < nr; j++) {
		uint32_t c = child(p, n, f + (size_t)(nr - 1 - j) * p->item);

		if (!c) {
			release(p, n);
			p->path_nr = 0;
			pthread_mutex_unlock(&p->lock);
			return -ENOMEM;
		}
		n = c;
		if (j < PATH_MAX_NODES) {
			p->path[j] = n;
			memcpy(p->path_frames + (size_t)j * p->item, f + (size_t)(nr - 1 - j) * p->item,
			       p->item);
		}
	}
	p->path_nr = nr < PATH_MAX_NODES ? nr : PATH_MAX_NODES;
	p->path_frees = p->frees;
	node_at(p, n)->refs++;
	pthread_mutex_unlock(&p->lock);
	*leaf = n;
	return 0;
}

void *prefixes__frames(struct prefixes *p, size_t *nr)
{
	char *out;

	*nr = 0;
	pthread_mutex_lock(&p->lock);
	out = malloc((p->nodes ?: 1) * p->item);
	/* A node held has a hold (a stack's, or a callee's); a freed one none. */
	for (uint32_t n = 1; out && n < p->next; n++) {
		const struct node *x = node_at(p, n);

		if (x->refs)
			memcpy(out + (*nr)++ * p->item, frame_of(x), p->item);
	}
	pthread_mutex_unlock(&p->lock);
	return out;
}

void prefixes__hold(struct prefixes *p, uint32_t leaf)
{
	if (!leaf)
		return;
	pthread_mutex_lock(&p->lock);
	node_at(p, leaf)->refs++;
	pthread_mutex_unlock(&p->lock);
}

void prefixes__put(struct prefixes *p, uint32_t leaf)
{
	if (!leaf)
		return;
	pthread_mutex_lock(&p->lock);
	node_at(p, leaf)->refs--;
	release(p, leaf);
	shrink_index(p);
	pthread_mutex_unlock(&p->lock);
}

void prefixes__prefetch(const struct prefixes *p, uint32_t leaf)
{
	if (leaf)
		__builtin_prefetch(node_at(p, leaf), 1);
}

uint32_t prefixes__walk(const struct prefixes *p, uint32_t leaf, void *out, uint32_t max)
{
	char *o = out;
	uint32_t nr = 0;

	for (uint32_t n = leaf; n && nr < max; nr++) {
		const struct node *x = node_at(p, n);

		memcpy(o + (size_t)nr * p->item, frame_of(x), p->item);
		n = x->parent;
	}
	return nr;
}

size_t prefixes__nodes(const struct prefixes *p)
{
	return p ? p->nodes : 0;
}

size_t prefixes__bytes(const struct prefixes *p)
{
	if (!p)
		return 0;
	return p->nr_chunks * (CHUNK_NODES * p->stride) + p->cap * sizeof(*p->slots) +
	       (p->nr_chunks + 511) / 512 * 4096;
}
