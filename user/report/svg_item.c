// SPDX-License-Identifier: GPL-2.0
/*
 * The flame graph's items and its order (svg_item.h). Sorting 200,000
 * torch stacks from the root compares some 40 shared items per
 * comparison: each distinct item gets its rank among all of them once,
 * and stacks compare as arrays of ranks.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include "svg_item.h"
#include "util/hash.h"
#include "util/vec.h"

size_t svg_item__count(const struct report_stack *s)
{
	return (report__marker(s) != NULL) + s->nr_frames + 1;
}

struct svg_item svg_item__at(const struct report_stack *s, size_t i)
{
	size_t marker = report__marker(s) != NULL;

	if (i < marker)
		return (struct svg_item){ K_OTHER, report__marker(s), NULL };
	i -= marker;
	if (i < s->nr_frames) {
		const struct report_frame *fr = report__frame(s, s->nr_frames - 1 - i);

		/* A native frame's kind only when drawn: working it out from the
		 * module's name for every item compared cost most of a sort. */
		return (struct svg_item){ fr->language == FRAME_PYTHON ? K_PYTHON : K_NATIVE,
					  fr->function, fr };
	}
	return (struct svg_item){ K_API, report__api_name(s->api), NULL };
}

int svg_item__cmp(const struct svg_item *a, const struct svg_item *b)
{
	int c = report__cmp_name(a->name, b->name);

	if (c || (c = (int)a->kind - (int)b->kind) || (c = !a->fr - !b->fr) || !a->fr)
		return c;
	if ((c = report__cmp_name(a->fr->module, b->fr->module)))
		return c;
	/* A Python frame is its line. */
	if (a->kind == K_PYTHON && ((c = report__cmp_name(a->fr->file, b->fr->file)) ||
				    (c = a->fr->line - b->fr->line)))
		return c;
	/* Unnamed frames are told apart by where they are. */
	if (!a->name)
		return report__cmp_u64(a->fr->module ? a->fr->module_offset : a->fr->address,
				       b->fr->module ? b->fr->module_offset : b->fr->address);
	return 0;
}

/* ------------------------------------------------------------- classes */

/* An item hashed, equal items (svg_item__cmp) alike: what it compares, and no more. */
static uint64_t item_hash(const struct svg_item *it)
{
	const struct report_frame *fr = it->fr;
	uint64_t h = 0x9e3779b97f4a7c15ULL;

	if (!fr)
		return hash__mix(hash__str(h, it->name) ^ it->kind);
	h = hash__str(hash__str(h, fr->function), fr->module);
	if (fr->language == FRAME_PYTHON)
		h = hash__mix(hash__str(h, fr->file) ^ (uint32_t)fr->line);
	if (!fr->function)
		h = hash__mix(h ^ (fr->module ? fr->module_offset : fr->address));
	return h;
}

/*
 * The distinct items, each a class: found by what the item points at (a
 * frame, kept once in the report's frame table, or a synthetic item's
 * name), else by its contents among the classes.
 */
struct by_ptr {
	const void *key;
	uint32_t kind;
	uint32_t id;		/* its class */
};

struct classes {
	struct by_ptr *ptr;	/* key NULL: empty */
	size_t nr_ptrs, nr_ptr_slots;
	struct svg_item *item;	/* each class's first item */
	uint64_t *hash;		/* and its item_hash */
	size_t nr, cap, cap_hash;
	uint32_t *slot;		/* by contents: 0 empty, else class + 1 */
	size_t nr_slots;
};

static size_t ptr_slot(const struct classes *c, const void *key, uint32_t kind)
{
	size_t mask = c->nr_ptr_slots - 1;
	size_t i = hash__mix((uintptr_t)key ^ (uint64_t)kind << 60) & mask;

	while (c->ptr[i].key && (c->ptr[i].key != key || c->ptr[i].kind != kind))
		i = (i + 1) & mask;
	return i;
}

static size_t class_slot(const struct classes *c, const struct svg_item *it, uint64_t h)
{
	size_t mask = c->nr_slots - 1, i = h & mask;

	while (c->slot[i] && (c->hash[c->slot[i] - 1] != h ||
			      svg_item__cmp(&c->item[c->slot[i] - 1], it)))
		i = (i + 1) & mask;
	return i;
}

/* Both tables at most half full. */
static int classes_grow(struct classes *c)
{
	struct by_ptr *old = c->ptr;
	size_t n = c->nr_ptr_slots;

	if (c->nr_ptrs * 2 >= c->nr_ptr_slots) {
		c->nr_ptr_slots = n ? n * 2 : 1024;
		c->ptr = calloc(c->nr_ptr_slots, sizeof(*c->ptr));
		if (!c->ptr)
			return -ENOMEM;
		for (size_t i = 0; i < n; i++)
			if (old[i].key)
				c->ptr[ptr_slot(c, old[i].key, old[i].kind)] = old[i];
		free(old);
	}
	if (c->nr * 2 >= c->nr_slots) {
		free(c->slot);
		c->nr_slots = c->nr_slots ? c->nr_slots * 2 : 1024;
		c->slot = calloc(c->nr_slots, sizeof(*c->slot));
		if (!c->slot)
			return -ENOMEM;
		for (size_t i = 0; i < c->nr; i++)
			c->slot[class_slot(c, &c->item[i], c->hash[i])] = (uint32_t)(i + 1);
	}
	return 0;
}

/* The class of it: its pointer's, else its contents', else a new one. -1: out of memory. */
static int64_t class_of(struct classes *c, const struct svg_item *it)
{
	const void *key = it->fr ? (const void *)it->fr : (const void *)it->name;
	size_t p, k;
	uint64_t h;

	if (classes_grow(c))
		return -1;
	p = ptr_slot(c, key, it->kind);
	if (c->ptr[p].key)
		return c->ptr[p].id;
	h = item_hash(it);
	k = class_slot(c, it, h);
	if (!c->slot[k]) {
		if (c->nr >= UINT32_MAX - 1 ||
		    vec__reserve(&c->item, &c->cap, c->nr + 1, sizeof(*c->item)) ||
		    vec__reserve(&c->hash, &c->cap_hash, c->nr + 1, sizeof(*c->hash)))
			return -1;
		c->item[c->nr] = *it;
		c->hash[c->nr] = h;
		c->slot[k] = (uint32_t)++c->nr;
	}
	c->ptr[p] = (struct by_ptr){ key, it->kind, c->slot[k] - 1 };
	c->nr_ptrs++;
	return c->ptr[p].id;
}

static void classes_free(struct classes *c)
{
	free(c->ptr);
	free(c->item);
	free(c->hash);
	free(c->slot);
}

/* ------------------------------------------------------------- order */

/* Two classes by their items; arg: the classes' items. */
static int cmp_class(const void *pa, const void *pb, void *arg)
{
	const struct svg_item *item = arg;

	return svg_item__cmp(&item[*(const uint32_t *)pa], &item[*(const uint32_t *)pb]);
}

/* rank[class]: its place among the classes in svg_item__cmp's order (all distinct). */
static uint32_t *class_ranks(const struct classes *c)
{
	uint32_t *order = malloc((c->nr ?: 1) * sizeof(*order));
	uint32_t *rank = malloc((c->nr ?: 1) * sizeof(*rank));

	if (!order || !rank) {
		free(order);
		free(rank);
		return NULL;
	}
	for (size_t i = 0; i < c->nr; i++)
		order[i] = (uint32_t)i;
	qsort_r(order, c->nr, sizeof(*order), cmp_class, c->item);
	for (size_t i = 0; i < c->nr; i++)
		rank[order[i]] = (uint32_t)i;
	free(order);
	return rank;
}

/* A stack as its items' ranks, from the root. */
struct ranked {
	const struct report_stack *s;
	uint32_t *rank;
	size_t n;
};

static int cmp_ranked(const void *pa, const void *pb)
{
	const struct ranked *a = pa, *b = pb;

	for (size_t i = 0; i < a->n && i < b->n; i++)
		if (a->rank[i] != b->rank[i])
			return a->rank[i] < b->rank[i] ? -1 : 1;
	return report__cmp_u64(a->n, b->n);
}

/* Each stack's items as their classes, in one block side by side. */
static uint32_t *stack_classes(const struct report_stack **v, size_t n, struct ranked *x,
			       struct classes *c)
{
	size_t items = 0;
	uint32_t *all;
	int64_t id;

	for (size_t i = 0; i < n; i++)
		items += svg_item__count(v[i]);
	all = malloc((items ?: 1) * sizeof(*all));
	for (size_t i = 0, at = 0; all && i < n; at += x[i].n, i++) {
		x[i] = (struct ranked){ v[i], all + at, svg_item__count(v[i]) };
		for (size_t k = 0; k < x[i].n; k++) {
			struct svg_item it = svg_item__at(v[i], k);

			if ((id = class_of(c, &it)) < 0) {
				free(all);
				return NULL;
			}
			x[i].rank[k] = (uint32_t)id;
		}
	}
	return all;
}

int svg_item__sort(const struct report_stack **v, size_t n)
{
	struct ranked *x = calloc(n ?: 1, sizeof(*x));
	struct classes c = { 0 };
	uint32_t *all = x ? stack_classes(v, n, x, &c) : NULL;
	uint32_t *rank = all ? class_ranks(&c) : NULL;
	size_t items = 0;

	if (!rank) {
		free(all);
		free(x);
		classes_free(&c);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		items += x[i].n;
	for (size_t i = 0; i < items; i++)
		all[i] = rank[all[i]];
	qsort(x, n, sizeof(*x), cmp_ranked);
	for (size_t i = 0; i < n; i++)
		v[i] = x[i].s;
	free(rank);
	free(all);
	free(x);
	classes_free(&c);
	return 0;
}
