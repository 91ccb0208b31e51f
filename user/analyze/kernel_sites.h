/* SPDX-License-Identifier: GPL-2.0 */
/*
 * -k: which kernel functions are the allocators' own (pure). A kernel
 * stack's site is its innermost frame outside them (analyze/sites.h): the
 * code that asked for the memory (alloc_pipe_info), not kmalloc, the slab
 * allocator, the page allocator, the per-CPU allocator, vmalloc, the thin
 * helpers over them (kstrdup, kmemdup, kvmalloc), nor the tracing that
 * captured the stack.
 */
#ifndef KERNEL_SITES_H
#define KERNEL_SITES_H

#include <stdbool.h>

/* Is function (a kallsyms name, clones' suffixes included) an allocator's? NULL: no. */
bool kernel_sites__allocator(const char *function);

#endif
