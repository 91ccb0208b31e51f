// SPDX-License-Identifier: GPL-2.0
/* -k's BPF maps, read and sized by their one owner (kmem_maps.h says why). */
#include <errno.h>
#include <stdlib.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "kmem_maps.h"

void kmem_maps__size(struct kmem_bpf *skel, uint32_t max_allocs, uint32_t stacks)
{
	bpf_map__set_max_entries(skel->maps.blocks, max_allocs ?: 1);
	bpf_map__set_max_entries(skel->maps.stacks, stacks ?: 1);
	/* A stack may allocate through two APIs (a kmalloc and its pages). */
	bpf_map__set_max_entries(skel->maps.sites, stacks + stacks / 2 + 64);
}

int kmem_maps__stack_lookup(const struct kmem_bpf *skel, uint64_t id, struct stack_trace *buf)
{
	return bpf_map_lookup_elem(bpf_map__fd(skel->maps.stacks), &id, buf) ? -errno : 0;
}

int kmem_maps__each_site(const struct kmem_bpf *skel, kmem_maps_site_fn fn, void *ctx)
{
	int fd = bpf_map__fd(skel->maps.sites), err = 0;
	struct kmem_site_key key, next;
	struct site_counts c;
	void *prev = NULL;

	while (!err && !bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		if (!bpf_map_lookup_elem(fd, &key, &c))
			err = fn(ctx, &key, &c);
	}
	return err;
}

int kmem_maps__each_block(const struct kmem_bpf *skel, kmem_maps_blocks_fn fn, void *ctx)
{
	int fd = bpf_map__fd(skel->maps.blocks), err = 0;
	struct kmem_key *keys = calloc(KMEM_MAPS_BATCH, sizeof(*keys));
	struct kmem_block *vals = calloc(KMEM_MAPS_BATCH, sizeof(*vals));
	struct kmem_key batch;
	void *in = NULL;

	if (!keys || !vals)
		err = -ENOMEM;
	while (!err) {
		__u32 n = KMEM_MAPS_BATCH;

		err = bpf_map_lookup_batch(fd, in, &batch, keys, vals, &n, NULL) ? -errno : 0;
		if (!err || err == -ENOENT)
			fn(ctx, vals, n);
		in = &batch;
		if (err == -ENOENT) {	/* the last batch */
			err = 0;
			break;
		}
	}
	free(keys);
	free(vals);
	return err;
}
