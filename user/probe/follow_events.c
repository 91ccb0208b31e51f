// SPDX-License-Identifier: GPL-2.0
/*
 * --follow's events, taken from the queue follow.c keeps, each to its
 * handler: a fork (follow.c), a followed process's exec (follow_exec.c), its
 * end (both).
 */
#include "probes.h"
#include "probes_internal.h"
#include "model/processes.h"

static void on_gone(struct probes *p, struct processes *ps, const struct memleak_event *ev)
{
	follow__let_go(p, (pid_t)ev->tgid);
	follow_exec__forget(p, (pid_t)ev->tgid, ev->proc, ev->image);
	processes__gone(ps, ev->proc, false);
}

void follow_events__handle(struct probes *p, struct processes *ps, struct images *im,
			   int verbose)
{
	struct memleak_event evs[64];
	size_t n;

	while ((n = follow__take(p, evs, 64))) {
		for (size_t i = 0; i < n; i++) {
			if (evs[i].kind == EVENT_FORK)
				follow__on_fork(p, ps, im, verbose, &evs[i]);
			else if (evs[i].kind == EVENT_FOLLOW_EXEC)
				follow_exec__on_exec(p, ps, im, verbose, &evs[i]);
			else
				on_gone(p, ps, &evs[i]);
		}
	}
}
