// SPDX-License-Identifier: GPL-2.0
/* Reading /proc files. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <unistd.h>
#include "readall.h"

int read_all(int fd, size_t hint, char **out)
{
	size_t len = 0, cap = hint + 4096;
	char *buf = malloc(cap);
	ssize_t n;

	if (!buf)
		return -ENOMEM;
	for (;;) {
		if (cap - len < 2) {
			char *nbuf = realloc(buf, cap * 2);

			if (!nbuf) {
				free(buf);
				return -ENOMEM;
			}
			buf = nbuf;
			cap *= 2;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int err = -errno;

			free(buf);
			return err;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	*out = buf;
	return 0;
}

int proc_stat__read(pid_t pid, struct proc_stat *st)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return n < 0 ? -errno : -ESRCH;
	buf[n] = '\0';
	/* After the command name: state ppid pgrp session tty_nr tpgid flags. */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 1, " %c %*d %*d %*d %*d %*d %lu", &st->state, &st->flags) != 2)
		return -EINVAL;
	return 0;
}

char proc_state(pid_t pid)
{
	struct proc_stat st;

	return proc_stat__read(pid, &st) ? 0 : st.state;
}
