/* SPDX-License-Identifier: GPL-2.0 */
/* /proc/PID/maps parsing: pure, testable on saved text. */
#ifndef PROCMAPS_H
#define PROCMAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct map_entry {
	uint64_t start;
	uint64_t end;
	uint64_t offset;	/* file offset of start */
	dev_t dev;		/* makedev(major, minor) */
	ino_t inode;
	bool readable, writable, executable, shared;
	bool deleted;		/* path ended in " (deleted)"; suffix stripped */
	char *path;		/* "" for anonymous; "[heap]", "[stack]", "[vdso]"... */
	char *build_id;		/* the file's GNU build id in hex, or NULL: modules__code_maps' only */
};

struct maps {
	struct map_entry *entries;	/* in file order, i.e. ascending addresses */
	size_t nr;
};

/* Parse the text of a maps file. Returns 0 or -errno (-EINVAL on a bad line). */
int maps__parse(const char *text, struct maps **out);
/* Read and parse /proc/PID/maps. */
int maps__read(pid_t pid, struct maps **out);
void maps__free(struct maps *maps);
/* The entry containing addr, or NULL. */
const struct map_entry *maps__find(const struct maps *maps, uint64_t addr);
/* A file-backed mapping (path starts with '/'). */
bool map_entry__is_file(const struct map_entry *e);

#endif
