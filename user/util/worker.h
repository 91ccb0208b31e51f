/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One function at a time on a thread of its own, its return announced on an
 * eventfd that the caller's event loop watches: the tracer builds reports
 * there while its loop goes on serving the target.
 */
#ifndef WORKER_H
#define WORKER_H

#include <stdbool.h>

struct worker;

/* NULL on failure (errno says why). */
struct worker *worker__new(void);
/* Readable once the function has returned, until worker__wait. */
int worker__fd(const struct worker *w);
/* Run fn(arg) on a new thread. 0, -EBUSY while one runs, or -errno. */
int worker__start(struct worker *w, int (*fn)(void *), void *arg);
/* A function started and not yet waited for. */
bool worker__busy(const struct worker *w);
/* Wait for the function to return: its result (0 when none ran). */
int worker__wait(struct worker *w);
/* Waits for the function first. Accepts NULL. */
void worker__free(struct worker *w);

#endif
