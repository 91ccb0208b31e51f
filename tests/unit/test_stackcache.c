// SPDX-License-Identifier: GPL-2.0
/* model/stackcache.c: stacks kept from one reading of the maps to the next. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "model/stackcache.h"
#include "unit.h"

static struct stack_copy stack_of(uint64_t *ips, uint32_t nr, struct py_stack *py)
{
	for (uint32_t i = 0; i < nr; i++)
		ips[i] = 0x400000 + 16 * i;
	return (struct stack_copy){ .ips = ips, .nr_ips = nr, .flags = STACK_TRUNCATED, .py = py };
}

/* The cache's ref of site id (the cache holding it, the caller not). */
static struct stack_ref put(struct stackcache *c, uint64_t id, struct stack_blob *native,
			    struct stack_blob *python)
{
	struct stack_ref ref = { .native = native, .python = python, .proc = (uint32_t)id };

	if (stackcache__put(c, id, &ref))
		ref.native = NULL;
	stack_ref__put(&ref);
	return ref;
}

TEST(stack_blob_copies_right_sized_and_is_shared)
{
	struct py_stack *py = calloc(1, sizeof(*py)), *got = calloc(1, sizeof(*got));
	uint64_t ips[8];
	struct stack_copy s = stack_of(ips, 8, py);
	struct stack_blob *b;

	py->nr = 3;
	py->frames[2].code = 0xc0de;
	b = stack_blob__new(5, &s);
	ASSERT(b && b->id == 5);
	memset(ips, 0, sizeof(ips));	/* the blob has its own copy */
	py->frames[2].code = 0;
	ASSERT(b->nr_ips == 8 && b->flags == STACK_TRUNCATED);
	ASSERT(stack_blob__ips(b, ips, MEMLEAK_MAX_STACK_DEPTH) == 8);
	for (uint32_t i = 0; i < 8; i++)
		ASSERT_EQ_U64(ips[i], 0x400000 + 16 * i);
	ASSERT(stack_blob__ips(b, ips, 3) == 3);	/* the innermost only, when asked */
	ASSERT(stack_blob__py(b, got) == got && got->nr == 3 && got->frames[2].code == 0xc0de);
	/* Its flat size counts 3 Python frames, not MEMLEAK_PY_MAX_FRAMES. */
	ASSERT_EQ_U64(stack_blob__size(b), 32 + sizeof(b->python[0]));
	ASSERT_EQ_U64(stack_blob__flat_size(b), stack_blob__size(b) + 8 * sizeof(uint64_t) +
		      offsetof(struct py_stack, frames) + 3 * sizeof(struct py_frame));
	ASSERT(stack_blob__hold(b) == b && b->refs == 2);
	stack_blob__put(b);
	ASSERT(b->refs == 1);
	stack_blob__put(b);	/* freed: ASan's build would see a leak otherwise */
	stack_blob__put(NULL);
	stack_blob__prefetch(NULL);
	free(py);
	free(got);
	return true;
}

TEST(stackcache_lends_and_lets_go_what_a_reading_did_not_use)
{
	struct stackcache *c = stackcache__new();
	uint64_t ips[4];
	struct stack_copy s = stack_of(ips, 4, NULL);
	struct stack_ref lent, ref;

	stackcache__begin(c);
	for (uint64_t id = 1; id <= 1000; id++)
		ASSERT(put(c, id, stack_blob__new(id, &s), NULL).native);
	ASSERT(stackcache__get(c, 7, &ref) && ref.proc == 7);
	ASSERT(stackcache__put(c, 7, &ref) == 0 && stackcache__nr(c) == 1000);	/* kept once */
	stack_ref__put(&ref);
	stackcache__end(c);
	ASSERT_EQ_U64(stackcache__nr(c), 1000);
	/* The next reading uses the even ids only: the odd ones go. */
	stackcache__begin(c);
	for (uint64_t id = 2; id <= 1000; id += 2) {
		ASSERT(stackcache__get(c, id, &ref));
		stack_ref__put(&ref);
	}
	ASSERT(stackcache__get(c, 998, &lent) && lent.native->refs == 2 && !lent.python);
	stackcache__end(c);
	ASSERT_EQ_U64(stackcache__nr(c), 500);
	ASSERT(!stackcache__get(c, 3, &ref) && !stackcache__native(c, 3));
	ASSERT(stackcache__native(c, 4) && stackcache__native(c, 4)->id == 4);
	/* A reading that uses none lets go of all; a lent copy outlives the cache's hold. */
	stackcache__begin(c);
	stackcache__end(c);
	ASSERT_EQ_U64(stackcache__nr(c), 0);
	ASSERT(!stackcache__native(c, 998));
	ASSERT(lent.native->refs == 1 && stack_blob__ips(lent.native, ips, 4) == 4 &&
	       ips[3] == 0x400000 + 48);
	stack_ref__put(&lent);
	stackcache__free(c);
	return true;
}

/*
 * A reading that keeps few of many stacks (a torch job's import over: from
 * 420,000 to 270,000) leaves the cache's entries and indexes the size of
 * what it keeps, not of what it held.
 */
TEST(stackcache_gives_back_the_room_of_stacks_let_go)
{
	struct stackcache *c = stackcache__new();
	uint64_t ips[4];
	struct stack_copy s = stack_of(ips, 4, NULL);
	struct stack_ref ref;
	size_t full;

	stackcache__begin(c);
	for (uint64_t id = 1; id <= 20000; id++)
		ASSERT(put(c, id, stack_blob__new(id, &s), NULL).native);
	stackcache__end(c);
	full = stackcache__bytes(c);
	stackcache__begin(c);
	for (uint64_t id = 1; id <= 100; id++) {
		ASSERT(stackcache__get(c, id, &ref));
		stack_ref__put(&ref);
	}
	stackcache__end(c);
	ASSERT_EQ_U64(stackcache__nr(c), 100);
	/* 100 entries of 32 bytes and two maps of 256 slots: not 20,000's room. */
	ASSERT(stackcache__bytes(c) < full / 50);
	ASSERT(stackcache__native(c, 100) && !stackcache__native(c, 101));
	/* And it grows again as before. */
	stackcache__begin(c);
	for (uint64_t id = 30001; id <= 31000; id++)
		ASSERT(put(c, id, stack_blob__new(id, &s), NULL).native);
	ASSERT(stackcache__get(c, 30500, &ref) && ref.native->id == 30500);
	stack_ref__put(&ref);
	stackcache__end(c);
	ASSERT_EQ_U64(stackcache__nr(c), 1000);
	stackcache__free(c);
	return true;
}

/*
 * A reading that puts many new stacks and lets go of others (a torch
 * job's import) leaves room in the indexes for as many new ones: the next
 * reading's do not grow them again (only their blobs add bytes).
 */
TEST(stackcache_keeps_room_for_a_reading_of_new_stacks)
{
	struct stackcache *c = stackcache__new();
	uint64_t ips[4];
	struct stack_copy s = stack_of(ips, 4, NULL);
	struct stack_ref ref;
	size_t before, blob;

	stackcache__begin(c);
	for (uint64_t id = 1; id <= 20000; id++)
		ASSERT(put(c, id, stack_blob__new(id, &s), NULL).native);
	stackcache__end(c);
	/* Half of them used, 10,000 new. */
	stackcache__begin(c);
	for (uint64_t id = 1; id <= 10000; id++) {
		ASSERT(stackcache__get(c, id, &ref));
		stack_ref__put(&ref);
	}
	for (uint64_t id = 100001; id <= 110000; id++)
		ASSERT(put(c, id, stack_blob__new(id, &s), NULL).native);
	stackcache__end(c);
	ASSERT_EQ_U64(stackcache__nr(c), 20000);
	before = stackcache__bytes(c);
	/* All used, 10,000 new again: their blobs, and no room more. */
	stackcache__begin(c);
	for (uint64_t id = 1; id <= 110000; id++) {
		if (id > 10000 && id <= 100000)
			continue;
		ASSERT(stackcache__get(c, id, &ref));
		stack_ref__put(&ref);
	}
	blob = stack_blob__size(put(c, 200001, stack_blob__new(200001, &s), NULL).native);
	for (uint64_t id = 200002; id <= 210000; id++)
		ASSERT(put(c, id, stack_blob__new(id, &s), NULL).native);
	ASSERT_EQ_U64(stackcache__bytes(c) - before, 10000 * blob);
	ASSERT(stackcache__native(c, 110000) && stackcache__native(c, 210000) &&
	       !stackcache__native(c, 20000));
	stackcache__end(c);
	ASSERT_EQ_U64(stackcache__nr(c), 30000);
	stackcache__free(c);
	return true;
}

TEST(stackcache_shares_frames_between_sites)
{
	struct stackcache *c = stackcache__new();
	struct py_stack *py = calloc(1, sizeof(*py));
	uint64_t ips[4];
	struct stack_copy s = stack_of(ips, 4, NULL);
	struct stack_blob *native, *python;
	size_t one;

	py->nr = 2;
	stackcache__begin(c);
	native = stack_blob__new(40, &s);
	python = stack_blob__new(50, &(struct stack_copy){ .py = py });
	/* Three sites of one native stack, the last two with the same Python frames. */
	put(c, 100, stack_blob__hold(native), NULL);
	put(c, 101, stack_blob__hold(native), stack_blob__hold(python));
	one = stackcache__bytes(c);
	put(c, 102, native, python);
	ASSERT(stackcache__native(c, 40) == native && stackcache__python(c, 50) == python);
	ASSERT(native->refs == 3 && python->refs == 2);
	/* The frames are counted once: a third site adds no blob's bytes. */
	ASSERT_EQ_U64(stackcache__bytes(c), one);
	stackcache__end(c);
	/* A reading using only the second keeps the native frames, still indexed. */
	stackcache__begin(c);
	{
		struct stack_ref ref;

		ASSERT(stackcache__get(c, 101, &ref));
		stack_ref__put(&ref);
	}
	stackcache__end(c);
	ASSERT(stackcache__nr(c) == 1 && stackcache__native(c, 40) == native && native->refs == 1);
	ASSERT(stackcache__python(c, 50) == python && python->refs == 1);
	stackcache__free(c);
	free(py);
	return true;
}

TEST(stack_blob_same_ips_compares_every_frame_and_the_flags)
{
	uint64_t ips[6], other[6];
	struct stack_copy s = stack_of(ips, 6, NULL), t;
	struct stack_blob *b = stack_blob__new(9, &s);

	ASSERT(b && stack_blob__same(b, &s));
	for (uint32_t i = 0; i < 6; i++) {
		memcpy(other, ips, sizeof(ips));
		other[i] ^= 1ull << 40;	/* one frame differs, anywhere */
		t = s;
		t.ips = other;
		ASSERT(!stack_blob__same(b, &t));
	}
	t = s;
	t.nr_ips = 5;	/* its innermost five only */
	ASSERT(!stack_blob__same(b, &t));
	t = s;
	t.flags = 0;
	ASSERT(!stack_blob__same(b, &t));
	stack_blob__put(b);
	return true;
}

TEST(stack_blob_same_python_frames_compares_each)
{
	struct py_stack *py = calloc(1, sizeof(*py)), *other = calloc(1, sizeof(*other));
	struct stack_blob *b;

	py->nr = 3;
	py->entries = 4;
	for (uint32_t i = 0; i < 3; i++)
		py->frames[i] = (struct py_frame){ 0xc0de + i, 0x1000 + i, 0x2000 + i, i };
	b = stack_blob__new(7, &(struct stack_copy){ .py = py });
	ASSERT(b && stack_blob__same(b, &(struct stack_copy){ .py = py }));
	for (uint32_t i = 0; i < 3; i++) {
		memcpy(other, py, sizeof(*py));
		other->frames[i].born ^= 1;	/* one field of one frame differs */
		ASSERT(!stack_blob__same(b, &(struct stack_copy){ .py = other }));
	}
	memcpy(other, py, sizeof(*py));
	other->entries = 5;
	ASSERT(!stack_blob__same(b, &(struct stack_copy){ .py = other }));
	ASSERT_EQ_U64(stackcache__py_size(3), offsetof(struct py_stack, frames) + 3 * sizeof(struct py_frame));
	ASSERT(stackcache__py_size(1000) == sizeof(struct py_stack));
	stack_blob__put(b);
	free(py);
	free(other);
	return true;
}
