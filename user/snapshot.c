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
#define LIVE_BATCH 1024

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

static void account(struct snapshot *snap, const struct alloc_info *a, uint64_t older_ns)
{
	struct snap_site *s = find_site(snap, a);

	if (!s)
		return;
	if (!s->oldest_ns || a->timestamp_ns < s->oldest_ns)
		s->oldest_ns = a->timestamp_ns;
	/* A block newer than the snapshot's clock is young, not 2^64 ns old. */
	if (older_ns && a->timestamp_ns <= snap->time_ns &&
	    snap->time_ns - a->timestamp_ns >= older_ns) {
		s->stats.outstanding_bytes += a->size;
		s->stats.outstanding_allocs++;
	}
}

/*
 * One walk of the live blocks: the age of each site's oldest, and with
 * -o/--older the figures of the old ones. Batched lookups keep the walk
 * consistent while BPF deletes.
 */
static int walk_allocs(struct probes *p, struct snapshot *snap, uint64_t older_ns)
{
	int fd = bpf_map__fd(p->skel->maps.allocs);
	uint64_t keys[BATCH], in = 0, out_batch;
	struct alloc_info vals[BATCH];
	bool first = true;
	int err = 0;

	qsort(snap->sites, snap->nr, sizeof(*snap->sites), site_cmp);
	if (older_ns)
		start_recount(snap);
	snap->ages = true;
	while (!err) {
		__u32 count = BATCH;

		err = bpf_map_lookup_batch(fd, first ? NULL : &in, &out_batch, keys, vals, &count, NULL);
		err = err ? -errno : 0;
		first = false;
		for (__u32 i = 0; i < count; i++)
			account(snap, &vals[i], older_ns);
		in = out_batch;
	}
	return err == -ENOENT ? 0 : err;
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

static int append_live(struct snap_live **buf, size_t *cap, size_t *nr, const struct site_key *k,
		       const struct site_stats *st)
{
	if (*nr == *cap) {
		size_t ncap = *cap ? *cap * 2 : 256;
		struct snap_live *b = realloc(*buf, ncap * sizeof(*b));

		if (!b)
			return -ENOMEM;
		*buf = b;
		*cap = ncap;
	}
	(*buf)[(*nr)++] = (struct snap_live){ k->stack_id, k->api, st->outstanding_bytes,
					      st->outstanding_allocs };
	return 0;
}

int snapshot__live(struct probes *p, struct snap_live **buf, size_t *cap, size_t *nr)
{
	int fd = bpf_map__fd(p->skel->maps.sites);
	struct site_key keys[LIVE_BATCH];
	struct site_stats vals[LIVE_BATCH];
	uint64_t in = 0, out_batch;
	bool first = true;
	int err = 0;

	*nr = 0;
	while (!err) {
		__u32 count = LIVE_BATCH;

		err = bpf_map_lookup_batch(fd, first ? NULL : &in, &out_batch, keys, vals, &count, NULL);
		err = err ? -errno : 0;
		first = false;
		for (__u32 i = 0; i < count && err != -ENOMEM; i++)
			if (append_live(buf, cap, nr, &keys[i], &vals[i]))
				err = -ENOMEM;
		in = out_batch;
	}
	return err == -ENOENT ? 0 : err;
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
