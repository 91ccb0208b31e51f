// SPDX-License-Identifier: GPL-2.0
/*
 * The target's memory from /proc. Both status and smaps_rollup are read:
 * status is cheap but its counters are per-CPU approximations on recent
 * kernels; smaps_rollup walks the page tables and is exact, but may be
 * missing (older kernels, no permission), so status is the fallback.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "memstat.h"
#include "util/proc.h"
#include "util/procmaps.h"

static const char *next_line(const char *p)
{
	p = strchr(p, '\n');
	return p ? p + 1 : NULL;
}

/* "Key:   1234 kB" at the start of a line of text, in bytes. -ENOENT if absent. */
static int field_kb(const char *text, const char *key, uint64_t *bytes)
{
	size_t klen = strlen(key);

	for (const char *p = text; p; p = next_line(p)) {
		unsigned long long v;
		char *end;

		if (strncmp(p, key, klen))
			continue;
		p += klen;
		while (*p == ' ' || *p == '\t')
			p++;
		if (!isdigit((unsigned char)*p))
			return -EINVAL;
		v = strtoull(p, &end, 10);
		if (strncmp(end, " kB", 3))
			return -EINVAL;
		*bytes = v * 1024;
		return 0;
	}
	return -ENOENT;
}

int memstat__parse_status(const char *text, struct memstat *m)
{
	if (field_kb(text, "VmRSS:", &m->rss))
		return -EINVAL;
	/* Before 4.5 there is no RssAnon: all of RSS then, an overestimate. */
	if (field_kb(text, "RssAnon:", &m->anon))
		m->anon = m->rss;
	if (field_kb(text, "VmSwap:", &m->swap))
		m->swap = 0;
	m->rollup = false;
	return 0;
}

int memstat__parse_rollup(const char *text, struct memstat *m)
{
	uint64_t rss, anon;

	if (field_kb(text, "Rss:", &rss) || field_kb(text, "Anonymous:", &anon))
		return -EINVAL;
	m->rss = rss;
	m->anon = anon;
	if (field_kb(text, "Swap:", &m->swap))
		m->swap = 0;
	m->rollup = true;
	return 0;
}

static bool anon_private(const struct map_entry *e)
{
	return !e->shared && !e->inode && !e->path[0] && !e->executable;
}

static bool rw(const struct map_entry *e)
{
	return e->readable && e->writable;
}

/*
 * The read-write bytes of a thread-arena heap at a (inside entry i), or 0
 * when the MEMSTAT_ARENA_HEAP bytes from a are not one. glibc maps such a
 * heap whole with no access and opens it front first as it grows, so it is
 * anonymous memory from a: read-write, then perhaps no-access, up to the
 * end, with no gap.
 */
static uint64_t heap_at(const struct maps *maps, size_t i, uint64_t a)
{
	uint64_t end = a + MEMSTAT_ARENA_HEAP, pos = a, used = 0;
	bool closed = false;

	for (; i < maps->nr && pos < end; i++) {
		const struct map_entry *e = &maps->entries[i];
		uint64_t hi = e->end < end ? e->end : end;

		if (e->start > pos || e->end <= pos || !anon_private(e))
			break;
		if (rw(e) && !closed)
			used += hi - pos;
		else if (!e->readable && !e->writable)
			closed = true;
		else
			break;
		pos = hi;
	}
	return pos == end ? used : 0;
}

/*
 * Heaps start a mapping, except that the kernel merges a full heap's
 * read-write part with the next heap's: so a heap is looked for at the
 * start of a read-write anonymous mapping, and then at each multiple of the
 * heap size after a full one. A large malloc'd block is an anonymous mapping
 * too, but almost never starts at a multiple of 64 MiB.
 */
static void add_arenas(const struct maps *maps, size_t i, struct memstat *m)
{
	const struct map_entry *e = &maps->entries[i];
	uint64_t a = e->start, used;

	if (!anon_private(e) || !rw(e) || a % MEMSTAT_ARENA_HEAP)
		return;
	for (; a < e->end; a += MEMSTAT_ARENA_HEAP) {
		used = heap_at(maps, i, a);
		if (!used)
			return;
		m->arenas++;
		m->arena += used;
		m->arena_reserved += MEMSTAT_ARENA_HEAP;
		if (used < MEMSTAT_ARENA_HEAP)
			return;
	}
}

void memstat__add_maps(const struct maps *maps, struct memstat *m)
{
	m->heap = m->arena = m->arena_reserved = 0;
	m->arenas = 0;
	for (size_t i = 0; i < maps->nr; i++) {
		const struct map_entry *e = &maps->entries[i];

		if (!strcmp(e->path, "[heap]"))
			m->heap += e->end - e->start;
		else
			add_arenas(maps, i, m);
	}
}

/*
 * Has pid begun to exit? Its mappings are being torn down then, its RSS
 * not yet: a reading would say its heap is gone ([heap] 0 B) while its
 * memory is not, and judge from that.
 */
static bool exiting(pid_t pid)
{
	struct proc_stat st;

	return proc__stat(pid, &st) || (st.flags & PROC_PF_EXITING) || st.state == 'Z' ||
	       st.state == 'X';
}

int memstat__read(pid_t pid, struct memstat *m)
{
	struct maps *maps;
	char *text = NULL;
	int err;

	memset(m, 0, sizeof(*m));
	err = proc__read(pid, "status", &text);
	if (!err)
		err = memstat__parse_status(text, m);
	free(text);
	if (err)
		return err;
	/* The rest only refines: without it the status figures stand. */
	text = NULL;
	if (!proc__read(pid, "smaps_rollup", &text))
		memstat__parse_rollup(text, m);
	free(text);
	if (!maps__read(pid, &maps)) {
		memstat__add_maps(maps, m);
		maps__free(maps);
	}
	return exiting(pid) ? -ESRCH : 0;
}
