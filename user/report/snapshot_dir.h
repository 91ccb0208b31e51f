/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --snapshot-dir: each snapshot's heap profile and folded stacks (and with
 * --snapshot-html its HTML page), named
 * memleak.PID.NNNN.EXT for those taken every INTERVAL (and the final one)
 * and memleak.PID.usr1-NNNN.EXT for those asked for with SIGUSR1, each kind
 * numbered on its own, so that a user finds the ones they asked for by
 * name. Numbers already taken (by an earlier run on the same pid) are
 * skipped, and a file is never replaced.
 */
#ifndef SNAPSHOT_DIR_H
#define SNAPSHOT_DIR_H

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>
#include "model/report.h"

struct snapshot_files {
	char profile[NAME_MAX + 1];
	char folded[NAME_MAX + 1];
	char html[NAME_MAX + 1];	/* "": no page */
	const char *failed;	/* on error: the one that could not be written */
};

/*
 * r's heap profile (--pprof-format: gperftools' or pprof's), folded
 * stacks and, with html, its page into dirfd (writers.h: the rows written
 * into a snapshot), under the number after *n (updated) that none of those
 * files has yet. Their names in *files. 0 or -errno.
 */
int snapshot_dir__write(int dirfd, pid_t pid, bool asked, unsigned *n, bool gperftools, bool html,
			const struct report *r, struct snapshot_files *files);

#endif
