// SPDX-License-Identifier: GPL-2.0
/*
 * The answers: the frames of each (file, address in the file, return
 * address or not), in a hash table that doubles as it fills. A later
 * report costs a lookup per address.
 */
#include <errno.h>
#include <stdlib.h>
#include "symbolize_internal.h"

static size_t cache_hash(const struct sym_file *f, uint64_t vaddr, bool return_address)
{
	uint64_t h = vaddr ^ ((uint64_t)(uintptr_t)f << 20) ^ return_address;

	return (h * 0x9e3779b97f4a7c15ull) >> 24;
}

struct cache_entry *symbolize_cache__find(const struct symbolizer *s, const struct sym_file *f,
				   uint64_t vaddr, bool return_address)
{
	struct cache_entry *e;

	if (!s->nr_buckets)
		return NULL;
	e = s->buckets[cache_hash(f, vaddr, return_address) & (s->nr_buckets - 1)];
	for (; e; e = e->next)
		if (e->file == f && e->vaddr == vaddr && e->return_address == return_address)
			return e;
	return NULL;
}

static int cache_grow(struct symbolizer *s)
{
	size_t nr = s->nr_buckets ? s->nr_buckets * 2 : 1024;
	struct cache_entry **buckets = calloc(nr, sizeof(*buckets));

	if (!buckets)
		return -ENOMEM;
	for (size_t i = 0; i < s->nr_buckets; i++) {
		struct cache_entry *e = s->buckets[i], *next;
		size_t b;

		for (; e; e = next) {
			next = e->next;
			b = cache_hash(e->file, e->vaddr, e->return_address) & (nr - 1);
			e->next = buckets[b];
			buckets[b] = e;
		}
	}
	free(s->buckets);
	s->buckets = buckets;
	s->nr_buckets = nr;
	return 0;
}

/* Take ownership of b's frames as the cached answer for (f, vaddr). */
int symbolize_cache__add(struct symbolizer *s, const struct sym_file *f, uint64_t vaddr,
		  bool return_address, struct frame_buf *b, struct cache_entry **out)
{
	struct cache_entry *e;
	size_t i;

	if (s->nr_entries >= s->nr_buckets * 2 && cache_grow(s))
		return -ENOMEM;
	e = malloc(sizeof(*e));
	if (!e)
		return -ENOMEM;
	*e = (struct cache_entry){ .file = f, .vaddr = vaddr, .return_address = return_address,
				   .frames = b->v, .nr = b->nr };
	i = cache_hash(f, vaddr, return_address) & (s->nr_buckets - 1);
	e->next = s->buckets[i];
	s->buckets[i] = e;
	s->nr_entries++;
	*b = (struct frame_buf){ 0 };
	*out = e;
	return 0;
}

void symbolize_cache__clear(struct symbolizer *s)
{
	for (size_t i = 0; i < s->nr_buckets; i++) {
		struct cache_entry *e = s->buckets[i], *next;

		for (; e; e = next) {
			next = e->next;
			symbolize_frames__free(e->frames, e->nr);
			free(e);
		}
	}
	free(s->buckets);
	s->buckets = NULL;
	s->nr_buckets = s->nr_entries = 0;
}
