/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The --html page's data tables: each distinct string and each distinct
 * frame once, by index, so that the page's JSON names a function shared by
 * 10,000 stacks once. Pure.
 */
#ifndef HTML_POOL_H
#define HTML_POOL_H

#include <stdbool.h>
#include <stdio.h>
#include "model/report.h"

struct html_pool;

/* Frame flags, as the page's script reads them. */
#define HTML_FRAME_OWN 1	/* the user's code (frame.own) */
#define HTML_FRAME_PYTHON 2
#define HTML_FRAME_INLINED 4

struct html_pool *html_pool__new(void);
void html_pool__free(struct html_pool *p);
/* s's index (a copy is kept); -1 for NULL, or when memory ran out (html_pool__failed). */
long html_pool__string(struct html_pool *p, const char *s);
/* fr's index: [function, file, line, module, flags, module offset]; -1 when memory ran out. */
long html_pool__frame(struct html_pool *p, const struct report_frame *fr);
bool html_pool__failed(const struct html_pool *p);
/* "strings": [...], "frames": [[...], ...] (script-safe JSON). */
void html_pool__write(const struct html_pool *p, FILE *f);

#endif
