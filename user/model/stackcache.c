// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "stackcache.h"
#include "prefixes.h"
#include "util/idmap.h"
#include "util/vec.h"

/* A kept stack: a stack_ref's fields, in 32 bytes (a stack_ref pads to 24). */
struct entry {
	uint64_t id;
	struct stack_blob *native, *python;
	uint32_t proc;
	uint32_t gen;		/* the last reading that used it */
};

static struct stack_ref ref_of(const struct entry *e)
{
	return (struct stack_ref){ e->native, e->python, e->proc };
}

struct stackcache {
	struct entry *entries;
	size_t nr, cap;
	struct idmap index;	/* site stack id -> its entry in entries */
	/* Native and Python stack id -> an entry holding its blob. */
	struct idmap natives, pythons;
	uint32_t gen;
	size_t bytes;		/* of the blobs indexed: each once, however many hold it */
	/* Ids in each map when the reading began: those put since are its new ones. */
	size_t began_index, began_natives, began_pythons;
};

/* The frames of every blob, native and Python apart: made once, kept for the run. */
static struct prefixes *natives, *pythons;
static pthread_once_t stores_once = PTHREAD_ONCE_INIT;

static void stores_new(void)
{
	natives = prefixes__new(sizeof(uint64_t));
	pythons = prefixes__new(sizeof(struct py_frame));
}

static bool stores(void)
{
	pthread_once(&stores_once, stores_new);
	return natives && pythons;
}

size_t stack_blob__size(const struct stack_blob *b)
{
	return b ? sizeof(*b) + (b->has_py ? sizeof(b->python[0]) : 0) : 0;
}

/* A hash of nr frames and flags, every bit of each frame mixed in (a murmur-style finish). */
static uint64_t ips_hash(const uint64_t *ips, uint32_t nr, uint32_t flags)
{
	uint64_t h = 0x243f6a8885a308d3ull ^ ((uint64_t)flags << 32 | nr);

	for (uint32_t i = 0; i < nr; i++) {
		h ^= ips[i] * 0x9e3779b97f4a7c15ull;
		h = (h << 27 | h >> 37) * 0xff51afd7ed558ccdull;
	}
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	return h ^ h >> 33;
}

size_t stack_blob__flat_size(const struct stack_blob *b)
{
	uint32_t py;

	if (!b)
		return 0;
	py = !b->has_py ? 0 : b->python[0].nr < MEMLEAK_PY_MAX_FRAMES ? b->python[0].nr
								 : MEMLEAK_PY_MAX_FRAMES;
	return stack_blob__size(b) + b->nr_ips * sizeof(uint64_t) +
	       (b->has_py ? offsetof(struct py_stack, frames) + py * sizeof(struct py_frame) : 0);
}

struct stack_blob *stack_blob__new(uint64_t id, const struct stack_copy *s)
{
	uint32_t nr = s->nr_ips < MEMLEAK_MAX_STACK_DEPTH ? s->nr_ips : MEMLEAK_MAX_STACK_DEPTH;
	struct stack_blob *b = NULL;

	/* A native stack's blob is 32 bytes: the Python part only where there is one. */
	if (stores())
		b = malloc(sizeof(*b) + (s->py ? sizeof(b->python[0]) : 0));
	if (!b)
		return NULL;
	*b = (struct stack_blob){ .refs = 1, .id = id, .nr_ips = (uint8_t)nr,
				  .flags = (uint16_t)s->flags, .has_py = s->py != NULL,
				  .ips_hash = ips_hash(s->ips, nr, s->flags) };
	if (prefixes__intern(natives, s->ips, nr, &b->ips))
		goto fail;
	if (s->py) {
		uint32_t n = s->py->nr < MEMLEAK_PY_MAX_FRAMES ? s->py->nr : MEMLEAK_PY_MAX_FRAMES;

		b->python[0] = (struct stack_blob_py){ s->py->nr, s->py->flags, s->py->entries };
		if (prefixes__intern(pythons, s->py->frames, n, &b->py)) {
			prefixes__put(natives, b->ips);
			goto fail;
		}
	}
	return b;
fail:
	free(b);
	return NULL;
}

uint32_t stack_blob__ips(const struct stack_blob *b, uint64_t *out, uint32_t max)
{
	if (!b)
		return 0;
	max = max < b->nr_ips ? max : b->nr_ips;
	max = max < MEMLEAK_MAX_STACK_DEPTH ? max : MEMLEAK_MAX_STACK_DEPTH;
	return prefixes__walk(natives, b->ips, out, max);
}

size_t stackcache__py_size(uint32_t nr)
{
	nr = nr < MEMLEAK_PY_MAX_FRAMES ? nr : MEMLEAK_PY_MAX_FRAMES;
	return offsetof(struct py_stack, frames) + nr * sizeof(struct py_frame);
}

/* Python frames are few (a torch job keeps some 6,000 stacks of them): walked and compared. */
static bool same_py(const struct stack_blob *b, const struct py_stack *py)
{
	struct py_stack *mine = malloc(sizeof(*mine));
	bool same = mine && stack_blob__py(b, mine) &&
		    !memcmp(mine, py, stackcache__py_size(py->nr));

	free(mine);
	return same;
}

bool stack_blob__same(const struct stack_blob *b, const struct stack_copy *c)
{
	uint32_t nr = c->nr_ips < MEMLEAK_MAX_STACK_DEPTH ? c->nr_ips : MEMLEAK_MAX_STACK_DEPTH;

	if (c->py)
		return b->has_py && same_py(b, c->py);
	return !b->has_py && b->nr_ips == nr && b->flags == c->flags &&
	       b->ips_hash == ips_hash(c->ips, nr, c->flags);
}

const struct py_stack *stack_blob__py(const struct stack_blob *b, struct py_stack *out)
{
	if (!b || !b->has_py)
		return NULL;
	out->nr = b->python[0].nr;
	out->flags = b->python[0].flags;
	out->entries = b->python[0].entries;
	(void)prefixes__walk(pythons, b->py, out->frames, MEMLEAK_PY_MAX_FRAMES);
	return out;
}

struct py_frame *stack_blob__py_frames(size_t *nr)
{
	*nr = 0;
	return stores() ? prefixes__frames(pythons, nr) : NULL;
}

struct stack_blob *stack_blob__hold(struct stack_blob *b)
{
	if (b)
		__atomic_add_fetch(&b->refs, 1, __ATOMIC_RELAXED);
	return b;
}

void stack_blob__prefetch(const struct stack_blob *b)
{
	if (!b)
		return;
	prefixes__prefetch(natives, b->ips);
	prefixes__prefetch(pythons, b->py);
}

static bool exiting;

void stack_blob__exiting(void)
{
	__atomic_store_n(&exiting, true, __ATOMIC_RELAXED);
}

void stack_blob__put(struct stack_blob *b)
{
	if (__atomic_load_n(&exiting, __ATOMIC_RELAXED))
		return;
	if (b && !__atomic_sub_fetch(&b->refs, 1, __ATOMIC_ACQ_REL)) {
		prefixes__put(natives, b->ips);
		prefixes__put(pythons, b->py);
		free(b);
	}
}

void stack_ref__hold(const struct stack_ref *r)
{
	stack_blob__hold(r->native);
	stack_blob__hold(r->python);
}

void stack_ref__put(const struct stack_ref *r)
{
	stack_blob__put(r->native);
	stack_blob__put(r->python);
}

struct stackcache *stackcache__new(void)
{
	return calloc(1, sizeof(struct stackcache));
}

void stackcache__free(struct stackcache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->nr; i++)
		stack_ref__put(&(struct stack_ref){ .native = c->entries[i].native,
						    .python = c->entries[i].python });
	free(c->entries);
	idmap__free(&c->index);
	idmap__free(&c->natives);
	idmap__free(&c->pythons);
	free(c);
}

void stackcache__begin(struct stackcache *c)
{
	c->gen++;
	c->began_index = c->index.nr;
	c->began_natives = c->natives.nr;
	c->began_pythons = c->pythons.nr;
}

bool stackcache__get(struct stackcache *c, uint64_t id, struct stack_ref *out)
{
	uint32_t at;

	if (!idmap__get(&c->index, id, &at))
		return false;
	c->entries[at].gen = c->gen;
	*out = ref_of(&c->entries[at]);
	stack_ref__hold(out);
	return true;
}

/* Index the blobs of entry at by their own ids, where none is yet. */
static int index_blobs(struct stackcache *c, uint32_t at)
{
	const struct stack_ref r_of = ref_of(&c->entries[at]), *r = &r_of;
	int put;

	if (r->native && r->native->id != MEMLEAK_NO_STACK) {
		put = idmap__put_new(&c->natives, r->native->id, at);
		if (put < 0)
			return -ENOMEM;
		c->bytes += put ? stack_blob__size(r->native) : 0;
	}
	if (r->python) {
		put = idmap__put_new(&c->pythons, r->python->id, at);
		if (put < 0)
			return -ENOMEM;
		c->bytes += put ? stack_blob__size(r->python) : 0;
	}
	return 0;
}

int stackcache__put(struct stackcache *c, uint64_t id, const struct stack_ref *ref)
{
	struct entry *e;
	int put;

	if (vec__reserve_min(&c->entries, &c->cap, c->nr + 1, sizeof(*e), 1024))
		return -ENOMEM;
	/* A site new to the reading: one probe of the index to look and to insert. */
	put = idmap__put_new(&c->index, id, (uint32_t)c->nr);
	if (put <= 0)
		return put < 0 ? -ENOMEM : 0;
	e = &c->entries[c->nr];
	*e = (struct entry){ id, ref->native, ref->python, ref->proc, c->gen };
	stack_ref__hold(ref);
	/* Not indexed, its blobs are not shared: the entry itself stands. */
	(void)index_blobs(c, (uint32_t)c->nr++);
	return 0;
}

struct stack_blob *stackcache__native(const struct stackcache *c, uint64_t id)
{
	uint32_t at;

	return idmap__get(&c->natives, id, &at) ? c->entries[at].native : NULL;
}

struct stack_blob *stackcache__python(const struct stackcache *c, uint64_t id)
{
	uint32_t at;

	return idmap__get(&c->pythons, id, &at) ? c->entries[at].python : NULL;
}

/*
 * Index the kept entries again, at their new places. The maps and the
 * entries are sized to what is kept: after the import of a torch job the
 * cache falls from 420,000 stacks to 270,000, and its maps, cleared at
 * their old size, stayed resident at twice what they held (36 MiB). And
 * room for as many new ids as this reading put (none once the stacks
 * stop changing): sized to what was kept alone, the maps doubled again
 * at each of the import's readings (each a new room faulted in and every
 * id moved).
 */
static void reindex(struct stackcache *c)
{
	size_t natives = c->natives.nr < c->nr ? c->natives.nr : c->nr;
	size_t pythons = c->pythons.nr < c->nr ? c->pythons.nr : c->nr;

	/* Never larger than they were and would grow to; without room for smaller ones, the old ones, cleared. */
	(void)idmap__reset(&c->index, c->nr + c->index.nr - c->began_index);
	(void)idmap__reset(&c->natives, natives + c->natives.nr - c->began_natives);
	(void)idmap__reset(&c->pythons, pythons + c->pythons.nr - c->began_pythons);
	vec__fit(&c->entries, &c->cap, c->nr, sizeof(*c->entries));
	c->bytes = 0;
	/* Room for them all: a put grows a map only where a blob went unindexed before. */
	for (size_t i = 0; i < c->nr; i++) {
		(void)idmap__put(&c->index, c->entries[i].id, (uint32_t)i);
		(void)index_blobs(c, (uint32_t)i);
	}
}

/* Keep the used stacks at the front, and index them again. */
void stackcache__end(struct stackcache *c)
{
	size_t kept = 0;

	for (size_t i = 0; i < c->nr; i++) {
		struct entry *e = &c->entries[i];

		if (e->gen != c->gen) {
			stack_ref__put(&(struct stack_ref){ .native = e->native, .python = e->python });
			continue;
		}
		c->entries[kept++] = *e;
	}
	if (kept == c->nr)
		return;
	c->nr = kept;
	reindex(c);
}

size_t stackcache__nr(const struct stackcache *c)
{
	return c->nr;
}

size_t stackcache__bytes(const struct stackcache *c)
{
	return c->bytes + c->cap * sizeof(*c->entries) + idmap__bytes(&c->index) +
	       idmap__bytes(&c->natives) + idmap__bytes(&c->pythons);
}

size_t stackcache__frame_nodes(void)
{
	return prefixes__nodes(natives) + prefixes__nodes(pythons);
}

size_t stackcache__frame_bytes(void)
{
	return prefixes__bytes(natives) + prefixes__bytes(pythons);
}
