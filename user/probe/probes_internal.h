/* SPDX-License-Identifier: GPL-2.0 */
/*
 * struct probes, and what the files of probe/ share: the only files
 * allowed to touch libbpf and the skeleton.
 */
#ifndef PROBES_INTERNAL_H
#define PROBES_INTERNAL_H

#include <pthread.h>
#include <stdint.h>
#include <stdbool.h>
#include <sys/types.h>
#include <linux/types.h>
#include "memleak.h"
#include "memleak.skel.h"
#include "bpfmaps.h"
#include "util/groupbits.h"

struct maps;
struct lookup_order;

struct allocator;
struct images;
struct processes;
struct attachment;
struct follow;
struct image_links;
struct clock_feed;
struct reclaim;
struct retired;
struct stackcache;
struct stack_ring;
struct ring_buffer;
struct idmap;

#define PROBES_MAX_EVENTS 64

/*
 * Multi-uprobe links (Linux 6.6): libbpf 1.1 predates them, so the link is
 * created with the bpf syscall directly (probes_attach.c).
 */
#define PROBES_UPROBE_MULTI 48		/* BPF_TRACE_UPROBE_MULTI */
#define PROBES_UPROBE_SESSION 57	/* BPF_TRACE_UPROBE_SESSION (Linux 6.13) */

/* The links on the dynamic linker's _dl_debug_state (probes_attach.c). */
struct probes_dl {
	int fd;			/* the link */
	pid_t pid;
	dev_t dev;
	ino_t ino;
	int file;		/* --follow: its file (O_PATH) and offset, for children */
	__u64 offset;
};

/*
 * A Python target's links on _exit and Py_FinalizeEx (probes_python.c),
 * and on code_dealloc (py_code_freed, py_lines: bpf/python.bpf.h).
 */
struct probes_py_exit {
	int fds[2];
	int files[2];		/* --follow: their files (O_PATH) and offsets, for children */
	__u64 offsets[2];
	int dealloc_fd;
};

/* -c --reach: the link on _exit (probes_reach.c). */
struct probes_exit_stop {
	int fd;
	pid_t pid;
	uint64_t offset;
	char *path;
};

/* What Python's side gave (probes_python.c), and whether a Python target was seen. */
struct probes_py {
	bool used;		/* a Python target was seen: stack ids may be pairs */
	struct ring_read codes;	/* BPF's copies of code objects, for code_fn */
	void (*code_fn)(void *ctx, const struct py_code *c);	/* pytrace_ops.on_code */
	void *code_ctx;
	/* pytrace_ops.on_exec: follow_exec.c hands it each exec'd image. */
	void (*exec_fn)(void *arg, pid_t pid, uint32_t tag, const struct maps *maps,
			const struct lookup_order *lo);
	void *exec_ctx;
};

/* Chunks made ahead, in the outer map after those in use, mapped (probes_unwind.c). */
#define PROBES_CFI_SPARES 4
#define PROBES_CFI_CHUNK_BYTES ((size_t)MEMLEAK_CFI_CHUNK_ROWS * sizeof(struct unwind_row))
struct probes_cfi_spares {
	pthread_t thread;
	bool started;
	int err;		/* the thread's: none made */
	uint32_t first;		/* the outer map's key of the first */
	uint32_t nr, next;	/* made; the next one to use */
	uint64_t bytes;		/* their kernel memory */
	struct unwind_row *rows[PROBES_CFI_SPARES];
};

/*
 * CFI rows (probes_unwind.c): chunks created, rows used, the chunk being
 * filled (mmap'ed); per slot of mappings (0: the target's; --follow: an
 * exec'd image's, whose tag holds it), the live half and generation.
 */
struct probes_cfi {
	uint32_t chunks;
	uint32_t rows;
	struct unwind_row *fill;
	struct probes_cfi_spares spares;
	uint32_t half[MEMLEAK_UNWIND_SLOTS];
	uint32_t gen[MEMLEAK_UNWIND_SLOTS];
	uint32_t slot_tag[MEMLEAK_UNWIND_SLOTS];
	uint32_t slot_next;	/* where the search for a free slot starts */
	uint64_t chunk_bytes;
};

/* The uprobe links of the target's allocator (probes_attach.c). */
struct probes_links {
	struct attachment *v;
	size_t nr, cap;
	bool at_entry;		/* probes_config's probe_at_entry */
};

/* BPF's events, read from its ring and queued for probes__take_events (probes.c). */
struct probes_events {
	struct ring_buffer *rb;
	struct memleak_event buf[PROBES_MAX_EVENTS];	/* read, not yet taken */
	size_t nr;
};

/* --follow (follow.c, follow_exec.c, image_links.c). */
struct probes_follow {
	bool on;		/* --follow: links are kept as recipes, made again per child */
	const char *symbols_prefix;	/* -S: an exec'd image's allocator carries it too */
	struct follow *children;	/* the children's links, closed on a thread (follow.c) */
	struct image_links *images;	/* exec'd images' links, for their forks */
	/* follow_exec__on_image's: each exec'd image's maps when probed, NULL when it is gone. */
	void (*image_fn)(void *ctx, uint32_t image, pid_t pid, const struct maps *maps);
	void *image_ctx;
};

/* --sample (probes_sample.c). */
struct probes_sampling {
	int mode;		/* probes_config's: site counts of blocks in weight units */
	/*
	 * The allocating functions are session programs (malloc's lane
	 * api_malloc_session, the others' api_session), with no return link.
	 */
	bool session;
};

/*
 * Reclaiming (reclaim.c): what it let go of, read back by snapshot.c, the
 * sweep's state, and the locks a sweep shares with a reading.
 */
struct probes;
struct snapshot_kept;

struct probes_reclaim {
	struct retired *retired;
	struct reclaim *sweep;
	/*
	 * Held while sites are retired, while they are read (snapshot.c) and
	 * while the tables are cleared: the sweeps run on a thread of their own.
	 */
	pthread_mutex_t tables_lock;
	pthread_mutex_t retired_lock;	/* the retired store; taken after tables_lock */
	/*
	 * The stacks the last reading found (snapshot.c), whose blobs a sweep
	 * shares with the retired store: both under stacks_lock.
	 */
	struct stackcache *stacks;
	pthread_mutex_t stacks_lock;	/* taken before retired_lock */
	uint64_t resets;	/* the tables cleared (reclaim__reset), under retired_lock */
	struct snapshot_kept *kept;	/* the sites reports carry over (snapshot_kept.c) */
	void (*kept_free)(struct probes *p);	/* and what frees it, called by reclaim__free */
};

/* -t (trace_ring.c). */
struct probes_trace {
	uint64_t bytes;			/* the trace ring's size; 0: -t is off */
	struct trace_ring *ring;	/* its reader */
};

struct probes {
	struct memleak_bpf *skel;	/* its maps and .bss: through bpfmaps.h only */
	pid_t tgid;
	int verbose;		/* > 0: say where each entry probe goes */
	struct probes_links links;
	struct probes_dl dl;
	struct probes_events events;
	struct probes_py_exit py_exit;
	struct probes_exit_stop exit_stop;
	struct probes_py py;
	struct probes_cfi cfi;
	struct probes_tables tables;
	/*
	 * A uprobe link was made since the tables were last emptied: BPF may
	 * have written them. Until then clearing them skips the memset of
	 * their 220 MiB (the kernel created them zeroed): at -c's first exec,
	 * 15 ms of a start-up's CPU and every page of them touched for nothing.
	 * Whatever else attaches a program that writes them must set it too.
	 */
	bool tables_written;
	struct clock_feed *clock;	/* keeps now_ns, the allocations' timestamps */
	struct probes_sampling sample;
	struct probes_reclaim rc;
	struct probes_follow follow;
	struct probes_trace trace;
	struct stack_ring *stack_ring;	/* the native stacks BPF sent (stack_ring.c) */
};

/*
 * The sweeper's nice value (reclaim.c), and a reading's while it holds the
 * locks a sweep takes (snapshot.c): ahead of the target in the scheduler's
 * eyes. A target churning new stacks fills the room while the sweep waits
 * for a CPU, or for a reading that waits for one (on a loaded 2-CPU VM,
 * sweeps of 20 ms of CPU took 150 to 570 ms, and the room ran full). Both
 * run a few ms at a time. Without CAP_SYS_NICE the nice value stays:
 * slower, never wrong.
 */
#define PROBES_SWEEP_NICE (-10)

/* The retired store and the sweep's state (reclaim.c). 0 or -ENOMEM. */
int reclaim__new(struct probes *p);
/* Forget what was kept aside (the tables were cleared): 0 or -ENOMEM. */
int reclaim__reset(struct probes *p);
void reclaim__free(struct probes *p);
/* The thread that sweeps (reclaim.c): 0 or -errno; stopping it waits for it. */
int reclaim__start_thread(struct probes *p);
void reclaim__stop_thread(struct probes *p);
/*
 * For retired__fold_end (a retired_held_fn): the ids of going that snap's
 * sites hold (but those folded[i]; folded NULL: none is), into held.
 * Under retired_lock. 0 or -ENOMEM.
 */
struct snapshot;
struct retired;
struct reclaim_held {
	const struct snapshot *snap;
	const bool *folded;
};
int reclaim__held(void *ctx, const struct idmap *going, struct idmap *held);

/*
 * The native stacks, Python stacks and pairs BPF sends through its stack
 * ring (stack_ring.c): the thread that reads them, once the object loaded
 * (0 or -errno, said), and its end, which lets go of them all.
 */
int stack_ring__start(struct probes *p);
void stack_ring__stop(struct probes *p);
/* What waits in the ring, read now: before a reading looks up its stacks. */
void stack_ring__drain(struct probes *p);
/* The frames of native (Python) stack id, held for the caller, or NULL. */
struct stack_blob *stack_ring__native(struct probes *p, uint64_t id);
struct stack_blob *stack_ring__python(struct probes *p, uint64_t id);
/* What pair id stands for, if kept. */
bool stack_ring__pair(struct probes *p, uint64_t id, struct stack_pair *out);
/*
 * The pairs, Python and native stacks no id of named names handed to the
 * retired store (the caller holds stacks_lock and retired_lock): how
 * many. The stacks of a pair named are named too (added to named).
 */
size_t stack_ring__let_go(struct probes *p, struct idmap *named);
/* Every stack let go of (the tables were cleared). */
void stack_ring__clear(struct probes *p);
/* Native stacks kept; Python stacks and pairs in *python and *pairs. */
size_t stack_ring__held(struct probes *p, size_t *python, size_t *pairs);

/* A slot's counts summed over its shards, frees read first (site_slot.c). */
void site_slot__counts(const struct probes_tables *t, const struct site_slot *slot,
		       struct site_counts *sum);
/* Does the slot hold a site whose stack and API are written? */
bool site_slot__live(const struct site_slot *slot);
/*
 * Has slot i's group held a site since the tables were emptied (memleak.h)?
 * A walk of the table passes over the others (all their slots are EMPTY)
 * without mapping them; and the first slot at or after i that may hold one
 * (t->slots: none).
 */
static inline bool site_slot__used(const struct probes_tables *t, size_t i)
{
	return groupbits__marked(t->site_groups, t->group_shift, i);
}

static inline size_t site_slot__next_used(const struct probes_tables *t, size_t i)
{
	return groupbits__next(t->site_groups, t->group_shift, t->slots, i);
}

/* The first bucket of live blocks at or after b whose group held a block (t->buckets: none). */
static inline size_t alloc_bucket__next_used(const struct probes_tables *t, size_t b)
{
	return groupbits__next(t->alloc_groups, t->alloc_group_shift, t->buckets, b);
}

/*
 * Who each slot of the site table is, for a walk of the blocks, which meets
 * slots by index in no order (a window per block would map the table for
 * each): one pass of a window, 16 bytes a slot (a twentieth of the table).
 */
struct site_brief {
	__u64 stack_id;
	__u32 api;
	__u32 live;		/* site_slot__live */
};
/* p->tables.slots of them into *out (the caller frees it): 0 or -errno. */
int site_slot__briefs(struct probes *p, struct site_brief **out);
struct probes_config;
/* The sampling tunables into the BPF object, before it loads (probes_sample.c). */
void probes_sample__set(struct probes *p, const struct probes_config *cfg);
/* The link's attach type for prog_fd: a session's, or a multi-uprobe's. */
__u32 probes_sample__attach_type(const struct probes *p, int prog_fd);

/* -t (trace_ring.c). */
/* Before the BPF object loads: -t on or off, and its ring's size. */
void trace_ring__configure(struct probes *p, const struct probes_config *cfg);
/* Once it loaded: the printing thread, with -t. 0 or -errno (said). */
int trace_ring__start(struct probes *p);
/*
 * Print what is left in the ring and stop the thread; the lines lost, if
 * any, said on stderr. Before the final report, so that it comes last; again
 * (a no-op) when the probes are freed.
 */
void trace_ring__stop(struct probes *p);

/*
 * Each block of the live-block table whose record is written (a slot with
 * the busy bit is an allocation still returning: passed over), with its
 * bucket and slot for a caller that takes it out; fn's non-zero return
 * ends the walk and is returned (snapshot.c).
 */
typedef int (*block_fn)(void *arg, struct alloc_bucket *bucket, size_t b, int i, uint64_t addr,
			const struct alloc_info *info);
int snapshot__each_block(struct probes *p, block_fn fn, void *arg);

/* What a reading takes of one slot of the site table (snapshot.c). */
struct slot_copy {
	__u64 stack_id;
	__u32 api;
	struct site_stats stats;
};
struct snapshot;
struct snap_site;
/* The slot's site and its figures, once BPF has written who it is; false: none. */
bool snapshot__read_slot(const struct probes *p, const struct site_slot *slot,
			 struct slot_copy *out);
/* The same from a slot BPF copied out (site_scan.h). */
void snapshot__scanned_slot(const struct probes *p, const struct site_scan_rec *r,
			    struct slot_copy *out);
/* fn for each slot that holds a site (snapshot__read_slot), in slot order; its error stops. */
int snapshot__each_slot(const struct probes *p,
			int (*fn)(void *arg, size_t i, const struct slot_copy *slot), void *arg);
/* Blocks from BPF's counts (under sampling, weights). */
__u64 snapshot__blocks_of(const struct probes *p, __u64 count);
void snapshot__add_stats(struct site_stats *to, const struct site_stats *from);
/* The site's stack, held by the site, under stacks_lock: the cache's or read. */
void snapshot__read_stack(struct probes *p, struct snap_site *s);
/* The ages walk (and -o's figures), when few blocks are live or with older_ns. 0 or -errno. */
int snapshot__walk_blocks(struct probes *p, struct snapshot *snap, uint64_t older_ns);

/* What one link was made of, to make it again for another process (recipe.c). */
struct recipe {
	__u64 *offsets, *cookies;
	__u32 cnt;
};

/* A copy of a link's probe points into r (freed by its owner, even on error): 0 or -ENOMEM. */
int recipe__keep(struct recipe *r, const __u64 *offsets, const __u64 *cookies, __u32 cnt);

/* One link an exec'd image's process was given (image_links.c), for its forks. */
struct image_link {
	int prog_fd;
	int file_fd;		/* O_PATH: the link names it as /proc/self/fd/N */
	struct recipe r;
	bool ret;
};

/*
 * --follow: prog linked again at r's points, for pid only, in the file held
 * open (O_PATH) at file_fd, appended to fds[*n]; r empty: nothing. 0 or
 * -errno.
 */
int probes_attach__link_again(struct probes *p, pid_t pid, int prog_fd, int file_fd,
		       const struct recipe *r, bool ret, int *fds, size_t *n);

/* Is the knob (probes.c says which) set, and not to "0"? */
/*
 * A multi-uprobe link of prog_fd on cnt offsets of the file at path, in the
 * traced process only (ret: on their returns). Its fd, or -errno.
 */
int probes_attach__link_uprobes(struct probes *p, int prog_fd, const char *path, const __u64 *offsets,
			 const __u64 *cookies, __u32 cnt, bool ret);
/* The same, in process pid (a followed child). */
int probes_attach__link_uprobes_pid(struct probes *p, pid_t pid, int prog_fd, const char *path,
			     const __u64 *offsets, const __u64 *cookies, __u32 cnt, bool ret);
/* Room for the allocator's links of one child (probes_attach__link_child). */
size_t probes_attach__child_links_max(const struct probes *p);
/*
 * --follow: the allocator's links of the target made again for pid, into
 * fds (room for probes_attach__child_links_max), their number in *n: 0 or -errno
 * (the links made are in fds all the same).
 */
int probes_attach__link_child(struct probes *p, pid_t pid, int *fds, size_t *n);
/* Room for the links of allocator a in one process (probes_attach__link_allocator_pid). */
size_t probes_attach__allocator_links_max(const struct allocator *a);
/*
 * --follow, an exec'd process: allocator a's links for pid into fds (room
 * for probes_attach__allocator_links_max), adding to *n: 0 or -errno (the links
 * made are in fds all the same).
 */
int probes_attach__link_allocator_pid(struct probes *p, const struct allocator *a, pid_t pid, int *fds,
			       size_t *n);
/* A link of the dynamic linker's _dl_debug_state at path, in pid only: its fd, or -errno. */
int probes_attach__link_dl_pid(struct probes *p, const char *path, pid_t pid);
/* The target's dynamic linker's link, for pid (a fork of it), added to fds[*n]. 0 or -errno. */
int probes_attach__link_dl_child(struct probes *p, pid_t pid, int *fds, size_t *n);
/* --follow's state (follow.c): 0 or -errno; the end closes every child's links. */
int follow__new(struct probes *p);
void follow__free(struct probes *p);
/* A fork or a followed process gone (EVENT_FORK, EVENT_GONE): kept for follow__take. */
void follow__queue(struct probes *p, const struct memleak_event *ev);
/* The forks and ends queued (follow__queue), up to max, into evs: how many. */
size_t follow__take(struct probes *p, struct memleak_event *evs, size_t max);
/* EVENT_FORK: the child stopped, probed, named and resumed. */
void follow__on_fork(struct probes *p, struct processes *ps, struct images *im, int verbose,
		     const struct memleak_event *ev);
/* pid ended: its links closed (in the background). */
void follow__let_go(struct probes *p, pid_t pid);
/* pid exec'd: close its links now, and wait (follow.c). */
void follow__close_now(struct probes *p, pid_t pid);
/* Links of pid's new image, closed at its end: 0, or -ENOMEM (then closed already). */
int follow__add_links(struct probes *p, pid_t pid, const int *fds, size_t n);
/* EVENT_FOLLOW_EXEC: probe the new image of a followed process, stopped (follow_exec.c). */
void follow_exec__on_exec(struct probes *p, struct processes *ps, struct images *im,
			  int verbose, const struct memleak_event *ev);
/*
 * pid, of tag, ended or exec'd again: its own allocator ranges gone from
 * BPF, it from the processes of image (an exec'd one's tag; 0: the
 * target's, then its own unwind tables, if it loaded libraries, with it).
 */
void follow_exec__forget(struct probes *p, pid_t pid, uint32_t tag, uint32_t image);
/* --follow: the exec'd images' links (image_links.c): 0 or -ENOMEM. */
int image_links__new(struct probes *p);
void image_links__free(struct probes *p);
/* One more process of image tag (its exec, or a fork): 0 or -ENOMEM. */
int image_links__hold(struct probes *p, uint32_t tag);
/* One fewer: with the last, its links' files and its interpreter go. */
void image_links__release(struct probes *p, uint32_t tag);
/* The links made from now on are image tag's (0: none's, the end of its probing). */
void image_links__record(struct probes *p, uint32_t tag);
/* A link made for a process other than the target (probes_attach__link_uprobes_pid). */
void image_links__made(struct probes *p, int prog_fd, const char *path, const __u64 *offsets,
		       const __u64 *cookies, __u32 cnt, bool ret);
/* Room for image tag's links in one process. */
size_t image_links__max(const struct probes *p, uint32_t tag);
/* Image tag's links, in the order they were made (returns before entries), *nr of them. */
const struct image_link *image_links__of(const struct probes *p, uint32_t tag, size_t *nr);
/* Unmap the chunk of CFI rows being filled, and the spares (probes__free). */
void probes_unwind__release(struct probes *p);
/* Make the first chunks of CFI rows in the background, after the load. */
void probes_unwind__prefill(struct probes *p);
/* Close every link at once (probes__free). */
void probes_attach__detach_all(struct probes *p);
/* Room for every link's fd, and every link's fd moved into fds (room for that many): how many. */
size_t probes_attach__links_max(const struct probes *p);
size_t probes_attach__take_all(struct probes *p, int *fds);

/* The kernel memory of every map of obj at its current size (util/mapmem.h); -k's too. */
uint64_t probes__maps_cost(const struct bpf_object *obj);

#endif
