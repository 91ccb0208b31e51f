/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Report files (--json, --folded, ...). A regular file is replaced
 * atomically: readers see the old report or the new one, never half of one.
 * A symlink is followed (to the file it names, replaced there) only if
 * nobody else could have planted it: its owner is root or memleakbpf's user,
 * or its directory is writable by no other user; another user's link is
 * replaced by the report instead. A character device (/dev/null, a terminal)
 * and what a /proc link leads to (/dev/stdout, >(cmd)) are written in place,
 * without blocking. A FIFO, socket or block device at the path is refused: a
 * FIFO without a reader would hold the write for good.
 */
#ifndef OUTFILE_H
#define OUTFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include "model/report.h"

/*
 * Before tracing: can path be written? 0, or -errno with a one-line message
 * in err ("cannot write /x/y.json: directory /x does not exist").
 */
int outfile__check(const char *path, char *err, size_t errlen);

/* Would paths a and b name one file (so that one report would overwrite the other)? */
bool outfile__same(const char *a, const char *b);

/*
 * Write r with writer into path (see above). 0, or -errno with a one-line
 * message in err (err may be NULL); on failure no temporary is left behind
 * and an existing file at path is untouched. Never blocks for good: a device
 * that takes no bytes is given up once SIGINT or SIGTERM is pending.
 */
int outfile__write(const char *path, int (*writer)(const struct report *, FILE *),
		   const struct report *r, char *err, size_t errlen);

/*
 * Before tracing: open dir (--snapshot-dir) for creating files in it. A
 * symlink is followed only where outfile__write would follow one. The
 * descriptor (O_DIRECTORY) or -errno with a one-line message in err.
 */
int outfile__open_dir(const char *dir, char *err, size_t errlen);

/* Is anything (even a dangling symlink) named name in dirfd? */
int outfile__exists_at(int dirfd, const char *name);

/*
 * Write r with writer into a new file name in dirfd, atomically, never over
 * anything already there: -EEXIST then (--snapshot-dir numbers its files and
 * skips the taken ones). 0 or -errno; no temporary is left behind.
 */
int outfile__write_new(int dirfd, const char *name,
		       int (*writer)(const struct report *, FILE *), const struct report *r);

/*
 * For outfile__write and the tests: create path's temporary ".<base>.<suffix>"
 * in path's directory, exclusively and without following a symlink there.
 * Its name goes to tmp. Returns the fd or -errno (-EEXIST: pick another suffix).
 */
int outfile__open_temp(const char *path, const char *suffix, char *tmp, size_t len);

#endif
