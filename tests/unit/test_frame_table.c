// SPDX-License-Identifier: GPL-2.0
/*
 * model/frame_table.c: each distinct frame of a report kept once; and the
 * writers, which read a stack's frames from the table (report__frame)
 * exactly as from copies of its own.
 */
#include <stdlib.h>
#include <string.h>
#include "model/frame_table.h"
#include "model/report.h"
#include "report/writers.h"
#include "helpers.h"
#include "unit.h"

static const char FN[] = "alloc_here", MOD[] = "/srv/app", SRC[] = "app.c";

static struct report_frame named(uint64_t address, int line)
{
	return (struct report_frame){ .address = address, .function = (char *)FN,
				      .module = (char *)MOD, .module_offset = address - 0x1000,
				      .file = (char *)SRC, .line = line, .borrowed = true };
}

TEST(frame_table_keeps_each_frame_once)
{
	struct frame_table *t = frame_table__new();
	struct report_frame a = named(0x1010, 10), b = a, c;
	struct report_frame *pa, *pb;
	bool added;

	ASSERT(t);
	pa = frame_table__intern(t, &a, &added);
	ASSERT(pa && added && pa != &a);
	ASSERT(pa->address == 0x1010 && pa->function == FN && pa->line == 10);
	/* The same frame again, own aside (worked out once, for the one kept). */
	b.own = true;
	pb = frame_table__intern(t, &b, &added);
	ASSERT(pb == pa && !added);
	/* Any other field makes another frame. */
	c = a, c.address++;
	ASSERT(frame_table__intern(t, &c, &added) != pa && added);
	c = a, c.line++;
	ASSERT(frame_table__intern(t, &c, &added) != pa && added);
	c = a, c.inlined = true;
	ASSERT(frame_table__intern(t, &c, &added) != pa && added);
	c = a, c.language = FRAME_PYTHON;
	ASSERT(frame_table__intern(t, &c, &added) != pa && added);
	c = a, c.file = NULL;
	ASSERT(frame_table__intern(t, &c, &added) != pa && added);
	c = a, c.module_offset++;
	ASSERT(frame_table__intern(t, &c, &added) != pa && added);
	ASSERT_EQ_U64(frame_table__count(t), 7);
	/* An address alone (nothing resolved): found again too. */
	c = (struct report_frame){ .address = 0x42 };
	pa = frame_table__intern(t, &c, &added);
	ASSERT(pa && added && frame_table__intern(t, &c, &added) == pa && !added);
	ASSERT(frame_table__bytes(t) > 8 * sizeof(struct report_frame));
	frame_table__free(t);
	frame_table__free(NULL);
	return true;
}

/* Its frames never move: the stacks point at them while the table grows. */
TEST(frame_table_pointers_stay_as_it_grows)
{
	struct frame_table *t = frame_table__new();
	enum { N = 20000 };
	struct report_frame **p = calloc(N, sizeof(*p));
	struct report_frame f;
	bool added;

	ASSERT(t && p);
	for (int i = 0; i < N; i++) {
		f = named(0x1000 + (uint64_t)i, i);
		p[i] = frame_table__intern(t, &f, &added);
		ASSERT(p[i] && added);
	}
	for (int i = 0; i < N; i++) {
		f = named(0x1000 + (uint64_t)i, i);
		ASSERT(p[i]->address == 0x1000 + (uint64_t)i && p[i]->line == i);
		ASSERT(frame_table__intern(t, &f, &added) == p[i] && !added);
	}
	ASSERT_EQ_U64(frame_table__count(t), N);
	free(p);
	frame_table__free(t);
	return true;
}

/* A frame owning its strings is kept as it is, and its strings freed with the table. */
TEST(frame_table_takes_frames_owning_strings)
{
	struct frame_table *t = frame_table__new();
	struct report_frame f = { .address = 0x7000, .function = strdup("jitted"),
				  .module = strdup("/tmp/perf-1.map") };
	struct report_frame g = { .address = 0x7000, .function = strdup("jitted"),
				  .module = strdup("/tmp/perf-1.map") };
	struct report_frame *pf, *pg;
	bool added;

	ASSERT(t && f.function && f.module && g.function && g.module);
	pf = frame_table__intern(t, &f, &added);
	ASSERT(pf && added && pf->function == f.function);
	pg = frame_table__intern(t, &g, &added);
	ASSERT(pg && added && pg != pf && pg->function == g.function);
	ASSERT_EQ_U64(frame_table__count(t), 2);
	frame_table__free(t);	/* frees the four strings (the sanitizers' build says so) */
	return true;
}

/* ------------------------------------------------ the writers on shared frames */

/* Strings the frames share by pointer, as the symbolizer's cache hands them out. */
static char LIBC[] = "/usr/lib/x86_64-linux-gnu/libc.so.6", START[] = "__libc_start_call_main",
	    APP[] = "/srv/app", APP_C[] = "app.c", MAIN[] = "main";

static struct report_frame ft_a[] = {
	{ .address = 0x1010, .function = "site_a", .module = APP, .file = APP_C, .line = 10, .inlined = true, .own = true },
	{ .address = 0x1010, .function = "caller", .module = APP, .file = APP_C, .line = 30, .own = true },
	{ .address = 0x1500, .function = MAIN, .module = APP, .file = APP_C, .line = 50, .own = true },
	{ .address = 0x7f01, .function = START, .module = LIBC },
};

static struct report_frame ft_b[] = {
	{ .address = 0x3a2b, .module = "/opt/lib/libfoo.so.1", .module_offset = 0x1a2b },
	{ .address = 0x77, .function = "train", .module = "/srv/train.py", .file = "/srv/train.py", .line = 7, .language = FRAME_PYTHON, .own = true },
	{ .address = 0x1500, .function = MAIN, .module = APP, .file = APP_C, .line = 50, .own = true },
	{ .address = 0x7f01, .function = START, .module = LIBC },
};

static struct report_frame ft_c[] = {
	{ .address = 0x9001, .function = "std::vector<int>::push_back", .symbol = "_ZNSt6vectorIiE9push_backEi",
	  .module = "/usr/lib/x86_64-linux-gnu/libstdc++.so.6", .file = "/usr/include/c++/12/bits/vector.tcc", .line = 3 },
	{ .address = 0x1600, .function = MAIN, .module = APP, .file = APP_C, .line = 60, .own = true },
};

static struct report_stack ft_stacks[] = {
	{ .api = API_MALLOC, .bytes = 3000, .allocs = 3, .total_bytes = 4000, .total_allocs = 4, .frames = ft_a, .nr_frames = 4 },
	{ .api = API_CALLOC, .bytes = 1000, .allocs = 1, .total_bytes = 1000, .total_allocs = 1, .frames = ft_b, .nr_frames = 4, .truncated = true },
	{ .api = API_NEW, .bytes = 500, .allocs = 5, .total_bytes = 900, .total_allocs = 9, .frames = ft_c, .nr_frames = 2 },
	{ .api = API_MALLOC, .bytes = 200, .allocs = 1, .total_bytes = 200, .total_allocs = 1, .frames = ft_a + 2, .nr_frames = 2 },
	{ .api = API_CALLOC, .bytes = 125, .allocs = 1, .total_bytes = 125, .total_allocs = 1, .no_stack = true },
};

#define FT_NR (sizeof(ft_stacks) / sizeof(ft_stacks[0]))

/* The stacks of from, their frames kept once in t (as report_build.c's share_frames). */
static bool share(const struct report_stack *from, struct report_stack *to, size_t nr,
		  struct frame_table *t)
{
	for (size_t i = 0; i < nr; i++) {
		to[i] = from[i];
		to[i].refs = calloc(from[i].nr_frames ?: 1, sizeof(*to[i].refs));
		if (!to[i].refs)
			return false;
		to[i].shared = true;
		for (size_t k = 0; k < from[i].nr_frames; k++) {
			struct report_frame f = from[i].frames[k];
			bool added;

			f.borrowed = true;	/* the table's copy must not free the test's strings */
			to[i].refs[k] = frame_table__intern(t, &f, &added);
			if (!to[i].refs[k])
				return false;
			if (added)	/* own is the first one's: the same for every copy here */
				((struct report_frame *)to[i].refs[k])->own = from[i].frames[k].own;
		}
	}
	return true;
}

static bool same_render(int (*writer)(const struct report *, FILE *), const struct report *a,
			const struct report *b)
{
	char *x = unit__render(writer, a, NULL), *y = unit__render(writer, b, NULL);
	bool same = x && y && !strcmp(x, y);

	if (!same)
		fprintf(stderr, "  a writer wrote shared frames otherwise:\n%s\n---\n%s\n",
			x ? x : "(failed)", y ? y : "(failed)");
	free(x);
	free(y);
	return same;
}

TEST(frame_table_writers_read_shared_frames_as_their_own)
{
	struct report_stack shared[FT_NR];
	struct frame_table *t = frame_table__new();
	struct report own = { .pid = 7, .command = "app", .final = true, .duration_s = 2,
			      .stacks = ft_stacks, .nr_stacks = FT_NR };
	struct report r = own;

	ASSERT(t && share(ft_stacks, shared, FT_NR, t));
	r.stacks = shared;
	/* ft_a's four, ft_b's first two, ft_c's two: its main and libc frames, and the fourth stack's, ft_a's. */
	ASSERT_EQ_U64(frame_table__count(t), 8);
	ASSERT(shared[3].refs[0] == shared[0].refs[2] && shared[1].refs[3] == shared[0].refs[3]);
	for (int i = 0; i < REPORT_OUT__COUNT; i++) {
		if (!(writers[i].needs & (WRITER_ALL | WRITER_KEPT)))
			continue;
		ASSERT(same_render(writers__of(i, false), &own, &r));
	}
	ASSERT(same_render(writers__profile(true), &own, &r));
	for (size_t i = 0; i < FT_NR; i++)
		free(shared[i].refs);
	frame_table__free(t);
	return true;
}
