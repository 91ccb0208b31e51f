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

/* A folding site's figures, kept by its key until it comes back. 0 or -ENOMEM. */
static int keep_folded(struct retired *r, const struct retired_site *s)
{
	uint64_t key = retired__site_key(s->stack_id, s->api);
	uint32_t i;

	if (!idmap__get(&r->folded_of, key, &i)) {
		if (vec__reserve(&r->folded, &r->cap_folded, r->nr_folded + 1, sizeof(*r->folded)) ||
		    idmap__put(&r->folded_of, key, (uint32_t)r->nr_folded))
			return -ENOMEM;
		i = (uint32_t)r->nr_folded++;
	}
	r->folded[i] = (struct folded){ .bytes = s->total_bytes, .allocs = s->total_allocs };
	r->nr_out++;
	return 0;
}

/* The folded sites go to the forgotten figures; the others keep their order. */
static int drop_folded(struct retired *r)
{
	size_t n = 0, i;

	for (i = 0; i < r->nr_sites && !r->sites[i].folding; i++)
		;
	if (i == r->nr_sites)
		return 0;	/* none: the sites stay where they are */
	r->epoch++;
	for (size_t i = 0; i < r->nr_sites; i++) {
		struct retired_site *s = &r->sites[i];

		if (s->folding && !keep_folded(r, s)) {
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

/* The stacks the sites kept here name, directly or through a pair. */
static int name_sites(const struct retired *r, struct idmap *named)
{
	struct stack_pair pair;

	for (size_t i = 0; i < r->nr_sites; i++) {
		uint64_t id = r->sites[i].stack_id;

		if (id && idmap__put(named, id, 0))
			return -ENOMEM;
		if (!retired__pair(r, id, &pair))
			continue;
		if ((pair.native && idmap__put(named, pair.native, 0)) ||
		    (pair.python && idmap__put(named, pair.python, 0)))
			return -ENOMEM;
	}
	return 0;
}

/* The stacks of the pairs that serve serve too: named. */
static int name_pairs(const struct retired *r, const struct serving *sv, struct idmap *named)
{
	for (size_t i = 0; i < r->nr_pairs; i++) {
		const struct stack_pair *pair = &r->pairs[i];

		if (!retired_serves(sv, r->pair_tags[i].id, r->pair_tags[i].sweep))
			continue;
		if ((pair->native && idmap__put(named, pair->native, 0)) ||
		    (pair->python && idmap__put(named, pair->python, 0)))
			return -ENOMEM;
	}
	return 0;
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

/* The stacks that no longer serve are let go of; the maps made anew to fit. */
static int drop_stacks(struct retired *r, const struct serving *sv)
{
	size_t n = 0, bytes = 0;

	for (size_t i = 0; i < r->nr_kept; i++) {
		struct kept *k = &r->kept[i];

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

static int goes(struct idmap *going, uint64_t id, uint32_t kind)
{
	uint32_t was = 0;

	(void)idmap__get(going, id, &was);
	return idmap__put(going, id, was | kind);
}

/* The stacks and pairs that serve no more, but for the reading's: the caller is asked of these only. */
static int going_of(const struct retired *r, const struct serving *sv, struct idmap *going)
{
	for (size_t i = 0; i < r->nr_kept; i++) {
		const struct kept *k = &r->kept[i];

		if (!retired_serves(sv, k->id, k->sweep) &&
		    goes(going, k->id, k->python ? GOES_PYTHON : GOES_NATIVE))
			return -ENOMEM;
	}
	for (size_t i = 0; i < r->nr_pairs; i++)
		if (!retired_serves(sv, r->pair_tags[i].id, r->pair_tags[i].sweep) &&
		    goes(going, r->pair_tags[i].id, GOES_PAIR))
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
	struct idmap named = {}, going = {}, stay = {};
	struct serving sv = { &named, &stay, r->named_sweep };
	int err = drop_folded(r);
	size_t old;

	/* Without held, every stack stays. */
	if (err || !held || !(old = nr_old(r, sv.since)))
		return err;
	/*
	 * Their rooms made once; going's at most three eighths full: held
	 * looks up every id of the reading's 200,000 sites in it, most absent
	 * (1.8 slots read on average for one, 8.5 at three quarters).
	 */
	err = idmap__reserve(&named, r->nr_sites + 2 * r->nr_pairs) ?:
	      idmap__reserve(&going, 2 * old) ?: name_sites(r, &named) ?:
	      name_pairs(r, &sv, &named) ?: going_of(r, &sv, &going);
	if (!err && going.nr)
		err = held(ctx, &going, &stay) ?: drop_going(r, &sv, &going);
	idmap__free(&named);
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
