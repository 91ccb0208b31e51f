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

void holds__say(const struct holds *h, double py_exit_ms)
{
	if (!h->stops)
		return;
	fprintf(stderr, "memleakbpf: target held at most %.1f ms (%s), %u stops, %.0f ms in all",
		h->max_ms, h->max_what, h->stops, h->total_ms);
	if (py_exit_ms > 0)
		fprintf(stderr, "; at Python's exit %.1f ms", py_exit_ms);
	fputc('\n', stderr);
}
