/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A death by signal says so: one line on stderr (the signal, where it
 * struck, which thread, who sent it), then the signal's own action, so
 * that the exit status and a core dump are what they would have been.
 * Without it a SIGBUS or a stray SIGHUP ended the tracer without a word:
 * the kernel logs a SIGSEGV, not a SIGBUS, and glibc writes nothing.
 * SIGINT and SIGTERM (which end tracing with a report), SIGPIPE (the end of
 * `| head`, as for most tools: docs/LIMITS.md) and SIGKILL are not ours.
 */
#ifndef FATAL_H
#define FATAL_H

#include <signal.h>
#include <stddef.h>

/* Before any thread starts: for the main thread's overflow too, on a stack of its own. */
void fatal__setup(void);
/*
 * What a thread of ours blocks (the loop's thread takes the signals): all
 * but the faults of its own code. A fault blocked still ends the process,
 * but by the default action, which the kernel puts back: without its line.
 */
void fatal__thread_signals(sigset_t *set);
/* The line for sig (with its siginfo's code, address and sender) into buf; its length. */
size_t fatal__line(char *buf, size_t len, int sig, int code, const void *addr, int sender,
		   int tid);

#endif
