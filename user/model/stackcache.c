// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "stackcache.h"
#include "util/idmap.h"
#include "util/vec.h"

struct entry {
	uint64_t id;
	uint32_t gen;		/* the last reading that used it */
	struct stack_blob *blob;
};

struct stackcache {
	struct entry *entries;
	size_t nr, cap;
	struct idmap index;	/* id -> its entry in entries */
	uint32_t gen;
	size_t bytes;		/* of the blobs */
};

size_t stackcache__py_size(uint32_t nr)
{
	nr = nr < MEMLEAK_PY_MAX_FRAMES ? nr : MEMLEAK_PY_MAX_FRAMES;
	return offsetof(struct py_stack, frames) + nr * sizeof(struct py_frame);
}

static size_t blob_size(const struct stack_copy *s)
{
	return sizeof(struct stack_blob) + s->nr_ips * sizeof(*s->ips) +
	       (s->py ? stackcache__py_size(s->py->nr) : 0);
}

struct stack_blob *stack_blob__new(const struct stack_copy *s)
{
	struct stack_blob *b = malloc(blob_size(s));
	size_t ips = s->nr_ips * sizeof(*s->ips);

	if (!b)
		return NULL;
	b->refs = 1;
	b->s = (struct stack_copy){ .nr_ips = s->nr_ips, .flags = s->flags, .proc = s->proc };
	/* The frames right after the header, then the Python frames: all 8-byte aligned. */
	b->s.ips = (uint64_t *)(b + 1);
	memcpy(b->s.ips, s->ips, ips);
	if (s->py) {
		b->s.py = (struct py_stack *)((char *)b->s.ips + ips);
		memcpy(b->s.py, s->py, stackcache__py_size(s->py->nr));
	}
	return b;
}

struct stack_blob *stack_blob__hold(struct stack_blob *b)
{
	__atomic_add_fetch(&b->refs, 1, __ATOMIC_RELAXED);
	return b;
}

void stack_blob__put(struct stack_blob *b)
{
	if (b && !__atomic_sub_fetch(&b->refs, 1, __ATOMIC_ACQ_REL))
		free(b);
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
		stack_blob__put(c->entries[i].blob);
	free(c->entries);
	idmap__free(&c->index);
	free(c);
}

void stackcache__begin(struct stackcache *c)
{
	c->gen++;
}

struct stack_blob *stackcache__get(struct stackcache *c, uint64_t id)
{
	uint32_t at;

	if (!idmap__get(&c->index, id, &at))
		return NULL;
	c->entries[at].gen = c->gen;
	return stack_blob__hold(c->entries[at].blob);
}

int stackcache__put(struct stackcache *c, uint64_t id, struct stack_blob *b)
{
	struct entry *e;

	if (idmap__get(&c->index, id, NULL))
		return 0;
	if (vec__reserve_min(&c->entries, &c->cap, c->nr + 1, sizeof(*e), 1024) ||
	    idmap__put(&c->index, id, (uint32_t)c->nr))
		return -ENOMEM;
	c->entries[c->nr++] = (struct entry){ id, c->gen, stack_blob__hold(b) };
	c->bytes += blob_size(&b->s);
	return 0;
}

/* Keep the used copies at the front, and index them again. */
void stackcache__end(struct stackcache *c)
{
	size_t kept = 0;

	for (size_t i = 0; i < c->nr; i++) {
		struct entry *e = &c->entries[i];

		if (e->gen != c->gen) {
			c->bytes -= blob_size(&e->blob->s);
			stack_blob__put(e->blob);
			continue;
		}
		c->entries[kept++] = *e;
	}
	if (kept == c->nr)
		return;
	c->nr = kept;
	idmap__clear(&c->index);
	/* Room for them all is there already: idmap__put cannot fail below its size. */
	for (size_t i = 0; i < kept; i++)
		(void)idmap__put(&c->index, c->entries[i].id, (uint32_t)i);
}

size_t stackcache__nr(const struct stackcache *c)
{
	return c->nr;
}

size_t stackcache__bytes(const struct stackcache *c)
{
	return c->bytes + c->cap * sizeof(*c->entries) + idmap__bytes(&c->index);
}
