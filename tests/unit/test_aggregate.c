// SPDX-License-Identifier: GPL-2.0
/* aggregate.c: totals over every site, outstanding sites in a stable order. */
#include <stdlib.h>
#include "analyze/aggregate.h"
#include "unit.h"

static struct snap_site site(uint64_t stack_id, uint32_t api, uint64_t ob, uint64_t oa,
			     uint64_t tb, uint64_t ta)
{
	return (struct snap_site){
		.stack_id = stack_id,
		.api = api,
		.stats = { .outstanding_bytes = ob, .outstanding_allocs = oa,
			   .total_bytes = tb, .total_allocs = ta },
	};
}

TEST(aggregate_totals_over_all_sites)
{
	struct snap_site sites[] = {
		site(1, API_MALLOC, 100, 2, 1000, 20),
		site(2, API_CALLOC, 0, 0, 500, 5),	/* all freed: counted, not listed */
		site(3, API_REALLOC, 4096, 1, 8192, 3),
		site(MEMLEAK_NO_STACK, API_MALLOC, 10, 1, 10, 1),
	};
	struct snapshot snap = { .sites = sites, .nr = 4 };
	struct aggregate *agg;

	snap.counters[CNT_ALLOCS_MAP_FULL] = 7;
	snap.counters[CNT_EXECS] = 2;
	ASSERT(aggregate__build(&snap, &agg) == 0);
	ASSERT_EQ_U64(agg->totals.outstanding_bytes, 4206);
	ASSERT_EQ_U64(agg->totals.outstanding_allocs, 4);
	ASSERT_EQ_U64(agg->totals.allocs, 29);
	ASSERT_EQ_U64(agg->totals.frees, 25);
	ASSERT_EQ_U64(agg->totals.counters[CNT_ALLOCS_MAP_FULL], 7);
	ASSERT_EQ_U64(agg->totals.counters[CNT_EXECS], 2);
	ASSERT_EQ_U64(agg->totals.counters[CNT_STACK_ERRORS], 0);
	ASSERT_EQ_U64(agg->nr, 3);
	ASSERT(agg->sites[0] == &sites[2]);
	ASSERT(agg->sites[1] == &sites[0]);
	ASSERT(agg->sites[2] == &sites[3]);
	aggregate__free(agg);
	return true;
}

TEST(aggregate_order_is_deterministic)
{
	/* Each pair differs only in the next sort key. */
	struct snap_site sites[] = {
		site(9, API_NEW, 64, 1, 64, 1),
		site(5, API_MALLOC, 64, 4, 64, 4),
		site(4, API_CALLOC, 64, 4, 64, 4),
		site(3, API_CALLOC, 64, 4, 64, 4),
		site(MEMLEAK_NO_STACK, API_CALLOC, 64, 4, 64, 4),
		site(1, API_MALLOC, 65, 1, 65, 1),
	};
	struct snapshot snap = { .sites = sites, .nr = 6 };
	const struct snap_site *want[] = {
		&sites[5], &sites[1], &sites[4], &sites[3], &sites[2], &sites[0],
	};
	struct aggregate *agg;

	ASSERT(aggregate__build(&snap, &agg) == 0);
	ASSERT_EQ_U64(agg->nr, 6);
	for (size_t i = 0; i < 6; i++)
		ASSERT(agg->sites[i] == want[i]);
	aggregate__free(agg);
	return true;
}

TEST(aggregate_empty_snapshot)
{
	struct snapshot snap = { 0 };
	struct aggregate *agg;

	snap.counters[CNT_MISSED_RETURNS] = 3;
	ASSERT(aggregate__build(&snap, &agg) == 0);
	ASSERT_EQ_U64(agg->nr, 0);
	ASSERT_EQ_U64(agg->totals.allocs, 0);
	ASSERT_EQ_U64(agg->totals.frees, 0);
	ASSERT_EQ_U64(agg->totals.counters[CNT_MISSED_RETURNS], 3);
	aggregate__free(agg);
	aggregate__free(NULL);
	return true;
}

/* The maps are read while the target runs: a torn read must not wrap frees. */
TEST(aggregate_frees_never_wrap)
{
	struct snap_site sites[] = { site(1, API_MALLOC, 300, 3, 200, 2) };
	struct snapshot snap = { .sites = sites, .nr = 1 };
	struct aggregate *agg;

	ASSERT(aggregate__build(&snap, &agg) == 0);
	ASSERT_EQ_U64(agg->totals.frees, 0);
	aggregate__free(agg);
	return true;
}

/* Heap blocks and mmaps apart; the probes' exact peaks, never below what the sites hold. */
TEST(aggregate_kinds_and_peaks)
{
	struct snap_site sites[] = {
		site(1, API_MALLOC, 100, 2, 1000, 20),
		site(2, API_MMAP, 8192, 1, 8192, 1),
		site(3, API_MREMAP, 4096, 1, 4096, 1),
		site(4, API_NEW, 50, 1, 50, 1),
	};
	struct snapshot snap = { .sites = sites, .nr = 4, .time_ns = 9000 };
	struct aggregate *agg;

	snap.live[KIND_HEAP] = (struct memleak_live){ .bytes = 150, .peak = 5000, .peak_ns = 700 };
	snap.live[KIND_MMAP] = (struct memleak_live){ .bytes = 12288, .peak = 10000, .peak_ns = 800 };
	ASSERT(aggregate__build(&snap, &agg) == 0);
	ASSERT_EQ_U64(agg->totals.kind_bytes[KIND_HEAP], 150);
	ASSERT_EQ_U64(agg->totals.kind_allocs[KIND_HEAP], 3);
	ASSERT_EQ_U64(agg->totals.kind_bytes[KIND_MMAP], 12288);
	ASSERT_EQ_U64(agg->totals.kind_allocs[KIND_MMAP], 2);
	ASSERT_EQ_U64(agg->totals.peak_bytes[KIND_HEAP], 5000);
	ASSERT_EQ_U64(agg->totals.peak_ns[KIND_HEAP], 700);
	/* Read a little before the sites: what they hold is the peak, now. */
	ASSERT_EQ_U64(agg->totals.peak_bytes[KIND_MMAP], 12288);
	ASSERT_EQ_U64(agg->totals.peak_ns[KIND_MMAP], 9000);
	aggregate__free(agg);
	return true;
}

/*
 * A reading carried over (probe/snapshot_kept.h): sites keep their indexes,
 * some change (grow, shrink, are freed, come back), new ones come after.
 * The order made from the last one's must be the one a full sort makes.
 */
static void change(struct snap_site *s, unsigned *seed)
{
	unsigned r = (unsigned)rand_r(seed);

	s->stats.outstanding_allocs = r % 3 ? r % 5 : 0;	/* a third freed */
	/* Few distinct sizes: ties go to the allocations, the API, the stack. */
	s->stats.outstanding_bytes = s->stats.outstanding_allocs * (16 << (r >> 8) % 3);
	s->stats.total_allocs += s->stats.outstanding_allocs + 1;
}

static bool same_order(const struct aggregate *a, const struct aggregate *b)
{
	if (a->nr != b->nr)
		return false;
	for (size_t i = 0; i < a->nr; i++)
		if (a->sites[i] != b->sites[i])
			return false;
	return true;
}

TEST(aggregate_carried_order_is_the_full_sort)
{
	enum { MAX = 600 };
	struct snap_site *sites = calloc(MAX, sizeof(*sites));
	uint32_t changed[MAX];
	struct snap_order order = { 0 };
	struct snapshot snap = { .sites = sites, .order = &order };
	unsigned seed = 27;
	bool ok = sites != NULL;

	for (uint64_t reading = 1; ok && reading <= 40; reading++) {
		struct aggregate *carried, *full;
		size_t before = snap.nr;
		struct snapshot plain;

		snap.nr_changed = 0;
		snap.follows = reading > 1 ? reading - 1 : 0;
		snap.reading = reading;
		/* A tenth of the old sites change, then some new ones come. */
		for (size_t i = 0; i < before; i++)
			if (!(rand_r(&seed) % 10)) {
				change(&sites[i], &seed);
				changed[snap.nr_changed++] = (uint32_t)i;
			}
		for (size_t n = (size_t)rand_r(&seed) % 20; n && snap.nr < MAX; n--) {
			/* Distinct keys, not in the order of the indexes. */
			sites[snap.nr] = site(MAX - snap.nr, API_MALLOC + snap.nr % 2, 0, 0, 0, 0);
			change(&sites[snap.nr], &seed);
			changed[snap.nr_changed++] = (uint32_t)snap.nr++;
		}
		snap.changed = changed;
		plain = snap;
		plain.order = NULL;	/* a snapshot of its own: sorted whole */
		ASSERT(aggregate__build(&snap, &carried) == 0);
		ASSERT(aggregate__build(&plain, &full) == 0);
		ok = same_order(carried, full) && order.reading == reading;
		aggregate__free(carried);
		aggregate__free(full);
	}
	free(order.sites);
	free(sites);
	ASSERT(ok);
	return true;
}
