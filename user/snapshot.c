// SPDX-License-Identifier: GPL-2.0
/* The only reader of the BPF maps: copies them into a plain snapshot. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <bpf/bpf.h>
#include "probes_internal.h"
#include "snapshot.h"

#define BATCH 4096

static int add_site(struct snapshot *snap, size_t *cap, const struct site_key *key,
		    const struct site_stats *stats)
{
	struct snap_site *s;

	if (snap->nr == *cap) {
		size_t ncap = *cap ? *cap * 2 : 256;

		s = realloc(snap->sites, ncap * sizeof(*s));
		if (!s)
			return -ENOMEM;
		snap->sites = s;
		*cap = ncap;
	}
	s = &snap->sites[snap->nr++];
	memset(s, 0, sizeof(*s));
	s->stack_id = key->stack_id;
	s->api = key->api;
	s->stats = *stats;
	return 0;
}

/* Sites never leave the map while tracing, so plain iteration is stable. */
static int read_sites(struct probes *p, struct snapshot *snap)
{
	int fd = bpf_map__fd(p->skel->maps.sites);
	struct site_key key, next;
	struct site_stats stats;
	size_t cap = 0;
	void *prev = NULL;
	int err;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &stats))
			continue;
		err = add_site(snap, &cap, &key, &stats);
		if (err)
			return err;
	}
	return errno == ENOENT ? 0 : -errno;
}

static void read_stack(struct probes *p, struct snap_site *s)
{
	int fd = bpf_map__fd(p->skel->maps.stack_traces);
	struct stack_trace st;

	if (s->stack_id == MEMLEAK_NO_STACK || bpf_map_lookup_elem(fd, &s->stack_id, &st))
		return;
	s->nr_ips = st.nr < MEMLEAK_MAX_STACK_DEPTH ? st.nr : MEMLEAK_MAX_STACK_DEPTH;
	memcpy(s->ips, st.ips, s->nr_ips * sizeof(s->ips[0]));
}

static int site_cmp(const void *a, const void *b)
{
	const struct snap_site *x = a, *y = b;

	if (x->stack_id != y->stack_id)
		return x->stack_id < y->stack_id ? -1 : 1;
	return x->api < y->api ? -1 : x->api > y->api;
}

static struct snap_site *find_site(struct snapshot *snap, const struct alloc_info *info)
{
	struct snap_site key = { .stack_id = info->stack_id, .api = info->api };

	return bsearch(&key, snap->sites, snap->nr, sizeof(key), site_cmp);
}

/*
 * -o/--older: recount outstanding figures from the live blocks that are old
 * enough. Batched lookups keep the walk consistent while BPF deletes.
 */
static int recount_older(struct probes *p, struct snapshot *snap, uint64_t older_ns)
{
	int fd = bpf_map__fd(p->skel->maps.allocs);
	uint64_t keys[BATCH], in = 0, out_batch, now;
	struct alloc_info vals[BATCH];
	struct timespec ts;
	bool first = true;
	int err = 0;

	qsort(snap->sites, snap->nr, sizeof(*snap->sites), site_cmp);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	snap->older = true;
	for (size_t i = 0; i < snap->nr; i++) {
		struct site_stats *st = &snap->sites[i].stats;

		snap->all_outstanding_bytes += st->outstanding_bytes;
		snap->all_outstanding_allocs += st->outstanding_allocs;
		st->outstanding_bytes = st->outstanding_allocs = 0;
	}
	while (!err) {
		__u32 count = BATCH;

		err = bpf_map_lookup_batch(fd, first ? NULL : &in, &out_batch, keys, vals, &count, NULL);
		err = err ? -errno : 0;
		first = false;
		for (__u32 i = 0; i < count; i++) {
			struct snap_site *s = find_site(snap, &vals[i]);

			if (!s || now - vals[i].timestamp_ns < older_ns)
				continue;
			s->stats.outstanding_bytes += vals[i].size;
			s->stats.outstanding_allocs++;
		}
		in = out_batch;
	}
	return err == -ENOENT ? 0 : err;
}

int snapshot__collect(struct probes *p, uint64_t older_ns, struct snapshot **out)
{
	struct snapshot *snap = calloc(1, sizeof(*snap));
	int err;

	if (!snap)
		return -ENOMEM;
	for (int c = 0; c < CNT__COUNT; c++)
		snap->counters[c] = __atomic_load_n(&p->skel->bss->counters[c], __ATOMIC_RELAXED);
	err = read_sites(p, snap);
	if (!err && older_ns)
		err = recount_older(p, snap, older_ns);
	if (err) {
		snapshot__free(snap);
		return err;
	}
	/* Freed sites too: a heap profile's allocation totals name them. */
	for (size_t i = 0; i < snap->nr; i++)
		read_stack(p, &snap->sites[i]);
	*out = snap;
	return 0;
}

void snapshot__free(struct snapshot *snap)
{
	if (!snap)
		return;
	free(snap->sites);
	free(snap);
}
