/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The allocation APIs, one row each: adding one is adding a row here (and,
 * if it returns its block in a way of its own, a case in memleak.bpf.c's
 * returned_block). Included by memleak.h; every side expands the rows with
 * its own X:
 *
 *   enum memleak_api           memleak.h
 *   where the size and block are (call_args)   bpf/args.bpf.h
 *   the registers kept for the entry probe     user/probe/probes_attach.c
 *   the symbols probed         user/allocator/allocator.c
 *   the name in reports        user/model/report.c
 *
 * Columns:
 *   api     the enum's name, after API_
 *   name    as reports print it
 *   kind    HEAP or MMAP (memleak_kind)
 *   size    the argument (1-3) with the size in bytes, 0 if none
 *   nmemb   the argument it is multiplied by, 0 if none
 *   ptr     the argument with the block resized (realloc) or the
 *           out-pointer (posix_memalign), 0 if none
 *   bytes   how the size is worked out: BYTES (as passed), TIMES (size *
 *           nmemb, calloc's), ARRAY (size * nmemb, ~0 on overflow:
 *           reallocarray's), PAGES (whole pages, at least one: pvalloc's)
 *   regs    how many argument registers the entry program reads, which
 *           a probe placed past the entry must find intact (placement.h);
 *           0 for -k's rows, which no uprobe serves
 *   std     the standard names (C, and C++'s mangled operators)
 *   aliases other names of the same call (glibc's __libc_*, gperftools'
 *           tc_*, jemalloc's *allocx)
 *
 * Order matters twice. The allocating APIs come first: a site is keyed by
 * one of them, the releasing ones (>= API_FREE) never name a site; the
 * enum's values are in saved snapshots. And when two names share an address
 * (in tcmalloc free is also operator delete, new is also new[]; in glibc
 * 2.36 aligned_alloc is memalign), the one probed is the first of: every
 * row's std names, row by row, then every row's aliases, row by row.
 */
#ifndef ALLOC_APIS_H
#define ALLOC_APIS_H

/* X(api, name, kind, size, nmemb, ptr, bytes, regs, (std...), (aliases...)) */
#define MEMLEAK_APIS(X)								\
	X(MALLOC, "malloc", HEAP, 1, 0, 0, BYTES, 1, ("malloc"),		\
	  ("__libc_malloc", "__TBB_malloc_proxy", "tc_malloc",			\
	   "tc_malloc_skip_new_handler", "mallocx"))				\
	X(CALLOC, "calloc", HEAP, 1, 2, 0, TIMES, 2, ("calloc"),		\
	  ("__libc_calloc", "tc_calloc"))					\
	X(REALLOC, "realloc", HEAP, 2, 0, 1, BYTES, 2, ("realloc"),		\
	  ("__libc_realloc", "tc_realloc", "rallocx"))				\
	X(REALLOCARRAY, "reallocarray", HEAP, 3, 2, 1, ARRAY, 3,		\
	  ("reallocarray"), ())							\
	/* (memptr, alignment, size) */						\
	X(POSIX_MEMALIGN, "posix_memalign", HEAP, 3, 0, 1, BYTES, 3,		\
	  ("posix_memalign"), ("__posix_memalign", "tc_posix_memalign"))	\
	/* (alignment, size) */							\
	X(ALIGNED_ALLOC, "aligned_alloc", HEAP, 2, 0, 0, BYTES, 2,		\
	  ("aligned_alloc"), ())						\
	X(MEMALIGN, "memalign", HEAP, 2, 0, 0, BYTES, 2, ("memalign"),		\
	  ("__libc_memalign", "tc_memalign"))					\
	X(VALLOC, "valloc", HEAP, 1, 0, 0, BYTES, 1, ("valloc"),		\
	  ("__libc_valloc", "tc_valloc"))					\
	X(PVALLOC, "pvalloc", HEAP, 1, 0, 0, PAGES, 1, ("pvalloc"),		\
	  ("__libc_pvalloc", "tc_pvalloc"))					\
	/*									\
	 * (addr, length, ...). Not glibc's GLIBC_PRIVATE __mmap: only glibc	\
	 * calls it, and its own mappings are the allocator's business;	\
	 * tcmalloc's mmap64 is an entry point of its own (glibc's is mmap).	\
	 */									\
	X(MMAP, "mmap", MMAP, 2, 0, 0, BYTES, 2, ("mmap"), ("mmap64"))		\
	/* (old, old_size, new_size, ...) */					\
	X(MREMAP, "mremap", MMAP, 3, 0, 1, BYTES, 3, ("mremap"), ())		\
	/*									\
	 * jemalloc's resize in place, (ptr, size, extra, flags): returns the	\
	 * block's new size, at least size if it resized.			\
	 */									\
	X(XALLOCX, "xallocx", HEAP, 2, 0, 1, BYTES, 3, (), ("xallocx"))		\
	/* operator new and new[]: plain, nothrow and aligned forms */		\
	X(NEW, "new", HEAP, 1, 0, 0, BYTES, 1,					\
	  ("_Znwm", "_ZnwmRKSt9nothrow_t", "_ZnwmSt11align_val_t",		\
	   "_ZnwmSt11align_val_tRKSt9nothrow_t"),				\
	  ("tc_new", "tc_new_nothrow", "tc_new_aligned",			\
	   "tc_new_aligned_nothrow"))						\
	X(NEW_ARRAY, "new[]", HEAP, 1, 0, 0, BYTES, 1,				\
	  ("_Znam", "_ZnamRKSt9nothrow_t", "_ZnamSt11align_val_t",		\
	   "_ZnamSt11align_val_tRKSt9nothrow_t"),				\
	  ("tc_newarray", "tc_newarray_nothrow", "tc_newarray_aligned",	\
	   "tc_newarray_aligned_nothrow"))					\
	/*									\
	 * The kernel's own (-k, bpf/kmem.bpf.c): its tracepoints, not	\
	 * symbols; each freed by its own (kfree, kmem_cache_free,		\
	 * mm_page_free, percpu_free_percpu). alloc_pages: 2^order pages;	\
	 * alloc_percpu: the bytes on all possible CPUs together.		\
	 */									\
	X(KMALLOC, "kmalloc", HEAP, 0, 0, 0, BYTES, 0, (), ())			\
	X(KMEM_CACHE_ALLOC, "kmem_cache_alloc", HEAP, 0, 0, 0, BYTES, 0, (), ())	\
	X(PAGES, "alloc_pages", HEAP, 0, 0, 0, BYTES, 0, (), ())		\
	X(PERCPU, "alloc_percpu", HEAP, 0, 0, 0, BYTES, 0, (), ())		\
	/*									\
	 * The releasing ones, (ptr, ...). tbbmalloc's __libc_free is an entry	\
	 * point of its own; jemalloc's dallocx(ptr, flags) and sdallocx(ptr,	\
	 * size, flags) take the block where free does.				\
	 */									\
	X(FREE, "free", HEAP, 0, 0, 1, BYTES, 1, ("free"),			\
	  ("__libc_free", "__libc_cfree", "cfree", "tc_free", "tc_cfree",	\
	   "tc_free_sized", "dallocx", "sdallocx"))				\
	/* (addr, length) */							\
	X(MUNMAP, "munmap", MMAP, 2, 0, 1, BYTES, 2, ("munmap"), ())		\
	/* operator delete and delete[]: plain, sized, nothrow and aligned */	\
	X(DELETE, "delete", HEAP, 0, 0, 1, BYTES, 1,				\
	  ("_ZdlPv", "_ZdlPvm", "_ZdlPvRKSt9nothrow_t", "_ZdlPvSt11align_val_t",	\
	   "_ZdlPvmSt11align_val_t", "_ZdlPvSt11align_val_tRKSt9nothrow_t"),	\
	  ("tc_delete", "tc_delete_sized", "tc_delete_nothrow",		\
	   "tc_delete_aligned", "tc_delete_sized_aligned",			\
	   "tc_delete_aligned_nothrow"))					\
	X(DELETE_ARRAY, "delete[]", HEAP, 0, 0, 1, BYTES, 1,			\
	  ("_ZdaPv", "_ZdaPvm", "_ZdaPvRKSt9nothrow_t", "_ZdaPvSt11align_val_t",	\
	   "_ZdaPvmSt11align_val_t", "_ZdaPvSt11align_val_tRKSt9nothrow_t"),	\
	  ("tc_deletearray", "tc_deletearray_sized", "tc_deletearray_nothrow",	\
	   "tc_deletearray_aligned", "tc_deletearray_sized_aligned",		\
	   "tc_deletearray_aligned_nothrow"))

#endif
