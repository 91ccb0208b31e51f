/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --follow: the processes traced besides the target, by tag (bpf/memleak.h:
 * struct memleak_proc), as the tracer learns of them; the reports read
 * them while the loop adds more, so every access takes the table's lock.
 */
#ifndef PROCESSES_H
#define PROCESSES_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct process_info {
	uint32_t tag;		/* 1, 2, ...: never reused */
	pid_t pid, ppid;
	char *command;		/* its command line when it was forked (its parent's, then) */
	bool exited;
	bool execed;		/* ran exec: its image ended there; the new one has a tag of its own */
	uint32_t exec_of;	/* its tag before the exec that started this image; 0: none */
	bool probed;		/* exec_of: its new image's allocator was found and probed */
	uint64_t exec_ns;	/* exec_of: when it exec'd (bpf_ktime_get_ns()) */
	/* execed: the blocks its image held at the exec, freed by it (gone with the image). */
	uint64_t exec_freed_bytes, exec_freed_blocks;
	bool traced;		/* its probes were in place before it ran (or -p: when found) */
	bool attached;		/* -p: running before the attach; its earlier blocks are unknown */
	double hold_ms;		/* from its fork to its probes in place and its resumption */
	uint64_t end_seq;	/* 1, 2, ... in the order they ended (exit or exec); 0: not yet */
};

struct processes {
	pthread_mutex_t lock;
	struct process_info *v;	/* by tag, ascending */
	size_t nr, cap;
	size_t held;		/* of them, those stopped at their fork (not -p's running ones) */
	double max_hold_ms, total_hold_ms;
	uint32_t max_hold_tag;
	/* Exec'd images: from the exec until the new image's allocator was probed. */
	size_t execs_probed;
	double max_exec_ms, total_exec_ms;
	uint32_t max_exec_tag;
	uint64_t ends;		/* the processes that ended: the last end_seq given */
};

void processes__init(struct processes *ps);
/* A new process (tags come in ascending order); command is copied. 0 or -ENOMEM. */
int processes__add(struct processes *ps, const struct process_info *info);
/* An exec'd image (tag) probed ms after its exec. */
void processes__probed(struct processes *ps, uint32_t tag, double ms);
/* The image of tag replaced by an exec, which freed what it held (bytes in blocks). */
void processes__execed(struct processes *ps, uint32_t tag, uint64_t bytes, uint64_t blocks);
/* The process of tag gone: exited, or exec'd. */
void processes__gone(struct processes *ps, uint32_t tag, bool exec);
/*
 * A copy of the process of tag into *out (command borrowed until the table
 * is freed: entries are never removed): false when unknown.
 */
bool processes__get(struct processes *ps, uint32_t tag, struct process_info *out);
/* How many have ended so far: those with end_seq up to it ended before now. */
uint64_t processes__ends(struct processes *ps);
/* Did the process of tag end among the first `ends` ends (processes__ends then)? */
bool processes__ended_by(struct processes *ps, uint32_t tag, uint64_t ends);
void processes__free(struct processes *ps);

#endif
