/* SPDX-License-Identifier: GPL-2.0 */
/*
 * -c: if memleakbpf dies (SIGKILL, a crash) while the BPF side has a traced
 * process stopped for it, that process is resumed, rather than left stopped
 * forever. See watchdog.c.
 */
#ifndef WATCHDOG_H
#define WATCHDOG_H

#include <stddef.h>
#include <stdint.h>

/* Where the BPF side says what it stopped: memory shared with it (the .bss). */
struct watchdog_view {
	const volatile uint32_t *pids[2];	/* the processes it may stop (0: none) */
	const volatile uint64_t *stops;		/* SIGSTOPs it has sent */
	const volatile uint32_t *held;		/* --follow: children stopped at their fork (0: none) */
	uint32_t nr_held;
};

struct watchdog;

/* Start the watchdog process; NULL (having said why) when it cannot run. */
struct watchdog *watchdog__start(const struct watchdog_view *view);
/* One stop was dealt with: the process was resumed, or is gone. */
void watchdog__stop_handled(struct watchdog *wd);
/*
 * The tracer's targets have all ended: the watchdog takes its links and
 * closes them after the tracer has gone. The caller closes its own copies
 * either way: after 0 that costs nothing (-errno: the wait is its own).
 */
int watchdog__take_links(struct watchdog *wd, const int *fds, size_t n);
/* The tracer is done: the watchdog resumes what is still stopped, and ends. */
void watchdog__free(struct watchdog *wd);

#endif
