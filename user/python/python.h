/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A Python interpreter in the target: its version, where its runtime state
 * lies, how BPF walks its frames (struct py_offsets) and how user space
 * reads its code objects (struct py_layout), and which allocator serves its
 * objects. The offsets come from a table per version, taken from the
 * interpreters' own debug info and checked against running interpreters
 * (3.13 also publishes them in _PyRuntime, and they are checked there).
 */
#ifndef PYTHON_H
#define PYTHON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/types.h>
#include "allocator/allocator.h"
#include "memleak.h"
#include "util/procmaps.h"

/* What user space reads of code objects, strings and bytes. */
struct py_layout {
	uint32_t code_filename;		/* PyCodeObject.co_filename */
	uint32_t code_qualname;		/* co_qualname */
	uint32_t code_linetable;	/* co_linetable (bytes) */
	uint32_t code_firstlineno;	/* int */
	uint32_t code_firsttraceable;	/* int: instructions before it set the frame up */
	uint32_t code_code;		/* co_code_adaptive: the bytecode, 2 bytes a unit */
	uint32_t ascii_size;		/* sizeof(PyASCIIObject): compact ASCII data follows */
	uint32_t compact_size;		/* sizeof(PyCompactUnicodeObject): other text */
	uint32_t bytes_data;		/* offsetof(PyBytesObject, ob_sval) */
};

/* Which allocator serves Python's objects. */
enum py_malloc {
	PY_MALLOC_PYMALLOC,	/* up to 512 bytes from pymalloc's arenas, larger from malloc */
	PY_MALLOC_MALLOC,	/* PYTHONMALLOC=malloc: every object from malloc */
};

struct python {
	unsigned major, minor, micro;
	char version[16];	/* "3.11.2" */
	char *path;		/* the object defining _PyRuntime, as the target sees it */
	struct py_offsets bpf;	/* runtime: the address of _PyRuntime */
	struct py_layout layout;
	uint64_t code_type;	/* address of PyCode_Type: what a code object's ob_type is */
	char *finalize_path;	/* open path and file offset of Py_FinalizeEx; NULL if none */
	uint64_t finalize_offset;
	char *dealloc_path;	/* ... of code_dealloc (PyCode_Type.tp_dealloc); NULL if unknown */
	uint64_t dealloc_offset;
	char *exit_path;	/* ... of _exit (the C library's) */
	uint64_t exit_offset;
	enum py_malloc malloc;
	char malloc_why[64];	/* "PYTHONMALLOC=malloc", "by default", ... */
	bool env_ignored;	/* run with -E or -I: PYTHONMALLOC is not read */
};

/*
 * Look for an interpreter among the target's objects, in lookup order: the
 * first object that defines _PyRuntime. 0 with *out set; -ENOENT when the
 * target is not Python; -ENOTSUP when its Python cannot be walked (msg says
 * why, one line); another -errno when it could not be read.
 */
int python__detect(pid_t pid, const struct maps *maps, const struct lookup_order *lo,
		   struct python **out, char *msg, size_t len);
/* "malloc", "pymalloc". */
const char *python__malloc_name(enum py_malloc m);
void python__free(struct python *py);

#endif
