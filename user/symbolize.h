/* SPDX-License-Identifier: GPL-2.0 */
/* Addresses to function, module, file:line through elfutils libdwfl. */
#ifndef SYMBOLIZE_H
#define SYMBOLIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "modules.h"
#include "report.h"

struct symbolizer;

struct symbolizer *symbolizer__new(void);
/*
 * Resolve addr among mods into one or more frames (innermost first; more than
 * one when the address lies in inlined code), appended to *frames and *nr (a
 * realloc'd array the caller frees with report__free's rules).
 * return_address: addr is a return address, so it is looked up at addr - 1
 * to land on the call instruction's line. Unknown parts stay NULL/0. 0 or -errno.
 */
int symbolizer__resolve(struct symbolizer *s, const struct modules *mods, uint64_t addr,
			bool return_address, struct report_frame **frames, size_t *nr);
/* Drop every cache: after an exec the same addresses mean other code. */
void symbolizer__reset(struct symbolizer *s);
void symbolizer__free(struct symbolizer *s);

#endif
