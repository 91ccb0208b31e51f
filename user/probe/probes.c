// SPDX-License-Identifier: GPL-2.0
/*
 * The BPF skeleton's lifecycle: open, size and load it, its tables checked
 * against the memory available, the events ring buffer, the settings BPF
 * reads (written through bpfmaps.c, the one owner of its maps and .bss),
 * and the end. The uprobe links are probes_attach.c's.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "clock.h"
#include "model/report.h"
#include "probes.h"
#include "mapfit.h"
#include "support.h"
#include "probes_internal.h"
#include "verifier_stats.h"
#include "target/watchdog.h"
#include "util/fdclose.h"
#include "util/mapmem.h"

/* For libbpf_print, which libbpf calls without a context. */
static int verbosity;

/* Ring buffer callback: queue an event for probes__take_events. */
static int on_event(void *ctx, void *data, size_t len)
{
	const struct memleak_event *ev = data;
	struct probes *p = ctx;

	if (len < sizeof(*ev))
		return 0;
	/* A table reached its mark: the sweeper's business, not the loop's. */
	if (ev->kind == EVENT_RECLAIM) {
		reclaim__kick(p);
		return 0;
	}
	/* --follow's, never dropped: a child is stopped until its fork is seen to. */
	if (ev->kind == EVENT_FORK || ev->kind == EVENT_GONE || ev->kind == EVENT_FOLLOW_EXEC) {
		follow__queue(p, ev);
		return 0;
	}
	if (p->events.nr < PROBES_MAX_EVENTS)
		p->events.buf[p->events.nr++] = *ev;
	return 0;
}

/*
 * Ring buffer callback: a copy of a Python code object, for whoever wants
 * it. BPF cuts a record after its table (py_code_reserve): whole here.
 */
static int on_py_code(void *ctx, void *data, size_t len)
{
	const size_t head = offsetof(struct py_code, table);
	struct probes *p = ctx;
	struct py_code c;

	if (len < head || len > sizeof(c) || !p->py.code_fn)
		return 0;
	memcpy(&c, data, len);
	if (c.table_len > len - head)
		return 0;
	p->py.code_fn(p->py.code_ctx, &c);
	return 0;
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list args)
{
	if (level == LIBBPF_DEBUG && verbosity < 3)
		return 0;
	if (verbosity < 2)
		return 0;
	return vfprintf(stderr, fmt, args);
}

/* The smallest power of two at least n, and at least min. */
static uint32_t pow2_at_least(uint64_t n, uint32_t min)
{
	uint32_t v = min;

	while (v < n && v < (1u << 31))
		v <<= 1;
	return v;
}

static uint32_t log2_of(uint32_t pow2)
{
	return (uint32_t)__builtin_ctz(pow2);
}

/*
 * A site slot's copies of its counts: one per possible CPU (BPF picks one
 * by CPU number), up to MEMLEAK_SITE_SHARDS, a power of two; all of them
 * when the CPUs cannot be counted.
 */
static uint32_t site_shards(void)
{
	int cpus = libbpf_num_possible_cpus();
	uint32_t n = 1;

	if (cpus <= 0)
		return MEMLEAK_SITE_SHARDS;
	while (n < MEMLEAK_SITE_SHARDS && (int)n < cpus)
		n *= 2;
	return n;
}

/*
 * The live-block table gets at least one and a half slots per block of
 * --max-allocs, so that at the limit its buckets stay about half full and a
 * block finds room within its probe distance; the site table one and a half
 * slots per stack and per failed-stack site, so that its probe chains stay
 * short (linear probing, no deletions).
 */
static void size_maps(struct memleak_bpf *skel, const struct probes_config *cfg)
{
	uint32_t buckets = pow2_at_least((3ull * cfg->max_allocs / 2 + MEMLEAK_BUCKET_SLOTS - 1) /
					 MEMLEAK_BUCKET_SLOTS, 64);
	uint32_t sites = pow2_at_least(3ull * (cfg->stack_storage_size + API__COUNT) / 2, 64);
	uint32_t known = pow2_at_least(cfg->stack_storage_size / MEMLEAK_KNOWN_WAYS, 64);
	uint32_t shards = site_shards();

	bpf_map__set_max_entries(skel->maps.allocs, buckets);
	skel->rodata->alloc_bucket_mask = buckets - 1;
	skel->rodata->alloc_bucket_shift = 64 - log2_of(buckets);
	bpf_map__set_max_entries(skel->maps.sites, sites);
	bpf_map__set_value_size(skel->maps.sites, MEMLEAK_SITE_SLOT_BYTES(shards));
	skel->rodata->site_shard_mask = shards - 1;
	skel->rodata->site_mask = sites - 1;
	skel->rodata->site_group_shift = 13;	/* 8,192 slots, 2.5 MiB, at least */
	while ((sites >> skel->rodata->site_group_shift) > MEMLEAK_SITE_GROUP_WORDS * 64)
		skel->rodata->site_group_shift++;
	skel->rodata->alloc_group_shift = 4;	/* 16 buckets, 3.6 KiB, at least */
	while ((buckets >> skel->rodata->alloc_group_shift) > MEMLEAK_ALLOC_GROUP_WORDS * 64)
		skel->rodata->alloc_group_shift++;
	/*
	 * The stacks BPF remembers it sent: --stack-storage-size of them, in
	 * sets of MEMLEAK_KNOWN_WAYS (16 bytes each); the ring they go
	 * through, whose reader BPF wakes when a quarter of it waits.
	 */
	bpf_map__set_max_entries(skel->maps.known_stacks, known);
	skel->rodata->known_mask = known - 1;
	if (cfg->stack_ring) {
		bpf_map__set_max_entries(skel->maps.stack_ring, (uint32_t)cfg->stack_ring);
		skel->rodata->stack_ring_wake = cfg->stack_ring / 4;
	}
	if (cfg->py_code_ring)
		bpf_map__set_max_entries(skel->maps.py_codes, (uint32_t)cfg->py_code_ring);
	/*
	 * Python targets (made when one comes, bpfmaps__python_maps): a code
	 * object sent per stack's frame at most; addresses of code objects
	 * freed, more of them than of stacks held (16 bytes each).
	 */
	skel->rodata->py_codes_sent_room = cfg->stack_storage_size;
	skel->rodata->py_code_freed_room = cfg->stack_storage_size > (1u << 29) ? (1u << 31)
									      : 4 * cfg->stack_storage_size;
	/* --follow: a slot of unwind mappings for each exec'd image alive (1 MiB). */
	if (cfg->follow)
		bpf_map__set_max_entries(skel->maps.unwind_mappings,
					 MEMLEAK_UNWIND_SLOTS * 2 * MEMLEAK_UNWIND_MAPPINGS);
}

uint64_t probes__maps_cost(const struct bpf_object *obj)
{
	unsigned ncpus = (unsigned)libbpf_num_possible_cpus();
	const struct bpf_map *map;
	uint64_t sum = 0;

	bpf_object__for_each_map(map, obj) {
		struct mapmem_map m = {
			.type = bpf_map__type(map),
			.key_size = bpf_map__key_size(map),
			.value_size = bpf_map__value_size(map),
			.max_entries = bpf_map__max_entries(map),
			.flags = bpf_map__map_flags(map),
		};

		sum += mapmem__cost(&m, ncpus);
	}
	return sum;
}

/* A Python map made later (bpfmaps__python_maps), as the kernel will charge it. */
static uint64_t python_map_cost(uint32_t key_size, uint32_t value_size, uint32_t room)
{
	return mapmem__cost(&(struct mapmem_map){ BPF_MAP_TYPE_HASH, key_size, value_size, room,
						  BPF_F_NO_PREALLOC },
			    (unsigned)libbpf_num_possible_cpus());
}

static uint64_t cost_of(void *skel, uint32_t max_allocs, uint32_t stacks)
{
	struct probes_config cfg = { .max_allocs = max_allocs, .stack_storage_size = stacks };
	struct memleak_bpf *s = skel;

	size_maps(skel, &cfg);
	/* The Python maps counted from the start, as when they were made with the others. */
	return probes__maps_cost(s->obj) +
	       python_map_cost(sizeof(__u64), sizeof(__u64), s->rodata->py_code_freed_room) +
	       python_map_cost(sizeof(struct py_code_key), sizeof(__u8), s->rodata->py_codes_sent_room);
}

uint32_t probes__fitting_stacks(const struct probes_config *cfg)
{
	struct memleak_bpf *skel = memleak_bpf__open();
	struct mapmem_budget b;
	uint32_t fit;

	if (!skel || mapmem__budget(&b)) {
		memleak_bpf__destroy(skel);
		return cfg->stack_storage_size;
	}
	fit = mapfit__largest(&(struct mapfit){ cost_of, skel, cfg->max_allocs, cfg->stack_storage_size },
			      false, mapmem__allowed(&b));
	memleak_bpf__destroy(skel);
	return fit;
}

int probes__check_memory(const struct probes_config *cfg, char *err, size_t errlen)
{
	struct memleak_bpf *skel = memleak_bpf__open();
	struct mapfit f = { cost_of, skel, cfg->max_allocs, cfg->stack_storage_size };
	int ret = skel ? mapfit__check(&f, "", err, errlen) : 0;

	memleak_bpf__destroy(skel);
	return ret;
}


static double seconds_since(clockid_t clock, const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(clock, &t);
	return (double)(t.tv_sec - t0->tv_sec) + (t.tv_nsec - t0->tv_nsec) / 1e9;
}

/*
 * -v: how long loading took, the kernel verifier's part of it, and what it
 * checked of each program (instructions processed, which its time
 * follows): most of a start-up's CPU (memleakbpf -c /bin/true,
 * docs/PERFORMANCE.md).
 */
static void say_load(const struct probes *p, const struct timespec *t0,
		     const struct timespec *cpu0, const struct verifier_stats *vs)
{
	struct bpf_program *prog;
	uint64_t usec = 0;
	size_t i = 0;

	for (size_t k = 0; k < vs->nr; k++)
		usec += verifier_stats__usec(vs, k);
	fprintf(stderr, "memleakbpf: BPF programs loaded in %.0f ms, %.0f ms of it on the CPU",
		seconds_since(CLOCK_MONOTONIC, t0) * 1e3,
		seconds_since(CLOCK_THREAD_CPUTIME_ID, cpu0) * 1e3);
	if (usec)
		fprintf(stderr, ": the kernel's verifier %.0f ms, the rest libbpf's (the kernel's BTF read, the maps made)",
			usec / 1e3);
	fprintf(stderr, "; instructions checked:");
	bpf_object__for_each_program(prog, p->skel->obj) {
		struct bpf_prog_info info = { 0 };
		__u32 len = sizeof(info);
		int fd = bpf_program__fd(prog);

		usec = verifier_stats__usec(vs, i++);
		if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len) || info.verified_insns <= 1000)
			continue;
		fprintf(stderr, " %s %u", bpf_program__name(prog), info.verified_insns);
		if (usec)
			fprintf(stderr, " (%.0f ms)", usec / 1e3);
	}
	fputc('\n', stderr);
	if (!p->skel->rodata->preempt_kfuncs)
		fprintf(stderr, "memleakbpf:   no bpf_preempt_disable (Linux 6.10): on a preemptible kernel, a stack capture that another thread's interrupts is counted (stacks_preempted) and left without its stack, not prevented\n");
}

int probes__load(const struct probes_config *cfg, struct probes **out)
{
	struct verifier_stats vs = { 0 };
	struct timespec t0, cpu0;
	struct probes *p = calloc(1, sizeof(*p));
	int err;

	if (!p)
		return -ENOMEM;
	verbosity = cfg->verbose;
	p->verbose = cfg->verbose;
	p->links.at_entry = cfg->probe_at_entry;
	libbpf_set_print(libbpf_print);
	p->tgid = cfg->tgid;
	pthread_mutex_init(&p->rc.tables_lock, NULL);
	pthread_mutex_init(&p->rc.retired_lock, NULL);
	pthread_mutex_init(&p->rc.stacks_lock, NULL);
	p->dl.fd = p->dl.file = -1;
	p->py_exit.fds[0] = p->py_exit.fds[1] = -1;
	p->py_exit.files[0] = p->py_exit.files[1] = -1;
	p->py_exit.dealloc_fd = -1;
	p->follow.on = cfg->follow;
	p->follow.symbols_prefix = cfg->symbols_prefix;
	p->exit_stop.fd = -1;
	p->skel = memleak_bpf__open();
	if (!p->skel) {
		err = -errno;
		fprintf(stderr, "memleakbpf: cannot open the BPF object: %s\n", strerror(-err));
		goto fail;
	}
	p->skel->rodata->min_size = cfg->min_size;
	p->skel->rodata->max_size = cfg->max_size;
	p->skel->rodata->page_size = (uint64_t)sysconf(_SC_PAGESIZE);
	p->skel->rodata->bench_floor = cfg->bench_floor;
	p->skel->rodata->py_walk = probes_unwind__can_walk_tables();	/* bpf_loop */
	p->skel->rodata->unwind_mode = cfg->unwind_tables ? UNWIND_MODE_TABLES : UNWIND_MODE_FP;
	p->skel->rodata->follow = cfg->follow;
	p->skel->rodata->nr_cpus = (__u32)libbpf_num_possible_cpus();	/* py_lines (bpf/python.bpf.h) */
	/* bpf_preempt_disable (bpf/scratch.bpf.h). */
	p->skel->rodata->preempt_kfuncs = !cfg->no_preempt_off && support__kernel_at_least(6, 10);
	probes_sample__set(p, cfg);
	trace_ring__configure(p, cfg);
	/* A followed child's stacks are pairs that carry its tag (bpf/follow.bpf.h). */
	p->py.used = cfg->follow;
	bpf_program__set_autoload(p->skel->progs.exit_follow, cfg->follow);
	size_maps(p->skel, cfg);
	bpf_program__set_expected_attach_type(p->skel->progs.api_enter, PROBES_UPROBE_MULTI);
	bpf_program__set_expected_attach_type(p->skel->progs.api_free, PROBES_UPROBE_MULTI);
	bpf_program__set_expected_attach_type(p->skel->progs.api_malloc, PROBES_UPROBE_MULTI);
	bpf_program__set_expected_attach_type(p->skel->progs.api_exit, PROBES_UPROBE_MULTI);
	bpf_program__set_expected_attach_type(p->skel->progs.dl_debug_state, PROBES_UPROBE_MULTI);
	bpf_program__set_expected_attach_type(p->skel->progs.py_exit, PROBES_UPROBE_MULTI);
	bpf_program__set_expected_attach_type(p->skel->progs.py_code_dealloc, PROBES_UPROBE_MULTI);
	bpf_program__set_expected_attach_type(p->skel->progs.exit_stop, PROBES_UPROBE_MULTI);
	/* -vv: the verifier's whole log if a program fails, which a log of its own would take. */
	if (p->verbose == 1)
		verifier_stats__ask(&vs, p->skel->obj);	/* none, without the memory */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu0);
	err = memleak_bpf__load(p->skel);
	if (err) {
		verifier_stats__free(&vs);
		fprintf(stderr, "memleakbpf: cannot load the BPF programs: %s (run with -vv for the verifier log)\n",
			strerror(-err));
		goto fail;
	}
	if (p->verbose)
		say_load(p, &t0, &cpu0, &vs);
	verifier_stats__free(&vs);
	if (cfg->unwind_tables)
		probes_unwind__prefill(p);	/* meanwhile: the tables mapped, the target started */
	bpfmaps__tables(p->skel, &p->tables);	/* read through windows: none mapped now */
	err = reclaim__new(p) ?: stack_ring__start(p) ?: reclaim__start_thread(p) ?:
	      follow__new(p) ?: trace_ring__start(p);
	if (err)
		goto fail;
	/* Under sampling BPF asks the kernel for the few timestamps it takes (memleak.bpf.c). */
	if (!cfg->sample_mode)	/* SAMPLE_NONE: exact */
		p->clock = clock__feed_start(bpfmaps__now_ns(p->skel));
	if (!cfg->sample_mode && !p->clock) {
		err = -errno;
		fprintf(stderr, "memleakbpf: cannot start the clock thread: %s\n", strerror(-err));
		goto fail;
	}
	bpfmaps__set_target(p->skel, cfg->tgid, cfg->stop_on_exec);
	peak__arm(p);
	p->events.rb = bpfmaps__events_reader(p->skel, on_event, p);
	err = bpfmaps__codes_reader(p->skel, &p->py.codes);
	p->skel->links.exec_stop = bpf_program__attach(p->skel->progs.exec_stop);
	p->skel->links.fork_follow = bpf_program__attach(p->skel->progs.fork_follow);
	if (cfg->follow)
		p->skel->links.exit_follow = bpf_program__attach(p->skel->progs.exit_follow);
	if (!p->events.rb || err || !p->skel->links.exec_stop || !p->skel->links.fork_follow ||
	    (cfg->follow && !p->skel->links.exit_follow)) {
		err = err ?: -errno;
		fprintf(stderr, "memleakbpf: cannot attach to the exec and fork tracepoints: %s\n",
			strerror(-err));
		goto fail;
	}
	*out = p;
	return 0;
fail:
	probes__free(p);
	return err;
}

void probes__set_internal(struct probes *p, const struct addr_range *ranges, size_t nr)
{
	bpfmaps__set_internal(p->skel, ranges, nr);
}

void probes__set_stop_on_dl(struct probes *p, bool on)
{
	bpfmaps__set_stop_on_dl(p->skel, on);
}

void probes__set_follow_shell(struct probes *p, bool on)
{
	bpfmaps__set_follow_shell(p->skel, on);
}

pid_t probes__handoff(const struct probes *p)
{
	return bpfmaps__handoff(p->skel);
}

void probes__retarget(struct probes *p, pid_t tgid)
{
	p->tgid = tgid;
	bpfmaps__retarget(p->skel, tgid);
}

void probes__set_notify_dl(struct probes *p, bool on)
{
	bpfmaps__set_notify_dl(p->skel, on);
}

void probes__set_dl_r_debug(struct probes *p, uint64_t addr)
{
	bpfmaps__set_dl_r_debug(p->skel, addr);
}

int probes__events_fd(const struct probes *p)
{
	return p ? ring_buffer__epoll_fd(p->events.rb) : -1;	/* -k: no events */
}

int probes__codes_fd(const struct probes *p)
{
	return p && p->py.codes.v.consumer ? p->py.codes.fd : -1;
}

void probes__take_codes(struct probes *p)
{
	if (p && p->py.codes.v.consumer)
		ringread__consume(&p->py.codes, on_py_code, p);
}

size_t probes__take_events(struct probes *p, struct memleak_event *evs, size_t max)
{
	size_t n;

	probes__take_codes(p);	/* before Python's exit reads the code objects left */
	ring_buffer__consume(p->events.rb);
	n = p->events.nr < max ? p->events.nr : max;
	memcpy(evs, p->events.buf, n * sizeof(*evs));
	p->events.nr = 0;
	return n;
}

void probes__stop_view(const struct probes *p, struct watchdog_view *v)
{
	bpfmaps__stop_view(p->skel, v);
}

void probes__hand_links(struct probes *p, struct watchdog *wd)
{
	if (!p)
		return;

	int fds[probes_attach__links_max(p)];
	size_t n = probes_attach__take_all(p, fds);
	int err = watchdog__take_links(wd, fds, n);

	if (err) {
		if (p->verbose)
			fprintf(stderr, "memleakbpf: the watchdog cannot take the links (%s): closed here\n",
				strerror(-err));
		fdclose__together(fds, n);
		return;
	}
	for (size_t i = 0; i < n; i++)
		close(fds[i]);	/* not the last reference: no wait */
	if (p->verbose)
		fprintf(stderr, "memleakbpf: %zu uprobe links handed to the watchdog, which closes them once we have exited (each close waits for a grace period)\n",
			n);
}

/* Every table emptied; the target is stopped, so BPF adds nothing meanwhile. */
static int clear_tables(struct probes *p)
{
	int err;

	bpfmaps__clear_groups(p->skel);
	if (p->tables_written) {
		struct mapwin a, s;

		probes_tables__allocs(&p->tables, &a);
		probes_tables__sites(&p->tables, &s);
		err = mapwin__zero(&a) ?: mapwin__zero(&s);
		if (err) {
			fprintf(stderr, "memleakbpf: cannot map the allocation tables to empty them: %s\n",
				strerror(-err));
			return err;
		}
	}
	/* Links kept through the exec (or a follower's) may write them again at once. */
	p->tables_written = p->links.nr || p->follow.on || p->dl.fd >= 0 ||
			    p->py_exit.fds[0] >= 0 || p->py_exit.fds[1] >= 0 || p->exit_stop.fd >= 0;
	err = bpfmaps__clear_tables(p->skel);
	peak__arm(p);
	if (!err)
		err = reclaim__reset(p);
	return err;
}

int probes__clear(struct probes *p)
{
	int err;

	pthread_mutex_lock(&p->rc.tables_lock);
	err = clear_tables(p);
	/* Sampling: the calls counted are the old image's too. */
	bpfmaps__clear_entry_calls(p->skel);
	pthread_mutex_unlock(&p->rc.tables_lock);
	return err;
}

void probes__trace_flush(struct probes *p)
{
	trace_ring__stop(p);
}

void probes__free(struct probes *p)
{
	if (!p)
		return;
	trace_ring__stop(p);
	probes_unwind__release(p);
	follow__free(p);
	probes_attach__detach_all(p);
	free(p->links.v);
	free(p->exit_stop.path);
	ring_buffer__free(p->events.rb);
	ringread__close(&p->py.codes);
	clock__feed_stop(p->clock);
	reclaim__stop_thread(p);
	stack_ring__stop(p);
	reclaim__free(p);
	pthread_mutex_destroy(&p->rc.tables_lock);
	pthread_mutex_destroy(&p->rc.retired_lock);
	pthread_mutex_destroy(&p->rc.stacks_lock);
	bpfmaps__tables_end(&p->tables);
	memleak_bpf__destroy(p->skel);
	free(p);
}
