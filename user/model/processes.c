// SPDX-License-Identifier: GPL-2.0
/* --follow's table of processes, by tag (processes.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "processes.h"
#include "util/vec.h"

void processes__init(struct processes *ps)
{
	memset(ps, 0, sizeof(*ps));
	pthread_mutex_init(&ps->lock, NULL);
}

int processes__add(struct processes *ps, const struct process_info *info)
{
	struct process_info *p;
	int err = 0;

	pthread_mutex_lock(&ps->lock);
	if (vec__reserve_min(&ps->v, &ps->cap, ps->nr + 1, sizeof(*ps->v), 64)) {
		err = -ENOMEM;
		goto out;
	}
	p = &ps->v[ps->nr];
	*p = *info;
	p->command = info->command ? strdup(info->command) : NULL;
	ps->nr++;
	if (info->exec_of)
		goto out;	/* not forked: its hold is its exec's (processes__probed) */
	ps->held += !info->attached;
	ps->total_hold_ms += info->hold_ms;
	if (!info->attached && info->hold_ms >= ps->max_hold_ms) {
		ps->max_hold_ms = info->hold_ms;
		ps->max_hold_tag = info->tag;
	}
out:
	pthread_mutex_unlock(&ps->lock);
	return err;
}

static int by_tag(const void *key, const void *elem)
{
	uint32_t tag = *(const uint32_t *)key, other = ((const struct process_info *)elem)->tag;

	return tag < other ? -1 : tag > other;
}

/* Called with the lock held. */
static struct process_info *find(struct processes *ps, uint32_t tag)
{
	return ps->nr ? bsearch(&tag, ps->v, ps->nr, sizeof(*ps->v), by_tag) : NULL;
}

/* p ended (the lock held): its place in the order of ends, once. */
static void mark_end(struct processes *ps, struct process_info *p)
{
	if (!p->end_seq)
		p->end_seq = ++ps->ends;
}

void processes__gone(struct processes *ps, uint32_t tag, bool exec)
{
	struct process_info *p;

	pthread_mutex_lock(&ps->lock);
	p = find(ps, tag);
	if (p) {
		p->exited |= !exec;
		p->execed |= exec;
		mark_end(ps, p);
	}
	pthread_mutex_unlock(&ps->lock);
}

void processes__probed(struct processes *ps, uint32_t tag, double ms)
{
	struct process_info *p;

	pthread_mutex_lock(&ps->lock);
	p = find(ps, tag);
	if (p) {
		p->probed = true;
		p->hold_ms = ms;
		ps->execs_probed++;
		ps->total_exec_ms += ms;
		if (ms >= ps->max_exec_ms) {
			ps->max_exec_ms = ms;
			ps->max_exec_tag = tag;
		}
	}
	pthread_mutex_unlock(&ps->lock);
}

void processes__execed(struct processes *ps, uint32_t tag, uint64_t bytes, uint64_t blocks)
{
	struct process_info *p;

	pthread_mutex_lock(&ps->lock);
	p = find(ps, tag);
	if (p) {
		p->execed = true;
		mark_end(ps, p);
		p->exec_freed_bytes += bytes;
		p->exec_freed_blocks += blocks;
	}
	pthread_mutex_unlock(&ps->lock);
}

bool processes__get(struct processes *ps, uint32_t tag, struct process_info *out)
{
	struct process_info *p;

	pthread_mutex_lock(&ps->lock);
	p = find(ps, tag);
	if (p)
		*out = *p;
	pthread_mutex_unlock(&ps->lock);
	return p != NULL;
}

uint64_t processes__ends(struct processes *ps)
{
	uint64_t n;

	pthread_mutex_lock(&ps->lock);
	n = ps->ends;
	pthread_mutex_unlock(&ps->lock);
	return n;
}

bool processes__ended_by(struct processes *ps, uint32_t tag, uint64_t ends)
{
	struct process_info info;

	return processes__get(ps, tag, &info) && info.end_seq && info.end_seq <= ends;
}

void processes__free(struct processes *ps)
{
	for (size_t i = 0; i < ps->nr; i++)
		free(ps->v[i].command);
	free(ps->v);
	pthread_mutex_destroy(&ps->lock);
	memset(ps, 0, sizeof(*ps));
}
