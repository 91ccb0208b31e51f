/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A process's /proc files, read in one place: whole files (they report no
 * size), its memory, its links, its state. Paths are /proc/PID/NAME, or
 * /proc/PID/task/TID/NAME through a live thread once the main thread has
 * exited and the process lives on in others (its leader a zombie).
 */
#ifndef PROC_H
#define PROC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The path proc__open opens for /proc/PID/name, NUL-terminated in len bytes. */
void proc__path(pid_t pid, const char *name, char *path, size_t len);
/* Open /proc/PID/name (flags as for open, O_CLOEXEC added). fd or -errno. */
int proc__open(pid_t pid, const char *name, int flags);
/* /proc/PID/name whole, NUL-terminated, into *text (the caller frees). 0 or -errno. */
int proc__read(pid_t pid, const char *name, char **text);
/* At most len - 1 bytes of /proc/PID/name into buf, NUL-terminated: their count or -errno. */
ssize_t proc__read_buf(pid_t pid, const char *name, char *buf, size_t len);
/* The value of the "key:" line of /proc/PID/status, blanks trimmed. 0, -ENOENT, -errno. */
int proc__status(pid_t pid, const char *key, char *value, size_t len);
/* Where the link /proc/PID/name points (exe, cwd), NUL-terminated: its length or -errno. */
ssize_t proc__readlink(pid_t pid, const char *name, char *buf, size_t len);
/* len bytes of pid's memory at addr, through /proc/PID/mem. 0, -EIO if short, or -errno. */
int proc__read_mem(pid_t pid, uint64_t addr, void *buf, size_t len);
/* The file mapped at [start, end) in pid, through /proc/PID/map_files (deleted ones too), with open's flags. */
int proc__open_map_file(pid_t pid, uint64_t start, uint64_t end, int flags);

/*
 * Read fd to EOF into a NUL-terminated buffer the caller frees; hint is the
 * expected size (0 if unknown). 0 or -errno.
 */
int proc__read_fd(int fd, size_t hint, char **out);

/* Of /proc/PID/stat: the state letter and the kernel's PF_* flags. */
struct proc_stat {
	char state;
	unsigned long flags;
};

#define PROC_PF_KTHREAD 0x00200000ul	/* PF_KTHREAD: a kernel thread */
#define PROC_PF_EXITING 0x00000004ul	/* PF_EXITING: it has begun to exit */

/* Read pid's; the command name before them may hold anything. 0 or -errno. */
int proc__stat(pid_t pid, struct proc_stat *st);

/*
 * The state letter of /proc/PID/stat ('R', 'S', 'T', 'Z', ...), read after
 * the parenthesized command name, which may hold anything; 0 when the
 * process is gone or the file unreadable.
 */
char proc__state(pid_t pid);

#endif
