/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Where an output path leads, found one component at a time as the kernel
 * would, but following a symlink only where nobody else could have planted
 * it. Each entry is opened without following and a link is read through
 * that descriptor: what was checked is what is used, whatever is renamed
 * meanwhile. A /proc link (/dev/stdout, /dev/fd/N) is followed by the kernel,
 * since its text is no path (pipe:[123]).
 */
#ifndef OUTPATH_H
#define OUTPATH_H

#include <stdbool.h>
#include <sys/stat.h>
#include <sys/types.h>

struct outpath {
	int dirfd;		/* O_PATH: the directory of the last component */
	char base[256];		/* its name there (NAME_MAX + 1) */
	struct stat st;		/* base itself, not followed; st_mode 0: nothing there */
	bool via_link;		/* base was named by a symlink that was followed */
	bool magic;		/* base is a /proc link the kernel follows: st is where it
				   leads */
};

/*
 * May an entry (st) of dirfd's be followed (a symlink) or opened (a device)?
 * Not when another user could have put it there: in a directory that
 * someone else owns or that a group or everyone may write, only an entry of
 * root's or of the user memleakbpf runs as.
 */
bool outpath__trusted(int dirfd, const struct stat *entry);

/*
 * Walk path. 0 with pl->dirfd open (the caller closes it), or -errno:
 * -EPERM for a link on the way that outpath__trusted() refuses (pl->st is
 * that link's), -ELOOP, -ENOENT or -ENOTDIR for a directory on the way. A
 * link refused as the last component is not an error: pl->st says S_ISLNK.
 */
int outpath__resolve(const char *path, struct outpath *pl);

#endif
