// SPDX-License-Identifier: GPL-2.0
/* report/report_trend.c: a stack's trend in words, "stable" only for one that held still. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "model/report.h"
#include "report/report_trend.h"
#include "unit.h"

static bool figures_are(const struct report_growth *g, const char *want)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	bool ok;

	if (!f)
		return false;
	report_trend__figures(g, f);
	fclose(f);
	ok = buf && !strcmp(buf, want);
	if (!ok)
		fprintf(stderr, "  got \"%s\", want \"%s\"\n", buf ? buf : "", want);
	free(buf);
	return ok;
}

TEST(report_trend_words)
{
	/* A Python dict's table: one block that doubled in 3 of the 6 intervals after its first. */
	struct report_growth dict = { .trend = TREND_STABLE, .slope = 2.9e6, .r2 = 0.85,
				      .grew = 4, .intervals = 7, .age_s = 1.4, .rose_since_startup = true };
	struct report_growth held = { .trend = TREND_STABLE, .grew = 1, .intervals = 7,
				      .age_s = 3.6, .unfitted = true };
	struct report_growth swing = { .trend = TREND_STABLE, .r2 = 0.1, .grew = 3, .shrank = 2,
				       .intervals = 7, .age_s = -1, .rose_since_startup = true };
	/* A cache filled across the first two reports, both in start-up, level since. */
	struct report_growth filled = { .trend = TREND_STABLE, .grew = 2, .intervals = 14,
					.age_s = 6.7 };
	struct report_growth leak = { .trend = TREND_GROWING, .slope = 16588, .r2 = 0.85,
				      .grew = 3, .intervals = 4, .age_s = 3.6 };

	ASSERT_EQ_STR(report_trend__word(&dict), "rose in steps, not steadily");
	ASSERT(figures_are(&dict, "grew in 4 of 7 intervals, R\xc2\xb2 0.85; oldest block 1.4 s old"));
	ASSERT_EQ_STR(report_trend__word(&held), "stable");
	ASSERT_EQ_STR(report_trend__word(&filled), "stable");
	ASSERT_EQ_STR(report_trend__word(&swing), "up and down, no steady trend");
	ASSERT(figures_are(&swing, "grew in 3 and shrank in 2 of 7 intervals, R\xc2\xb2 0.10"));
	ASSERT_EQ_STR(report_trend__word(&leak), "growing");
	ASSERT(figures_are(&leak, "+16.2 KiB/s, grew in 3 of 4 intervals, R\xc2\xb2 0.85; oldest block 3.6 s old"));
	return true;
}
