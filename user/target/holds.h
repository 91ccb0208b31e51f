/* SPDX-License-Identifier: GPL-2.0 */
/*
 * How long memleakbpf held the target stopped (-c): at each exec and
 * dynamic-linker event, from the stop's notice to the resume. Kept to say,
 * with -v, the longest and what it was for: the target must never wait for
 * more than the probing of what it just loaded.
 */
#ifndef HOLDS_H
#define HOLDS_H

#include <stddef.h>

#define HOLD_WHAT_LEN 96

struct holds {
	unsigned stops;
	double total_ms, max_ms;
	char max_what[HOLD_WHAT_LEN];	/* what the longest was for */
};

/* One stop of ms milliseconds, for what (an image's name; cut to fit). */
void holds__add(struct holds *h, double ms, const char *what);
/* -v's line on stderr: the longest hold, what for, how many, in all; py_exit_ms > 0: Python's exit. */
void holds__say(const struct holds *h, double py_exit_ms);

#endif
