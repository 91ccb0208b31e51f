// SPDX-License-Identifier: GPL-2.0
/*
 * The trend of a stack's points (history.c): a least-squares line, how
 * well it fits, and whether it still rises, by at least HISTORY_MIN_GROWTH.
 */
#include <math.h>
#include "history.h"

void history_fit__classify(const double *t, const double *y, size_t n, struct report_growth *g)
{
	history_fit__classify_until(t, y, n, n, g);
}

/*
 * Steady growth: a rising least-squares line that fits well, still rising
 * over the last third of the first `active` points (a cache that grew early
 * and stopped fits a line too, but is flat by then), by HISTORY_MIN_GROWTH
 * at least over them all.
 */
void history_fit__classify_until(const double *t, const double *y, size_t n, size_t active,
			     struct report_growth *g)
{
	double mt = 0, my = 0, sxx = 0, sxy = 0, syy = 0, last, mid;

	g->trend = TREND_UNKNOWN;
	g->slope = g->r2 = 0;
	g->rose_since_startup = false;	/* the points are those after start-up (history.c) */
	for (size_t i = 1; i < n; i++)
		g->rose_since_startup |= y[i] > y[i - 1];
	if (n < HISTORY_MIN_POINTS)
		return;
	for (size_t i = 0; i < n; i++) {
		mt += t[i] / n;
		my += y[i] / n;
	}
	for (size_t i = 0; i < n; i++) {
		sxx += (t[i] - mt) * (t[i] - mt);
		sxy += (t[i] - mt) * (y[i] - my);
		syy += (y[i] - my) * (y[i] - my);
	}
	if (sxx <= 0)
		return;
	g->slope = sxy / sxx;
	g->r2 = syy > 0 ? sxy * sxy / (sxx * syy) : 0;
	if (!active || active > n)
		active = n;
	last = y[active - 1];
	mid = y[2 * (active - 1) / 3];
	if (fabs(g->slope) * (t[n - 1] - t[0]) < HISTORY_MIN_GROWTH)
		g->trend = TREND_STABLE;
	else if (g->slope > 0 && g->r2 >= HISTORY_MIN_R2 && last > mid)
		g->trend = TREND_GROWING;
	else if (g->slope < 0 && g->r2 >= HISTORY_MIN_R2 && last < mid)
		g->trend = TREND_SHRINKING;
	else
		g->trend = TREND_STABLE;
}
