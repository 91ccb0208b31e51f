/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What unwind.c (the tables by build id, the published mappings) and
 * unwind_build.c (reading files' CFI into rows, loading them into BPF)
 * share.
 */
#ifndef UNWIND_INTERNAL_H
#define UNWIND_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "cfi.h"
#include "unwind.h"
#include "unwind_cache.h"

struct unwind_save;

/* One file's rows in BPF, and what places them in a process. */
struct table {
	uint8_t build_id[64];
	size_t build_id_len;
	dev_t dev;
	ino_t ino;
	int fd;				/* the file, while its rows are to be built; else -1 */
	char *path;			/* where it was first mapped, for messages */
	struct cfi_table *cfi;		/* its segments (rows freed once loaded); NULL if unread */
	uint32_t first_row, nr_rows;	/* nr_rows 0: frame pointers (once built) */
};

#define NO_TABLE SIZE_MAX	/* a mapping whose file could not be opened */

/* A mapping of the target, to recognize it next time without opening its file. */
struct published {
	uint64_t start, end, offset;
	dev_t dev;
	ino_t ino;
	size_t table;		/* index in unwind.tables, or NO_TABLE */
};

/* An exec'd image's mappings (--follow: unwind_image.c), by its tag. */
struct image_pub {
	uint32_t tag;
	struct published *pub;
	size_t nr;
};

struct unwind {
	struct unwind_ops ops;
	int verbose;
	bool lazy;		/* new files' tables are built by unwind__build */
	struct table *tables;
	size_t nr_tables, cap_tables;
	size_t nr_pending;	/* tables whose fd is still open */
	struct published *pub;	/* the target's executable mappings, by address */
	size_t nr_pub;
	struct unwind_mapping *sent;	/* what BPF was last given for them */
	size_t nr_sent;
	bool said_too_many;
	struct image_pub *images;	/* the exec'd images alive */
	size_t nr_images, cap_images;
	bool said_no_slot;
	const struct unwind_cache *cache;	/* --unwind-cache: read; NULL: off */
	struct unwind_save *save;	/* ... and written (owns the cache) */
	size_t files_cached, files_read;	/* tables built from the cache, and from CFI */
};

/* unwind.c's, for unwind_image.c too. */
void unwind__resolve(struct unwind *u, pid_t pid, const struct maps *maps, struct published *pub,
		     size_t *nr);
struct unwind_mapping unwind__mapping_of(const struct unwind *u, const struct published *pb);
/* Add pb's table to which[0..*nr) if it is pending and not there yet. */
void unwind__add_pending(const struct unwind *u, const struct published *pb, size_t *which,
			 size_t *nr);
/* The target's mappings to BPF, unless they are what it has already. 0 or -errno. */
int unwind__publish(struct unwind *u);

static inline bool table__pending(const struct table *t)
{
	return t->fd >= 0;
}

/*
 * Build the pending tables which[0..nr) in that order, into BPF with one
 * add_rows; once deadline_ns (CLOCK_MONOTONIC) has passed, stop after the
 * table being read (0: build them all). A table that cannot be built is
 * left without rows (frame pointers), said once. The number built.
 */
size_t unwind_build__tables(struct unwind *u, const size_t *which, size_t nr,
			    uint64_t deadline_ns);
uint64_t unwind_build__now_ns(void);

/* One file's rows, packed (unwind_pack.c); err: none (its table has no CFI then). */
struct unwind_packed {
	struct unwind_row *rows;	/* read from CFI: ours to free */
	size_t nr;
	int err;
	bool keyed;			/* key is the file's (the cache is on) */
	bool cached;			/* the rows are lent by the cache instead */
	struct unwind_cache_key key;
	struct unwind_cache_rows lent;
};

static inline const struct unwind_row *unwind_packed__rows(const struct unwind_packed *p)
{
	return p->cached ? p->lent.rows : p->rows;
}

/* p's rows freed, or given back to the cache. */
void unwind_pack__release(struct unwind_packed *p);

/*
 * Read and pack t's CFI (t->cfi kept, t->fd closed) into *out, or take
 * them from cache (NULL: none) when it has the file's; scratch may be NULL.
 */
void unwind_pack__one(struct table *t, const struct unwind_cache *cache,
		      struct cfi_scratch *scratch, struct unwind_packed *out);
/*
 * The same for tables[which[0..nr)] into out[0..nr), on the machine's
 * cores, the largest files first. The CPU time it took, every thread's.
 */
uint64_t unwind_pack__tables(struct table *tables, const size_t *which, size_t nr,
			     const struct unwind_cache *cache, struct unwind_packed *out);

/* The cache's writer (unwind_save.c), which owns it; NULL when out of memory. */
struct unwind_save *unwind_save__new(struct unwind_cache *cache);
/*
 * Have k's rows[0..nr) and cfi's placing written to the cache, after the
 * stop: true when queued (rows then the writer's to free), false when not
 * (a file changed too recently to trust its timestamps, no memory).
 */
bool unwind_save__queue(struct unwind_save *s, const struct unwind_cache_key *k,
			const struct cfi_table *cfi, struct unwind_row *rows, size_t nr);
/* Wait for the writes queued, say them (verbose), free the writer and the cache. */
void unwind_save__free(struct unwind_save *s, int verbose);	/* NULL: nothing */

#endif
