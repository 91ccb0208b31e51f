/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A table of fixed-size entries behind an fd (a BPF_F_MMAPABLE array),
 * read and written through a window: a few MiB of it mapped at a time,
 * not the whole. The kernel maps every page of a BPF array when it is
 * mapped, and they count in our resident set while they stay mapped: the
 * tables of live blocks and sites mapped whole were 218 MiB of it from
 * the start. A window holds only what is being read.
 *
 * Windows sit at fixed places (span bytes apart, each with the entries
 * that start in it), so that a walk either way maps each once; an entry
 * that straddles a window's end is in it whole. A pointer mapwin__at
 * gives stays good until the next call that moves the window.
 */
#ifndef MAPWIN_H
#define MAPWIN_H

#include <stddef.h>
#include <stdint.h>

/* The bytes a window maps at most (and one page more, for an entry across its end). */
#define MAPWIN_SPAN (4u << 20)

struct mapwin {
	int fd;
	size_t elem, nr;	/* an entry's bytes; entries */
	size_t span;		/* a window's bytes: a multiple of the page */
	uint8_t *mem;		/* the window mapped; NULL: none */
	size_t len;		/* its bytes */
	size_t first, count;	/* its entries, [first, first + count) */
	size_t skew;		/* entry first's offset in mem */
	size_t maps;		/* windows mapped so far */
	int err;		/* the last failure: -errno */
};

/* A window onto nr entries of elem bytes of fd, none mapped yet (span 0: MAPWIN_SPAN). */
void mapwin__init(struct mapwin *w, int fd, size_t elem, size_t nr, size_t span);
/* Entry i, its window mapped if need be: NULL (w->err set) past the end or if it cannot be. */
void *mapwin__at(struct mapwin *w, size_t i);
/* Every entry zeroed, a window at a time, none left mapped: 0 or -errno. */
int mapwin__zero(struct mapwin *w);
/* The window unmapped (w stays usable). */
void mapwin__end(struct mapwin *w);
/* The windows every mapwin of this process mapped so far, and their bytes (-v: their cost). */
void mapwin__totals(uint64_t *windows, uint64_t *bytes);
/* The bytes the whole table takes, as the kernel maps it (whole pages). */
size_t mapwin__table_bytes(const struct mapwin *w);

#endif
