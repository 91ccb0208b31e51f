/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --follow: each traced process's figures, from the snapshot's sites,
 * whose tags say whose they are (pure). A process that has exited keeps
 * its final figures: its sites stay in the tables.
 */
#ifndef PER_PROCESS_H
#define PER_PROCESS_H

#include <stdbool.h>
#include <sys/types.h>
#include "model/processes.h"
#include "model/report.h"
#include "probe/snapshot.h"

/*
 * r->processes: the target (pid, command, whether it has exited) first,
 * then every process of ps in the order they began, each with its exact
 * totals; they sum to r->totals. 0 or -ENOMEM.
 */
int per_process__build(const struct snapshot *snap, struct processes *ps, pid_t pid,
		       const char *command, bool exited, struct report *r);

#endif
