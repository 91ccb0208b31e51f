// SPDX-License-Identifier: GPL-2.0
/* BPF's drop and event counters (memleak.h), read by user space. */
#include "probes.h"
#include "probes_internal.h"

uint64_t counters__read(const struct probes *p, enum memleak_counter c)
{
	return __atomic_load_n(&p->skel->bss->counters[c], __ATOMIC_RELAXED);
}
