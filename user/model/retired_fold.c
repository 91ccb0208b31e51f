// SPDX-License-Identifier: GPL-2.0
/*
 * Folding (retired.h): the sites a report took in and no report will list
 * by themselves go to the forgotten figures, and the stacks and pairs no
 * one names any more go with them.
 */
#include <errno.h>
#include <stdlib.h>
#include "retired_internal.h"
#include "util/vec.h"

bool retired__fold_site(struct retired *r, uint64_t stack_id, uint32_t api, uint64_t bytes,
			uint64_t allocs)
{
	struct retired_site *s;
	uint32_t i;

	if (!idmap__get(&r->site_of, retired__site_key(stack_id, api), &i))
		return false;
	s = &r->sites[i];
	if (s->stack_id != stack_id || s->api != api || s->total_bytes != bytes ||
	    s->total_allocs != allocs)
		return false;
	s->folding = true;
	return true;
}

/*
 * A folding site's figures, kept by its key until it comes back (room made
 * by the caller). One probe of the map to look and to insert: most sites
 * fold once (up to 57,000 at a time in a torch job's import). 0 or -ENOMEM.
 */
static int keep_folded(struct retired *r, const struct retired_site *s)
{
	uint64_t key = retired__site_key(s->stack_id, s->api);
	uint32_t i = (uint32_t)r->nr_folded;
	int put = idmap__put_new(&r->folded_of, key, i);

	if (put < 0)
		return -ENOMEM;
	if (put)
		r->nr_folded++;
	else
		(void)idmap__get(&r->folded_of, key, &i);
	r->folded[i] = (struct folded){ .bytes = s->total_bytes, .allocs = s->total_allocs };
	r->nr_out++;
	return 0;
}

/* Room for the figures of nr more folded sites: the map grown once, not doubling as they come. */
static int reserve_folded(struct retired *r, size_t nr)
{
	return vec__reserve(&r->folded, &r->cap_folded, r->nr_folded + nr, sizeof(*r->folded)) ?:
	       idmap__reserve(&r->folded_of, r->folded_of.nr + nr);
}

/* The folded sites go to the forgotten figures; the others keep their order. */
static int drop_folded(struct retired *r)
{
	size_t n = 0, i;
	bool room;

	for (i = 0; i < r->nr_sites && !r->sites[i].folding; i++)
		;
	if (i == r->nr_sites)
		return 0;	/* none: the sites stay where they are */
	r->epoch++;
	for (; i < r->nr_sites; i++)
		n += r->sites[i].folding;
	/* Without the room, none is kept: each site stays (as keep_folded fails). */
	room = !reserve_folded(r, n);
	n = 0;
	for (size_t i = 0; i < r->nr_sites; i++) {
		struct retired_site *s = &r->sites[i];

		if (s->folding && room && !keep_folded(r, s)) {
			r->forgotten_allocs += s->total_allocs;
			r->forgotten_bytes += s->total_bytes;
			r->forgotten_sites++;
			continue;
		}
		s->folding = false;	/* no room for its figures: it stays */
		r->sites[n++] = *s;
	}
	r->nr_sites = n;
	vec__fit(&r->sites, &r->cap_sites, n, sizeof(*r->sites));
	/* Made anew, to the size of what stays (once, not grown from empty). */
	(void)idmap__reset(&r->site_of, n);
	for (size_t i = 0; i < n; i++)
		if (idmap__put(&r->site_of, retired__site_key(r->sites[i].stack_id, r->sites[i].api),
			       (uint32_t)i))
			return -ENOMEM;
	return 0;
}

/* The stacks the sites kept here name, directly or through a pair: they stay. */
static void name_sites(const struct retired *r, struct idmap *unnamed)
{
	struct stack_pair pair;

	for (size_t i = 0; i < r->nr_sites; i++) {
		uint64_t id = r->sites[i].stack_id;

		(void)idmap__del(unnamed, id);
		if (!retired__pair(r, id, &pair))
			continue;
		(void)idmap__del(unnamed, pair.native);
		(void)idmap__del(unnamed, pair.python);
	}
}

/* The stacks of the pairs that serve serve too (sv names what name_sites named). */
static void name_pairs(const struct retired *r, const struct serving *sv, struct idmap *unnamed)
{
	for (size_t i = 0; i < r->nr_pairs; i++) {
		const struct stack_pair *pair = &r->pairs[i];

		if (!retired_serves(sv, r->pair_tags[i].id, r->pair_tags[i].sweep))
			continue;
		(void)idmap__del(unnamed, pair->native);
		(void)idmap__del(unnamed, pair->python);
	}
}

/*
 * The kept stacks' maps made anew, to fit them (their indexes moved): each
 * room made once, not grown a dozen times from empty. 0 or -ENOMEM.
 */
static int index_kept(struct retired *r)
{
	size_t pythons = 0;

	for (size_t i = 0; i < r->nr_kept; i++)
		pythons += r->kept[i].python;
	/* A failure keeps the room, cleared: the puts grow it or fail. */
	(void)idmap__reset(&r->native_of, r->nr_kept - pythons);
	(void)idmap__reset(&r->python_of, pythons);
	for (size_t i = 0; i < r->nr_kept; i++)
		if (idmap__put(r->kept[i].python ? &r->python_of : &r->native_of, r->kept[i].id,
			       (uint32_t)i))
			return -ENOMEM;
	return 0;
}

/* How far ahead drop_stacks fetches an old stack's blob (twice this), then its nodes. */
#define DROP_AHEAD 8

/*
 * The stacks that no longer serve are let go of; the maps made anew to fit.
 * A put that frees a blob reads it, then its innermost nodes, then their
 * slots in the frames' index, one miss after another: the first two are
 * fetched a few old stacks ahead.
 */
static int drop_stacks(struct retired *r, const struct serving *sv)
{
	size_t n = 0, bytes = 0;

	for (size_t i = 0; i < r->nr_kept; i++) {
		struct kept *k = &r->kept[i];

		if (i + 2 * DROP_AHEAD < r->nr_kept && r->kept[i + 2 * DROP_AHEAD].sweep < sv->since)
			__builtin_prefetch(r->kept[i + 2 * DROP_AHEAD].blob, 1);
		if (i + DROP_AHEAD < r->nr_kept && r->kept[i + DROP_AHEAD].sweep < sv->since)
			stack_blob__prefetch(r->kept[i + DROP_AHEAD].blob);

		if (!retired_serves(sv, k->id, k->sweep)) {
			retired_let_go(k);
			continue;
		}
		r->kept[n] = *k;
		bytes += retired_size_of(&r->kept[n++]);
	}
	r->nr_kept = n;
	r->kept_bytes = bytes;
	vec__fit(&r->kept, &r->cap_kept, n, sizeof(*r->kept));
	return index_kept(r);
}

/*
 * How many stacks and pairs could go: those let go of before since. Most
 * folds of a torch job's loop find none, and naming every site's stacks
 * and making the maps anew cost them 10 to 40 ms.
 */
static size_t nr_old(const struct retired *r, uint32_t since)
{
	size_t n = 0;

	for (size_t i = 0; i < r->nr_kept; i++)
		n += r->kept[i].sweep < since;
	for (size_t i = 0; i < r->nr_pairs; i++)
		n += r->pair_tags[i].sweep < since;
	return n;
}

/* What goes, as going's values (bits: an id both a stack's and a pair's is both). */
#define GOES_NATIVE 1u
#define GOES_PYTHON 2u
#define GOES_PAIR 4u

/* One probe for an id met once (most are); an id of two kinds is looked up again. */
static int goes(struct idmap *going, uint64_t id, uint32_t kind)
{
	uint32_t was = 0;
	int put = idmap__put_new(going, id, kind);

	if (put)
		return put < 0 ? -ENOMEM : 0;
	(void)idmap__get(going, id, &was);
	return idmap__put(going, id, was | kind);
}

/* Every stack and pair let go of before since, by kind: those no one names are taken out after. */
static int old_of(const struct retired *r, uint32_t since, struct idmap *going)
{
	for (size_t i = 0; i < r->nr_kept; i++) {
		const struct kept *k = &r->kept[i];

		if (k->sweep < since && goes(going, k->id, k->python ? GOES_PYTHON : GOES_NATIVE))
			return -ENOMEM;
	}
	for (size_t i = 0; i < r->nr_pairs; i++)
		if (r->pair_tags[i].sweep < since && goes(going, r->pair_tags[i].id, GOES_PAIR))
			return -ENOMEM;
	return 0;
}

/* Those of going the reading does not hold go; a kind's maps made anew only if one of it goes. */
static int drop_going(struct retired *r, const struct serving *sv, const struct idmap *going)
{
	uint32_t kinds = 0, kind;
	uint64_t id;

	for (size_t pos = 0; idmap__next(going, &pos, &id, &kind);)
		if (!idmap__get(sv->keep, id, NULL))
			kinds |= kind;
	if ((kinds & (GOES_NATIVE | GOES_PYTHON)) && drop_stacks(r, sv))
		return -ENOMEM;
	/* A pair goes only with neither of its stacks kept: made anew when one might. */
	return kinds ? retired__drop_pairs(r, sv) : 0;
}

int retired__fold_end(struct retired *r, retired_held_fn *held, void *ctx)
{
	struct idmap going = {}, stay = {};
	struct serving sv = { &going, &stay, r->named_sweep };
	int err = drop_folded(r);
	size_t old;

	/* Without held, every stack stays. */
	if (err || !held || !(old = nr_old(r, sv.since)))
		return err;
	/*
	 * Every old stack and pair, less those the sites kept here and the
	 * pairs that serve name: what serves no more (but for the reading's).
	 * Not a map of every id named (room for the sites and twice the
	 * pairs: up to 220,000 ids at a fold of a torch job's import, each
	 * put into a map made anew and faulted in), but of the old ones, the
	 * named taken out. Its room made once, at most three eighths full:
	 * held looks up every id of the reading's 200,000 sites in it, most
	 * absent (1.8 slots read on average for one, 8.5 at three quarters).
	 */
	err = idmap__reserve(&going, 2 * old) ?: old_of(r, sv.since, &going);
	if (!err) {
		name_sites(r, &going);
		name_pairs(r, &sv, &going);
	}
	if (!err && going.nr)
		err = held(ctx, &going, &stay) ?: drop_going(r, &sv, &going);
	idmap__free(&going);
	idmap__free(&stay);
	return err;
}

void retired__fold_cancel(struct retired *r)
{
	for (size_t i = 0; i < r->nr_sites; i++)
		r->sites[i].folding = false;
}

int retired__unfold(struct retired *r, uint64_t stack_id, uint32_t api)
{
	uint64_t key = retired__site_key(stack_id, api);
	uint32_t i;

	if (!idmap__get(&r->folded_of, key, &i) || r->folded[i].allocs == FOLDED_BACK ||
	    idmap__get(&r->site_of, key, NULL))
		return 0;
	/* A new entry takes its figures back (take_back), and nothing more: none is freed since. */
	return retired__add_site(r, stack_id, api, 0, 0);
}

size_t retired__nr_folded(const struct retired *r)
{
	return r->nr_out;
}
