/* SPDX-License-Identifier: GPL-2.0 */
/* What several unit tests do: render a report with a writer, parse a command line. */
#ifndef UNIT_HELPERS_H
#define UNIT_HELPERS_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include "model/report.h"
#include "cli/opts.h"

/*
 * The text writer makes of r. With err, the writer's return goes there and
 * the text comes back whatever it is; without, a failed write gives NULL.
 * The caller frees the text.
 */
char *unit__render(int (*writer)(const struct report *, FILE *), const struct report *r,
		   int *err);

/*
 * Group a hand-made report's stacks into sites (analyze/sites.h), each
 * stack's site frame picked from its own frames as report_sites__frames picks it
 * from the raw stack: the innermost of the program's own (only Python
 * frames when it has any), else frames[0]; then sites__group with these
 * limits. The site frames point into the stacks' frames: unit__ungroup
 * undoes it all.
 */
int unit__group(struct report *r, size_t file_sites, size_t file_stacks);
/* r grouped as the files keep it, written by writer, ungrouped: the text (free it), or NULL. */
char *unit__grouped_render(int (*writer)(const struct report *, FILE *), struct report *r);
void unit__ungroup(struct report *r);

/* opts__parse of "memleakbpf" and the NULL-terminated arguments from first on. */
int unit__parse(struct opts *o, char *err, size_t len, const char *first, ...);
int unit__vparse(struct opts *o, char *err, size_t len, const char *first, va_list ap);
/* opts__parse of a NULL-terminated argv (argv[0] is the program). */
int unit__parse_argv(struct opts *o, char *err, size_t len, char **argv);

/*
 * /usr/bin/python3 on script, with the file holding text as its argument:
 * its exit status, or -1 (said on stderr) when there is no Python: skip.
 */
int unit__run_python(const char *script, const char *text);
/* text into a new file at path: 0, or -1. */
int unit__write_file(const char *path, const char *text);

#endif
