// SPDX-License-Identifier: GPL-2.0
/*
 * analyze/sites.c and report/report_runtime.c: the sites made while the
 * program ran first, then those made before main by initializers
 * (start-up), then the runtime's own; the exit's parts in figures.
 */
#include <stdlib.h>
#include <string.h>
#include "analyze/runtime_blocks.h"
#include "model/report.h"
#include "report/report_runtime.h"
#include "helpers.h"
#include "unit.h"

/*
 * fstminimize's in small: OpenFST's registries (start-up, 936 bytes) are
 * bigger than the 32-byte block made in fst::Minimize, libstdc++'s pool
 * (the runtime's, made at start-up too) the biggest of all.
 */
static struct report_frame startup_reg = { .address = 0x10, .function = "fst::GenericRegister<K, V>::SetEntry",
					   .module = "/usr/lib/x86_64-linux-gnu/libfstscript.so.22.0.0" };
static struct report_frame startup_run = { .address = 0x20, .function = "fst::StringWeight<int>::One()",
					   .module = "/usr/lib/x86_64-linux-gnu/libfstscript.so.22.0.0" };
static struct report_frame startup_pool = { .address = 0x30,
					    .module = "/usr/lib/x86_64-linux-gnu/libstdc++.so.6.0.30",
					    .module_offset = 0xa57ba };

static bool startup_order(struct report *r)
{
	ASSERT(unit__group(r, SIZE_MAX, SIZE_MAX) == 0);
	ASSERT_EQ_U64(r->nr_sites, 3);
	ASSERT_EQ_STR(r->sites[0].frame->function, "fst::StringWeight<int>::One()");
	ASSERT(!r->sites[0].preinit && !r->sites[0].runtime);
	ASSERT(r->sites[1].preinit && !r->sites[1].runtime && r->sites[1].bytes == 936);
	ASSERT_EQ_U64(r->sites[2].runtime, RUNTIME_INIT);
	unit__ungroup(r);
	return true;
}

TEST(startup_sites_after_the_run)
{
	struct report_stack stacks[] = {
		{ .api = API_NEW, .bytes = 72704, .allocs = 1, .frames = &startup_pool, .nr_frames = 1,
		  .site_runtime = RUNTIME_INIT, .site_preinit = true },
		{ .api = API_NEW, .bytes = 936, .allocs = 9, .frames = &startup_reg, .nr_frames = 1,
		  .site_preinit = true },
		{ .api = API_NEW, .bytes = 32, .allocs = 1, .frames = &startup_run, .nr_frames = 1 },
	};
	struct report r = { .stacks = stacks, .nr_stacks = 3 };

	ASSERT(startup_order(&r));
	r.sort_count = true;	/* the registries' 9 blocks: still after the run's 1 */
	ASSERT(startup_order(&r));
	return true;
}

TEST(startup_sites_exit_parts)
{
	struct report_stack stacks[] = {
		{ .api = API_NEW, .bytes = 72704, .allocs = 1, .frames = &startup_pool, .nr_frames = 1,
		  .site_runtime = RUNTIME_INIT, .site_preinit = true },
		{ .api = API_NEW, .bytes = 28383, .allocs = 361, .frames = &startup_reg, .nr_frames = 1,
		  .site_preinit = true },
		{ .api = API_NEW, .bytes = 128, .allocs = 4, .frames = &startup_run, .nr_frames = 1 },
	};
	struct report r = { .stacks = stacks, .nr_stacks = 3 };
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	ASSERT(unit__group(&r, SIZE_MAX, SIZE_MAX) == 0);
	f = open_memstream(&text, &len);
	ASSERT(f);
	report_runtime__text_part(&r, f);
	fclose(f);
	ASSERT_EQ_STR(text,
		      "  of them, made before main by initializers (start-up: static registries and the "
		      "like, usually held by design): 27.7 KiB (28,383 bytes) in 361 allocations (their "
		      "sites come after those of the program's run)\n"
		      "  of them, the runtime's own: 71.0 KiB (72,704 bytes) in 1 allocation, kept by it "
		      "until exit (their sites come after the others')\n"
		      "  the rest: 128 bytes in 4 allocations, at the first sites below\n");
	free(text);
	unit__ungroup(&r);
	/* No start-up block, none of the runtime's: no line. */
	stacks[0].site_runtime = RUNTIME_NONE;
	stacks[0].site_preinit = stacks[1].site_preinit = false;
	ASSERT(unit__group(&r, SIZE_MAX, SIZE_MAX) == 0);
	text = NULL;
	f = open_memstream(&text, &len);
	ASSERT(f);
	report_runtime__text_part(&r, f);
	fclose(f);
	ASSERT_EQ_STR(text, "");
	free(text);
	unit__ungroup(&r);
	return true;
}
