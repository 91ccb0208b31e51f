// SPDX-License-Identifier: GPL-2.0
/* -a: a stack's blocks in the text and the JSON (report_allocs.c). */
#include <stdlib.h>
#include <string.h>
#include "model/report.h"
#include "report/report_allocs.h"
#include "unit.h"

static struct report_block blocks[] = {
	{ 0x55d0c3a012a0, 512, 3612000000ull },
	{ 0x55d0c3a014c0, 1, 2000000000ull },
};

/* What fn wrote for stack s of r. */
static char *render(void (*fn)(const struct report *, const struct report_stack *, FILE *),
		    const struct report *r, const struct report_stack *s)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return NULL;
	fn(r, s, f);
	fclose(f);
	return text;
}

static bool has(char *text, const char *want)
{
	bool ok = text && strstr(text, want);

	if (!ok)
		fprintf(stderr, "  lacks \"%s\" in:\n%s\n", want, text ? text : "(null)");
	return ok;
}

TEST(report_allocs_text)
{
	struct report r = { .show_allocs = true };
	struct report_blocks some = { .v = blocks, .nr = 2, .seen = 7 };
	struct report_blocks two = { .v = blocks, .nr = 2, .seen = 2 };
	struct report_stack s = { .blocks = &some };
	struct report_stack all = { .blocks = &two };
	struct report_stack none = { 0 };
	char *t = render(report_allocs__text, &r, &s);
	bool ok = has(t, "      live blocks: the 2 oldest of 7 (--allocs-per-stack all: every one):\n"
			 "        0x55d0c3a012a0  512 bytes  3.612 s old\n"
			 "        0x55d0c3a014c0  1 byte  2.000 s old\n");

	free(t);
	t = render(report_allocs__text, &r, &all);
	ok = ok && has(t, "      live blocks: all 2, the oldest first:\n");
	free(t);
	t = render(report_allocs__text, &r, &none);
	ok = ok && has(t, "live blocks: none in the table");
	free(t);
	r.show_allocs = false;
	t = render(report_allocs__text, &r, &s);
	ok = ok && t && !*t;	/* without -a, nothing */
	free(t);
	return ok;
}

TEST(report_allocs_json)
{
	struct report r = { .show_allocs = true };
	struct report_blocks some = { .v = blocks, .nr = 2, .seen = 7 };
	struct report_stack s = { .blocks = &some };
	char *t = render(report_allocs__json, &r, &s);
	bool ok = has(t, ", \"blocks_live\": 7,\n     \"blocks\": [{\"address\": \"0x55d0c3a012a0\", "
			 "\"size\": 512, \"age_s\": 3.612},\n                {\"address\": "
			 "\"0x55d0c3a014c0\", \"size\": 1, \"age_s\": 2.000}]");

	free(t);
	r.show_allocs = false;
	t = render(report_allocs__json, &r, &s);
	ok = ok && t && !*t;
	free(t);
	return ok;
}
