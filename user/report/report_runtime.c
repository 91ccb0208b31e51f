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

/* The heap blocks of the sites of one class: the runtime's, start-up's, or the rest. */
enum runtime_part { PART_REST, PART_STARTUP, PART_RUNTIME, PART__COUNT };

static enum runtime_part part_of(const struct report_site *site)
{
	if (site->runtime)
		return PART_RUNTIME;
	return site->preinit ? PART_STARTUP : PART_REST;	/* analyze/sites.c's order */
}

void report_runtime__text_part(const struct report *r, FILE *f)
{
	uint64_t bytes[PART__COUNT] = { 0 }, allocs[PART__COUNT] = { 0 };

	for (size_t i = 0; i < r->nr_sites; i++) {
		const struct report_site *site = &r->sites[i];

		for (size_t j = 0; j < site->nr_stacks; j++) {
			const struct report_stack *s = &r->stacks[site->stacks[j]];

			if (MEMLEAK_KIND_OF(s->api) != KIND_HEAP)
				continue;
			bytes[part_of(site)] += s->bytes;
			allocs[part_of(site)] += s->allocs;
		}
	}
	if (allocs[PART_STARTUP]) {
		fputs("  of them, made before main by initializers (start-up: static registries and the "
		      "like, usually held by design): ", f);
		put_amount(r, bytes[PART_STARTUP], allocs[PART_STARTUP], f);
		fputs(" (their sites come after those of the program's run)\n", f);
	}
	if (allocs[PART_RUNTIME]) {
		fputs("  of them, the runtime's own: ", f);
		put_amount(r, bytes[PART_RUNTIME], allocs[PART_RUNTIME], f);
		fputs(", kept by it until exit (their sites come after the others')\n", f);
	}
	if (!allocs[PART_STARTUP] && !allocs[PART_RUNTIME])
		return;
	fputs("  the rest: ", f);
	if (allocs[PART_REST]) {
		put_amount(r, bytes[PART_REST], allocs[PART_REST], f);
		fputs(", at the first sites below\n", f);
	} else {
		fputs("none\n", f);
	}
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
