// SPDX-License-Identifier: GPL-2.0
/* A process's /proc files (proc.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <unistd.h>
#include "proc.h"

int proc__read_fd(int fd, size_t hint, char **out)
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

#define PROC_PATH_LEN 96

/* The state letter of a stat file (after the command name, which may hold anything); 0 if unreadable. */
static char stat_state(const char *path)
{
	char buf[512], *p;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : 0;
}

static bool dead(char state)
{
	return state == 'Z' || state == 'X';
}

/* A thread of pid other than its leader that is not a zombie, or 0. */
static pid_t live_thread(pid_t pid)
{
	char path[PROC_PATH_LEN], stat[PROC_PATH_LEN + NAME_MAX + 8];
	struct dirent *d;
	pid_t tid = 0;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	while (dir && !tid && (d = readdir(dir))) {
		char state;

		if (d->d_name[0] < '1' || d->d_name[0] > '9' || atoi(d->d_name) == pid)
			continue;
		snprintf(stat, sizeof(stat), "%s/%s/stat", path, d->d_name);
		state = stat_state(stat);
		if (state && !dead(state))
			tid = atoi(d->d_name);
	}
	if (dir)
		closedir(dir);
	return tid;
}

/*
 * /proc/PID/name, or /proc/PID/task/TID/name through a live thread when the
 * main thread has exited (pthread_exit in main) and the process lives on in
 * its other threads: the leader is then a zombie, its stat says 'Z', its
 * maps and mem are empty and its root and exe unreadable (its memory and
 * files went with it), while every thread's show the process's.
 */
static void proc_path(pid_t pid, const char *name, char *path)
{
	pid_t tid;

	snprintf(path, PROC_PATH_LEN, "/proc/%d/stat", (int)pid);
	tid = dead(stat_state(path)) ? live_thread(pid) : 0;
	if (tid)
		snprintf(path, PROC_PATH_LEN, "/proc/%d/task/%d/%s", (int)pid, (int)tid, name);
	else
		snprintf(path, PROC_PATH_LEN, "/proc/%d/%s", (int)pid, name);
}

void proc__path(pid_t pid, const char *name, char *path, size_t len)
{
	char full[PROC_PATH_LEN];

	proc_path(pid, name, full);
	snprintf(path, len, "%s", full);
}

int proc__open(pid_t pid, const char *name, int flags)
{
	char path[PROC_PATH_LEN];
	int fd;

	proc_path(pid, name, path);
	fd = open(path, flags | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int proc__read(pid_t pid, const char *name, char **text)
{
	int fd = proc__open(pid, name, O_RDONLY), err;

	if (fd < 0)
		return fd;
	err = proc__read_fd(fd, 4096, text);
	close(fd);
	return err;
}

ssize_t proc__read_buf(pid_t pid, const char *name, char *buf, size_t len)
{
	int fd = proc__open(pid, name, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return fd;
	n = read(fd, buf, len - 1);
	if (n < 0)
		n = -errno;
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return n;
}

int proc__status(pid_t pid, const char *key, char *value, size_t len)
{
	size_t klen = strlen(key);
	char *text, *line;
	int err = proc__read(pid, "status", &text);

	if (err)
		return err;
	err = -ENOENT;
	for (line = text; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		if (strncmp(line, key, klen) || line[klen] != ':')
			continue;
		line += klen + 1 + strspn(line + klen + 1, " \t");
		snprintf(value, len, "%.*s", (int)strcspn(line, "\n"), line);
		err = 0;
		break;
	}
	free(text);
	return err;
}

ssize_t proc__readlink(pid_t pid, const char *name, char *buf, size_t len)
{
	char path[PROC_PATH_LEN];
	ssize_t n;

	proc_path(pid, name, path);
	n = readlink(path, buf, len - 1);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return n;
}

int proc__read_mem(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	int fd = proc__open(pid, "mem", O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return fd;
	n = pread(fd, buf, len, (off_t)addr);
	if (n < 0)
		n = -errno;
	close(fd);
	if (n < 0)
		return (int)n;
	return (size_t)n == len ? 0 : -EIO;
}

int proc__open_map_file(pid_t pid, uint64_t start, uint64_t end, int flags)
{
	char name[64];

	snprintf(name, sizeof(name), "map_files/%" PRIx64 "-%" PRIx64, start, end);
	return proc__open(pid, name, flags);
}

int proc__stat(pid_t pid, struct proc_stat *st)
{
	char buf[512], *p;
	ssize_t n = proc__read_buf(pid, "stat", buf, sizeof(buf));

	if (n <= 0)
		return n < 0 ? (int)n : -ESRCH;
	/* After the command name: state ppid pgrp session tty_nr tpgid flags. */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 1, " %c %*d %*d %*d %*d %*d %lu", &st->state, &st->flags) != 2)
		return -EINVAL;
	return 0;
}

char proc__state(pid_t pid)
{
	struct proc_stat st;

	return proc__stat(pid, &st) ? 0 : st.state;
}
