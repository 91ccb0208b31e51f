/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one owner of the BPF skeleton's maps and of its .bss once it loaded
 * (as opentelemetry-ebpf-profiler's EbpfHandler owns its maps): the other
 * files of probe/ say what they want written or read, by name, and only
 * this module calls libbpf's map functions or touches skel->bss and
 * skel->maps (the layout check holds it to that). Opening, sizing and
 * loading the skeleton stay probes.c's (its load path).
 *
 * The reads a hot path makes (counters, the fill gauges the sweeper looks
 * at every tick, the live totals) are static inline here: one load each.
 */
#ifndef BPFMAPS_H
#define BPFMAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/types.h>
#include "memleak.h"
#include "memleak.skel.h"
#include "util/mapwin.h"
#include "util/ringread.h"

/* The tables the sweeper watches fill, and lets go of entries of (reclaim.c). */
enum bpfmaps_table {
	BPFMAPS_PY_CODES,	/* py_codes_sent */
	BPFMAPS_SITES,		/* sites: its slots not EMPTY */
	BPFMAPS_SITES_HELD,	/* sites: its slots that hold a site (memleak_fill.sites) */
	BPFMAPS__TABLES
};

/*
 * The BPF tables of live blocks and sites (bpf/tables.bpf.h): their fds and
 * sizes. snapshot.c, reclaim.c and the block walks read and write them
 * through windows (util/mapwin.h: probes_tables__allocs, __sites), a few
 * MiB mapped at a time: mapped whole they were 218 MiB of our resident set
 * from the start. Their memory is the kernel's all the same, charged to
 * our memory cgroup: -v says it (bytes).
 */
struct probes_tables {
	int allocs_fd, sites_fd;
	size_t buckets, slots;
	size_t slot_bytes;	/* a site slot's: MEMLEAK_SITE_SLOT_BYTES(shards) */
	unsigned shards;	/* its copies of the counts */
	/* The live slots copied out by BPF (site_scan.c): the program, its output array. */
	int scan_prog_fd;
	const struct site_scan_rec *scan_recs;	/* kept mapped; NULL: it could not be */
	size_t allocs_bytes, sites_bytes;	/* the kernel memory each holds */
	/*
	 * The groups of site slots that held a site, and of buckets that held
	 * a block, a bit each, as BPF sets them (memleak.h).
	 */
	const volatile __u64 *site_groups, *alloc_groups;
	unsigned group_shift, alloc_group_shift;
};

/* Their fds and sizes, from the loaded skeleton; the scan's output mapped. */
void bpfmaps__tables(const struct memleak_bpf *skel, struct probes_tables *t);
/* The scan's output unmapped (the probes' end). */
void bpfmaps__tables_end(struct probes_tables *t);

/* A window onto the live blocks' buckets, or the sites' slots, none mapped yet. */
static inline void probes_tables__allocs(const struct probes_tables *t, struct mapwin *w)
{
	mapwin__init(w, t->allocs_fd, sizeof(struct alloc_bucket), t->buckets, 0);
}

static inline void probes_tables__sites(const struct probes_tables *t, struct mapwin *w)
{
	mapwin__init(w, t->sites_fd, t->slot_bytes, t->slots, 0);
}

/* The kernel's memory for a map fd now (its fdinfo's memlock): 0 if unknown. */
uint64_t bpfmaps__memlock(int fd);
/*
 * Every map's kernel memory now, the CFI chunks' aside (they are no map of
 * the object); the n largest but the tables of live blocks and sites into
 * names and bytes, largest first (-v).
 */
uint64_t bpfmaps__memory(const struct memleak_bpf *skel, const char **names, uint64_t *bytes,
			 size_t n);

/* The readers of BPF's rings (libbpf's ring_buffer_sample_fn): NULL with errno set. */
struct ring_buffer;
typedef int (*bpfmaps_ring_fn)(void *ctx, void *data, size_t len);
/* The events. */
struct ring_buffer *bpfmaps__events_reader(const struct memleak_bpf *skel, bpfmaps_ring_fn on_event,
					   void *ctx);
/* The copies of Python code objects, apart (taken before a report reads the target), mapped once. */
int bpfmaps__codes_reader(const struct memleak_bpf *skel, struct ring_read *r);
/* The stacks BPF sends the first time it meets them (stack_ring.c), its data mapped once. */
int bpfmaps__stack_reader(const struct memleak_bpf *skel, struct ring_read *r);
uint64_t bpfmaps__stack_ring_bytes(const struct memleak_bpf *skel);
/* The stacks BPF remembers it sent, at most (known_stacks). */
uint64_t bpfmaps__known_room(const struct memleak_bpf *skel);
/* A drop user space finds (CNT_STACK_MERGED), counted with BPF's. */
void bpfmaps__count(struct memleak_bpf *skel, enum memleak_counter c, uint64_t n);
/* -t's ring of calls. */
struct ring_buffer *bpfmaps__trace_reader(const struct memleak_bpf *skel, bpfmaps_ring_fn fn,
					  void *ctx);
/* -t's ring sized, before the object loads. */
void bpfmaps__size_trace_ring(struct memleak_bpf *skel, uint32_t bytes);

/* A BPF counter (memleak.h), as BPF last wrote it. */
static inline uint64_t bpfmaps__counter(const struct memleak_bpf *skel, enum memleak_counter c)
{
	return __atomic_load_n(&skel->bss->counters[c], __ATOMIC_RELAXED);
}

/* Every counter at once, for a reader that keeps them (trace_ring.c). */
static inline const __u64 *bpfmaps__counters(const struct memleak_bpf *skel)
{
	return skel->bss->counters;
}

/* The live totals and peaks of each kind (bpf/peak.bpf.h), written by BPF. */
static inline struct memleak_live *bpfmaps__live(const struct memleak_bpf *skel)
{
	return skel->bss->live;
}

/* Sampling: the calls counted at the entries, a row per shard. */
static inline const struct memleak_calls *bpfmaps__entry_calls(const struct memleak_bpf *skel)
{
	return skel->bss->entry_calls;
}

/* A table's fill count, and the mark past which BPF asks for a sweep. */
static inline volatile __u64 *bpfmaps__fill_gauge(struct memleak_fill *f, enum bpfmaps_table t)
{
	volatile __u64 *v[BPFMAPS__TABLES] = { &f->py_codes, &f->site_slots, &f->sites };

	return v[t];
}

static inline volatile __u64 *bpfmaps__fill(const struct memleak_bpf *skel, enum bpfmaps_table t)
{
	return bpfmaps__fill_gauge(&skel->bss->fill, t);
}

static inline volatile __u64 *bpfmaps__fill_mark(const struct memleak_bpf *skel,
						 enum bpfmaps_table t)
{
	return bpfmaps__fill_gauge(&skel->bss->fill_mark, t);
}

/* Threads' stack caches and the known stacks forget the ids they hold (a sweep let go of stacks). */
static inline void bpfmaps__stacks_cleared(struct memleak_bpf *skel)
{
	__atomic_fetch_add(&skel->bss->stacks_cleared, 1, __ATOMIC_SEQ_CST);
}

/* A table's room: its map's entries. */
uint64_t bpfmaps__room(const struct memleak_bpf *skel, enum bpfmaps_table t);

/*
 * The maps only a Python target uses (py_code_freed, py_codes_sent: their
 * buckets, 20 MiB at the default room, were 60 ms of every start), made
 * when the first one comes, before its probes: 0 or -errno.
 */
int bpfmaps__python_maps(struct memleak_bpf *skel);

/* The set of code objects sent emptied, its fill count with it (none before a Python). */
void bpfmaps__forget_codes(struct memleak_bpf *skel);

/*
 * Every stack table, the fill counts and the live totals emptied, the
 * caches told, the counters but the stops' and the execs' zeroed (the
 * target is stopped): 0 or -errno.
 */
int bpfmaps__clear_tables(struct memleak_bpf *skel);
/*
 * The marks of the groups that held a site or a block, cleared before the
 * tables are emptied: a block stored meanwhile (a follower, a link kept
 * through the exec) marks its group again, and no walk passes over it.
 */
void bpfmaps__clear_groups(struct memleak_bpf *skel);
/* Sampling's calls counted, zeroed (a new image). */
void bpfmaps__clear_entry_calls(struct memleak_bpf *skel);

/* The target's settings BPF reads. */
void bpfmaps__set_target(struct memleak_bpf *skel, pid_t tgid, bool stop_on_exec);
void bpfmaps__set_internal(struct memleak_bpf *skel, const struct addr_range *ranges, size_t nr);
void bpfmaps__set_stop_on_dl(struct memleak_bpf *skel, bool on);
void bpfmaps__set_notify_dl(struct memleak_bpf *skel, bool on);
/* Where the target's _r_debug is (0: unknown), for its RT_ADD events not to stop it. */
void bpfmaps__set_dl_r_debug(struct memleak_bpf *skel, uint64_t addr);
void bpfmaps__set_follow_shell(struct memleak_bpf *skel, bool on);
pid_t bpfmaps__handoff(const struct memleak_bpf *skel);
/* The shell handed off to tgid: it is the target now. */
void bpfmaps__retarget(struct memleak_bpf *skel, pid_t tgid);
/* Returns seen before this time (CLOCK_MONOTONIC ns) are the attach's doing. */
void bpfmaps__set_settle_until(struct memleak_bpf *skel, uint64_t ns);
/* The word the clock thread keeps current. */
volatile uint64_t *bpfmaps__now_ns(struct memleak_bpf *skel);

/* The watchdog's view: the pids BPF may stop, the stops asked, the slots of held processes. */
struct watchdog_view;
void bpfmaps__stop_view(const struct memleak_bpf *skel, struct watchdog_view *v);

/* --follow: the table of followed processes. */
bool bpfmaps__proc_lookup(const struct memleak_bpf *skel, pid_t pid, struct memleak_proc *e);
/* A process newly followed: 0, or -errno (-EEXIST: followed already). */
int bpfmaps__proc_add(struct memleak_bpf *skel, pid_t pid, const struct memleak_proc *e);
void bpfmaps__proc_update(struct memleak_bpf *skel, pid_t pid, const struct memleak_proc *e);
size_t bpfmaps__proc_count(const struct memleak_bpf *skel);
/* A new tag for a followed process. */
uint32_t bpfmaps__next_proc_tag(struct memleak_bpf *skel);
/* The watchdog's slot of tag given up, if pid still holds it. */
void bpfmaps__release_held(struct memleak_bpf *skel, uint32_t tag, pid_t pid);
/* A followed process's own allocator ranges: set (0 or -errno), or gone. */
int bpfmaps__set_own_internal(struct memleak_bpf *skel, pid_t pid, const struct internal_set *set);
void bpfmaps__forget_own_internal(struct memleak_bpf *skel, pid_t pid);
/* A block taken out of the live totals by user space (an exec'd image's spilled block). */
void bpfmaps__live_sub(struct memleak_bpf *skel, int kind, uint64_t bytes);

/* Python: the interpreter's offsets for the target, and per exec'd image. */
void bpfmaps__set_python(struct memleak_bpf *skel, const struct py_offsets *py, bool stop_at_exit);
void bpfmaps__python_off(struct memleak_bpf *skel);
int bpfmaps__set_py_image(struct memleak_bpf *skel, uint32_t tag, const struct py_offsets *py);
void bpfmaps__forget_py_image(struct memleak_bpf *skel, uint32_t tag);
/* Line tables kept until freed (on), or read again (off: no probe tells of frees). */
void bpfmaps__set_py_code_cache(struct memleak_bpf *skel, bool on);

/* CFI rows: a new chunk of them mapped into *rows, its fd or -errno. */
int bpfmaps__cfi_chunk_new(struct unwind_row **rows, size_t bytes);
/* n chunks put into the outer map at keys, with one update: 0 or -errno. */
int bpfmaps__cfi_chunks_add(struct memleak_bpf *skel, const __u32 *keys, const int *fds, __u32 n);
/*
 * Unwind mappings of slot (0: the target's) into its half, then made the
 * live ones, of generation gen, with one store: 0 or -errno.
 */
int bpfmaps__publish_mappings(struct memleak_bpf *skel, uint32_t slot, uint32_t half, uint32_t gen,
			      const struct unwind_mapping *m, size_t nr);
/* image's processes walk by slot's mappings (0 or -errno), or by none. */
int bpfmaps__name_image_slot(struct memleak_bpf *skel, uint32_t image, uint32_t slot);
void bpfmaps__drop_image_slot(struct memleak_bpf *skel, uint32_t image, uint32_t slot);
/* Did BPF want the target's mapping i of half (it met a pc there)? */
bool bpfmaps__unwind_wanted(const struct memleak_bpf *skel, uint32_t half, size_t i);

#endif
