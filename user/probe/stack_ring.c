// SPDX-License-Identifier: GPL-2.0
/*
 * The native stacks, Python stacks and (native, Python, process) pairs BPF
 * sends through its stack ring the first time it meets them in a
 * generation (bpf/stack.bpf.h, bpf/python.bpf.h), kept here by id while a
 * live site may name them: what the kernel's stack maps held, without a
 * hash-map insert (an allocation and a memory-cgroup charge) in the target
 * for each new one, nor a batch of lookups and deletes here to read them
 * back. Each kind has its store: their ids are hashes of different things.
 *
 * A thread reads the ring every STACK_RING_POLL_MS (BPF wakes it sooner
 * only when the ring fills past a mark), and a reading drains it first,
 * so every id a site names has come by then: BPF sends a stack before it
 * counts the allocation. BPF remembers what it sent in a cache: a stack it
 * forgot comes again, and is dropped after a compare with the copy kept
 * here or in the retired store: depth, flags and a second 64-bit hash of
 * all its frames, with a seed of its own (stack_blob__same; Python stacks
 * and pairs field by field). Two different stacks (or pairs) under one id
 * (a 64-bit collision BPF's check missed) are counted, CNT_STACK_MERGED:
 * their sites' figures may mix both.
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
#include "probes.h"
#include "probes_internal.h"
#include "model/retired.h"
#include "model/stackcache.h"
#include "util/fatal.h"
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

/* Native or Python stacks, held, by id. */
struct blob_store {
	struct idmap of_id;		/* id -> its index in blobs */
	struct stack_blob **blobs;	/* held */
	size_t nr, cap;
};

struct kept_pair {
	uint64_t id;
	struct stack_pair pair;
};

struct pair_store {
	struct idmap of_id;		/* pair id -> its index in pairs */
	struct kept_pair *pairs;
	size_t nr, cap;
};

struct stack_ring {
	struct probes *p;
	struct ring_read rr;
	pthread_t thread;
	volatile bool stop;
	bool running;
	pthread_mutex_t lock;
	/* Under lock: */
	struct blob_store native, python;
	struct pair_store pairs;
	uint64_t received, again, merged;
	bool retired_held;	/* this drain holds the retired store's lock */
	uint32_t batch;		/* records this hold of the locks took */
};

/* Keep b (held) under id: 0 or -ENOMEM (then let go of). */
static int keep(struct blob_store *st, uint64_t id, struct stack_blob *b)
{
	if (vec__reserve_min(&st->blobs, &st->cap, st->nr + 1, sizeof(*st->blobs), 1024) ||
	    idmap__put(&st->of_id, id, (uint32_t)st->nr)) {
		stack_blob__put(b);
		return -ENOMEM;
	}
	st->blobs[st->nr++] = b;
	return 0;
}

/* Something met before, by this id: the same, or another's (counted). */
static void met_again(struct stack_ring *sr, bool same)
{
	if (same)
		sr->again++;
	else
		sr->merged++;
}

/*
 * A stack c of a store, new or met again. Without memory, its frames are
 * lost: a site that names it says its stack could not be read.
 */
static void on_blob(struct stack_ring *sr, uint64_t id, const struct stack_copy *c)
{
	struct blob_store *st = c->py ? &sr->python : &sr->native;
	struct stack_blob *b = NULL;
	uint32_t i;

	if (idmap__get(&st->of_id, id, &i)) {
		met_again(sr, stack_blob__same(st->blobs[i], c));
		return;
	}
	/* Let go of, and sent again: the retired store's copy is kept here again. */
	if (sr->retired_held)
		b = c->py ? retired__python(sr->p->rc.retired, id) : retired__native(sr->p->rc.retired, id);
	if (b) {
		met_again(sr, stack_blob__same(b, c));
		b = stack_blob__hold(b);
	} else {
		b = stack_blob__new(id, c);
	}
	if (b)
		(void)keep(st, id, b);
}

/* A pair: kept by id (without memory: its sites show the native stack's id, unread). */
static void on_pair(struct stack_ring *sr, uint64_t id, const struct stack_pair *pair)
{
	struct pair_store *ps = &sr->pairs;
	struct stack_pair old;
	uint32_t i;

	if (idmap__get(&ps->of_id, id, &i)) {
		met_again(sr, !memcmp(&ps->pairs[i].pair, pair, sizeof(*pair)));
		return;
	}
	if (sr->retired_held && retired__pair(sr->p->rc.retired, id, &old))
		met_again(sr, !memcmp(&old, pair, sizeof(*pair)));
	if (vec__reserve_min(&ps->pairs, &ps->cap, ps->nr + 1, sizeof(*ps->pairs), 1024) ||
	    idmap__put(&ps->of_id, id, (uint32_t)ps->nr))
		return;
	ps->pairs[ps->nr++] = (struct kept_pair){ id, *pair };
}

/* A native stack (struct stack_msg): its frames only. */
static void on_native(struct stack_ring *sr, const struct stack_msg *m, size_t len)
{
	size_t head = offsetof(struct stack_msg, st.ips), nr;

	if (len < head)
		return;
	nr = (len - head) / sizeof(m->st.ips[0]);
	if (nr > m->st.nr)
		nr = m->st.nr;
	on_blob(sr, m->h.id, &(struct stack_copy){ .ips = (uint64_t *)m->st.ips,
						   .nr_ips = (uint32_t)nr, .flags = m->st.flags });
}

/* A Python stack (struct py_msg): its nr frames, whole, or nothing. */
static void on_python(struct stack_ring *sr, const struct py_msg *m, size_t len)
{
	size_t head = offsetof(struct py_msg, st);

	if (len < head + offsetof(struct py_stack, frames) || m->st.nr > MEMLEAK_PY_MAX_FRAMES ||
	    len < head + stackcache__py_size(m->st.nr))
		return;
	on_blob(sr, m->h.id, &(struct stack_copy){ .py = (struct py_stack *)&m->st });
}

/* One record of the ring, under the store's lock and the retired store's (if held). */
static int on_record(void *ctx, void *data, size_t len)
{
	struct stack_ring *sr = ctx;
	const struct stack_msg_head *h = data;

	if (len < sizeof(*h) || !h->id)
		return 0;
	sr->received++;
	if (h->kind == STACK_MSG_NATIVE)
		on_native(sr, data, len);
	else if (h->kind == STACK_MSG_PYTHON)
		on_python(sr, data, len);
	else if (h->kind == STACK_MSG_PAIR && len >= sizeof(struct pair_msg))
		on_pair(sr, h->id, &((const struct pair_msg *)data)->pair);
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
	err = ringread__consume(&sr->rr, on_record, sr);
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
	struct pollfd pfd = { .fd = sr->rr.fd, .events = POLLIN };

	/*
	 * Ahead of the target, as the sweeper: a new stack's frames are
	 * interned here (a microsecond or more each when unlike the last one's),
	 * and a ring not read in time drops stacks.
	 */
	nice__raise(PROBES_SWEEP_NICE);
	pthread_setname_np(pthread_self(), "memleakbpf-stk");	/* as the sweeper (reclaim.c) */
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
	err = bpfmaps__stack_reader(p->skel, &sr->rr);
	if (err)
		goto fail;
	/* No signal for it: they are the loop's. */
	fatal__thread_signals(&all);
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
	ringread__close(&sr->rr);
	pthread_mutex_destroy(&sr->lock);
	free(sr);
	return err;
}

static void blobs_forget(struct blob_store *st)
{
	for (size_t i = 0; i < st->nr; i++)
		stack_blob__put(st->blobs[i]);
	st->nr = 0;
	idmap__clear(&st->of_id);
}

static void forget_all(struct stack_ring *sr)
{
	blobs_forget(&sr->native);
	blobs_forget(&sr->python);
	sr->pairs.nr = 0;
	idmap__clear(&sr->pairs.of_id);
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
		fprintf(stderr, "memleakbpf: stack ring (%llu KiB): %llu stacks and pairs received, "
			"%llu of them sent again (BPF forgot it sent them); %zu native stacks, "
			"%zu Python stacks and %zu pairs held at the end\n",
			(unsigned long long)bpfmaps__stack_ring_bytes(p->skel) >> 10,
			(unsigned long long)sr->received, (unsigned long long)sr->again,
			sr->native.nr, sr->python.nr, sr->pairs.nr);
	ringread__close(&sr->rr);
	forget_all(sr);
	idmap__free(&sr->native.of_id);
	idmap__free(&sr->python.of_id);
	idmap__free(&sr->pairs.of_id);
	free(sr->native.blobs);
	free(sr->python.blobs);
	free(sr->pairs.pairs);
	pthread_mutex_destroy(&sr->lock);
	free(sr);
	p->stack_ring = NULL;
}

void stack_ring__drain(struct probes *p)
{
	if (p->stack_ring)
		drain(p->stack_ring);
}

/* The blob of id in a store, held for the caller, or NULL. */
static struct stack_blob *blob_of(struct probes *p, bool python, uint64_t id)
{
	struct stack_ring *sr = p->stack_ring;
	struct stack_blob *b = NULL;
	struct blob_store *st;
	uint32_t i;

	if (!sr)
		return NULL;
	pthread_mutex_lock(&sr->lock);
	st = python ? &sr->python : &sr->native;
	if (idmap__get(&st->of_id, id, &i))
		b = stack_blob__hold(st->blobs[i]);
	pthread_mutex_unlock(&sr->lock);
	return b;
}

struct stack_blob *stack_ring__native(struct probes *p, uint64_t id)
{
	return blob_of(p, false, id);
}

struct stack_blob *stack_ring__python(struct probes *p, uint64_t id)
{
	return blob_of(p, true, id);
}

bool stack_ring__pair(struct probes *p, uint64_t id, struct stack_pair *out)
{
	struct stack_ring *sr = p->stack_ring;
	uint32_t i;
	bool has;

	if (!sr)
		return false;
	pthread_mutex_lock(&sr->lock);
	has = idmap__get(&sr->pairs.of_id, id, &i);
	if (has)
		*out = sr->pairs.pairs[i].pair;
	pthread_mutex_unlock(&sr->lock);
	return has;
}

/*
 * What a sweep lets go of, taken out of the stores under their lock and
 * handed to the retired store after it: the reader, which waits for the
 * lock, would otherwise leave the ring full for the 80 to 250 ms the
 * retired store's copies took on a torch job (stack_ring_full).
 */
struct letting_go {
	struct stack_blob **native, **python;	/* held */
	struct kept_pair *pairs;
	size_t nr_native, nr_python, nr_pairs;
};

/*
 * Entry i of an index out, the store's last (at nr, its count already one
 * less) moved into its place: the index loses one id and changes one
 * value, however many stay. A sweep lets go of a few hundred (a torch
 * job's training) to 100,000 (its import) of some 400,000 stacks and
 * pairs, and made both indexes anew for all those kept (each a fresh
 * array faulted in, every id put again), which the reader then grew again
 * from that size (a tenth of its CPU).
 */
static void unindex(struct idmap *of_id, uint64_t id, size_t i, size_t nr, uint64_t last)
{
	(void)idmap__del(of_id, id);
	if (i < nr)	/* id known: no room to make, no failure */
		(void)idmap__put(of_id, last, (uint32_t)i);
}

/*
 * An index whose ids fell to under an eighth of its room (a torch import
 * let go of) made anew with room for twice them: its room would stay
 * resident for ids gone. Without memory, it stays.
 */
static void fit_index(struct idmap *of_id, size_t n, uint64_t (*id_at)(const void *v, size_t i),
		      const void *v)
{
	struct idmap fit = {};

	if (of_id->cap <= 1024 || 8 * n >= of_id->cap || idmap__reserve(&fit, 2 * n))
		return;
	for (size_t i = 0; i < n; i++)	/* the room is there: no put fails */
		(void)idmap__put(&fit, id_at(v, i), (uint32_t)i);
	idmap__free(of_id);
	*of_id = fit;
}

static uint64_t blob_id_at(const void *v, size_t i)
{
	return ((struct stack_blob *const *)v)[i]->id;
}

static uint64_t pair_id_at(const void *v, size_t i)
{
	return ((const struct kept_pair *)v)[i].id;
}

/*
 * A store's stacks not named into *out (room for all of them: without it,
 * none is let go of), each replaced by the store's last.
 */
static size_t blobs_split(struct blob_store *st, const struct idmap *named,
			  struct stack_blob ***out)
{
	size_t gone = 0;

	*out = malloc((st->nr ?: 1) * sizeof(**out));
	if (!*out)
		return 0;
	for (size_t i = 0; i < st->nr;) {
		struct stack_blob *b = st->blobs[i];

		if (idmap__get(named, b->id, NULL)) {
			i++;
			continue;
		}
		(*out)[gone++] = b;
		st->blobs[i] = st->blobs[--st->nr];
		unindex(&st->of_id, b->id, i, st->nr, st->blobs[i]->id);
	}
	fit_index(&st->of_id, st->nr, blob_id_at, st->blobs);
	return gone;
}

/* The pairs named name their stacks and stay; the others into *out. */
static size_t pairs_split(struct pair_store *ps, struct idmap *named, struct kept_pair **out)
{
	size_t gone = 0;

	*out = malloc((ps->nr ?: 1) * sizeof(**out));
	if (!*out)
		return 0;
	for (size_t i = 0; i < ps->nr;) {
		struct kept_pair *k = &ps->pairs[i];

		if (idmap__get(named, k->id, NULL) && !idmap__put(named, k->pair.native, 0) &&
		    (!k->pair.python || !idmap__put(named, k->pair.python, 0))) {
			i++;
			continue;
		}
		(*out)[gone++] = *k;
		*k = ps->pairs[--ps->nr];
		unindex(&ps->of_id, (*out)[gone - 1].id, i, ps->nr, k->id);
	}
	fit_index(&ps->of_id, ps->nr, pair_id_at, ps->pairs);
	return gone;
}

/* Into the retired store (its lock held). No memory there: lost (a site that names one says so). */
static void retire(struct retired *r, struct letting_go *lg)
{
	for (size_t i = 0; i < lg->nr_pairs; i++)
		(void)retired__keep_pair(r, lg->pairs[i].id, &lg->pairs[i].pair);
	for (size_t i = 0; i < lg->nr_python; i++) {
		(void)retired__keep_python(r, lg->python[i]->id, NULL, lg->python[i]);
		stack_blob__put(lg->python[i]);
	}
	for (size_t i = 0; i < lg->nr_native; i++) {
		(void)retired__keep_native_blob(r, lg->native[i]->id, lg->native[i]);
		stack_blob__put(lg->native[i]);
	}
	free(lg->pairs);
	free(lg->python);
	free(lg->native);
}

size_t stack_ring__let_go(struct probes *p, struct idmap *named)
{
	struct stack_ring *sr = p->stack_ring;
	struct letting_go lg = {};

	if (!sr)
		return 0;
	pthread_mutex_lock(&sr->lock);
	/* The pairs first: the stacks of those kept are named. */
	lg.nr_pairs = pairs_split(&sr->pairs, named, &lg.pairs);
	lg.nr_python = blobs_split(&sr->python, named, &lg.python);
	lg.nr_native = blobs_split(&sr->native, named, &lg.native);
	pthread_mutex_unlock(&sr->lock);
	retire(p->rc.retired, &lg);
	return lg.nr_pairs + lg.nr_python + lg.nr_native;
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

size_t stack_ring__held(struct probes *p, size_t *python, size_t *pairs)
{
	struct stack_ring *sr = p->stack_ring;
	size_t n;

	*python = *pairs = 0;
	if (!sr)
		return 0;
	pthread_mutex_lock(&sr->lock);
	n = sr->native.nr;
	*python = sr->python.nr;
	*pairs = sr->pairs.nr;
	pthread_mutex_unlock(&sr->lock);
	return n;
}
