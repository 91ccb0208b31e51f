// SPDX-License-Identifier: GPL-2.0
/*
 * The --html page's flame graphs: one tree from the root, built once for
 * outstanding and allocated bytes together (the latter with the stacks
 * that hold nothing any more, r->freed), then written twice, each pruned.
 *
 * A frame merges with its siblings as in the SVG (report_svg.c): by
 * function and module, a Python frame by its line, an unnamed one by its
 * address, each item compared by a 64-bit hash of those (util/hash.h).
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
	uint32_t first, next;	/* children; 0: none (node 0 is the root) */
	uint32_t depth;
	const struct report_frame *fr;	/* the first frame merged in; NULL: synthetic */
	const char *name;		/* a synthetic node's: "all", API, marker */
	uint64_t w[2], allocs[2];	/* outstanding, allocated */
};

struct tree {
	struct node *n;
	size_t nr, cap;
};

/*
 * One stack, its items from the root ([marker], frames outermost first, the
 * API) as prefix hashes: h[k] stands for items 0..k, so two stacks share
 * their first k + 1 items when h[k] agree (util/hash.h's 64 bits).
 */
struct hashed {
	const struct report_stack *s;
	uint64_t *h;
	size_t n;
};

static size_t nr_items(const struct report_stack *s)
{
	return (report__marker(s) != NULL) + s->nr_frames + 1;
}

/* Equal for frames that merge: function and module; a Python frame's line; an unnamed one's address. */
static uint64_t frame_key(const struct report_frame *fr)
{
	uint64_t h = hash__str(hash__str(0x9e3779b97f4a7c15ULL, fr->function), fr->module);

	if (fr->language == FRAME_PYTHON)
		h = hash__mix(hash__str(h, fr->file) ^ (uint32_t)fr->line);
	if (!fr->function)
		h = hash__mix(h ^ (fr->module ? fr->module_offset : fr->address));
	return h;
}

static uint64_t then(uint64_t prefix, uint64_t item)
{
	return hash__mix(prefix * 0x9e3779b97f4a7c15ULL + item);
}

static void hash_items(struct hashed *x)
{
	const struct report_stack *s = x->s;
	uint64_t h = 0;
	size_t k = 0;

	if (report__marker(s))
		x->h[k++] = h = then(h, hash__str(1, report__marker(s)));
	for (size_t i = s->nr_frames; i-- > 0;)
		x->h[k++] = h = then(h, frame_key(report__frame(s, i)));
	x->h[k] = then(h, hash__str(2, report__api_name(s->api)));
}

/*
 * Any order in which stacks that share their first items are adjacent:
 * by the prefix hash where they part, found by bisection (a prefix that
 * differs stays different), not by walking the 40 items torch's stacks
 * share.
 */
static int cmp_hashed(const void *pa, const void *pb)
{
	const struct hashed *a = pa, *b = pb;
	size_t lo = 0, hi = a->n < b->n ? a->n : b->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (a->h[mid] == b->h[mid])
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < a->n && lo < b->n)
		return a->h[lo] < b->h[lo] ? -1 : 1;
	return report__cmp_u64(a->n, b->n);
}

/* Item i of s as a new node's identity: its frame, or a synthetic name. */
static void item_of(const struct report_stack *s, size_t i, struct node *n)
{
	size_t marker = report__marker(s) != NULL;

	if (i < marker)
		n->name = report__marker(s);
	else if (i - marker < s->nr_frames)
		n->fr = report__frame(s, s->nr_frames - 1 - (i - marker));
	else
		n->name = report__api_name(s->api);
}

static void add_weight(struct node *n, const struct report_stack *s)
{
	n->w[0] += s->bytes;
	n->allocs[0] += s->allocs;
	n->w[1] += s->total_bytes;
	n->allocs[1] += s->total_allocs;
}

/*
 * Stacks sorted by their items' hashes: each shares with the one before it
 * a prefix of nodes (path), and adds new nodes below it. No lookup: the
 * nodes are made in order, which keeps 200,000 stacks' millions of frames
 * to one pass.
 */
static int sweep(struct tree *t, const struct hashed *v, size_t nr)
{
	uint32_t *path = NULL;
	size_t depth = 0;

	for (size_t i = 0; i < nr; i++)
		depth = v[i].n > depth ? v[i].n : depth;
	path = calloc(depth + 1, sizeof(*path));
	if (!path)
		return -ENOMEM;
	for (size_t i = 0; i < nr; i++) {
		size_t same = 0;

		while (i && same < v[i].n && same < v[i - 1].n && v[i].h[same] == v[i - 1].h[same])
			same++;
		if (vec__reserve(&t->n, &t->cap, t->nr + v[i].n - same, sizeof(*t->n))) {
			free(path);
			return -ENOMEM;
		}
		for (size_t k = same; k < v[i].n; k++) {
			struct node *n = &t->n[t->nr], *parent = &t->n[path[k]];

			*n = (struct node){ .next = parent->first, .depth = (uint32_t)k + 1 };
			item_of(v[i].s, k, n);
			parent->first = (uint32_t)t->nr;
			path[k + 1] = (uint32_t)t->nr++;
		}
		add_weight(&t->n[0], v[i].s);
		for (size_t k = 1; k <= v[i].n; k++)
			add_weight(&t->n[path[k]], v[i].s);
	}
	free(path);
	return 0;
}

static int build(const struct report *r, struct tree *t)
{
	const struct report *parts[] = { r, r->freed };
	struct hashed *v;
	uint64_t *all;
	size_t nr = 0, items = 0, at = 0;
	int err;

	for (size_t k = 0; k < 2 && parts[k]; k++)
		for (size_t i = 0; i < parts[k]->nr_stacks; i++, nr++)
			items += nr_items(&parts[k]->stacks[i]);
	v = calloc(nr ?: 1, sizeof(*v));
	all = malloc((items ?: 1) * sizeof(*all));
	if (!v || !all || vec__reserve(&t->n, &t->cap, 1, sizeof(*t->n))) {
		free(v);
		free(all);
		return -ENOMEM;
	}
	t->n[0] = (struct node){ .name = "all" };
	t->nr = 1;
	nr = 0;
	for (size_t k = 0; k < 2 && parts[k]; k++)
		for (size_t i = 0; i < parts[k]->nr_stacks; i++) {
			const struct report_stack *s = &parts[k]->stacks[i];

			v[nr] = (struct hashed){ s, all + at, nr_items(s) };
			hash_items(&v[nr++]);
			at += nr_items(s);
		}
	qsort(v, nr, sizeof(*v), cmp_hashed);
	err = sweep(t, v, nr);
	free(v);
	free(all);
	return err;
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
	if (nr)		/* kids is NULL without any */
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
	return err;
}
