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

TEST(stack_blob_copies_right_sized_and_is_shared)
{
	struct py_stack *py = calloc(1, sizeof(*py));
	uint64_t ips[8];
	struct stack_copy s = stack_of(ips, 8, py);
	struct stack_blob *b;

	py->nr = 3;
	py->frames[2].code = 0xc0de;
	b = stack_blob__new(&s);
	ASSERT(b);
	memset(ips, 0, sizeof(ips));	/* the blob has its own copy */
	py->frames[2].code = 0;
	ASSERT(b->s.nr_ips == 8 && b->s.flags == STACK_TRUNCATED);
	ASSERT_EQ_U64(b->s.ips[7], 0x400000 + 16 * 7);
	ASSERT(b->s.py && b->s.py->nr == 3 && b->s.py->frames[2].code == 0xc0de);
	/* The Python copy holds its 3 frames, not MEMLEAK_PY_MAX_FRAMES. */
	ASSERT_EQ_U64(stackcache__py_size(3),
		      offsetof(struct py_stack, frames) + 3 * sizeof(struct py_frame));
	ASSERT(stackcache__py_size(1000) == sizeof(struct py_stack));
	ASSERT(stack_blob__hold(b) == b && b->refs == 2);
	stack_blob__put(b);
	ASSERT(b->refs == 1);
	stack_blob__put(b);	/* freed: ASan's build would see a leak otherwise */
	stack_blob__put(NULL);
	free(py);
	return true;
}

TEST(stackcache_lends_and_lets_go_what_a_reading_did_not_use)
{
	struct stackcache *c = stackcache__new();
	uint64_t ips[4];
	struct stack_copy s = stack_of(ips, 4, NULL);
	struct stack_blob *b, *lent;

	stackcache__begin(c);
	for (uint64_t id = 1; id <= 1000; id++) {
		b = stack_blob__new(&s);
		ASSERT(b && stackcache__put(c, id, b) == 0);
		stack_blob__put(b);
	}
	ASSERT(stackcache__put(c, 7, b) == 0 && stackcache__nr(c) == 1000);	/* kept once */
	stackcache__end(c);
	ASSERT_EQ_U64(stackcache__nr(c), 1000);
	/* The next reading uses the even ids only: the odd ones go. */
	stackcache__begin(c);
	for (uint64_t id = 2; id <= 1000; id += 2)
		stack_blob__put(stackcache__get(c, id));
	lent = stackcache__get(c, 998);
	ASSERT(lent && lent->refs == 2);
	stackcache__end(c);
	ASSERT_EQ_U64(stackcache__nr(c), 500);
	ASSERT(stackcache__get(c, 3) == NULL);
	/* A reading that uses none lets go of all; a lent copy outlives the cache's hold. */
	stackcache__begin(c);
	stackcache__end(c);
	ASSERT_EQ_U64(stackcache__nr(c), 0);
	ASSERT(lent->refs == 1 && lent->s.nr_ips == 4 && lent->s.ips[3] == 0x400000 + 48);
	stack_blob__put(lent);
	stackcache__free(c);
	return true;
}
