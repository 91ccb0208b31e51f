/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the reachability scan (reach_run.c) needs of the probes: the live
 * blocks one by one, and under -c a stop at the command's _exit.
 */
#ifndef PROBES_REACH_H
#define PROBES_REACH_H

#include <stddef.h>
#include <stdint.h>

struct probes;

struct live_block {
	uint64_t addr, size;
	uint64_t stack_id;	/* its site's */
	uint32_t api;		/* enum memleak_api */
};

/*
 * Every live block of the BPF table, into *out (*nr of them; the caller
 * frees it). A block whose record is still being written (an allocation
 * returning) is left out. 0 or -ENOMEM.
 */
int probes_reach__blocks(struct probes *p, struct live_block **out, size_t *nr);
/*
 * Stop the target at _exit, offset in the file at path (as the target sees
 * it), and tell (EVENT_EXIT_STOP); again for another file or process only.
 * 0 or -errno (printed).
 */
int probes_reach__attach_exit_stop(struct probes *p, const char *path, uint64_t offset);

#endif
