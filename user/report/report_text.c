// SPDX-License-Identifier: GPL-2.0
/* The human-readable report, printed at every interval and at the end. */
#include <errno.h>
#include <string.h>
#include <time.h>
#include "model/report.h"

#define COUNT_LEN REPORT_COUNT_LEN
#define SIZE_LEN 64

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
				  "without a stack: stack map full" },
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
				     "without Python frames: Python stack map full" },
	[CNT_PY_STACK_ERRORS] = { "allocation", "allocations",
				  "without Python frames: they could not be read" },
	[CNT_UNWIND_PENDING] = { "allocation", "allocations",
				 "with a stack cut short: an unwind table was still loading (-p, just after attaching)" },
};

static const char *basename_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/*
 * Names, paths and the command line come from the target, and this goes to a
 * terminal, often root's: no control character (C0, DEL, and C1 such as
 * U+009B, a CSI to some terminals) may reach it, and no byte that is not
 * UTF-8. Each becomes '?'; the line stays one line.
 */
static void put_oneline(const char *s, FILE *f)
{
	while (*s) {
		const unsigned char *u = (const unsigned char *)s;
		int n = report__utf8_len(s);
		bool c1 = n == 2 && u[0] == 0xc2 && u[1] < 0xa0;

		if (!n || c1 || u[0] < 0x20 || u[0] == 0x7f)
			fputc('?', f);
		else
			fwrite(s, 1, n, f);
		s += n ? n : 1;
	}
}

static void print_header(const struct report *r, FILE *f)
{
	char now[16] = "??:??:??";
	struct tm tm;
	time_t t = time(NULL);

	if (localtime_r(&t, &tm))
		strftime(now, sizeof(now), "%H:%M:%S", &tm);
	fprintf(f, "[%s] memleakbpf: %spid %d", now, r->final ? "Final report: " : "", r->pid);
	if (r->command) {
		fputs(" (", f);
		put_oneline(r->command, f);
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

static void print_totals(const struct report *r, FILE *f)
{
	const struct report_totals *t = &r->totals;
	char size[SIZE_LEN], n[COUNT_LEN], all[COUNT_LEN], frees[COUNT_LEN];

	report__human_size(t->outstanding_bytes, size, sizeof(size));
	report__count(t->outstanding_allocs, n);
	report__count(t->allocs, all);
	report__count(t->frees, frees);
	fprintf(f, "Outstanding: %s in %s %s (%s %s, %s %s since tracing began)\n", size, n,
		report__plural(t->outstanding_allocs, "allocation", "allocations"), all,
		report__plural(t->allocs, "allocation", "allocations"), frees,
		report__plural(t->frees, "free", "frees"));
	if (r->older_ms)
		fprintf(f, "Stacks below count only allocations older than %s ms.\n",
			report__count(r->older_ms, all));
	print_untracked(r, f);
}

/*
 * "#3 func (file:line, inlined) [module]", or the best that is known. The
 * module is shown once per address: not on the inlined calls that share it
 * with the frame that follows them.
 */
static void print_frame(const struct report_frame *fr, size_t idx, bool show_module, FILE *f)
{
	fprintf(f, "      #%zu ", idx);
	if (fr->function) {
		put_oneline(fr->function, f);
	} else if (fr->module) {
		put_oneline(basename_of(fr->module), f);
		fprintf(f, "+0x%llx", (unsigned long long)fr->module_offset);
	} else {
		fprintf(f, "0x%llx", (unsigned long long)fr->address);
	}

	if (fr->file) {
		fputs(" (", f);
		put_oneline(fr->file, f);
		if (fr->line > 0)
			fprintf(f, ":%d", fr->line);
		fputs(fr->inlined ? ", inlined)" : ")", f);
	} else if (fr->inlined) {
		fputs(" (inlined)", f);
	}

	if (fr->language == FRAME_PYTHON)
		fputs(" [python]", f);
	else if (!fr->module)
		fputs(" [unknown]", f);
	else if (fr->function && show_module) {
		fputs(" [", f);
		put_oneline(basename_of(fr->module), f);
		fputc(']', f);
	}
	fputc('\n', f);
}

static void print_stack(const struct report_stack *s, FILE *f)
{
	char human[SIZE_LEN], exact[COUNT_LEN], n[COUNT_LEN];

	report__count(s->bytes, exact);
	report__count(s->allocs, n);
	if (s->bytes < 1024)
		fprintf(f, "  %s %s", exact, report__plural(s->bytes, "byte", "bytes"));
	else
		fprintf(f, "  %s (%s bytes)", report__human_size(s->bytes, human, sizeof(human)),
			exact);
	fprintf(f, " in %s %s from %s\n", n, report__plural(s->allocs, "allocation", "allocations"),
		report__api_name(s->api));
	report_text__growth(s, f);
	if (s->python_arena)
		fputs("      pymalloc arenas of 1 MiB: this stack needed a new one; the small objects in"
		      " them can come from any code\n", f);
	report_text__frames(s, f);
}

void report_text__frames(const struct report_stack *s, FILE *f)
{
	if (s->no_stack)
		fputs("      [stack unavailable]\n", f);
	for (size_t i = 0; i < s->nr_frames; i++) {
		const struct report_frame *fr = &s->frames[i];
		bool shared = fr->inlined && i + 1 < s->nr_frames &&
			      s->frames[i + 1].address == fr->address;

		print_frame(fr, i, !shared, f);
	}
	if (s->truncated)
		fprintf(f, "      [truncated: deeper than %d frames]\n", MEMLEAK_MAX_STACK_DEPTH);
	if (s->unwind_pending)
		fputs("      [cut short: an unwind table was still loading (-p, just after attaching)]\n", f);
}

/* The top stacks, printed in full: -T of them, or all. */
static size_t top_shown(const struct report *r)
{
	return r->top && r->top < r->nr_stacks ? r->top : r->nr_stacks;
}

void report_text__shown(const struct report *r, bool *shown)
{
	for (size_t i = 0; i < top_shown(r); i++)
		shown[i] = true;
	report_text__insight_shown(r, shown);
}

static void print_stacks(const struct report *r, FILE *f)
{
	size_t shown = top_shown(r);
	char a[COUNT_LEN], b[COUNT_LEN];

	if (!r->nr_stacks)
		return;
	if (r->nr_stacks == 1)
		fputs("1 stack:\n", f);
	else if (shown < r->nr_stacks)
		fprintf(f, "Top %s of %s stacks by outstanding bytes:\n", report__count(shown, a),
			report__count(r->nr_stacks, b));
	else
		fprintf(f, "All %s stacks by outstanding bytes:\n", report__count(r->nr_stacks, a));
	for (size_t i = 0; i < shown; i++) {
		fputc('\n', f);
		print_stack(&r->stacks[i], f);
	}
}

/* Nothing is lost silently: every drop, with the option that avoids it. */
static void print_drops(const struct report *r, FILE *f)
{
	char n[COUNT_LEN];
	bool any = false;

	for (int c = 0; c < CNT__COUNT; c++) {
		const struct drop_text *d = &drop_texts[c];
		uint64_t v = r->totals.counters[c];
		const char *fix = report__counter_fix(c);

		if (!v || !report__counter_name(c))
			continue;
		if (!any)
			fputc('\n', f);
		any = true;
		if (d->what)
			fprintf(f, "Dropped: %s %s %s", report__count(v, n), report__plural(v, d->one, d->many),
				d->what);
		else	/* a drop counter added without its sentence is still shown */
			fprintf(f, "Dropped: %s (%s)", report__count(v, n), report__counter_name(c));
		if (fix)
			fprintf(f, " (raise %s)", fix);
		fputc('\n', f);
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
	if (!strcmp(py->malloc, "pymalloc"))
		fputs("blocks over 512 bytes are exact;\n  smaller objects are in pymalloc's 1 MiB "
		      "arenas, each under the stack that needed it (--python-malloc malloc: every "
		      "object)\n", f);
	else
		fputs("every object is a block of its own\n", f);
}

int report_text__write(const struct report *r, FILE *f)
{
	print_header(r, f);
	print_totals(r, f);
	print_python(r, f);
	report_text__insight_head(r, f);
	print_stacks(r, f);
	report_text__insight_tail(r, f);
	print_drops(r, f);
	return ferror(f) ? -EIO : 0;
}
