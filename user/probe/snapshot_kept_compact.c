// SPDX-License-Identifier: GPL-2.0
/*
 * The carried reading after a fold or a trim of the retired store
 * (snapshot_kept_internal.h): its entries moved, some went. Starting the
 * reading anew would read every site again, look up every stack and have
 * the history and the site frames' carry start anew too: a torch job's
 * import folds at most reports, and that tripled its reports' CPU. Here
 * the sites a start anew would not read (neither a retired entry nor a
 * live slot any more) go, the others move down in their order, and what
 * is kept by site index (slots, entries, lists, the order) moves with
 * them; snapshot.moved tells what follows.
 */
#include <errno.h>
#include <stdlib.h>
#include "probes.h"
#include "probes_internal.h"
#include "snapshot_kept_internal.h"
#include "model/retired.h"
#include "model/stackcache.h"
#include "util/idmap.h"
#include "util/vec.h"

/*
 * Each slot that holds the site its memo names marks that site live (a
 * slot taken since, none). Only the slot's key is read, not its counts
 * (snapshot__each_slot sums them: five of its six cache lines), and no
 * slot without a memo: a torch job's compaction read 200,000 slots of
 * 320 bytes at each fold. 0, or the window's error.
 */
static int mark_live(const struct snapshot_kept *k, const struct probes *p, bool *live)
{
	const struct site_slot *slot;
	struct mapwin w;
	int err = 0;

	probes_tables__sites(&p->tables, &w);
	for (size_t i = snapshot_kept__next_set(k, 0); i < p->tables.slots && !err;
	     i = snapshot_kept__next_set(k, i + 1)) {
		uint32_t m = k->slots[i];

		if (m >= k->snap.nr)
			continue;
		if (!(slot = mapwin__at(&w, i)))
			err = w.err;
		else if (site_slot__live(slot) && slot->stack_id == k->snap.sites[m].stack_id &&
			 slot->api == k->snap.sites[m].api)
			live[m] = true;
	}
	mapwin__end(&w);
	return err;
}

/*
 * Site s has no retired entry now (folded, or trimmed to the forgotten
 * figures) but a live slot: it stays, with what it had retired gone, and
 * one folded takes its figures back (a new entry), as a new site would
 * (unfold_new). 0 or -ENOMEM.
 */
static int lose_entry(struct snapshot_kept *k, struct retired *r, size_t i)
{
	struct snap_site *s = &k->snap.sites[i];

	k->retired[i] = (struct retired_part){ 0 };
	s->folded_bytes = s->folded_allocs = 0;
	return retired__unfold(r, s->stack_id, s->api);
}

/*
 * What a start anew would read of the last reading's sites: those with a
 * retired entry now or a live slot. The others (their entry folded or
 * trimmed away) go; the rest move down in their order, each with its
 * figures and stack; k->moved says where.
 */
static int compact_sites(struct snapshot_kept *k, const struct probes *p)
{
	struct snapshot *snap = &k->snap;
	struct retired *r = p->rc.retired;
	bool *live = calloc(snap->nr ?: 1, sizeof(*live));
	size_t n = 0;
	int err = 0;

	if (!live || vec__reserve(&k->moved, &k->cap_moved, snap->nr ?: 1, sizeof(*k->moved))) {
		free(live);
		return -ENOMEM;
	}
	if (mark_live(k, p, live)) {
		free(live);
		return -ENOMEM;	/* nothing moved yet: restart lets go of every site */
	}
	for (size_t i = 0; i < snap->nr; i++) {
		struct snap_site *s = &snap->sites[i];

		if (!retired__site(r, s->stack_id, s->api)) {
			if (!live[i]) {
				stack_ref__put(&(struct stack_ref){ .native = s->stack,
								 .python = s->pystack });
				k->moved[i] = NO_SITE;
				continue;
			}
			err = err ?: lose_entry(k, r, i);
		}
		k->moved[i] = (uint32_t)n;
		snap->sites[n] = *s;
		k->retired[n] = k->retired[i];
		k->live_mark[n] = k->live_mark[i];
		k->done_mark[n] = k->done_mark[i];
		k->pos[n++] = k->pos[i];
	}
	free(live);
	snap->moved = k->moved;
	snap->nr_moved = snap->nr;
	snap->nr = n;
	if (n == snap->nr_moved)
		return err;	/* none went, none moved: the index stays */
	/*
	 * Made anew, to the size of what stays: its room once, not grown a
	 * dozen times from empty (200,000 sites and more on a torch job).
	 * On a failure the moves went on: each site is held once, for restart.
	 */
	(void)idmap__reset(&k->of_key, n);
	for (size_t i = 0; i < n && !err; i++)
		err = idmap__put(&k->of_key, retired__site_key(snap->sites[i].stack_id,
							       snap->sites[i].api), (uint32_t)i);
	return err;
}

/* A list of sites through k->moved: those gone leave it. */
static void compact_list(const struct snapshot_kept *k, uint32_t *v, size_t *nr)
{
	size_t n = 0;

	for (size_t i = 0; i < *nr; i++)
		if (k->moved[v[i]] != NO_SITE)
			v[n++] = k->moved[v[i]];
	*nr = n;
}

/* Each retired entry's site, by its key: the entries moved too. */
static int compact_entries(struct snapshot_kept *k, const struct retired *r)
{
	size_t n = retired__nr_sites(r);

	if (vec__reserve(&k->retired_at, &k->cap_retired_at, n ?: 1, sizeof(*k->retired_at)))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct retired_site *s = retired__site_at(r, i);

		if (!idmap__get(&k->of_key, retired__site_key(s->stack_id, s->api), &k->retired_at[i]))
			k->retired_at[i] = NO_SITE;
	}
	k->nr_retired_at = n;
	return 0;
}

int snapshot_kept_compact__run(struct snapshot_kept *k, const struct probes *p)
{
	const struct retired *r = p->rc.retired;

	if (compact_sites(k, p) || compact_entries(k, r))
		return -ENOMEM;
	for (size_t i = snapshot_kept__next_set(k, 0); i < p->tables.slots;
	     i = snapshot_kept__next_set(k, i + 1))
		if (k->slots[i] != NO_SITE)
			k->slots[i] = k->moved[k->slots[i]];
	compact_list(k, k->live.v, &k->live.nr);
	compact_list(k, k->stackless.v, &k->stackless.nr);
	if (k->order.reading == k->reading)
		compact_list(k, k->order.sites, &k->order.nr);
	k->epoch = retired__epoch(r);
	/*
	 * The stack cache lets go of the stacks of the sites gone (read_stacks
	 * marks every site's): with none gone, none to let go of. Most folds of
	 * a torch job's import fold retired sites no reading holds, and the
	 * marks cost 40 to 170 ms a reading at 200,000 sites.
	 */
	k->compacted = k->snap.nr < k->snap.nr_moved;
	return 0;
}
