/* SPDX-License-Identifier: GPL-2.0 */
/* Pieces of the text reports, for the writers and sections above them. */
#ifndef TEXT_PUT_H
#define TEXT_PUT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "model/report.h"

/* s on one line, control characters as '?'. */
void text_put__oneline(const char *s, FILE *f);
/* A function's name, on one line, a C++ one shortened (cxx_names.h) unless full. */
void text_put__function(const char *function, bool full, FILE *f);
/* "2.0 MiB (2,097,152 bytes) in 512 allocations". */
void text_put__amount(uint64_t bytes, uint64_t allocs, FILE *f);
/*
 * A stack's frames, a line each, and its markers. Here and below, a C++
 * name is shortened (cxx_names.h) unless full (--full-names).
 */
void text_put__frames(const struct report_stack *s, bool full, FILE *f);
/* A stack's site frame ("[stack unavailable]" without). */
void text_put__stack_site(const struct report_stack *s, bool full, FILE *f);
/* A site's frame, on the current line: "func (file:line) [module]". */
void text_put__site_frame(const struct report_site *site, bool full, FILE *f);
/* "  and N more WHAT: SIZE in N allocations", a line. */
void text_put__more(const char *what, size_t n, uint64_t bytes, uint64_t allocs, FILE *f);

#endif
