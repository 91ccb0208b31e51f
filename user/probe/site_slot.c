// SPDX-License-Identifier: GPL-2.0
/* A slot of BPF's site table, read as BPF writes it (probes_internal.h). */
#include <string.h>
#include "probes_internal.h"

void site_slot__counts(const struct site_slot *slot, struct site_counts *sum)
{
	const struct site_counts *c = slot->counts;

	memset(sum, 0, sizeof(*sum));
	for (int i = 0; i < MEMLEAK_SITE_SHARDS; i++) {
		sum->freed_bytes += __atomic_load_n(&c[i].freed_bytes, __ATOMIC_ACQUIRE);
		sum->freed_allocs += __atomic_load_n(&c[i].freed_allocs, __ATOMIC_ACQUIRE);
		sum->freed_samples += __atomic_load_n(&c[i].freed_samples, __ATOMIC_ACQUIRE);
		sum->freed_var += __atomic_load_n(&c[i].freed_var, __ATOMIC_ACQUIRE);
	}
	for (int i = 0; i < MEMLEAK_SITE_SHARDS; i++) {
		sum->total_bytes += __atomic_load_n(&c[i].total_bytes, __ATOMIC_ACQUIRE);
		sum->total_allocs += __atomic_load_n(&c[i].total_allocs, __ATOMIC_ACQUIRE);
		sum->total_samples += __atomic_load_n(&c[i].total_samples, __ATOMIC_ACQUIRE);
		sum->total_var += __atomic_load_n(&c[i].total_var, __ATOMIC_ACQUIRE);
	}
}

bool site_slot__live(const struct site_slot *slot)
{
	__u64 key = __atomic_load_n(&slot->key, __ATOMIC_ACQUIRE);

	return key != MEMLEAK_SITE_EMPTY && key < MEMLEAK_SITE_RETIRING &&
	       __atomic_load_n(&slot->ready, __ATOMIC_ACQUIRE);
}
