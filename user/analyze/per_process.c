// SPDX-License-Identifier: GPL-2.0
/* --follow: each traced process's figures (per_process.h). Pure. */
#include <errno.h>
#include <stdlib.h>
#include "per_process.h"

/* Index of tag in r->processes (tags ascend from the target's 0); -1 when unknown. */
static long index_of(const struct report *r, uint32_t tag)
{
	size_t lo = 0, hi = r->nr_processes;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r->processes[mid].tag == tag)
			return (long)mid;
		if (r->processes[mid].tag < tag)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

static void add_site(struct report_totals *t, const struct snap_site *s)
{
	t->outstanding_bytes += s->stats.outstanding_bytes;
	t->outstanding_allocs += s->stats.outstanding_allocs;
	t->allocs += s->stats.total_allocs;
}

/* The first n processes of ps as the report names them, after the target. */
static void copy_processes(struct processes *ps, size_t n, struct report *r)
{
	pthread_mutex_lock(&ps->lock);
	for (size_t i = 0; i < n && i < ps->nr; i++) {
		const struct process_info *p = &ps->v[i];

		r->processes[r->nr_processes++] = (struct report_process){
			.tag = p->tag, .pid = p->pid, .ppid = p->ppid, .command = p->command,
			.exited = p->exited, .execed = p->execed, .after_exec = p->exec_of != 0,
			.exec_freed_bytes = p->exec_freed_bytes,
			.exec_freed_allocs = p->exec_freed_blocks,
			/* An exec'd image is traced once its allocator is probed. */
			.traced = p->traced && (!p->exec_of || p->probed),
			.attached = p->attached,
		};
	}
	pthread_mutex_unlock(&ps->lock);
}

int per_process__build(const struct snapshot *snap, struct processes *ps, pid_t pid,
		       const char *command, bool exited, struct report *r)
{
	size_t n;

	pthread_mutex_lock(&ps->lock);
	n = ps->nr;
	pthread_mutex_unlock(&ps->lock);
	r->processes = calloc(n + 1, sizeof(*r->processes));
	if (!r->processes)
		return -ENOMEM;
	/* The target is in no table of ps: BPF follows its children, not it. */
	r->processes[0] = (struct report_process){ .pid = pid, .command = command,
						   .exited = exited, .traced = true };
	r->nr_processes = 1;
	copy_processes(ps, n, r);
	for (size_t i = 0; i < snap->nr; i++) {
		long at = index_of(r, snap->sites[i].proc);

		/*
		 * Every process is in the table before it runs (probe/follow.c),
		 * so before any site of its own: the target's is a fallback.
		 */
		add_site(&r->processes[at < 0 ? 0 : at].totals, &snap->sites[i]);
	}
	r->processes[0].totals.allocs += snap->forgotten_allocs;
	for (size_t i = 0; i < r->nr_processes; i++) {
		struct report_totals *t = &r->processes[i].totals;

		t->frees = t->allocs > t->outstanding_allocs ? t->allocs - t->outstanding_allocs : 0;
	}
	return 0;
}
