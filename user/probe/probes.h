/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The BPF skeleton's lifecycle and the uprobes on the allocator. The files of
 * probe/ are the only ones that touch libbpf: probes.c (lifecycle),
 * probes_attach.c (uprobe links), probes_unwind.c (CFI tables),
 * probes_python.c (Python frames) and snapshot.c (reading the tables).
 */
#ifndef PROBES_H
#define PROBES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "allocator/allocator.h"

struct probes_config {
	pid_t tgid;
	uint64_t min_size, max_size;
	uint32_t max_allocs;
	uint32_t stack_storage_size;
	uint64_t stack_ring;	/* --new-stack-buffer: bytes, a power of two */
	uint64_t py_code_ring;	/* --py-code-buffer: bytes, a power of two (0: BPF's) */
	bool stop_on_exec;	/* -c: stop the target at each exec */
	bool unwind_tables;	/* --unwind dwarf/auto: walk stacks with CFI rows */
	bool bench_floor;	/* BPF programs return at once (opts.h) */
	bool probe_at_entry;	/* every probe at its function's entry (opts.h) */
	bool follow;		/* --follow: trace the processes the target starts */
	const char *symbols_prefix;	/* -S: the allocator's names carry it; NULL: none */
	bool trace;		/* -t: each allocation and free, a line each (trace_ring.h) */
	uint64_t trace_buffer;	/* its ring's bytes */
	int sample_mode;	/* enum memleak_sample_mode (bpf/sample.h); opts.h */
	uint64_t sample_value;	/* --sample's mean bytes, -s's N */
	uint64_t sample_seed;	/* 0: the kernel's random numbers */
	bool no_session;	/* sampling without uprobe sessions (opts.h: bench knob) */
	bool no_preempt_off;	/* the CPU's scratch guarded as before Linux 6.10 (opts.h: bench knob) */
	int verbose;
};

struct probes;

/*
 * Before anything is created: do the tables cfg asks for fit in the memory
 * available (mapmem.h)? 0, or -ENOMEM with one line in err naming the size
 * it would take and the largest that fits.
 */
int probes__check_memory(const struct probes_config *cfg, char *err, size_t errlen);
/* The most stacks whose tables fit beside cfg's live-block table (mapmem.h). */
uint32_t probes__fitting_stacks(const struct probes_config *cfg);
/* Open, size and load the BPF object; attach the exec tracepoint. */
int probes__load(const struct probes_config *cfg, struct probes **out);
/*
 * Make the attached uprobes exactly those of a: attach what is new (return
 * probes before entry probes, so that no call is seen entering without its
 * return), keep what is already there, detach what a no longer names.
 * Returns the number of functions probed, or -errno (the failing function
 * is printed).
 */
int probes_attach__allocator(struct probes *p, const struct allocator *a);
/*
 * Detach the target's allocator probes, all at once: BPF no longer traces
 * it (Python's shutdown), and every probe hit would still trap.
 */
void probes_attach__detach_allocator(struct probes *p);
/* Probe the dynamic linker's _dl_debug_state in the file at path (once). */
int probes_attach__dl(struct probes *p, const char *path);
void probes__set_internal(struct probes *p, const struct addr_range *ranges, size_t nr);
void probes__set_stop_on_dl(struct probes *p, bool on);
/* The target is a shell: the first child it forks takes over when it execs. */
void probes__set_follow_shell(struct probes *p, bool on);
/* That child, once forked (0 before). */
pid_t probes__handoff(const struct probes *p);
/* Trace tgid from now on (the shell's child); earlier links stay, ignored. */
void probes__retarget(struct probes *p, pid_t tgid);
/* -p: report dynamic-linker changes without stopping the target. */
void probes__set_notify_dl(struct probes *p, bool on);
/*
 * -c: the target's _r_debug (lookup_order.r_debug; 0: unknown), so that
 * the dynamic linker's RT_ADD events do not stop it, only RT_CONSISTENT
 * and RT_DELETE ones. An exec forgets it.
 */
void probes__set_dl_r_debug(struct probes *p, uint64_t addr);
/* Readable when BPF has an event for us (a process stopped, libraries changed). */
int probes__events_fd(const struct probes *p);
/* The events since the last call (and the code copies first: probes__take_codes). */
size_t probes__take_events(struct probes *p, struct memleak_event *evs, size_t max);
/*
 * Readable when BPF has copied Python code objects; the copies to
 * pytrace_ops.on_code's function, on the loop's thread (a report's job
 * takes those that came while it ran from the relay: python/pyrelay.h).
 */
int probes__codes_fd(const struct probes *p);
void probes__take_codes(struct probes *p);
/* A BPF counter (counters.c). */
uint64_t counters__read(const struct probes *p, enum memleak_counter c);
/* The live bytes and exact peaks BPF keeps (bpf/peak.bpf.h), heap blocks and mmaps apart. */
void peak__live(const struct probes *p, struct memleak_live out[KIND__COUNT]);
/*
 * Have BPF send EVENT_PEAK when the heap's peak next rises by a 64th over what it is now: the sites are sampled then (reports.c), so
 * that the stacks of a peak shorter than a tick are seen too.
 */
void peak__arm(struct probes *p);
struct watchdog_view;
struct watchdog;
/* Where the BPF side keeps the processes it may stop and the stops it sent. */
void probes__stop_view(const struct probes *p, struct watchdog_view *v);
/*
 * Every process traced has ended (the caller knows): the uprobe links go to
 * the watchdog, which closes them once we have exited, since each close
 * waits for a grace period (0.1 to 0.15 s) and an exit for the closes it
 * makes. Closed here if the watchdog cannot take them.
 */
void probes__hand_links(struct probes *p, struct watchdog *wd);
/*
 * Wake the thread that sweeps (reclaim.c): when a BPF table is a quarter full it
 * reclaims what sites with no block left hold there, keeping their figures
 * and stacks aside; no figure of any report changes. It also looks every
 * 10 ms by itself; BPF's EVENT_RECLAIM calls this.
 */
void reclaim__kick(struct probes *p);
/*
 * One sweep, due or not (reclaim__kick's waits for a table's mark), begun
 * after this call and waited for, at most wait_ms: a report's picks to
 * fold that still had their slot (run/report_fold.c) fold only once
 * retired. At once when the thread does not run.
 */
void reclaim__sweep_wait(struct probes *p, long wait_ms);
/*
 * Fold the retired sites of snap (sites[], nr of them: its indexes) that
 * its report took in and that no later report needs by themselves: their
 * figures go to the totals' forgotten ones, their stacks and their index
 * in the retired store go (model/retired.h), and the carried reading
 * starts anew at the next report, without them. Exact runs only (the
 * retired store keeps BPF's counts, which are weights under sampling).
 * Their keys (retired__site_key) into keys (room for nr): how many went;
 * none when fewer than min would.
 */
struct snapshot;
size_t reclaim__fold(struct probes *p, const struct snapshot *snap, const uint32_t *sites,
		     size_t nr, size_t min, uint64_t *keys);
/* What the sweeps did, and whose fault the stack drops were (reclaim.c). */
struct sweep_stats;
void reclaim__sweep_stats(struct probes *p, struct sweep_stats *out);
struct processes;
/*
 * --follow (follow.c): the forks and ends BPF told of, in order, none
 * dropped. Each new child (stopped at its fork) gets the target's uprobe
 * links, filtered by its pid, joins ps, and is resumed; a child that ends
 * has its links closed, on a thread of their own; one that execs is held
 * until its new image is probed (a new tag in ps, its files in im).
 */
struct images;
void follow_events__handle(struct probes *p, struct processes *ps, struct images *im,
			   int verbose);
/*
 * A followed process, stopped by BPF at its dynamic linker's event
 * (follow_exec.c). One of an exec'd image: probe its allocator once its
 * libraries are all mapped (its files into im), and resume it. Once probed,
 * or a fork of the target: its maps at the event into *libs (the caller's,
 * for *image: the image's tag, or the fork's own; a library loaded or about
 * to go), and pid is left stopped for the caller to open their files and
 * resume it; *libs NULL: resumed. False when pid is not one.
 */
bool follow_exec__stopped(struct probes *p, struct processes *ps, struct images *im,
			    pid_t pid, uint32_t *image, struct maps **libs);
/*
 * --follow: fn is told of each exec'd image once probed (image, pid: a
 * process of it, held until fn returns, maps: its mappings then), and when
 * its last process is gone (maps NULL).
 */
void follow_exec__on_image(struct probes *p,
		      void (*fn)(void *ctx, uint32_t image, pid_t pid, const struct maps *maps),
		      void *ctx);
/*
 * -p: pid's descendants running now, followed from now on (not stopped: what
 * they allocated before is unknown, as for pid). How many, or -errno.
 */
int follow__running(struct probes *p, struct processes *ps, pid_t pid);
/* Followed processes still running (or forked and not yet taken in). */
size_t follow__count(const struct probes *p);
/* -v: how many were followed, the longest hold at a fork, what is left of their links. */
void follow__say(struct probes *p, struct processes *ps);
/* Forget every tracked block, site and stack: the target exec'd. */
int probes__clear(struct probes *p);
/* Can this kernel walk the CFI rows (bpf_loop)? For unwind__choose. */
bool probes_unwind__can_walk_tables(void);
struct unwind_ops;
/* The CFI tables' operations, for unwind__new (unwind/unwind.h); ctx is p. */
void probes_unwind__ops(struct probes *p, struct unwind_ops *ops);
struct pytrace_ops;
/*
 * Python frames' operations, for pytrace__set_ops (python/pytrace.h); ctx
 * is p. Code objects BPF copies reach pytrace when they are taken
 * (probes__take_codes).
 */
void probes_python__ops(struct probes *p, struct pytrace_ops *ops);
/*
 * Sampling: the heap calls counted exactly at their entry, the bytes they
 * asked for, and how many were sampled. All 0 in exact mode.
 */
void probes_sample__calls(const struct probes *p, uint64_t *calls, uint64_t *bytes,
			  uint64_t *sampled);
struct sample_weight;
/* What a block of api and size added to its site (bpf/sample.h: block_weight's twin). */
void probes_sample__block_weight(const struct probes *p, uint32_t api, uint64_t size,
			  struct sample_weight *w);
/* -t: print the lines left in its ring, before the final report. */
void probes__trace_flush(struct probes *p);
void probes__free(struct probes *p);

#endif
