// SPDX-License-Identifier: GPL-2.0
/* The text report's words on the runtime's own blocks (report_runtime.h). */
#include <stdint.h>
#include "analyze/runtime_blocks.h"
#include "report_runtime.h"
#include "text_put.h"

/* At most this many of the runtime's sites that -T left out, a line each. */
#define TEXT_RUNTIME_SITES 10

size_t report_runtime__sites(const struct report *r)
{
	size_t n = 0;

	for (size_t i = 0; i < r->nr_sites; i++)
		n += r->sites[i].runtime != RUNTIME_NONE;
	return n;
}

/* bytes and blocks, exact or (sampling) estimated. */
static void put_amount(const struct report *r, uint64_t bytes, uint64_t allocs, FILE *f)
{
	if (r->sampling)
		fputc('~', f);
	text_put__amount(bytes, allocs, f);
}

void report_runtime__text_part(const struct report *r, FILE *f)
{
	uint64_t bytes = 0, allocs = 0;

	for (size_t i = 0; i < r->nr_sites; i++) {
		const struct report_site *site = &r->sites[i];

		for (size_t j = 0; site->runtime && j < site->nr_stacks; j++) {
			const struct report_stack *s = &r->stacks[site->stacks[j]];

			if (MEMLEAK_KIND_OF(s->api) != KIND_HEAP)
				continue;
			bytes += s->bytes;
			allocs += s->allocs;
		}
	}
	if (!allocs)
		return;
	fputs("  of them, the runtime's own: ", f);
	put_amount(r, bytes, allocs, f);
	fputs(", kept by it until exit (their sites come after the others')\n", f);
}

void report_runtime__text_stack(const struct report *r, const struct report_stack *s, FILE *f)
{
	if (s->site_runtime && s->site < r->nr_sites && !r->sites[s->site].runtime)
		fprintf(f, "      not the program's: %s\n", runtime_blocks__what(s->site_runtime));
}

void report_runtime__text_after(const struct report *r, size_t shown, FILE *f)
{
	enum report_runtime said = RUNTIME_NONE;
	size_t listed = 0;

	if (r->brief || shown >= r->nr_sites || !r->sites[r->nr_sites - 1].runtime)
		return;
	fputs("\nThe runtime's own blocks, after the sites above, by what they are:\n", f);
	for (size_t i = shown; i < r->nr_sites; i++) {
		const struct report_site *site = &r->sites[i];

		if (!site->runtime || listed++ >= TEXT_RUNTIME_SITES)
			continue;
		if (site->runtime != said)	/* they come by kind (analyze/sites.c) */
			fprintf(f, "  %s:\n", runtime_blocks__what(said = site->runtime));
		fprintf(f, "    Site %zu: ", i + 1);
		put_amount(r, site->bytes, site->allocs, f);
		fputs(", at ", f);
		text_put__site_frame(site, r->full_names, f);
		fputc('\n', f);
	}
	if (listed > TEXT_RUNTIME_SITES)
		fprintf(f, "  and %zu more of the runtime's sites\n", listed - TEXT_RUNTIME_SITES);
}
