// SPDX-License-Identifier: GPL-2.0
/*
 * Totals and ordering of a snapshot's sites. Pure: no I/O, so the unit tests
 * feed it hand-made snapshots.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include "aggregate.h"
#include "util/vec.h"
#include "sample.h"

/* How many sites ahead the merge of the kept order asks for a site's figures. */
#define ORDER_AHEAD 8

/*
 * Biggest first; the tie-breakers only make the order deterministic, so two
 * reports of the same snapshot are identical (diffable, testable).
 */
static int site_cmp(const void *a, const void *b)
{
	const struct snap_site *x = *(const struct snap_site *const *)a;
	const struct snap_site *y = *(const struct snap_site *const *)b;

	if (x->stats.outstanding_bytes != y->stats.outstanding_bytes)
		return x->stats.outstanding_bytes > y->stats.outstanding_bytes ? -1 : 1;
	if (x->stats.outstanding_allocs != y->stats.outstanding_allocs)
		return x->stats.outstanding_allocs > y->stats.outstanding_allocs ? -1 : 1;
	if (x->api != y->api)
		return x->api < y->api ? -1 : 1;
	if (x->stack_id != y->stack_id)
		return x->stack_id < y->stack_id ? -1 : 1;
	return 0;
}

/*
 * The peaks BPF keeps. The live figures are read while the target runs, a
 * little after the sites: a peak is never below what they hold.
 */
static void add_peaks(struct report_totals *t, const struct snapshot *snap)
{
	for (int k = 0; k < KIND__COUNT; k++) {
		const struct memleak_live *l = &snap->live[k];

		bool probes = l->peak >= t->kind_bytes[k];

		t->peak_bytes[k] = probes ? l->peak : t->kind_bytes[k];
		t->peak_ns[k] = !t->peak_bytes[k] ? 0 : probes ? l->peak_ns : snap->time_ns;
	}
}

/*
 * The stack drops the churn made: a full stack map while the last sweep
 * found at most half its room live. Only a run with a sweep (room) can
 * say so: -k's drops are the room's.
 */
static void add_sweep(struct report_totals *t, const struct snapshot *snap)
{
	const struct sweep_stats *sw = &snap->sweep;
	uint64_t full = snap->counters[CNT_STACKS_MAP_FULL];

	t->stacks_outran = sw->room && sw->live <= sw->room / 2 ? full : 0;
	t->stacks_live_max = sw->live_max;
	t->stack_room = sw->room;
	t->sweep_rate = sw->cpu_ns ? sw->stacks * 1000000000ull / sw->cpu_ns : 0;
}

static void add_totals(struct report_totals *t, const struct snapshot *snap)
{
	for (size_t i = 0; i < snap->nr; i++) {
		const struct site_stats *s = &snap->sites[i].stats;
		int k = MEMLEAK_KIND_OF(snap->sites[i].api);

		t->outstanding_bytes += s->outstanding_bytes;
		t->outstanding_allocs += s->outstanding_allocs;
		t->outstanding_samples += s->outstanding_samples;
		t->outstanding_var += (double)s->outstanding_var * (double)(1ULL << MEMLEAK_VAR_SHIFT);
		t->kind_bytes[k] += s->outstanding_bytes;
		t->kind_allocs[k] += s->outstanding_allocs;
		t->allocs += s->total_allocs;
	}
	t->allocs += snap->forgotten_allocs;
	if (snap->older) {
		t->outstanding_bytes = snap->all_outstanding_bytes;
		t->outstanding_allocs = snap->all_outstanding_allocs;
		t->kind_bytes[KIND_MMAP] = snap->all_mmap_bytes;
		t->kind_allocs[KIND_MMAP] = snap->all_mmap_allocs;
		t->kind_bytes[KIND_HEAP] = t->outstanding_bytes - snap->all_mmap_bytes;
		t->kind_allocs[KIND_HEAP] = t->outstanding_allocs - snap->all_mmap_allocs;
	}
	add_peaks(t, snap);
	/*
	 * Every tracked allocation is either still outstanding or was freed
	 * (a realloc frees one block and allocates another). The maps are read
	 * while the target runs, so the figures may be a hair apart: never wrap.
	 */
	t->frees = t->allocs > t->outstanding_allocs ? t->allocs - t->outstanding_allocs : 0;
	for (int c = 0; c < CNT__COUNT; c++)
		t->counters[c] = snap->counters[c];
	add_sweep(t, snap);
}

/* Every site with something outstanding, sorted. */
static void order_all(const struct snapshot *snap, struct aggregate *agg)
{
	for (size_t i = 0; i < snap->nr; i++) {
		if (snap->sites[i].stats.outstanding_allocs)
			agg->sites[agg->nr++] = &snap->sites[i];
	}
	if (agg->nr)
		qsort(agg->sites, agg->nr, sizeof(*agg->sites), site_cmp);
}

/*
 * The same from the order of the reading snap carries over: its sites whose
 * figures did not change keep their order among themselves (site_cmp reads
 * only figures and keys), the changed ones are sorted and merged in. The
 * order is site_cmp's either way, a strict one: no two sites share a key.
 */
static int order_changed(const struct snapshot *snap, struct aggregate *agg)
{
	const struct snap_order *o = snap->order;
	const struct snap_site **moved = malloc((snap->nr_changed ?: 1) * sizeof(*moved));
	bool *changed = calloc(snap->nr ?: 1, sizeof(*changed));
	size_t nr_moved = 0, i = 0, j = 0;

	if (!moved || !changed) {
		free(moved);
		free(changed);
		return -ENOMEM;
	}
	for (size_t k = 0; k < snap->nr_changed; k++) {
		const struct snap_site *s = &snap->sites[snap->changed[k]];

		changed[snap->changed[k]] = true;
		if (s->stats.outstanding_allocs)
			moved[nr_moved++] = s;
	}
	qsort(moved, nr_moved, sizeof(*moved), site_cmp);
	while (i < o->nr || j < nr_moved) {
		const struct snap_site *kept = NULL;

		while (i < o->nr && changed[o->sites[i]])
			i++;
		/* The kept sites are compared one by one: each a cache miss, asked ahead. */
		if (i + ORDER_AHEAD < o->nr)
			__builtin_prefetch(&snap->sites[o->sites[i + ORDER_AHEAD]]);
		if (i < o->nr)
			kept = &snap->sites[o->sites[i]];
		if (!kept && j == nr_moved)
			break;
		if (kept && (j == nr_moved || site_cmp(&kept, &moved[j]) < 0)) {
			agg->sites[agg->nr++] = kept;
			i++;
		} else {
			agg->sites[agg->nr++] = moved[j++];
		}
	}
	free(moved);
	free(changed);
	return 0;
}

/* The order kept with the reading, for the next one to carry over. */
static int keep_order(const struct snapshot *snap, const struct aggregate *agg)
{
	struct snap_order *o = snap->order;

	o->reading = 0;
	if (vec__reserve(&o->sites, &o->cap, agg->nr, sizeof(*o->sites)))
		return -ENOMEM;
	for (size_t i = 0; i < agg->nr; i++)
		o->sites[i] = (uint32_t)(agg->sites[i] - snap->sites);
	o->nr = agg->nr;
	o->reading = snap->reading;
	return 0;
}

int aggregate__build(const struct snapshot *snap, struct aggregate **out)
{
	struct aggregate *agg;
	int err = 0;

	*out = NULL;
	agg = calloc(1, sizeof(*agg));
	if (!agg)
		return -ENOMEM;
	add_totals(&agg->totals, snap);
	if (snap->nr) {
		agg->sites = calloc(snap->nr, sizeof(*agg->sites));
		if (!agg->sites) {
			free(agg);
			return -ENOMEM;
		}
	}
	if (snap->order && snap->follows && snap->order->reading == snap->follows)
		err = order_changed(snap, agg);
	else
		order_all(snap, agg);
	if (!err && snap->order)
		err = keep_order(snap, agg);
	if (err) {
		aggregate__free(agg);
		return err;
	}
	*out = agg;
	return 0;
}

void aggregate__free(struct aggregate *agg)
{
	if (!agg)
		return;
	free(agg->sites);
	free(agg);
}
