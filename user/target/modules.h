/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The object files the target has mapped, remembered across its lifetime:
 * a report made after a library was unloaded, or after the target exited,
 * still finds every module. Each file is opened while the target is alive,
 * through its mapping (rootpath.h: containers, chroots, deleted files).
 */
#ifndef MODULES_H
#define MODULES_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "modfiles.h"
#include "util/procmaps.h"

#define MODULE_BUILD_ID_MAX MODFILE_BUILD_ID_MAX	/* its file's (modfiles.h) */

struct module {
	char *path;		/* the path the target sees, as in its maps */
	uint64_t start, end;	/* lowest start and highest end of its mappings */
	uint64_t bias;		/* load bias: runtime address = bias + ELF vaddr */
	dev_t dev;
	ino_t inode;
	int fd;			/* the file, opened while the target was alive; -1 if not;
				 * shared by every module of that file (modfiles.h): not to close */
	/* Its executable mapping(s), for the heap profiles' mappings; code_end 0: none seen. */
	uint64_t code_start, code_end, code_offset;
	/* Its GNU build id in hex, for --pprof's mappings; "" without one. */
	char build_id[2 * MODULE_BUILD_ID_MAX + 1];
};

struct modules;

/* A set of its own, whose files no other set shares (modfiles.h). */
struct modules *modules__new(pid_t pid);
/* A set whose files are open once with peer's (and the sets peer shares with). */
struct modules *modules__new_beside(pid_t pid, const struct modules *peer);
/* Add the file mappings in maps not seen before. 0 or -errno. */
int modules__update(struct modules *mods, const struct maps *maps);
/*
 * The modules of pid, a fork of under's process, that goes its own way
 * from there: it has under's loads (found through under, which must
 * outlive it), and its updates add only what under does not have where
 * it is (the libraries it loaded itself, their files opened unless a set
 * has them open already).
 */
struct modules *modules__new_over(pid_t pid, const struct modules *under);
/* Does maps have code of an ELF file that mods does not have where it is mapped? */
bool modules__lacks_code(const struct modules *mods, const struct maps *maps);
/* The module whose mapped range contains addr (newest first), or NULL. */
const struct module *modules__find(const struct modules *mods, uint64_t addr);
/*
 * How many modules it has: they are only added until modules__clear, so
 * while the count is the same modules__find gives the same answers.
 */
size_t modules__count(const struct modules *mods);
/*
 * One executable mapping per module, as /proc/PID/maps lines would show it
 * (r-xp, its file offset, dev, inode, path), sorted by address; where loads
 * overlap only the newest is kept, as modules__find would choose. For the
 * pprof writer, which needs the target's maps long after it may have exited.
 * Free with maps__free. 0 or -errno.
 */
int modules__code_maps(const struct modules *mods, struct maps **out);
/* The process whose files these are; set_pid: a shell handed over to its child. */
pid_t modules__pid(const struct modules *mods);
void modules__set_pid(struct modules *mods, pid_t pid);
/* Forget everything: the target exec'd a new image. */
void modules__clear(struct modules *mods);
void modules__free(struct modules *mods);

#endif
