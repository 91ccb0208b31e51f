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
 * normally says so by a byte on the socket, after closing its links; one
 * that dies closes the socket without it, and its links close as it exits:
 * the watchdog then waits for its pidfd, readable once it has exited whole.
 *
 * Closing a uprobe link waits for an RCU grace period (about 0.13 s here),
 * and a process's exit waits for the links it closes. A tracer whose targets
 * have all ended hands its links over instead (SCM_RIGHTS, before its byte)
 * and exits at once; the watchdog closes them, side by side, and ends: a
 * probe filtered on processes that are gone never fires meanwhile.
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
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <poll.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include "util/fdclose.h"
#include "util/proc.h"
#include "util/vec.h"
#include "watchdog.h"

#define SETTLE_MS 200		/* after the tracer: a stop signal may still be landing */
#define FDS_PER_MSG 253		/* SCM_MAX_FD: the fds one message carries */

struct watchdog {
	pid_t pid;
	int fd;			/* our end: links handed over, a byte, then EOF: "ended" */
	bool handed;		/* links handed over: it ends once it has closed them */
	volatile uint64_t *handled;	/* shared with the watchdog */
};

/* The links the tracer handed over, the watchdog's to close. */
struct links {
	int *fds;
	size_t nr, cap;
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

/* One message: a byte, and the fds it carries added to l. The byte, or -1 at EOF. */
static int receive(int fd, struct links *l)
{
	char c, cbuf[CMSG_SPACE(FDS_PER_MSG * sizeof(int))];
	struct iovec iov = { &c, 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm;
	ssize_t n;

	do
		n = recvmsg(fd, &msg, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n != 1)
		return -1;
	for (cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
		size_t k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);

		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		if (vec__reserve(&l->fds, &l->cap, l->nr + k, sizeof(int))) {
			/* No room to keep them: closed now, in turn. */
			for (size_t i = 0; i < k; i++)
				close(((int *)CMSG_DATA(cm))[i]);
			continue;
		}
		memcpy(l->fds + l->nr, CMSG_DATA(cm), k * sizeof(int));
		l->nr += k;
	}
	return (unsigned char)c;
}

/*
 * Until the tracer has ended, and its probes with it (those in l are ours
 * to close). Whether it died: its socket closed without its last byte.
 */
static bool wait_tracer(int fd, int tracer, struct links *l)
{
	struct pollfd pfd = { .fd = tracer, .events = POLLIN };
	int c;

	while ((c = receive(fd, l)) == 'l')
		;
	if (c >= 0 || tracer < 0)
		return c < 0;
	/* It died: its fds, links among them, are closed once it has exited. */
	while (poll(&pfd, 1, -1) < 0 && errno == EINTR)
		;
	return true;
}

/* Linux 6.15's PIDFD_GET_INFO, for the exit status of a process not ours (older headers lack it). */
struct wd_pidfd_info {
	uint64_t mask, cgroupid;
	uint32_t pid, tgid, ppid, ruid, rgid, euid, egid, suid, sgid, fsuid, fsgid;
	int32_t exit_code;
};
#define WD_PIDFD_GET_INFO _IOWR(0xFF, 11, struct wd_pidfd_info)
#define WD_PIDFD_INFO_EXIT (1ull << 3)
#define EXIT_INFO_WAIT_MS 100	/* its parent reaps it: the kernel keeps its status from then */

/* The tracer's wait status, once its parent has reaped it; -1 if not known by then. */
static int exit_status(int tracer)
{
	for (int ms = 0; tracer >= 0 && ms <= EXIT_INFO_WAIT_MS; ms += 10) {
		struct wd_pidfd_info info = { .mask = WD_PIDFD_INFO_EXIT };

		if (ioctl(tracer, WD_PIDFD_GET_INFO, &info))
			return -1;	/* a kernel before 6.13 */
		if (info.mask & WD_PIDFD_INFO_EXIT)
			return info.exit_code;
		usleep(10000);
	}
	return -1;
}

/*
 * The tracer died without its final report: said here, the one process of
 * ours left, also when nothing was stopped (a SIGKILL leaves no other word;
 * a crash said its own line too: util/fatal.h).
 */
static void say_death(pid_t pid, int tracer)
{
	int status = exit_status(tracer);

	if (status >= 0 && WIFSIGNALED(status))
		fprintf(stderr, "memleakbpf: the tracer (pid %d) was killed by SIG%s, without its final report%s\n",
			(int)pid, sigabbrev_np(WTERMSIG(status)) ?: "?",
			WTERMSIG(status) == SIGKILL ? " (kill -9, or the OOM killer: see the kernel's log)" : "");
	else if (status >= 0)
		fprintf(stderr, "memleakbpf: the tracer (pid %d) exited with status %d without saying it was done: no final report\n",
			(int)pid, WEXITSTATUS(status));
	else
		fprintf(stderr, "memleakbpf: the tracer (pid %d) died without its final report (killed: by SIGKILL or the OOM killer, if it said nothing itself)\n",
			(int)pid);
}

/*
 * The links handed over, closed. The tracer's targets have ended and its
 * output is done: nothing left to say, so stderr goes first, and whoever
 * reads the tracer's output through a pipe sees its end now.
 */
static void close_links(struct links *l)
{
	int null;

	if (!l->nr)
		return;
	null = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (null >= 0) {
		dup2(null, STDERR_FILENO);
		close(null);
	}
	fdclose__together(l->fds, l->nr);
	free(l->fds);
	l->nr = 0;
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
static __attribute__((noreturn)) void watch(int fd, int tracer, pid_t pid,
					    const struct watchdog_view *v, volatile uint64_t *handled)
{
	struct links l = { 0 };

	setsid();	/* the terminal's Ctrl-C or a group kill is not for us */
	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	prctl(PR_SET_NAME, "memleakbpf-wd");
	close_all_but(fd, tracer);
	if (wait_tracer(fd, tracer, &l))
		say_death(pid, tracer);
	close_links(&l);
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
	pid_t pid, me;

	if (!wd)
		return NULL;
	wd->handled = mmap(NULL, sizeof(*wd->handled), PROT_READ | PROT_WRITE,
			   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (wd->handled == MAP_FAILED ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pfd))
		goto fail;
	/* Ours, inherited: it cannot name another process once we are gone. */
	self = pidfd_open(getpid(), 0);
	me = getpid();
	pid = fork();
	if (pid == 0) {
		close(pfd[1]);
		watch(pfd[0], self, me, view, wd->handled);
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

/* One message: the byte c, with up to FDS_PER_MSG fds. */
static int send_fds(int sock, char c, const int *fds, size_t n)
{
	char cbuf[CMSG_SPACE(FDS_PER_MSG * sizeof(int))] = { 0 };
	struct iovec iov = { &c, 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *cm;

	if (n) {
		msg.msg_control = cbuf;
		msg.msg_controllen = CMSG_SPACE(n * sizeof(int));
		cm = CMSG_FIRSTHDR(&msg);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(n * sizeof(int));
		memcpy(CMSG_DATA(cm), fds, n * sizeof(int));
	}
	return sendmsg(sock, &msg, MSG_NOSIGNAL) == 1 ? 0 : -errno;
}

int watchdog__take_links(struct watchdog *wd, const int *fds, size_t n)
{
	int err = 0;

	if (!wd)
		return -ENOTSUP;
	for (size_t i = 0; i < n && !err; i += FDS_PER_MSG) {
		err = send_fds(wd->fd, 'l', fds + i, n - i < FDS_PER_MSG ? n - i : FDS_PER_MSG);
		wd->handed |= !err;	/* those sent are its own now */
	}
	return err;
}

void watchdog__free(struct watchdog *wd)
{
	int err;

	if (!wd)
		return;
	/* The caller has closed its probes (or handed them over): nothing can stop the command now. */
	err = send_fds(wd->fd, 'x', NULL, 0);
	if (err)
		fprintf(stderr, "memleakbpf: watchdog: %s\n", strerror(-err));
	close(wd->fd);
	/* Closing the links it holds takes it a grace period: it ends alone, reaped as an orphan. */
	while (!wd->handed && waitpid(wd->pid, NULL, 0) < 0 && errno == EINTR)
		;
	munmap((void *)wd->handled, sizeof(*wd->handled));
	free(wd);
}
