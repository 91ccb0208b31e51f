// SPDX-License-Identifier: GPL-2.0
/* util/idmap.c: ids to values, and the one-probe insert of an id not there. */
#include <errno.h>
#include <stdint.h>
#include "util/idmap.h"
#include "unit.h"

/*
 * idmap__put_new sets only ids that have no value, and says which: across
 * the map's growths every id keeps its first value, and the count is of
 * distinct ids.
 */
TEST(idmap_put_new_sets_only_new_ids_across_growths)
{
	struct idmap m = {};
	uint32_t v;

	ASSERT(idmap__put_new(&m, 0, 1) == -EINVAL);
	for (uint32_t i = 1; i <= 5000; i++) {
		/* Each id twice, the second time with another value: it keeps the first. */
		uint64_t id = (uint64_t)i * 0x9e3779b97f4a7c15ull;

		ASSERT(idmap__put_new(&m, id, i) == 1);
		ASSERT(idmap__put_new(&m, id, i + 1) == 0);
		if (i % 7 == 0)
			ASSERT(idmap__put_new(&m, (uint64_t)(i / 7) * 0x9e3779b97f4a7c15ull, 0) == 0);
	}
	ASSERT_EQ_U64(m.nr, 5000);
	for (uint32_t i = 1; i <= 5000; i++)
		ASSERT(idmap__get(&m, (uint64_t)i * 0x9e3779b97f4a7c15ull, &v) && v == i);
	ASSERT(!idmap__get(&m, 12345, NULL));
	idmap__free(&m);
	return true;
}

/*
 * idmap__reserve makes room for nr ids at once: the puts that follow do not
 * grow the map (its arrays stay where they are), every id keeps its value,
 * and a reserve below what the map holds changes nothing.
 */
TEST(idmap_reserve_holds_nr_ids_without_growing)
{
	struct idmap m = {};
	const uint64_t *keys;
	size_t cap;
	uint32_t v;

	ASSERT(!idmap__put(&m, 7, 70));
	ASSERT(!idmap__reserve(&m, 100000));
	cap = m.cap;
	keys = m.keys;
	ASSERT(4 * 100000 <= 3 * cap);
	ASSERT(idmap__get(&m, 7, &v) && v == 70);
	for (uint32_t i = 1; i < 100000; i++)
		ASSERT(!idmap__put(&m, (uint64_t)i * 0x9e3779b97f4a7c15ull, i));
	ASSERT_EQ_U64(m.cap, cap);
	ASSERT(m.keys == keys);
	ASSERT_EQ_U64(m.nr, 100000);
	for (uint32_t i = 1; i < 100000; i++)
		ASSERT(idmap__get(&m, (uint64_t)i * 0x9e3779b97f4a7c15ull, &v) && v == i);
	ASSERT(idmap__get(&m, 7, &v) && v == 70);
	ASSERT(!idmap__reserve(&m, 10));
	ASSERT_EQ_U64(m.cap, cap);
	idmap__free(&m);
	return true;
}

/*
 * idmap__reset forgets every id and fits the room to what will come: two
 * thirds full at most, so that as many puts grow nothing; a map whose ids
 * fell far gives the rest back.
 */
TEST(idmap_reset_fits_the_room_to_the_ids)
{
	struct idmap m = { 0 };
	size_t big;
	uint32_t v;

	for (uint32_t i = 1; i <= 10000; i++)
		ASSERT(idmap__put(&m, i * 0x9e3779b97f4a7c15ull, i) == 0);
	big = idmap__bytes(&m);
	ASSERT(idmap__reset(&m, 100) == 0);
	ASSERT(m.nr == 0 && m.cap == 256 && idmap__bytes(&m) * 64 == big);
	ASSERT(!idmap__get(&m, 5 * 0x9e3779b97f4a7c15ull, NULL));
	for (uint32_t i = 1; i <= 170; i++)
		ASSERT(idmap__put(&m, i, i) == 0);
	ASSERT(m.cap == 256 && idmap__get(&m, 170, &v) && v == 170);
	/* The same room: cleared in place; nor grown for ids it holds under three quarters full. */
	ASSERT(idmap__reset(&m, 150) == 0 && m.cap == 256 && m.nr == 0 && !idmap__get(&m, 1, NULL));
	ASSERT(idmap__reset(&m, 180) == 0 && m.cap == 256);
	ASSERT(idmap__reset(&m, 200) == 0 && m.cap == 512);
	ASSERT(idmap__reset(&m, 0) == 0 && m.cap == 0 && !idmap__get(&m, 1, NULL));
	ASSERT(idmap__put(&m, 7, 3) == 0 && idmap__get(&m, 7, &v) && v == 3);
	idmap__free(&m);
	return true;
}

/*
 * idmap__del forgets one id and moves back those that probed past it: in
 * a small map, crowded (three quarters full, with long runs that wrap
 * round its end), every id deleted is gone, every other keeps its value,
 * at every step, and the room stays. Ids 1..n * 64 collide in the low
 * bits before the mix, so the runs are the mix's, as in use.
 */
TEST(idmap_del_keeps_the_others_findable)
{
	struct idmap m = {};
	const uint32_t n = 3000;
	size_t cap;
	uint32_t v;

	ASSERT(!idmap__del(&m, 5));
	for (uint32_t i = 1; i <= n; i++)
		ASSERT(!idmap__put(&m, (uint64_t)i << 6, i));
	cap = m.cap;
	ASSERT(!idmap__del(&m, 0) && !idmap__del(&m, 12345));
	/* Every third id, then every other one left, in an order unlike the puts'. */
	for (uint32_t pass = 0; pass < 2; pass++) {
		for (uint32_t i = n; i >= 1; i--) {
			bool gone = pass ? i % 3 != 0 && i % 2 == 0 : i % 3 == 0;

			if (gone)
				ASSERT(idmap__del(&m, (uint64_t)i << 6));
		}
		for (uint32_t i = 1; i <= n; i++) {
			bool gone = i % 3 == 0 || (pass && i % 2 == 0);

			ASSERT(idmap__get(&m, (uint64_t)i << 6, &v) == !gone);
			ASSERT(gone || v == i);
		}
	}
	ASSERT_EQ_U64(m.nr, n - n / 3 - (n / 2 - n / 6));
	ASSERT_EQ_U64(m.cap, cap);
	/* Deleted ids come back as new ones. */
	ASSERT(idmap__put_new(&m, 3 << 6, 33) == 1 && idmap__get(&m, 3 << 6, &v) && v == 33);
	idmap__free(&m);
	return true;
}

/* Every entry once, with its value; none from an empty map. */
TEST(idmap_next_visits_each_entry_once)
{
	struct idmap m = {};
	const uint32_t n = 500;
	uint64_t id, sum = 0;
	size_t pos = 0, seen = 0;
	uint32_t v;

	ASSERT(!idmap__next(&m, &pos, &id, &v));
	for (uint32_t i = 1; i <= n; i++)
		ASSERT(!idmap__put(&m, (uint64_t)i * 7919, i));
	ASSERT(idmap__del(&m, 7919));	/* 1 gone */
	for (pos = 0; idmap__next(&m, &pos, &id, &v); seen++) {
		ASSERT(id == (uint64_t)v * 7919 && v >= 2 && v <= n);
		sum += v;
	}
	ASSERT_EQ_U64(seen, n - 1);
	ASSERT_EQ_U64(sum, (uint64_t)n * (n + 1) / 2 - 1);
	ASSERT(!idmap__next(&m, &pos, NULL, NULL));
	idmap__free(&m);
	return true;
}
