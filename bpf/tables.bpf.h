/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The two tables every allocation and free touches, for memleak.bpf.c, which
 * includes this once: the live blocks by address and the sites by (stack,
 * API). Both are BPF arrays, whose lookups the verifier turns into plain
 * address arithmetic, with our own hashing on top: a BPF hash map costs a
 * helper call, a bucket lock and a free-list operation per update or delete,
 * which was a third of what tracing added to a malloc/free pair. User space
 * reads both through mmap, a window at a time (user/util/mapwin.h).
 */
#ifndef TABLES_BPF_H
#define TABLES_BPF_H

/* A 64-bit mix (splitmix64's finalizer): cheap and well spread. */
static __always_inline __u64 mix(__u64 h, __u64 v)
{
	h ^= v;
	h *= 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 31;
	return h;
}

/* Table sizes (powers of two), set by user space before loading. */
const volatile __u32 alloc_bucket_shift = 64 - 18;	/* 64 - log2(buckets) */
const volatile __u32 alloc_bucket_mask = (1 << 18) - 1;
const volatile __u32 site_mask = (1 << 16) - 1;
const volatile __u32 site_shard_mask = MEMLEAK_SITE_SHARDS - 1;	/* a site slot's shards - 1 */
const volatile __u32 site_group_shift = 13;	/* at most MEMLEAK_SITE_GROUP_WORDS * 64 groups */
const volatile __u32 alloc_group_shift = 6;	/* at most MEMLEAK_ALLOC_GROUP_WORDS * 64 groups */

/* The groups of site slots that held a site, and of buckets that held a block (memleak.h). */
__u64 site_groups[MEMLEAK_SITE_GROUP_WORDS];
__u64 alloc_groups[MEMLEAK_ALLOC_GROUP_WORDS];

/* Is group g's bit in words (nr_words a power of two) set? */
static __always_inline bool group_marked(__u64 *words, __u32 nr_words, __u32 g)
{
	return *(volatile __u64 *)&words[(g >> 6) & (nr_words - 1)] & (1ULL << (g & 63));
}

/* Group g's bit set: a load, and a locked or the first time. */
static __always_inline void group_mark(__u64 *words, __u32 nr_words, __u32 g)
{
	if (!group_marked(words, nr_words, g))
		__sync_fetch_and_or(&words[(g >> 6) & (nr_words - 1)], 1ULL << (g & 63));
}

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct alloc_bucket);
	__uint(max_entries, 1 << 18);	/* 2 * --max-allocs / MEMLEAK_BUCKET_SLOTS */
} allocs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(key_size, sizeof(__u32));	/* sizes, no types: the entry's size is set at load */
	__uint(value_size, sizeof(struct site_slot));	/* MEMLEAK_SITE_SLOT_BYTES(shards), set at load */
	__uint(max_entries, 1 << 16);	/* 1.5 x --stack-storage-size */
} sites SEC(".maps");

/*
 * Fibonacci hashing: the top bits of the product spread aligned addresses.
 * The process's tag moves the home too: a thousand children of one parent
 * allocate at the same addresses (0 for the target: as without --follow).
 */
static __always_inline __u32 alloc_home(__u64 addr, __u32 proc)
{
	return ((addr ^ ((__u64)proc << 47)) * 0x9e3779b97f4a7c15ULL) >> alloc_bucket_shift;
}

static __always_inline struct alloc_bucket *bucket_at(__u32 idx)
{
	idx &= alloc_bucket_mask;
	return bpf_map_lookup_elem(&allocs, &idx);
}

/* The slot of process proc's block at addr in bucket b, or -1. */
static __always_inline __s64 bucket_slot(const struct alloc_bucket *b, __u64 addr, __u32 proc)
{
	for (__u32 i = 0; i < MEMLEAK_BUCKET_SLOTS; i++) {
		if (b->addr[i] == addr && b->info[i].proc == proc)
			return i;
	}
	return -1;
}

/*
 * Where process proc's block at addr is: its distance from home << 8 | its
 * slot, or -1. A child and its parent may hold blocks at one address
 * (--follow: the child's copy of an inherited block): each its own.
 */
static __always_inline __s64 alloc_find(__u64 addr, __u32 proc)
{
	__u32 home = alloc_home(addr, proc);
	struct alloc_bucket *b;

	__s64 slot;

	for (__u32 d = 0; d < MEMLEAK_BUCKET_PROBES; d++) {
		b = bucket_at(home + d);
		if (!b)
			return -1;
		slot = bucket_slot(b, addr, proc);
		if (slot >= 0)
			return d << 8 | slot;
		if (!b->spill)
			return -1;
	}
	return -1;
}

/*
 * alloc_find as a global function, which the verifier checks once: its
 * callers then go on from one answer it does not know, not from each of
 * the 56 slots it could have found. Inlined, forget's and alloc_insert's
 * callers were 110,000 of the 180,000 instructions it checked at every
 * start. A call costs about 20 ns more per free() with this machine's
 * return thunks, though (docs/PERFORMANCE.md): forget and alloc_insert
 * look in the home bucket themselves first, and call only past it.
 */
__noinline __s64 alloc_locate(__u64 addr, __u32 proc)
{
	return alloc_find(addr, proc);
}

#define ALLOC_FAR (-2)	/* alloc_claim_near: ask alloc_claim */

/*
 * Always 0, in .bss, which the programs may write: the verifier cannot know
 * its value. alloc_claim_near's answer is xor'ed with it, so that its
 * caller goes on from one answer the verifier does not know, not from each
 * of 7 slots.
 */
__u64 verifier_zero;

/* The buckets before dist, counting (or no longer) a block stored past them. */
static __always_inline void spill_add(__u32 home, __u32 dist, __s32 delta)
{
	struct alloc_bucket *b;

	for (__u32 d = 0; d < MEMLEAK_BUCKET_PROBES; d++) {
		if (d >= dist)
			break;
		b = bucket_at(home + d);
		if (b)
			__sync_fetch_and_add(&b->spill, delta);
	}
}

/* Take slot i of bucket b, holding addr, into *out: false if another thread took it first. */
static __always_inline bool bucket_take(struct alloc_bucket *b, __u32 i, __u64 addr,
					struct alloc_info *out)
{
	if (i >= MEMLEAK_BUCKET_SLOTS)
		return false;
	*out = b->info[i];
	/* Two threads freeing one block (a double free): only one wins. */
	return __sync_val_compare_and_swap(&b->addr[i], addr, 0) == addr;
}

/*
 * Remove a block's record into *out; false when it was not tracked. The
 * home bucket inline, where most blocks are: no call, and nothing after a
 * slot's take depends on which slot it was, so its paths join again.
 */
static __always_inline bool forget(__u64 addr, __u32 proc, struct alloc_info *out)
{
	__u32 home = alloc_home(addr, proc), slot, dist;
	struct alloc_bucket *b = bucket_at(home);
	__s64 at;

	if (!b)
		return false;
	at = bucket_slot(b, addr, proc);
	if (at >= 0)
		return bucket_take(b, at, addr, out);
	if (!b->spill)
		return false;
	at = alloc_locate(addr, proc);
	slot = at & 0xff;
	dist = (at >> 8) & (MEMLEAK_BUCKET_PROBES - 1);
	if (at < 0 || slot >= MEMLEAK_BUCKET_SLOTS || !(b = bucket_at(home + dist)))
		return false;
	if (!bucket_take(b, slot, addr, out))
		return false;
	spill_add(home, dist, -1);
	return true;
}

/*
 * A free slot for process proc's block at addr, claimed with the busy bit
 * set so that user space skips it until its record is written: its place
 * as alloc_find gives it, -EEXIST when the address is tracked already,
 * -ENOSPC when its buckets are full. A global function for the same
 * reason as alloc_locate.
 */
__noinline __s64 alloc_claim(__u64 addr, __u32 proc)
{
	__u32 home = alloc_home(addr, proc);
	struct alloc_bucket *b;

	if (alloc_find(addr, proc) >= 0)
		return -EEXIST;
	for (__u32 d = 0; d < MEMLEAK_BUCKET_PROBES; d++) {
		b = bucket_at(home + d);
		if (!b)
			return -ENOSPC;
		for (__u32 i = 0; i < MEMLEAK_BUCKET_SLOTS; i++) {
			if (!b->addr[i] &&
			    !__sync_val_compare_and_swap(&b->addr[i], 0, addr | MEMLEAK_ADDR_BUSY))
				return d << 8 | i;
		}
	}
	return -ENOSPC;
}

/*
 * alloc_claim in the home bucket alone, where most blocks go, without a
 * call: ALLOC_FAR when it is full, or spilled (the address may be tracked
 * past it).
 */
static __always_inline __s64 alloc_claim_near(__u64 addr, __u32 proc)
{
	struct alloc_bucket *b = bucket_at(alloc_home(addr, proc));
	__s64 at = ALLOC_FAR;

	if (!b)
		return ALLOC_FAR;
	if (bucket_slot(b, addr, proc) >= 0)
		at = -EEXIST;
	else if (!b->spill) {
		for (__u32 i = 0; i < MEMLEAK_BUCKET_SLOTS; i++) {
			if (!b->addr[i] &&
			    !__sync_val_compare_and_swap(&b->addr[i], 0, addr | MEMLEAK_ADDR_BUSY)) {
				at = i;
				break;
			}
		}
	}
	return at ^ *(volatile __u64 *)&verifier_zero;
}

/* Track a block: 0, or alloc_claim's error. */
static __always_inline int alloc_insert(__u64 addr, const struct alloc_info *info)
{
	__s64 at = alloc_claim_near(addr, info->proc);
	__u32 slot, dist, home = alloc_home(addr, info->proc);
	struct alloc_bucket *b;

	if (at == ALLOC_FAR)
		at = alloc_claim(addr, info->proc);
	if (at < 0)
		return at;
	slot = at & 0xff;
	dist = (at >> 8) & (MEMLEAK_BUCKET_PROBES - 1);
	b = bucket_at(home + dist);
	if (!b || slot >= MEMLEAK_BUCKET_SLOTS)
		return -ENOSPC;	/* never: alloc_claim found both */
	/* Before the record is whole: a walk that skips the group skips a block not yet there. */
	group_mark(alloc_groups, MEMLEAK_ALLOC_GROUP_WORDS,
		   ((home + dist) & alloc_bucket_mask) >> alloc_group_shift);
	b->info[slot] = *info;
	spill_add(home, dist, 1);
	*(volatile __u64 *)&b->addr[slot] = addr;
	return 0;
}

static __always_inline struct site_slot *site_at(__u32 idx)
{
	idx &= site_mask;
	return bpf_map_lookup_elem(&sites, &idx);
}

/* This CPU's copy of a site's counts. */
static __always_inline struct site_counts *site_shard(struct site_slot *s)
{
	return &s->counts[bpf_get_smp_processor_id() & site_shard_mask & (MEMLEAK_SITE_SHARDS - 1)];
}

/* Slot idx's group has held a site: marked before the site is ready. */
static __always_inline void site_group_mark(__u32 idx)
{
	group_mark(site_groups, MEMLEAK_SITE_GROUP_WORDS, (idx & site_mask) >> site_group_shift);
}

/* Take slot idx, found holding `expected`, for key: its index, or MEMLEAK_SITE_NONE. */
static __always_inline __u32 site_claim(__u32 idx, __u64 expected, __u64 key, __u64 stack_id,
					__u32 api)
{
	struct site_slot *s = site_at(idx);
	__u64 old;

	if (!s)
		return MEMLEAK_SITE_NONE;
	old = __sync_val_compare_and_swap(&s->key, expected, key);
	if (old == key)
		return idx & site_mask;	/* another CPU made the same site first */
	if (old != expected)
		return MEMLEAK_SITE_NONE;
	if (expected == MEMLEAK_SITE_EMPTY)
		site_group_mark(idx);
	s->stack_id = stack_id;
	s->api = api;
	*(volatile __u32 *)&s->ready = 1;
	if (expected == MEMLEAK_SITE_EMPTY)
		fill_add(&fill.site_slots, &fill_mark.site_slots);
	fill_add(&fill.sites, &fill_mark.sites);
	return idx & site_mask;
}

struct site_probe {
	__u64 key, stack_id;
	__u32 api;
	__u32 home;
	__u32 reuse;		/* the first RETIRED slot passed, or MEMLEAK_SITE_NONE */
	__u32 idx;		/* the answer, or MEMLEAK_SITE_NONE */
};

/* One slot of the chain per bpf_loop round: the verifier checks one round. */
static long site_step(__u32 d, void *ctx)
{
	struct site_probe *sp = ctx;
	struct site_slot *s = site_at(sp->home + d);
	__u64 old;

	if (!s)
		return 1;
	old = *(volatile __u64 *)&s->key;
	if (old == sp->key) {
		sp->idx = (sp->home + d) & site_mask;
		return 1;
	}
	if (old == MEMLEAK_SITE_RETIRED && sp->reuse == MEMLEAK_SITE_NONE)
		sp->reuse = sp->home + d;
	if (old != MEMLEAK_SITE_EMPTY)
		return 0;
	/* The end of the chain: the key is not in the table. */
	if (sp->reuse != MEMLEAK_SITE_NONE)
		sp->idx = site_claim(sp->reuse, MEMLEAK_SITE_RETIRED, sp->key, sp->stack_id,
				     sp->api);
	if (sp->idx == MEMLEAK_SITE_NONE)
		sp->idx = site_claim(sp->home + d, MEMLEAK_SITE_EMPTY, sp->key, sp->stack_id,
				     sp->api);
	return sp->idx != MEMLEAK_SITE_NONE;
}

/*
 * The slot of key, made if new: past the RETIRED slots of reclaimed sites
 * up to the first empty one, which ends the chain; a new site takes the
 * first RETIRED slot on the way, else that empty one. Two CPUs making one
 * site at once may each take a slot: user space adds up a site's slots.
 */
static __always_inline __u32 site_find(__u64 key, __u64 stack_id, __u32 api)
{
	struct site_probe sp = { key, stack_id, api, key >> 40, MEMLEAK_SITE_NONE,
				 MEMLEAK_SITE_NONE };
	struct site_slot *home = site_at(sp.home);

	/* Most allocations find their site at home: no bpf_loop call for them. */
	if (home && *(volatile __u64 *)&home->key == key)
		return sp.home & site_mask;
	bpf_loop(MEMLEAK_SITE_PROBES, site_step, &sp, 0);
	if (sp.idx == MEMLEAK_SITE_NONE && sp.reuse != MEMLEAK_SITE_NONE)
		sp.idx = site_claim(sp.reuse, MEMLEAK_SITE_RETIRED, key, stack_id, api);
	return sp.idx;
}

/*
 * One block of weight w added to a site (sign 1) or taken back (-1). Exact
 * mode adds its size and 1; under sampling its weighted figures, and the
 * sample and its variance besides (bpf/sample.h).
 */
static __always_inline void site_count(struct site_slot *s, const struct sample_weight *w,
				       __s64 sign)
{
	struct site_counts *c = site_shard(s);

	__sync_fetch_and_add(&c->total_allocs, sign * (__s64)w->blocks);
	__sync_fetch_and_add(&c->total_bytes, sign * (__s64)w->bytes);
	if (sample_mode == SAMPLE_NONE)
		return;
	__sync_fetch_and_add(&c->total_samples, sign);
	__sync_fetch_and_add(&c->total_var, sign * (__s64)w->var);
}

/* The key of the site of (stack_id, api): never EMPTY, RETIRING nor RETIRED. */
static __always_inline __u64 site_key(__u64 stack_id, __u32 api)
{
	__u64 key = mix(mix(0x9e3779b97f4a7c15ULL, stack_id), api);

	return key == MEMLEAK_SITE_EMPTY || key >= MEMLEAK_SITE_RETIRING ? 1 : key;
}

/*
 * Start the cache misses an allocation's record is about to take, all at
 * once: its site's home slot (the key's line and this CPU's counts') and
 * its block's home bucket. Both tables are large (160 and 58 MiB at the
 * default sizes) and read at random: each line a miss, and each page one
 * of the TLB. Looked up one after the other, the misses add up; these
 * loads, whose values nothing uses, overlap them, and the look-ups that
 * follow find the lines on their way (docs/PERFORMANCE.md, "The tables'
 * misses, overlapped"). stack_id: the allocation's, returned.
 */
static __always_inline __u64 record_touch(__u64 stack_id, __u32 api, __u64 addr, __u32 proc)
{
	struct site_slot *s = site_at(site_key(stack_id, api) >> 40);
	struct alloc_bucket *b = bucket_at(alloc_home(addr, proc));

	if (s) {
		(void)*(volatile __u64 *)&s->key;
		(void)*(volatile __u64 *)&site_shard(s)->total_bytes;
	}
	if (b)
		(void)*(volatile __u64 *)&b->addr[0];
	return stack_id;
}

/*
 * The site of (stack_id, api), made if new, with one block of weight w
 * counted in it; its index in *idx. The count comes before a second look at
 * the slot's key: user space marks a slot RETIRING before it checks the
 * counts, so either it sees this allocation and gives the slot back, or
 * this program sees the mark and takes its count back (user/probe/reclaim.c).
 */
static __always_inline struct site_slot *site_enter(__u64 stack_id, __u32 api,
						    const struct sample_weight *w, __u32 *idx)
{
	__u64 key = site_key(stack_id, api);
	struct site_slot *s;

	for (int attempt = 0; attempt < 2; attempt++) {
		*idx = site_find(key, stack_id, api);
		s = site_at(*idx);
		if (*idx == MEMLEAK_SITE_NONE || !s)
			break;
		site_count(s, w, 1);
		if (*(volatile __u64 *)&s->key == key)
			return s;
		site_count(s, w, -1);
	}
	count(CNT_SITES_MAP_FULL);
	return NULL;
}

#endif

#include "site_scan.bpf.h"	/* the live slots copied out for a report */
