/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The runtime's own blocks (pure): what the C library, the C++ runtime or
 * the Python interpreter allocated for itself, which no line of the
 * program asked for or can free, told by the frames of its stack
 * (enum report_runtime). They stay allocated until exit; valgrind frees
 * them there (__libc_freeres, __gnu_cxx::__freeres) and so never lists
 * them, and tracemalloc starts after the interpreter's start-up. A report
 * names them for what they are and lists their sites after the program's
 * (analyze/sites.c):
 *  - RUNTIME_INIT: every frame of a complete stack in the runtime's objects
 *    (analyze/runtime_frames.h: the C library, the C++ runtime, the
 *    dynamic linker, the allocators), the outermost in the dynamic linker:
 *    a runtime library's own initializer, run as it was loaded, before
 *    main (libstdc++'s is its exception-handling emergency pool, 72,704
 *    bytes in GCC 12's). Told by the objects, not by any address;
 *  - the C library's, by the functions of libc's own frames between the
 *    allocation and the program's code (runtime_blocks__libc_kind): a stdio
 *    stream's buffer (_IO_file_doallocate), setlocale's and gettext's data,
 *    NSS modules and the non-reentrant lookups' buffers, the time zone
 *    read by tzset, iconv's modules; not what such a function hands the
 *    program to free (newlocale's locale, iconv_open's descriptor);
 *  - RUNTIME_PYINIT: a stack with no Python frame, through the
 *    interpreter's initialization (Py_InitializeFromConfig): the
 *    interpreter's own start-up, before any Python code ran.
 */
#ifndef RUNTIME_BLOCKS_H
#define RUNTIME_BLOCKS_H

#include <stdbool.h>
#include <stdint.h>
#include "model/report.h"

/*
 * Of a run of libc frames' functions (innermost first), the kind of
 * libc's own block they made: RUNTIME_NONE when none of them is known to,
 * or one hands what it made to the program (newlocale, iconv_open).
 * Called once per function name: *veto and *kind carry the answer along
 * the run (both false/RUNTIME_NONE at its start).
 */
void runtime_blocks__libc_step(const char *function, bool *veto, enum report_runtime *kind);

/* Is function the Python interpreter's initialization (Py_InitializeFromConfig, ...)? */
bool runtime_blocks__py_init(const char *function);

/*
 * A stack's kind with the blocks it holds now: libc keeps the buffers of its
 * three standard streams, so a stack holding more stdio buffers than that
 * holds streams the program opened and never closed (fopen without fclose):
 * the program's to fix, RUNTIME_NONE.
 */
enum report_runtime runtime_blocks__held(enum report_runtime kind, uint64_t allocs);

/* A site's kind of its stacks': the same for all, RUNTIME_SEVERAL, or NONE when one is not. */
enum report_runtime runtime_blocks__merge(enum report_runtime site, enum report_runtime stack,
					  bool first);

/* What a kind is, in words: "libc's buffer of a stdio stream, ..."; NULL for RUNTIME_NONE. */
const char *runtime_blocks__what(enum report_runtime kind);

/* Its short name in the JSON ("stdio-buffer"); NULL for RUNTIME_NONE. */
const char *runtime_blocks__key(enum report_runtime kind);

#endif
