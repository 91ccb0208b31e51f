// SPDX-License-Identifier: GPL-2.0
/*
 * The exact live totals and high-water marks the BPF programs keep
 * (bpf/peak.bpf.h), read from .bss, and the mark at which BPF tells us
 * that the heap's peak rose: the moment to sample the sites for the stacks
 * that hold it.
 */
#include "bpfmaps.h"
#include "probes.h"
#include "probes_internal.h"

/* The peak's rise, as a shift: a 64th (1.6%) of it. */
#define PEAK_STEP_SHIFT 6

void peak__live(const struct probes *p, struct memleak_live out[KIND__COUNT])
{
	const struct memleak_live *l = bpfmaps__live(p->skel);

	for (int k = 0; k < KIND__COUNT; k++) {
		out[k] = (struct memleak_live){
			.bytes = __atomic_load_n(&l[k].bytes, __ATOMIC_RELAXED),
			.peak = __atomic_load_n(&l[k].peak, __ATOMIC_RELAXED),
			.peak_ns = __atomic_load_n(&l[k].peak_ns, __ATOMIC_RELAXED),
		};
	}
}

void peak__arm(struct probes *p)
{
	struct memleak_live *l = &bpfmaps__live(p->skel)[KIND_HEAP];
	uint64_t peak = __atomic_load_n(&l->peak, __ATOMIC_RELAXED);

	__atomic_store_n(&l->mark, peak + (peak >> PEAK_STEP_SHIFT) + 1, __ATOMIC_RELAXED);
}
