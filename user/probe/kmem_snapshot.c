// SPDX-License-Identifier: GPL-2.0
/*
 * -k: the kernel tables read into a snapshot (probe/snapshot.h), so that
 * every report, file and verdict is built as for a process. The sites are
 * a hash map of (stack, API) -> counts; the live blocks, walked for the
 * ages and for -o, a hash map read in batches; the stacks, read once each.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "clock.h"
#include "kmem_internal.h"
#include "kmem_maps.h"
#include "model/retired.h"
#include "model/stackcache.h"
#include "util/vec.h"

static uint64_t less(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

/* The stack of id, read from the map the first time: a blob the snapshot holds once more. */
static struct stack_blob *stack_for(struct kmem *k, uint64_t id, struct stack_trace *buf)
{
	struct stack_copy copy = { 0 };
	struct stack_blob *b;
	uint32_t at;

	if (idmap__get(&k->stack_of, id, &at))
		return stack_blob__hold(k->blobs[at]);
	if (kmem_maps__stack_lookup(k->skel, id, buf))
		return NULL;
	copy.ips = (uint64_t *)buf->ips;
	copy.nr_ips = buf->nr < MEMLEAK_MAX_STACK_DEPTH ? buf->nr : MEMLEAK_MAX_STACK_DEPTH;
	copy.flags = buf->flags;
	b = stack_blob__new(id, &copy);
	if (!b || vec__reserve(&k->blobs, &k->cap_blobs, k->nr_blobs + 1, sizeof(*k->blobs)) ||
	    idmap__put(&k->stack_of, id, (uint32_t)k->nr_blobs)) {
		stack_blob__put(b);
		return NULL;
	}
	k->blobs[k->nr_blobs++] = b;
	return stack_blob__hold(b);
}

static void set_stack(struct kmem *k, struct snap_site *s, struct stack_trace *buf)
{
	if (s->stack_id == MEMLEAK_NO_STACK)
		return;
	s->stack = stack_for(k, s->stack_id, buf);
	if (!s->stack)
		return;	/* a site without frames: its stack is unknown */
	s->nr_ips = s->stack->nr_ips;
	s->stack_flags = s->stack->flags;
}

static int add_site(struct kmem *k, struct snapshot *snap, size_t *cap, struct idmap *of_key,
		    const struct kmem_site_key *key, const struct site_counts *c,
		    struct stack_trace *buf)
{
	struct snap_site *s;

	if (vec__reserve_min(&snap->sites, cap, snap->nr + 1, sizeof(*s), 256) ||
	    idmap__put(of_key, retired__site_key(key->stack_id, key->api), (uint32_t)snap->nr))
		return -ENOMEM;
	s = &snap->sites[snap->nr++];
	memset(s, 0, sizeof(*s));
	s->stack_id = key->stack_id;
	s->api = key->api;
	/* The frees were added after the allocations they free: never more. */
	s->stats.total_bytes = c->total_bytes;
	s->stats.total_allocs = c->total_allocs;
	s->stats.outstanding_bytes = less(c->total_bytes, c->freed_bytes);
	s->stats.outstanding_allocs = less(c->total_allocs, c->freed_allocs);
	set_stack(k, s, buf);
	return 0;
}

struct site_reading {
	struct kmem *k;
	struct snapshot *snap;
	size_t cap;
	struct idmap *of_key;
	struct stack_trace *buf;
};

static int read_site(void *ctx, const struct kmem_site_key *key, const struct site_counts *c)
{
	struct site_reading *r = ctx;

	return add_site(r->k, r->snap, &r->cap, r->of_key, key, c, r->buf);
}

static int read_sites(struct kmem *k, struct snapshot *snap, struct idmap *of_key)
{
	struct site_reading r = { k, snap, 0, of_key, malloc(sizeof(*r.buf)) };
	int err = r.buf ? kmem_maps__each_site(k->skel, read_site, &r) : -ENOMEM;

	free(r.buf);
	return err;
}

static void account(struct snapshot *snap, const struct idmap *of_key,
		    const struct kmem_block *b, uint64_t older_ns)
{
	struct snap_site *s;
	uint32_t at;

	if (!idmap__get(of_key, retired__site_key(b->stack_id, b->api), &at))
		return;	/* a block stored after its site was read: the next reading's */
	s = &snap->sites[at];
	if (!s->oldest_ns || b->timestamp_ns < s->oldest_ns)
		s->oldest_ns = b->timestamp_ns;
	if (older_ns && b->timestamp_ns <= snap->time_ns &&
	    snap->time_ns - b->timestamp_ns >= older_ns) {
		s->stats.outstanding_bytes += b->size;
		s->stats.outstanding_allocs++;
	}
}

/* Every live block, in batches: the ages and, with older_ns, the old blocks' figures. */
struct block_walk {
	struct snapshot *snap;
	const struct idmap *of_key;
	uint64_t older_ns;
};

static void account_batch(void *ctx, const struct kmem_block *b, __u32 n)
{
	struct block_walk *w = ctx;

	for (__u32 i = 0; i < n; i++)
		account(w->snap, w->of_key, &b[i], w->older_ns);
}

static int walk_blocks(struct kmem *k, struct snapshot *snap, const struct idmap *of_key,
		       uint64_t older_ns)
{
	struct block_walk w = { snap, of_key, older_ns };
	int err;

	if (older_ns)
		snapshot__start_recount(snap);
	err = kmem_maps__each_block(k->skel, account_batch, &w);
	snap->ages = !err;
	return err;
}

static void read_counters(struct kmem *k, struct snapshot *snap)
{
	for (int c = 0; c < CNT__COUNT; c++)
		snap->counters[c] = kmem_maps__counter(k->skel, c);
	snap->counters[CNT_KERNEL_MISSED] += kmem_stats__missed(k);
}

int kmem_snapshot__collect(struct kmem *k, uint64_t older_ns, bool ages, struct snapshot **out)
{
	struct snapshot *snap = calloc(1, sizeof(*snap));
	struct idmap of_key = { 0 };
	int err;

	if (!snap)
		return -ENOMEM;
	read_counters(k, snap);
	kmem_stats__live(k, snap->live);
	snap->time_ns = clock__now_ns();
	err = read_sites(k, snap, &of_key);
	if (!err && (ages || older_ns))
		err = walk_blocks(k, snap, &of_key, older_ns);
	idmap__free(&of_key);
	if (err) {
		snapshot__free(snap);
		return err;
	}
	*out = snap;
	return 0;
}

void kmem_snapshot__free_stacks(struct kmem *k)
{
	for (size_t i = 0; i < k->nr_blobs; i++)
		stack_blob__put(k->blobs[i]);
	free(k->blobs);
	idmap__free(&k->stack_of);
}
