// SPDX-License-Identifier: GPL-2.0
/*
 * The native stacks BPF sends through its stack ring the first time it
 * meets them (bpf/stack.bpf.h), kept here by id while a live site may name
 * them: what the kernel's stack map held, without a hash-map insert (an
 * allocation and a memory-cgroup charge) in the target for each new stack,
 * nor a batch of lookups and deletes here to read them back.
 *
 * A thread reads the ring every STACK_RING_POLL_MS (BPF wakes it sooner
 * only when the ring fills past a mark), and a reading drains it first,
 * so every id a site names has come by then: BPF sends a stack before it
 * counts the allocation. BPF remembers what it sent in a cache: a stack it
 * forgot comes again, and is dropped after a full compare with the copy
 * kept here or in the retired store. Two different stacks under one id (a
 * 64-bit hash collision BPF's check of the depth, flags and both ends
 * missed) are counted, CNT_STACK_MERGED: their sites' figures may mix both.
 *
 * Locks: the store's is taken after stacks_lock and retired_lock; the
 * reader only tries the retired store's.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "probes.h"
#include "probes_internal.h"
#include "model/retired.h"
#include "model/stackcache.h"
#include "util/idmap.h"
#include "util/nice.h"
#include "util/vec.h"

/* How often the reader looks by itself: the ring holds a burst of new stacks this long. */
#define STACK_RING_POLL_MS 10
/*
 * Records read under one hold of the locks: a stack's frames are interned
 * into the shared prefixes (model/prefixes.h), a microsecond or more for
 * one unlike its predecessor (v_churn's), and a sweep waiting for the
 * retired store's lock must not wait for a whole ring's worth.
 */
#define STACK_RING_BATCH 64

struct stack_ring {
	struct probes *p;
	struct ring_buffer *rb;
	pthread_t thread;
	volatile bool stop;
	bool running;
	pthread_mutex_t lock;
	/* Under lock: */
	struct idmap of_id;		/* stack id -> its index in blobs */
	struct stack_blob **blobs;	/* held */
	size_t nr, cap;
	uint64_t received, again, merged;
	bool retired_held;	/* this drain holds the retired store's lock */
	uint32_t batch;		/* records this hold of the locks took */
};

/* Keep b (held) under id: 0 or -ENOMEM (then let go of). */
static int keep(struct stack_ring *sr, uint64_t id, struct stack_blob *b)
{
	if (vec__reserve_min(&sr->blobs, &sr->cap, sr->nr + 1, sizeof(*sr->blobs), 1024) ||
	    idmap__put(&sr->of_id, id, (uint32_t)sr->nr)) {
		stack_blob__put(b);
		return -ENOMEM;
	}
	sr->blobs[sr->nr++] = b;
	return 0;
}

/* A stack met before, by this id: the same frames, or another stack's (counted). */
static void met_again(struct stack_ring *sr, const struct stack_blob *b, const struct stack_copy *c)
{
	if (stack_blob__same_ips(b, c))
		sr->again++;
	else
		sr->merged++;
}

/*
 * One record of the ring (struct stack_msg, its frames only), under the
 * store's lock and the retired store's. Without memory, its frames are
 * lost: a site that names it says its stack could not be read.
 */
static int on_stack(void *ctx, void *data, size_t len)
{
	struct stack_ring *sr = ctx;
	const struct stack_msg *m = data;
	size_t head = offsetof(struct stack_msg, st.ips), nr;
	struct stack_blob *b;
	struct stack_copy c;
	uint32_t i;

	if (len < head || !m->id)
		return 0;
	nr = (len - head) / sizeof(m->st.ips[0]);
	if (nr > m->st.nr)
		nr = m->st.nr;
	c = (struct stack_copy){ .ips = (uint64_t *)m->st.ips, .nr_ips = (uint32_t)nr,
				 .flags = m->st.flags };
	sr->received++;
	if (idmap__get(&sr->of_id, m->id, &i)) {
		met_again(sr, sr->blobs[i], &c);
		return 0;
	}
	/* Let go of, and sent again: the retired store's copy is kept here again. */
	b = sr->retired_held ? retired__native(sr->p->rc.retired, m->id) : NULL;
	if (b) {
		met_again(sr, b, &c);
		b = stack_blob__hold(b);
	} else {
		b = stack_blob__new(m->id, &c);
	}
	if (b)
		(void)keep(sr, m->id, b);
	/* Enough for one hold of the locks: the record is consumed, the rest waits. */
	return ++sr->batch < STACK_RING_BATCH ? 0 : -EAGAIN;
}

/*
 * What waits in the ring, into the store. The retired store only when its
 * lock is free: a sweep trimming it holds it for a second or two, while
 * the ring fills; a stack it has is then copied again, no more.
 */
/* One batch of what waits (STACK_RING_BATCH): -EAGAIN when more may. */
static int drain_batch(struct stack_ring *sr)
{
	bool held = !pthread_mutex_trylock(&sr->p->rc.retired_lock);
	uint64_t merged;
	int err;

	pthread_mutex_lock(&sr->lock);
	sr->retired_held = held;
	sr->batch = 0;
	merged = sr->merged;
	err = ring_buffer__consume(sr->rb);
	merged = sr->merged - merged;
	pthread_mutex_unlock(&sr->lock);
	if (held)
		pthread_mutex_unlock(&sr->p->rc.retired_lock);
	if (merged)
		bpfmaps__count(sr->p->skel, CNT_STACK_MERGED, merged);
	return err == -EAGAIN ? err : 0;
}

static void drain(struct stack_ring *sr)
{
	while (drain_batch(sr) == -EAGAIN)
		;
}

static void *reader(void *arg)
{
	struct stack_ring *sr = arg;
	struct pollfd pfd = { .fd = ring_buffer__epoll_fd(sr->rb), .events = POLLIN };

	/*
	 * Ahead of the target, as the sweeper: a new stack's frames are
	 * interned here (a microsecond or more each when unlike the last one's),
	 * and a ring not read in time drops stacks.
	 */
	nice__raise(PROBES_SWEEP_NICE);
	while (!sr->stop) {
		poll(&pfd, 1, STACK_RING_POLL_MS);
		drain(sr);
	}
	return NULL;
}

int stack_ring__start(struct probes *p)
{
	struct stack_ring *sr = calloc(1, sizeof(*sr));
	sigset_t all, old;
	int err;

	if (!sr)
		return -ENOMEM;
	sr->p = p;
	pthread_mutex_init(&sr->lock, NULL);
	sr->rb = bpfmaps__stack_reader(p->skel, on_stack, sr);
	if (!sr->rb) {
		err = -errno;
		goto fail;
	}
	/* No signal for it: they are the loop's. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = -pthread_create(&sr->thread, NULL, reader, sr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err)
		goto fail;
	sr->running = true;
	p->stack_ring = sr;
	return 0;
fail:
	fprintf(stderr, "memleakbpf: cannot start reading the stack ring: %s\n", strerror(-err));
	ring_buffer__free(sr->rb);
	pthread_mutex_destroy(&sr->lock);
	free(sr);
	return err;
}

static void forget_all(struct stack_ring *sr)
{
	for (size_t i = 0; i < sr->nr; i++)
		stack_blob__put(sr->blobs[i]);
	sr->nr = 0;
	idmap__clear(&sr->of_id);
}

void stack_ring__stop(struct probes *p)
{
	struct stack_ring *sr = p->stack_ring;

	if (!sr)
		return;
	if (sr->running) {
		sr->stop = true;
		pthread_join(sr->thread, NULL);
	}
	if (p->verbose)
		fprintf(stderr, "memleakbpf: stack ring (%llu KiB): %llu stacks received, %llu of them "
			"sent again (BPF forgot it sent them), %zu held at the end\n",
			(unsigned long long)bpfmaps__stack_ring_bytes(p->skel) >> 10,
			(unsigned long long)sr->received, (unsigned long long)sr->again, sr->nr);
	ring_buffer__free(sr->rb);
	forget_all(sr);
	idmap__free(&sr->of_id);
	free(sr->blobs);
	pthread_mutex_destroy(&sr->lock);
	free(sr);
	p->stack_ring = NULL;
}

void stack_ring__drain(struct probes *p)
{
	if (p->stack_ring)
		drain(p->stack_ring);
}

struct stack_blob *stack_ring__native(struct probes *p, uint64_t id)
{
	struct stack_ring *sr = p->stack_ring;
	struct stack_blob *b = NULL;
	uint32_t i;

	if (!sr)
		return NULL;
	pthread_mutex_lock(&sr->lock);
	if (idmap__get(&sr->of_id, id, &i))
		b = stack_blob__hold(sr->blobs[i]);
	pthread_mutex_unlock(&sr->lock);
	return b;
}

bool stack_ring__has(struct probes *p, uint64_t id)
{
	struct stack_ring *sr = p->stack_ring;
	bool has;

	if (!sr)
		return false;
	pthread_mutex_lock(&sr->lock);
	has = idmap__get(&sr->of_id, id, NULL);
	pthread_mutex_unlock(&sr->lock);
	return has;
}

/* The stacks named into a new store; the others to the retired store (its lock held). */
static size_t let_go(struct stack_ring *sr, const struct idmap *named)
{
	struct idmap kept = {};
	size_t n = 0, gone = 0;

	for (size_t i = 0; i < sr->nr; i++) {
		struct stack_blob *b = sr->blobs[i];

		if (idmap__get(named, b->id, NULL) && !idmap__put(&kept, b->id, (uint32_t)n)) {
			sr->blobs[n++] = b;
			continue;
		}
		/* No memory there: its frames are lost (a site that names it says so). */
		(void)retired__keep_native_blob(sr->p->rc.retired, b->id, b);
		stack_blob__put(b);
		gone++;
	}
	idmap__free(&sr->of_id);
	sr->of_id = kept;
	sr->nr = n;
	return gone;
}

size_t stack_ring__let_go(struct probes *p, const struct idmap *named)
{
	struct stack_ring *sr = p->stack_ring;
	size_t gone;

	if (!sr)
		return 0;
	pthread_mutex_lock(&sr->lock);
	gone = let_go(sr, named);
	pthread_mutex_unlock(&sr->lock);
	return gone;
}

void stack_ring__clear(struct probes *p)
{
	struct stack_ring *sr = p->stack_ring;

	if (!sr)
		return;
	pthread_mutex_lock(&sr->lock);
	forget_all(sr);
	pthread_mutex_unlock(&sr->lock);
}

size_t stack_ring__held(struct probes *p)
{
	struct stack_ring *sr = p->stack_ring;
	size_t n;

	if (!sr)
		return 0;
	pthread_mutex_lock(&sr->lock);
	n = sr->nr;
	pthread_mutex_unlock(&sr->lock);
	return n;
}
