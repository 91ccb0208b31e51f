/* SPDX-License-Identifier: GPL-2.0 */
/*
 * JIT symbols from /tmp/perf-PID.map, the file JIT runtimes write for perf
 * (Python 3.12 -X perf, node --perf-basic-prof, perf-map-agent): one line
 * "START SIZE name" per piece of generated code, START and SIZE in hex.
 */
#ifndef PERFMAP_H
#define PERFMAP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct perfmap_entry {
	uint64_t start, size;
	char *name;
	size_t seq;		/* line order: a later line replaces code at its range */
};

struct perfmap;

/*
 * Parse the text of a map. Lines that do not parse are skipped, and so is an
 * unterminated last line: the runtime may be writing it, and a cut name would
 * be a wrong one. 0 or -ENOMEM.
 */
int perfmap__parse(const char *text, struct perfmap **out);
/* The entry for the code at addr (the latest written when several cover it), or NULL. */
const struct perfmap_entry *perfmap__find(const struct perfmap *pm, uint64_t addr);
size_t perfmap__nr(const struct perfmap *pm);
/* "/tmp/perf-NSPID.map" as the target names it (its own pid, in its namespace). */
const char *perfmap__path(const struct perfmap *pm);
/* The pid that process pid has in its own pid namespace: the N of its map's name. */
int perfmap__nspid(pid_t pid, pid_t *nspid);
/*
 * The map of process pid (nspid in its namespace), read through
 * /proc/PID/root (containers) the first time and again whenever the file
 * changed; once the process is gone, from our own /tmp if nspid == pid. *pm
 * is kept as it was when the file cannot be read any more, so it may be
 * non-NULL on an error. 0, -ENOENT (no map) or -errno.
 */
int perfmap__load(pid_t pid, pid_t nspid, struct perfmap **pm);
void perfmap__free(struct perfmap *pm);

#endif
