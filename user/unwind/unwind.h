/* SPDX-License-Identifier: GPL-2.0 */
/*
 * CFI tables for the BPF unwinder: each executable file the target maps gets
 * its rows (user/cfi.c) loaded once per build id, shared by every process and
 * image of the run and never removed; the target's executable mappings are
 * republished whenever they change.
 */
#ifndef UNWIND_H
#define UNWIND_H

#include <sys/types.h>
#include "util/procmaps.h"

#include <stdbool.h>

struct probes;
struct unwind;

/*
 * --unwind (enum opts_unwind) to *tables: CFI rows or frame pointers. auto
 * takes the rows when the kernel can walk them (bpf_loop, Linux 5.17);
 * dwarf insists: -EOPNOTSUPP, said, when it cannot.
 */
int unwind__choose(int mode, bool *tables);

/* verbose > 0: one line per table loaded. NULL when out of memory. */
struct unwind *unwind__new(struct probes *p, int verbose);
/*
 * Load the tables of the files in maps not seen yet and publish maps as the
 * target's mappings (pid: to open its files as it sees them). A file whose
 * CFI cannot be read or loaded is unwound with frame pointers (said once).
 * 0 or -errno.
 */
int unwind__update(struct unwind *u, pid_t pid, const struct maps *maps);	/* u NULL: 0 */
void unwind__free(struct unwind *u);

#endif
