/* SPDX-License-Identifier: GPL-2.0 */
/* Addresses to function, module, file:line through elfutils libdwfl. */
#ifndef SYMBOLIZE_H
#define SYMBOLIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "model/report.h"
#include "target/modules.h"

struct symbolizer;

/*
 * debug_dirs: extra roots for separate debug files (--debug-dir), searched
 * before the system's, both by build id (DIR/.build-id/xx/rest.debug) and by
 * .gnu_debuglink name. Never the network. NULL (after saying why on stderr)
 * when a directory cannot be used, or on ENOMEM.
 */
struct symbolizer *symbolizer__new(const char *const *debug_dirs, size_t nr_debug_dirs);
/*
 * Resolve addr among mods into one or more frames (innermost first; more than
 * one when the address lies in inlined code), appended to *frames and *nr (a
 * realloc'd array the caller frees with report__free's rules). A frame
 * of a mapped file borrows its strings (report_frame.borrowed): they are
 * valid until symbolizer__reset, symbolizer__free or the module's removal.
 * return_address: addr is a return address, so it is looked up at addr - 1
 * to land on the call instruction's line. An address in no module is looked
 * up in the target's /tmp/perf-PID.map (JIT code). Unknown parts stay
 * NULL/0. 0 or -errno.
 */
int symbolizer__resolve(struct symbolizer *s, const struct modules *mods, uint64_t addr,
			bool return_address, struct report_frame **frames, size_t *nr);
/*
 * The function the call instruction ending at ret (a return address among
 * mods) reaches through its PLT or GOT, as the caller imported it: *name is
 * the symbolizer's, valid until symbolizer__free. Cached per file and
 * address, so a report pays for the call sites it has not seen before.
 * -ENOENT for a direct call, or code or a file that says nothing.
 */
int symbolize_calls__called(struct symbolizer *s, const struct modules *mods, uint64_t ret,
		       const char **name);
/*
 * The target exec'd: forget which file each (device, inode) was. What was
 * read of the files themselves is kept, keyed by build id, for the rest of
 * the run: the new image's libraries are mostly the same ones.
 */
void symbolizer__reset(struct symbolizer *s);
/*
 * Read what resolving addr takes (its file's symbols and debug information)
 * before a report needs it, and keep its frames cached. 0 or -errno.
 */
int symbolizer__warm(struct symbolizer *s, const struct modules *mods, uint64_t addr);
/*
 * -k: kernel addresses named from /proc/kallsyms from now on (said on
 * stderr when it cannot be read). 0 or -errno.
 */
int symbolizer__kernel(struct symbolizer *s);
/* -k: the kernel and its modules as mappings, with their build ids (pprof's). */
int symbolizer__kernel_maps(struct symbolizer *s, struct maps **out);
void symbolizer__free(struct symbolizer *s);

#endif
