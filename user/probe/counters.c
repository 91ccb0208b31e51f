// SPDX-License-Identifier: GPL-2.0
/* BPF's drop and event counters (memleak.h), read by user space. */
#include "bpfmaps.h"
#include "probes.h"
#include "probes_internal.h"

uint64_t counters__read(const struct probes *p, enum memleak_counter c)
{
	return bpfmaps__counter(p->skel, c);
}
