/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A copy of the BPF maps at one moment, as plain arrays. snapshot.c is the
 * only reader of map fds; everything downstream works on this struct.
 */
#ifndef SNAPSHOT_H
#define SNAPSHOT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>
#include "memleak.h"
#include "model/report.h"

struct stack_blob;

struct snap_site {
	uint64_t stack_id;	/* hash of the stack; MEMLEAK_NO_STACK when unknown */
	uint32_t api;		/* enum memleak_api */
	uint32_t proc;		/* --follow: its process's tag (0: the target) */
	struct site_stats stats;
	uint64_t oldest_ns;	/* timestamp of its oldest live block; 0: none */
	uint32_t nr_ips;	/* 0 for MEMLEAK_NO_STACK */
	uint32_t stack_flags;	/* STACK_TRUNCATED, STACK_CUT */
	/* Its native frames, as captured (stack_blob__ips); NULL when none. */
	struct stack_blob *stack;
	/* Its Python frames (stack_blob__py); NULL when none. */
	struct stack_blob *pystack;
	/*
	 * Of stats' totals, what it had when a report folded it (reclaim__fold),
	 * back with it: what the history took in of it before. 0: none.
	 */
	uint64_t folded_bytes, folded_allocs;
	/*
	 * 112 bytes, one per site of every reading (250,000 and more on a
	 * torch job): what only -a reads is in snapshot.blocks, beside it.
	 */
};

/* What the sweeps did, and whose fault the stack drops were (probe/reclaim.c). */
struct sweep_stats {
	uint64_t live;		/* stacks the live sites named at the last sweep */
	uint64_t live_max;	/* and at most, at a sweep */
	uint64_t room;		/* the stacks BPF remembers it sent */
	uint64_t stacks;	/* stacks let go of */
	uint64_t cpu_ns;	/* the sweeps' CPU time */
};

struct snapshot {
	struct snap_site *sites;
	size_t nr;
	uint64_t counters[CNT__COUNT];
	struct sweep_stats sweep;
	/*
	 * With older_ns, sites[].stats.outstanding_* count only the old blocks;
	 * these keep the figures for every live block, for the totals.
	 */
	bool older;
	uint64_t all_outstanding_bytes;
	uint64_t all_outstanding_allocs;
	uint64_t all_mmap_bytes, all_mmap_allocs;	/* of those, mmaps' */
	/* The live bytes and exact peaks BPF keeps, heap blocks and mmaps apart. */
	struct memleak_live live[KIND__COUNT];
	uint64_t time_ns;	/* CLOCK_MONOTONIC when read, the clock of the timestamps */
	/*
	 * For each slot of the BPF site table, 1 + the index in sites of the
	 * site it holds; 0 for none. Two slots may hold one site (two CPUs
	 * made it at once, or it came back while its old slot still held
	 * blocks): the site adds up both.
	 */
	uint32_t *site_of_slot;
	size_t site_of_slot_bytes;	/* of its pages, those written (-v) */
	/*
	 * Allocations (all freed) of sites reclaimed so long ago that their
	 * frames were forgotten (model/retired.h): in the totals, in no site.
	 */
	uint64_t forgotten_sites, forgotten_allocs, forgotten_bytes;
	/*
	 * Of those, the retired sites this reading folded without taking them
	 * in (snapshot_kept.h, struct snap_fold): none was read before, so all
	 * they allocated was since the last reading, from stacks new then.
	 */
	uint64_t unread_sites, unread_allocs;
	/*
	 * Their stacks were let go of once the reading had read its own
	 * (snapshot_kept.c), not left for the fold after the report.
	 */
	bool unread_let_go;
	bool ages;		/* sites[].oldest_ns were read */
	/*
	 * A reading carried over (snapshot_kept.c): the sites of the last one,
	 * at the same indexes, their figures brought up to date in place, new
	 * ones after them. reading numbers it; follows is the reading it
	 * carries over from (0: none, every site is new). changed lists the
	 * sites whose figures differ from that reading's, the new ones among
	 * them; fresh those whose stacks this reading read (new ones, and ones
	 * whose stack could not be read before). Without a reading of its own
	 * (0) every site counts as changed and fresh.
	 */
	uint64_t reading, follows;
	/*
	 * A reading carried over from one whose sites a fold or a trim of the
	 * retired store compacted: for each of follows' sites (nr_moved), its
	 * index now, SNAP_GONE if it went; the rest keep their order. What is
	 * kept by follows' index is moved by it. NULL: none moved.
	 */
	const uint32_t *moved;
	size_t nr_moved;
	const uint32_t *changed;
	size_t nr_changed;
	const uint32_t *fresh;
	size_t nr_fresh;
	atomic_bool *held;	/* a reading carried over: snapshot__free hands it back */
	struct snap_order *order;	/* a reading carried over: aggregate's order of it */
	/* A reading carried over: its index of sites by key (retired__site_key); else NULL. */
	const struct idmap *by_key;
	/* -a: each site's blocks, by its index in sites (snapshot_blocks__read); else NULL. */
	struct report_blocks *blocks;
};

/* snapshot.moved: the site went. */
#define SNAP_GONE UINT32_MAX

/*
 * The order the last analysis put a reading's sites in, kept with the
 * reading for the next (analyze/aggregate.c): only the changed sites move.
 */
struct snap_order {
	uint32_t *sites;	/* indexes into snapshot.sites */
	size_t nr, cap;
	uint64_t reading;	/* whose order it is; 0: none */
};

/*
 * Up to this many live blocks, every snapshot walks them for the ages (about
 * 0.07 s); beyond, only snapshot__ages and -o do (0.27 s a million).
 */
#define SNAPSHOT_AGES_MAX 250000

/*
 * Does the age of a site's oldest block (oldest_ns, 0: not known) still
 * hold, its figures at the reading that found it was and now? Only if it
 * had blocks then, has some now and freed none since (its frees, total
 * less outstanding, the same): its oldest block is live still, and the
 * blocks it made since are younger. Exact tracing only (sampled figures
 * are weights, not blocks); a reading that keeps every site's age this
 * way need not walk the live blocks (snapshot_kept.c).
 */
static inline bool snapshot__age_holds(const struct site_stats *was, const struct site_stats *now,
				       uint64_t oldest_ns)
{
	return oldest_ns && was->outstanding_allocs && now->outstanding_allocs &&
	       now->total_allocs >= was->total_allocs &&
	       was->total_allocs - was->outstanding_allocs ==
	       now->total_allocs - now->outstanding_allocs;
}

/* A site's outstanding figures alone: the cheap sample of snapshot__live. */
struct snap_live {
	uint64_t stack_id;
	uint32_t api;
	uint64_t bytes, allocs;
};

struct probes;
struct idmap;

/*
 * Copy the per-site figures, their stacks and the counters; walk the
 * live-allocation map for the age of each site's oldest block, when there
 * are at most SNAPSHOT_AGES_MAX or with older_ns. With older_ns, the
 * outstanding figures count only live blocks older than that; totals still
 * cover everything. 0 or -errno.
 */
int snapshot__collect(struct probes *p, uint64_t older_ns, struct snapshot **out);
/* The ages, if snapshot__collect left them out (a final report wants them). 0 or -errno. */
int snapshot__ages(struct probes *p, struct snapshot *snap);
/*
 * Only the outstanding figures of every site, into *buf (grown as needed,
 * *cap entries; the caller frees it): cheap enough to run every 100 ms.
 * The count in *nr. 0 or -errno.
 */
int snapshot__live(struct probes *p, struct snap_live **buf, size_t *cap, size_t *nr);
/*
 * -o: the outstanding figures moved to the totals (all_outstanding_*), each
 * site's set to 0, to be counted again from the old blocks by a walk.
 */
void snapshot__start_recount(struct snapshot *snap);
/*
 * -a: each site's live blocks into snap->blocks, the oldest first: at most
 * max a site (0: all), of those older than older_ns. 0 or -ENOMEM
 * (snapshot_blocks.c).
 */
int snapshot_blocks__read(struct probes *p, struct snapshot *snap, uint32_t max, uint64_t older_ns);
/* The blocks snapshot_blocks__read read, let go of (snapshot__free does it). */
void snapshot__free_blocks(struct snapshot *snap);
void snapshot__free(struct snapshot *snap);

/* A BPF map and its kernel memory (-v). */
struct snapshot_map {
	const char *name;	/* NULL: none */
	size_t bytes;
};
#define SNAPSHOT_MAPS_NAMED 3

/* What the tables' readings hold in our memory (-v: analyze/memuse.h). */
struct snapshot_memory {
	/*
	 * The BPF maps: kernel memory, charged to our memory cgroup, in our
	 * resident set only as far as it is mapped (a window of the tables at
	 * a time, the CFI chunk being filled and its spares).
	 */
	size_t allocs_bytes, buckets;	/* the live blocks: buckets of MEMLEAK_BUCKET_SLOTS */
	size_t sites_bytes, slots;	/* the sites */
	size_t slot_bytes, shards;	/* a slot's bytes, its copies of the counts */
	size_t cfi_bytes, cfi_chunks;	/* --unwind's rows, in chunks */
	size_t cfi_mapped;		/* of them, mapped */
	size_t maps_bytes;		/* every BPF map now (the kernel's memlock), these included */
	struct snapshot_map largest[SNAPSHOT_MAPS_NAMED];	/* of the other maps, the largest */
	size_t window;			/* what a window of the tables maps at most */
	uint64_t windows, window_bytes;	/* the windows mapped so far, and their bytes */
	size_t stacks, stack_bytes;	/* the stack cache: stacks read, and its index */
	size_t frame_nodes, frame_bytes;	/* every stack's frames, as shared prefixes */
	size_t retired, retired_bytes;	/* stacks reclaiming kept aside: their index */
	size_t folded;		/* sites folded into the totals (reclaim__fold): their figures, in retired_bytes */
	size_t snapshot_bytes;	/* snap's sites and slot index */
	/*
	 * Kept from report to report beside the snapshot (the caller's to
	 * fill): a carried reading's index and per-site state
	 * (snapshot_kept__bytes), the kept site frames (report_sites__carry_bytes).
	 */
	size_t carried_bytes;
	/* Of the carried reading's per-slot arrays, the pages not written yet: in malloc's figure, not resident. */
	size_t unwritten_bytes;
};
void snapshot__memory(struct probes *p, const struct snapshot *snap, struct snapshot_memory *out);

/* The distinct process tags of snap's sites, ascending, into *tags (grown; *cap). 0 or -ENOMEM. */
int snapshot__tags(const struct snapshot *snap, uint32_t **tags, size_t *cap, size_t *nr);

#endif
