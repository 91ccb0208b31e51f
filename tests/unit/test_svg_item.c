// SPDX-License-Identifier: GPL-2.0
/* report/svg_item.c: the flame graph's stacks sorted from the root by their items' ranks. */
#include <stdlib.h>
#include "model/frame_table.h"
#include "model/report.h"
#include "report/svg_item.h"
#include "unit.h"

/* The reference: the stacks' items compared one by one, as the graph orders them. */
static int cmp_stacks(const struct report_stack *a, const struct report_stack *b)
{
	size_t na = svg_item__count(a), nb = svg_item__count(b);

	for (size_t i = 0; i < na && i < nb; i++) {
		struct svg_item x = svg_item__at(a, i), y = svg_item__at(b, i);
		int c = svg_item__cmp(&x, &y);

		if (c)
			return c;
	}
	return na < nb ? -1 : na > nb;
}

static char *const FN[] = { "alpha", "beta", "gamma", NULL };
static char *const MOD[] = { "/srv/app", "/usr/lib/libz.so.1", NULL };
static char *const SRC[] = { "a.py", "b.py" };

/*
 * A frame drawn from a small pool, where many are one box: a native
 * function at another address or line, a Python function at the same line
 * of another instruction; unnamed ones apart by their offset.
 */
static struct report_frame random_frame(unsigned *seed)
{
	struct report_frame f = { .borrowed = true };

	f.language = rand_r(seed) % 4 ? FRAME_NATIVE : FRAME_PYTHON;
	f.function = FN[rand_r(seed) % 4];
	f.module = MOD[rand_r(seed) % 3];
	f.address = 0x1000 + rand_r(seed) % 4;
	f.module_offset = rand_r(seed) % 3;
	f.line = rand_r(seed) % 3;
	if (f.language == FRAME_PYTHON)
		f.file = SRC[rand_r(seed) % 2];
	return f;
}

TEST(svg_item_sort_orders_stacks_from_the_root)
{
	enum { STACKS = 3000, DEPTH = 12 };
	struct frame_table *t = frame_table__new();
	struct report_stack *s = calloc(STACKS, sizeof(*s));
	const struct report_stack **v = calloc(STACKS, sizeof(*v));
	unsigned seed = 27, apis[] = { API_MALLOC, API_CALLOC, API_NEW };
	bool added;

	ASSERT(t && s && v);
	for (size_t i = 0; i < STACKS; i++) {
		s[i].api = apis[rand_r(&seed) % 3];
		s[i].truncated = !(rand_r(&seed) % 7);	/* under a marker */
		s[i].nr_frames = (size_t)rand_r(&seed) % DEPTH;
		s[i].refs = calloc(DEPTH, sizeof(*s[i].refs));
		s[i].shared = true;
		ASSERT(s[i].refs);
		for (size_t k = 0; k < s[i].nr_frames; k++) {
			struct report_frame f = random_frame(&seed);

			/* Long shared runs from the root, as real stacks have. */
			if (i && k < s[i - 1].nr_frames && rand_r(&seed) % 4) {
				s[i].refs[k] = s[i - 1].refs[k];
				continue;
			}
			s[i].refs[k] = frame_table__intern(t, &f, &added);
			ASSERT(s[i].refs[k]);
		}
		v[i] = &s[i];
	}
	ASSERT(svg_item__sort(v, STACKS) == 0);
	for (size_t i = 1; i < STACKS; i++)
		ASSERT(cmp_stacks(v[i - 1], v[i]) <= 0);
	/* Every stack once. */
	for (size_t i = 0; i < STACKS; i++)
		s[v[i] - s].growth.rank++;
	for (size_t i = 0; i < STACKS; i++) {
		ASSERT(s[i].growth.rank == 1);
		free(s[i].refs);
	}
	free(s);
	free(v);
	frame_table__free(t);
	return true;
}
