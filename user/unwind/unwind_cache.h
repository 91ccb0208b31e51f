/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Unwind tables kept across runs (--unwind-cache, like perf's build-id
 * cache): each file's packed rows as BPF takes them, and what places them
 * in a process, so that the next run's stop at `import torch` reads 280
 * entries instead of interpreting 5.7 million rows of CFI.
 *
 * An entry is used only when everything that made it is the same: the
 * file (its build id, device, inode, size, mtime and ctime), the format
 * (UNWIND_CACHE_FORMAT and the layout of the rows) and the tracer itself
 * (its own build id: any change of the code that reads CFI makes a new
 * one). Anything else, or a short, bad or corrupted entry (a checksum
 * over all of it), is a miss: the rows are built and the entry rewritten.
 *
 * The tracer runs as root: the directory must be ours and writable by
 * nobody else, not a symbolic link; entries are opened with O_NOFOLLOW
 * relative to its descriptor and must be our own regular files; they are
 * written to a temporary of an unguessable name, then renamed.
 */
#ifndef UNWIND_CACHE_H
#define UNWIND_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cfi_table;
struct unwind_row;
struct unwind_cache;

#define UNWIND_CACHE_DIR "/var/cache/memleakbpf"
/* Past this, the entries used longest ago are removed (after a run's writes). */
#define UNWIND_CACHE_MAX_BYTES (1ull << 30)

/* What identifies a file's content, as far as the cache is concerned. */
struct unwind_cache_key {
	uint8_t build_id[64];
	uint64_t build_id_len;		/* 0: none (then the rest alone); 64 bits: no padding */
	uint64_t dev, ino, size;
	int64_t mtime_ns, ctime_ns;
};

/* The key of the file open at fd whose build id is id[0..len). 0 or -errno. */
int unwind_cache__key(int fd, const uint8_t *id, size_t len, struct unwind_cache_key *k);
/*
 * The tracer's own build id into tag (what makes an entry this build's):
 * its length, or 0 when it has none (then the format alone).
 */
size_t unwind_cache__self_tag(uint8_t *tag, size_t max);

/*
 * The cache in dir (made, 0700, when missing), for entries of tag[0..len).
 * -errno with one line in err (no prefix, no newline) when it is refused:
 * not a directory, a symbolic link, not ours, writable by others.
 */
int unwind_cache__open(const char *dir, const uint8_t *tag, size_t len,
		       struct unwind_cache **out, char *err, size_t errlen);
void unwind_cache__free(struct unwind_cache *c);	/* NULL: nothing */
const char *unwind_cache__dir(const struct unwind_cache *c);

/* An entry's rows, lent from its file mapped (no copy, no fresh pages to fault in). */
struct unwind_cache_rows {
	const struct unwind_row *rows;
	size_t nr;
	void *map;			/* unwind_cache__put_back unmaps it */
	size_t map_len;
};

/*
 * k's entry: a table (segments, base, sources, build id; no rows of its
 * own) and its packed rows. 0; -ENOENT when there is none; another -errno
 * when there is one that is not to be trusted (ignored). Safe from
 * several threads at once. The entry is never written in place (a new one
 * is renamed over it), so the mapping stays whole while it is lent.
 */
int unwind_cache__get(const struct unwind_cache *c, const struct unwind_cache_key *k,
		      struct cfi_table **cfi, struct unwind_cache_rows *rows);
void unwind_cache__put_back(struct unwind_cache_rows *rows);
/* Write k's entry of cfi and rows[0..nr) atomically. 0 or -errno. */
int unwind_cache__put(const struct unwind_cache *c, const struct unwind_cache_key *k,
		      const struct cfi_table *cfi, const struct unwind_row *rows, size_t nr);
/*
 * Keep the entries within max bytes, removing those used longest ago
 * (a hit marks its entry used), and temporaries an interrupted write left.
 * The number removed.
 */
size_t unwind_cache__trim(const struct unwind_cache *c, uint64_t max);

#endif
