// SPDX-License-Identifier: GPL-2.0
/*
 * /proc/PID/maps parsing. maps__parse is pure so that it can be tested on
 * saved text; maps__read is the only function here that does I/O.
 *
 * A line is "start-end perms offset major:minor inode   path", all numbers in
 * hex except the inode. The path is everything after the padding, so it may
 * contain spaces; the kernel escapes newlines in it as "\012".
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "proc.h"
#include "procmaps.h"
#include "util/vec.h"

#define DELETED_SUFFIX " (deleted)"

/* Parse an unsigned number at *p in base, advancing *p; -EINVAL if none. */
static int parse_num(const char **p, int base, uint64_t *val)
{
	const char *s = *p;
	char *end;

	/* strtoull would accept blanks, a sign or 0x: maps never has them. */
	if (base == 16 ? !isxdigit((unsigned char)*s) : !isdigit((unsigned char)*s))
		return -EINVAL;
	if (base == 16 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		return -EINVAL;
	errno = 0;
	*val = strtoull(s, &end, base);
	if (errno)
		return -EINVAL;
	*p = end;
	return 0;
}

static int expect(const char **p, char c)
{
	if (**p != c)
		return -EINVAL;
	(*p)++;
	return 0;
}

static int parse_perms(const char **p, struct map_entry *e)
{
	const char *s = *p;

	if ((s[0] != 'r' && s[0] != '-') || (s[1] != 'w' && s[1] != '-') ||
	    (s[2] != 'x' && s[2] != '-') || (s[3] != 's' && s[3] != 'p'))
		return -EINVAL;
	e->readable = s[0] == 'r';
	e->writable = s[1] == 'w';
	e->executable = s[2] == 'x';
	e->shared = s[3] == 's';
	*p = s + 4;
	return 0;
}

/* The path: the rest of the line after the padding, " (deleted)" stripped. */
static int parse_path(const char *s, const char *eol, struct map_entry *e)
{
	size_t len, slen = strlen(DELETED_SUFFIX);

	while (s < eol && *s == ' ')
		s++;
	len = eol - s;
	/* Only a file can be deleted: "[heap] (deleted)" is not a thing. */
	if (*s == '/' && len > slen && !memcmp(eol - slen, DELETED_SUFFIX, slen)) {
		e->deleted = true;
		len -= slen;
	}
	e->path = strndup(s, len);
	return e->path ? 0 : -ENOMEM;
}

/* Parse the line [s, eol) into e. */
static int parse_line(const char *s, const char *eol, struct map_entry *e)
{
	uint64_t major, minor, inode;
	int err;

	memset(e, 0, sizeof(*e));
	err = parse_num(&s, 16, &e->start);
	err = err ?: expect(&s, '-');
	err = err ?: parse_num(&s, 16, &e->end);
	err = err ?: expect(&s, ' ');
	err = err ?: parse_perms(&s, e);
	err = err ?: expect(&s, ' ');
	err = err ?: parse_num(&s, 16, &e->offset);
	err = err ?: expect(&s, ' ');
	err = err ?: parse_num(&s, 16, &major);
	err = err ?: expect(&s, ':');
	err = err ?: parse_num(&s, 16, &minor);
	err = err ?: expect(&s, ' ');
	err = err ?: parse_num(&s, 10, &inode);
	if (err || s > eol || (s < eol && *s != ' ') || e->end < e->start)
		return -EINVAL;
	e->dev = makedev(major, minor);
	e->inode = inode;
	return parse_path(s, eol, e);
}

static int maps__append(struct maps *maps, size_t *cap, const struct map_entry *e)
{
	if (vec__reserve_min(&maps->entries, cap, maps->nr + 1, sizeof(*e), 64))
		return -ENOMEM;
	maps->entries[maps->nr++] = *e;
	return 0;
}

int maps__parse(const char *text, struct maps **out)
{
	struct maps *maps = calloc(1, sizeof(*maps));
	size_t cap = 0;
	int err = 0;

	if (!maps)
		return -ENOMEM;
	for (const char *s = text; *s && !err;) {
		const char *eol = strchrnul(s, '\n');
		struct map_entry e;

		if (eol > s) {	/* tolerate blank lines */
			err = parse_line(s, eol, &e);
			if (!err) {
				err = maps__append(maps, &cap, &e);
				if (err)
					free(e.path);
			}
		}
		s = *eol ? eol + 1 : eol;
	}
	if (err) {
		maps__free(maps);
		return err;
	}
	*out = maps;
	return 0;
}

int maps__read(pid_t pid, struct maps **out)
{
	char *text = NULL;
	int fd, err;

	fd = proc__open(pid, "maps", O_RDONLY);
	if (fd < 0) {
		/* ENOENT and ESRCH just mean the target is gone: the caller knows. */
		if (fd != -ENOENT && fd != -ESRCH)
			fprintf(stderr, "memleakbpf: /proc/%d/maps: %s\n", (int)pid, strerror(-fd));
		return fd;
	}
	err = proc__read_fd(fd, 64 * 1024, &text);
	close(fd);
	if (err) {
		if (err != -ESRCH)
			fprintf(stderr, "memleakbpf: reading /proc/%d/maps: %s\n", (int)pid, strerror(-err));
		return err;
	}
	err = maps__parse(text, out);
	if (err)
		fprintf(stderr, "memleakbpf: /proc/%d/maps: unexpected line format\n", (int)pid);
	free(text);
	return err;
}

void maps__free(struct maps *maps)
{
	if (!maps)
		return;
	for (size_t i = 0; i < maps->nr; i++) {
		free(maps->entries[i].path);
		free(maps->entries[i].build_id);
	}
	free(maps->entries);
	free(maps);
}

const struct map_entry *maps__find(const struct maps *maps, uint64_t addr)
{
	size_t lo = 0, hi = maps->nr;

	/* Entries are sorted and disjoint: binary search. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct map_entry *e = &maps->entries[mid];

		if (addr < e->start)
			hi = mid;
		else if (addr >= e->end)
			lo = mid + 1;
		else
			return e;
	}
	return NULL;
}

bool map_entry__is_file(const struct map_entry *e)
{
	return e->path && e->path[0] == '/';
}
