// SPDX-License-Identifier: GPL-2.0
/*
 * Opening the target's files from its own root. The tracer runs as root on
 * the host; the target may be a container that chooses its own symbolic
 * links. /proc/PID/root/PATH enters the target's root, but an absolute
 * symbolic link met further down the walk starts again from the *tracer's*
 * root, so a link such as /tmp/perf-1.map -> /etc/shadow in the container
 * would be read on the host. openat2's RESOLVE_IN_ROOT makes the directory
 * fd of /proc/PID/root the root of the whole walk (Linux 5.6; multi-uprobe
 * links already need 6.6).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "rootpath.h"

int rootpath__open(pid_t pid, const char *path, int flags)
{
	struct open_how how = {
		.flags = (unsigned)(flags | O_CLOEXEC),
		/* Magic links (/proc/self/root, /proc/N/fd/M) would jump out again. */
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	char root[64];
	int dfd, fd;

	snprintf(root, sizeof(root), "/proc/%d/root", (int)pid);
	dfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	fd = (int)syscall(SYS_openat2, dfd, path, &how, sizeof(how));
	if (fd < 0)
		fd = -errno;
	close(dfd);
	return fd;
}

int rootpath__fd_path(int fd, char *buf, size_t len)
{
	int n = snprintf(buf, len, "/proc/self/fd/%d", fd);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}
