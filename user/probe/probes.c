// SPDX-License-Identifier: GPL-2.0
/* BPF skeleton lifecycle and uprobe attachment from the allocator's table. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "clock.h"
#include "util/elfsym.h"
#include "util/mapmem.h"
#include "allocator/placement.h"
#include "probes.h"
#include "probes_internal.h"
#include "model/report.h"
#include "target/watchdog.h"

/*
 * Multi-uprobe links (Linux 6.6): libbpf 1.1 predates them, so the link is
 * created with the bpf syscall directly. Layout of bpf_attr.link_create.
 */
#define ATTACH_UPROBE_MULTI 48		/* BPF_TRACE_UPROBE_MULTI */
#define UPROBE_MULTI_RETURN 1		/* BPF_F_UPROBE_MULTI_RETURN */

struct uprobe_multi_attr {
	__u32 prog_fd;
	__u32 target_fd;
	__u32 attach_type;
	__u32 flags;
	__u64 path;
	__u64 offsets;
	__u64 ref_ctr_offsets;
	__u64 cookies;
	__u32 cnt;
	__u32 multi_flags;
	__u32 pid;
	__u32 pad;
};

/*
 * Entry probes go to one of three programs: free's and malloc's, the
 * hottest, have their own (no attach cookie to fetch, no switch), the rest
 * share api_enter. One link each, made in this order.
 */
enum lane { LANE_FREE, LANE_OTHER, LANE_MALLOC, LANES };

/* The probes on one object in one process: an entry link per lane, one return link. */
struct attachment {
	pid_t pid;
	dev_t dev;
	ino_t ino;
	uint64_t signature;	/* of its (offset, api) set, to tell a change */
	int entry_fds[LANES];
	int exit_fd;
	bool wanted;
};

static int verbosity;

/*
 * Knobs for `make bench` and the placement tests, not for users:
 * MEMLEAKBPF_BENCH_FLOOR=1 makes the BPF programs return at once (the cost
 * of the probes alone); MEMLEAKBPF_PROBE_AT_ENTRY=1 keeps every entry-only
 * probe at its function's entry (see placement.h).
 */
static bool env_flag(const char *name)
{
	const char *v = getenv(name);

	return v && v[0] && strcmp(v, "0");
}

/* Ring buffer callback: queue an event for probes__take_events. */
static int on_event(void *ctx, void *data, size_t len)
{
	struct probes *p = ctx;

	if (len < sizeof(struct memleak_event) || p->nr_events == PROBES_MAX_EVENTS)
		return 0;
	memcpy(&p->events[p->nr_events++], data, sizeof(struct memleak_event));
	return 0;
}

/* Ring buffer callback: a copy of a Python code object, for whoever wants it. */
static int on_py_code(void *ctx, void *data, size_t len)
{
	struct probes *p = ctx;

	if (len >= sizeof(struct py_code) && p->py_code_fn)
		p->py_code_fn(p->py_code_ctx, data);
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

	bpf_map__set_max_entries(skel->maps.allocs, buckets);
	skel->rodata->alloc_bucket_mask = buckets - 1;
	skel->rodata->alloc_bucket_shift = 64 - log2_of(buckets);
	bpf_map__set_max_entries(skel->maps.sites, sites);
	skel->rodata->site_mask = sites - 1;
	bpf_map__set_max_entries(skel->maps.stack_traces, cfg->stack_storage_size);
	/* Python targets: one Python stack and one (native, Python) pair per site at most. */
	bpf_map__set_max_entries(skel->maps.py_stacks, cfg->stack_storage_size);
	bpf_map__set_max_entries(skel->maps.stack_pairs, cfg->stack_storage_size);
	bpf_map__set_max_entries(skel->maps.py_codes_sent, cfg->stack_storage_size);
}

/* The kernel memory of every map of skel at its current size. */
static uint64_t maps_cost(const struct memleak_bpf *skel)
{
	unsigned ncpus = (unsigned)libbpf_num_possible_cpus();
	const struct bpf_map *map;
	uint64_t sum = 0;

	bpf_object__for_each_map(map, skel->obj) {
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

static uint64_t cost_of(struct memleak_bpf *skel, uint32_t max_allocs, uint32_t stacks)
{
	struct probes_config cfg = { .max_allocs = max_allocs, .stack_storage_size = stacks };

	size_maps(skel, &cfg);
	return maps_cost(skel);
}

/* The largest value in [1, hi] for which fits() holds, or 0. */
static uint32_t largest_fitting(struct memleak_bpf *skel, const struct probes_config *cfg,
				bool allocs, uint64_t allowed)
{
	uint32_t lo = 0, hi = allocs ? cfg->max_allocs : cfg->stack_storage_size;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo + 1) / 2;
		uint64_t c = allocs ? cost_of(skel, mid, cfg->stack_storage_size) :
				      cost_of(skel, cfg->max_allocs, mid);

		if (c <= allowed)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

int probes__check_memory(const struct probes_config *cfg, char *err, size_t errlen)
{
	struct memleak_bpf *skel = memleak_bpf__open();
	struct mapmem_budget b;
	char need[32], have[32];
	uint64_t cost, allowed;
	bool allocs;
	uint32_t fit;

	if (!skel || mapmem__budget(&b)) {
		memleak_bpf__destroy(skel);
		return 0;	/* unknown: loading will tell */
	}
	allowed = mapmem__allowed(&b);
	cost = cost_of(skel, cfg->max_allocs, cfg->stack_storage_size);
	if (cost <= allowed) {
		memleak_bpf__destroy(skel);
		return 0;
	}
	/* Blame the table that grew: the live blocks' unless the stacks' alone do not fit. */
	allocs = cost_of(skel, 1, cfg->stack_storage_size) <= allowed;
	fit = largest_fitting(skel, cfg, allocs, allowed);
	memleak_bpf__destroy(skel);
	report__human_size(cost, need, sizeof(need));
	report__human_size(b.bytes, have, sizeof(have));
	snprintf(err, errlen, "%s %u needs %s of kernel memory for its tables, more than half of the %s available (%s): the largest that fits is %s %u",
		 allocs ? "--max-allocs" : "--stack-storage-size",
		 allocs ? cfg->max_allocs : cfg->stack_storage_size, need, have, b.source,
		 allocs ? "--max-allocs" : "--stack-storage-size", fit);
	return -ENOMEM;
}

/* A BPF_F_MMAPABLE array, mapped whole; NULL with errno set on failure. */
static void *map_table(struct bpf_map *map, size_t *len)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t bytes = (size_t)bpf_map__value_size(map) * bpf_map__max_entries(map);
	void *mem;

	*len = (bytes + (size_t)page - 1) & ~((size_t)page - 1);
	mem = mmap(NULL, *len, PROT_READ | PROT_WRITE, MAP_SHARED, bpf_map__fd(map), 0);
	return mem == MAP_FAILED ? NULL : mem;
}

static int map_tables(struct probes *p)
{
	p->alloc_table = map_table(p->skel->maps.allocs, &p->alloc_table_len);
	p->site_table = map_table(p->skel->maps.sites, &p->site_table_len);
	if (!p->alloc_table || !p->site_table) {
		int err = -errno;

		fprintf(stderr, "memleakbpf: cannot map the allocation tables: %s\n", strerror(-err));
		return err;
	}
	p->alloc_buckets = bpf_map__max_entries(p->skel->maps.allocs);
	p->site_slots = bpf_map__max_entries(p->skel->maps.sites);
	return 0;
}

static void unmap_tables(struct probes *p)
{
	if (p->alloc_table)
		munmap(p->alloc_table, p->alloc_table_len);
	if (p->site_table)
		munmap(p->site_table, p->site_table_len);
}

int probes__load(const struct probes_config *cfg, struct probes **out)
{
	struct probes *p = calloc(1, sizeof(*p));
	int err;

	if (!p)
		return -ENOMEM;
	verbosity = cfg->verbose;
	libbpf_set_print(libbpf_print);
	p->tgid = cfg->tgid;
	p->dl_fd = -1;
	p->py_exit_fds[0] = p->py_exit_fds[1] = -1;
	p->unwind_fill_fd = -1;
	p->skel = memleak_bpf__open();
	if (!p->skel) {
		err = -errno;
		fprintf(stderr, "memleakbpf: cannot open the BPF object: %s\n", strerror(-err));
		goto fail;
	}
	p->skel->rodata->min_size = cfg->min_size;
	p->skel->rodata->max_size = cfg->max_size;
	p->skel->rodata->page_size = (uint64_t)sysconf(_SC_PAGESIZE);
	p->skel->rodata->bench_floor = env_flag("MEMLEAKBPF_BENCH_FLOOR");
	p->skel->rodata->py_walk = probes__can_walk_tables();	/* bpf_loop */
	p->skel->rodata->unwind_mode = cfg->unwind_tables ? UNWIND_MODE_TABLES : UNWIND_MODE_FP;
	size_maps(p->skel, cfg);
	bpf_program__set_expected_attach_type(p->skel->progs.api_enter, ATTACH_UPROBE_MULTI);
	bpf_program__set_expected_attach_type(p->skel->progs.api_free, ATTACH_UPROBE_MULTI);
	bpf_program__set_expected_attach_type(p->skel->progs.api_malloc, ATTACH_UPROBE_MULTI);
	bpf_program__set_expected_attach_type(p->skel->progs.api_exit, ATTACH_UPROBE_MULTI);
	bpf_program__set_expected_attach_type(p->skel->progs.dl_debug_state, ATTACH_UPROBE_MULTI);
	bpf_program__set_expected_attach_type(p->skel->progs.py_exit, ATTACH_UPROBE_MULTI);
	err = memleak_bpf__load(p->skel);
	if (err) {
		fprintf(stderr, "memleakbpf: cannot load the BPF programs: %s (run with -vv for the verifier log)\n",
			strerror(-err));
		goto fail;
	}
	err = map_tables(p);
	if (err)
		goto fail;
	p->clock = clock_feed__start((volatile uint64_t *)&p->skel->bss->now_ns);
	if (!p->clock) {
		err = -errno;
		fprintf(stderr, "memleakbpf: cannot start the clock thread: %s\n", strerror(-err));
		goto fail;
	}
	p->skel->bss->targ_tgid = cfg->tgid;
	p->skel->bss->stop_on_exec = cfg->stop_on_exec;
	p->events_rb = ring_buffer__new(bpf_map__fd(p->skel->maps.events), on_event, p, NULL);
	/* Copies of Python code objects come in with the events, in the same consume. */
	if (p->events_rb &&
	    ring_buffer__add(p->events_rb, bpf_map__fd(p->skel->maps.py_codes), on_py_code, p)) {
		ring_buffer__free(p->events_rb);
		p->events_rb = NULL;
	}
	p->skel->links.exec_stop = bpf_program__attach(p->skel->progs.exec_stop);
	p->skel->links.fork_follow = bpf_program__attach(p->skel->progs.fork_follow);
	if (!p->events_rb || !p->skel->links.exec_stop || !p->skel->links.fork_follow) {
		err = -errno;
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

static int link_uprobes(struct probes *p, int prog_fd, const char *path, const __u64 *offsets,
			const __u64 *cookies, __u32 cnt, bool ret)
{
	struct uprobe_multi_attr attr = {
		.prog_fd = (__u32)prog_fd,
		.attach_type = ATTACH_UPROBE_MULTI,
		.path = (__u64)(unsigned long)path,
		.offsets = (__u64)(unsigned long)offsets,
		.cookies = (__u64)(unsigned long)cookies,
		.cnt = cnt,
		.multi_flags = ret ? UPROBE_MULTI_RETURN : 0,
		.pid = (__u32)p->tgid,
	};
	int fd = (int)syscall(__NR_bpf, BPF_LINK_CREATE, &attr, sizeof(attr));

	return fd < 0 ? -errno : fd;
}

/* Is offset the entry of another function probed in the same object? */
static bool probed_entry(const struct allocator *a, size_t obj, uint64_t offset)
{
	for (size_t i = 0; i < a->nr; i++)
		if (a->probes[i].object == obj && a->probes[i].offset == offset)
			return true;
	return false;
}

/*
 * Where the entry probe of ap goes: an entry-only function's may move to the
 * first instruction the kernel emulates (placement.h); the cookie carries the
 * API and, in its upper half, how far the stack pointer has moved by then.
 */
static void entry_point(const struct allocator *a, const struct alloc_probe *ap,
			__u64 *offset, __u64 *cookie)
{
	uint32_t keep = PLACEMENT_REG(PLACEMENT_RDI);
	struct placement pl = { .insn = "forced by MEMLEAKBPF_PROBE_AT_ENTRY" };

	*offset = ap->offset;
	*cookie = ap->api;
	if (ap->api < API__ALLOCATING)
		return;		/* its return probe needs the entry */
	if (ap->api == API_MUNMAP)
		keep |= PLACEMENT_REG(PLACEMENT_RSI);
	if (!env_flag("MEMLEAKBPF_PROBE_AT_ENTRY"))
		placement__decide(ap->open_path, ap->offset, keep, &pl);
	if (pl.skip && probed_entry(a, ap->object, ap->offset + pl.skip))
		pl = (struct placement){ .insn = "another function starts there" };
	if (verbosity)
		fprintf(stderr, "memleakbpf:   %s: probe at +%u (%s)\n", ap->symbol, pl.skip, pl.insn);
	*offset += pl.skip;
	*cookie |= (__u64)pl.sp_delta << 32;
}

/* Calls that entered before the last entry probe return within this much. */
#define ATTACH_SETTLE_NS 20000000ull

static void settle_after(struct probes *p, uint64_t ns)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);	/* bpf_ktime_get_ns()'s clock */
	p->skel->bss->settle_until_ns = (uint64_t)now.tv_sec * 1000000000ull +
					(uint64_t)now.tv_nsec + ns;
}

/* When attach_object places a function's entry probe: 0 first. */
static int attach_rank(__u32 api)
{
	if (api >= API__ALLOCATING)
		return 0;
	if (api == API_REALLOC || api == API_REALLOCARRAY || api == API_MREMAP)
		return 1;
	return 2;
}

static enum lane lane_of(__u32 api)
{
	return api == API_FREE ? LANE_FREE : api == API_MALLOC ? LANE_MALLOC : LANE_OTHER;
}

static int lane_prog(const struct probes *p, enum lane lane)
{
	const struct memleak_bpf *skel = p->skel;

	return bpf_program__fd(lane == LANE_FREE ? skel->progs.api_free :
			       lane == LANE_MALLOC ? skel->progs.api_malloc : skel->progs.api_enter);
}

/* Entry probes on every API function of one object, returns on the allocating ones. */
static int attach_object(struct probes *p, const struct allocator *a, size_t obj,
			 struct attachment *at)
{
	__u64 offsets[LANES][a->nr], cookies[LANES][a->nr], ret_offsets[a->nr], ret_cookies[a->nr];
	__u32 n[LANES] = { 0 }, nret = 0;
	const char *path = a->objects[obj].open_path;

	/*
	 * The kernel places a link's probes in array order, and the links
	 * come in lane order. Releasing functions first, then the resizing
	 * ones (which release the old block), then the rest: attaching to a
	 * running process, a block allocated before its allocator's probe is
	 * in place is merely unknown (its free counts as untracked), while a
	 * free or realloc missed after its allocation was seen would leave a
	 * block outstanding that is not.
	 */
	for (int rank = 0; rank < 3; rank++) {
		for (size_t i = 0; i < a->nr; i++) {
			const struct alloc_probe *ap = &a->probes[i];
			enum lane l = lane_of(ap->api);

			if (ap->object != obj || attach_rank(ap->api) != rank)
				continue;
			entry_point(a, ap, &offsets[l][n[l]], &cookies[l][n[l]]);
			n[l]++;
			if (ap->api < API__ALLOCATING) {
				ret_offsets[nret] = ap->offset;
				ret_cookies[nret++] = ap->api;
			}
		}
	}
	at->exit_fd = -1;
	for (int l = 0; l < LANES; l++)
		at->entry_fds[l] = -1;
	/*
	 * Returns first: a call seen entering must be seen returning. Until
	 * every entry probe is in place too (they come one function at a
	 * time), a return without its entry is the attach's doing.
	 */
	p->skel->bss->settle_until_ns = UINT64_MAX;
	if (nret) {
		at->exit_fd = link_uprobes(p, bpf_program__fd(p->skel->progs.api_exit), path,
					   ret_offsets, ret_cookies, nret, true);
		if (at->exit_fd < 0)
			return at->exit_fd;
	}
	for (int l = 0; l < LANES; l++) {
		if (!n[l])
			continue;
		at->entry_fds[l] = link_uprobes(p, lane_prog(p, l), path, offsets[l], cookies[l],
						n[l], false);
		if (at->entry_fds[l] < 0)
			break;
	}
	settle_after(p, ATTACH_SETTLE_NS);
	for (int l = 0; l < LANES; l++)
		if (at->entry_fds[l] < 0 && n[l])
			return at->entry_fds[l];
	return 0;
}

static uint64_t object_signature(const struct allocator *a, size_t obj)
{
	uint64_t h = 1469598103934665603ull;	/* FNV-1a over (offset, api) */

	for (size_t i = 0; i < a->nr; i++) {
		if (a->probes[i].object != obj)
			continue;
		h = (h ^ a->probes[i].offset) * 1099511628211ull;
		h = (h ^ a->probes[i].api) * 1099511628211ull;
	}
	return h;
}

static void *close_fd(void *arg)
{
	close((int)(long)arg);
	return NULL;
}

/*
 * Close link fds at once: releasing a uprobe link waits for an RCU
 * grace period (30 to 80 ms here), and waits that run side by side end
 * together. Falls back to closing in turn.
 */
static void close_links(const int *fds, size_t n)
{
	pthread_t threads[n ?: 1];
	bool started[n ?: 1];
	sigset_t all, old;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (size_t i = 0; i < n; i++)
		started[i] = !pthread_create(&threads[i], NULL, close_fd, (void *)(long)fds[i]);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	for (size_t i = 0; i < n; i++) {
		if (started[i])
			pthread_join(threads[i], NULL);
		else
			close(fds[i]);
	}
}

/* Move at's open link fds into fds (room for LANES + 1); how many. */
static size_t take_links(struct attachment *at, int *fds)
{
	size_t n = 0;

	for (int l = 0; l < LANES; l++) {
		if (at->entry_fds[l] >= 0)
			fds[n++] = at->entry_fds[l];
		at->entry_fds[l] = -1;
	}
	if (at->exit_fd >= 0)
		fds[n++] = at->exit_fd;
	at->exit_fd = -1;
	return n;
}

static void detach(struct attachment *at)
{
	int fds[LANES + 1];

	close_links(fds, take_links(at, fds));
}

static struct attachment *find_attachment(struct probes *p, const struct stat *st, uint64_t sig)
{
	for (size_t i = 0; i < p->nr_attached; i++) {
		struct attachment *at = &p->attached[i];

		if (at->pid == p->tgid && at->dev == st->st_dev && at->ino == st->st_ino &&
		    at->signature == sig)
			return at;
	}
	return NULL;
}

static int attach_new(struct probes *p, const struct allocator *a, size_t obj,
		      const struct stat *st, uint64_t sig)
{
	struct attachment *at, *arr;
	int err;

	arr = realloc(p->attached, (p->nr_attached + 1) * sizeof(*arr));
	if (!arr)
		return -ENOMEM;
	p->attached = arr;
	at = &arr[p->nr_attached];
	*at = (struct attachment){ .pid = p->tgid, .dev = st->st_dev, .ino = st->st_ino,
				   .signature = sig, .wanted = true };
	err = attach_object(p, a, obj, at);
	if (err) {
		fprintf(stderr, "memleakbpf: cannot attach uprobes to %s: %s%s\n",
			a->objects[obj].path, strerror(-err),
			err == -EINVAL ? " (multi-uprobe links need Linux 6.6 or later)" : "");
		detach(at);
		return err;
	}
	p->nr_attached++;
	return 0;
}

/* Detach what is no longer wanted, compacting the array. */
static void detach_unwanted(struct probes *p)
{
	size_t kept = 0;

	for (size_t i = 0; i < p->nr_attached; i++) {
		if (!p->attached[i].wanted) {
			detach(&p->attached[i]);
			continue;
		}
		p->attached[kept++] = p->attached[i];
	}
	p->nr_attached = kept;
}

int probes__attach_allocator(struct probes *p, const struct allocator *a)
{
	int err;

	/* Links of a process we handed over from stay until the end:
	 * detaching costs a grace period each, and BPF ignores that process. */
	for (size_t i = 0; i < p->nr_attached; i++)
		p->attached[i].wanted = p->attached[i].pid != p->tgid;
	for (size_t obj = 0; obj < a->nr_objects; obj++) {
		uint64_t sig = object_signature(a, obj);
		struct attachment *at;
		struct stat st;

		if (stat(a->objects[obj].open_path, &st)) {
			err = -errno;
			fprintf(stderr, "memleakbpf: cannot read %s: %s\n", a->objects[obj].path,
				strerror(errno));
			return err;
		}
		at = find_attachment(p, &st, sig);
		if (at) {
			at->wanted = true;
			continue;
		}
		err = attach_new(p, a, obj, &st, sig);
		if (err)
			return err;
	}
	detach_unwanted(p);
	return (int)a->nr;
}

int probes__attach_dl(struct probes *p, const char *path)
{
	struct elf_file *ef;
	uint64_t vaddr, offset;
	struct stat st;
	__u64 off, cookie = 0;
	int err;

	if (stat(path, &st))
		return -errno;
	if (p->dl_fd >= 0 && p->dl_pid == p->tgid && p->dl_dev == st.st_dev &&
	    p->dl_ino == st.st_ino)
		return 0;
	err = elf_file__open(path, &ef);
	if (!err)
		err = elf_file__find_func(ef, "_dl_debug_state", true, &vaddr, &offset);
	elf_file__close(ef);
	if (!err) {
		off = offset;
		err = link_uprobes(p, bpf_program__fd(p->skel->progs.dl_debug_state), path, &off,
				   &cookie, 1, false);
	}
	if (err < 0) {
		fprintf(stderr, "memleakbpf: cannot probe _dl_debug_state in the dynamic linker %s: %s\n",
			path, strerror(-err));
		return err;
	}
	if (p->dl_fd >= 0)
		close(p->dl_fd);
	p->dl_fd = err;
	p->dl_pid = p->tgid;
	p->dl_dev = st.st_dev;
	p->dl_ino = st.st_ino;
	return 0;
}

void probes__set_internal(struct probes *p, const struct addr_range *ranges, size_t nr)
{
	/* Shrink first, so that BPF never reads a half-written range. */
	p->skel->bss->nr_internal = 0;
	__sync_synchronize();
	for (size_t i = 0; i < nr && i < MEMLEAK_MAX_INTERNAL; i++)
		p->skel->bss->internal[i] = ranges[i];
	__sync_synchronize();
	p->skel->bss->nr_internal = nr < MEMLEAK_MAX_INTERNAL ? nr : MEMLEAK_MAX_INTERNAL;
}

void probes__set_stop_on_dl(struct probes *p, bool on)
{
	p->skel->bss->stop_on_dl = on;
}

void probes__set_follow_shell(struct probes *p, bool on)
{
	p->skel->bss->handoff_tgid = 0;
	p->skel->bss->follow_shell = on;
}

pid_t probes__handoff(const struct probes *p)
{
	return (pid_t)__atomic_load_n(&p->skel->bss->handoff_tgid, __ATOMIC_RELAXED);
}

void probes__retarget(struct probes *p, pid_t tgid)
{
	p->tgid = tgid;
	p->skel->bss->follow_shell = 0;
	p->skel->bss->handoff_tgid = 0;
	p->skel->bss->targ_tgid = (__u32)tgid;
}

void probes__set_notify_dl(struct probes *p, bool on)
{
	p->skel->bss->notify_dl = on;
}

int probes__events_fd(const struct probes *p)
{
	return ring_buffer__epoll_fd(p->events_rb);
}

size_t probes__take_events(struct probes *p, struct memleak_event *evs, size_t max)
{
	size_t n;

	ring_buffer__consume(p->events_rb);
	n = p->nr_events < max ? p->nr_events : max;
	memcpy(evs, p->events, n * sizeof(*evs));
	p->nr_events = 0;
	return n;
}

uint64_t probes__counter(const struct probes *p, enum memleak_counter c)
{
	return __atomic_load_n(&p->skel->bss->counters[c], __ATOMIC_RELAXED);
}

void probes__stop_view(const struct probes *p, struct watchdog_view *v)
{
	v->pids[0] = &p->skel->bss->targ_tgid;
	v->pids[1] = &p->skel->bss->handoff_tgid;
	v->stops = (const volatile uint64_t *)&p->skel->bss->counters[CNT_STOP_REQUESTS];
}

/* Delete every key of a map; the target is stopped, so nothing races. */
static int clear_map(struct bpf_map *map)
{
	int fd = bpf_map__fd(map);
	size_t key_size = bpf_map__key_size(map);
	char key[64];

	if (key_size > sizeof(key))
		return -EINVAL;
	while (!bpf_map_get_next_key(fd, NULL, key))
		if (bpf_map_delete_elem(fd, key))
			return -errno;
	return 0;
}

int probes__clear(struct probes *p)
{
	int err;

	memset(p->alloc_table, 0, p->alloc_table_len);
	memset(p->site_table, 0, p->site_table_len);
	err = clear_map(p->skel->maps.stack_traces);
	if (!err)
		err = clear_map(p->skel->maps.py_stacks);
	if (!err)
		err = clear_map(p->skel->maps.stack_pairs);
	if (!err)
		err = clear_map(p->skel->maps.py_codes_sent);
	/* Stacks the threads remember are gone from the map. */
	p->skel->bss->stacks_cleared++;
	for (int c = 0; c < CNT__COUNT; c++)
		if (c != CNT_STOP_REQUESTS && c != CNT_EXECS)
			p->skel->bss->counters[c] = 0;
	return err;
}

/* The kernel's memlock figure for a map fd, from its fdinfo; 0 if unknown. */
static uint64_t map_memlock(int fd)
{
	char path[64], line[128];
	unsigned long long v = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "memlock: %llu", &v) == 1)
			break;
	fclose(f);
	return v;
}

bool probes__can_walk_tables(void)
{
	return libbpf_probe_bpf_helper(BPF_PROG_TYPE_KPROBE, BPF_FUNC_loop, NULL) == 1;
}

/* A new chunk of rows, put in the outer map; its fd, or -errno. */
static int new_chunk(struct probes *p)
{
	int outer = bpf_map__fd(p->skel->maps.cfi_chunks), fd, err;
	__u32 idx = p->unwind_chunks;

	if (idx == MEMLEAK_CFI_CHUNKS)
		return -ENOSPC;
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "cfi_chunk", sizeof(__u32),
			    sizeof(struct unwind_row), MEMLEAK_CFI_CHUNK_ROWS, NULL);
	if (fd < 0)
		return -errno;
	if (bpf_map_update_elem(outer, &idx, &fd, BPF_ANY)) {
		err = -errno;
		close(fd);
		return err;
	}
	p->unwind_chunks++;
	p->unwind_chunk_bytes += map_memlock(fd);
	return fd;
}

/* rows[0..nr) into the chunk being filled, from its slot `slot` on: one syscall. */
static int fill_chunk(struct probes *p, __u32 slot, const struct unwind_row *rows, __u32 nr)
{
	__u32 *keys = malloc(nr * sizeof(*keys)), count = nr;
	int err;

	if (!keys)
		return -ENOMEM;
	for (__u32 i = 0; i < nr; i++)
		keys[i] = slot + i;
	err = bpf_map_update_batch(p->unwind_fill_fd, keys, rows, &count, NULL) ? -errno : 0;
	free(keys);
	return err;
}

int probes__add_unwind_rows(struct probes *p, const struct unwind_row *rows, size_t nr,
			    uint32_t *first)
{
	const uint64_t cap = (uint64_t)MEMLEAK_CFI_CHUNKS * MEMLEAK_CFI_CHUNK_ROWS;
	uint32_t at = p->unwind_rows;
	int err;

	if (nr > MEMLEAK_CFI_MAX_ROWS || at + (uint64_t)nr > cap)
		return -ENOSPC;
	*first = at;
	while (nr) {
		__u32 slot = at & (MEMLEAK_CFI_CHUNK_ROWS - 1);
		__u32 n = MEMLEAK_CFI_CHUNK_ROWS - slot < nr ? MEMLEAK_CFI_CHUNK_ROWS - slot : (__u32)nr;

		/* Full chunks are never written again: only the last one's fd is kept. */
		if (!slot) {
			int fd = new_chunk(p);

			if (fd < 0)
				return fd;
			if (p->unwind_fill_fd >= 0)
				close(p->unwind_fill_fd);
			p->unwind_fill_fd = fd;
		}
		err = fill_chunk(p, slot, rows, n);
		if (err)
			return err;
		rows += n;
		nr -= n;
		at += n;
		p->unwind_rows = at;
	}
	return 0;
}

int probes__set_unwind_mappings(struct probes *p, const struct unwind_mapping *m, size_t nr)
{
	int fd = bpf_map__fd(p->skel->maps.unwind_mappings);
	__u32 half = !p->unwind_half, base = half * MEMLEAK_UNWIND_MAPPINGS;
	__u32 keys[MEMLEAK_UNWIND_MAPPINGS], count = (__u32)nr;

	if (nr > MEMLEAK_UNWIND_MAPPINGS)
		return -E2BIG;
	for (__u32 i = 0; i < count; i++)
		keys[i] = base + i;
	/* Fill the half BPF does not read, then switch with one store. */
	if (count && bpf_map_update_batch(fd, keys, m, &count, NULL))
		return -errno;
	/* A new generation: BPF's row cache forgets the old mappings' rows. */
	__atomic_store_n(&p->skel->bss->unwind_active,
			 (__u64)++p->unwind_gen << 32 | (__u64)half << 16 | nr, __ATOMIC_RELEASE);
	p->unwind_half = half;
	return 0;
}

uint64_t probes__unwind_rows(const struct probes *p)
{
	return p->unwind_rows;
}

uint64_t probes__unwind_bytes(const struct probes *p)
{
	return p->unwind_chunk_bytes;
}

/* ---------------------------------------------------------------- Python */

static void close_python_exits(struct probes *p)
{
	for (int i = 0; i < 2; i++) {
		if (p->py_exit_fds[i] >= 0)
			close(p->py_exit_fds[i]);
		p->py_exit_fds[i] = -1;
	}
}

int probes__set_python(struct probes *p, const struct py_offsets *py, bool stop_at_exit)
{
	struct memleak_bpf__bss *bss = p->skel->bss;

	/* Off first, so that BPF never walks with half-written offsets. */
	bss->py_enabled = 0;
	__sync_synchronize();
	if (!py) {
		close_python_exits(p);
		bss->py_frozen = 0;
		return 0;
	}
	if (!p->skel->rodata->py_walk)
		return -EOPNOTSUPP;
	bss->py = *py;
	bss->py_frozen = 0;
	bss->py_exit_stop = stop_at_exit;
	p->py_used = true;
	__sync_synchronize();
	bss->py_enabled = 1;
	return 0;
}

void probes__on_py_code(struct probes *p, void (*fn)(void *ctx, const struct py_code *c),
			void *ctx)
{
	p->py_code_fn = fn;
	p->py_code_ctx = ctx;
}

int probes__attach_python_exit(struct probes *p, const char *path, uint64_t offset, bool finalize)
{
	__u64 off = offset, cookie = finalize;
	int fd = link_uprobes(p, bpf_program__fd(p->skel->progs.py_exit), path, &off, &cookie, 1,
			      false);

	if (fd < 0) {
		fprintf(stderr, "memleakbpf: cannot probe %s in %s: %s\n",
			finalize ? "Py_FinalizeEx" : "_exit", path, strerror(-fd));
		return fd;
	}
	if (p->py_exit_fds[finalize] >= 0)
		close(p->py_exit_fds[finalize]);
	p->py_exit_fds[finalize] = fd;
	return 0;
}

static void detach_all(struct probes *p)
{
	int fds[(LANES + 1) * p->nr_attached + 3];
	size_t n = 0;

	for (size_t i = 0; i < p->nr_attached; i++)
		n += take_links(&p->attached[i], fds + n);
	for (int i = 0; i < 2; i++)
		if (p->py_exit_fds[i] >= 0)
			fds[n++] = p->py_exit_fds[i];
	if (p->dl_fd >= 0)
		fds[n++] = p->dl_fd;
	p->py_exit_fds[0] = p->py_exit_fds[1] = p->dl_fd = -1;
	close_links(fds, n);
}

void probes__free(struct probes *p)
{
	if (!p)
		return;
	if (p->unwind_fill_fd >= 0)
		close(p->unwind_fill_fd);
	detach_all(p);
	free(p->attached);
	ring_buffer__free(p->events_rb);
	clock_feed__stop(p->clock);
	unmap_tables(p);
	memleak_bpf__destroy(p->skel);
	free(p);
}
