// SPDX-License-Identifier: GPL-2.0
/* A reachability scan's figures by stack (reach_sum.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "reach.h"
#include "reach_sum.h"

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

/* One entry per block, sorted, then those of one stack merged. */
static void merge(struct reach_sum *s)
{
	size_t n = 0;

	qsort(s->sites, s->nr, sizeof(*s->sites), site_cmp);
	for (size_t i = 0; i < s->nr; i++) {
		struct reach_sum_site *t = &s->sites[i];

		if (n && !site_cmp(&s->sites[n - 1], t)) {
			for (int k = 0; k < REPORT_REACH_KINDS; k++) {
				s->sites[n - 1].f.bytes[k] += t->f.bytes[k];
				s->sites[n - 1].f.blocks[k] += t->f.blocks[k];
			}
			continue;
		}
		s->sites[n++] = *t;
	}
	s->nr = n;
}

int reach_sum__build(const struct live_block *blocks, const uint8_t *kinds, size_t nr,
		     struct reach_sum **out)
{
	struct reach_sum *s = calloc(1, sizeof(*s));

	*out = NULL;
	if (!s || !(s->sites = calloc(nr ?: 1, sizeof(*s->sites)))) {
		free(s);
		return -ENOMEM;
	}
	for (size_t i = 0; i < nr; i++) {
		if (kinds[i] >= REACH__COUNT) {
			s->head.mmap_bytes += blocks[i].size;
			s->head.mmap_blocks++;
			continue;
		}
		add(&s->head.total, kinds[i], blocks[i].size);
		s->sites[s->nr].stack_id = blocks[i].stack_id;
		s->sites[s->nr].api = blocks[i].api;
		add(&s->sites[s->nr++].f, kinds[i], blocks[i].size);
	}
	merge(s);
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
