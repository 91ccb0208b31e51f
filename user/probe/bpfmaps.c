// SPDX-License-Identifier: GPL-2.0
/*
 * The one owner of the BPF skeleton's maps and .bss (bpfmaps.h says why):
 * each function writes or reads one thing BPF shares with us, by name.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "bpfmaps.h"
#include "target/watchdog.h"

/* What an array's values take in kernel memory: whole pages, as it is mapped. */
static size_t array_bytes(const struct bpf_map *map)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t bytes = (size_t)bpf_map__value_size(map) * bpf_map__max_entries(map);

	return (bytes + page - 1) / page * page;
}

#define SCAN_BYTES (MEMLEAK_SCAN_RECS * sizeof(struct site_scan_rec))

/*
 * The scan's output array (user/probe/site_scan.c), mapped once and kept:
 * its 1.5 MiB stay warm from report to report. NULL: the reading walks
 * the table itself.
 */
static const struct site_scan_rec *map_scan(int fd)
{
	void *mem = fd < 0 ? MAP_FAILED : mmap(NULL, SCAN_BYTES, PROT_READ, MAP_SHARED, fd, 0);

	if (mem == MAP_FAILED)
		return NULL;
	madvise(mem, SCAN_BYTES, MADV_DONTFORK);	/* -c's child need not copy it */
	return mem;
}

void bpfmaps__tables(const struct memleak_bpf *skel, struct probes_tables *t)
{
	t->allocs_fd = bpf_map__fd(skel->maps.allocs);
	t->sites_fd = bpf_map__fd(skel->maps.sites);
	t->buckets = bpf_map__max_entries(skel->maps.allocs);
	t->slots = bpf_map__max_entries(skel->maps.sites);
	t->slot_bytes = bpf_map__value_size(skel->maps.sites);
	t->shards = skel->rodata->site_shard_mask + 1;
	t->scan_prog_fd = bpf_program__fd(skel->progs.site_scan_run);
	t->scan_recs = map_scan(bpf_map__fd(skel->maps.site_scan));
	t->allocs_bytes = array_bytes(skel->maps.allocs);
	t->sites_bytes = array_bytes(skel->maps.sites);
	t->site_groups = skel->bss->site_groups;
	t->group_shift = skel->rodata->site_group_shift;
	t->alloc_groups = skel->bss->alloc_groups;
	t->alloc_group_shift = skel->rodata->alloc_group_shift;
}

void bpfmaps__tables_end(struct probes_tables *t)
{
	if (t->scan_recs)
		munmap((void *)t->scan_recs, SCAN_BYTES);
	t->scan_recs = NULL;
}

uint64_t bpfmaps__memlock(int fd)
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

/* A map of c bytes into names and bytes, the n largest so far, largest first. */
static void keep_largest(const char **names, uint64_t *bytes, size_t n, const char *name, uint64_t c)
{
	size_t i = n;

	while (i > 0 && bytes[i - 1] < c) {
		if (i < n) {
			names[i] = names[i - 1];
			bytes[i] = bytes[i - 1];
		}
		i--;
	}
	if (i < n) {
		names[i] = name;
		bytes[i] = c;
	}
}

/* The map in slot 0 of a Python outer map: an fd to close, or -1 before a Python came. */
static int inner_fd(const struct bpf_map *outer)
{
	__u32 zero = 0, id;

	if (bpf_map_lookup_elem(bpf_map__fd(outer), &zero, &id))
		return -1;
	return bpf_map_get_fd_by_id(id);
}

static uint64_t inner_memory(const struct bpf_map *outer, const char **names, uint64_t *bytes,
			     size_t n)
{
	int fd = inner_fd(outer);
	uint64_t c;

	if (fd < 0)
		return 0;
	c = bpfmaps__memlock(fd);
	close(fd);
	keep_largest(names, bytes, n, bpf_map__name(outer), c);
	return c;
}

uint64_t bpfmaps__memory(const struct memleak_bpf *skel, const char **names, uint64_t *bytes,
			 size_t n)
{
	const struct bpf_map *map;
	uint64_t sum = 0, c;

	for (size_t i = 0; i < n; i++) {
		names[i] = NULL;
		bytes[i] = 0;
	}
	bpf_object__for_each_map(map, skel->obj) {
		if (bpf_map__fd(map) < 0)
			continue;
		c = bpfmaps__memlock(bpf_map__fd(map));
		sum += c;
		if (map != skel->maps.allocs && map != skel->maps.sites)
			keep_largest(names, bytes, n, bpf_map__name(map), c);
	}
	/* And the Python maps, once made (bpfmaps__python_maps), under their outer maps' names. */
	sum += inner_memory(skel->maps.py_code_freed, names, bytes, n);
	sum += inner_memory(skel->maps.py_codes_sent, names, bytes, n);
	return sum;
}

struct ring_buffer *bpfmaps__events_reader(const struct memleak_bpf *skel, bpfmaps_ring_fn on_event,
					   void *ctx)
{
	return ring_buffer__new(bpf_map__fd(skel->maps.events), on_event, ctx, NULL);
}

int bpfmaps__codes_reader(const struct memleak_bpf *skel, struct ring_read *r)
{
	return ringread__open(r, bpf_map__fd(skel->maps.py_codes),
			      bpf_map__max_entries(skel->maps.py_codes));
}

int bpfmaps__stack_reader(const struct memleak_bpf *skel, struct ring_read *r)
{
	return ringread__open(r, bpf_map__fd(skel->maps.stack_ring),
			      bpf_map__max_entries(skel->maps.stack_ring));
}

uint64_t bpfmaps__known_room(const struct memleak_bpf *skel)
{
	return (uint64_t)bpf_map__max_entries(skel->maps.known_stacks) * MEMLEAK_KNOWN_WAYS;
}

uint64_t bpfmaps__stack_ring_bytes(const struct memleak_bpf *skel)
{
	return bpf_map__max_entries(skel->maps.stack_ring);
}

void bpfmaps__count(struct memleak_bpf *skel, enum memleak_counter c, uint64_t n)
{
	__atomic_fetch_add(&skel->bss->counters[c], n, __ATOMIC_RELAXED);
}

struct ring_buffer *bpfmaps__trace_reader(const struct memleak_bpf *skel, bpfmaps_ring_fn fn,
					  void *ctx)
{
	return ring_buffer__new(bpf_map__fd(skel->maps.trace_ring), fn, ctx, NULL);
}

void bpfmaps__size_trace_ring(struct memleak_bpf *skel, uint32_t bytes)
{
	bpf_map__set_max_entries(skel->maps.trace_ring, bytes);
}

/* py_codes_sent is made when a Python comes (bpfmaps__python_maps): its room is rodata's. */
uint64_t bpfmaps__room(const struct memleak_bpf *skel, enum bpfmaps_table t)
{
	return t == BPFMAPS_PY_CODES ? skel->rodata->py_codes_sent_room
				     : bpf_map__max_entries(skel->maps.sites);
}

/*
 * A hash of room entries into outer's slot 0, of its inner maps' shape
 * (bpf/python.bpf.h; libbpf lets go of the shape once outer is made): 0
 * or -errno.
 */
static int make_inner(struct bpf_map *outer, const char *name, __u32 key_size, __u32 value_size,
		      __u32 room)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = BPF_F_NO_PREALLOC);
	__u32 zero = 0;
	int fd = bpf_map_create(BPF_MAP_TYPE_HASH, name, key_size, value_size, room, &opts), err = 0;

	if (fd < 0)
		return -errno;
	if (bpf_map_update_elem(bpf_map__fd(outer), &zero, &fd, BPF_ANY))
		err = -errno;
	close(fd);	/* the outer map holds it */
	return err;
}

int bpfmaps__python_maps(struct memleak_bpf *skel)
{
	int fd = inner_fd(skel->maps.py_codes_sent);

	if (fd >= 0) {	/* made for an earlier Python */
		close(fd);
		return 0;
	}
	return make_inner(skel->maps.py_code_freed, "py_code_freed", sizeof(__u64), sizeof(__u64),
			  skel->rodata->py_code_freed_room) ?:
	       make_inner(skel->maps.py_codes_sent, "py_codes_sent", sizeof(struct py_code_key),
			  sizeof(__u8), skel->rodata->py_codes_sent_room);
}

void bpfmaps__forget_codes(struct memleak_bpf *skel)
{
	struct py_code_key key;
	int fd = inner_fd(skel->maps.py_codes_sent);

	while (fd >= 0 && !bpf_map_get_next_key(fd, NULL, &key) && !bpf_map_delete_elem(fd, &key))
		__atomic_fetch_sub(bpfmaps__fill(skel, BPFMAPS_PY_CODES), 1, __ATOMIC_SEQ_CST);
	if (fd >= 0)
		close(fd);
}

/* Delete every key of a map; the target is stopped, so nothing races. */
static int clear_map(int fd, size_t key_size)
{
	char key[64];

	if (key_size > sizeof(key))
		return -EINVAL;
	while (!bpf_map_get_next_key(fd, NULL, key))
		if (bpf_map_delete_elem(fd, key))
			return -errno;
	return 0;
}

void bpfmaps__clear_groups(struct memleak_bpf *skel)
{
	memset(skel->bss->site_groups, 0, sizeof(skel->bss->site_groups));
	memset(skel->bss->alloc_groups, 0, sizeof(skel->bss->alloc_groups));
}

int bpfmaps__clear_tables(struct memleak_bpf *skel)
{
	int fd = inner_fd(skel->maps.py_codes_sent), err = 0;

	/* The hash table, once a Python made it; the sites, an array, the caller zeroes through its mapping. */
	if (fd >= 0) {
		err = clear_map(fd, sizeof(struct py_code_key));
		close(fd);
	}
	memset(&skel->bss->fill, 0, sizeof(skel->bss->fill));
	memset(skel->bss->live, 0, sizeof(skel->bss->live));
	/* The stacks the threads and the known stacks remember are gone from user space. */
	skel->bss->stacks_cleared++;
	for (int c = 0; c < CNT__COUNT; c++)
		if (c != CNT_STOP_REQUESTS && c != CNT_EXECS)
			skel->bss->counters[c] = 0;
	return err;
}

void bpfmaps__clear_entry_calls(struct memleak_bpf *skel)
{
	memset(skel->bss->entry_calls, 0, sizeof(skel->bss->entry_calls));
}

void bpfmaps__set_target(struct memleak_bpf *skel, pid_t tgid, bool stop_on_exec)
{
	skel->bss->targ_tgid = (__u32)tgid;
	skel->bss->stop_on_exec = stop_on_exec;
}

void bpfmaps__set_internal(struct memleak_bpf *skel, const struct addr_range *ranges, size_t nr)
{
	/* Shrink first, so that BPF never reads a half-written range. */
	skel->bss->nr_internal = 0;
	__sync_synchronize();
	for (size_t i = 0; i < nr && i < MEMLEAK_MAX_INTERNAL; i++)
		skel->bss->internal[i] = ranges[i];
	__sync_synchronize();
	skel->bss->nr_internal = nr < MEMLEAK_MAX_INTERNAL ? nr : MEMLEAK_MAX_INTERNAL;
}

void bpfmaps__set_stop_on_dl(struct memleak_bpf *skel, bool on)
{
	skel->bss->stop_on_dl = on;
}

void bpfmaps__set_notify_dl(struct memleak_bpf *skel, bool on)
{
	skel->bss->notify_dl = on;
}

void bpfmaps__set_dl_r_debug(struct memleak_bpf *skel, uint64_t addr)
{
	skel->bss->dl_r_debug = addr;
}

void bpfmaps__set_follow_shell(struct memleak_bpf *skel, bool on)
{
	skel->bss->handoff_tgid = 0;
	skel->bss->follow_shell = on;
}

pid_t bpfmaps__handoff(const struct memleak_bpf *skel)
{
	return (pid_t)__atomic_load_n(&skel->bss->handoff_tgid, __ATOMIC_RELAXED);
}

void bpfmaps__retarget(struct memleak_bpf *skel, pid_t tgid)
{
	skel->bss->follow_shell = 0;
	skel->bss->handoff_tgid = 0;
	skel->bss->targ_tgid = (__u32)tgid;
}

void bpfmaps__set_settle_until(struct memleak_bpf *skel, uint64_t ns)
{
	skel->bss->settle_until_ns = ns;
}

volatile uint64_t *bpfmaps__now_ns(struct memleak_bpf *skel)
{
	return (volatile uint64_t *)&skel->bss->now_ns;
}

void bpfmaps__stop_view(const struct memleak_bpf *skel, struct watchdog_view *v)
{
	v->pids[0] = &skel->bss->targ_tgid;
	v->pids[1] = &skel->bss->handoff_tgid;
	v->stops = (const volatile uint64_t *)&skel->bss->counters[CNT_STOP_REQUESTS];
	v->held = skel->bss->held;
	v->nr_held = MEMLEAK_HELD;
}

static int lookup(struct bpf_map *map, const void *key, void *val)
{
	return bpf_map_lookup_elem(bpf_map__fd(map), key, val) ? -errno : 0;
}

bool bpfmaps__proc_lookup(const struct memleak_bpf *skel, pid_t pid, struct memleak_proc *e)
{
	__u32 key = (__u32)pid;

	return !lookup(skel->maps.procs, &key, e);
}

int bpfmaps__proc_add(struct memleak_bpf *skel, pid_t pid, const struct memleak_proc *e)
{
	__u32 key = (__u32)pid;

	return bpf_map_update_elem(bpf_map__fd(skel->maps.procs), &key, e, BPF_NOEXIST) ? -errno : 0;
}

void bpfmaps__proc_update(struct memleak_bpf *skel, pid_t pid, const struct memleak_proc *e)
{
	__u32 key = (__u32)pid;

	bpf_map_update_elem(bpf_map__fd(skel->maps.procs), &key, e, BPF_EXIST);
}

size_t bpfmaps__proc_count(const struct memleak_bpf *skel)
{
	int fd = bpf_map__fd(skel->maps.procs);
	__u32 key, next;
	size_t n = 0;

	for (int err = bpf_map_get_next_key(fd, NULL, &next); !err;
	     err = bpf_map_get_next_key(fd, &key, &next)) {
		key = next;
		n++;
	}
	return n;
}

uint32_t bpfmaps__next_proc_tag(struct memleak_bpf *skel)
{
	return __atomic_add_fetch(&skel->bss->last_proc, 1, __ATOMIC_SEQ_CST);
}

void bpfmaps__release_held(struct memleak_bpf *skel, uint32_t tag, pid_t pid)
{
	__sync_bool_compare_and_swap(&skel->bss->held[tag & (MEMLEAK_HELD - 1)], (__u32)pid, 0);
}

int bpfmaps__set_own_internal(struct memleak_bpf *skel, pid_t pid, const struct internal_set *set)
{
	__u32 key = (__u32)pid;

	if (bpf_map_update_elem(bpf_map__fd(skel->maps.own_internal), &key, set, BPF_ANY))
		return -errno;
	return 0;
}

void bpfmaps__forget_own_internal(struct memleak_bpf *skel, pid_t pid)
{
	__u32 key = (__u32)pid;

	bpf_map_delete_elem(bpf_map__fd(skel->maps.own_internal), &key);
}

void bpfmaps__live_sub(struct memleak_bpf *skel, int kind, uint64_t bytes)
{
	__sync_fetch_and_sub(&skel->bss->live[kind].bytes, bytes);
}

void bpfmaps__python_off(struct memleak_bpf *skel)
{
	/* Off first, so that BPF never walks with half-written offsets. */
	skel->bss->py_enabled = 0;
	__sync_synchronize();
}

void bpfmaps__set_python(struct memleak_bpf *skel, const struct py_offsets *py, bool stop_at_exit)
{
	struct memleak_bpf__bss *bss = skel->bss;

	bpfmaps__python_off(skel);
	bss->py_frozen = 0;
	if (!py)
		return;
	bss->py = *py;
	bss->py_exit_stop = stop_at_exit;
	__sync_synchronize();
	bss->py_enabled = 1;
}

int bpfmaps__set_py_image(struct memleak_bpf *skel, uint32_t tag, const struct py_offsets *py)
{
	__u32 key = tag;

	if (bpf_map_update_elem(bpf_map__fd(skel->maps.py_images), &key, py, BPF_ANY))
		return -errno;
	return 0;
}

void bpfmaps__forget_py_image(struct memleak_bpf *skel, uint32_t tag)
{
	__u32 key = tag;

	bpf_map_delete_elem(bpf_map__fd(skel->maps.py_images), &key);
}

void bpfmaps__set_py_code_cache(struct memleak_bpf *skel, bool on)
{
	if (on) {
		skel->bss->py_code_cache = 1;
		return;
	}
	skel->bss->py_code_cache = 0;
	__sync_fetch_and_add(&skel->bss->py_code_gen, 1);
}

int bpfmaps__cfi_chunk_new(struct unwind_row **rows, size_t bytes)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = BPF_F_MMAPABLE);
	int fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "cfi_chunk", sizeof(__u32),
				sizeof(struct unwind_row), MEMLEAK_CFI_CHUNK_ROWS, &opts);
	void *mem;
	int err;

	if (fd < 0)
		return -errno;
	mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (mem == MAP_FAILED) {
		err = -errno;
		close(fd);
		return err;
	}
	*rows = mem;
	return fd;
}

int bpfmaps__cfi_chunks_add(struct memleak_bpf *skel, const __u32 *keys, const int *fds, __u32 n)
{
	__u32 count = n;

	if (bpf_map_update_batch(bpf_map__fd(skel->maps.cfi_chunks), keys, fds, &count, NULL))
		return -errno;
	return 0;
}

int bpfmaps__publish_mappings(struct memleak_bpf *skel, uint32_t slot, uint32_t half, uint32_t gen,
			      const struct unwind_mapping *m, size_t nr)
{
	__u32 base = (slot * 2 + half) * MEMLEAK_UNWIND_MAPPINGS;
	__u32 keys[MEMLEAK_UNWIND_MAPPINGS], count = (__u32)nr;
	__u64 *active = slot ? &skel->bss->image_unwind_active[slot] : &skel->bss->unwind_active;

	if (nr > MEMLEAK_UNWIND_MAPPINGS)
		return -E2BIG;
	for (__u32 i = 0; i < count; i++)
		keys[i] = base + i;
	if (!slot)
		memset(&skel->bss->unwind_wanted[base], 0, MEMLEAK_UNWIND_MAPPINGS);
	if (count &&
	    bpf_map_update_batch(bpf_map__fd(skel->maps.unwind_mappings), keys, m, &count, NULL))
		return -errno;
	/* A new generation: BPF's row cache forgets the old mappings' rows. */
	__atomic_store_n(active, (__u64)gen << 32 | (__u64)half << 16 | nr, __ATOMIC_RELEASE);
	return 0;
}

int bpfmaps__name_image_slot(struct memleak_bpf *skel, uint32_t image, uint32_t slot)
{
	__u32 key = image;

	if (bpf_map_update_elem(bpf_map__fd(skel->maps.image_unwind_slot), &key, &slot, BPF_ANY))
		return -errno;
	return 0;
}

void bpfmaps__drop_image_slot(struct memleak_bpf *skel, uint32_t image, uint32_t slot)
{
	__u32 key = image;

	bpf_map_delete_elem(bpf_map__fd(skel->maps.image_unwind_slot), &key);
	__atomic_store_n(&skel->bss->image_unwind_active[slot], 0, __ATOMIC_RELEASE);
}

bool bpfmaps__unwind_wanted(const struct memleak_bpf *skel, uint32_t half, size_t i)
{
	return i < MEMLEAK_UNWIND_MAPPINGS &&
	       skel->bss->unwind_wanted[half * MEMLEAK_UNWIND_MAPPINGS + i];
}
