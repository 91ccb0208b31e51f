// SPDX-License-Identifier: GPL-2.0
/* A stack's trend in the text report (report_trend.h). */
#include <math.h>
#include "report_trend.h"

#define SIZE_LEN 64
#define COUNT_LEN REPORT_COUNT_LEN

static const char *trend_word(enum report_trend t)
{
	static const char *const words[] = { "trend unknown", "growing", "stable", "shrinking",
					     "start-up" };

	return (unsigned)t < sizeof(words) / sizeof(words[0]) ? words[t] : "?";
}

/* A line was fitted: not too early, not start-up. */
static bool fitted(const struct report_growth *g)
{
	return g->trend != TREND_UNKNOWN && g->trend != TREND_STARTUP;
}

/*
 * Not a steady rise, yet not flat: the bytes rose after the interval the
 * stack first held some (grew counts that one), in steps that fit no
 * steady line, or by fewer than a few of its blocks (analyze/history.c:
 * one block resized larger). A Python dict whose table doubled in 3 of 7
 * intervals was called "stable".
 */
bool report_trend__stepped(const struct report_growth *g)
{
	/* Steps while start-up filled it are start-up's (a cache filled across two reports). */
	return g->trend == TREND_STABLE && !g->unfitted && g->grew > 1 && g->rose_since_startup;
}

const char *report_trend__word(const struct report_growth *g)
{
	if (report_trend__stepped(g))
		return g->shrank ? "up and down, no steady trend" : "rose in steps, not steadily";
	return trend_word(g->trend);
}

void report_trend__figures(const struct report_growth *g, FILE *f)
{
	char a[SIZE_LEN], n[COUNT_LEN], m[COUNT_LEN];

	if (fitted(g) && g->trend != TREND_STABLE)
		fprintf(f, "%s%s/s, ", g->slope < 0 ? "-" : "+",
			report__human_size((uint64_t)llround(fabs(g->slope)), a, sizeof(a)));
	if (g->trend == TREND_SHRINKING)
		fprintf(f, "shrank in %s", report__count(g->shrank, n));
	else if (report_trend__stepped(g) && g->shrank)
		fprintf(f, "grew in %s and shrank in %s", report__count(g->grew, n),
			report__count(g->shrank, a));
	else
		fprintf(f, "grew in %s", report__count(g->grew, n));
	fprintf(f, " of %s %s", report__count(g->intervals, m),
		report__plural(g->intervals, "interval", "intervals"));
	if (fitted(g))
		fprintf(f, ", R\xc2\xb2 %.2f", g->r2);
	if (g->age_s >= 0)
		fprintf(f, "; oldest block %.1f s old", g->age_s);
	if (g->renewed)
		fputs(", none older than a report interval", f);
}
