/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The object files behind every module set (modules.h), each open once by
 * (dev, inode) however many sets map it: 600 execs of /bin/true under
 * --follow are 600 images of one program, libc and ld.so, which held three
 * descriptors apiece and ran a tracer out of them. An open file pins its
 * inode, so a (dev, inode) found here is that very file, never a reuse.
 * Each file is counted by the modules that use it and closed with the
 * last; the registry by the sets that share it, and freed with the last.
 * A lock: the sets are updated by the loop while a report reads others.
 */
#ifndef MODFILES_H
#define MODFILES_H

#include <stddef.h>
#include <sys/types.h>
#include "util/elfsym.h"

#define MODFILE_BUILD_ID_MAX 64	/* bytes; GNU ld writes 20 (sha1) */

struct modfile {
	dev_t dev;
	ino_t inode;
	int fd;			/* O_RDONLY, opened while a process mapped it */
	struct elf_segment *segs;	/* PT_LOAD */
	size_t nr_segs;
	char build_id[2 * MODFILE_BUILD_ID_MAX + 1];	/* hex; "" without one */
	unsigned refs;		/* the modules using it */
};

struct modfiles;

struct modfiles *modfiles__new(void);
/* One more module set shares fs: it is freed with the last (modfiles__drop). */
struct modfiles *modfiles__share(struct modfiles *fs);
void modfiles__drop(struct modfiles *fs);
/* The file (dev, inode) if open, with a reference more; NULL if not. */
struct modfile *modfiles__get(struct modfiles *fs, dev_t dev, ino_t inode);
/*
 * The ELF file open at fd (taken, closed on error), read and registered with
 * one reference: 0, -EINVAL (not ELF or unreadable headers) or -ENOMEM.
 */
int modfiles__add(struct modfiles *fs, dev_t dev, ino_t inode, int fd, struct modfile **out);
/* A reference more on f, which is registered. */
void modfiles__hold(struct modfiles *fs, struct modfile *f);
/* A reference less: the last closes the file. NULL does nothing. */
void modfiles__put(struct modfiles *fs, struct modfile *f);

#endif
