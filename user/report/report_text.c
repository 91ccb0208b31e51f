// SPDX-License-Identifier: GPL-2.0
/* The human-readable report, printed at every interval and at the end. */
#include <errno.h>
#include <string.h>
#include <time.h>
#include "analyze/runtime_blocks.h"
#include "model/report.h"
#include "report_allocs.h"
#include "report_churn.h"
#include "report_insight.h"
#include "report_processes.h"
#include "report_pyarenas.h"
#include "report_reach.h"
#include "report_runtime.h"
#include "report_text.h"
#include "text_put.h"

#define COUNT_LEN REPORT_COUNT_LEN
#define SIZE_LEN 64
#define TEXT_SITE_STACKS 3	/* of each site shown, the stacks printed in full */

/* How a drop reads in a sentence: "12 allocations not tracked: ...". */
struct drop_text {
	const char *one, *many, *what;
};

static const struct drop_text drop_texts[CNT__COUNT] = {
	[CNT_ALLOCS_MAP_FULL] = { "allocation", "allocations",
				  "not tracked: live-allocation map full" },
	[CNT_SITES_MAP_FULL] = { "allocation", "allocations",
				 "not tracked: per-site map full" },
	[CNT_STACK_ERRORS] = { "allocation", "allocations",
			       "without a stack: the user stack could not be read" },
	[CNT_STACKS_MAP_FULL] = { "allocation", "allocations",
				  "without a stack: stack map full: the live stacks outgrew the room" },
	[CNT_STACK_COLLISIONS] = { "allocation", "allocations",
				   "without a stack: two stacks with one hash" },
	[CNT_MISSED_RETURNS] = { "allocation", "allocations",
				 "not tracked: return seen without its call" },
	[CNT_STATE_ERRORS] = { "allocation", "allocations",
			       "not tracked: no per-thread call state" },
	[CNT_REPLACED] = { "free", "frees",
			   "missed: a new block reused a still-tracked address" },
	[CNT_UNWIND_STOPS] = { "allocation", "allocations",
			       "with a stack cut short: the unwinder met a frame it could not follow" },
	[CNT_PY_STACKS_MAP_FULL] = { "allocation", "allocations",
				     "without Python frames: Python stack map full (no longer counted)" },
	[CNT_PY_STACK_ERRORS] = { "allocation", "allocations",
				  "without Python frames: they could not be read" },
	[CNT_UNWIND_PENDING] = { "allocation", "allocations",
				 "with a stack cut short: an unwind table was still loading (-p, just after attaching)" },
	[CNT_PROCS_MAP_FULL] = { "process", "processes",
				 "not followed: 65,536 followed at once, the event ring full, or the kernel cannot hold a child at its fork (Linux 6.13)" },
	[CNT_KERNEL_MISSED] = { "tracepoint hit", "tracepoint hits",
				"missed (-k): one of our programs ran on that CPU already (an interrupt's allocation or free)" },
	[CNT_PY_CODES_UNTOLD] = { "code object", "code objects",
				  "freed without note (the table of freed code addresses full): Python frames at their addresses may be named after them" },
	[CNT_STACK_RING_FULL] = { "allocation", "allocations",
				  "without a stack: the ring new stacks reach the tracer through was full" },
	[CNT_STACK_MERGED] = { "stack", "stacks",
			       "sent under the id of another (a 64-bit hash collision): their sites may mix both stacks' figures" },
	[CNT_PY_RING_FULL] = { "allocation", "allocations",
			       "without Python frames: the ring new stacks reach the tracer through was full" },
	[CNT_STACK_PREEMPTED] = { "allocation", "allocations",
				  "without a stack: another thread's capture ran on its CPU meanwhile (a kernel before 6.10 cannot hold preemption off; a stack sent then may be wrong)" },
	[CNT_STACKS_LOST] = { "site", "sites",
			      "without a stack: BPF sent its frames and the tracer let go of them too soon (a bug of ours: please report it)" },
	[CNT_PY_CODES_UNNAMED] = { "Python code object", "Python code objects",
				   "unnamed, their frames shown by address: the target freed them (a module's body runs once) before the tracer read them, and BPF's copy of them found its ring full, or came while this report was made (the next one names those)" },
};

static void print_header(const struct report *r, FILE *f)
{
	char now[16] = "??:??:??";
	struct tm tm;
	time_t t = time(NULL);

	if (localtime_r(&t, &tm))
		strftime(now, sizeof(now), "%H:%M:%S", &tm);
	if (r->kernel)
		fprintf(f, "[%s] memleakbpf: %sthe kernel", now, r->final ? "Final report: " : "");
	else
		fprintf(f, "[%s] memleakbpf: %spid %d", now, r->final ? "Final report: " : "", r->pid);
	if (r->command) {
		fputs(" (", f);
		text_put__oneline(r->command, f);
		fputc(')', f);
	}
	fprintf(f, ", %.1f s traced\n", r->duration_s);
}

/*
 * Not a drop: frees of blocks we never saw are ignored, as they must be (under
 * -p they are the blocks allocated before the attach). Shown so that the
 * figures add up.
 */
static void print_untracked(const struct report *r, FILE *f)
{
	uint64_t v = r->totals.counters[CNT_UNTRACKED_FREES];
	char n[COUNT_LEN];

	if (v)
		fprintf(f, "Ignored: %s %s of blocks not tracked (allocated before tracing began, filtered or dropped)\n",
			report__count(v, n), report__plural(v, "free", "frees"));
}

/* Not a drop either: the processes the target started are not the target. */
static void print_children(const struct report *r, FILE *f)
{
	uint64_t v = r->totals.counters[CNT_UNTRACED_CHILDREN];
	char n[COUNT_LEN];

	if (v)
		fprintf(f, "Not traced: %s %s started by pid %d (--follow traces them)\n",
			report__count(v, n), report__plural(v, "process", "processes"), r->pid);
}

/*
 * Mmaps (a program's mapped files, its own regions) are not heap: when
 * there are any, the heap blocks, which heap tools count, come apart.
 */
static void print_kinds(const struct report *r, const struct report_totals *t, FILE *f)
{
	char h[SIZE_LEN], m[SIZE_LEN], n[COUNT_LEN], k[COUNT_LEN];
	const char *est = r->sampling ? "~" : "";	/* sampled heap blocks; mmaps are all taken */

	if (!t->kind_allocs[KIND_MMAP])
		return;
	fprintf(f, "  of which heap blocks %s%s in %s%s, mmaps %s in %s (not heap: mapped files and regions)\n",
		est, report__human_size(t->kind_bytes[KIND_HEAP], h, sizeof(h)), est,
		report__count(t->kind_allocs[KIND_HEAP], n),
		report__human_size(t->kind_bytes[KIND_MMAP], m, sizeof(m)),
		report__count(t->kind_allocs[KIND_MMAP], k));
}

/* --sample, -s: how, what was counted exactly, and what the marks mean. */
static void print_sampling(const struct report *r, FILE *f)
{
	const struct report_sampling *s = r->sampling;
	char m[SIZE_LEN], b[SIZE_LEN], c[COUNT_LEN], k[COUNT_LEN];

	if (!s)
		return;
	if (s->by_bytes)
		fprintf(f, "Sampling: --sample %s: a block of s bytes taken with probability "
			"1-exp(-s/%llu) (Poisson by bytes, per thread)",
			report__human_size(s->mean, m, sizeof(m)), (unsigned long long)s->mean);
	else
		fprintf(f, "Sampling: -s %llu: each allocation taken with probability 1/%llu",
			(unsigned long long)s->mean, (unsigned long long)s->mean);
	if (s->seed)
		fprintf(f, ", seed %llu (reproducible, for tests)", (unsigned long long)s->seed);
	fprintf(f, "\n  %s heap %s asking for %s, counted exactly; %s sampled. "
		"~ marks an estimate, ± its 95%% interval;\n  a site is called growing "
		"only when its stacks together grew by more than theirs\n",
		report__count(s->calls, c), report__plural(s->calls, "call", "calls"),
		report__human_size(s->bytes, b, sizeof(b)), report__count(s->sampled, k));
}

static void print_totals(const struct report *r, FILE *f)
{
	const struct report_totals *t = &r->totals;
	char size[SIZE_LEN], n[COUNT_LEN], all[COUNT_LEN], frees[COUNT_LEN];
	const char *est = r->sampling ? "~" : "";

	print_sampling(r, f);
	report__human_size(t->outstanding_bytes, size, sizeof(size));
	report__count(t->outstanding_allocs, n);
	report__count(t->allocs, all);
	report__count(t->frees, frees);
	if (r->sampling) {
		fprintf(f, "Outstanding: ~%s ±%s in ~%s %s from %s %s", size,
			report__human_size((uint64_t)report__margin(t->outstanding_var), all,
					   sizeof(all)),
			n, report__plural(t->outstanding_allocs, "allocation", "allocations"),
			report__count(t->outstanding_samples, frees),
			report__plural(t->outstanding_samples, "sample", "samples"));
		report__count(t->allocs, all);
		report__count(t->frees, frees);
	} else {
		fprintf(f, "Outstanding: %s in %s %s", size, n,
			report__plural(t->outstanding_allocs, "allocation", "allocations"));
	}
	fprintf(f, " (%s%s %s, %s%s %s since tracing began)\n", est, all,
		report__plural(t->allocs, "allocation", "allocations"), est, frees,
		report__plural(t->frees, "free", "frees"));
	print_kinds(r, t, f);
	if (r->older_ms)
		fprintf(f, "Stacks below count only allocations older than %s ms.\n",
			report__count(r->older_ms, all));
	print_untracked(r, f);
	print_children(r, f);
}

/*
 * "2.0 MiB (2,097,152 bytes) in 512 allocations"; under sampling an
 * estimate: "~2.0 MiB ±310.5 KiB in ~512 allocations (37 samples)".
 */
static void put_figures(const struct report *r, uint64_t bytes, uint64_t allocs,
			uint64_t samples, double var, FILE *f)
{
	char h[SIZE_LEN], e[SIZE_LEN], n[COUNT_LEN], k[COUNT_LEN];

	if (!r->sampling) {
		text_put__amount(bytes, allocs, f);
		return;
	}
	fprintf(f, "~%s ±%s in ~%s %s (%s %s)", report__human_size(bytes, h, sizeof(h)),
		report__human_size((uint64_t)report__margin(var), e, sizeof(e)),
		report__count(allocs, n), report__plural(allocs, "allocation", "allocations"),
		report__count(samples, k), report__plural(samples, "sample", "samples"));
}

static void print_stack(const struct report *r, const struct report_stack *s, FILE *f)
{
	fputs("  ", f);
	put_figures(r, s->bytes, s->allocs, s->samples, s->var, f);
	fprintf(f, " from %s\n", report__api_name(s->api));
	report_insight__growth(r, s, f);
	report_runtime__text_stack(r, s, f);
	report_reach__text_stack(s, f);
	if (s->python_arena)
		fputs("      pymalloc arenas of 1 MiB: this stack needed a new one; the small objects in"
		      " them can come from any code\n", f);
	text_put__frames(s, r->full_names, f);
	report_allocs__text(r, s, f);
}

/* The top sites, and of each its first stacks, printed in full: -T sites, or all. */
static size_t top_shown(const struct report *r)
{
	return r->top && r->top < r->nr_sites ? r->top : r->nr_sites;
}

static size_t stacks_shown(const struct report *r, const struct report_site *site)
{
	if (r->brief)
		return 0;
	return site->nr_stacks < TEXT_SITE_STACKS ? site->nr_stacks : TEXT_SITE_STACKS;
}

void report_text__shown(const struct report *r, bool *shown)
{
	for (size_t i = 0; i < top_shown(r); i++)
		for (size_t j = 0; j < stacks_shown(r, &r->sites[i]); j++)
			shown[r->sites[i].stacks[j]] = true;
	report_insight__shown(r, shown);
}

/* "Site 1: 90.1 MiB (94,371,840 bytes) in 400,000 allocations from 14 stacks, at FRAME" */
static void print_site(const struct report *r, size_t idx, FILE *f)
{
	const struct report_site *site = &r->sites[idx];
	size_t shown = stacks_shown(r, site);
	uint64_t more_b = 0, more_a = 0;
	char k[COUNT_LEN];

	fprintf(f, "%sSite %zu: ", r->brief ? "" : "\n", idx + 1);
	put_figures(r, site->bytes, site->allocs, site->samples, site->var, f);
	fprintf(f, " from %s %s", report__count(site->nr_stacks, k),
		report__plural(site->nr_stacks, "stack", "stacks"));
	report_processes__site(r, site, f);
	report_insight__site_rank(site, f);
	fputs(", at ", f);
	text_put__site_frame(site, r->full_names, f);
	if (site->import)
		fputs(", during an import (start-up)", f);
	if (site->preinit && !site->runtime)	/* the runtime's say so below */
		fputs(", in an initializer before main (start-up)", f);
	if (site->runtime)
		fprintf(f, "\n  Not the program's: %s\n", runtime_blocks__what(site->runtime));
	fputc('\n', f);
	for (size_t j = 0; j < site->nr_stacks; j++) {
		const struct report_stack *s = &r->stacks[site->stacks[j]];

		if (j < shown) {
			fputc('\n', f);
			print_stack(r, s, f);
			continue;
		}
		more_b += s->bytes;
		more_a += s->allocs;
	}
	if (!r->brief && site->nr_stacks > shown)
		text_put__more(report__plural(site->nr_stacks - shown, "stack", "stacks"),
				  site->nr_stacks - shown, more_b, more_a, f);
}

/*
 * Sites at no frame of the program's own (analyze/sites.h: a stripped
 * program's, a library's constructor), the runtime's aside: the header's
 * "of the program's own code" is not true of them.
 */
static bool library_sites(const struct report *r)
{
	for (size_t i = 0; i < r->nr_sites; i++)
		if (!r->sites[i].own && !r->sites[i].runtime && r->sites[i].frame)
			return true;
	return false;
}

static void print_sites(const struct report *r, FILE *f)
{
	size_t shown = top_shown(r);
	char a[COUNT_LEN], b[COUNT_LEN];

	if (!r->nr_sites)
		return;
	if (r->nr_sites == 1)
		fputs("1 site", f);
	else if (shown < r->nr_sites)
		fprintf(f, "Top %s of %s sites by outstanding %s", report__count(shown, a),
			report__count(r->nr_sites, b), r->sort_count ? "allocations" : "bytes");
	else
		fprintf(f, "All %s sites by outstanding %s", report__count(r->nr_sites, a),
			r->sort_count ? "allocations" : "bytes");
	fprintf(f, " (%s %s in all, grouped by their innermost frame %s%s%s):\n",
		report__count(r->nr_stacks, a), report__plural(r->nr_stacks, "stack", "stacks"),
		r->kernel ? "outside the allocators" : "of the program's own code",
		!r->kernel && library_sites(r) ? ", else by a library's (or the interpreter's) that made the block" : "",
		report_runtime__sites(r) ? "; the runtime's own blocks, which no line of the "
					   "program's made, after the others" : "");
	for (size_t i = 0; i < shown; i++)
		print_site(r, i, f);
	report_runtime__text_after(r, shown, f);
	if (r->brief)
		fputs("(Each site's biggest stacks: in the final report, or now on SIGUSR1.)\n", f);
}

/*
 * Stacks dropped while few were live: the room was full of freed stacks
 * the sweep had not let go of yet. More room gives the sweep longer before
 * the churn fills it.
 */
static void print_outran(const struct report_totals *t, FILE *f)
{
	char n[COUNT_LEN], live[COUNT_LEN], room[COUNT_LEN], rate[COUNT_LEN];

	fprintf(f, "Dropped: %s %s without a stack: new stacks came faster than the sweep let go of "
		"freed ones (at most %s of the room's %s stacks live at a sweep; it lets go of %s "
		"a second of its CPU) (raise --stack-storage-size)\n",
		report__count(t->stacks_outran, n),
		report__plural(t->stacks_outran, "allocation", "allocations"),
		report__count(t->stacks_live_max, live), report__count(t->stack_room, room),
		report__count(t->sweep_rate, rate));
}

static void print_drop(enum memleak_counter c, uint64_t v, FILE *f)
{
	const struct drop_text *d = &drop_texts[c];
	const char *fix = report__counter_fix(c);
	char n[COUNT_LEN];

	if (d->what)
		fprintf(f, "Dropped: %s %s %s", report__count(v, n), report__plural(v, d->one, d->many),
			d->what);
	else	/* a drop counter added without its sentence is still shown */
		fprintf(f, "Dropped: %s (%s)", report__count(v, n), report__counter_name(c));
	if (fix)
		fprintf(f, " (raise %s)", fix);
	fputc('\n', f);
}

/* Nothing is lost silently: every drop, with the option that avoids it. */
static void print_drops(const struct report *r, FILE *f)
{
	bool any = false;

	for (int c = 0; c < CNT__COUNT; c++) {
		uint64_t v = r->totals.counters[c];

		if (!v || !report__counter_name(c))
			continue;
		if (!any)
			fputc('\n', f);
		any = true;
		if (c == CNT_STACKS_MAP_FULL && r->totals.stacks_outran) {
			print_outran(&r->totals, f);
			v -= r->totals.stacks_outran;
		}
		if (v)
			print_drop(c, v, f);
	}
}

/* A Python target: which one, and what its allocator means for the figures. */
static void print_python(const struct report *r, FILE *f)
{
	const struct report_python *py = r->python;

	if (!py)
		return;
	fprintf(f, "Python %s (%s), objects from %s (%s): ", py->version, py->path, py->malloc,
		py->malloc_why);
	if (py->objects)
		fputs("every object is a block of its own, at its line (--py-objects: pymalloc's API probed)\n",
		      f);
	else if (!strcmp(py->malloc, "pymalloc"))
		fputs("blocks over 512 bytes are exact;\n  smaller objects are in pymalloc's 1 MiB "
		      "arenas, each under the stack that needed it (--python-malloc malloc: every "
		      "object)\n", f);
	else
		fputs("every object is a block of its own\n", f);
	report_pyarenas__text(&py->arenas, f);
	if (py->shutdown)
		fputs("  Shown at the start of the interpreter's shutdown (Py_FinalizeEx), where tracing "
		      "stopped:\n  what the program held then; shutdown frees nearly all of it, and "
		      "those frees are not counted\n", f);
}

void report_text__summary(const struct report *r, FILE *f)
{
	print_header(r, f);
	print_totals(r, f);
	report_reach__text_head(r, f);
	print_python(r, f);
	report_insight__verdict(r, f);
}

int report_text__write(const struct report *r, FILE *f)
{
	print_header(r, f);
	print_totals(r, f);
	report_reach__text_head(r, f);
	print_python(r, f);
	report_insight__head(r, f);
	print_sites(r, f);
	report_processes__text(r, f);
	report_churn__print(r, f);
	print_drops(r, f);
	return ferror(f) ? -EIO : 0;
}
