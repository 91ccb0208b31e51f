/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Files as the target sees them, inside its root (a container's), never
 * outside it: see rootpath.c for why /proc/PID/root/PATH is not enough.
 */
#ifndef ROOTPATH_H
#define ROOTPATH_H

#include <stddef.h>
#include <sys/types.h>

/*
 * Open path (absolute, as the target names it) in process pid's root with
 * open(2) flags: every step, "..", and absolute symbolic links included,
 * stays in that root, and no /proc magic link is followed. fd or -errno.
 */
int rootpath__open(pid_t pid, const char *path, int flags);
/*
 * "/proc/self/fd/FD": a path for APIs that want one (libelf, the uprobe
 * link) and that leads exactly to the file open at fd. 0 or -ENAMETOOLONG.
 */
int rootpath__fd_path(int fd, char *buf, size_t len);

#endif
