/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The target held for a reachability scan: every thread stopped with
 * ptrace (PTRACE_SEIZE and PTRACE_INTERRUPT: a stop its parent never sees,
 * so -p may hold a process it did not start), its registers read, and its
 * memory read with process_vm_readv; then every thread let go as it was
 * (one stopped for us under -c stays stopped until continued).
 */
#ifndef REACH_HOLD_H
#define REACH_HOLD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#define REACH_HOLD_REGS 16	/* the general-purpose registers, rsp among them */

struct reach_thread {
	pid_t tid;
	int sig;		/* a signal it was stopped with, given back when let go */
	uint64_t regs[REACH_HOLD_REGS];
	uint64_t sp;
	uint64_t tp;		/* the thread pointer (fs_base): its TCB and static TLS */
};

struct reach_hold {
	pid_t pid;
	struct reach_thread *threads;	/* those stopped, their registers read */
	size_t nr, cap;
	struct timespec t0;	/* when the first thread was seized */
};

/*
 * Stop every thread of pid (threads started meanwhile too) within
 * timeout_ms. 0, or -errno with one line in err (another tracer, a thread
 * that does not stop); nothing is left held on an error.
 */
int reach_hold__take(pid_t pid, int timeout_ms, struct reach_hold **out, char *err,
		     size_t errlen);
/* Let every thread go; the milliseconds it was held. Frees h. */
double reach_hold__release(struct reach_hold *h);
/* A reach_read_fn (analyze/reach.h) on the held process; ctx is the hold. */
ssize_t reach_hold__read(void *ctx, uint64_t addr, void *buf, size_t len);

#endif
