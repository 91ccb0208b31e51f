// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel's cost of a map, after kernel/bpf/{arraymap,hashtab,stackmap,
 * ringbuf}.c, rounded up where the kernel rounds; and the memory we may
 * use, from /proc/meminfo and the memory cgroups (v2 memory.max and
 * memory.current, v1 memory.limit_in_bytes and memory.usage_in_bytes) of
 * every level up to the root, since any of them may be the tight one.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/bpf.h>
#include "mapmem.h"
#include "proc.h"

#define HTAB_ELEM_OVERHEAD 48	/* struct htab_elem before its key */
#define HTAB_BUCKET 16		/* struct bucket */
#define STACK_BUCKET_OVERHEAD 24	/* struct stack_map_bucket before its ips */

static uint64_t round8(uint64_t n)
{
	return (n + 7) & ~7ull;
}

static uint64_t pow2_up(uint64_t n)
{
	uint64_t v = 1;

	while (v < n)
		v <<= 1;
	return v;
}

uint64_t mapmem__cost(const struct mapmem_map *m, unsigned ncpus)
{
	uint64_t n = m->max_entries, elem = round8(m->key_size) + round8(m->value_size);

	switch (m->type) {
	case BPF_MAP_TYPE_ARRAY:
		return n * round8(m->value_size);
	case BPF_MAP_TYPE_PERCPU_ARRAY:
		return n * round8(m->value_size) * ncpus;
	case BPF_MAP_TYPE_HASH:
	case BPF_MAP_TYPE_LRU_HASH:
		/* BPF_F_NO_PREALLOC grows on use: at worst as much when full. */
		return n * (HTAB_ELEM_OVERHEAD + elem) + pow2_up(n) * HTAB_BUCKET;
	case BPF_MAP_TYPE_PERCPU_HASH:
	case BPF_MAP_TYPE_LRU_PERCPU_HASH:
		return n * (HTAB_ELEM_OVERHEAD + round8(m->key_size) +
			    round8(m->value_size) * ncpus) + pow2_up(n) * HTAB_BUCKET;
	case BPF_MAP_TYPE_STACK_TRACE:
		return n * (STACK_BUCKET_OVERHEAD + m->value_size) + pow2_up(n) * 8;
	case BPF_MAP_TYPE_RINGBUF:
		return n;
	case BPF_MAP_TYPE_TASK_STORAGE:
		return 0;	/* per task, on use: a few bytes a thread */
	default:
		return n * elem;
	}
}

int mapmem__parse_meminfo(const char *text, uint64_t *bytes)
{
	const char *p = strstr(text, "MemAvailable:");
	unsigned long long kb;

	if (!p || sscanf(p, "MemAvailable: %llu kB", &kb) != 1)
		return -EINVAL;
	*bytes = (uint64_t)kb * 1024;
	return 0;
}

static int read_text(const char *path, char **out)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), err;

	if (fd < 0)
		return -errno;
	err = proc__read_fd(fd, 4096, out);
	close(fd);
	return err;
}

static int read_u64(const char *dir, const char *file, uint64_t *v)
{
	char path[PATH_MAX], *text;
	int err;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	err = read_text(path, &text);
	if (err)
		return err;
	/* "max" (v2, no limit) does not parse: no limit at that level. */
	err = sscanf(text, "%llu", (unsigned long long *)v) == 1 ? 0 : -EINVAL;
	free(text);
	return err;
}

/* The room under the limits of dir and each of its parents down to base. */
static void cgroup_room(const char *base, const char *path, const char *max_file,
			const char *cur_file, uint64_t *room)
{
	char dir[PATH_MAX];
	size_t len;

	snprintf(dir, sizeof(dir), "%s%s", base, path);
	for (;;) {
		uint64_t max, cur;

		if (!read_u64(dir, max_file, &max) && !read_u64(dir, cur_file, &cur))
			*room = max > cur ? (max - cur < *room ? max - cur : *room) : 0;
		len = strlen(dir);
		if (len <= strlen(base))
			break;
		while (len > strlen(base) && dir[len - 1] != '/')
			len--;
		dir[len > strlen(base) ? len - 1 : len] = '\0';
	}
}

/* Our memory cgroups' room: "0::/path" (v2) and "N:memory:/path" (v1) lines. */
static uint64_t cgroup_limit(void)
{
	uint64_t room = UINT64_MAX;
	char *text, *line, *save = NULL;

	if (read_text("/proc/self/cgroup", &text))
		return room;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *path = strchr(line, ':') ? strchr(strchr(line, ':') + 1, ':') : NULL;

		if (!path)
			continue;
		if (!strncmp(line, "0::", 3))
			cgroup_room("/sys/fs/cgroup", path + 1, "memory.max", "memory.current",
				    &room);
		else if (strstr(line, ":memory:"))
			cgroup_room("/sys/fs/cgroup/memory", path + 1, "memory.limit_in_bytes",
				    "memory.usage_in_bytes", &room);
	}
	free(text);
	return room;
}

int mapmem__budget(struct mapmem_budget *b)
{
	uint64_t room;
	char *text;
	int err = read_text("/proc/meminfo", &text);

	if (err)
		return err;
	err = mapmem__parse_meminfo(text, &b->bytes);
	free(text);
	if (err)
		return err;
	b->source = "MemAvailable";
	room = cgroup_limit();
	if (room < b->bytes) {
		b->bytes = room;
		b->source = "the memory cgroup's limit";
	}
	return 0;
}
