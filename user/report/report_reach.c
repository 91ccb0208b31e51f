// SPDX-License-Identifier: GPL-2.0
/*
 * Reachability in the reports (model/report.h: report_reach): memcheck's
 * four kinds in all and per stack, as text and as JSON fields.
 */
#include <stdio.h>
#include "analyze/reach.h"
#include "model/report.h"
#include "report_reach.h"

#define SIZE_LEN 64

static void put_kind(const struct report_reach_figures *fig, int k, FILE *f)
{
	char b[REPORT_COUNT_LEN], n[REPORT_COUNT_LEN];

	fprintf(f, "%s %s in %s %s", report__count(fig->bytes[k], b),
		report__plural(fig->bytes[k], "byte", "bytes"), report__count(fig->blocks[k], n),
		report__plural(fig->blocks[k], "block", "blocks"));
}

void report_reach__text_head(const struct report *r, FILE *f)
{
	const struct report_reach *h = r->reach;
	char size[SIZE_LEN];
	const char *when;

	if (!h)
		return;
	when = !h->at_exit ? "at a scan" :
	       r->python ? "at Python's exit (as its shutdown began, or at os._exit)" :
			   "at the command's exit";
	fprintf(f, "Reachability %s, %.1f s after tracing began (memcheck's meanings; pid held %.1f ms, %u %s):\n",
		when, h->t_s, h->held_ms, h->threads, h->threads == 1 ? "thread" : "threads");
	for (int k = 0; k < REPORT_REACH_KINDS; k++) {
		fprintf(f, "  %15s: ", reach__kind_text(k));
		put_kind(&h->total, k, f);
		fputc('\n', f);
	}
	if (h->mmap_blocks)
		fprintf(f, "  (and %s in %llu tracked %s: no heap blocks, scanned as roots, as memcheck does)\n",
			report__human_size(h->mmap_bytes, size, sizeof(size)),
			(unsigned long long)h->mmap_blocks, h->mmap_blocks == 1 ? "mmap" : "mmaps");
	if (h->unread_bytes)
		fprintf(f, "  (%s of roots and blocks could not be read: they hold no pointer here)\n",
			report__human_size(h->unread_bytes, size, sizeof(size)));
}

void report_reach__text_stack(const struct report_stack *s, FILE *f)
{
	bool first = true;

	if (!s->reach)
		return;
	fputs("      at the scan: ", f);
	for (int k = 0; k < REPORT_REACH_KINDS; k++) {
		if (!s->reach->blocks[k])
			continue;
		fputs(first ? "" : ", ", f);
		put_kind(s->reach, k, f);
		fprintf(f, " %s", reach__kind_text(k));
		first = false;
	}
	fputc('\n', f);
}

static void put_figures(const struct report_reach_figures *fig, FILE *f)
{
	for (int k = 0; k < REPORT_REACH_KINDS; k++)
		fprintf(f, "%s\"%s\": {\"bytes\": %llu, \"blocks\": %llu}", k ? ", " : "{",
			reach__kind_key(k), (unsigned long long)fig->bytes[k],
			(unsigned long long)fig->blocks[k]);
	fputc('}', f);
}

void report_reach__json(const struct report *r, FILE *f)
{
	const struct report_reach *h = r->reach;

	fputs("  \"reach\": ", f);
	if (!h) {
		fputs("null,\n", f);
		return;
	}
	fprintf(f, "{\"at\": \"%s\", \"t_s\": %.3f, \"held_ms\": %.3f, \"scan_ms\": %.3f, "
		"\"threads\": %u, \"root_bytes\": %llu, \"block_bytes\": %llu, \"unread_bytes\": %llu,\n"
		"            \"mmap_bytes\": %llu, \"mmap_blocks\": %llu,\n            \"totals\": ",
		h->at_exit ? "exit" : "scan", h->t_s, h->held_ms, h->scan_ms, h->threads,
		(unsigned long long)h->root_bytes, (unsigned long long)h->block_bytes,
		(unsigned long long)h->unread_bytes, (unsigned long long)h->mmap_bytes,
		(unsigned long long)h->mmap_blocks);
	put_figures(&h->total, f);
	fputs("},\n", f);
}

void report_reach__json_stack(const struct report_stack *s, FILE *f)
{
	if (!s->reach)
		return;
	fputs(", \"reach\": ", f);
	put_figures(s->reach, f);
}
