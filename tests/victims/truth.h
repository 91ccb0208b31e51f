/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Ground-truth bookkeeping shared by the victim programs (header only: the
 * Makefile builds every tests/victims/X.c on its own).
 *
 * A victim tells this registry about every block it gets and gives back
 * (tr_alloc / tr_free / tr_move / tr_munmap, right next to the real call), so
 * the TRUTH lines it prints at the end are computed from what it actually did,
 * not written down beside the code. Output, one line per (site, api[, phase])
 * that still holds blocks:
 *
 *   TRUTH site=<function> api=<api> bytes=<outstanding> allocs=<outstanding>
 *         [line=<line of the allocation call>] [callers=f1,f2,...] [phase=pre|post]
 *
 * (one line; wrapped here). callers is the victim's own call path at the
 * allocation, innermost first: frames[1], frames[2], ... of the stack. It is
 * kept with TR_ENTER/TR_LEAVE in every victim function on the way to a site,
 * and left out when blocks of one site were allocated from different paths.
 * A "# outstanding: ..." summary line follows, for comparison with valgrind,
 * and any "# key: value" notes of the victim (tr_note).
 *
 * Where: the file named by $VICTIM_TRUTH (truncated), else stdout. Under
 * `memleakbpf -c` the victim's stdout is mixed with the tracer's own report,
 * so tests/e2e/run.py always sets VICTIM_TRUTH.
 *
 * Nothing here allocates: the registry is static, output goes through
 * snprintf + write(2). The registry stores pointers XOR-masked so that
 * valgrind still calls the leaked blocks "definitely lost".
 *
 * Conventions of the victims (tests/e2e/run.py depends on them):
 *  - every allocation site is a SITE function named site_*, calling the
 *    allocation API directly, so frames[0].function is the site;
 *  - intermediate callers are VIA functions named via_* or thr_*;
 *  - every pointer is escaped with ESCAPE(), or gcc -O2 deletes unused
 *    allocations and folds malloc/free pairs;
 *  - constant arguments that gcc could fold (realloc(NULL, n) -> malloc(n))
 *    go through OPAQUE().
 */
#ifndef VICTIM_TRUTH_H
#define VICTIM_TRUTH_H

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * noipa: besides noinline, no clones (.constprop/.isra would rename the
 * symbol), no identical-code folding (two equal sites would become one) and
 * no partial inlining (.part).
 */
#define SITE __attribute__((noinline, noipa))
#define VIA SITE
#define ESCAPE(p) asm volatile("" : : "r"(p) : "memory")
#define OPAQUE(x) asm volatile("" : "+r"(x))

#define TR_CAP (1u << 17)	/* live blocks at once */
#define TR_MAX_SITES 256
#define TR_MAX_DEPTH 8
#define TR_MASK ((uintptr_t)0x5a5a5a5a5a5a5a5aull)

struct tr_site {
	const char *site;
	const char *api;
	const char *phase;	/* NULL: the victim has no phases */
	int line;		/* -1: not set yet; 0: blocks from several lines */
	int ncallers;		/* -1: blocks from several paths */
	const char *callers[TR_MAX_DEPTH];
};

struct tr_block {
	uintptr_t key;		/* pointer ^ TR_MASK; 0: empty slot */
	uint64_t size;
	uint32_t site;
};

static struct tr_block tr_blocks[TR_CAP];
static struct tr_site tr_sites[TR_MAX_SITES];
static unsigned tr_nsites;
static unsigned tr_nblocks;
static const char *tr_phase;
static char tr_notes[512];	/* "# ..." lines added to the report */
static pthread_mutex_t tr_lock = PTHREAD_MUTEX_INITIALIZER;
static __thread const char *tr_path[TR_MAX_DEPTH];
static __thread int tr_depth;

/* The victim's own call path: TR_ENTER() first thing in main, VIA and thr_ functions. */
#define TR_ENTER() tr_enter(__func__)
#define TR_LEAVE() tr_leave()

static inline void tr_enter(const char *fn)
{
	if (tr_depth < TR_MAX_DEPTH)
		tr_path[tr_depth] = fn;
	tr_depth++;
	asm volatile("" : : : "memory");
}

static inline void tr_leave(void)
{
	asm volatile("" : : : "memory");	/* also keeps the call before it from being a tail call */
	tr_depth--;
}

static void tr_die(const char *what)
{
	char buf[256];
	int n = snprintf(buf, sizeof(buf), "victim: truth bookkeeping: %s\n", what);

	if (write(2, buf, n) < 0)
		_exit(98);
	_exit(99);
}

static inline uint32_t tr_hash(uintptr_t key)
{
	return (uint32_t)((key * 0x9e3779b97f4a7c15ull) >> 40) & (TR_CAP - 1);
}

/* Caller holds tr_lock. */
static uint32_t tr_site_index(const char *site, const char *api, int line)
{
	const char *callers[TR_MAX_DEPTH];
	int n = 0, i;
	unsigned s;

	/*
	 * Innermost caller first: the path minus nothing (the site does not
	 * TR_ENTER). Deeper than the path kept, the innermost callers are not
	 * known: -1, as for several paths.
	 */
	if (tr_depth > TR_MAX_DEPTH)
		n = -1;
	for (i = tr_depth - 1; n >= 0 && i >= 0; i--)
		callers[n++] = tr_path[i];
	for (s = 0; s < tr_nsites; s++) {
		struct tr_site *t = &tr_sites[s];

		if (strcmp(t->site, site) || strcmp(t->api, api) || t->phase != tr_phase)
			continue;
		if (t->line != line)
			t->line = 0;
		if (n < 0 || t->ncallers != n || memcmp(t->callers, callers, n * sizeof(*callers)))
			t->ncallers = -1;
		return s;
	}
	if (tr_nsites == TR_MAX_SITES)
		tr_die("too many sites");
	tr_sites[tr_nsites].site = site;
	tr_sites[tr_nsites].api = api;
	tr_sites[tr_nsites].phase = tr_phase;
	tr_sites[tr_nsites].line = line;
	tr_sites[tr_nsites].ncallers = n;
	if (n > 0)
		memcpy(tr_sites[tr_nsites].callers, callers, n * sizeof(*callers));
	return tr_nsites++;
}

/* Caller holds tr_lock. */
static void tr_insert(uintptr_t key, uint64_t size, uint32_t site)
{
	uint32_t i = tr_hash(key);

	if (tr_nblocks >= TR_CAP - TR_CAP / 8)
		tr_die("registry full");
	while (tr_blocks[i].key) {
		if (tr_blocks[i].key == key)
			tr_die("the allocator returned a block that is still live");
		i = (i + 1) & (TR_CAP - 1);
	}
	tr_blocks[i].key = key;
	tr_blocks[i].size = size;
	tr_blocks[i].site = site;
	tr_nblocks++;
}

/* Caller holds tr_lock. Removes the block at key into *out; -1 when unknown. */
static int tr_remove(uintptr_t key, struct tr_block *out)
{
	uint32_t i = tr_hash(key), j, home;

	while (tr_blocks[i].key != key) {
		if (!tr_blocks[i].key)
			return -1;
		i = (i + 1) & (TR_CAP - 1);
	}
	*out = tr_blocks[i];
	/* Backward-shift deletion keeps every probe chain unbroken. */
	for (j = (i + 1) & (TR_CAP - 1); tr_blocks[j].key; j = (j + 1) & (TR_CAP - 1)) {
		home = tr_hash(tr_blocks[j].key);
		if (((j - home) & (TR_CAP - 1)) >= ((j - i) & (TR_CAP - 1))) {
			tr_blocks[i] = tr_blocks[j];
			i = j;
		}
	}
	tr_blocks[i].key = 0;
	tr_nblocks--;
	return 0;
}

static void tr_alloc_at(const void *p, uint64_t size, const char *site, const char *api, int line)
{
	if (!p)
		return;
	pthread_mutex_lock(&tr_lock);
	tr_insert((uintptr_t)p ^ TR_MASK, size, tr_site_index(site, api, line));
	pthread_mutex_unlock(&tr_lock);
}

static void tr_free(const void *p)
{
	struct tr_block b;

	if (!p)
		return;
	pthread_mutex_lock(&tr_lock);
	if (tr_remove((uintptr_t)p ^ TR_MASK, &b))
		tr_die("free of a block the victim never recorded");
	pthread_mutex_unlock(&tr_lock);
}

/* realloc/mremap that succeeded: the old block is gone, the new one is the site's. */
static void tr_move_at(const void *old, const void *p, uint64_t size, const char *site,
		       const char *api, int line)
{
	tr_free(old);
	tr_alloc_at(p, size, site, api, line);
}

/*
 * For threads: a realloc frees `old` inside the allocator, where another
 * thread can get the same address before tr_move_at() runs. Take the old
 * record out first (tr_take), then after the call TR_MOVED puts the new block
 * in, or the old one back if the call failed.
 */
static struct tr_block tr_take(const void *old)
{
	struct tr_block b = { 0, 0, 0 };

	if (!old)
		return b;
	pthread_mutex_lock(&tr_lock);
	if (tr_remove((uintptr_t)old ^ TR_MASK, &b))
		tr_die("realloc of a block the victim never recorded");
	pthread_mutex_unlock(&tr_lock);
	return b;
}

static void tr_moved_at(const struct tr_block *old, const void *p, uint64_t size,
			const char *site, const char *api, int line)
{
	if (p) {
		tr_alloc_at(p, size, site, api, line);
	} else if (old->key) {
		pthread_mutex_lock(&tr_lock);
		tr_insert(old->key, old->size, old->site);
		pthread_mutex_unlock(&tr_lock);
	}
}

/*
 * munmap(addr, len) of a recorded mapping: the whole of it, or its front part
 * (the rest stays outstanding at the same site, as one block of what is left).
 */
static void tr_munmap(const void *addr, uint64_t len)
{
	struct tr_block b;

	pthread_mutex_lock(&tr_lock);
	if (tr_remove((uintptr_t)addr ^ TR_MASK, &b))
		tr_die("munmap of a mapping the victim never recorded");
	if (len < b.size)
		tr_insert(((uintptr_t)addr + len) ^ TR_MASK, b.size - len, b.site);
	pthread_mutex_unlock(&tr_lock);
}

/* An extra "# key: value" line for the report. */
static void tr_note(const char *key, const char *value)
{
	size_t n = strlen(tr_notes);

	snprintf(tr_notes + n, sizeof(tr_notes) - n, "# %s: %s\n", key, value);
}

/* A "# key: N" line for the report. */
static void tr_note_u64(const char *key, unsigned long long v)
{
	char line[32];

	snprintf(line, sizeof(line), "%llu", v);
	tr_note(key, line);
}

/* Blocks allocated from now on belong to this phase ("pre", "post"). */
static void tr_set_phase(const char *phase)
{
	pthread_mutex_lock(&tr_lock);
	tr_phase = phase;
	pthread_mutex_unlock(&tr_lock);
}

/* The macros a site uses, on the same line as the allocation call. */
#define TR_ALLOC(p, size, api) tr_alloc_at((p), (size), __func__, (api), __LINE__)
#define TR_MOVE(old, p, size, api) tr_move_at((old), (p), (size), __func__, (api), __LINE__)
#define TR_MOVED(taken, p, size, api) tr_moved_at((taken), (p), (size), __func__, (api), __LINE__)

static void tr_write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			_exit(97);
		buf += n;
		len -= (size_t)n;
	}
}

/* Write the raw line, no allocation. */
static void tr_say(int fd, const char *line)
{
	tr_write_all(fd, line, strlen(line));
}

static int tr_is_mapping(const char *api)
{
	return !strcmp(api, "mmap") || !strcmp(api, "mremap");
}

/* Where the truth goes: $VICTIM_TRUTH (truncated), else stdout. */
static int tr_open(void)
{
	const char *path = getenv("VICTIM_TRUTH");
	int fd = 1;

	if (path && *path) {
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0)
			tr_die("cannot open $VICTIM_TRUTH");
	}
	return fd;
}

/*
 * The one TRUTH line of a victim that counts its blocks itself (more than
 * the registry holds): n mallocs of size bytes at site, through callers,
 * and "# blocks: n".
 */
static void tr_report_counted(const char *site, const char *callers, unsigned long n,
			      unsigned long size)
{
	char line[256];
	int len = snprintf(line, sizeof(line),
			   "TRUTH site=%s api=malloc bytes=%lu allocs=%lu callers=%s\n"
			   "# blocks: %lu\n", site, n * size, n, callers, n);

	tr_write_all(tr_open(), line, len);
}

/* Print the TRUTH lines (to $VICTIM_TRUTH or stdout). */
static void tr_report(void)
{
	static uint64_t bytes[TR_MAX_SITES], allocs[TR_MAX_SITES];
	uint64_t heap_bytes = 0, heap_blocks = 0, map_bytes = 0, map_blocks = 0;
	char line[512];
	unsigned i, s;
	int fd, n, k;

	pthread_mutex_lock(&tr_lock);
	for (i = 0; i < TR_CAP; i++) {
		if (!tr_blocks[i].key)
			continue;
		s = tr_blocks[i].site;
		bytes[s] += tr_blocks[i].size;
		allocs[s]++;
	}
	fd = tr_open();
	for (s = 0; s < tr_nsites; s++) {
		struct tr_site *t = &tr_sites[s];

		if (!allocs[s])
			continue;
		if (tr_is_mapping(t->api)) {
			map_bytes += bytes[s];
			map_blocks += allocs[s];
		} else {
			heap_bytes += bytes[s];
			heap_blocks += allocs[s];
		}
		n = snprintf(line, sizeof(line), "TRUTH site=%s api=%s bytes=%llu allocs=%llu",
			     t->site, t->api, (unsigned long long)bytes[s],
			     (unsigned long long)allocs[s]);
		if (t->line > 0)
			n += snprintf(line + n, sizeof(line) - n, " line=%d", t->line);
		if (t->ncallers > 0) {
			n += snprintf(line + n, sizeof(line) - n, " callers=");
			for (k = 0; k < t->ncallers; k++)
				n += snprintf(line + n, sizeof(line) - n, "%s%s", k ? "," : "",
					      t->callers[k]);
		}
		if (t->phase)
			n += snprintf(line + n, sizeof(line) - n, " phase=%s", t->phase);
		n += snprintf(line + n, sizeof(line) - n, "\n");
		tr_write_all(fd, line, n);
	}
	n = snprintf(line, sizeof(line),
		     "# outstanding: heap %llu bytes in %llu blocks, mappings %llu bytes in %llu\n",
		     (unsigned long long)heap_bytes, (unsigned long long)heap_blocks,
		     (unsigned long long)map_bytes, (unsigned long long)map_blocks);
	tr_write_all(fd, line, n);
	tr_say(fd, tr_notes);
	if (fd != 1)
		close(fd);
	pthread_mutex_unlock(&tr_lock);
}

#endif /* VICTIM_TRUTH_H */
