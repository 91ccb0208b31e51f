/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The text report's words on the runtime's own blocks (analyze/runtime_blocks.h),
 * whose sites come after the program's.
 */
#ifndef REPORT_RUNTIME_H
#define REPORT_RUNTIME_H

#include <stddef.h>
#include <stdio.h>
#include "model/report.h"

/* How many of r's sites are the runtime's own. */
size_t report_runtime__sites(const struct report *r);

/*
 * Of the heap blocks outstanding at exit, a line each: those of the sites
 * made before main by initializers ("  of them, made before main by
 * initializers ..."), the runtime's own ("  of them, the runtime's own:
 * 71.0 KiB (72,704 bytes) in 1 allocation, ..."), and when either is, the
 * rest ("  the rest: 128 bytes in 4 allocations, at the first sites below").
 */
void report_runtime__text_part(const struct report *r, FILE *f);

/*
 * "      not the program's: ...": a stack of the runtime's own in a site that
 * is not all the runtime's (which its header says); nothing otherwise.
 */
void report_runtime__text_stack(const struct report *r, const struct report_stack *s, FILE *f);

/*
 * The runtime's sites past the first `shown` (-T), a line each with what
 * they are: no outstanding block goes unaccounted for in a short list.
 */
void report_runtime__text_after(const struct report *r, size_t shown, FILE *f);

#endif
