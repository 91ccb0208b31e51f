// SPDX-License-Identifier: GPL-2.0
/* Where an output path leads (outpath.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#include "outpath.h"

#define MAX_LINKS 40		/* the kernel's own limit */
#define PROC_MAGIC 0x9fa0	/* PROC_SUPER_MAGIC */

/* Root, and the user memleakbpf runs as: whose links and devices it may use. */
static bool owner_trusted(uid_t uid)
{
	return uid == 0 || uid == geteuid();
}

/*
 * Running as root, following another user's link would let them overwrite
 * any file on the system. The kernel's fs.protected_symlinks guards only
 * sticky world-writable directories, and may be off.
 */
bool outpath__trusted(int dirfd, const struct stat *entry)
{
	struct stat d;

	if (owner_trusted(entry->st_uid))
		return true;
	if (fstat(dirfd, &d))
		return false;
	return owner_trusted(d.st_uid) && !(d.st_mode & (S_IWGRP | S_IWOTH));
}

/* /proc/PID/fd/N is no path to read and walk: the kernel must follow it. */
static bool in_proc(int dirfd)
{
	struct statfs sf;

	return !fstatfs(dirfd, &sf) && sf.f_type == PROC_MAGIC;
}

/* Restart the walk at "/" or at the working directory, as s begins. */
static int walk_from(const char *s, int *dirfd)
{
	int fd = open(*s == '/' ? "/" : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (*dirfd >= 0)
		close(*dirfd);
	*dirfd = fd;
	return 0;
}

/* rest (what follows a link's name) goes after the link's text, in buf. */
static int splice_link(int linkfd, char *buf, size_t len, const char *rest, int *dirfd)
{
	char tmp[PATH_MAX];
	ssize_t n = readlinkat(linkfd, "", tmp, sizeof(tmp) - 1);

	if (n < 0)
		return -errno;
	tmp[n] = '\0';
	if ((size_t)n + strlen(rest) >= len)
		return -ENAMETOOLONG;
	strcat(tmp, rest);
	strcpy(buf, tmp);
	return *buf == '/' ? walk_from(buf, dirfd) : 0;
}


/* The last component, as it is: a symlink here is one we do not follow. */
static int settle(struct outpath *pl, const char *name, int fd)
{
	snprintf(pl->base, sizeof(pl->base), "%s", *name ? name : ".");
	if (fd < 0) {
		memset(&pl->st, 0, sizeof(pl->st));	/* nothing there */
		return 0;
	}
	return fstat(fd, &pl->st) ? -errno : 0;
}

/* Into the directory fd (now pl's). 1: go on. */
static int descend(struct outpath *pl, int fd)
{
	close(pl->dirfd);
	pl->dirfd = fd;
	return 1;
}

/*
 * A trusted link at name: a /proc one through the kernel, another by its
 * text, read from the very entry checked (linkfd), with the rest of the path
 * after it in buf. 1 to go on, 0 when settled, or -errno.
 */
static int follow(struct outpath *pl, int linkfd, const char *name, bool last, char *buf,
		  size_t len, const char **s)
{
	int fd, e;

	if (!in_proc(pl->dirfd)) {
		pl->via_link = last;
		e = splice_link(linkfd, buf, len, *s, &pl->dirfd);
		*s = buf;
		return e ? e : 1;
	}
	fd = openat(pl->dirfd, name, O_PATH | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (!last)
		return descend(pl, fd);
	pl->magic = true;
	e = settle(pl, name, fd);
	close(fd);
	return e;
}

/*
 * One component of buf at *s, relative to pl->dirfd: descend into it, follow
 * it, or settle on it as the last. 1 to go on, 0 when settled, or -errno
 * (-EPERM: another user's link on the way, pl->st its own).
 */
static int step(struct outpath *pl, char *buf, size_t len, const char **s)
{
	char name[NAME_MAX + 1];
	size_t n = strcspn(*s, "/");
	bool last;
	int fd, e;

	if (n > NAME_MAX)
		return -ENAMETOOLONG;
	memcpy(name, *s, n);
	name[n] = '\0';
	*s += n;
	last = !(*s)[strspn(*s, "/")];
	fd = openat(pl->dirfd, *name ? name : ".", O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return last && errno == ENOENT ? settle(pl, name, -1) : -errno;
	if (fstat(fd, &pl->st))
		e = -errno;
	else if (S_ISLNK(pl->st.st_mode) && outpath__trusted(pl->dirfd, &pl->st))
		e = follow(pl, fd, name, last, buf, len, s);
	else if (last)
		e = settle(pl, name, fd);
	else if (S_ISDIR(pl->st.st_mode))
		return descend(pl, fd);
	else
		e = S_ISLNK(pl->st.st_mode) ? -EPERM : -ENOTDIR;
	close(fd);
	return e;
}

int outpath__resolve(const char *path, struct outpath *pl)
{
	char buf[PATH_MAX];
	const char *s = buf;
	int links = 0, e;

	memset(pl, 0, sizeof(*pl));
	pl->dirfd = -1;
	if (strlen(path) >= sizeof(buf))
		return -ENAMETOOLONG;
	strcpy(buf, path);
	e = walk_from(buf, &pl->dirfd);
	while (!e) {
		while (*s == '/')
			s++;
		e = step(pl, buf, sizeof(buf), &s);
		if (e <= 0)
			break;
		e = s == buf && ++links > MAX_LINKS ? -ELOOP : 0;
	}
	if (!e)
		return 0;
	if (pl->dirfd >= 0)
		close(pl->dirfd);
	pl->dirfd = -1;
	return e;
}
