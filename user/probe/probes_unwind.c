// SPDX-License-Identifier: GPL-2.0
/*
 * The CFI tables BPF unwinds with (user/unwind/): rows appended in chunks
 * that are never rewritten (mmap'ed arrays, filled by memcpy), and the
 * target's mappings published in the half of a double buffer BPF does not
 * read.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "probes.h"
#include "probes_internal.h"
#include "unwind/unwind.h"
#include "util/fatal.h"

bool probes_unwind__can_walk_tables(void)
{
	return libbpf_probe_bpf_helper(BPF_PROG_TYPE_KPROBE, BPF_FUNC_loop, NULL) == 1;
}

#define CHUNK_BYTES PROBES_CFI_CHUNK_BYTES

/*
 * n new chunks, mapped into rows[], put in the outer map with one update:
 * the kernel waits for an RCU grace period at every update of a map of
 * maps (about 10 ms), and the 357 chunks of a PyTorch process each waiting
 * for their own took 3.5 s. On failure nothing is left mapped or created.
 */
static int add_chunks(struct probes *p, __u32 first, __u32 n, struct unwind_row **rows,
		      uint64_t *bytes)
{
	int err = 0;
	__u32 *keys = calloc(n, sizeof(*keys)), made = 0;
	int *fds = calloc(n, sizeof(*fds));

	if (!keys || !fds) {
		free(keys);
		free(fds);
		return -ENOMEM;
	}
	for (; made < n; made++) {
		keys[made] = first + made;
		fds[made] = bpfmaps__cfi_chunk_new(&rows[made], CHUNK_BYTES);
		if (fds[made] < 0) {
			err = fds[made];	/* nothing made for it */
			break;
		}
	}
	if (!err)
		err = bpfmaps__cfi_chunks_add(p->skel, keys, fds, n);
	if (!err)
		*bytes = n * bpfmaps__memlock(fds[0]);
	for (__u32 i = 0; i < made; i++) {
		if (err)
			munmap(rows[i], CHUNK_BYTES);
		close(fds[i]);	/* the outer map and our mapping hold the chunk */
	}
	free(keys);
	free(fds);
	return err;
}

/*
 * The spares: the next chunks, made while the target runs, so that the
 * grace period of their update is not waited for at a stop: the first
 * ones during the start-up (-c: the exec's and the allocator's stops, 10
 * to 15 ms each), then again whenever a stop has used them up (with the
 * tables read through the unwind cache, that wait was most of a dlopen's
 * stop). Chunks first to first + PROBES_CFI_SPARES - 1: nothing else adds
 * one meanwhile (add_rows waits for them first).
 */
static void *make_spares(void *arg)
{
	struct probes *p = arg;
	struct probes_cfi_spares *sp = &p->cfi.spares;

	sp->err = add_chunks(p, sp->first, PROBES_CFI_SPARES, sp->rows, &sp->bytes);
	return NULL;
}

void probes_unwind__prefill(struct probes *p)
{
	struct probes_cfi_spares *sp = &p->cfi.spares;
	sigset_t all, old;

	sp->first = p->cfi.chunks;
	sp->nr = sp->next = 0;
	/* No signal for it: they are the loop's. */
	fatal__thread_signals(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	sp->started = !pthread_create(&sp->thread, NULL, make_spares, p);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* The spares made, their memory counted (if not made, chunks are made as they are needed). */
static void join_spares(struct probes *p)
{
	struct probes_cfi_spares *sp = &p->cfi.spares;

	if (!sp->started)
		return;
	pthread_join(sp->thread, NULL);
	sp->started = false;
	if (sp->err)
		return;
	sp->nr = PROBES_CFI_SPARES;
	p->cfi.chunk_bytes += sp->bytes;
}

static void unmap_fill(struct probes *p)
{
	if (p->cfi.fill)
		munmap(p->cfi.fill, CHUNK_BYTES);
	p->cfi.fill = NULL;
}

/* The chunk being filled and the spares left, unmapped (probes__free). */
void probes_unwind__release(struct probes *p)
{
	struct probes_cfi_spares *sp = &p->cfi.spares;

	join_spares(p);
	for (; sp->next < sp->nr; sp->next++)
		munmap(sp->rows[sp->next], CHUNK_BYTES);
	unmap_fill(p);
}

/* The spares used up: the next ones made, unless making them failed before or the map is full. */
static void refill_spares(struct probes *p)
{
	const struct probes_cfi_spares *sp = &p->cfi.spares;

	if (sp->started || sp->next < sp->nr || sp->err ||
	    p->cfi.chunks + PROBES_CFI_SPARES > MEMLEAK_CFI_CHUNKS)
		return;
	probes_unwind__prefill(p);
}

/* Up to n spares into fresh, as the next chunks in use: how many. */
static __u32 take_spares(struct probes *p, __u32 n, struct unwind_row **fresh)
{
	struct probes_cfi_spares *sp = &p->cfi.spares;
	__u32 k = 0;

	for (; k < n && sp->next < sp->nr; k++)
		fresh[k] = sp->rows[sp->next++];
	return k;
}

/* The chunks that rows [at, at + nr) need, created; fresh[i] is chunk have + i. */
static int grow_for(struct probes *p, uint32_t at, size_t nr, struct unwind_row ***fresh)
{
	__u32 have = p->cfi.chunks;
	__u32 need = (__u32)((at + nr + MEMLEAK_CFI_CHUNK_ROWS - 1) >> MEMLEAK_CFI_CHUNK_SHIFT);
	uint64_t bytes = 0;
	__u32 k;
	int err = 0;

	*fresh = NULL;
	if (need <= have)
		return 0;
	*fresh = calloc(need - have, sizeof(**fresh));
	if (!*fresh)
		return -ENOMEM;
	k = take_spares(p, need - have, *fresh);
	if (need - have > k)
		err = add_chunks(p, have + k, need - have - k, *fresh + k, &bytes);
	if (!err) {
		p->cfi.chunks = need;
		p->cfi.chunk_bytes += bytes;
	} else {
		p->cfi.spares.next -= k;	/* the spares taken go back */
		free(*fresh);
		*fresh = NULL;
	}
	return err;
}

/* Rows [at, at + nr) into their chunks: have of them were there before, fresh the rest. */
static void put_rows(struct probes *p, uint32_t at, const struct unwind_row *rows, size_t nr,
		     __u32 have, struct unwind_row **fresh)
{
	while (nr) {
		__u32 chunk = at >> MEMLEAK_CFI_CHUNK_SHIFT, slot = at & (MEMLEAK_CFI_CHUNK_ROWS - 1);
		__u32 n = MEMLEAK_CFI_CHUNK_ROWS - slot < nr ? MEMLEAK_CFI_CHUNK_ROWS - slot : (__u32)nr;
		struct unwind_row *dst = chunk < have ? p->cfi.fill : fresh[chunk - have];

		memcpy(dst + slot, rows, n * sizeof(*rows));
		rows += n;
		nr -= n;
		at += n;
	}
}

/*
 * Rows go into slots no published mapping points to yet: BPF cannot read
 * them before set_mappings, whose map update orders these stores first.
 * Full chunks are never written again: only the last one stays mapped.
 */
static int add_rows(void *ctx, const struct unwind_rows *parts, size_t nr_parts, uint32_t *first)
{
	struct probes *p = ctx;
	const uint64_t cap = (uint64_t)MEMLEAK_CFI_CHUNKS * MEMLEAK_CFI_CHUNK_ROWS;
	uint32_t at, have;
	struct unwind_row **fresh;
	uint64_t nr = 0;
	int err;

	join_spares(p);
	at = p->cfi.rows;
	have = p->cfi.chunks;
	for (size_t i = 0; i < nr_parts; i++)
		nr += parts[i].nr;
	if (at + nr > cap)
		return -ENOSPC;
	err = grow_for(p, at, nr, &fresh);
	if (err)
		return err;
	*first = at;
	for (size_t i = 0; i < nr_parts; i++) {
		put_rows(p, at, parts[i].rows, parts[i].nr, have, fresh);
		at += (uint32_t)parts[i].nr;
	}
	p->cfi.rows = at;
	if (fresh) {
		__u32 last = p->cfi.chunks - have - 1;

		unmap_fill(p);
		for (__u32 i = 0; i < last; i++)
			munmap(fresh[i], CHUNK_BYTES);
		p->cfi.fill = fresh[last];
		free(fresh);
	}
	refill_spares(p);
	return 0;
}

/* Fill the half of slot's mappings BPF does not read, then switch to it with one store. */
static int publish_slot(struct probes *p, uint32_t slot, const struct unwind_mapping *m, size_t nr)
{
	__u32 half = !p->cfi.half[slot];
	int err = bpfmaps__publish_mappings(p->skel, slot, half, p->cfi.gen[slot] + 1, m, nr);

	if (err)
		return err;
	p->cfi.gen[slot]++;
	p->cfi.half[slot] = half;
	return 0;
}

static int set_mappings(void *ctx, const struct unwind_mapping *m, size_t nr)
{
	return publish_slot(ctx, 0, m, nr);
}

/* image's slot, or a free one (tag 0) when take: 0 when there is none. */
static uint32_t image_slot(struct probes *p, uint32_t image, bool take)
{
	uint32_t n = MEMLEAK_UNWIND_SLOTS - 1;

	for (uint32_t slot = 1; slot < MEMLEAK_UNWIND_SLOTS; slot++)
		if (p->cfi.slot_tag[slot] == image)
			return slot;
	/* The least lately freed: a walk may still be reading one just let go. */
	for (uint32_t i = 0; take && i < n; i++) {
		uint32_t slot = 1 + (p->cfi.slot_next + i) % n;

		if (!p->cfi.slot_tag[slot]) {
			p->cfi.slot_next = slot % n;
			return slot;
		}
	}
	return 0;
}

/* BPF walks the processes of image by its slot's mappings (m), or, m NULL, no longer. */
static int set_image_mappings(void *ctx, uint32_t image, const struct unwind_mapping *m, size_t nr)
{
	struct probes *p = ctx;
	uint32_t slot = image_slot(p, image, m != NULL);
	int err;

	if (!slot)
		return m ? -ENOSPC : 0;
	if (!m) {
		bpfmaps__drop_image_slot(p->skel, image, slot);
		p->cfi.slot_tag[slot] = 0;
		return 0;
	}
	err = publish_slot(p, slot, m, nr);
	/* Named to BPF once its mappings are in place. */
	if (!err && !p->cfi.slot_tag[slot])
		err = bpfmaps__name_image_slot(p->skel, image, slot);
	if (!err)
		p->cfi.slot_tag[slot] = image;
	return err;
}

static bool wanted(void *ctx, size_t i)
{
	const struct probes *p = ctx;

	return bpfmaps__unwind_wanted(p->skel, p->cfi.half[0], i);
}

static uint64_t rows_loaded(void *ctx)
{
	const struct probes *p = ctx;

	return p->cfi.rows;
}

static uint64_t rows_bytes(void *ctx)
{
	const struct probes *p = ctx;

	return p->cfi.chunk_bytes;
}

void probes_unwind__ops(struct probes *p, struct unwind_ops *ops)
{
	*ops = (struct unwind_ops){
		.ctx = p,
		.add_rows = add_rows,
		.set_mappings = set_mappings,
		.set_image_mappings = p->follow.on ? set_image_mappings : NULL,
		.wanted = wanted,
		.rows = rows_loaded,
		.bytes = rows_bytes,
	};
}
