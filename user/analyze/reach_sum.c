// SPDX-License-Identifier: GPL-2.0
/* A reachability scan's figures by stack (reach_sum.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "reach.h"
#include "reach_sum.h"
#include "util/vec.h"

_Static_assert(REACH__COUNT == REPORT_REACH_KINDS, "report.h counts the kinds of reach.h");

static int site_cmp(const void *a, const void *b)
{
	const struct reach_sum_site *x = a, *y = b;

	return report__cmp_site(x->stack_id, x->api, y->stack_id, y->api);
}

static void add(struct report_reach_figures *f, uint8_t kind, uint64_t bytes)
{
	f->bytes[kind] += bytes;
	f->blocks[kind]++;
}

/*
 * The stacks met so far, by (stack_id, api): an index into s->sites (+1;
 * 0: empty), open-addressed, at most half full. A 4 GiB heap has 4 million
 * blocks from a few stacks: one entry per stack, not per block.
 */
struct by_stack {
	uint32_t *slot;
	size_t cap;
	size_t cap_sites;
};

static size_t home(uint64_t stack_id, uint32_t api, size_t cap)
{
	uint64_t h = (stack_id ^ api) * 0x9e3779b97f4a7c15ull;

	return (size_t)(h ^ h >> 32) & (cap - 1);
}

/* The slot of (stack_id, api): its site's, or the empty one where it goes. */
static size_t slot_of(const struct reach_sum *s, const struct by_stack *t, uint64_t stack_id,
		      uint32_t api)
{
	size_t i = home(stack_id, api, t->cap);

	while (t->slot[i] && (s->sites[t->slot[i] - 1].stack_id != stack_id ||
			      s->sites[t->slot[i] - 1].api != api))
		i = (i + 1) & (t->cap - 1);
	return i;
}

/* Room for one more stack. 0 or -ENOMEM. */
static int grow(struct reach_sum *s, struct by_stack *t)
{
	struct by_stack n = { .cap = t->cap ? t->cap * 2 : 64, .cap_sites = t->cap_sites };

	if (vec__reserve(&s->sites, &t->cap_sites, s->nr + 1, sizeof(*s->sites)))
		return -ENOMEM;
	if ((s->nr + 1) * 2 <= t->cap)
		return 0;
	n.slot = calloc(n.cap, sizeof(*n.slot));
	if (!n.slot)
		return -ENOMEM;
	n.cap_sites = t->cap_sites;
	for (size_t i = 0; i < s->nr; i++)
		n.slot[slot_of(s, &n, s->sites[i].stack_id, s->sites[i].api)] = (uint32_t)i + 1;
	free(t->slot);
	*t = n;
	return 0;
}

/* The figures of the stack of b, made when new. NULL without memory. */
static struct report_reach_figures *figures_of(struct reach_sum *s, struct by_stack *t,
					       const struct live_block *b)
{
	size_t i;

	if (grow(s, t))
		return NULL;
	i = slot_of(s, t, b->stack_id, b->api);
	if (!t->slot[i]) {
		s->sites[s->nr] = (struct reach_sum_site){ .stack_id = b->stack_id, .api = b->api };
		t->slot[i] = (uint32_t)++s->nr;
	}
	return &s->sites[t->slot[i] - 1].f;
}

int reach_sum__build(const struct live_block *blocks, const uint8_t *kinds, size_t nr,
		     struct reach_sum **out)
{
	struct reach_sum *s = calloc(1, sizeof(*s));
	struct by_stack t = { 0 };
	int err = s ? 0 : -ENOMEM;

	*out = NULL;
	for (size_t i = 0; i < nr && !err; i++) {
		struct report_reach_figures *f;

		if (kinds[i] >= REACH__COUNT) {
			s->head.mmap_bytes += blocks[i].size;
			s->head.mmap_blocks++;
			continue;
		}
		add(&s->head.total, kinds[i], blocks[i].size);
		f = figures_of(s, &t, &blocks[i]);
		if (!f)
			err = -ENOMEM;
		else
			add(f, kinds[i], blocks[i].size);
	}
	free(t.slot);
	if (err) {
		reach_sum__free(s);
		return err;
	}
	qsort(s->sites, s->nr, sizeof(*s->sites), site_cmp);
	*out = s;
	return 0;
}

static const struct reach_sum_site *find(const struct reach_sum *s, uint64_t stack_id,
					 uint32_t api)
{
	size_t lo = 0, hi = s->nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = report__cmp_site(s->sites[mid].stack_id, s->sites[mid].api, stack_id, api);

		if (!c)
			return &s->sites[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

void reach_sum__fill(const struct reach_sum *s, const struct aggregate *agg, struct report *r)
{
	if (!s)
		return;
	r->reach = &s->head;
	for (size_t i = 0; i < r->nr_stacks && i < agg->nr; i++) {
		const struct reach_sum_site *t = find(s, agg->sites[i]->stack_id, agg->sites[i]->api);

		r->stacks[i].reach = t ? &t->f : NULL;
	}
}

void reach_sum__free(struct reach_sum *s)
{
	if (!s)
		return;
	free(s->sites);
	free(s);
}
