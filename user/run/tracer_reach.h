/* SPDX-License-Identifier: GPL-2.0 */
/* Reachability scans of one run, each with the target held (tracer_reach.c). */
#ifndef TRACER_REACH_H
#define TRACER_REACH_H

#include <stdbool.h>
#include <sys/types.h>
#include "tracer.h"

/* -c --reach: BPF stopped pid at _exit, or Python at its exit: scan it, then resume. */
void tracer_reach__on_exit_stop(struct tracer *tr, pid_t pid, bool python);
/* SIGUSR2: scan now, the target held for it; a report shows it. */
void tracer_reach__on_signal(struct tracer *tr);
/* --reach, the end of -p (or -c ended otherwise): scan while the target still lives. */
void tracer_reach__final(struct tracer *tr);

#endif
