// SPDX-License-Identifier: GPL-2.0
/*
 * A reading of the BPF tables carried over from report to report (see
 * snapshot_kept.h). A torch job's report reads 400,000 slots and 700,000
 * sites, of which a few thousand change between two reports; each site
 * looked up by key, its stack looked up in the cache and its Python
 * frames walked again cost more than half a second a report.
 *
 * What stays from one reading to the next: the sites at their indexes
 * (sites never leave: a retired site's figures are its retired store
 * entry's), each slot's site (a slot keeps its site until it is retired
 * and taken by another), each retired entry's site (entries keep their
 * index until a trim or a fold moves them: its epoch), what the retired
 * store held of each site, and the sites that had a live slot. A site's
 * figures are those snapshot__collect adds up: its live slots', read
 * again at each reading, and its retired entry's. A reset of the tables
 * starts the reading anew. A fold or a trim of the retired store (its
 * epoch) moves its entries: the sites left with neither an entry nor a
 * live slot go, the others move down in their order, and snapshot.moved
 * tells what follows (snapshot_kept_compact.c). A torch job's import
 * folds at most reports, and starting anew each time tripled its
 * reports' CPU.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "clock.h"
#include "probes.h"
#include "probes_internal.h"
#include "snapshot_kept.h"
#include "snapshot_kept_internal.h"
#include "model/retired.h"
#include "model/stackcache.h"
#include "util/idmap.h"
#include "util/nice.h"
#include "util/vec.h"

static int list_add(struct list *l, uint32_t i)
{
	if (vec__reserve_min(&l->v, &l->cap, l->nr + 1, sizeof(*l->v), 256))
		return -ENOMEM;
	l->v[l->nr++] = i;
	return 0;
}

static void list_free(struct list *l)
{
	free(l->v);
	memset(l, 0, sizeof(*l));
}

/* Slot group g's first slot and its slots. */
static size_t group_span(const struct probes *p, size_t g, size_t *n)
{
	size_t first = g << p->tables.group_shift, end = (g + 1) << p->tables.group_shift;

	*n = (end < p->tables.slots ? end : p->tables.slots) - first;
	return first;
}

/* Slot i's group of slots and site_of_slot, set to none when it is first used. */
static void use_group(struct snapshot_kept *k, const struct probes *p, size_t i)
{
	size_t g = i >> p->tables.group_shift, n, first;
	uint64_t bit = 1ull << (g % 64);

	if (k->slot_groups[g / 64] & bit)
		return;
	k->slot_groups[g / 64] |= bit;
	first = group_span(p, g, &n);
	for (size_t j = first; j < first + n; j++)
		k->slots[j] = NO_SITE;
	memset(&k->snap.site_of_slot[first], 0, n * sizeof(*k->snap.site_of_slot));
	k->snap.site_of_slot_bytes += n * sizeof(*k->snap.site_of_slot);
}

/* Every site_of_slot entry set at the last reading back to none. */
static void clear_site_of_slot(struct snapshot_kept *k, const struct probes *p)
{
	size_t n, first;

	for (size_t g = 0; g < MEMLEAK_SITE_GROUP_WORDS * 64; g++)
		if (k->slot_groups[g / 64] & (1ull << (g % 64))) {
			first = group_span(p, g, &n);
			memset(&k->snap.site_of_slot[first], 0, n * sizeof(*k->snap.site_of_slot));
		}
}

/* Every site let go of: the next reading starts anew, every site new. */
static void restart(struct snapshot_kept *k, const struct probes *p)
{
	struct snapshot *snap = &k->snap;

	for (size_t i = 0; i < snap->nr; i++)
		stack_ref__put(&(struct stack_ref){ .native = snap->sites[i].stack,
						 .python = snap->sites[i].pystack });
	snap->nr = 0;
	snap->moved = NULL;
	snap->nr_moved = 0;
	k->compacted = false;
	/* And their room: after a fold (reclaim__fold) far fewer come back. */
	idmap__free(&k->of_key);
	free(snap->sites);
	free(k->retired);
	free(k->live_mark);
	free(k->done_mark);
	free(k->pos);
	free(k->retired_at);
	snap->sites = NULL;
	k->retired = NULL;
	k->live_mark = k->done_mark = k->pos = k->retired_at = NULL;
	k->cap = k->cap_retired_at = 0;
	k->nr_retired_at = 0;
	k->live.nr = k->live_was.nr = k->stackless.nr = 0;
	k->retired_seq = 0;
	/* No entry of site_of_slot left behind; each group set to none as it is used again. */
	clear_site_of_slot(k, p);
	memset(k->slot_groups, 0, sizeof(k->slot_groups));
	snap->site_of_slot_bytes = 0;
	k->resets = p->rc.resets;
	k->epoch = retired__epoch(p->rc.retired);
	k->started = false;
	k->order.reading = 0;
}

static struct snapshot_kept *kept_new(const struct probes *p)
{
	struct snapshot_kept *k = calloc(1, sizeof(*k));

	if (!k)
		return NULL;
	/* Their pages untouched until a group is used (slot_groups). */
	k->slots = calloc(p->tables.slots ?: 1, sizeof(*k->slots));
	k->snap.site_of_slot = calloc(p->tables.slots ?: 1, sizeof(*k->snap.site_of_slot));
	if (!k->slots || !k->snap.site_of_slot) {
		free(k->slots);
		free(k->snap.site_of_slot);
		free(k);
		return NULL;
	}
	k->group_shift = p->tables.group_shift;
	k->nr_slots = p->tables.slots;
	k->snap.held = &k->held;
	k->snap.order = &k->order;
	k->snap.by_key = &k->of_key;
	return k;
}

/* Room for one more site in snap.sites and beside it. */
static int reserve_site(struct snapshot_kept *k)
{
	size_t cap = k->cap, n = k->snap.nr + 1;

	if (n <= k->cap)
		return 0;
	if (vec__reserve_min(&k->snap.sites, &cap, n, sizeof(*k->snap.sites), 1024))
		return -ENOMEM;
	/* Each array grows to the same room, from its own old one. */
	if (vec__reserve(&k->retired, &(size_t){ k->cap }, cap, sizeof(*k->retired)) ||
	    vec__reserve(&k->live_mark, &(size_t){ k->cap }, cap, sizeof(*k->live_mark)) ||
	    vec__reserve(&k->done_mark, &(size_t){ k->cap }, cap, sizeof(*k->done_mark)) ||
	    vec__reserve(&k->pos, &(size_t){ k->cap }, cap, sizeof(*k->pos)))
		return -ENOMEM;
	k->cap = cap;
	return 0;
}

/* The site of (stack_id, api), made if new (with no figures, no stack); its index in *at. */
static int site_for(struct snapshot_kept *k, uint64_t stack_id, uint32_t api, uint32_t *at)
{
	uint64_t key = retired__site_key(stack_id, api);
	struct snap_site *s;

	if (idmap__get(&k->of_key, key, at))
		return 0;
	if (reserve_site(k) || idmap__put(&k->of_key, key, (uint32_t)k->snap.nr))
		return -ENOMEM;
	*at = (uint32_t)k->snap.nr++;
	s = &k->snap.sites[*at];
	memset(s, 0, sizeof(*s));
	s->stack_id = stack_id;
	s->api = api;
	k->retired[*at] = (struct retired_part){ 0 };
	k->live_mark[*at] = k->done_mark[*at] = 0;
	return 0;
}

/* Slot i's site: the one it held at the last reading, else looked up (or made). */
static int slot_site(struct snapshot_kept *k, const struct probes *p, size_t i,
		     const struct slot_copy *slot, uint32_t *at)
{
	uint32_t m;

	use_group(k, p, i);
	m = k->slots[i];
	if (m < k->snap.nr && k->snap.sites[m].stack_id == slot->stack_id &&
	    k->snap.sites[m].api == slot->api) {
		*at = m;
		return 0;
	}
	if (site_for(k, slot->stack_id, slot->api, at))
		return -ENOMEM;
	k->slots[i] = *at;
	return 0;
}

/* Slot i, live: its figures into its site's live sum. */
static int add_slot(struct snapshot_kept *k, const struct probes *p, size_t i,
		    const struct slot_copy *slot, uint32_t now)
{
	uint32_t at;

	if (slot_site(k, p, i, slot, &at))
		return -ENOMEM;
	k->snap.site_of_slot[i] = at + 1;
	if (k->live_mark[at] == now) {
		snapshot__add_stats(&k->acc[k->pos[at]], &slot->stats);
		return 0;
	}
	if (vec__reserve_min(&k->acc, &k->cap_acc, k->live.nr + 1, sizeof(*k->acc), 256))
		return -ENOMEM;
	k->live_mark[at] = now;
	k->pos[at] = (uint32_t)k->live.nr;
	k->acc[k->live.nr] = slot->stats;
	return list_add(&k->live, at);
}

struct reading {
	struct snapshot_kept *k;
	struct probes *p;
	uint32_t now;
};

static int read_slot(void *arg, size_t i, const struct slot_copy *slot)
{
	struct reading *r = arg;

	return add_slot(r->k, r->p, i, slot, r->now) ? -ENOMEM : 0;
}

static int read_slots(struct snapshot_kept *k, struct probes *p, uint32_t now)
{
	clear_site_of_slot(k, p);
	return snapshot__each_slot(p, read_slot, &(struct reading){ k, p, now });
}

/* Retired entry i's site: the one it was at the last reading, else looked up (or made). */
static int entry_site(struct snapshot_kept *k, size_t i, const struct retired_site *r,
		      uint32_t *at)
{
	if (i < k->nr_retired_at && k->retired_at[i] != NO_SITE) {
		*at = k->retired_at[i];
		return 0;
	}
	if (i < k->nr_retired_at) {	/* an entry new since a compaction */
		if (site_for(k, r->stack_id, r->api, at))
			return -ENOMEM;
		k->retired_at[i] = *at;
		return 0;
	}
	if (site_for(k, r->stack_id, r->api, at) ||
	    vec__reserve_min(&k->retired_at, &k->cap_retired_at, i + 1, sizeof(*k->retired_at), 256))
		return -ENOMEM;
	while (k->nr_retired_at < i)	/* entries before i are all known: not reached */
		k->retired_at[k->nr_retired_at++] = NO_SITE;
	k->retired_at[k->nr_retired_at++] = *at;
	return 0;
}

bool snapshot_kept__fold_unread(struct snapshot_kept *k, struct probes *p,
				const struct snap_fold *fold, const struct retired_site *s)
{
	if (s->folded_allocs || s->folded_bytes ||
	    idmap__get(&k->of_key, retired__site_key(s->stack_id, s->api), NULL) ||
	    !fold->foldable(fold->ctx, s->stack_id, s->api, s->total_allocs, s->total_bytes))
		return false;
	return retired__fold_site(p->rc.retired, s->stack_id, s->api, s->total_bytes,
				  s->total_allocs);
}

/* Is retired entry i (new to the reading), of no site of it, one to fold unread? */
static bool fold_unread(struct snapshot_kept *k, struct probes *p, const struct snap_fold *fold,
			size_t i, const struct retired_site *s)
{
	return fold && !(i < k->nr_retired_at && k->retired_at[i] != NO_SITE) &&
	       snapshot_kept__fold_unread(k, p, fold, s);
}

/*
 * The retired entries that changed since the last reading: their sites'
 * retired parts; those folded unread go (the entries move: the next
 * reading starts anew).
 */
static int read_retired(struct snapshot_kept *k, struct probes *p, const struct snap_fold *fold)
{
	struct retired *r = p->rc.retired;
	size_t n = retired__nr_sites(r);
	struct snapshot *snap = &k->snap;
	uint32_t at;

	k->touched.nr = 0;
	/* With those folded since the last reading (snapshot_kept_fold__unread). */
	snap->unread_sites = k->unread_sites;
	snap->unread_allocs = k->unread_allocs;
	for (size_t i = 0; i < n; i++) {
		const struct retired_site *s = retired__site_at(r, i);

		if (s->seq <= k->retired_seq && i < k->nr_retired_at && k->retired_at[i] != NO_SITE)
			continue;
		if (fold_unread(k, p, fold, i, s)) {
			snap->unread_sites++;
			snap->unread_allocs += s->total_allocs;
			continue;
		}
		if (entry_site(k, i, s, &at) || list_add(&k->touched, at))
			return -ENOMEM;
		k->retired[at] = (struct retired_part){ s->total_bytes,
							snapshot__blocks_of(p, s->total_allocs) };
		k->snap.sites[at].folded_bytes = s->folded_bytes;
		k->snap.sites[at].folded_allocs = s->folded_allocs;
	}
	k->retired_seq = retired__seq(r);
	/* Their stacks stay: the sites of this reading may not have read theirs yet. */
	if (snap->unread_sites > k->unread_sites && retired__fold_end(r, NULL, NULL))
		return -ENOMEM;
	k->fold_mark = retired__nr_sites(r);
	retired__forgotten(r, &snap->forgotten_sites, &snap->forgotten_allocs,
			   &snap->forgotten_bytes);
	snap->forgotten_allocs = snapshot__blocks_of(p, snap->forgotten_allocs);
	return 0;
}

/*
 * The sites new in this reading (from before on) that a report folded take
 * their figures back: each a retired entry again, read below. A folded
 * site is in no reading: a fold has the next one start anew.
 */
static int unfold_new(struct snapshot_kept *k, struct probes *p, size_t before)
{
	for (size_t i = before; i < k->snap.nr; i++)
		if (retired__unfold(p->rc.retired, k->snap.sites[i].stack_id, k->snap.sites[i].api))
			return -ENOMEM;
	return 0;
}

/*
 * Site at's figures now: live (NULL: no live slot) and retired; a change is
 * listed. Its age stays where it holds (snapshot__age_holds), else the walk
 * of the blocks sets it again.
 */
static int set_figures(struct snapshot_kept *k, uint32_t at, const struct site_stats *live,
		       size_t before, uint32_t now, bool exact)
{
	struct snap_site *s = &k->snap.sites[at];
	struct site_stats st = live ? *live : (struct site_stats){ 0 };

	k->done_mark[at] = now;
	st.total_bytes += k->retired[at].bytes;
	st.total_allocs += k->retired[at].allocs;
	if (!exact || at >= before || !snapshot__age_holds(&s->stats, &st, s->oldest_ns))
		s->oldest_ns = 0;
	k->ages_unknown |= st.outstanding_allocs && !s->oldest_ns;
	if (at < before && !memcmp(&st, &s->stats, sizeof(st)))
		return 0;
	s->stats = st;
	return list_add(&k->changed, at);
}

/*
 * Every site whose figures may have changed: those with a live slot now or
 * at the last reading, and those whose retired entry changed. The others
 * keep theirs, and hold no block (no age).
 */
static int set_all(struct snapshot_kept *k, const struct probes *p, size_t before, uint32_t now)
{
	bool exact = !p->sample.mode;
	int err = 0;

	k->changed.nr = 0;
	k->ages_unknown = false;
	for (size_t i = 0; i < k->live.nr && !err; i++)
		err = set_figures(k, k->live.v[i], &k->acc[i], before, now, exact);
	for (size_t i = 0; i < k->live_was.nr && !err; i++)
		if (k->done_mark[k->live_was.v[i]] != now)
			err = set_figures(k, k->live_was.v[i], NULL, before, now, exact);
	for (size_t i = 0; i < k->touched.nr && !err; i++)
		if (k->done_mark[k->touched.v[i]] != now)
			err = set_figures(k, k->touched.v[i], NULL, before, now, exact);
	/* New sites with a retired entry only, made in read_retired, are in touched. */
	return err;
}

/*
 * The ages of the sites with blocks: kept where each holds, else walked
 * for (snapshot__walk_blocks, which leaves them unknown past
 * SNAPSHOT_AGES_MAX blocks). A steady `v_stacks 15 120` mostly keeps its
 * ages (its churn frees at once, its leak only grows): the walk mapped and
 * read the 58 MiB table of live blocks for 100 blocks, 10 to 13 ms of a
 * 60 to 90 ms report. The final report walks anew (snapshot__ages).
 */
static int ages(struct snapshot_kept *k, struct probes *p)
{
	uint64_t blocks = 0;

	for (size_t i = 0; i < k->live.nr; i++)
		blocks += k->acc[i].outstanding_allocs;
	if (!k->ages_unknown && blocks <= SNAPSHOT_AGES_MAX)
		return 0;
	/* Walked, or unknown: none kept, as a reading that walks whole. */
	for (size_t i = 0; i < k->live.nr; i++)
		k->snap.sites[k->live.v[i]].oldest_ns = 0;
	return snapshot__walk_blocks(p, &k->snap, 0);
}

/* The reading's counters and live figures, as collect() reads them. */
static void read_counters(struct probes *p, struct snapshot *snap)
{
	for (int c = 0; c < CNT__COUNT; c++)
		snap->counters[c] = bpfmaps__counter(p->skel, c);
	peak__live(p, snap->live);
	reclaim__sweep_stats(p, &snap->sweep);
	snap->time_ns = clock__now_ns();
}

/* The sites and their figures; in *before the sites carried over. */
static int read_tables(struct snapshot_kept *k, struct probes *p, const struct snap_fold *fold,
		       size_t *before)
{
	struct snapshot *snap = &k->snap;
	uint32_t now;
	struct list was;
	int err;

	snap->moved = NULL;
	snap->nr_moved = 0;
	k->compacted = false;
	pthread_mutex_lock(&p->rc.retired_lock);
	if (p->rc.resets != k->resets || !k->started)
		restart(k, p);
	else if (retired__epoch(p->rc.retired) != k->epoch && snapshot_kept_compact__run(k, p))
		restart(k, p);	/* a failure: every site new again */
	pthread_mutex_unlock(&p->rc.retired_lock);
	snap->follows = k->started ? k->reading : 0;
	snap->reading = ++k->reading;
	now = (uint32_t)k->reading ?: 1;
	k->started = true;
	*before = snap->follows ? snap->nr : 0;
	snap->ages = false;
	read_counters(p, snap);
	was = k->live_was;	/* the last reading's live sites, its room reused */
	k->live_was = k->live;
	k->live = was;
	k->live.nr = 0;
	err = read_slots(k, p, now);
	if (!err) {
		pthread_mutex_lock(&p->rc.retired_lock);
		err = unfold_new(k, p, *before) ?: read_retired(k, p, fold);
		pthread_mutex_unlock(&p->rc.retired_lock);
	}
	err = err ?: set_all(k, p, *before, now);
	err = err ?: ages(k, p);
	snap->changed = k->changed.v;
	snap->nr_changed = k->changed.nr;
	return err;
}

/* Stacks read between two chances for a sweep to take the lock (as snapshot.c's). */
#define KEPT_STACKS_AT_ONCE 1024
#define KEPT_AHEAD 8

/*
 * After a compaction, the stacks the sites kept hold are used by this
 * reading: the others (the sites gone's) the cache lets go of at its end.
 * Under stacks_lock, let go of now and then as read_stacks does.
 */
static void keep_stacks(struct snapshot_kept *k, struct probes *p, size_t before)
{
	struct stack_ref ref;

	for (size_t i = 0; i < before; i++) {
		const struct snap_site *s = &k->snap.sites[i];

		if (i && !(i % KEPT_STACKS_AT_ONCE)) {
			pthread_mutex_unlock(&p->rc.stacks_lock);
			pthread_mutex_lock(&p->rc.stacks_lock);
		}
		/* Their blobs' counts, held and let go of below, a few sites on: each a cache miss. */
		if (i + KEPT_AHEAD < before) {
			__builtin_prefetch(k->snap.sites[i + KEPT_AHEAD].stack, 1);
			__builtin_prefetch(k->snap.sites[i + KEPT_AHEAD].pystack, 1);
		}
		if (s->stack && stackcache__get(p->rc.stacks, s->stack_id, &ref))
			stack_ref__put(&ref);
	}
}

/*
 * The stacks of the sites new in this reading, and of those whose stack
 * could not be read before; the others hold theirs. A restart reads all,
 * and lets the stack cache go of what no site names.
 */
static int read_stacks(struct snapshot_kept *k, struct probes *p, size_t before)
{
	struct list todo = k->stackless;
	int err = 0;

	/* Every stack BPF sent before it counted these sites' allocations (as snapshot.c's). */
	stack_ring__drain(p);
	k->stackless = (struct list){ 0 };
	k->fresh.nr = 0;
	pthread_mutex_lock(&p->rc.stacks_lock);
	if (!before || k->compacted)
		stackcache__begin(p->rc.stacks);
	if (before && k->compacted)
		keep_stacks(k, p, before);
	for (size_t i = before; i < k->snap.nr && !err; i++)
		err = list_add(&todo, (uint32_t)i);
	for (size_t i = 0; i < todo.nr && !err; i++) {
		struct snap_site *s = &k->snap.sites[todo.v[i]];

		if (i && !(i % KEPT_STACKS_AT_ONCE)) {
			pthread_mutex_unlock(&p->rc.stacks_lock);
			pthread_mutex_lock(&p->rc.stacks_lock);
		}
		if (!s->stack)
			snapshot__read_stack(p, s);
		err = list_add(&k->fresh, todo.v[i]);
		if (!err && !s->stack && s->stack_id != MEMLEAK_NO_STACK)
			err = list_add(&k->stackless, todo.v[i]);
	}
	if (!before || k->compacted)
		stackcache__end(p->rc.stacks);
	pthread_mutex_unlock(&p->rc.stacks_lock);
	list_free(&todo);
	k->snap.counters[CNT_STACKS_LOST] = k->stackless.nr;
	k->snap.fresh = k->fresh.v;
	k->snap.nr_fresh = k->fresh.nr;
	return err;
}

/*
 * The stacks of the sites folded unread since the last reading, let go of
 * now that every site of this one has read its own (read_retired kept
 * them: a site of it may not have read its stack yet). Left for the fold
 * after the report, a torch job's report that fell after a sweep of the
 * import was built beside 200,000 of them (their kept stacks and shared
 * prefixes: 40 MiB of its 405 MiB peak).
 */
static void let_go_unread(struct snapshot_kept *k, struct probes *p)
{
	struct retired *r = p->rc.retired;

	k->snap.unread_let_go = false;
	if (!k->snap.unread_sites)
		return;
	pthread_mutex_lock(&p->rc.stacks_lock);
	pthread_mutex_lock(&p->rc.retired_lock);
	/* Without the stacks to keep, none goes: the fold after the report tries again. */
	k->snap.unread_let_go =
		!retired__fold_end(r, reclaim__held, &(struct reclaim_held){ &k->snap, NULL });
	pthread_mutex_unlock(&p->rc.retired_lock);
	pthread_mutex_unlock(&p->rc.stacks_lock);
}

/* At the sweeper's nice value, as snapshot__collect. */
static int collect(struct snapshot_kept *k, struct probes *p, const struct snap_fold *fold)
{
	int err, was = nice__raise(PROBES_SWEEP_NICE);
	size_t before;

	pthread_mutex_lock(&p->rc.tables_lock);
	err = read_tables(k, p, fold, &before);
	pthread_mutex_unlock(&p->rc.tables_lock);
	err = err ?: read_stacks(k, p, before);
	if (!err)
		let_go_unread(k, p);
	nice__restore(was);
	return err;
}

int snapshot_kept__collect(struct probes *p, const struct snap_fold *fold, struct snapshot **out)
{
	struct snapshot_kept *k = p->rc.kept;
	bool busy = false;
	int err;

	if (!k && !(k = p->rc.kept = kept_new(p)))
		return snapshot__collect(p, 0, out);
	p->rc.kept_free = snapshot_kept__free;
	if (!atomic_compare_exchange_strong(&k->held, &busy, true))
		return snapshot__collect(p, 0, out);
	err = collect(k, p, p->sample.mode ? NULL : fold);
	if (err) {
		restart(k, p);	/* a failed reading leaves no state half taken in */
		atomic_store(&k->held, false);
		return err;
	}
	k->unread_sites = k->unread_allocs = 0;	/* in this reading's */
	*out = &k->snap;
	return 0;
}

void snapshot_kept__free(struct probes *p)
{
	struct snapshot_kept *k = p->rc.kept;

	if (!k)
		return;
	restart(k, p);
	idmap__free(&k->of_key);
	free(k->snap.sites);
	free(k->snap.site_of_slot);
	free(k->slots);
	free(k->retired_at);
	free(k->retired);
	free(k->live_mark);
	free(k->done_mark);
	free(k->pos);
	free(k->moved);
	free(k->acc);
	list_free(&k->live);
	list_free(&k->live_was);
	list_free(&k->changed);
	list_free(&k->fresh);
	list_free(&k->stackless);
	list_free(&k->touched);
	free(k->order.sites);
	free(k);
	p->rc.kept = NULL;
}

size_t snapshot_kept__unwritten_bytes(const struct probes *p)
{
	const struct snapshot_kept *k = p->rc.kept;

	/* Two arrays of 4 bytes a slot (slots, site_of_slot), written a group at a time. */
	return k ? 2 * (p->tables.slots * sizeof(*k->slots) - k->snap.site_of_slot_bytes) : 0;
}

size_t snapshot_kept__bytes(const struct probes *p)
{
	const struct snapshot_kept *k = p->rc.kept;

	if (!k)
		return 0;
	/* Of slots, the groups used, as of site_of_slot. */
	return idmap__bytes(&k->of_key) + k->snap.site_of_slot_bytes +
	       k->cap_retired_at * sizeof(*k->retired_at) +
	       k->cap * (sizeof(*k->retired) + 3 * sizeof(uint32_t)) +
	       k->cap_acc * sizeof(*k->acc) + k->order.cap * sizeof(*k->order.sites) +
	       (k->live.cap + k->live_was.cap + k->changed.cap + k->fresh.cap +
		k->stackless.cap + k->touched.cap) * sizeof(uint32_t);
}
