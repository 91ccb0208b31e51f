/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Where each allocation API has its size and the block it resizes (or
 * posix_memalign's out-pointer), from its first three arguments: one case
 * per API of memleak.h. Included by memleak.bpf.c (page_size is its).
 */
#ifndef ARGS_BPF_H
#define ARGS_BPF_H

/* pvalloc hands out whole pages, at least one. */
static __always_inline __u64 whole_pages(__u64 size)
{
	return size ? (size + page_size - 1) / page_size * page_size : page_size;
}

/*
 * reallocarray's nmemb * size, ~0 on overflow: reallocarray then fails and
 * leaves the block alone, and a non-zero size makes the NULL return read as
 * that failure. The barrier keeps clang from turning the check into a call
 * to __multi3.
 */
static __always_inline __u64 array_bytes(__u64 nmemb, __u64 size)
{
	__u64 bytes = nmemb * size;

	asm volatile("" : "+r"(bytes));
	return nmemb && bytes / nmemb != size ? ~0ULL : bytes;
}

/* An allocating call's size, and its block to resize or posix_memalign's out-pointer. */
static __always_inline void call_args(__u32 api, __u64 a1, __u64 a2, __u64 a3, __u64 *size,
				      __u64 *ptr)
{
	*ptr = 0;
	switch (api) {
	case API_CALLOC:
		*size = a1 * a2;
		break;
	case API_REALLOC:
		*size = a2;
		*ptr = a1;
		break;
	case API_REALLOCARRAY:
		*size = array_bytes(a2, a3);
		*ptr = a1;
		break;
	case API_POSIX_MEMALIGN:
		*size = a3;	/* (memptr, alignment, size) */
		*ptr = a1;
		break;
	case API_ALIGNED_ALLOC:
	case API_MEMALIGN:
		*size = a2;	/* (alignment, size) */
		break;
	case API_PVALLOC:
		*size = whole_pages(a1);
		break;
	case API_MMAP:
		*size = a2;	/* (addr, length, ...) */
		break;
	case API_MREMAP:
		*size = a3;	/* (old, old_size, new_size, ...) */
		*ptr = a1;
		break;
	case API_XALLOCX:
		*size = a2;	/* (ptr, size, extra, flags): at least size */
		*ptr = a1;
		break;
	default:	/* malloc, valloc, new, new[]: size first */
		*size = a1;
	}
}

/*
 * An entry-only probe may sit past the entry, on the first instruction the
 * kernel emulates rather than single-steps (user/placement.c): the cookie's
 * upper half says by how many bytes the function has lowered the stack
 * pointer by then, so that the nested-call test and the return address see
 * the stack as it was at the entry.
 */
static __always_inline __u64 entry_sp(struct pt_regs *ctx, __u64 cookie)
{
	return PT_REGS_SP(ctx) + (cookie >> 32);
}

#endif
