/* SPDX-License-Identifier: GPL-2.0 */
/* struct kmem, shared by kmem.c (load, attach) and kmem_snapshot.c (the reading). */
#ifndef KMEM_INTERNAL_H
#define KMEM_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>
#include "memleak.h"
#include "kmem.h"
#include "kmem_types.h"
#include "kmem.skel.h"
#include "util/idmap.h"

#define KMEM_MAX_POINTS 16

struct bpf_link;
struct clock_feed;
struct stack_blob;

struct kmem {
	struct kmem_bpf *skel;
	struct bpf_link *links[KMEM_MAX_POINTS];
	const char *points[KMEM_MAX_POINTS];	/* the tracepoints attached, by name */
	size_t nr_links;
	struct clock_feed *clock;
	/*
	 * The stacks read so far, by id: BPF never deletes one under -k, so
	 * each is asked of the kernel once in a run.
	 */
	struct idmap stack_of;
	struct stack_blob **blobs;
	size_t nr_blobs, cap_blobs;
};

/* The runs the kernel skipped (kmem_stats.c). */
uint64_t kmem_stats__missed(const struct kmem *k);
void kmem_snapshot__free_stacks(struct kmem *k);

#endif
