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
#include "python/pycode.h"
#include "probe/snapshot.h"
#include "symbolize/report_build.h"
#include "symbolize/symbolize.h"
#include "unit.h"

#define PIE_BIAS 0x555555554000ull
#define OTHER_BIAS 0x7f0000100000ull

/* One report of snap's sites (2 at most), reading `reading`: its site frames, lent or found. */
static struct report *report_of(struct snapshot *snap, uint64_t reading, struct symbolizer *sym,
				const struct modules *mods, struct report_sites_carry *carry,
				bool *lent)
{
	const struct snap_site *sites[2] = { &snap->sites[0], &snap->sites[1] };
	struct aggregate agg = { .sites = sites, .nr = snap->nr };
	struct report_meta meta = { 0 };
	struct report *r = calloc(1, sizeof(*r));

	snap->reading = reading;
	snap->follows = reading - 1;
	r->stacks = calloc(2, sizeof(*r->stacks));
	r->nr_stacks = snap->nr;
	for (size_t i = 0; i < snap->nr; i++)
		lent[i] = report_sites__lend(carry, snap, &meta, mods, sites[i], &r->stacks[i]);
	if (report_sites__frames(r, &agg, sym, mods, &meta, snap, carry)) {
		report__free(r);
		return NULL;
	}
	return r;
}

/* A native site of stack id, one block outstanding, its stack ips[0..nr). */
static struct snap_site native_site(uint64_t id, uint64_t *ips, uint32_t nr)
{
	return (struct snap_site){ .stack_id = id, .api = API_MALLOC,
				   .stats.outstanding_allocs = 1, .nr_ips = nr,
				   .stack = stack_blob__new(id, &(struct stack_copy){ .ips = ips,
										.nr_ips = nr }) };
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
	struct snap_site sites[2] = { native_site(1, own, 1), native_site(2, jit, 2) };
	struct snapshot snap = { .sites = sites, .nr = 2 };
	const struct report_frame *kept;
	struct report *r;
	bool lent[2];

	ASSERT(mods && sym && carry && ret && !fx_load(mods, bin, PIE_BIAS));
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

/* v_basic loaded at PIE_BIAS, with a symbolizer and a carry: site_malloc's call at ret. */
struct native_fx {
	struct modules *mods;
	struct symbolizer *sym;
	struct report_sites_carry *carry;
	uint64_t ret;
};

static bool native_fx_open(struct native_fx *f)
{
	const char *bin = fx_victim("v_basic");

	f->mods = modules__new(getpid());
	f->sym = symbolizer__new(NULL, 0);
	f->carry = report_sites__carry_new();
	f->ret = fx_call_return(bin, "site_malloc", "malloc@plt", 0);
	return f->mods && f->sym && f->carry && f->ret && !fx_load(f->mods, bin, PIE_BIAS);
}

static void native_fx_close(struct native_fx *f)
{
	report_sites__carry_free(f->carry);
	symbolizer__free(f->sym);
	modules__free(f->mods);
}

/*
 * A fold between two readings (snapshot.moved): site 0 went, site 1 moved
 * to 0. Its kept frame moves with it and is lent; the frame of the site
 * gone is let go of.
 */
TEST(report_sites_frames_move_with_their_sites)
{
	const uint32_t moved[2] = { SNAP_GONE, 0 };
	struct native_fx f;
	bool ok = native_fx_open(&f);
	uint64_t own[1] = { PIE_BIAS + f.ret };
	struct snap_site sites[2] = { native_site(3, own, 1), native_site(1, own, 1) };
	struct snapshot snap = { .sites = sites, .nr = 2 };
	const struct report_frame *kept;
	struct report *r;
	bool lent[2];

	ASSERT(ok && sites[0].stack && sites[1].stack);
	r = report_of(&snap, 1, f.sym, f.mods, f.carry, lent);
	ASSERT(r && r->stacks[1].site_frame_kept);
	kept = r->stacks[1].site_frame;
	report__free(r);

	/* The fold: site 0 gone, site 1 now at 0. */
	stack_blob__put(sites[0].stack);
	sites[0] = sites[1];
	snap.nr = 1;
	snap.moved = moved;
	snap.nr_moved = 2;
	r = report_of(&snap, 2, f.sym, f.mods, f.carry, lent);
	ASSERT(r && lent[0] && r->stacks[0].site_frame == kept);
	ASSERT_EQ_STR(r->stacks[0].site_frame->function, "site_malloc");
	report__free(r);

	stack_blob__put(sites[0].stack);
	native_fx_close(&f);
	return true;
}

/* ------------------------------------------------------- Python stacks */

#define LIB_CODE 0x10000ull
#define USER_CODE 0x20000ull
#define CODE_AT 0xb8	/* the layout's code_code: where the bytecode starts */
#define LIB_FILE "/usr/lib/python3/dist-packages/torch/nn/modules/module.py"

/* A code object as BPF copies it: named, its line table empty. */
static int add_code(struct pycode *pc, uint64_t code, const char *name, const char *file)
{
	struct py_code c = { .code = code, .linetable = code + 0x1000, .firstlineno = 10 };

	strncpy(c.qualname, name, sizeof(c.qualname) - 1);
	strncpy(c.filename, file, sizeof(c.filename) - 1);
	return pycode__add_copy(pc, &c, NULL, NULL);
}

static struct stack_blob *py_blob(uint64_t id, const uint64_t *codes, uint32_t nr)
{
	struct py_stack *py = calloc(1, sizeof(*py));
	struct stack_blob *b;

	py->nr = nr;
	for (uint32_t i = 0; i < nr; i++)
		py->frames[i] = (struct py_frame){ .code = codes[i], .linetable = codes[i] + 0x1000,
						   .instr = codes[i] + CODE_AT + 4 * (i + 1) };
	b = stack_blob__new(id, &(struct stack_copy){ .py = py });
	free(py);
	return b;
}

/* A report of snap's sites, reading `reading` (0: no carry), its site frames lent or found. */
static struct report *py_report(struct snapshot *snap, uint64_t reading,
				const struct report_meta *meta,
				struct report_sites_carry *carry, bool *lent)
{
	const struct snap_site *sites[3] = { &snap->sites[0], &snap->sites[1], &snap->sites[2] };
	struct aggregate agg = { .sites = sites, .nr = 3 };
	struct report *r = calloc(1, sizeof(*r));

	snap->reading = reading;
	snap->follows = reading ? reading - 1 : 0;
	r->stacks = calloc(3, sizeof(*r->stacks));
	r->nr_stacks = 3;
	for (int i = 0; i < 3; i++)
		lent[i] = reading && report_sites__lend(carry, snap, meta, NULL, sites[i],
							&r->stacks[i]);
	if (report_sites__frames(r, &agg, NULL, NULL, meta, snap, reading ? carry : NULL)) {
		report__free(r);
		return NULL;
	}
	return r;
}

/* Each stack's site as a report without a carry finds it. */
static bool same_sites(const struct report *r, const struct report *fresh)
{
	for (size_t i = 0; i < r->nr_stacks; i++) {
		const struct report_stack *a = &r->stacks[i], *b = &fresh->stacks[i];

		if (!a->site_frame || !b->site_frame || a->site_own != b->site_own ||
		    a->site_import != b->site_import ||
		    sites__key(a->site_frame) != sites__key(b->site_frame) ||
		    (a->site_keyed && a->site_key != sites__key(a->site_frame)) ||
		    a->site_frame->address != b->site_frame->address ||
		    a->site_frame->line != b->site_frame->line ||
		    strcmp(a->site_frame->function ?: "", b->site_frame->function ?: "") ||
		    strcmp(a->site_frame->file ?: "", b->site_frame->file ?: ""))
			return false;
	}
	return true;
}

/*
 * A Python stack's site frame depends on its Python frames and the code
 * table only: the sites of two native stacks under one Python stack share
 * the frame the carry found once for it, which holds until the code table
 * learns code it did not know, and it is what a report without a carry
 * finds.
 */
TEST(report_sites_python_frames_found_once_per_python_stack)
{
	static const struct py_layout layout = { .code_code = CODE_AT };
	const uint64_t a_codes[2] = { LIB_CODE, USER_CODE }, b_codes[1] = { LIB_CODE };
	uint64_t ips[2][1] = { { 0x401000 }, { 0x402000 } };
	struct pycode *pc = pycode__new(&layout, 0x7777);
	struct report_python python = { .path = "/usr/bin/python3.11" };
	struct report_meta meta = { .pycode = pc, .python = &python };
	struct report_sites_carry *carry = report_sites__carry_new();
	struct snap_site sites[3] = {
		{ .stack_id = 1, .api = API_MALLOC, .stats.outstanding_allocs = 1, .nr_ips = 1 },
		{ .stack_id = 2, .api = API_MALLOC, .stats.outstanding_allocs = 1, .nr_ips = 1 },
		{ .stack_id = 3, .api = API_MALLOC, .stats.outstanding_allocs = 1, .nr_ips = 1 },
	};
	struct snapshot snap = { .sites = sites, .nr = 3 };
	struct report *r, *fresh;
	bool lent[3];

	ASSERT(pc && carry && !add_code(pc, LIB_CODE, "Module.forward", LIB_FILE));
	/* Sites 0 and 1: two native stacks under Python stack A; site 2 under B. */
	sites[0].stack = stack_blob__new(11, &(struct stack_copy){ .ips = ips[0], .nr_ips = 1 });
	sites[1].stack = stack_blob__new(12, &(struct stack_copy){ .ips = ips[1], .nr_ips = 1 });
	sites[2].stack = stack_blob__hold(sites[1].stack);
	sites[0].pystack = py_blob(21, a_codes, 2);
	sites[1].pystack = stack_blob__hold(sites[0].pystack);
	sites[2].pystack = py_blob(22, b_codes, 1);
	ASSERT(sites[0].stack && sites[1].stack && sites[0].pystack && sites[2].pystack);

	/* The user's frame of A is code the table does not know: the library's line stands. */
	r = py_report(&snap, 1, &meta, carry, lent);
	fresh = py_report(&snap, 0, &meta, carry, lent);
	ASSERT(r && fresh && same_sites(r, fresh));
	ASSERT_EQ_STR(r->stacks[0].site_frame->function, "Module.forward");
	ASSERT(!r->stacks[0].site_own);
	ASSERT(r->stacks[0].site_frame == r->stacks[1].site_frame);
	ASSERT(r->stacks[0].site_frame != r->stacks[2].site_frame);
	ASSERT(r->stacks[0].site_frame_kept && r->stacks[2].site_frame_kept);
	report__free(fresh);
	report__free(r);

	/* The next reading lends them as they were. */
	r = py_report(&snap, 2, &meta, carry, lent);
	ASSERT(r && lent[0] && lent[1] && lent[2]);
	ASSERT(r->stacks[0].site_frame == r->stacks[1].site_frame);
	report__free(r);

	/* The table learns A's user frame: A's site is found again, once, and is the user's. */
	ASSERT(!add_code(pc, USER_CODE, "train_step", "/srv/train/train.py"));
	r = py_report(&snap, 3, &meta, carry, lent);
	fresh = py_report(&snap, 0, &meta, carry, lent);
	ASSERT(r && fresh && !lent[0] && !lent[1] && !lent[2] && same_sites(r, fresh));
	ASSERT_EQ_STR(r->stacks[0].site_frame->function, "train_step");
	ASSERT(r->stacks[0].site_own && !r->stacks[2].site_own);
	ASSERT(r->stacks[0].site_frame == r->stacks[1].site_frame);
	report__free(fresh);
	report__free(r);

	/* Every frame of A and B known now: lent whatever the table learns. */
	ASSERT(!add_code(pc, LIB_CODE + 0x100000, "other", LIB_FILE));
	r = py_report(&snap, 4, &meta, carry, lent);
	ASSERT(r && lent[0] && lent[1] && lent[2]);
	ASSERT_EQ_STR(r->stacks[1].site_frame->function, "train_step");
	report__free(r);

	report_sites__carry_free(carry);
	for (int i = 0; i < 3; i++) {
		stack_blob__put(sites[i].stack);
		stack_blob__put(sites[i].pystack);
	}
	pycode__free(pc);
	return true;
}
