// SPDX-License-Identifier: GPL-2.0
/*
 * The --html page's flame graphs: one tree from the root, built once for
 * outstanding and allocated bytes together (the latter with the stacks
 * that hold nothing any more, r->freed), then written twice, each pruned.
 *
 * A frame merges with its siblings as in the SVG (report_svg.c): by
 * function and module, a Python frame by its line, an unnamed one by its
 * address. Children are found through one hash table keyed by (parent,
 * the frame's hash), so 200,000 stacks cost one lookup a frame.
 *
 * Pruning, as flamegraph.pl's --minwidth: a node under MIN_SHARE of the
 * root is not written; the narrow children of a node become one
 * "[N narrow frames]" node when together they are wide enough. At most
 * MAX_NODES nodes a tree: the cut rises until they fit, which keeps the
 * page a few MB whatever the report.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "html_flame.h"
#include "util/hash.h"
#include "util/vec.h"

#define MIN_SHARE (1.0 / 6000)	/* of the root: 0.2 px of a 1,200 px graph */
#define MAX_NODES 25000

struct node {
	uint32_t parent, first, next;	/* 0: none (node 0 is the root) */
	uint32_t depth;
	const struct report_frame *fr;	/* the first frame merged in; NULL: synthetic */
	const char *name;		/* a synthetic node's: API, marker */
	uint64_t key;
	uint64_t w[2], allocs[2];	/* outstanding, allocated */
};

struct tree {
	struct node *n;
	size_t nr, cap;
	uint32_t *slot;		/* node index; 0: empty (the root is never looked up) */
	size_t slots;		/* a power of two */
};

static uint64_t frame_key(const struct report_frame *fr)
{
	uint64_t h = hash__str(hash__str(0x9e3779b97f4a7c15ULL, fr->function), fr->module);

	if (fr->language == FRAME_PYTHON)
		h = hash__mix(hash__str(h, fr->file) ^ (uint32_t)fr->line);
	if (!fr->function)
		h = hash__mix(h ^ (fr->module ? fr->module_offset : fr->address));
	return h;
}

static uint64_t slot_of(uint32_t parent, uint64_t key)
{
	return hash__mix(key ^ (uint64_t)parent * 0x9e3779b97f4a7c15ULL);
}

static int rehash(struct tree *t)
{
	size_t cap = t->slots ? t->slots * 2 : 4096;
	uint32_t *slot = calloc(cap, sizeof(*slot));

	if (!slot)
		return -ENOMEM;
	for (uint32_t i = 1; i < t->nr; i++) {
		size_t j = slot_of(t->n[i].parent, t->n[i].key) & (cap - 1);

		while (slot[j])
			j = (j + 1) & (cap - 1);
		slot[j] = i;
	}
	free(t->slot);
	t->slot = slot;
	t->slots = cap;
	return 0;
}

/* parent's child of that key, made when new; 0 on ENOMEM. */
static uint32_t child(struct tree *t, uint32_t parent, uint64_t key,
		      const struct report_frame *fr, const char *name)
{
	size_t j;

	if ((t->nr + 1) * 2 > t->slots && rehash(t))
		return 0;
	for (j = slot_of(parent, key) & (t->slots - 1); t->slot[j]; j = (j + 1) & (t->slots - 1)) {
		const struct node *c = &t->n[t->slot[j]];

		if (c->parent == parent && c->key == key)
			return t->slot[j];
	}
	if (vec__reserve(&t->n, &t->cap, t->nr + 1, sizeof(*t->n)))
		return 0;
	t->n[t->nr] = (struct node){ .parent = parent, .next = t->n[parent].first,
				     .depth = t->n[parent].depth + 1, .fr = fr, .name = name,
				     .key = key };
	t->n[parent].first = (uint32_t)t->nr;
	t->slot[j] = (uint32_t)t->nr;
	return (uint32_t)t->nr++;
}

static void add_weight(struct node *n, const struct report_stack *s)
{
	n->w[0] += s->bytes;
	n->allocs[0] += s->allocs;
	n->w[1] += s->total_bytes;
	n->allocs[1] += s->total_allocs;
}

static int add_stack(struct tree *t, const struct report_stack *s)
{
	uint32_t at = 0;
	const char *marker = report__marker(s);

	add_weight(&t->n[0], s);
	if (marker && !(at = child(t, at, hash__str(1, marker), NULL, marker)))
		return -ENOMEM;
	if (marker)
		add_weight(&t->n[at], s);
	for (size_t i = s->nr_frames; i-- > 0;) {
		if (!(at = child(t, at, frame_key(&s->frames[i]), &s->frames[i], NULL)))
			return -ENOMEM;
		add_weight(&t->n[at], s);
	}
	at = child(t, at, hash__str(2, report__api_name(s->api)), NULL, report__api_name(s->api));
	if (!at)
		return -ENOMEM;
	add_weight(&t->n[at], s);
	return 0;
}

static int build(const struct report *r, struct tree *t)
{
	const struct report *parts[] = { r, r->freed };

	if (vec__reserve(&t->n, &t->cap, 1, sizeof(*t->n)))
		return -ENOMEM;
	t->n[0] = (struct node){ .name = "all" };
	t->nr = 1;
	for (size_t k = 0; k < 2 && parts[k]; k++)
		for (size_t i = 0; i < parts[k]->nr_stacks; i++)
			if (add_stack(t, &parts[k]->stacks[i]))
				return -ENOMEM;
	return 0;
}

/* ------------------------------------------------------------- writing */

static int cmp_desc(const void *a, const void *b)
{
	return report__cmp_u64(*(const uint64_t *)b, *(const uint64_t *)a);
}

/* The least weight written: MIN_SHARE of the root, raised until MAX_NODES fit. */
static uint64_t cut_of(const struct tree *t, int k)
{
	uint64_t cut = (uint64_t)((double)t->n[0].w[k] * MIN_SHARE) + 1, *v;
	size_t nr = 0;

	for (size_t i = 0; i < t->nr; i++)
		nr += t->n[i].w[k] >= cut;
	if (nr <= MAX_NODES || !(v = malloc(nr * sizeof(*v))))
		return cut;
	nr = 0;
	for (size_t i = 0; i < t->nr; i++)
		if (t->n[i].w[k] >= cut)
			v[nr++] = t->n[i].w[k];
	qsort(v, nr, sizeof(*v), cmp_desc);
	/* Strictly above the MAX_NODES-th: ties are all in or all out, parents before children. */
	cut = v[MAX_NODES - 1] + 1;
	free(v);
	return cut;
}

struct writer {
	const struct tree *t;
	struct html_pool *p;
	int k;			/* 0: outstanding, 1: allocated */
	uint64_t cut;
	size_t written;
	FILE *f;
};

static void put_node(struct writer *w, uint32_t depth, long frame, long name, uint64_t bytes,
		     uint64_t allocs)
{
	fprintf(w->f, "%s%u,%ld,%ld,%llu,%llu", w->written ? (w->written % 8 ? "," : ",\n") : "",
		depth, frame, name, (unsigned long long)bytes, (unsigned long long)allocs);
	w->written++;
}

static int by_weight(const void *a, const void *b, void *arg)
{
	const struct writer *w = arg;
	const struct node *x = &w->t->n[*(const uint32_t *)a];
	const struct node *y = &w->t->n[*(const uint32_t *)b];

	return report__cmp_u64(y->w[w->k], x->w[w->k]);
}

static int put_tree(struct writer *w, uint32_t i)
{
	const struct node *n = &w->t->n[i];
	uint32_t *kids = NULL;
	size_t nr = 0, cap = 0, narrow = 0;
	uint64_t nb = 0, na = 0;
	char name[48];
	int err = 0;

	put_node(w, n->depth, n->fr ? html_pool__frame(w->p, n->fr) : -1,
		 n->fr ? -1 : html_pool__string(w->p, n->name), n->w[w->k], n->allocs[w->k]);
	for (uint32_t c = n->first; c; c = w->t->n[c].next) {
		if (w->t->n[c].w[w->k] >= w->cut) {
			if (vec__reserve(&kids, &cap, nr + 1, sizeof(*kids))) {
				free(kids);
				return -ENOMEM;
			}
			kids[nr++] = c;
		} else if (w->t->n[c].w[w->k]) {
			narrow++;
			nb += w->t->n[c].w[w->k];
			na += w->t->n[c].allocs[w->k];
		}
	}
	qsort_r(kids, nr, sizeof(*kids), by_weight, w);
	for (size_t j = 0; j < nr && !err; j++)
		err = put_tree(w, kids[j]);
	if (narrow && nb >= w->cut) {
		snprintf(name, sizeof(name), "[%zu narrow frames]", narrow);
		put_node(w, n->depth + 1, -1, html_pool__string(w->p, name), nb, na);
	}
	free(kids);
	return err;
}

int html_flame__write(const struct report *r, struct html_pool *p, FILE *f)
{
	static const char *const keys[] = { "outstanding", "allocated" };
	struct tree t = { 0 };
	int err = build(r, &t);

	fputs("\"flame\": {", f);
	for (int k = 0; k < 2 && !err; k++) {
		struct writer w = { .t = &t, .p = p, .k = k, .cut = cut_of(&t, k), .f = f };

		fprintf(f, "%s\"%s\": [", k ? ",\n" : "", keys[k]);
		if (t.n[0].w[k])
			err = put_tree(&w, 0);
		fprintf(f, "],\n\"%s_nodes\": %zu, \"%s_cut\": %llu", keys[k], t.nr, keys[k],
			(unsigned long long)w.cut);
	}
	fputs("}", f);
	free(t.n);
	free(t.slot);
	return err;
}
