// SPDX-License-Identifier: GPL-2.0
/*
 * /proc/kallsyms into a table sorted by address (ksyms.h). Modules are
 * few: their names are kept once each, in a small list searched by name.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "ksyms.h"
#include "util/proc.h"
#include "util/procmaps.h"
#include "util/vec.h"

#define KSYMS_ID_HEX 81		/* a build id of up to 40 bytes, in hex */

struct kmodule {
	char *name;		/* "[ext4]" */
	uint64_t base, last;	/* its lowest and highest symbol */
	char build_id[KSYMS_ID_HEX];
	bool id_read;
};

struct ksyms {
	struct ksym *v;
	size_t nr, cap;
	char *names;		/* the text, its names cut out in place */
	struct kmodule *mods;
	size_t nr_mods, cap_mods;
};

static struct kmodule *module_of(struct ksyms *k, const char *name, size_t len)
{
	for (size_t i = 0; i < k->nr_mods; i++)
		if (!strncmp(k->mods[i].name, name, len) && !k->mods[i].name[len])
			return &k->mods[i];
	if (vec__reserve(&k->mods, &k->cap_mods, k->nr_mods + 1, sizeof(*k->mods)))
		return NULL;
	k->mods[k->nr_mods] = (struct kmodule){ .name = strndup(name, len), .base = UINT64_MAX };
	return k->mods[k->nr_mods].name ? &k->mods[k->nr_mods++] : NULL;
}

/* One line, cut in place: "ffffffff81000000 T _text" or "... t foo\t[ext4]". */
static int parse_line(struct ksyms *k, char *line)
{
	char *end, *name, *mod;
	uint64_t addr = strtoull(line, &end, 16);
	struct kmodule *m;
	char type;

	if (end == line || end[0] != ' ' || !end[1] || end[2] != ' ')
		return 0;
	type = end[1];
	if (type != 't' && type != 'T' && type != 'w' && type != 'W')
		return 0;
	name = end + 3;
	mod = strpbrk(name, " \t");
	if (mod) {
		*mod++ = '\0';
		mod += strspn(mod, " \t");
	}
	m = module_of(k, mod && *mod == '[' ? mod : KSYMS_VMLINUX,
		      mod && *mod == '[' ? strcspn(mod, " \t") : strlen(KSYMS_VMLINUX));
	if (!m || vec__reserve_min(&k->v, &k->cap, k->nr + 1, sizeof(*k->v), 4096))
		return -ENOMEM;
	if (addr < m->base)
		m->base = addr;
	if (addr > m->last)
		m->last = addr;
	k->v[k->nr++] = (struct ksym){ addr, name, m->name };
	return 0;
}

static int cmp_addr(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

int ksyms__parse(const char *text, struct ksyms **out)
{
	struct ksyms *k = calloc(1, sizeof(*k));
	char *line, *save = NULL;
	int err = 0;

	if (!k || !(k->names = strdup(text))) {
		free(k);
		return -ENOMEM;
	}
	for (line = strtok_r(k->names, "\n", &save); line && !err; line = strtok_r(NULL, "\n", &save))
		err = parse_line(k, line);
	if (!err && (!k->nr || !k->v[k->nr - 1].addr))
		err = -ENOENT;	/* none, or every address hidden */
	if (err) {
		ksyms__free(k);
		return err;
	}
	qsort(k->v, k->nr, sizeof(*k->v), cmp_addr);
	*out = k;
	return 0;
}

int ksyms__load(struct ksyms **out)
{
	int fd = open("/proc/kallsyms", O_RDONLY | O_CLOEXEC);
	char *text = NULL;
	int err = fd < 0 ? -errno : proc__read_fd(fd, 16 << 20, &text);

	if (fd >= 0)
		close(fd);
	if (!err)
		err = ksyms__parse(text, out);
	free(text);
	return err;
}

const struct ksym *ksyms__find(const struct ksyms *k, uint64_t addr)
{
	size_t lo = 0, hi = k ? k->nr : 0;

	if (!hi || addr < k->v[0].addr)
		return NULL;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (k->v[mid].addr <= addr)
			lo = mid;
		else
			hi = mid;
	}
	return &k->v[lo];
}

uint64_t ksyms__module_base(const struct ksyms *k, const char *module)
{
	for (size_t i = 0; k && i < k->nr_mods; i++)
		if (!strcmp(k->mods[i].name, module))
			return k->mods[i].base;
	return 0;
}

size_t ksyms__nr(const struct ksyms *k)
{
	return k ? k->nr : 0;
}

/* The first GNU build-id note of a notes file, in hex. */
static void read_build_id(const char *path, char *hex)
{
	unsigned char buf[4096];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf));
	size_t at = 0;

	if (fd >= 0)
		close(fd);
	hex[0] = '\0';
	while (n > 0 && at + 12 <= (size_t)n) {
		uint32_t namesz, descsz, type;

		memcpy(&namesz, buf + at, 4);
		memcpy(&descsz, buf + at + 4, 4);
		memcpy(&type, buf + at + 8, 4);
		at += 12;
		if (type == 3 && namesz == 4 && descsz <= 40 && at + 4 + descsz <= (size_t)n &&
		    !memcmp(buf + at, "GNU", 4)) {
			for (uint32_t i = 0; i < descsz; i++)
				sprintf(hex + 2 * i, "%02x", buf[at + 4 + i]);
			return;
		}
		at += ((namesz + 3) & ~3u) + ((descsz + 3) & ~3u);
	}
}

/* m's build id in hex, read at its first asking; "" when there is none. */
static const char *module_build_id(struct kmodule *m)
{
	char path[256];
	size_t len = strlen(m->name);

	if (!m->id_read && !strcmp(m->name, KSYMS_VMLINUX))
		read_build_id("/sys/kernel/notes", m->build_id);
	else if (!m->id_read && len > 2) {
		snprintf(path, sizeof(path), "/sys/module/%.*s/notes/.note.gnu.build-id",
			 (int)(len - 2), m->name + 1);
		read_build_id(path, m->build_id);
	}
	m->id_read = true;
	return m->build_id;
}

const char *ksyms__build_id(struct ksyms *k, const char *module)
{
	for (size_t i = 0; k && i < k->nr_mods; i++)
		if (!strcmp(k->mods[i].name, module))
			return module_build_id(&k->mods[i]);
	return "";
}

static int cmp_start(const void *a, const void *b)
{
	const struct map_entry *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* One mapping per module: from its first symbol to past its last one's start. */
int ksyms__maps(struct ksyms *k, struct maps **out)
{
	struct maps *m = calloc(1, sizeof(*m));

	if (!m || !(m->entries = calloc(k->nr_mods ?: 1, sizeof(*m->entries)))) {
		free(m);
		return -ENOMEM;
	}
	for (size_t i = 0; i < k->nr_mods; i++) {
		struct map_entry *e = &m->entries[m->nr];
		const char *id = module_build_id(&k->mods[i]);

		if (!k->mods[i].base || k->mods[i].base == UINT64_MAX)
			continue;	/* hidden addresses: no mapping */
		*e = (struct map_entry){ .start = k->mods[i].base, .end = k->mods[i].last + 1,
					 .readable = true, .executable = true,
					 .path = strdup(k->mods[i].name),
					 .build_id = id[0] ? strdup(id) : NULL };
		m->nr++;
		if (!e->path || (id[0] && !e->build_id)) {
			maps__free(m);
			return -ENOMEM;
		}
	}
	qsort(m->entries, m->nr, sizeof(*m->entries), cmp_start);
	*out = m;
	return 0;
}

void ksyms__free(struct ksyms *k)
{
	if (!k)
		return;
	for (size_t i = 0; i < k->nr_mods; i++)
		free(k->mods[i].name);
	free(k->mods);
	free(k->v);
	free(k->names);
	free(k);
}
