// SPDX-License-Identifier: GPL-2.0
/*
 * symbolize/report_sites.c's carry of native site frames, on a real binary
 * (v_basic, "loaded" at a bias): a native stack's site frame, found among
 * the target's modules, is kept with its site and lent to the next report
 * of a reading carried over, until the modules change; one whose search
 * passed an address in no module (a JIT's, named by a perf map that may
 * change) is found again at every report.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "analyze/aggregate.h"
#include "analyze/sites.h"
#include "fixture.h"
#include "model/stackcache.h"
#include "probe/snapshot.h"
#include "symbolize/report_build.h"
#include "symbolize/symbolize.h"
#include "unit.h"

#define PIE_BIAS 0x555555554000ull
#define OTHER_BIAS 0x7f0000100000ull

/* One report of snap's two sites, reading `reading`: its site frames, lent or found. */
static struct report *report_of(struct snapshot *snap, uint64_t reading, struct symbolizer *sym,
				const struct modules *mods, struct report_sites_carry *carry,
				bool *lent)
{
	const struct snap_site *sites[2] = { &snap->sites[0], &snap->sites[1] };
	struct aggregate agg = { .sites = sites, .nr = 2 };
	struct report_meta meta = { 0 };
	struct report *r = calloc(1, sizeof(*r));

	snap->reading = reading;
	snap->follows = reading - 1;
	r->stacks = calloc(2, sizeof(*r->stacks));
	r->nr_stacks = 2;
	for (int i = 0; i < 2; i++)
		lent[i] = report_sites__lend(carry, snap, &meta, mods, sites[i], &r->stacks[i]);
	if (report_sites__frames(r, &agg, sym, mods, &meta, snap, carry)) {
		report__free(r);
		return NULL;
	}
	return r;
}

TEST(report_sites_native_frames_kept_while_the_modules_are)
{
	const char *bin = fx_victim("v_basic");
	struct modules *mods = modules__new(getpid());
	struct symbolizer *sym = symbolizer__new(NULL, 0);
	struct report_sites_carry *carry = report_sites__carry_new();
	uint64_t ret = fx_call_return(bin, "site_malloc", "malloc@plt", 0);
	/* Site 1's innermost address is in no module: a JIT's, for all the symbolizer knows. */
	uint64_t own[1] = { PIE_BIAS + ret }, jit[2] = { 0x1000, PIE_BIAS + ret };
	struct snap_site sites[2] = {
		{ .stack_id = 1, .api = API_MALLOC, .stats.outstanding_allocs = 1, .nr_ips = 1 },
		{ .stack_id = 2, .api = API_MALLOC, .stats.outstanding_allocs = 1, .nr_ips = 2 },
	};
	struct snapshot snap = { .sites = sites, .nr = 2 };
	const struct report_frame *kept;
	struct report *r;
	bool lent[2];

	ASSERT(mods && sym && carry && ret && !fx_load(mods, bin, PIE_BIAS));
	sites[0].stack = stack_blob__new(1, &(struct stack_copy){ .ips = own, .nr_ips = 1 });
	sites[1].stack = stack_blob__new(2, &(struct stack_copy){ .ips = jit, .nr_ips = 2 });
	ASSERT(sites[0].stack && sites[1].stack);

	/* The first report finds both, and keeps the one found among the modules only. */
	r = report_of(&snap, 1, sym, mods, carry, lent);
	ASSERT(r && !lent[0] && !lent[1]);
	ASSERT(r->stacks[0].site_frame && r->stacks[1].site_frame);
	ASSERT_EQ_STR(r->stacks[0].site_frame->function, "site_malloc");
	ASSERT_EQ_STR(r->stacks[1].site_frame->function, "site_malloc");
	ASSERT(r->stacks[0].site_frame_kept && r->stacks[0].site_own);
	ASSERT(!r->stacks[1].site_frame_kept);
	kept = r->stacks[0].site_frame;
	report__free(r);

	/* The next reading, carried over: the kept frame lent as it is; the other found again. */
	r = report_of(&snap, 2, sym, mods, carry, lent);
	ASSERT(r && lent[0] && !lent[1]);
	ASSERT(r->stacks[0].site_frame == kept && r->stacks[0].site_frame_kept);
	/* Its key kept with it: what grouping would hash of its names. */
	ASSERT(r->stacks[0].site_keyed && r->stacks[0].site_key == sites__key(kept));
	ASSERT(!r->stacks[1].site_keyed);
	ASSERT(r->stacks[0].site_own && !r->stacks[1].site_frame_kept);
	ASSERT_EQ_STR(r->stacks[1].site_frame->function, "site_malloc");
	report__free(r);

	/* A module more: what modules__find says may differ, the frame is found anew. */
	ASSERT(!fx_load(mods, fx_victim("v_inline"), OTHER_BIAS));
	r = report_of(&snap, 3, sym, mods, carry, lent);
	ASSERT(r && !lent[0] && !lent[1]);
	ASSERT(r->stacks[0].site_frame_kept && r->stacks[0].site_frame != kept);
	ASSERT_EQ_STR(r->stacks[0].site_frame->function, "site_malloc");
	report__free(r);

	/* A reading that does not carry the last one over: nothing kept holds. */
	r = report_of(&snap, 5, sym, mods, carry, lent);
	ASSERT(r && !lent[0] && !lent[1]);
	report__free(r);

	report_sites__carry_free(carry);
	stack_blob__put(sites[0].stack);
	stack_blob__put(sites[1].stack);
	symbolizer__free(sym);
	modules__free(mods);
	return true;
}
