/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Whether a native stack's block is the runtime's own (analyze/runtime_blocks.h),
 * from its addresses: their objects first, names only of the C library's
 * frames next to the allocation and, in a Python target, of the
 * interpreter's.
 */
#ifndef RUNTIME_SITES_H
#define RUNTIME_SITES_H

#include <stdbool.h>
#include <stdint.h>
#include "model/report.h"
#include "symbolize.h"
#include "target/modules.h"

/*
 * ips[first..nr): the stack past the allocation function's wrappers,
 * innermost first; complete: not cut short (its outermost frame is the
 * outermost). interp: the Python interpreter's object, or NULL (asked of
 * heap blocks only: a pymalloc arena holds anyone's objects). *kind: an
 * enum report_runtime. *preinit: the stack is complete and was made
 * before main by an initializer: its outermost frame the dynamic
 * linker's (a shared library's, the runtime's or not), or its C library's
 * outermost frames through __libc_start_main's call_init (the
 * executable's own constructors; told with libc's debug information
 * only). 0 or -ENOMEM.
 */
int runtime_sites__classify(const uint64_t *ips, uint32_t nr, uint32_t first, bool complete,
			     const char *interp, struct symbolizer *sym,
			     const struct modules *mods, uint8_t *kind, bool *preinit);

#endif
