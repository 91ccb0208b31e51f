/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Frames of the runtime every C and C++ program allocates through: the C
 * library, the C++ runtime, the dynamic linker, the allocators, and the
 * standard containers' code wherever it was instantiated (pure). A stripped
 * program's own frames have no names (fstminimize+0x38cd): its site is then
 * the innermost named frame that is none of these, in the library that did
 * the work (fst::internal::VectorFstImpl<...>::Read), not the vector's
 * _M_realloc_insert under it (symbolize/report_sites.c).
 */
#ifndef RUNTIME_FRAMES_H
#define RUNTIME_FRAMES_H

#include <stdbool.h>
#include "model/report.h"

/*
 * Is module (a path) one of the runtime's objects, by its file name: the C
 * library, the C++ runtime, libgcc_s, the dynamic linker, libm, the
 * allocators (jemalloc, tcmalloc, mimalloc)?
 */
bool runtime_frames__object(const char *module);
/* Is module the dynamic linker (ld-linux-x86-64.so.2, ld.so)? */
bool runtime_frames__loader(const char *module);
/* Is module the C library (libc.so.6)? */
bool runtime_frames__libc(const char *module);

/* Is f the runtime's, or a standard container's code (std::, __gnu_cxx::)? */
bool runtime_frames__internal(const struct report_frame *f);

/*
 * The qualified name in a demangled function name, past a template
 * function's return type: "std::unique_ptr<T> fst::make_unique<T>(int)"
 * gives "fst::make_unique<T>(int)".
 */
const char *runtime_frames__name(const char *function);

#endif
