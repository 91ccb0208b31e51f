// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel's allocator functions, by name prefix: the entry points
 * (kmalloc_noprof, __kmalloc_node_track_caller_noprof, kmem_cache_alloc_lru_noprof,
 * alloc_pages_mpol, __get_free_pages, pcpu_alloc_noprof), the slab's and
 * the page allocator's insides (___slab_alloc, allocate_slab,
 * get_page_from_freelist, rmqueue), and the BPF and tracing frames on top
 * of every captured stack.
 *
 * Not allocate_slab nor ___kmalloc_large_node: the pages a slab cache grows
 * by, and those of a kmalloc too big for the caches (also traced as that
 * kmalloc), are sites of their own there, apart from the sites of the
 * objects in them; alloc_slab_obj_exts, a slab's metadata, likewise.
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
	"alloc_slab_page", "__do_kmalloc", "kmem_cache_alloc_bulk",
	"__kmem_cache_alloc_bulk", "slab_pre_alloc_hook", "slab_post_alloc_hook",
	"alloc_from_pcs", "refill_objects", "__pcs_replace",
	/* pages */
	"alloc_pages", "__alloc_pages", "alloc_frozen_pages", "__alloc_frozen_pages",
	"alloc_pages_mpol", "folio_alloc", "__folio_alloc", "vma_alloc_folio", "get_page_from_freelist",
	"rmqueue", "__rmqueue", "__get_free_pages", "get_zeroed_page", "alloc_page_interleave",
	"alloc_pages_bulk", "__alloc_pages_bulk", "alloc_pages_exact", "post_alloc_hook",
	"prep_new_page", "__alloc_pages_slowpath", "alloc_contig",
	/* vmalloc: its pages come from the page allocator */
	"vmalloc", "__vmalloc", "vzalloc", "vm_area_alloc_pages", "vm_area_alloc", "__vm_area_alloc",
	/* per-CPU */
	"pcpu_", "__alloc_percpu", "alloc_percpu", "__alloc_reserved_percpu",
	/* the capture: BPF and the tracepoints */
	"bpf_", "__bpf_", "___bpf_", "__traceiter_", "trace_", "__trace_", "perf_trace_",
};

/* Sites of their own, though their names begin as the allocators' do. */
static const char *const own_sites[] = { "___kmalloc_large_node", "allocate_slab" };

static bool starts(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

bool kernel_sites__allocator(const char *function)
{
	if (!function)
		return false;
	for (size_t i = 0; i < sizeof(own_sites) / sizeof(own_sites[0]); i++)
		if (starts(function, own_sites[i]))
			return false;
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (starts(function, prefixes[i]))
			return true;
	return false;
}
