/* SPDX-License-Identifier: GPL-2.0 */
/* Pieces of the text reports, for the writers and sections above them. */
#ifndef TEXT_PUT_H
#define TEXT_PUT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "model/report.h"

/* s on one line, control characters as '?'. */
void report_text__oneline(const char *s, FILE *f);
/* "2.0 MiB (2,097,152 bytes) in 512 allocations". */
void report_text__amount(uint64_t bytes, uint64_t allocs, FILE *f);
/* A stack's frames, a line each, and its markers. */
void report_text__frames(const struct report_stack *s, FILE *f);
/* A stack's site frame ("[stack unavailable]" without). */
void report_text__stack_site(const struct report_stack *s, FILE *f);
/* A site's frame, on the current line: "func (file:line) [module]". */
void report_text__site_frame(const struct report_site *site, FILE *f);
/* "  and N more WHAT: SIZE in N allocations", a line. */
void report_text__more(const char *what, size_t n, uint64_t bytes, uint64_t allocs, FILE *f);

#endif
