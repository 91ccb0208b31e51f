// SPDX-License-Identifier: GPL-2.0
/* A slot of BPF's site table, read as BPF writes it (probes_internal.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "probes_internal.h"

void site_slot__counts(const struct probes_tables *t, const struct site_slot *slot,
		       struct site_counts *sum)
{
	const struct site_counts *c = slot->counts;

	memset(sum, 0, sizeof(*sum));
	for (unsigned i = 0; i < t->shards; i++) {
		sum->freed_bytes += __atomic_load_n(&c[i].freed_bytes, __ATOMIC_ACQUIRE);
		sum->freed_allocs += __atomic_load_n(&c[i].freed_allocs, __ATOMIC_ACQUIRE);
		sum->freed_samples += __atomic_load_n(&c[i].freed_samples, __ATOMIC_ACQUIRE);
		sum->freed_var += __atomic_load_n(&c[i].freed_var, __ATOMIC_ACQUIRE);
	}
	for (unsigned i = 0; i < t->shards; i++) {
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

int site_slot__briefs(struct probes *p, struct site_brief **out)
{
	struct site_brief *v = calloc(p->tables.slots ?: 1, sizeof(*v));
	const struct site_slot *s;
	struct mapwin w;
	int err = 0;

	if (!v)
		return -ENOMEM;
	probes_tables__sites(&p->tables, &w);
	for (size_t i = site_slot__next_used(&p->tables, 0); i < p->tables.slots && !err;
	     i = site_slot__next_used(&p->tables, i + 1)) {
		if (!(s = mapwin__at(&w, i)))
			err = w.err;
		else
			v[i] = (struct site_brief){ s->stack_id, s->api, site_slot__live(s) };
	}
	mapwin__end(&w);
	if (err) {
		free(v);
		v = NULL;
	}
	*out = v;
	return err;
}
