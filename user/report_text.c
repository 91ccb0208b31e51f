// SPDX-License-Identifier: GPL-2.0
/* The human-readable report, printed at every interval and at the end. */
#include <errno.h>
#include <string.h>
#include <time.h>
#include "report.h"

#define COUNT_LEN 32	/* UINT64_MAX with separators is 26 characters */
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
};

/* 1234567 -> "1,234,567" */
static const char *count_str(uint64_t v, char *buf)
{
	char digits[COUNT_LEN];
	int n = snprintf(digits, sizeof(digits), "%llu", (unsigned long long)v);
	int o = 0;

	for (int i = 0; i < n; i++) {
		if (i && (n - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = digits[i];
	}
	buf[o] = '\0';
	return buf;
}

static const char *plural(uint64_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

static const char *basename_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* The command line comes from the target: keep it on one line. */
static void put_oneline(const char *s, FILE *f)
{
	for (; *s; s++)
		fputc((unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s, f);
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

static void print_totals(const struct report *r, FILE *f)
{
	const struct report_totals *t = &r->totals;
	char size[SIZE_LEN], n[COUNT_LEN], all[COUNT_LEN], frees[COUNT_LEN];

	report__human_size(t->outstanding_bytes, size, sizeof(size));
	count_str(t->outstanding_allocs, n);
	count_str(t->allocs, all);
	count_str(t->frees, frees);
	fprintf(f, "Outstanding: %s in %s %s (%s %s, %s %s since tracing began)\n", size, n,
		plural(t->outstanding_allocs, "allocation", "allocations"), all,
		plural(t->allocs, "allocation", "allocations"), frees,
		plural(t->frees, "free", "frees"));
	if (r->older_ms)
		fprintf(f, "Stacks below count only allocations older than %s ms.\n",
			count_str(r->older_ms, all));
}

/*
 * "#3 func (file:line, inlined) [module]", or the best that is known. The
 * module is shown once per address: not on the inlined calls that share it
 * with the frame that follows them.
 */
static void print_frame(const struct report_frame *fr, size_t idx, bool show_module, FILE *f)
{
	fprintf(f, "      #%zu ", idx);
	if (fr->function)
		fputs(fr->function, f);
	else if (fr->module)
		fprintf(f, "%s+0x%llx", basename_of(fr->module),
			(unsigned long long)fr->module_offset);
	else
		fprintf(f, "0x%llx", (unsigned long long)fr->address);

	if (fr->file) {
		fprintf(f, " (%s", fr->file);
		if (fr->line > 0)
			fprintf(f, ":%d", fr->line);
		fputs(fr->inlined ? ", inlined)" : ")", f);
	} else if (fr->inlined) {
		fputs(" (inlined)", f);
	}

	if (!fr->module)
		fputs(" [unknown]", f);
	else if (fr->function && show_module)
		fprintf(f, " [%s]", basename_of(fr->module));
	fputc('\n', f);
}

static void print_stack(const struct report_stack *s, FILE *f)
{
	char human[SIZE_LEN], exact[COUNT_LEN], n[COUNT_LEN];

	count_str(s->bytes, exact);
	count_str(s->allocs, n);
	if (s->bytes < 1024)
		fprintf(f, "  %s %s", exact, plural(s->bytes, "byte", "bytes"));
	else
		fprintf(f, "  %s (%s bytes)", report__human_size(s->bytes, human, sizeof(human)),
			exact);
	fprintf(f, " in %s %s from %s\n", n, plural(s->allocs, "allocation", "allocations"),
		report__api_name(s->api));

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
}

static void print_stacks(const struct report *r, FILE *f)
{
	size_t shown = r->top && r->top < r->nr_stacks ? r->top : r->nr_stacks;
	char a[COUNT_LEN], b[COUNT_LEN];

	if (!r->nr_stacks)
		return;
	if (r->nr_stacks == 1)
		fputs("1 stack:\n", f);
	else if (shown < r->nr_stacks)
		fprintf(f, "Top %s of %s stacks by outstanding bytes:\n", count_str(shown, a),
			count_str(r->nr_stacks, b));
	else
		fprintf(f, "All %s stacks by outstanding bytes:\n", count_str(r->nr_stacks, a));
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
			fprintf(f, "Dropped: %s %s %s", count_str(v, n), plural(v, d->one, d->many),
				d->what);
		else	/* a drop counter added without its sentence is still shown */
			fprintf(f, "Dropped: %s (%s)", count_str(v, n), report__counter_name(c));
		if (fix)
			fprintf(f, " (raise %s)", fix);
		fputc('\n', f);
	}
}

int report_text__write(const struct report *r, FILE *f)
{
	print_header(r, f);
	print_totals(r, f);
	print_stacks(r, f);
	print_drops(r, f);
	return ferror(f) ? -EIO : 0;
}
