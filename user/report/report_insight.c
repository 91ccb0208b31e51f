// SPDX-License-Identifier: GPL-2.0
/*
 * The text report's analysis: the verdict on the target's memory, and the
 * growing stacks first (a small leak must not hide behind a big cache);
 * after the stacks, the churn and the peak (report_churn.c). Everything
 * here is printed only when the report has an analysis (memleakbpf's own;
 * not hand-made ones).
 *
 * The lines that head these stacks deliberately differ from the
 * "N bytes in N allocations from API" of the outstanding list, which
 * scripts parse: a stack shown twice must not be counted twice.
 */
#include <math.h>
#include <string.h>
#include "analyze/history.h"
#include "analyze/verdict.h"
#include "model/report.h"
#include "report_advice.h"
#include "report_incomplete.h"
#include "report_insight.h"
#include "report_pyarenas.h"
#include "report_runtime.h"
#include "report_trend.h"
#include "text_put.h"

#define SIZE_LEN 64
#define COUNT_LEN REPORT_COUNT_LEN

static const char *size_str(uint64_t v, char *buf)
{
	return report__human_size(v, buf, SIZE_LEN);
}

/* A signed amount: "-1.5 MiB", "+40.0 KiB". */
static const char *signed_size(double v, char *buf)
{
	char s[SIZE_LEN - 1];

	report__human_size((uint64_t)llround(fabs(v)), s, sizeof(s));
	snprintf(buf, SIZE_LEN, "%s%s", v < 0 ? "-" : "+", s);
	return buf;
}

static unsigned percent(uint64_t part, uint64_t whole)
{
	return whole ? (unsigned)llround(100.0 * (double)part / (double)whole) : 0;
}

static const char *ordinal(unsigned n, char *buf)
{
	const char *sfx = n % 100 >= 11 && n % 100 <= 13 ? "th" :
			  n % 10 == 1 ? "st" : n % 10 == 2 ? "nd" : n % 10 == 3 ? "rd" : "th";

	snprintf(buf, COUNT_LEN, "%u%s", n, sfx);
	return buf;
}

/* ---------------------------------------------------------------- memory */

/* The memory's figures, and the live blocks' of the same moment (live). */
static void print_figures(const struct report *r, const struct report_sample *s, uint64_t live,
			  FILE *f)
{
	char a[SIZE_LEN], b[SIZE_LEN], c[SIZE_LEN];

	fprintf(f, "RSS %s, anonymous %s ([heap] %s", size_str(s->rss, a), size_str(s->anon, b),
		size_str(s->heap, c));
	if (s->arenas)
		fprintf(f, ", %u thread-arena %s using %s of %s", s->arenas,
			report__plural(s->arenas, "heap", "heaps"), size_str(s->arena, a),
			size_str(s->arena_reserved, b));
	fprintf(f, "); live blocks %s%s", r->sampling ? "~" : "", size_str(live, c));
}

static void print_memory(const struct report *r, FILE *f)
{
	const struct report_analysis *a = r->analysis;
	const struct report_memory *m = &a->memory;
	char live[SIZE_LEN];
	bool earlier;

	if (r->kernel) {
		fputs("Memory: the kernel's; what it allocated before tracing began is not counted, and growth alone decides the verdict\n", f);
		return;
	}
	if (!m->reports) {
		fprintf(f, "Memory: /proc/%d could not be read\n", r->pid);
		return;
	}
	/*
	 * Read before the target exited: the live blocks of that moment beside
	 * its RSS (v_containers' 1.3 MiB at its end stood beside an RSS of
	 * 0.0 s, above its anonymous 208.0 KiB), the end's after.
	 */
	earlier = !(a->nr_samples && !a->samples[a->nr_samples - 1].mem) &&
		  m->now.mem_t_s < m->now.t_s;
	fputs("Memory: ", f);
	print_figures(r, &m->now, earlier ? m->now.mem_live : m->now.live, f);
	if (a->nr_samples && !a->samples[a->nr_samples - 1].mem)
		fprintf(f, " (at %.1f s, its last reading)", m->now.t_s);
	else if (earlier)
		fprintf(f, "\n  (read at %.1f s, while pid %d ran: the last reading before it exited; live blocks %s%s at the end)",
			m->now.mem_t_s, r->pid, r->sampling ? "~" : "",
			size_str(m->now.live, live));
	fputc('\n', f);
}

/*
 * "At 4.5 s: RSS ... for 102.4 MiB of live blocks (10% of RSS): 921.6 MiB
 * retained": the figures of one moment, when the memory was read (the
 * report's own live bytes may be of a later one, after the target exited).
 */
static void print_retention(const struct report *r, const char *when,
			    const struct report_sample *s, int64_t retained, FILE *f)
{
	char a[SIZE_LEN], b[SIZE_LEN], c[SIZE_LEN], d[SIZE_LEN];
	const char *est = r->sampling ? "~" : "";	/* live blocks, and so retained: estimates */

	fprintf(f, "  %s %.1f s: RSS %s (anonymous %s) for %s%s of live blocks (%u%% of RSS): %s%s retained",
		when, s->mem_t_s, size_str(s->rss, a), size_str(s->anon, b), est,
		size_str(s->mem_live, c), percent(s->mem_live, s->rss), est,
		size_str(retained > 0 ? (uint64_t)retained : 0, d));
}

/* A sentence on the live blocks' trend, when one was fitted. */
static void print_live_trend(const struct report_memory *m, FILE *f)
{
	static const char *const said[] = {
		[TREND_GROWING] = "grew", [TREND_STABLE] = "held steady",
		[TREND_SHRINKING] = "shrank",
	};

	if (m->live.trend == TREND_GROWING || m->live.trend == TREND_STABLE ||
	    m->live.trend == TREND_SHRINKING)
		fprintf(f, "  The live blocks %s over the run.\n", said[m->live.trend]);
}

static void print_fragmentation(const struct report *r, FILE *f)
{
	const struct report_memory *m = &r->analysis->memory;
	char a[SIZE_LEN], b[SIZE_LEN];

	print_retention(r, "At", &m->worst, m->worst_retained, f);
	fputs(".\n", f);
	print_live_trend(m, f);
	report_advice__retained_where(r, f);
	if (m->released) {
		fprintf(f, "  Given back since: at %.1f s RSS %s for %s%s of live blocks\n"
			"  (released by the program or the allocator, or the blocks in the way were freed).\n",
			m->now.mem_t_s, size_str(m->now.rss, a), r->sampling ? "~" : "",
			size_str(m->now.mem_live, b));
	} else if (m->reused) {
		print_retention(r, "Reused since: at", &m->now, m->now_retained, f);
		fputs(";\n  the live blocks grew into the memory retained: the allocator reused it rather than give it back.\n", f);
	} else if (m->now.mem_t_s > m->worst.mem_t_s) {
		print_retention(r, "Still at", &m->now, m->now_retained, f);
		fputs(".\n", f);
	}
	report_advice__text(r, f);
}

/* pymalloc's (a Python target's arenas), the allocator's, or both. */
static void print_fragmentations(const struct report *r, FILE *f)
{
	const struct report_memory *m = &r->analysis->memory;

	if (m->pymalloc && r->python)
		report_pyarenas__verdict(&r->python->arenas, f);
	if (!m->pymalloc || verdict__retained(m))
		print_fragmentation(r, f);
}

static size_t growing_sites(const struct report *r)
{
	size_t n = 0;

	for (size_t i = 0; i < r->nr_sites; i++)
		n += r->sites[i].rank > 0;
	return n;
}

/* Of growing_slope: every kind (kind < 0), one kind, pymalloc's arenas, or stacks that renew their blocks. */
#define KIND_PY_ARENA (-2)
#define KIND_RENEWED (-3)

/* The growing stacks' slopes added up: of every kind (kind -1), of one, KIND_PY_ARENA or KIND_RENEWED. */
static double growing_slope(const struct report *r, int kind)
{
	double sum = 0;

	for (size_t i = 0; i < r->analysis->nr_growing; i++) {
		const struct report_stack *s = &r->stacks[r->analysis->growing[i]];

		if (kind == -1 || (int)MEMLEAK_KIND_OF(s->api) == kind ||
		    (kind == KIND_PY_ARENA && s->python_arena) ||
		    (kind == KIND_RENEWED && s->growth.renewed))
			sum += s->growth.slope;
	}
	return sum;
}

/*
 * A growing pymalloc arena is charged to the line that needed a new one,
 * while the objects filling it can be any line's (a churn's line took the
 * arena its neighbour's leak filled): the leak's lines are then not known.
 */
static const char ARENA_GROWTH[] =
	";\n  of it pymalloc's arenas %s/s, each under the line that needed a new one: "
	"the objects\n  in them can be any line's (--python-malloc malloc puts each at its own)";

/*
 * A growing stack none of whose blocks is older than a report interval
 * (insight.c's mark_renewed) is not a block never freed.
 */
static const char RENEWED_GROWTH[] =
	";\n  of it %s/s in stacks none of whose blocks is older than a report interval: they\n"
	"  free and make them again, so what grows is how many are held at once (connections,\n"
	"  requests in flight), not blocks never freed";

/* What part of the growth a caveat (a format taking the slope) holds for, if any. */
static void print_growth_part(const struct report *r, int kind, const char *caveat, FILE *f)
{
	double slope = growing_slope(r, kind);
	char a[SIZE_LEN];

	if (slope != 0)
		fprintf(f, caveat, signed_size(slope, a));
}

/*
 * Start-up lasted past the first interval (which always counts: every stack
 * is new then): trends are measured since its end, and the verdict says so.
 */
static bool long_startup(const struct report *r)
{
	const struct report_analysis *a = r->analysis;

	return a->nr_samples && a->memory.startup.end_s > a->samples[0].t_s;
}

static void print_since_startup(const struct report *r, FILE *f)
{
	if (long_startup(r))
		fprintf(f, " since start-up ended at %.1f s", r->analysis->memory.startup.end_s);
}

static void print_leak(const struct report *r, FILE *f)
{
	size_t n = r->analysis->nr_growing, sites = growing_sites(r);
	char a[SIZE_LEN];

	if (!n) {
		report_incomplete__untracked_growth(&r->analysis->memory, f);
		return;
	}
	fprintf(f, "%zu %s steadily (%zu %s)", sites,
		report__plural(sites, "site grows", "sites grow"), n,
		report__plural(n, "stack", "stacks"));
	print_since_startup(r, f);
	fprintf(f, ", %s/s in all", signed_size(growing_slope(r, -1), a));
	if (growing_slope(r, KIND_MMAP) != 0)
		fprintf(f, " (mmaps %s/s of it)", signed_size(growing_slope(r, KIND_MMAP), a));
	fputs(" (under Growing, the most leak-like first)", f);
	print_growth_part(r, KIND_PY_ARENA, ARENA_GROWTH, f);
	print_growth_part(r, KIND_RENEWED, RENEWED_GROWTH, f);
	if (r->analysis->memory.untracked_growing) {
		fputs(";\n  and ", f);
		report_incomplete__untracked_growth(&r->analysis->memory, f);
	}
}

/* Reports after the one that ended start-up: the points a trend has. */
static unsigned reports_after(const struct report *r, double t_s)
{
	const struct report_analysis *a = r->analysis;
	unsigned n = 0;

	for (size_t i = 0; i < a->nr_samples; i++)
		n += a->samples[i].t_s > t_s;
	return n;
}

/* "96% of the last interval's allocations came from code not run before (1,234 new stacks)..." */
static void print_new_code(const struct report_startup *st, FILE *f)
{
	char a[COUNT_LEN], b[COUNT_LEN];

	uint32_t n = st->by_site ? st->new_sites : st->new_stacks;

	/* Sampling: by site, an import's or one not seen before (analyze/history_sites.h). */
	fprintf(f, "%u%% of the last interval's %sallocations came from code not run before\n"
		"  (%s new %s%s", (unsigned)llround(100 * st->new_share), st->by_site ? "estimated " : "",
		report__count(n, a), st->by_site ? "site" : "stack",
		st->by_site ? (n == 1 ? " new or importing" : "s new or importing") : n == 1 ? "" : "s");
	if (st->unstored)
		fprintf(f, "; %s %s whose stack a full stack map or ring lost",
			report__count(st->unstored, b),
			report__plural(st->unstored, "allocation", "allocations"));
	fputs("):\n  what start-up builds (modules, tables, caches) grows the heap as a leak would:\n"
	      "  trends are measured from the first report after it\n", f);
}

static void print_startup(const struct report *r, FILE *f)
{
	const struct report_startup *st = &r->analysis->memory.startup;
	char a[COUNT_LEN];

	fputs("start-up, not judged yet: ", f);
	if (st->ongoing)
		print_new_code(st, f);
	else
		fprintf(f, "it ended at %.1f s; trends need %d reports after it, this is the %s\n",
			st->end_s, HISTORY_MIN_POINTS, ordinal(reports_after(r, st->end_s), a));
}

/*
 * "heap blocks +100.0 KiB, mmaps +2.0 MiB since tracing began": the exact
 * totals of this report (nothing is live when tracing begins).
 */
static void print_kinds_since(const struct report *r, FILE *f)
{
	const struct report_totals *t = &r->totals;
	char a[SIZE_LEN];

	fprintf(f, "heap blocks %s", signed_size((double)t->kind_bytes[KIND_HEAP], a));
	if (t->kind_allocs[KIND_MMAP])
		fprintf(f, ", mmaps %s", signed_size((double)t->kind_bytes[KIND_MMAP], a));
	fputs(" since tracing began\n", f);
}

/*
 * The target exited with blocks outstanding and no leak was named: they
 * were never freed, and whatever the trends say, the reader hears of them.
 * A Python target's are what it held as its shutdown began, where tracing
 * stopped: the shutdown frees most of them, so "never freed" would be false.
 */
static void print_at_exit(const struct report *r, FILE *f)
{
	const struct report_memory *m = &r->analysis->memory;
	const struct report_totals *t = &r->totals;
	bool shutdown = r->python && r->python->shutdown;
	char a[SIZE_LEN], n[COUNT_LEN];

	if (!m->exited || !t->outstanding_allocs || m->verdict == VERDICT_LEAK ||
	    m->verdict == VERDICT_LEAK_AND_FRAGMENTATION)
		return;
	fprintf(f, "  %s%s in %s heap %s", r->sampling ? "~" : "",
		size_str(t->kind_bytes[KIND_HEAP], a), report__count(t->kind_allocs[KIND_HEAP], n),
		report__plural(t->kind_allocs[KIND_HEAP], "block", "blocks"));
	if (!shutdown)
		fputs(" still outstanding at exit", f);
	if (t->kind_allocs[KIND_MMAP])
		fprintf(f, " (and %s in %s %s)", size_str(t->kind_bytes[KIND_MMAP], a),
			report__count(t->kind_allocs[KIND_MMAP], n),
			report__plural(t->kind_allocs[KIND_MMAP], "mmap", "mmaps"));
	fputs(shutdown ? " held as the interpreter's shutdown began, which frees most of them "
			 "(uncounted): see the sites below\n" :
			 ": never freed; see the sites below\n", f);
	report_runtime__text_part(r, f);
}

/*
 * A trend has few points: a growth over all but the last of them (a loop
 * that held more at each step, then let go as it returned) fits no line.
 * The torch job with --leak, judged over 3 reports of 2 s, said no leak
 * where a report a second named it.
 */
static void print_few_points(const struct report *r, FILE *f)
{
	double since = long_startup(r) ? r->analysis->memory.startup.end_s : -1;
	unsigned n = reports_after(r, since);

	if (n >= 2 * HISTORY_MIN_POINTS)
		return;
	fprintf(f, ", over %u reports only (a growth that ended within them may not show: a "
		"shorter INTERVAL gives more)", n);
}

/* "no stack grows steadily; the live blocks hold steady, heap blocks +7.0 MiB since tracing began" */
static void print_no_growth(const struct report *r, FILE *f)
{
	const struct report_memory *m = &r->analysis->memory;

	fputs(r->sampling ? "no site grows steadily" : "no stack grows steadily", f);
	print_since_startup(r, f);
	print_few_points(r, f);
	fprintf(f, "; the live blocks %s, ",
		m->live.trend == TREND_SHRINKING ? "shrink" : "hold steady");
	print_kinds_since(r, f);
}

/*
 * "the reports from 64.1 s to 90.1 s named a leak
 *   (20 stacks growing steadily, +530.0 KiB/s in all at the last), the most
 *   leak-like at step (train.py:45);
 *   none grows since: live blocks 108.7 MiB then, 95.1 MiB now"
 */
static void print_grew(const struct report *r, FILE *f)
{
	const struct report_grew *g = &r->analysis->memory.grew;
	const char *est = r->sampling ? "~" : "";
	char a[SIZE_LEN], b[SIZE_LEN], c[SIZE_LEN];

	if (g->from_s < g->to_s)
		fprintf(f, "the reports from %.1f s to %.1f s named a leak", g->from_s, g->to_s);
	else
		fprintf(f, "the report at %.1f s named a leak", g->from_s);
	fprintf(f, "\n  (%zu %s steadily, %s/s in all at the last)", g->stacks,
		report__plural(g->stacks, "stack growing", "stacks growing"),
		signed_size(g->slope, a));
	if (g->function[0]) {
		fputs(", the most leak-like at ", f);
		text_put__function(g->function, r->full_names, f);
		if (g->file[0] && g->line > 0) {
			fputs(" (", f);
			text_put__oneline(g->file, f);
			fprintf(f, ":%d)", g->line);
		}
	}
	fprintf(f, ";\n  none grows since: live blocks %s%s then, %s%s now", est,
		size_str(g->live, b), est, size_str(r->totals.outstanding_bytes, c));
}

/* No stack grows now, though earlier reports named a leak. */
static void print_stopped(const struct report *r, FILE *f)
{
	fputs("grew, then stopped: ", f);
	print_grew(r, f);
	fputs(".\n  A leak that stopped, a cache that filled, or what a loop held until it ended:\n"
	      "  the earlier reports list those stacks under Growing.\n", f);
}

/* The live total grows, though no one stack does: each grew too little, or is too new. */
static void print_growth(const struct report *r, FILE *f)
{
	const struct report_growth *g = &r->analysis->memory.live;
	char a[SIZE_LEN];

	fprintf(f, "growing: the live blocks grow steadily (%s/s, R\xc2\xb2 %.2f)",
		signed_size(g->slope, a), g->r2);
	print_since_startup(r, f);
	fputs(",\n  though no stack does by itself: the growth is spread over stacks, or comes from new ones;\n"
	      "  see the sites by outstanding bytes.\n", f);
	if (verdict__retained(&r->analysis->memory) || r->analysis->memory.pymalloc)
		print_fragmentations(r, f);
}

/*
 * Fragmentation before the live blocks' trend is known, or on incomplete
 * figures: what the allocator holds is measured, but whether the live
 * blocks leak is not known yet, and the verdict says why.
 */
static void print_leak_unknown(const struct report *r, FILE *f)
{
	const struct report_memory *m = &r->analysis->memory;
	char a[COUNT_LEN];

	if (m->trend_known) {
		fputs(".\n", f);
	} else if (m->incomplete) {
		fputs(";\n  leak or not is unknown: the figures are incomplete (below).\n", f);
	} else if (m->live.trend == TREND_STARTUP && !reports_after(r, m->startup.end_s)) {
		fputs(";\n  leak or not is not known yet: start-up goes on.\n", f);
	} else if (m->live.trend == TREND_STARTUP) {
		fprintf(f, ";\n  leak or not is not known yet: the live blocks' trend needs %d reports after start-up, this is the %s.\n",
			HISTORY_MIN_POINTS, ordinal(reports_after(r, m->startup.end_s), a));
	} else {
		fprintf(f, ";\n  leak or not is not known yet: trends need %d reports, this is the %s.\n",
			HISTORY_MIN_POINTS, ordinal((unsigned)r->analysis->nr_samples, a));
	}
}

static void print_verdict(const struct report *r, FILE *f)
{
	const struct report_memory *m = &r->analysis->memory;
	char a[SIZE_LEN], b[SIZE_LEN];
	size_t n = r->analysis->nr_samples;

	fputs("Verdict: ", f);
	switch (m->verdict) {
	case VERDICT_UNKNOWN:
		if (!m->reports && !r->kernel)
			fputs("none: the target's memory could not be read\n", f);
		else
			fprintf(f, "too early: trends need %d reports, this is the %s (a shorter INTERVAL gives them sooner)\n",
				HISTORY_MIN_POINTS, ordinal((unsigned)n, a));
		report_incomplete__text(r, f);
		report_incomplete__sampling(r, f);
		print_at_exit(r, f);
		return;
	case VERDICT_NO_LEAK:
		if (m->all_freed) {
			fputs("no leak: every block allocated since tracing began was freed by the "
			      "exit\n", f);
			break;
		}
		/* fall through */
	case VERDICT_INCOMPLETE:
		fputs(m->verdict == VERDICT_NO_LEAK ? "no leak seen: " :
		      "incomplete figures, no leak in them: ", f);
		print_no_growth(r, f);
		break;
	case VERDICT_GROWTH:
		print_growth(r, f);
		break;
	case VERDICT_STOPPED:
		print_stopped(r, f);
		break;
	case VERDICT_STARTUP:
		print_startup(r, f);
		break;
	case VERDICT_LEAK:
		fputs("leak: ", f);
		print_leak(r, f);
		fputs(".\n", f);
		break;
	case VERDICT_FRAGMENTATION:
		fprintf(f, "fragmentation%s: the allocator holds memory that no live %s uses",
			m->trend_known && !m->grew.stacks ? ", not a leak" : "",
			m->pymalloc ? "object" : "block");
		print_leak_unknown(r, f);
		if (m->grew.stacks) {
			fputs("  And ", f);
			print_grew(r, f);
			fputs(".\n", f);
		}
		print_fragmentations(r, f);
		break;
	case VERDICT_LEAK_AND_FRAGMENTATION:
		fputs("leak and fragmentation: ", f);
		print_leak(r, f);
		fputs(";\n  and the allocator holds memory that no live block uses.\n", f);
		print_fragmentations(r, f);
		break;
	}
	report_incomplete__text(r, f);
	report_incomplete__sampling(r, f);
	print_at_exit(r, f);
	if (m->attached)
		fprintf(f, "  Measured from the attach (RSS %s, anonymous %s then): what was allocated before it is unknown.\n",
			size_str(m->base.rss, a), size_str(m->base.anon, b));
}

/* ---------------------------------------------------------------- growing */

void report_insight__site_rank(const struct report_site *site, FILE *f)
{
	char a[COUNT_LEN];

	if (site->rank)
		fprintf(f, " (the %s under Growing)", ordinal(site->rank, a));
}

/*
 * "stable" or "shrinking" about blocks some of which went untracked holds
 * only for those tracked: a leak's blocks may be among the others.
 */
void report_insight__growth(const struct report *r, const struct report_stack *s, FILE *f)
{
	const struct report_growth *g = &s->growth;
	bool partial = r->analysis && r->analysis->memory.untracked &&
		       (g->trend == TREND_STABLE || g->trend == TREND_SHRINKING);

	if (!g->intervals)
		return;
	fprintf(f, "      %s%s: ", report_trend__word(g), partial ? " as far as tracked" : "");
	report_trend__figures(g, f);
	fputc('\n', f);
}

/* The most leak-like growing sites, each with its biggest growing stack: -T of them, or all. */
static size_t growing_shown(const struct report *r)
{
	size_t n = growing_sites(r);

	return r->top && r->top < n ? r->top : n;
}

void report_insight__shown(const struct report *r, bool *shown)
{
	size_t n;

	if (!r->analysis || r->brief)
		return;
	n = growing_shown(r);
	for (size_t i = 0; i < r->nr_sites; i++)
		if (r->sites[i].rank && r->sites[i].rank <= n)
			shown[r->sites[i].stacks[0]] = true;
}

/* Its growing stacks after the first (the biggest): "and 11 more growing stacks: ...". */
static void print_more_growing(const struct report *r, const struct report_site *site, FILE *f)
{
	uint64_t b = 0, a = 0;

	for (size_t j = 1; j < site->growing; j++) {
		b += r->stacks[site->stacks[j]].bytes;
		a += r->stacks[site->stacks[j]].allocs;
	}
	if (site->growing > 1)
		text_put__more(report__plural(site->growing - 1, "growing stack", "growing stacks"),
				  site->growing - 1, b, a, f);
}

/*
 * "1. +700.2 KiB/s from 12 of its 14 stacks, now 90.1 MiB in 400,000
 * allocations, at FRAME", then its biggest growing stack (its first).
 */
static void print_growing_site(const struct report *r, const struct report_site *site, FILE *f)
{
	const struct report_stack *s = &r->stacks[site->stacks[0]];
	char h[SIZE_LEN], n[COUNT_LEN], g[COUNT_LEN], t[COUNT_LEN];
	const char *est = r->sampling ? "~" : "";	/* sampled: the figures are estimates */

	fprintf(f, "\n  %u. %s%s/s", site->rank, est, signed_size(site->slope, h));
	if (site->nr_stacks > 1)
		fprintf(f, " from %s of its %s stacks", report__count(site->growing, g),
			report__count(site->nr_stacks, t));
	fprintf(f, ", now %s%s in %s%s %s, at ", est, size_str(site->bytes, h), est,
		report__count(site->allocs, n), report__plural(site->allocs, "allocation", "allocations"));
	text_put__site_frame(site, r->full_names, f);
	fputs("\n      ", f);
	report_trend__figures(&s->growth, f);
	fprintf(f, ": now %s%s in %s%s %s from %s\n", est, size_str(s->bytes, h), est,
		report__count(s->allocs, n), report__plural(s->allocs, "allocation", "allocations"),
		report__api_name(s->api));
	if (r->brief)
		return;
	text_put__frames(s, r->full_names, f);
	print_more_growing(r, site, f);
}

/*
 * The site ranked rank (1: the most leak-like). A scan per site shown: few
 * sites grow, and -T of them are shown.
 */
static const struct report_site *site_ranked(const struct report *r, unsigned rank)
{
	for (size_t i = 0; i < r->nr_sites; i++)
		if (r->sites[i].rank == rank)
			return &r->sites[i];
	return NULL;
}

static void print_growing(const struct report *r, FILE *f)
{
	size_t n = growing_sites(r), shown = growing_shown(r);

	if (!n)
		return;
	if (shown < n)
		fprintf(f, "\nGrowing: top %zu of %zu sites, the most leak-like first:\n", shown, n);
	else
		fprintf(f, "\nGrowing: %zu %s, the most leak-like first:\n", n,
			report__plural(n, "site", "sites"));
	for (size_t i = 1; i <= shown; i++)
		print_growing_site(r, site_ranked(r, (unsigned)i), f);
}

void report_insight__verdict(const struct report *r, FILE *f)
{
	if (!r->analysis)
		return;
	print_memory(r, f);
	print_verdict(r, f);
}

void report_insight__head(const struct report *r, FILE *f)
{
	if (!r->analysis)
		return;
	report_insight__verdict(r, f);
	print_growing(r, f);
	if (r->nr_stacks)
		fputc('\n', f);
}
