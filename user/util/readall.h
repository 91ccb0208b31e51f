/* SPDX-License-Identifier: GPL-2.0 */
/* Reading /proc files: whole files (they report no size) and a process's state. */
#ifndef READALL_H
#define READALL_H

#include <stddef.h>
#include <sys/types.h>

/*
 * Read fd to EOF into a NUL-terminated buffer the caller frees; hint is the
 * expected size (0 if unknown). 0 or -errno.
 */
int read_all(int fd, size_t hint, char **out);

/* Of /proc/PID/stat: the state letter and the kernel's PF_* flags. */
struct proc_stat {
	char state;
	unsigned long flags;
};

#define PROC_PF_KTHREAD 0x00200000ul	/* PF_KTHREAD: a kernel thread */

/* Read pid's; the command name before them may hold anything. 0 or -errno. */
int proc_stat__read(pid_t pid, struct proc_stat *st);

/*
 * The state letter of /proc/PID/stat ('R', 'S', 'T', 'Z', ...), read after
 * the parenthesized command name, which may hold anything; 0 when the
 * process is gone or the file unreadable.
 */
char proc_state(pid_t pid);

#endif
