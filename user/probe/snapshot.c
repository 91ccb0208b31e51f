// SPDX-License-Identifier: GPL-2.0
/* The only reader of the BPF maps: copies them into a plain snapshot. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <bpf/bpf.h>
#include "probes_internal.h"
#include "snapshot.h"
#include "util/vec.h"

/* The figures of a site; outstanding is what was allocated less what was freed. */
struct slot_copy {
	__u64 stack_id;
	__u32 api;
	struct site_stats stats;
};

static __u64 less(__u64 a, __u64 b)
{
	return a > b ? a - b : 0;
}

/*
 * The site table's slot, once BPF has written who it is. Frees are read
 * before allocations: a block is counted allocated before it can be freed,
 * so the difference is never short of a free that raced with the reading.
 */
static bool read_slot(const struct site_slot *slot, struct slot_copy *out)
{
	__u64 freed_bytes = 0, freed_allocs = 0, total_bytes = 0, total_allocs = 0;
	const struct site_counts *c = slot->counts;

	if (!__atomic_load_n(&slot->ready, __ATOMIC_ACQUIRE))
		return false;
	for (int i = 0; i < MEMLEAK_SITE_SHARDS; i++) {
		freed_bytes += __atomic_load_n(&c[i].freed_bytes, __ATOMIC_ACQUIRE);
		freed_allocs += __atomic_load_n(&c[i].freed_allocs, __ATOMIC_ACQUIRE);
	}
	for (int i = 0; i < MEMLEAK_SITE_SHARDS; i++) {
		total_bytes += __atomic_load_n(&c[i].total_bytes, __ATOMIC_ACQUIRE);
		total_allocs += __atomic_load_n(&c[i].total_allocs, __ATOMIC_ACQUIRE);
	}
	out->stack_id = slot->stack_id;
	out->api = slot->api;
	out->stats.total_bytes = total_bytes;
	out->stats.total_allocs = total_allocs;
	out->stats.outstanding_bytes = less(total_bytes, freed_bytes);
	out->stats.outstanding_allocs = less(total_allocs, freed_allocs);
	return true;
}
static int add_site(struct snapshot *snap, size_t *cap, const struct slot_copy *slot, uint32_t idx)
{
	struct snap_site *s;

	if (vec__reserve_min(&snap->sites, cap, snap->nr + 1, sizeof(*s), 256))
		return -ENOMEM;
	s = &snap->sites[snap->nr++];
	memset(s, 0, sizeof(*s));
	s->stack_id = slot->stack_id;
	s->api = slot->api;
	s->stats = slot->stats;
	s->slot = idx;
	return 0;
}

/* Sites never leave the table while tracing: one pass over it is a consistent list. */
static int read_sites(struct probes *p, struct snapshot *snap)
{
	struct slot_copy slot;
	size_t cap = 0;
	int err;

	for (size_t i = 0; i < p->site_slots; i++) {
		if (!read_slot(&p->site_table[i], &slot))
			continue;
		err = add_site(snap, &cap, &slot, (uint32_t)i);
		if (err)
			return err;
	}
	return 0;
}

/*
 * In a Python target a stack id may stand for a pair (native stack, Python
 * frames): keep the Python frames, and return the native stack's id.
 */
static uint64_t read_python(struct probes *p, struct snap_site *s)
{
	struct stack_pair pair;
	struct py_stack *py;

	if (!p->py_used || s->stack_id == MEMLEAK_NO_STACK ||
	    bpf_map_lookup_elem(bpf_map__fd(p->skel->maps.stack_pairs), &s->stack_id, &pair))
		return s->stack_id;
	py = malloc(sizeof(*py));
	if (py && !bpf_map_lookup_elem(bpf_map__fd(p->skel->maps.py_stacks), &pair.python, py))
		s->py = py;
	else
		free(py);
	return pair.native;
}

static void read_stack(struct probes *p, struct snap_site *s)
{
	int fd = bpf_map__fd(p->skel->maps.stack_traces);
	uint64_t id = read_python(p, s);
	struct stack_trace st;

	if (id == MEMLEAK_NO_STACK || bpf_map_lookup_elem(fd, &id, &st))
		return;
	s->nr_ips = st.nr < MEMLEAK_MAX_STACK_DEPTH ? st.nr : MEMLEAK_MAX_STACK_DEPTH;
	s->stack_flags = st.flags;
	memcpy(s->ips, st.ips, s->nr_ips * sizeof(s->ips[0]));
}

/* With -o the per-site figures are recounted during the walk, from the old blocks. */
static void start_recount(struct snapshot *snap)
{
	snap->older = true;
	for (size_t i = 0; i < snap->nr; i++) {
		struct site_stats *st = &snap->sites[i].stats;

		snap->all_outstanding_bytes += st->outstanding_bytes;
		snap->all_outstanding_allocs += st->outstanding_allocs;
		st->outstanding_bytes = st->outstanding_allocs = 0;
	}
}

static void account(struct snapshot *snap, struct snap_site *s, const struct alloc_info *a,
		    uint64_t older_ns)
{
	if (!s->oldest_ns || a->timestamp_ns < s->oldest_ns)
		s->oldest_ns = a->timestamp_ns;
	/* A block newer than the snapshot's clock is young, not 2^64 ns old. */
	if (older_ns && a->timestamp_ns <= snap->time_ns &&
	    snap->time_ns - a->timestamp_ns >= older_ns) {
		s->stats.outstanding_bytes += a->size;
		s->stats.outstanding_allocs++;
	}
}

/* For each slot of the site table, its site in snap; NULL for slots not in it. */
static struct snap_site **index_sites(struct probes *p, struct snapshot *snap)
{
	struct snap_site **of_slot = calloc(p->site_slots, sizeof(*of_slot));

	if (!of_slot)
		return NULL;
	for (size_t i = 0; i < snap->nr; i++)
		if (snap->sites[i].slot < p->site_slots)
			of_slot[snap->sites[i].slot] = &snap->sites[i];
	return of_slot;
}

/*
 * One walk of the live blocks: the age of each site's oldest, and with
 * -o/--older the figures of the old ones. A slot whose record is being
 * written (the busy bit) is an allocation still returning: left for the
 * next snapshot.
 */
static int walk_allocs(struct probes *p, struct snapshot *snap, uint64_t older_ns)
{
	struct snap_site **of_slot = index_sites(p, snap);

	if (!of_slot)
		return -ENOMEM;
	if (older_ns)
		start_recount(snap);
	snap->ages = true;
	for (size_t b = 0; b < p->alloc_buckets; b++) {
		const struct alloc_bucket *bucket = &p->alloc_table[b];

		for (int i = 0; i < MEMLEAK_BUCKET_SLOTS; i++) {
			uint64_t addr = __atomic_load_n(&bucket->addr[i], __ATOMIC_ACQUIRE);
			struct alloc_info info = bucket->info[i];
			struct snap_site *s;

			if (!addr || addr & MEMLEAK_ADDR_BUSY || info.site >= p->site_slots)
				continue;
			s = of_slot[info.site];
			if (s)
				account(snap, s, &info, older_ns);
		}
	}
	free(of_slot);
	return 0;
}

static uint64_t live_blocks(const struct snapshot *snap)
{
	uint64_t n = 0;

	for (size_t i = 0; i < snap->nr; i++)
		n += snap->sites[i].stats.outstanding_allocs;
	return n;
}

int snapshot__ages(struct probes *p, struct snapshot *snap)
{
	return snap->ages ? 0 : walk_allocs(p, snap, 0);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int snapshot__collect(struct probes *p, uint64_t older_ns, struct snapshot **out)
{
	struct snapshot *snap = calloc(1, sizeof(*snap));
	int err;

	if (!snap)
		return -ENOMEM;
	for (int c = 0; c < CNT__COUNT; c++)
		snap->counters[c] = __atomic_load_n(&p->skel->bss->counters[c], __ATOMIC_RELAXED);
	snap->time_ns = now_ns();
	err = read_sites(p, snap);
	if (!err && (older_ns || live_blocks(snap) <= SNAPSHOT_AGES_MAX))
		err = walk_allocs(p, snap, older_ns);
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

static int append_live(struct snap_live **buf, size_t *cap, size_t *nr, const struct slot_copy *slot)
{
	if (vec__reserve_min(buf, cap, *nr + 1, sizeof(**buf), 256))
		return -ENOMEM;
	(*buf)[(*nr)++] = (struct snap_live){ slot->stack_id, slot->api,
					      slot->stats.outstanding_bytes,
					      slot->stats.outstanding_allocs };
	return 0;
}

int snapshot__live(struct probes *p, struct snap_live **buf, size_t *cap, size_t *nr)
{
	struct slot_copy slot;

	*nr = 0;
	for (size_t i = 0; i < p->site_slots; i++)
		if (read_slot(&p->site_table[i], &slot) && append_live(buf, cap, nr, &slot))
			return -ENOMEM;
	return 0;
}

void snapshot__free(struct snapshot *snap)
{
	if (!snap)
		return;
	for (size_t i = 0; i < snap->nr; i++)
		free(snap->sites[i].py);
	free(snap->sites);
	free(snap);
}
