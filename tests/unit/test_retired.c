// SPDX-License-Identifier: GPL-2.0
/* util/idmap.c and model/retired.c: what reclaiming keeps aside. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "model/retired.h"
#include "model/stackcache.h"
#include "util/idmap.h"
#include "unit.h"

TEST(idmap_puts_gets_grows_and_clears)
{
	struct idmap m = {};
	uint32_t v;

	for (uint64_t id = 1; id <= 5000; id++)
		ASSERT(idmap__put(&m, id * 0x10001, (uint32_t)id) == 0);
	ASSERT_EQ_U64(m.nr, 5000);
	ASSERT(4 * m.nr <= 3 * m.cap);	/* never more than three quarters full */
	ASSERT_EQ_U64(m.cap, 8192);	/* and not half empty: 5000 ids in 8192 slots, not 16384 */
	for (uint64_t id = 1; id <= 5000; id++)
		ASSERT(idmap__get(&m, id * 0x10001, &v) && v == id);
	ASSERT(!idmap__get(&m, 3, &v));
	ASSERT(idmap__put(&m, 0, 1) != 0);	/* 0 marks an empty slot */
	ASSERT(idmap__put(&m, 0x10001, 77) == 0 && m.nr == 5000);
	ASSERT(idmap__get(&m, 0x10001, &v) && v == 77);
	idmap__clear(&m);
	ASSERT(m.nr == 0 && !idmap__get(&m, 0x10001, NULL));
	idmap__free(&m);
	return true;
}

static struct stack_trace *native(uint32_t nr, uint64_t first)
{
	struct stack_trace *st = calloc(1, sizeof(*st));

	st->nr = nr;
	for (uint32_t i = 0; i < nr; i++)
		st->ips[i] = first + i;
	return st;
}

TEST(retired_sites_add_up_and_stacks_read_back)
{
	struct retired *r = retired__new();
	struct stack_trace *st = native(5, 0x1000);
	struct py_stack *py = calloc(1, sizeof(*py)), *got_py = calloc(1, sizeof(*got_py));
	uint64_t ips[MEMLEAK_MAX_STACK_DEPTH];
	struct stack_pair pair = { .native = 11, .python = 22 }, got;
	const struct retired_site *s;
	struct stack_blob *b, *shared;

	/* One site reclaimed twice: its figures add up. */
	ASSERT(retired__add_site(r, 11, API_MALLOC, 480, 10) == 0);
	ASSERT(retired__add_site(r, 11, API_CALLOC, 7, 1) == 0);
	ASSERT(retired__add_site(r, 11, API_MALLOC, 48, 1) == 0);
	s = retired__site(r, 11, API_MALLOC);
	ASSERT(s && s->total_allocs == 11 && s->total_bytes == 528);
	ASSERT(retired__nr_sites(r) == 2 && !retired__site(r, 12, API_MALLOC));
	/* Stacks by kind: a native stack, a Python one, a pair. */
	ASSERT(retired__keep_native(r, 11, st, NULL) == 0);
	py->nr = 2;
	py->entries = 2;
	py->frames[1].code = 0xc0de;
	ASSERT(retired__keep_python(r, 22, py, NULL) == 0);
	ASSERT(retired__keep_pair(r, 33, &pair) == 0);
	b = retired__native(r, 11);
	ASSERT(b && b->id == 11 && b->nr_ips == 5 && b->flags == 0);
	ASSERT(stack_blob__ips(b, ips, MEMLEAK_MAX_STACK_DEPTH) == 5 && ips[4] == 0x1004);
	ASSERT(!retired__native(r, 22));	/* a Python id is not a native one */
	b = retired__python(r, 22);
	ASSERT(b && stack_blob__py(b, got_py) && got_py->nr == 2 && got_py->entries == 2 &&
	       got_py->frames[1].code == 0xc0de);
	ASSERT(retired__pair(r, 33, &got) && got.native == 11 && got.python == 22);
	ASSERT(retired__nr_stacks(r) == 2);
	/* A blob the stack cache has is shared, not copied: held once more, let go of with the store. */
	shared = stack_blob__new(44, &(struct stack_copy){ .ips = (uint64_t *)st->ips, .nr_ips = 5 });
	ASSERT(retired__keep_native(r, 44, st, shared) == 0);
	ASSERT(retired__native(r, 44) == shared && shared->refs == 2);
	ASSERT(retired__keep_native(r, 44, st, shared) == 0 && shared->refs == 2);	/* once */
	free(st);
	free(py);
	free(got_py);
	retired__free(r);
	ASSERT(shared->refs == 1);
	stack_blob__put(shared);
	return true;
}

TEST(retired_trim_forgets_the_least_used_frames_and_keeps_the_figures)
{
	struct retired *r = retired__new();
	uint64_t sites, allocs, bytes, kept = 0;

	/* 100 stacks of 100 frames, one sweep each, one allocation each... */
	for (uint64_t id = 1; id <= 100; id++) {
		struct stack_trace *st = native(100, id << 16);

		retired__next_sweep(r);
		ASSERT(retired__keep_native(r, id, st, NULL) == 0);
		ASSERT(retired__add_site(r, id, API_MALLOC, 10, 1) == 0);
		free(st);
	}
	/* ...but the first ten churned a thousand times more. */
	for (uint64_t id = 1; id <= 10; id++)
		ASSERT(retired__add_site(r, id, API_MALLOC, 10000, 1000) == 0);
	/* Room for about 40 of them: a quarter under that is kept. */
	ASSERT(retired__trim(r, 40 * (32 + 840)) == 0);
	ASSERT(retired__nr_stacks(r) < 40 && retired__nr_stacks(r) >= 25);
	for (uint64_t id = 1; id <= 10; id++)
		ASSERT(retired__native(r, id) && retired__site(r, id, API_MALLOC));
	ASSERT(retired__native(r, 100));	/* then the latest of the rest */
	ASSERT(!retired__native(r, 11) && !retired__site(r, 11, API_MALLOC));
	/* What was forgotten is in the figures still: 10,100 allocations in all. */
	retired__forgotten(r, &sites, &allocs, &bytes);
	for (size_t i = 0; i < retired__nr_sites(r); i++)
		kept += retired__site_at(r, i)->total_allocs;
	ASSERT_EQ_U64(kept + allocs, 10100);
	ASSERT_EQ_U64(bytes, 10 * allocs);
	ASSERT_EQ_U64(sites + retired__nr_sites(r), 100);
	retired__free(r);
	return true;
}

/*
 * Folding: a site the report took in goes to the forgotten figures, and so
 * do the stacks none kept names, once let go of at an earlier sweep; its
 * figures come back with it, whether it retires again or is read live.
 */
/*
 * A reading that holds the ids of *ctx (a struct held_by): what
 * retired__fold_end asks of it, each id going noted in asked.
 */
struct held_by {
	const struct idmap *holds;
	bool note;	/* each id asked into asked */
	struct idmap asked;
	int calls;
};

static int held_of(void *ctx, const struct idmap *going, struct idmap *held)
{
	struct held_by *h = ctx;

	h->calls++;
	for (size_t i = 0; i < going->cap; i++) {
		uint64_t id = going->keys[i];

		if (id && ((h->note && idmap__put(&h->asked, id, 0)) ||
			   (idmap__get(h->holds, id, NULL) && idmap__put(held, id, 0))))
			return -ENOMEM;
	}
	return 0;
}

TEST(retired_folds_and_takes_figures_back)
{
	struct retired *r = retired__new();
	struct stack_trace *st = native(3, 0x2000);
	struct idmap keep = {}, none = {};
	const struct retired_site *s;
	uint64_t sites, allocs, bytes;

	retired__next_sweep(r);
	ASSERT(retired__add_site(r, 31, API_MALLOC, 96, 2) == 0);
	ASSERT(retired__add_site(r, 32, API_MALLOC, 10, 1) == 0);
	ASSERT(retired__add_site(r, 33, API_MALLOC, 5, 1) == 0);
	ASSERT(retired__keep_native(r, 31, st, NULL) == 0);
	ASSERT(retired__keep_native(r, 32, st, NULL) == 0);
	ASSERT(retired__keep_native(r, 33, st, NULL) == 0);
	retired__next_sweep(r);
	ASSERT(retired__keep_native(r, 34, st, NULL) == 0);	/* let go of at this sweep */
	retired__named(r, &none);	/* whose walk named none of them */
	/* Figures other than those the report took in: it allocated since, it stays. */
	ASSERT(!retired__fold_site(r, 31, API_MALLOC, 48, 1));
	ASSERT(!retired__fold_site(r, 31, API_CALLOC, 96, 2));
	ASSERT(retired__fold_site(r, 31, API_MALLOC, 96, 2));
	ASSERT(retired__fold_site(r, 32, API_MALLOC, 10, 1));
	/* A cancelled fold leaves all as it was. */
	retired__fold_cancel(r);
	ASSERT(retired__fold_end(r, held_of, &(struct held_by){ .holds = &keep }) == 0);
	ASSERT(retired__nr_sites(r) == 3 && retired__nr_folded(r) == 0);
	ASSERT(retired__fold_site(r, 31, API_MALLOC, 96, 2));
	ASSERT(retired__fold_site(r, 32, API_MALLOC, 10, 1));
	ASSERT(idmap__put(&keep, 32, 0) == 0);	/* a live site of the report holds stack 32 */
	ASSERT(retired__fold_end(r, held_of, &(struct held_by){ .holds = &keep }) == 0);
	ASSERT(retired__nr_sites(r) == 1 && retired__nr_folded(r) == 2);
	ASSERT(!retired__site(r, 31, API_MALLOC) && retired__site(r, 33, API_MALLOC));
	retired__forgotten(r, &sites, &allocs, &bytes);
	ASSERT(sites == 2 && allocs == 3 && bytes == 106);
	/* 31 named by no one goes; 32 kept, 33 named by a site, 34 let go of now: they stay. */
	ASSERT(!retired__native(r, 31) && retired__native(r, 32) && retired__native(r, 33) &&
	       retired__native(r, 34));
	/* Back with a live slot: a retired entry again, with the figures it had. */
	ASSERT(retired__unfold(r, 31, API_MALLOC) == 0);
	s = retired__site(r, 31, API_MALLOC);
	ASSERT(s && s->total_allocs == 2 && s->total_bytes == 96 && s->folded_allocs == 2);
	ASSERT(retired__unfold(r, 31, API_MALLOC) == 0 && retired__site(r, 31, API_MALLOC)->total_allocs == 2);
	/* Retiring again: its new figures on top of those. */
	ASSERT(retired__add_site(r, 32, API_MALLOC, 20, 2) == 0);
	s = retired__site(r, 32, API_MALLOC);
	ASSERT(s && s->total_allocs == 3 && s->total_bytes == 30 && s->folded_bytes == 10);
	retired__forgotten(r, &sites, &allocs, &bytes);
	ASSERT(sites == 0 && allocs == 0 && bytes == 0 && retired__nr_folded(r) == 0);
	/* Folded again: its whole figures, the ones it took back among them. */
	ASSERT(retired__fold_site(r, 32, API_MALLOC, 30, 3) &&
	       retired__fold_end(r, held_of, &(struct held_by){ .holds = &keep }) == 0);
	retired__forgotten(r, &sites, &allocs, &bytes);
	ASSERT(sites == 1 && allocs == 3 && bytes == 30);
	idmap__free(&keep);
	retired__free(r);
	free(st);
	return true;
}

/*
 * A site made while a sweep ran, after its walk passed the slot, names
 * what that sweep let go of, and BPF does not send it again: it stays
 * until a later sweep's walk names no live site of it (retired__named),
 * pairs as stacks, though their stacks are kept elsewhere (the stack
 * ring's store). Named again by a live site, it stays the latest.
 */
TEST(retired_fold_keeps_what_no_later_sweep_found_unnamed)
{
	struct retired *r = retired__new();
	struct stack_trace *st = native(3, 0x3000);
	struct stack_pair old_pair = { .native = 51, .python = 52 };
	struct stack_pair new_pair = { .native = 61, .python = 62 };
	struct stack_pair out;
	struct idmap keep = {}, named = {};

	retired__next_sweep(r);
	ASSERT(retired__keep_native(r, 41, st, NULL) == 0);
	ASSERT(retired__keep_pair(r, 50, &old_pair) == 0);
	retired__named(r, &named);
	retired__next_sweep(r);
	ASSERT(retired__keep_native(r, 42, st, NULL) == 0);
	ASSERT(retired__keep_pair(r, 60, &new_pair) == 0);	/* its stacks in the ring's store */
	ASSERT(idmap__put(&named, 41, 0) == 0);	/* a site made during the first sweep */
	retired__named(r, &named);
	ASSERT(retired__add_site(r, 44, API_MALLOC, 8, 1) == 0);
	ASSERT(retired__fold_site(r, 44, API_MALLOC, 8, 1));
	ASSERT(retired__fold_end(r, held_of, &(struct held_by){ .holds = &keep }) == 0);
	ASSERT(retired__native(r, 41) && retired__native(r, 42) && !retired__pair(r, 50, &out));
	ASSERT(retired__pair(r, 60, &out) && out.native == 61 && out.python == 62);
	/* The next sweep names the pair alone: the stacks go, the pair stays. */
	idmap__clear(&named);
	ASSERT(idmap__put(&named, 60, 0) == 0);
	retired__next_sweep(r);
	retired__named(r, &named);
	ASSERT(retired__add_site(r, 45, API_MALLOC, 8, 1) == 0);
	ASSERT(retired__fold_site(r, 45, API_MALLOC, 8, 1));
	ASSERT(retired__fold_end(r, held_of, &(struct held_by){ .holds = &keep }) == 0);
	ASSERT(!retired__native(r, 41) && !retired__native(r, 42) && retired__pair(r, 60, &out));
	idmap__free(&named);
	idmap__free(&keep);
	retired__free(r);
	free(st);
	return true;
}

/*
 * A fold asks the reading only of the stacks and pairs that would go (let
 * go of before the last sweep that named, named by no site kept here nor
 * then), and not at all when none was let go of before it: each fold
 * asked a torch job's 200,000 sites of every id they hold. What the
 * reading holds stays, the others go.
 */
TEST(retired_fold_asks_the_reading_of_what_goes_only)
{
	struct retired *r = retired__new();
	struct stack_trace *st = native(3, 0x4000);
	struct stack_pair pair = { .native = 81, .python = 82 }, out;
	struct idmap none = {}, holds = {};
	struct held_by hb = { .holds = &holds, .note = true };

	retired__next_sweep(r);
	ASSERT(retired__keep_native(r, 71, st, NULL) == 0);
	ASSERT(retired__keep_native(r, 72, st, NULL) == 0);
	ASSERT(retired__keep_native(r, 73, st, NULL) == 0);
	ASSERT(retired__keep_pair(r, 80, &pair) == 0);
	ASSERT(retired__add_site(r, 71, API_MALLOC, 8, 1) == 0);	/* names 71 */
	retired__named(r, &none);	/* all let go of at this sweep: none goes yet */
	ASSERT(retired__fold_end(r, held_of, &hb) == 0);
	ASSERT(hb.calls == 0 && retired__nr_stacks(r) == 3);
	retired__next_sweep(r);
	retired__named(r, &none);	/* now all before it, none named by it */
	ASSERT(idmap__put(&holds, 73, 0) == 0);
	ASSERT(retired__fold_end(r, held_of, &hb) == 0);
	ASSERT(hb.calls == 1 && hb.asked.nr == 3);
	ASSERT(idmap__get(&hb.asked, 72, NULL) && idmap__get(&hb.asked, 73, NULL) &&
	       idmap__get(&hb.asked, 80, NULL) && !idmap__get(&hb.asked, 71, NULL));
	ASSERT(retired__native(r, 71) && !retired__native(r, 72) && retired__native(r, 73) &&
	       !retired__pair(r, 80, &out));
	/* Without held, every stack stays, and nothing is asked. */
	idmap__clear(&holds);
	ASSERT(retired__fold_end(r, NULL, NULL) == 0 && retired__native(r, 73));
	idmap__free(&hb.asked);
	idmap__free(&holds);
	retired__free(r);
	free(st);
	return true;
}

/*
 * What names an old stack keeps it: a site kept here, directly or through
 * its pair (whose stacks stay with it), and a pair let go of since the
 * last sweep that named (it serves, and so do its stacks). The others go.
 */
TEST(retired_fold_keeps_what_sites_and_serving_pairs_name)
{
	struct retired *r = retired__new();
	struct stack_trace *st = native(3, 0x5000);
	struct stack_pair by_site = { .native = 91, .python = 0 }, fresh = { .native = 93 };
	struct stack_pair out;
	struct idmap none = {}, holds = {};

	retired__next_sweep(r);
	ASSERT(retired__keep_native(r, 91, st, NULL) == 0);
	ASSERT(retired__keep_native(r, 92, st, NULL) == 0);
	ASSERT(retired__keep_native(r, 93, st, NULL) == 0);
	ASSERT(retired__keep_native(r, 94, st, NULL) == 0);
	ASSERT(retired__keep_pair(r, 90, &by_site) == 0);
	ASSERT(retired__add_site(r, 90, API_MALLOC, 8, 1) == 0);	/* names pair 90, so 91 */
	ASSERT(retired__add_site(r, 92, API_CALLOC, 8, 1) == 0);	/* names 92 */
	retired__next_sweep(r);
	ASSERT(retired__keep_pair(r, 95, &fresh) == 0);	/* serves: names 93 */
	retired__named(r, &none);
	ASSERT(retired__fold_end(r, held_of, &(struct held_by){ .holds = &holds }) == 0);
	ASSERT(retired__pair(r, 90, &out) && out.native == 91 && retired__pair(r, 95, &out));
	ASSERT(retired__native(r, 91) && retired__native(r, 92) && retired__native(r, 93) &&
	       !retired__native(r, 94));
	idmap__free(&holds);
	retired__free(r);
	free(st);
	return true;
}

/* The n-th entry by allocations, then bytes: a floor for the churn's cut-off. */
TEST(retired_nth_most_by_allocations_then_bytes)
{
	struct retired *r = retired__new();
	uint64_t allocs, bytes;

	ASSERT(!retired__nth_most(r, 1, &allocs, &bytes));
	for (uint64_t i = 1; i <= 100; i++)
		ASSERT(retired__add_site(r, 1000 + i, API_MALLOC, 8 * (i % 7), i % 50 + 1) == 0);
	/* Allocations 50 twice (i = 49, 99), 49 twice (48, 98), ...: bytes break the ties. */
	ASSERT(retired__nth_most(r, 1, &allocs, &bytes) && allocs == 50 && bytes == 8 * (99 % 7));
	ASSERT(retired__nth_most(r, 2, &allocs, &bytes) && allocs == 50 && bytes == 8 * (49 % 7));
	ASSERT(retired__nth_most(r, 20, &allocs, &bytes) && allocs == 41);
	ASSERT(retired__nth_most(r, 64, &allocs, &bytes) && allocs == 19);
	ASSERT(!retired__nth_most(r, 65, &allocs, &bytes));	/* past RETIRED_NTH_MAX */
	retired__free(r);
	return true;
}
