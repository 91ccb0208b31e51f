// SPDX-License-Identifier: GPL-2.0
/*
 * The distinct frames of a report (frame_table.h): in chunks that never
 * move, found by an open-addressing hash of their fields.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include "frame_table.h"
#include "util/hash.h"
#include "util/vec.h"

/* Frames a chunk holds: 256 KiB, a pointer to each stays valid as the table grows. */
#define CHUNK_SHIFT 12
#define CHUNK_FRAMES (1u << CHUNK_SHIFT)

struct frame_table {
	struct report_frame **chunks;
	size_t nr_chunks, cap_chunks;
	size_t nr;		/* frames */
	uint32_t *slot;		/* 0: empty; else a frame's index + 1 */
	size_t nr_slots;	/* a power of two, at least twice nr */
};

struct frame_table *frame_table__new(void)
{
	return calloc(1, sizeof(struct frame_table));
}

static struct report_frame *frame_at(const struct frame_table *t, size_t i)
{
	return &t->chunks[i >> CHUNK_SHIFT][i & (CHUNK_FRAMES - 1)];
}

/* Its fields but own, strings by pointer: what makes two frames the same one. */
static uint64_t frame_hash(const struct report_frame *f)
{
	uint64_t h = hash__mix(f->address ^ 0x9e3779b97f4a7c15ULL);

	h = hash__mix(h ^ (uintptr_t)f->function);
	h = hash__mix(h ^ (uintptr_t)f->symbol);
	h = hash__mix(h ^ (uintptr_t)f->module);
	h = hash__mix(h ^ f->module_offset);
	h = hash__mix(h ^ (uintptr_t)f->file);
	return hash__mix(h ^ (uint32_t)f->line ^ (uint64_t)f->inlined << 32 ^
			 (uint64_t)f->language << 40 ^ (uint64_t)f->borrowed << 48);
}

static bool frame_same(const struct report_frame *a, const struct report_frame *b)
{
	return a->address == b->address && a->function == b->function &&
	       a->symbol == b->symbol && a->module == b->module &&
	       a->module_offset == b->module_offset && a->file == b->file &&
	       a->line == b->line && a->inlined == b->inlined && a->language == b->language &&
	       a->borrowed == b->borrowed;
}

/* Frames owning strings are never looked up: no other frame has their pointers. */
static bool frame_findable(const struct report_frame *f)
{
	return f->borrowed || (!f->function && !f->symbol && !f->module && !f->file);
}

/* The slot of f, or the empty one where it goes. */
static size_t slot_of(const struct frame_table *t, const struct report_frame *f)
{
	size_t mask = t->nr_slots - 1, i = frame_hash(f) & mask;

	while (t->slot[i] && !frame_same(frame_at(t, t->slot[i] - 1), f))
		i = (i + 1) & mask;
	return i;
}

static int hash_grow(struct frame_table *t)
{
	size_t nr = t->nr_slots ? t->nr_slots * 2 : 4096;
	uint32_t *slot = calloc(nr, sizeof(*slot)), *old = t->slot;

	if (!slot)
		return -ENOMEM;
	t->slot = slot;
	t->nr_slots = nr;
	for (size_t i = 0; i < t->nr; i++)
		if (frame_findable(frame_at(t, i)))
			t->slot[slot_of(t, frame_at(t, i))] = (uint32_t)(i + 1);
	free(old);
	return 0;
}

/* Room for one more frame: a new chunk when the last is full. */
static int room(struct frame_table *t)
{
	if (t->nr < t->nr_chunks << CHUNK_SHIFT)
		return 0;
	if (t->nr >= UINT32_MAX - 1 ||
	    vec__reserve(&t->chunks, &t->cap_chunks, t->nr_chunks + 1, sizeof(*t->chunks)))
		return -ENOMEM;
	t->chunks[t->nr_chunks] = malloc(CHUNK_FRAMES * sizeof(**t->chunks));
	if (!t->chunks[t->nr_chunks])
		return -ENOMEM;
	t->nr_chunks++;
	return 0;
}

struct report_frame *frame_table__intern(struct frame_table *t, const struct report_frame *f,
					 bool *added)
{
	bool findable = frame_findable(f);
	size_t i = 0;

	*added = false;
	if (findable && (t->nr + 1) * 2 > t->nr_slots && hash_grow(t))
		return NULL;
	if (findable) {
		i = slot_of(t, f);
		if (t->slot[i])
			return frame_at(t, t->slot[i] - 1);
	}
	if (room(t))
		return NULL;
	*frame_at(t, t->nr) = *f;
	if (findable)
		t->slot[i] = (uint32_t)(t->nr + 1);
	*added = true;
	return frame_at(t, t->nr++);
}

size_t frame_table__count(const struct frame_table *t)
{
	return t ? t->nr : 0;
}

size_t frame_table__bytes(const struct frame_table *t)
{
	if (!t)
		return 0;
	return sizeof(*t) + t->nr_chunks * CHUNK_FRAMES * sizeof(**t->chunks) +
	       t->cap_chunks * sizeof(*t->chunks) + t->nr_slots * sizeof(*t->slot);
}

void frame_table__free(struct frame_table *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nr; i++)
		report__frame_free(frame_at(t, i));
	for (size_t i = 0; i < t->nr_chunks; i++)
		free(t->chunks[i]);
	free(t->chunks);
	free(t->slot);
	free(t);
}
