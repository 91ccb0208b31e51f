// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel's allocator functions, by name prefix: the entry points
 * (kmalloc_noprof, __kmalloc_node_track_caller_noprof, kmem_cache_alloc_lru_noprof,
 * alloc_pages_mpol, __get_free_pages, pcpu_alloc_noprof), the slab's and
 * the page allocator's insides (___slab_alloc, allocate_slab,
 * get_page_from_freelist, rmqueue), and the BPF and tracing frames on top
 * of every captured stack.
 */
#include <stddef.h>
#include <string.h>
#include "kernel_sites.h"

static const char *const prefixes[] = {
	/* slab */
	"kmalloc", "__kmalloc", "___kmalloc", "kmem_cache_alloc", "__kmem_cache_alloc",
	"kmem_cache_zalloc", "kzalloc", "kcalloc", "krealloc", "__krealloc", "__do_krealloc",
	"kmalloc_array", "kmemdup", "kstrdup", "kstrndup", "kvmalloc", "__kvmalloc", "kvzalloc",
	"kvcalloc", "kvrealloc", "slab_alloc", "__slab_alloc", "___slab_alloc", "new_slab",
	"allocate_slab", "alloc_slab_page", "__do_kmalloc", "kmem_cache_alloc_bulk",
	"__kmem_cache_alloc_bulk", "slab_pre_alloc_hook", "slab_post_alloc_hook",
	"alloc_from_pcs", "refill_objects", "__pcs_replace",
	/* pages */
	"alloc_pages", "__alloc_pages", "alloc_frozen_pages", "__alloc_frozen_pages",
	"alloc_pages_mpol", "folio_alloc", "__folio_alloc", "vma_alloc_folio", "get_page_from_freelist",
	"rmqueue", "__rmqueue", "__get_free_pages", "get_zeroed_page", "alloc_page_interleave",
	"alloc_pages_bulk", "__alloc_pages_bulk", "alloc_pages_exact", "post_alloc_hook",
	"prep_new_page", "__alloc_pages_slowpath", "alloc_slab", "alloc_contig",
	/* vmalloc: its pages come from the page allocator */
	"vmalloc", "__vmalloc", "vzalloc", "vm_area_alloc_pages", "vm_area_alloc", "__vm_area_alloc",
	/* per-CPU */
	"pcpu_", "__alloc_percpu", "alloc_percpu", "__alloc_reserved_percpu",
	/* the capture: BPF and the tracepoints */
	"bpf_", "__bpf_", "___bpf_", "__traceiter_", "trace_", "__trace_", "perf_trace_",
};

bool kernel_sites__allocator(const char *function)
{
	if (!function)
		return false;
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(function, prefixes[i], strlen(prefixes[i])))
			return true;
	return false;
}
