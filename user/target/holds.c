// SPDX-License-Identifier: GPL-2.0
/* How long the target was held stopped, the longest kept (holds.h). */
#include <stdio.h>
#include "holds.h"

void holds__add(struct holds *h, double ms, const char *what)
{
	h->stops++;
	h->total_ms += ms;
	if (h->stops > 1 && ms <= h->max_ms)
		return;
	h->max_ms = ms;
	snprintf(h->max_what, sizeof(h->max_what), "%s", what);
}
