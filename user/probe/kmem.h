/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel's own allocations (-k): bpf/kmem.bpf.c loaded and attached to
 * the kmem, page and per-CPU tracepoints (tp_btf, BPF links: no tracefs),
 * and its tables read into the snapshot every report is built from
 * (probe/snapshot.h), as a process's are.
 */
#ifndef KMEM_PROBES_H
#define KMEM_PROBES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "snapshot.h"

struct kmem_config {
	uint32_t max_allocs;	/* live blocks at once (--max-allocs) */
	uint32_t stacks;	/* kernel stacks, and sites (--stack-storage-size) */
	uint64_t min_size, max_size;	/* -z, -Z */
	bool bench_floor;	/* MEMLEAKBPF_BENCH_FLOOR: the programs return at once */
	bool bench_no_stack;	/* MEMLEAKBPF_BENCH_NO_STACK: no kernel stack taken */
	int verbose;
};

struct kmem;

/*
 * The tables cfg asks for against the memory the memory cgroup and the
 * machine leave (util/mapmem.h): 0, or -ENOMEM with one line in err that
 * names the option and the largest value that fits.
 */
int kmem__check_memory(const struct kmem_config *cfg, char *err, size_t errlen);
/* Load and attach: 0 or -errno, said on stderr with what failed. */
int kmem__load(const struct kmem_config *cfg, struct kmem **out);
/* How many tracepoints are attached (each with its name: kmem__point). */
size_t kmem__points(const struct kmem *k);
const char *kmem__point(const struct kmem *k, size_t i);
/*
 * Every site's figures, stacks and the counters, as snapshot__collect's;
 * with older_ns only blocks at least that old are outstanding; with ages
 * (or older_ns) each site's oldest block. 0 or -errno.
 */
int kmem_snapshot__collect(struct kmem *k, uint64_t older_ns, bool ages, struct snapshot **out);
/* The live bytes and their peak, as peak__live's (kmem_stats.c). */
void kmem_stats__live(const struct kmem *k, struct memleak_live out[KIND__COUNT]);
void kmem__free(struct kmem *k);

#endif
