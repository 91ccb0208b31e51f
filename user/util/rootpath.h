/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Files as the target sees them, inside its root (a container's, a
 * chroot's), never outside it: see rootpath.c for why /proc/PID/root/PATH
 * is not enough, and why a mapped file is opened through its mapping.
 */
#ifndef ROOTPATH_H
#define ROOTPATH_H

#include <stddef.h>
#include <sys/types.h>
#include "procmaps.h"

/*
 * Open path (absolute, as the target names it) in process pid's root with
 * open(2) flags: every step, "..", and absolute symbolic links included,
 * stays in that root, and no /proc magic link is followed. fd or -errno.
 */
int rootpath__open(pid_t pid, const char *path, int flags);
/*
 * The file mapped at e in pid (e from its maps), read-only: the mapping's
 * own, through /proc/PID/map_files; else (no CAP_SYS_ADMIN, the mapping
 * gone) e's path in pid's root (rootpath__within), never a deleted one's.
 * fd or -errno (-ENOENT: the file lies outside its root, or is gone;
 * -ENODEV: not a regular file, left unopened).
 */
int rootpath__open_mapped(pid_t pid, const struct map_entry *e);
/*
 * path as /proc/PID/maps shows it to us, from the root whose path is shown
 * to us as root (readlink /proc/PID/root): the same path in that root, a
 * pointer into path; NULL when it lies outside that root.
 */
const char *rootpath__within(const char *root, const char *path);
/*
 * "/proc/self/fd/FD": a path for APIs that want one (libelf, the uprobe
 * link) and that leads exactly to the file open at fd. 0 or -ENAMETOOLONG.
 */
int rootpath__fd_path(int fd, char *buf, size_t len);

#endif
