/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A report's distinct frames, each kept once: a stack that writes every
 * frame (the flame graph, the heap profiles, --all-stacks) holds pointers
 * into it (report_stack.refs) instead of a copy of each frame. A torch
 * job's final report has ten million frames of 210,000 stacks, 64 bytes
 * each, from a few hundred thousand distinct ones.
 */
#ifndef FRAME_TABLE_H
#define FRAME_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include "model/report.h"

struct frame_table;

struct frame_table *frame_table__new(void);
/*
 * The table's frame equal to f (every field but own; strings the same
 * pointers): the one there, or a copy of f added (*added), which then owns
 * f's strings unless f borrows them. A frame owning strings is always
 * added: its strings are copies of its own, equal to no other's pointers.
 * The pointer stays valid until frame_table__free. NULL: out of memory
 * (f's strings still the caller's).
 */
struct report_frame *frame_table__intern(struct frame_table *t, const struct report_frame *f,
					 bool *added);
/* Its frames, and the bytes it holds (frames, chunks and hash). */
size_t frame_table__count(const struct frame_table *t);
size_t frame_table__bytes(const struct frame_table *t);
/* Accepts NULL. */
void frame_table__free(struct frame_table *t);

#endif
