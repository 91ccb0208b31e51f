/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Python code objects as a report names them: qualified name, file, and the
 * line of an instruction, decoded from the code's location table. Each code
 * object is read from the live target once and kept for the whole run, so a
 * report made after the target exited still names it. Pure: the target's
 * memory comes through a read function, so tests feed it made-up memory.
 */
#ifndef PYCODE_H
#define PYCODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "python.h"

/* Read len bytes at addr of the target into buf: 0 or -errno. */
typedef int (*pycode_read_fn)(void *ctx, uint64_t addr, void *buf, size_t len);

struct pycode;

/* Where an instruction is, as pycode__where tells it. */
struct pycode_where {
	const char *function;	/* co_qualname; owned by the pycode */
	const char *file;	/* co_filename */
	int line;		/* 0 when the instruction has no line */
	uint64_t offset;	/* of the instruction in the bytecode, in bytes */
	bool setup;		/* before the code's first traceable instruction: the
				   frame was still being set up (3.11+ "incomplete") */
};

/* layout: the interpreter's; code_type: the address of its PyCode_Type. */
struct pycode *pycode__new(const struct py_layout *layout, uint64_t code_type);
/*
 * Read the code object of frame f unless it is known already (read, or
 * found not to be that code object any more: freed, its address reused).
 * A code object is known by its address and its co_linetable, as BPF saw
 * them. 0, or -errno when it could not be read: it is not tried again,
 * unless read said -ESRCH (the target is gone: nothing was learnt).
 */
int pycode__add(struct pycode *pc, const struct py_frame *f, pycode_read_fn read, void *ctx);
/*
 * The same from the copy BPF made when a stack first showed it (complete
 * unless its flags say otherwise: then the target is read for the rest, if
 * it still can be); it also names a code object a reading of the target
 * could not (the copy came late: freed meanwhile). 0 or -ENOMEM.
 */
int pycode__add_copy(struct pycode *pc, const struct py_code *copy, pycode_read_fn read,
		     void *ctx);
/*
 * How many code objects are known (read or not), and named late by a copy:
 * it moves whenever an answer of pycode__where may have.
 */
size_t pycode__count(const struct pycode *pc);
/* Code objects known and not named: their frames by address (CNT_PY_CODES_UNNAMED). */
size_t pycode__unnamed(const struct pycode *pc);
/*
 * Which table this is, never the same for two of a run (0: NULL). A code
 * object known to a table stays known, with the same answers (or, one not
 * named, named later by its copy: pycode__count moves): what was found
 * in it stays true while its id is the same.
 */
uint64_t pycode__id(const struct pycode *pc);
/* Where f's instruction is; false when its code object was never read. */
bool pycode__where(const struct pycode *pc, const struct py_frame *f, struct pycode_where *out);
void pycode__free(struct pycode *pc);

/*
 * The line of the instruction at byte offset `offset` of a code object, from
 * its location table (the co_linetable format of 3.11 on: Objects/locations.md
 * in CPython), the code starting at firstlineno. 0 when it has no line.
 */
int pycode__line(const uint8_t *table, size_t len, int firstlineno, uint64_t offset);

#endif
