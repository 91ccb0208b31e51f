// SPDX-License-Identifier: GPL-2.0
/* The target held with ptrace for a reachability scan (reach_hold.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>
#include "reach_hold.h"
#include "util/proc.h"
#include "util/vec.h"

static bool held(const struct reach_hold *h, pid_t tid)
{
	for (size_t i = 0; i < h->nr; i++)
		if (h->threads[i].tid == tid)
			return true;
	return false;
}

/* Seize and interrupt tid; -ESRCH when it is gone already. */
static int seize(struct reach_hold *h, pid_t tid)
{
	if (vec__reserve(&h->threads, &h->cap, h->nr + 1, sizeof(*h->threads)))
		return -ENOMEM;
	if (ptrace(PTRACE_SEIZE, tid, NULL, NULL))
		return -errno;
	if (!h->nr)
		clock_gettime(CLOCK_MONOTONIC, &h->t0);
	h->threads[h->nr++] = (struct reach_thread){ .tid = tid };
	if (ptrace(PTRACE_INTERRUPT, tid, NULL, NULL) && errno != ESRCH)
		return -errno;
	return 0;
}

/* Every thread in /proc/PID/task not held yet; *added says how many. */
static int seize_new(struct reach_hold *h, size_t *added)
{
	int fd = proc__open(h->pid, "task", O_RDONLY | O_DIRECTORY);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;
	int err = 0;

	*added = 0;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return fd < 0 ? fd : -errno;
	}
	while (!err && (e = readdir(d))) {
		pid_t tid = (pid_t)atoi(e->d_name);

		if (tid <= 0 || held(h, tid))
			continue;
		err = seize(h, tid);
		if (err == -ESRCH)
			err = 0;	/* it exited meanwhile */
		else if (!err)
			(*added)++;
	}
	closedir(d);
	return err;
}

/* Wait for tid's stop: 1 when stopped, 0 when gone, -ETIMEDOUT. */
static int wait_stop(struct reach_thread *t, struct timespec *deadline)
{
	for (;;) {
		int status;
		pid_t r = waitpid(t->tid, &status, __WALL | WNOHANG);
		struct timespec now;

		if (r < 0)
			return errno == ECHILD ? 0 : -errno;
		if (r == t->tid) {
			if (!WIFSTOPPED(status))
				return 0;
			/* A signal-delivery stop: the signal goes back at the release. */
			if (status >> 16 == 0 && WSTOPSIG(status) != SIGTRAP)
				t->sig = WSTOPSIG(status);
			return 1;
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec > deadline->tv_sec ||
		    (now.tv_sec == deadline->tv_sec && now.tv_nsec > deadline->tv_nsec))
			return -ETIMEDOUT;
		usleep(100);
	}
}

/* The general-purpose registers, as memcheck scans them (VG_(apply_to_GP_regs)). */
static int read_regs(struct reach_thread *t)
{
	struct user_regs_struct r;

	if (ptrace(PTRACE_GETREGS, t->tid, NULL, &r))
		return -errno;
	memcpy(t->regs, (uint64_t[REACH_HOLD_REGS]){
		r.rax, r.rbx, r.rcx, r.rdx, r.rsi, r.rdi, r.rbp, r.rsp,
		r.r8, r.r9, r.r10, r.r11, r.r12, r.r13, r.r14, r.r15,
	}, sizeof(t->regs));
	t->sp = r.rsp;
	t->tp = r.fs_base;
	return 0;
}

/* Wait for every thread seized; drop those that exited; read the registers. */
static int settle(struct reach_hold *h, int timeout_ms, pid_t *late)
{
	struct timespec deadline;
	size_t n = 0;

	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += timeout_ms / 1000;
	deadline.tv_nsec += (long)(timeout_ms % 1000) * 1000000;
	if (deadline.tv_nsec >= 1000000000) {
		deadline.tv_sec++;
		deadline.tv_nsec -= 1000000000;
	}
	for (size_t i = 0; i < h->nr; i++) {
		struct reach_thread *t = &h->threads[i];
		int r = t->sp ? 1 : wait_stop(t, &deadline);

		if (r < 0) {
			*late = t->tid;
			return r;
		}
		if (r == 0 || (!t->sp && read_regs(t)))
			continue;	/* gone: it holds nothing any more */
		h->threads[n++] = *t;
	}
	h->nr = n;
	return 0;
}

/*
 * A thread that never stopped (the timeout) cannot be detached: it stays
 * ours until memleakbpf exits, when the kernel lets it go.
 */
static void let_go(struct reach_hold *h)
{
	for (size_t i = 0; i < h->nr; i++)
		ptrace(PTRACE_DETACH, h->threads[i].tid, NULL, (void *)(long)h->threads[i].sig);
}

int reach_hold__take(pid_t pid, int timeout_ms, struct reach_hold **out, char *err,
		     size_t errlen)
{
	struct reach_hold *h = calloc(1, sizeof(*h));
	size_t added = 1;
	pid_t late = 0;
	int e = 0;

	*out = NULL;
	if (!h)
		return -ENOMEM;
	h->pid = pid;
	/* Until no thread is new: a thread held cannot start another. */
	while (!e && added) {
		e = seize_new(h, &added);
		if (!e)
			e = settle(h, timeout_ms, &late);
	}
	if (!e && !h->nr)
		e = -ESRCH;
	if (e) {
		if (late)
			snprintf(err, errlen, "thread %d of pid %d did not stop within %d ms", late,
				 pid, timeout_ms);
		else
			snprintf(err, errlen, "cannot hold pid %d: %s%s", pid, strerror(-e),
				 e == -EPERM ? " (is it traced already, by a debugger?)" : "");
		reach_hold__release(h);
		return e;
	}
	*out = h;
	return 0;
}

double reach_hold__release(struct reach_hold *h)
{
	struct timespec now;
	double ms;

	if (!h)
		return 0;
	let_go(h);
	clock_gettime(CLOCK_MONOTONIC, &now);
	ms = (double)(now.tv_sec - h->t0.tv_sec) * 1e3 + (double)(now.tv_nsec - h->t0.tv_nsec) / 1e6;
	free(h->threads);
	free(h);
	return ms;
}

ssize_t reach_hold__read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	const struct reach_hold *h = ctx;
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };
	ssize_t n = process_vm_readv(h->pid, &local, 1, &remote, 1, 0);

	if (n >= 0)
		return n;
	return errno == EFAULT || errno == EIO ? 0 : -errno;
}
