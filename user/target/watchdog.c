// SPDX-License-Identifier: GPL-2.0
/*
 * Under -c the BPF side stops the traced process with SIGSTOP at each exec
 * and each library load, and the tracer resumes it once the probes are in
 * place. If the tracer dies in between (SIGKILL, OOM killer, a crash),
 * nothing would ever resume it: it would stay stopped for good.
 * PR_SET_PDEATHSIG cannot help: the stopped process may be a shell's child,
 * not ours, and the death signal would be lost on a credential change.
 *
 * So a small child process, forked once the BPF object is loaded, waits for
 * the tracer to end, compares the stops the BPF side sent with those the
 * tracer dealt with, and if one is pending sends SIGCONT to the traced
 * process. It reads both from the BPF .bss, whose MAP_SHARED mapping it
 * inherits; it holds no BPF fd, so no probe outlives the tracer (its mapping
 * keeps only the .bss map, until it exits).
 *
 * It must act only once the probes are gone, or the process would stop again
 * at the next probe (dlopen calls _dl_debug_state twice). A tracer that ends
 * normally says so by a byte on the pipe, after closing its links; one that
 * dies closes the pipe without it, and its links close as it exits: the
 * watchdog then waits for its pidfd, readable once it has exited whole.
 *
 * This file and target.c are the only ones that fork or send signals.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <poll.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include "util/proc.h"
#include "watchdog.h"

#define SETTLE_MS 200		/* after the tracer: a stop signal may still be landing */

struct watchdog {
	pid_t pid;
	int fd;			/* write end: a byte, then EOF, says "ended, probes gone" */
	volatile uint64_t *handled;	/* shared with the watchdog */
};

/* Close every fd but keep and keep2 (and stderr, unless it is a BPF object). */
static void close_all_but(int keep, int keep2)
{
	char link[64], target[64];
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	ssize_t n;

	while (d && (de = readdir(d))) {
		int fd = atoi(de->d_name);

		if (de->d_name[0] == '.' || fd == keep || fd == keep2 || fd == dirfd(d))
			continue;
		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		n = readlink(link, target, sizeof(target) - 1);
		target[n > 0 ? n : 0] = '\0';
		if (fd == 2 && !strstr(target, "anon_inode:"))
			continue;
		close(fd);
	}
	if (d)
		closedir(d);
}

/* Until the tracer has ended, and its probes with it. */
static void wait_tracer(int fd, int tracer)
{
	struct pollfd pfd = { .fd = tracer, .events = POLLIN };
	char c;
	ssize_t n;

	do
		n = read(fd, &c, 1);
	while (n < 0 && errno == EINTR);
	if (n == 1 || tracer < 0)
		return;
	/* It died: its fds, links among them, are closed once it has exited. */
	while (poll(&pfd, 1, -1) < 0 && errno == EINTR)
		;
}

/* --follow: the children held at their fork that the tracer did not resume. */
static bool resume_held(const struct watchdog_view *v)
{
	bool any = false;

	for (uint32_t i = 0; i < v->nr_held; i++) {
		pid_t pid = (pid_t)v->held[i];

		if (pid <= 0)
			continue;
		any = true;
		if (proc__state(pid) != 'T' || kill(pid, SIGCONT))
			continue;
		fprintf(stderr, "memleakbpf: the tracer ended while pid %d was held at its fork: resumed it\n",
			(int)pid);
	}
	return any;
}

static void resume(const struct watchdog_view *v, volatile uint64_t *handled)
{
	for (int ms = 0; ms < SETTLE_MS; ms += 10) {
		for (int i = 0; i < 2 && *v->stops > *handled; i++) {
			pid_t pid = (pid_t)*v->pids[i];

			if (pid <= 0 || proc__state(pid) != 'T' || kill(pid, SIGCONT))
				continue;
			fprintf(stderr, "memleakbpf: the tracer ended while pid %d was stopped for it: resumed it\n",
				(int)pid);
		}
		usleep(10000);
	}
}

/* The watchdog itself: wait for the tracer's end, resume what it left stopped. */
static __attribute__((noreturn)) void watch(int fd, int tracer, const struct watchdog_view *v,
					    volatile uint64_t *handled)
{
	setsid();	/* the terminal's Ctrl-C or a group kill is not for us */
	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	prctl(PR_SET_NAME, "memleakbpf-wd");
	close_all_but(fd, tracer);
	wait_tracer(fd, tracer);
	if (*v->stops > *handled)
		resume(v, handled);
	/* A child held: its stop may still be landing, as the target's above. */
	for (int ms = 0; ms < SETTLE_MS && resume_held(v); ms += 10)
		usleep(10000);
	_exit(0);
}

struct watchdog *watchdog__start(const struct watchdog_view *view)
{
	struct watchdog *wd = calloc(1, sizeof(*wd));
	int pfd[2] = { -1, -1 }, self;
	pid_t pid;

	if (!wd)
		return NULL;
	wd->handled = mmap(NULL, sizeof(*wd->handled), PROT_READ | PROT_WRITE,
			   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (wd->handled == MAP_FAILED || pipe2(pfd, O_CLOEXEC))
		goto fail;
	/* Ours, inherited: it cannot name another process once we are gone. */
	self = pidfd_open(getpid(), 0);
	pid = fork();
	if (pid == 0) {
		close(pfd[1]);
		watch(pfd[0], self, view, wd->handled);
	}
	close(pfd[0]);
	if (self >= 0)
		close(self);
	if (pid < 0)
		goto fail;
	wd->pid = pid;
	wd->fd = pfd[1];
	return wd;
fail:
	fprintf(stderr, "memleakbpf: cannot start the watchdog (%s): if memleakbpf is killed while the command is stopped for it, resume it with kill -CONT\n",
		strerror(errno));
	if (pfd[1] >= 0)
		close(pfd[1]);
	if (wd->handled != MAP_FAILED && wd->handled)
		munmap((void *)wd->handled, sizeof(*wd->handled));
	free(wd);
	return NULL;
}

void watchdog__stop_handled(struct watchdog *wd)
{
	if (wd)
		__atomic_add_fetch(wd->handled, 1, __ATOMIC_RELEASE);
}

void watchdog__free(struct watchdog *wd)
{
	if (!wd)
		return;
	/* The caller has closed its probes: nothing can stop the command now. */
	if (write(wd->fd, "x", 1) != 1)
		fprintf(stderr, "memleakbpf: watchdog: %s\n", strerror(errno));
	close(wd->fd);
	while (waitpid(wd->pid, NULL, 0) < 0 && errno == EINTR)
		;
	munmap((void *)wd->handled, sizeof(*wd->handled));
	free(wd);
}
