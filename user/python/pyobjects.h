/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --py-objects: every Python object a block of its own, at its line, without
 * a restart: uprobes on pymalloc's API (PyObject_Malloc, _Calloc, _Realloc,
 * _Free and PyMem_*, which pymalloc serves too), counted as malloc, calloc,
 * realloc and free (released as operator delete is). Their calls to malloc (blocks over 512 bytes) and mmap
 * (new arenas) are nested in them, so counted once.
 *
 * Exact only where every object goes through those functions. A build with
 * LTO and PGO (Debian's python3.11) compiles pymalloc's fast path into some
 * 170 callers, which no probe on the functions sees, and a block allocated
 * through one and freed inline would look leaked. So the interpreter's
 * code is checked first: PyObject_Malloc and PyMem_Malloc must be calls
 * through their allocator tables, and nothing but the functions that
 * allocate through, read or set those tables may refer to them.
 */
#ifndef PYOBJECTS_H
#define PYOBJECTS_H

#include <stdbool.h>
#include <stddef.h>
#include "allocator/allocator.h"

/*
 * Add the API of the interpreter in obj to a's probes, once checked (its
 * code scanned, some 10 ms for 4 MiB; checked: it was, for this image). 0;
 * or -ENOTSUP, with why in msg (one line), when its objects do not all go
 * through it; or another -errno.
 */
int pyobjects__add(struct allocator *a, const struct lookup_object *obj, bool checked, char *msg,
		   size_t len);

#endif
