// SPDX-License-Identifier: GPL-2.0
/*
 * /tmp/perf-PID.map: names for code a JIT generated into anonymous memory.
 * perfmap__parse and perfmap__find are pure, for the unit tests;
 * perfmap__load finds and reads the file of a live process.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "perfmap.h"
#include "util/proc.h"
#include "util/rootpath.h"
#include "util/vec.h"

/* Larger than any JIT's map; a file beyond it is not one to read whole. */
#define PERFMAP_MAX_BYTES (512ull << 20)

struct perfmap {
	struct perfmap_entry *v;	/* by start, then line order */
	uint64_t *max_end;		/* highest end among v[0..i]: where a lookup may stop */
	size_t nr;
	/* The file it was read from: reread only when that changes. */
	pid_t pid;
	char path[64];
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
};

/* A hex number, with or without 0x, then at least one blank. */
static bool parse_hex_field(const char **p, const char *eol, uint64_t *out)
{
	const char *s = *p;
	char *end;

	if (eol - s > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	if (s >= eol || !isxdigit((unsigned char)*s))
		return false;
	errno = 0;
	*out = strtoull(s, &end, 16);
	if (errno || end >= eol || (*end != ' ' && *end != '\t'))
		return false;
	while (end < eol && (*end == ' ' || *end == '\t'))
		end++;
	*p = end;
	return true;
}

/* One "START SIZE name" line [s, eol) into e; false when it is not one. */
static bool parse_line(const char *s, const char *eol, struct perfmap_entry *e)
{
	const char *name;

	if (!parse_hex_field(&s, eol, &e->start) || !parse_hex_field(&s, eol, &e->size))
		return false;
	name = s;
	while (eol > name && (eol[-1] == '\r' || eol[-1] == ' '))
		eol--;
	if (eol == name || !e->size)
		return false;
	if (e->start + e->size < e->start)
		e->size = UINT64_MAX - e->start;	/* clamp, rather than wrap */
	e->name = strndup(name, eol - name);
	return e->name != NULL;
}

static int by_start(const void *a, const void *b)
{
	const struct perfmap_entry *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int append(struct perfmap *pm, size_t *cap, const struct perfmap_entry *e)
{
	if (vec__reserve_min(&pm->v, cap, pm->nr + 1, sizeof(*e), 64))
		return -ENOMEM;
	pm->v[pm->nr++] = *e;
	return 0;
}

/* Sort, and note for every entry the highest end at or before it. */
static int index_entries(struct perfmap *pm)
{
	uint64_t hi = 0;

	if (pm->nr)	/* qsort(NULL, 0, ...) is undefined behaviour */
		qsort(pm->v, pm->nr, sizeof(*pm->v), by_start);
	pm->max_end = malloc((pm->nr ?: 1) * sizeof(*pm->max_end));
	if (!pm->max_end)
		return -ENOMEM;
	for (size_t i = 0; i < pm->nr; i++) {
		uint64_t end = pm->v[i].start + pm->v[i].size;

		hi = end > hi ? end : hi;
		pm->max_end[i] = hi;
	}
	return 0;
}

int perfmap__parse(const char *text, struct perfmap **out)
{
	struct perfmap *pm = calloc(1, sizeof(*pm));
	size_t cap = 0, seq = 0;
	int err = 0;

	if (!pm)
		return -ENOMEM;
	for (const char *s = text; *s && !err;) {
		const char *eol = strchr(s, '\n');
		struct perfmap_entry e = { .seq = seq++ };

		if (!eol)
			break;	/* still being written */
		if (parse_line(s, eol, &e)) {
			err = append(pm, &cap, &e);
			if (err)
				free(e.name);
		}
		s = eol + 1;
	}
	err = err ?: index_entries(pm);
	if (err) {
		perfmap__free(pm);
		return err;
	}
	*out = pm;
	return 0;
}

const struct perfmap_entry *perfmap__find(const struct perfmap *pm, uint64_t addr)
{
	const struct perfmap_entry *best = NULL;
	size_t lo = 0, hi = pm ? pm->nr : 0;

	/* hi: the first entry starting above addr. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (pm->v[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = hi; i-- > 0 && pm->max_end[i] > addr;) {
		const struct perfmap_entry *e = &pm->v[i];

		if (addr - e->start < e->size && (!best || e->seq > best->seq))
			best = e;
	}
	return best;
}

size_t perfmap__nr(const struct perfmap *pm)
{
	return pm ? pm->nr : 0;
}

const char *perfmap__path(const struct perfmap *pm)
{
	return pm->path;
}

/* The last NSpid field of /proc/PID/status. */
int perfmap__nspid(pid_t pid, pid_t *nspid)
{
	char value[256], *last;
	int err = proc__status(pid, "NSpid", value, sizeof(value));

	if (!err) {
		last = strrchr(value, '\t');
		*nspid = atoi(last ? last + 1 : value);
		err = *nspid > 0 ? 0 : -EINVAL;
	}
	/* Kernels before 4.1 have no NSpid: no pid namespaces to tell apart. */
	if (err == -ENOENT) {
		*nspid = pid;
		err = 0;
	}
	return err;
}

static bool unchanged(const struct perfmap *pm, pid_t pid, const struct stat *st)
{
	return pm && pm->pid == pid && pm->dev == st->st_dev && pm->ino == st->st_ino &&
	       pm->size == st->st_size && pm->mtime.tv_sec == st->st_mtim.tv_sec &&
	       pm->mtime.tv_nsec == st->st_mtim.tv_nsec;
}

/*
 * The map inside the target's root: the target writes it, so its symbolic
 * links may point anywhere in its root but never out of it (rootpath.c).
 * Once the target is gone, its root is too: then, if it shared our pid
 * namespace (nspid == pid), it most likely shared our /tmp, and perf reads
 * the file from there just the same; not through a symbolic link, which
 * anyone could have planted in /tmp. O_NONBLOCK: a FIFO must not hang us.
 */
static int open_map(pid_t pid, pid_t nspid)
{
	char path[128];
	struct stat st;
	int fd;

	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)nspid);
	fd = rootpath__open(pid, path, O_RDONLY | O_NONBLOCK);
	if (fd >= 0 || nspid != pid)
		return fd;
	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	if (!stat(path, &st) || errno != ENOENT)
		return -ENOENT;
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)pid);
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
	return fd >= 0 ? fd : -errno;
}

int perfmap__load(pid_t pid, pid_t nspid, struct perfmap **pm)
{
	char *text = NULL;
	struct perfmap *n;
	struct stat st;
	int fd, err;

	if (*pm && (*pm)->pid != pid) {
		perfmap__free(*pm);	/* another process's (a shell's, before its child) */
		*pm = NULL;
	}
	fd = open_map(pid, nspid);
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) || unchanged(*pm, pid, &st)) {
		close(fd);
		return 0;
	}
	/* A device (/dev/zero) or a huge sparse file would never end. */
	if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size > PERFMAP_MAX_BYTES) {
		close(fd);
		return -EINVAL;
	}
	err = proc__read_fd(fd, (size_t)st.st_size, &text);
	close(fd);
	if (err)
		return err;
	err = perfmap__parse(text, &n);
	free(text);
	if (err)
		return err;
	n->pid = pid;
	snprintf(n->path, sizeof(n->path), "/tmp/perf-%d.map", (int)nspid);
	n->dev = st.st_dev;
	n->ino = st.st_ino;
	n->size = st.st_size;
	n->mtime = st.st_mtim;
	perfmap__free(*pm);
	*pm = n;
	return 0;
}

void perfmap__free(struct perfmap *pm)
{
	if (!pm)
		return;
	for (size_t i = 0; i < pm->nr; i++)
		free(pm->v[i].name);
	free(pm->v);
	free(pm->max_end);
	free(pm);
}
