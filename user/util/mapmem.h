/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the BPF maps will cost the kernel, and what it can give. Map memory
 * is charged to the memory cgroup and taken at creation (arrays, and hash
 * maps are preallocated): a table larger than the machine stalls the host
 * for many seconds before it fails, so the sizes the options ask for are
 * checked against the memory available before anything is created.
 */
#ifndef MAPMEM_H
#define MAPMEM_H

#include <stdint.h>

struct mapmem_map {
	uint32_t type;		/* BPF_MAP_TYPE_* */
	uint32_t key_size, value_size, max_entries, flags;
};

/* The memory available to us, and where its limit comes from. */
struct mapmem_budget {
	uint64_t bytes;
	const char *source;	/* "MemAvailable", "the memory cgroup's limit" */
};

/* The kernel memory map m takes when full, on a machine of ncpus CPUs. */
uint64_t mapmem__cost(const struct mapmem_map *m, unsigned ncpus);

/* MemAvailable of /proc/meminfo's text, in bytes. 0 or -EINVAL. */
int mapmem__parse_meminfo(const char *text, uint64_t *bytes);

/* The least of MemAvailable and the room left under our memory cgroups' limits. */
int mapmem__budget(struct mapmem_budget *b);

/* What the maps may take of the budget: the rest is the target's and the system's. */
static inline uint64_t mapmem__allowed(const struct mapmem_budget *b)
{
	return b->bytes / 2;
}

#endif
