/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The traced process: an existing one (-p) or a command we start (-c). The
 * only module that forks, changes credentials or sends signals.
 */
#ifndef TARGET_H
#define TARGET_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/resource.h>
#include <sys/types.h>

struct target {
	pid_t pid;		/* thread group id of the traced process */
	pid_t child;		/* -c: the process we started (pid, until a shell hands over) */
	int pidfd;		/* -p: readable once the process has exited */
	bool spawned;		/* -c */
	bool kernel;		/* -k: the kernel (pid 0): it never exits, takes no signal */
	bool exited;
	int exit_code;		/* -c: the command's status as a shell reports it */
	char *command;		/* -c string, or /proc/PID/cmdline joined */
	int gate;		/* -c: write end of the pipe the child waits on before exec */
};

/* -p: check that pid exists, resolve its thread group. err: one line. */
int target__attach(pid_t pid, struct target **out, char *err, size_t errlen);
/*
 * -c: check the command, fork, drop to the invoking user (SUDO_UID/SUDO_GID
 * with their groups) or to user, and wait before exec until target__release.
 * nofile: the fd limits the command runs with (ours before we raised them),
 * or NULL for ours.
 */
int target__spawn(const char *command, const char *user, int verbose,
		  const struct rlimit *nofile, struct target **out, char *err, size_t errlen);
/*
 * Our soft limit of open files raised to the hard one: --follow keeps files
 * and links open for every image it follows, and a libc's 1,024 ran out
 * (stacks cut to one frame, no --json). *was: the limits before. 0 or -errno.
 */
int target__raise_fd_limit(struct rlimit *was, int verbose);
/* -k: the kernel as the target. 0 or -ENOMEM. */
int target__kernel(struct target **out);
/* Let the spawned child exec its command. */
int target__release(struct target *t);
/* Wait up to timeout_ms for pid to be in a stopped state. 0, -ETIMEDOUT, -ESRCH. */
int target__wait_stopped(pid_t pid, int timeout_ms);
/* Resume a process we stopped (the target or a shell's child taking over). */
int target__continue(pid_t pid);
/*
 * pid is stopped, or has a SIGSTOP queued that it takes before it runs
 * again (a child stopped at its fork, not yet scheduled): its SIGCONT will
 * cancel a stop it has not taken.
 */
bool target__stop_queued(pid_t pid);
/* pid's command line, its arguments joined by blanks (owned): 0 or -errno. */
int target__cmdline(pid_t pid, char **out);
/* Deliver sig to the traced process and, under -c, to the one we started. */
int target__signal(struct target *t, int sig);
/* Deliver sig as target__signal does, and continue what is stopped so that it acts. */
int target__interrupt(struct target *t, int sig);
/* -c: true once the command we started has exited (reaped, status kept). */
bool target__reap(struct target *t);
/* -p: has it exited (pidfd readable)? */
bool target__gone(struct target *t);
/*
 * pid is a shell given a command string (`sh -c '...'`): it runs the program
 * in a child. A shell script (pyenv's shims, say) is not: its programs are
 * helpers until it execs the real one.
 */
bool target__runs_shell_command(pid_t pid);
void target__free(struct target *t);

#endif
