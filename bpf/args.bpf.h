/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Where each allocation API has its size and the block it resizes (or
 * posix_memalign's out-pointer), from its first three arguments: one case
 * per row of alloc_apis.h. Included by memleak.bpf.c (page_size is its).
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

/* Argument n (1-3) of a1..a3; 0 for none. */
#define ARGS_PICK(n) ((n) == 1 ? a1 : (n) == 2 ? a2 : (n) == 3 ? a3 : 0)
#define ARGS_BYTES(size, nmemb) (size)
#define ARGS_TIMES(size, nmemb) ((size) * (nmemb))
#define ARGS_ARRAY(size, nmemb) array_bytes(nmemb, size)
#define ARGS_PAGES(size, nmemb) whole_pages(size)
#define ARGS_CASE(api, name, kind, size_at, nmemb_at, ptr_at, bytes, ...)	\
	case API_##api:								\
		*size = ARGS_##bytes(ARGS_PICK(size_at), ARGS_PICK(nmemb_at));	\
		*ptr = ARGS_PICK(ptr_at);					\
		break;

/*
 * An allocating call's size, and its block to resize or posix_memalign's
 * out-pointer: the size, nmemb, ptr and bytes columns of alloc_apis.h.
 */
static __always_inline void call_args(__u32 api, __u64 a1, __u64 a2, __u64 a3, __u64 *size,
				      __u64 *ptr)
{
	switch (api) {
	MEMLEAK_APIS(ARGS_CASE)
	default:
		*size = a1;
		*ptr = 0;
	}
}

#undef ARGS_CASE
#undef ARGS_PAGES
#undef ARGS_ARRAY
#undef ARGS_TIMES
#undef ARGS_BYTES
#undef ARGS_PICK

/*
 * realloc, reallocarray, mremap and xallocx: ptr is a block they resize
 * (posix_memalign's is its out-pointer). Its old block's record is taken at
 * entry (call_begun), and -t prints it (trace_call).
 */
static __always_inline bool api_resizes(__u32 api)
{
	return api == API_REALLOC || api == API_REALLOCARRAY || api == API_MREMAP ||
	       api == API_XALLOCX;
}

/*
 * An entry-only probe may sit past the entry, on the first instruction the
 * kernel emulates rather than single-steps (user/allocator/placement.c): the cookie's
 * upper half says by how many bytes the function has lowered the stack
 * pointer by then, so that the nested-call test and the return address see
 * the stack as it was at the entry.
 */
static __always_inline __u64 entry_sp(struct pt_regs *ctx, __u64 cookie)
{
	return PT_REGS_SP(ctx) + (cookie >> 32);
}

#endif
