// SPDX-License-Identifier: GPL-2.0
/*
 * The text report's analysis after the stacks: the churn (the stacks that
 * allocate most often, freed or not) and the peak of heap blocks with the
 * stacks that held it. Printed only when the report has an analysis.
 *
 * The lines that head these stacks deliberately differ from the
 * "N bytes in N allocations from API" of the outstanding list, which
 * scripts parse: a stack shown twice must not be counted twice.
 */
#include <math.h>
#include <string.h>
#include "model/report.h"
#include "report_churn.h"
#include "text_put.h"

#define SIZE_LEN 64
#define COUNT_LEN REPORT_COUNT_LEN
#define TEXT_CHURN 5	/* churn and peak stacks in the text (the JSON has more) */
#define CHAIN_FRAMES 3	/* frames of a one-line call chain */

static const char *size_str(uint64_t v, char *buf)
{
	return report__human_size(v, buf, SIZE_LEN);
}

static unsigned percent(uint64_t part, uint64_t whole)
{
	return whole ? (unsigned)llround(100.0 * (double)part / (double)whole) : 0;
}

static void put_frame_name(const struct report_frame *fr, bool full, FILE *f)
{
	if (fr->function) {
		text_put__function(fr->function, full, f);
	} else if (fr->module) {
		text_put__oneline(strrchr(fr->module, '/') ? strrchr(fr->module, '/') + 1 : fr->module, f);
		fprintf(f, "+0x%llx", (unsigned long long)fr->module_offset);
	}
	else
		fprintf(f, "0x%llx", (unsigned long long)fr->address);
}

/* Do two frames print alike (put_frame_name, and the first's line)? */
static bool same_frame(const struct report_frame *a, const struct report_frame *b)
{
	if (!a->function != !b->function || a->line != b->line ||
	    (a->function && strcmp(a->function, b->function)) ||
	    (a->file && b->file ? strcmp(a->file, b->file) : a->file != b->file))
		return false;
	if (a->function)
		return true;
	if (!a->module != !b->module)
		return false;
	return a->module ? !strcmp(a->module, b->module) && a->module_offset == b->module_offset :
			   a->address == b->address;
}

/* How many innermost frames a and b share. */
static size_t shared_frames(const struct report_stack *a, const struct report_stack *b)
{
	size_t n = 0;

	while (n < a->nr_frames && n < b->nr_frames && same_frame(report__frame(a, n), report__frame(b, n)))
		n++;
	return n;
}

/*
 * "      at site (file.c:12) <- caller <- main <- ...": where, in one line.
 * A stack whose first frames are another's shown beside it (of list[0..n))
 * goes on to the first frame where it differs from them all, numbered as
 * in a stack's frames, and the one after: sqlite3's peak printed
 * "at libsqlite3+0xa7504 <- sqlite3Malloc <- libsqlite3+0xb786c <- ..."
 * for four stacks that part at their 9th frame.
 */
static void print_chain(const struct report_stack *list, size_t n, size_t at, bool full, FILE *f)
{
	const struct report_stack *s = &list[at];
	size_t differ = 0;

	for (size_t j = 0; j < n; j++)
		if (j != at && shared_frames(s, &list[j]) >= differ)
			differ = shared_frames(s, &list[j]) + 1;
	fputs("      at ", f);
	if (!s->nr_frames)
		fputs("[stack unavailable]", f);
	for (size_t i = 0; i < s->nr_frames && i < CHAIN_FRAMES; i++) {
		const struct report_frame *fr = report__frame(s, i);

		fputs(i ? " <- " : "", f);
		put_frame_name(fr, full, f);
		if (!i && fr->file && fr->line > 0) {
			fputs(" (", f);
			text_put__oneline(fr->file, f);
			fprintf(f, ":%d)", fr->line);
		}
	}
	if (differ > CHAIN_FRAMES && differ <= s->nr_frames) {
		size_t i = differ - 1;	/* the first frame unlike the others' */

		fprintf(f, " <- %s#%zu ", i > CHAIN_FRAMES ? "... <- " : "", i);
		put_frame_name(report__frame(s, i), full, f);
		for (i++; i < s->nr_frames && i < differ + 1; i++) {
			fputs(" <- ", f);
			put_frame_name(report__frame(s, i), full, f);
		}
		fputs(i < s->nr_frames ? " <- ...\n" : "\n", f);
		return;
	}
	fputs(s->nr_frames > CHAIN_FRAMES ? " <- ...\n" : "\n", f);
}

static size_t text_count(const struct report *r, size_t n)
{
	size_t max = r->top && r->top < TEXT_CHURN ? r->top : TEXT_CHURN;

	return n < max ? n : max;
}

static void print_churn(const struct report *r, FILE *f)
{
	const struct report_analysis *a = r->analysis;
	size_t shown = text_count(r, a->nr_churn);
	char b[SIZE_LEN], c[SIZE_LEN], o[SIZE_LEN], n[COUNT_LEN], m[COUNT_LEN], l[COUNT_LEN];

	if (!shown)
		return;
	fputs("\nChurn: the stacks that allocate most often first, freed or not:\n", f);
	for (size_t i = 0; i < shown; i++) {
		const struct report_stack *s = &a->churn[i];

		fprintf(f, "  %zu. %s calls/s, %s/s from %s (%s calls, %s since tracing began; last interval %s calls/s); %s outstanding\n",
			i + 1, report__count((uint64_t)llround(s->rate.allocs_per_s), n),
			size_str((uint64_t)llround(s->rate.bytes_per_s), b),
			report__api_name(s->api), report__count(s->total_allocs, m),
			size_str(s->total_bytes, c),
			report__count((uint64_t)llround(s->rate.last_allocs_per_s), l),
			size_str(s->bytes, o));
		print_chain(a->churn, shown, i, r->full_names, f);
	}
}

/*
 * "Peak: 48.0 MiB (50,331,648 bytes) of heap blocks at 1.2 s, exact; mmaps apart: ..."
 * and where its stacks come from: a sample, maybe a little after the peak.
 */
static void print_peak_head(const struct report *r, const struct report_peak *p, FILE *f)
{
	const char *est = r->sampling ? "~" : "";	/* sampled: the probes' mark of an estimate */
	char b[SIZE_LEN], e[COUNT_LEN];

	fprintf(f, "\nPeak: %s%s (%s bytes) of heap blocks", est, size_str(p->bytes, b),
		report__count(p->bytes, e));
	if (p->t_s >= 0)
		fprintf(f, " at %.1f s", p->t_s);
	fputs(r->sampling ? ", estimated (the highest the sampled estimate reached: a noisy series' highest point lies above its truth on average); mmaps apart: " :
	      p->exact ? ", exact (the probes keep the high-water mark); mmaps apart: " :
	      ", the best sample; mmaps apart: ", f);
	if (p->mmap_bytes && p->mmap_t_s >= 0)
		fprintf(f, "peak %s%s at %.1f s\n", est, size_str(p->mmap_bytes, b), p->mmap_t_s);
	else
		fputs("none\n", f);
	fprintf(f, "  The stacks as sampled at %.1f s, holding %s (%u%% of the peak; sampled when the peak rises by a 64th within 2%% of a CPU, every %.1f s, and at each report):\n",
		p->stacks_t_s, size_str(p->stacks_bytes, b), percent(p->stacks_bytes, p->bytes),
		p->sample_s);
}

static void print_peak(const struct report *r, FILE *f)
{
	const struct report_peak *p = &r->analysis->peak;
	size_t shown = text_count(r, p->nr_stacks);
	char b[SIZE_LEN], e[COUNT_LEN], n[COUNT_LEN];
	uint64_t more_b = p->other_bytes, more_a = p->other_allocs;

	if (!p->known || !r->final)
		return;
	print_peak_head(r, p, f);
	for (size_t i = 0; i < p->nr_stacks; i++) {
		const struct report_stack *s = &p->stacks[i];

		if (i >= shown) {
			more_b += s->bytes;
			more_a += s->allocs;
			continue;
		}
		fprintf(f, "  %zu. %s (%s bytes) in %s %s from %s\n", i + 1, size_str(s->bytes, b),
			report__count(s->bytes, e), report__count(s->allocs, n),
			report__plural(s->allocs, "allocation", "allocations"), report__api_name(s->api));
		print_chain(p->stacks, shown, i, r->full_names, f);
	}
	if (more_b || more_a)
		fprintf(f, "  and other stacks: %s in %s %s\n", size_str(more_b, b), report__count(more_a, n),
			report__plural(more_a, "allocation", "allocations"));
}

void report_churn__print(const struct report *r, FILE *f)
{
	if (!r->analysis)
		return;
	print_churn(r, f);
	print_peak(r, f);
}
