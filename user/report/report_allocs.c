// SPDX-License-Identifier: GPL-2.0
/*
 * -a/--show-allocs: a stack's live blocks, under it in the text report and
 * in its JSON object: address, size and age, the oldest first (the
 * likeliest leaked), at most --allocs-per-stack of them.
 */
#include <inttypes.h>
#include <stdio.h>
#include "model/report.h"
#include "report_allocs.h"

/* "live blocks: the 3 oldest of 200 (--allocs-per-stack all: every one):", "live blocks: all 5, ...:" */
static void put_heading(const struct report *r, const struct report_stack *s, FILE *f)
{
	char n[REPORT_COUNT_LEN], k[REPORT_COUNT_LEN];
	const char *what = r->sampling ? "sampled block" : "block";

	fprintf(f, "      live %ss", what);
	if (r->older_ms)
		fprintf(f, " older than %" PRIu64 " ms", r->older_ms);
	if (s->blocks->nr < s->blocks->seen)
		fprintf(f, ": the %s oldest of %s (--allocs-per-stack all: every one)",
			report__count(s->blocks->nr, n), report__count(s->blocks->seen, k));
	else if (s->blocks->nr > 1)
		fprintf(f, ": all %s, the oldest first", report__count(s->blocks->nr, n));
	fputs(":\n", f);
}

void report_allocs__text(const struct report *r, const struct report_stack *s, FILE *f)
{
	char n[REPORT_COUNT_LEN];

	if (!r->show_allocs)
		return;
	if (!s->blocks || !s->blocks->seen) {
		fputs("      live blocks: none in the table (each freed since, or not yet returned)\n", f);
		return;
	}
	put_heading(r, s, f);
	for (size_t i = 0; i < s->blocks->nr; i++) {
		const struct report_block *b = &s->blocks->v[i];

		fprintf(f, "        %#" PRIx64 "  %s %s  %.3f s old\n", b->addr,
			report__count(b->size, n), report__plural(b->size, "byte", "bytes"),
			b->age_ns / 1e9);
	}
}

/*
 * , "blocks_live": 200, "blocks": [{"address": "0x55d0c3a012a0", "size": 512,
 * "age_s": 3.612}, ...]: the address a string, as JSON's numbers are doubles.
 */
void report_allocs__json(const struct report *r, const struct report_stack *s, FILE *f)
{
	if (!r->show_allocs)
		return;
	fprintf(f, ", \"blocks_live\": %" PRIu64 ",\n     \"blocks\": [",
		s->blocks ? s->blocks->seen : 0);
	for (size_t i = 0; s->blocks && i < s->blocks->nr; i++) {
		const struct report_block *b = &s->blocks->v[i];

		fprintf(f, "%s{\"address\": \"%#" PRIx64 "\", \"size\": %" PRIu64 ", \"age_s\": %.3f}",
			i ? ",\n                " : "", b->addr, b->size, b->age_ns / 1e9);
	}
	fputc(']', f);
}
