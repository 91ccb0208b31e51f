/* SPDX-License-Identifier: GPL-2.0 */
/*
 * How full pymalloc's arenas are, read from the target's memory (pure: the
 * memory is read through a callback). An arena is a 1 MiB mmap the tracer
 * saw the interpreter make; its 16 KiB pools each begin with a header
 * (Objects/obmalloc.c, struct pool_header, the same in CPython 3.8 to
 * 3.13) that says how many blocks of which size class the pool has handed
 * out. No symbol of the interpreter is needed: not the arenas array (a
 * static, without a symbol in Debian's python3.11), only the headers.
 */
#ifndef PYARENA_H
#define PYARENA_H

#include <stddef.h>
#include <stdint.h>
#include "model/report.h"

#define PYARENA_SIZE (1ULL << 20)	/* ARENA_BITS 20 */
#define PYARENA_POOL_SIZE (1ULL << 14)	/* POOL_BITS 14 */

#define PYARENA_MAX_POOLS (PYARENA_SIZE / PYARENA_POOL_SIZE)

/*
 * Read len bytes at each of addrs[0..n) of the target into out (n of them,
 * one after the other), in as few system calls as it can: 0, -EFAULT when
 * one cannot be read, or another -errno.
 */
typedef int pyarena_read_fn(void *ctx, const uint64_t *addrs, size_t n, size_t len, void *out);

/*
 * Read the arenas at bases[0..nr) (mmap addresses) into *out. A block whose
 * pool headers are not all pymalloc's, or that holds no block at all, is not
 * counted as an arena (its figures are in out->skipped): it may be another
 * mmap of that size, pymalloc's one empty arena kept for reuse, or one
 * unmapped since it was listed (-EFAULT). 0, or the first other read error.
 */
int pyarena__read(const uint64_t *bases, size_t nr, pyarena_read_fn *read, void *ctx,
		  struct report_pyarenas *out);

#endif
