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
 *
 * A mapped file is another matter: /proc/PID/maps names it as seen from
 * *our* root, which is the target's path only when both roots are one. A
 * chroot'ed target's libc reads as /srv/jail/lib/libc.so.6, a path that
 * means nothing in its root. /proc/PID/map_files/START-END is the mapping's
 * own file, whatever its name: the kernel's answer, which no link of the
 * target's can turn elsewhere.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "proc.h"
#include "rootpath.h"

int rootpath__open(pid_t pid, const char *path, int flags)
{
	struct open_how how = {
		.flags = (unsigned)(flags | O_CLOEXEC),
		/* Magic links (/proc/self/root, /proc/N/fd/M) would jump out again. */
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	char root[96];
	int dfd, fd;

	proc__path(pid, "root", root, sizeof(root));
	dfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	fd = (int)syscall(SYS_openat2, dfd, path, &how, sizeof(how));
	if (fd < 0)
		fd = -errno;
	close(dfd);
	return fd;
}

const char *rootpath__within(const char *root, const char *path)
{
	size_t len = strlen(root);

	if (!strcmp(root, "/"))
		return path;
	while (len > 1 && root[len - 1] == '/')
		len--;
	if (strncmp(path, root, len) || path[len] != '/')
		return NULL;
	return path + len;
}

/*
 * path as maps shows it, opened (O_PATH) in pid's root: the root's own
 * path, as /proc/PID/root shows it to us the same way, taken off first.
 */
static int find_in_root(pid_t pid, const char *path)
{
	char root[PATH_MAX];
	const char *in;
	ssize_t n = proc__readlink(pid, "root", root, sizeof(root));

	if (n <= 0)
		return n < 0 ? (int)n : -ENOENT;
	in = rootpath__within(root, path);
	/* Mapped before a chroot, from outside the root: only map_files reaches it. */
	return in ? rootpath__open(pid, in, O_PATH) : -ENOENT;
}

/*
 * The file found at pfd (O_PATH, taken), opened read-only if it is a
 * regular file: no device the target mapped is opened by root, which can
 * do things. With want_ino, only if it is that inode (-ESTALE otherwise).
 */
static int reopen_regular(int pfd, ino_t want_ino)
{
	struct stat st;
	char path[64];
	int fd;

	if (fstat(pfd, &st))
		fd = -errno;
	else if (!S_ISREG(st.st_mode))
		fd = -ENODEV;
	else if (want_ino && st.st_ino != want_ino)
		fd = -ESTALE;
	else if (!(fd = rootpath__fd_path(pfd, path, sizeof(path))) &&
		 (fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		fd = -errno;
	close(pfd);
	return fd;
}

int rootpath__open_mapped(pid_t pid, const struct map_entry *e)
{
	int fd = proc__open_map_file(pid, e->start, e->end, O_PATH);

	/* Another file mapped since at those addresses is not e's. */
	if (fd >= 0)
		fd = reopen_regular(fd, e->inode);
	/*
	 * map_files is closed without CAP_SYS_ADMIN, and has no entry for a
	 * mapping since unloaded or split (maps read a while ago): the path
	 * then, which a deleted file no longer has. Not checked by inode: an
	 * overlay's may differ from the one maps shows.
	 */
	if (fd >= 0 || fd == -ENODEV || e->deleted)
		return fd == -ESTALE ? -ENOENT : fd;
	fd = find_in_root(pid, e->path);
	return fd >= 0 ? reopen_regular(fd, 0) : fd;
}

int rootpath__fd_path(int fd, char *buf, size_t len)
{
	int n = snprintf(buf, len, "/proc/self/fd/%d", fd);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}
