// SPDX-License-Identifier: GPL-2.0
/* The live blocks one by one, and the stop at _exit, for the reachability scan. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "probes_internal.h"
#include "probes_reach.h"
#include "util/vec.h"

/* The blocks of the table as they are (the target is held while this runs). */
struct block_list {
	struct probes *p;
	const struct site_brief *sites;
	struct live_block **out;
	size_t *nr, cap;
};

static int add_block(void *arg, struct alloc_bucket *bucket, size_t b, int i, uint64_t addr,
		     const struct alloc_info *info)
{
	struct block_list *l = arg;
	const struct site_brief *slot;

	/* --follow: another process's block; the scan reads the target's memory. */
	if (info->site >= l->p->tables.slots || info->proc)
		return 0;
	slot = &l->sites[info->site];
	if (vec__reserve_min(l->out, &l->cap, *l->nr + 1, sizeof(**l->out), 4096))
		return -ENOMEM;
	(*l->out)[(*l->nr)++] = (struct live_block){ addr, info->size, slot->stack_id, slot->api };
	return 0;
}

static int read_blocks(struct probes *p, struct live_block **out, size_t *nr)
{
	struct block_list l = { .p = p, .out = out, .nr = nr };
	struct site_brief *sites;
	int err = site_slot__briefs(p, &sites);

	if (err)
		return err;
	l.sites = sites;
	err = snapshot__each_block(p, add_block, &l);
	free(sites);
	return err;
}

int probes_reach__blocks(struct probes *p, struct live_block **out, size_t *nr)
{
	int err;

	*out = NULL;
	*nr = 0;
	/* A block's site is never reclaimed while it lives; the lock keeps a clear away. */
	pthread_mutex_lock(&p->rc.tables_lock);
	err = read_blocks(p, out, nr);
	pthread_mutex_unlock(&p->rc.tables_lock);
	if (err) {
		free(*out);
		*out = NULL;
		*nr = 0;
	}
	return err;
}

int probes_reach__attach_exit_stop(struct probes *p, const char *path, uint64_t offset)
{
	__u64 off = offset, cookie = 0;
	char *copy;
	int fd;

	if (p->exit_stop.fd >= 0 && p->exit_stop.pid == p->tgid && p->exit_stop.offset == offset &&
	    p->exit_stop.path && !strcmp(p->exit_stop.path, path))
		return 0;
	copy = strdup(path);
	if (!copy)
		return -ENOMEM;
	fd = probes_attach__link_uprobes(p, bpf_program__fd(p->skel->progs.exit_stop), path, &off,
				  &cookie, 1, false);
	if (fd < 0) {
		fprintf(stderr, "memleakbpf: cannot probe _exit in %s for --reach: %s\n", path,
			strerror(-fd));
		free(copy);
		return fd;
	}
	if (p->exit_stop.fd >= 0)
		close(p->exit_stop.fd);
	free(p->exit_stop.path);
	p->exit_stop.fd = fd;
	p->exit_stop.pid = p->tgid;
	p->exit_stop.offset = offset;
	p->exit_stop.path = copy;
	return 0;
}
