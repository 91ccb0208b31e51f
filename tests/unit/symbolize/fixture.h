/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the symbolizer tests need around them: the victims (built by make
 * victims, found from the top directory, where make runs the tests), lines
 * marked in their sources, symbols and call sites found by binutils (nm,
 * objdump) as an independent account of each binary, and modules made from a
 * file's program headers as if this process had loaded it at some bias.
 */
#ifndef SYM_FIXTURE_H
#define SYM_FIXTURE_H

#include <stdbool.h>
#include <stdint.h>
#include "target/modules.h"
#include "model/report.h"

/* The absolute path of .output/victims/name; a static buffer of 8 in turn. */
const char *fx_victim(const char *name);
/* The line whose comment says "@marker" in source (from the top directory), or -1. */
int fx_marker(const char *source, const char *marker);
/* The first line of source holding text, or -1. */
int fx_line_of(const char *source, const char *text);
/* The value of symbol name in path's .symtab, per nm; 0 when absent. */
uint64_t fx_nm(const char *path, const char *name);
/* The size of symbol name, per nm -S; 0 when absent. */
uint64_t fx_nm_size(const char *path, const char *name);
/*
 * The return address (the address after the call) of the nth call
 * (0-based) that function fn makes to callee, per objdump -d; 0 if none.
 * Names as objdump prints them: mangled, "malloc@plt".
 */
uint64_t fx_call_return(const char *path, const char *fn, const char *callee, int nth);
/* Add path, mapped at bias as ld.so would, to mods. 0 or -errno. */
int fx_load(struct modules *mods, const char *path, uint64_t bias);
/* What fn(arg) writes to stderr (up to 4 KiB), malloc'd; stderr is restored after. */
char *fx_capture_stderr(void (*fn)(void *), void *arg);
/* How many file descriptors this process has open. */
int fx_open_fds(void);

/* One frame as a test expects it; file NULL: none. */
struct fx_frame {
	const char *function;
	const char *file;
	int line;
	bool inlined;
};

/* frames[0..n) match want[0..n) exactly (and there are n); prints what differs. */
bool fx_frames_are(const struct report_frame *frames, size_t nr, const struct fx_frame *want,
		   size_t n);
void fx_frames_free(struct report_frame *frames, size_t nr);
/* Copies that own their strings: kept past a symbolizer__reset (frames borrow theirs). */
struct report_frame *fx_frames_copy(const struct report_frame *frames, size_t nr);

#endif
