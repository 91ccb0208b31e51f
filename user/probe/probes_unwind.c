// SPDX-License-Identifier: GPL-2.0
/*
 * The CFI tables BPF unwinds with (user/unwind/): rows appended in chunks
 * that are never rewritten, and the target's mappings published in the half
 * of a double buffer BPF does not read.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "probes.h"
#include "probes_internal.h"
#include "unwind/unwind.h"

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

static int add_rows(void *ctx, const struct unwind_row *rows, size_t nr, uint32_t *first)
{
	struct probes *p = ctx;
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

static int set_mappings(void *ctx, const struct unwind_mapping *m, size_t nr)
{
	struct probes *p = ctx;
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

static uint64_t rows_loaded(void *ctx)
{
	const struct probes *p = ctx;

	return p->unwind_rows;
}

static uint64_t rows_bytes(void *ctx)
{
	const struct probes *p = ctx;

	return p->unwind_chunk_bytes;
}

void probes__unwind_ops(struct probes *p, struct unwind_ops *ops)
{
	*ops = (struct unwind_ops){
		.ctx = p,
		.add_rows = add_rows,
		.set_mappings = set_mappings,
		.rows = rows_loaded,
		.bytes = rows_bytes,
	};
}
