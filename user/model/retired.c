// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "retired_internal.h"
#include "stackcache.h"
#include "util/idmap.h"
#include "util/vec.h"

uint64_t retired__site_key(uint64_t stack_id, uint32_t api)
{
	uint64_t h = (stack_id ^ ((uint64_t)api << 56 | api)) * 0x9e3779b97f4a7c15ULL;

	return h ^ h >> 29 ?: 1;
}

struct retired *retired__new(void)
{
	return calloc(1, sizeof(struct retired));
}

void retired__free(struct retired *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->nr_kept; i++)
		retired_let_go(&r->kept[i]);
	free(r->kept);
	free(r->sites);
	free(r->pairs);
	free(r->pair_tags);
	idmap__free(&r->site_of);
	idmap__free(&r->native_of);
	idmap__free(&r->python_of);
	idmap__free(&r->pair_of);
	idmap__free(&r->folded_of);
	free(r->folded);
	free(r);
}

/* A site folded before, kept here anew: its folded figures are its own again. */
static void take_back(struct retired *r, struct retired_site *s, uint64_t key)
{
	struct folded *f;
	uint32_t i;

	if (!idmap__get(&r->folded_of, key, &i) || r->folded[i].allocs == FOLDED_BACK)
		return;
	f = &r->folded[i];
	r->nr_out--;
	r->forgotten_allocs -= f->allocs;
	r->forgotten_bytes -= f->bytes;
	r->forgotten_sites--;
	s->total_bytes = s->folded_bytes = f->bytes;
	s->total_allocs = s->folded_allocs = f->allocs;
	f->allocs = FOLDED_BACK;
}

int retired__add_site(struct retired *r, uint64_t stack_id, uint32_t api, uint64_t bytes,
		      uint64_t allocs)
{
	uint64_t key = retired__site_key(stack_id, api);
	struct retired_site *s;
	uint32_t i;

	if (!idmap__get(&r->site_of, key, &i)) {
		if (vec__reserve(&r->sites, &r->cap_sites, r->nr_sites + 1, sizeof(*s)) ||
		    idmap__put(&r->site_of, key, (uint32_t)r->nr_sites))
			return -ENOMEM;
		i = (uint32_t)r->nr_sites++;
		r->sites[i] = (struct retired_site){ .stack_id = stack_id, .api = api };
		take_back(r, &r->sites[i], key);
	}
	s = &r->sites[i];
	s->total_bytes += bytes;
	s->total_allocs += allocs;
	s->seq = ++r->seq;
	return 0;
}

const struct retired_site *retired__site(const struct retired *r, uint64_t stack_id, uint32_t api)
{
	uint32_t i;

	return idmap__get(&r->site_of, retired__site_key(stack_id, api), &i) ? &r->sites[i] : NULL;
}

size_t retired__nr_sites(const struct retired *r)
{
	return r->nr_sites;
}

const struct retired_site *retired__site_at(const struct retired *r, size_t i)
{
	return i < r->nr_sites ? &r->sites[i] : NULL;
}

uint64_t retired__seq(const struct retired *r)
{
	return r->seq;
}

uint64_t retired__epoch(const struct retired *r)
{
	return r->epoch;
}

/*
 * A stack let go of again (a thread's stack cache handed its id out again)
 * is still in use: kept already, it is the latest let go of.
 */
static bool kept_again(struct retired *r, struct idmap *map, uint64_t id)
{
	uint32_t i;

	if (!idmap__get(map, id, &i))
		return false;
	r->kept[i].sweep = r->sweep;
	return true;
}

/* Keep blob (held: shared, or made for it) under id in map, new there. */
static int keep(struct retired *r, struct idmap *map, uint64_t id, struct stack_blob *blob)
{
	struct kept *k;

	if (vec__reserve(&r->kept, &r->cap_kept, r->nr_kept + 1, sizeof(*r->kept)) ||
	    idmap__put(map, id, (uint32_t)r->nr_kept))
		goto nomem;
	k = &r->kept[r->nr_kept++];
	*k = (struct kept){ .id = id, .sweep = r->sweep, .python = map == &r->python_of,
			    .blob = blob };
	r->kept_bytes += retired_size_of(k);
	return 0;
nomem:
	stack_blob__put(blob);
	return -ENOMEM;
}

/* The stack c under id in map: shared's blob, or a copy of c; nothing if kept already. */
static int keep_stack(struct retired *r, struct idmap *map, uint64_t id,
		      const struct stack_copy *c, struct stack_blob *shared)
{
	struct stack_blob *b;

	if (kept_again(r, map, id))
		return 0;
	b = shared ? stack_blob__hold(shared) : stack_blob__new(id, c);
	return b ? keep(r, map, id, b) : -ENOMEM;
}

int retired__keep_native(struct retired *r, uint64_t id, const struct stack_trace *st,
			 struct stack_blob *shared)
{
	struct stack_copy c = { .ips = (uint64_t *)st->ips, .flags = st->flags,
				.nr_ips = st->nr < MEMLEAK_MAX_STACK_DEPTH ? st->nr
									  : MEMLEAK_MAX_STACK_DEPTH };

	return keep_stack(r, &r->native_of, id, &c, shared);
}

int retired__keep_native_blob(struct retired *r, uint64_t id, struct stack_blob *b)
{
	return keep_stack(r, &r->native_of, id, NULL, b);
}

int retired__keep_python(struct retired *r, uint64_t id, const struct py_stack *st,
			 struct stack_blob *shared)
{
	return keep_stack(r, &r->python_of, id, &(struct stack_copy){ .py = (struct py_stack *)st },
			  shared);
}

int retired__keep_pair(struct retired *r, uint64_t id, const struct stack_pair *pair)
{
	uint32_t i;

	if (idmap__get(&r->pair_of, id, &i)) {
		r->pair_tags[i].sweep = r->sweep;	/* let go of again: the latest (kept_again) */
		return 0;
	}
	if (vec__reserve(&r->pairs, &r->cap_pairs, r->nr_pairs + 1, sizeof(*r->pairs)) ||
	    vec__reserve(&r->pair_tags, &r->cap_pair_tags, r->nr_pairs + 1, sizeof(*r->pair_tags)) ||
	    idmap__put(&r->pair_of, id, (uint32_t)r->nr_pairs))
		return -ENOMEM;
	r->pair_tags[r->nr_pairs] = (struct pair_tag){ id, r->sweep };
	r->pairs[r->nr_pairs++] = *pair;
	return 0;
}

struct stack_blob *retired__native(const struct retired *r, uint64_t id)
{
	uint32_t i;

	return idmap__get(&r->native_of, id, &i) ? r->kept[i].blob : NULL;
}

bool retired__pair(const struct retired *r, uint64_t id, struct stack_pair *out)
{
	uint32_t i;

	if (!idmap__get(&r->pair_of, id, &i))
		return false;
	*out = r->pairs[i];
	return true;
}

struct stack_blob *retired__python(const struct retired *r, uint64_t id)
{
	uint32_t i;

	return idmap__get(&r->python_of, id, &i) ? r->kept[i].blob : NULL;
}

size_t retired__nr_stacks(const struct retired *r)
{
	return r->nr_kept;
}

size_t retired__frame_bytes(const struct retired *r)
{
	return r->kept_bytes;
}

size_t retired__bytes(const struct retired *r)
{
	return sizeof(*r) + r->nr_kept * sizeof(struct stack_blob) + r->cap_kept * sizeof(*r->kept) +
	       r->cap_folded * sizeof(*r->folded) + idmap__bytes(&r->folded_of) +
	       r->cap_sites * sizeof(*r->sites) + r->cap_pairs * sizeof(*r->pairs) +
	       idmap__bytes(&r->site_of) + idmap__bytes(&r->native_of) +
	       idmap__bytes(&r->python_of) + idmap__bytes(&r->pair_of);
}

void retired__next_sweep(struct retired *r)
{
	r->sweep++;
}

/* Is (a, b) before (x, y), by allocations then bytes, most first? */
static bool more(uint64_t a, uint64_t b, uint64_t x, uint64_t y)
{
	return a != x ? a > x : b > y;
}

bool retired__nth_most(const struct retired *r, size_t n, uint64_t *allocs, uint64_t *bytes)
{
	uint64_t top[RETIRED_NTH_MAX][2];
	size_t k = 0;

	if (!n || n > RETIRED_NTH_MAX || r->nr_sites < n)
		return false;
	/* An insertion each into the n best: n is a report's churn list, 20. */
	for (size_t i = 0; i < r->nr_sites; i++) {
		const struct retired_site *s = &r->sites[i];
		size_t at = k < n ? k++ : n;

		if (at == n && !more(s->total_allocs, s->total_bytes, top[n - 1][0], top[n - 1][1]))
			continue;
		if (at == n)
			at = n - 1;
		for (; at > 0 && more(s->total_allocs, s->total_bytes, top[at - 1][0], top[at - 1][1]);
		     at--) {
			top[at][0] = top[at - 1][0];
			top[at][1] = top[at - 1][1];
		}
		top[at][0] = s->total_allocs;
		top[at][1] = s->total_bytes;
	}
	*allocs = top[n - 1][0];
	*bytes = top[n - 1][1];
	return true;
}

/* A kept stack by id, the latest let go of, if kept. */
static void named_again(struct retired *r, uint64_t id)
{
	if (!kept_again(r, &r->native_of, id))
		(void)kept_again(r, &r->python_of, id);
}

void retired__named(struct retired *r, const struct idmap *named)
{
	for (size_t i = 0; i < r->nr_kept; i++)
		if (idmap__get(named, r->kept[i].id, NULL))
			r->kept[i].sweep = r->sweep;
	for (size_t i = 0; i < r->nr_pairs; i++) {
		if (!idmap__get(named, r->pair_tags[i].id, NULL))
			continue;
		r->pair_tags[i].sweep = r->sweep;
		named_again(r, r->pairs[i].native);
		named_again(r, r->pairs[i].python);
	}
	r->named_sweep = r->sweep;
}

/* The most allocations first, then the latest let go of. */
static int by_worth(const void *a, const void *b)
{
	const struct kept *x = a, *y = b;

	if (x->weight != y->weight)
		return x->weight < y->weight ? 1 : -1;
	return x->sweep < y->sweep ? 1 : x->sweep > y->sweep ? -1 : 0;
}

static void add_weight(struct retired *r, const struct idmap *map, uint64_t id, uint64_t allocs)
{
	uint32_t i;

	if (idmap__get(map, id, &i))
		r->kept[i].weight += allocs;
}

/*
 * What each kept stack is worth: the allocations of the retired sites that
 * name it, directly or through a pair. A torch import lets go of 450,000
 * stacks of one allocation each; its training loop of a few hundred whose
 * sites come and go thousands of times: those must stay named.
 */
static void weigh(struct retired *r)
{
	struct stack_pair pair;

	for (size_t i = 0; i < r->nr_kept; i++)
		r->kept[i].weight = 0;
	for (size_t i = 0; i < r->nr_sites; i++) {
		const struct retired_site *s = &r->sites[i];

		add_weight(r, &r->native_of, s->stack_id, s->total_allocs);
		if (retired__pair(r, s->stack_id, &pair)) {
			add_weight(r, &r->native_of, pair.native, s->total_allocs);
			add_weight(r, &r->python_of, pair.python, s->total_allocs);
		}
	}
}

/* Keep the stacks worth most, up to max_bytes of them; rebuild their maps. 0 or -ENOMEM. */
static int keep_latest(struct retired *r, size_t max_bytes)
{
	size_t n = 0, bytes = 0;

	weigh(r);
	qsort(r->kept, r->nr_kept, sizeof(*r->kept), by_worth);
	idmap__clear(&r->native_of);
	idmap__clear(&r->python_of);
	for (size_t i = 0; i < r->nr_kept; i++) {
		struct kept *k = &r->kept[i];
		size_t size = retired_size_of(k);

		if (bytes + size > max_bytes) {
			retired_let_go(k);
			continue;
		}
		bytes += size;
		r->kept[n] = *k;
		k = &r->kept[n];
		if (idmap__put(k->python ? &r->python_of : &r->native_of, k->id, (uint32_t)n++))
			return -ENOMEM;
	}
	r->nr_kept = n;
	r->kept_bytes = bytes;
	return 0;
}

/* Can the frames of stack_id still be read from here (a kept stack, or a pair of them)? */
static bool named(const struct retired *r, uint64_t stack_id)
{
	struct stack_pair pair;

	if (idmap__get(&r->native_of, stack_id, NULL))
		return true;
	return retired__pair(r, stack_id, &pair) && idmap__get(&r->native_of, pair.native, NULL) &&
	       idmap__get(&r->python_of, pair.python, NULL);
}

/* Sites whose frames are gone: their figures go to the forgotten ones. */
static int fold_sites(struct retired *r)
{
	size_t n = 0;

	r->epoch++;
	idmap__clear(&r->site_of);
	for (size_t i = 0; i < r->nr_sites; i++) {
		struct retired_site *s = &r->sites[i];

		if (!named(r, s->stack_id)) {
			r->forgotten_allocs += s->total_allocs;
			r->forgotten_bytes += s->total_bytes;
			r->forgotten_sites++;
			continue;
		}
		r->sites[n] = *s;
		if (idmap__put(&r->site_of, retired__site_key(s->stack_id, s->api), (uint32_t)n++))
			return -ENOMEM;
	}
	r->nr_sites = n;
	return 0;
}

/* (One with its native stack gone leaves its site without frames: counted where read.) */
int retired__drop_pairs(struct retired *r, const struct serving *sv)
{
	size_t n = 0, before = r->nr_pairs;

	for (size_t i = 0; i < r->nr_pairs; i++) {
		if (!retired_serves(sv, r->pair_tags[i].id, r->pair_tags[i].sweep) &&
		    !idmap__get(&r->native_of, r->pairs[i].native, NULL) &&
		    !idmap__get(&r->python_of, r->pairs[i].python, NULL))
			continue;
		r->pairs[n] = r->pairs[i];
		r->pair_tags[n++] = r->pair_tags[i];
	}
	r->nr_pairs = n;
	if (n < before) {
		vec__fit(&r->pairs, &r->cap_pairs, n, sizeof(*r->pairs));
		vec__fit(&r->pair_tags, &r->cap_pair_tags, n, sizeof(*r->pair_tags));
	}
	/* Made anew, to the size of what stays (once, not grown from empty). */
	(void)idmap__reset(&r->pair_of, n);
	for (size_t i = 0; i < n; i++)
		if (idmap__put(&r->pair_of, r->pair_tags[i].id, (uint32_t)i))
			return -ENOMEM;
	return 0;
}

int retired__trim(struct retired *r, size_t max_bytes)
{
	if (r->kept_bytes <= max_bytes)
		return 0;
	/* A quarter below the limit: trimming is a sort of everything kept. */
	return keep_latest(r, max_bytes / 4 * 3) ?: fold_sites(r) ?:
	       retired__drop_pairs(r, &(struct serving){ .since = r->named_sweep });
}

void retired__forgotten(const struct retired *r, uint64_t *sites, uint64_t *allocs,
			uint64_t *bytes)
{
	*sites = r->forgotten_sites;
	*allocs = r->forgotten_allocs;
	*bytes = r->forgotten_bytes;
}
