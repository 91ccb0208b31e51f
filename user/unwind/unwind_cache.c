// SPDX-License-Identifier: GPL-2.0
/*
 * The unwind cache's directory and entries (unwind_cache.h says what an
 * entry is and when it is trusted). An entry is one file named by its
 * key, "<build id>-<dev>-<inode>.rows", holding a header, the table's
 * PT_LOAD segments and its packed rows, the header's checksum covering
 * all three. The directory is the only path opened by name; everything in
 * it is reached relative to its descriptor, without following links.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "cfi.h"
#include "unwind_cache.h"
#include "util/hash.h"

/*
 * Bump by hand when cfi*.c or the packing change the rows a file gives
 * without changing the tracer's build id (never: a change of the code is
 * a new build id; this is for a header change, and for builds without one).
 */
#define UNWIND_CACHE_FORMAT 1
#define TEMP_ATTEMPTS 100
#define STALE_TEMP_S 3600	/* an older temporary is a write that was cut short */

static const char cache_magic[8] = { 'M', 'L', 'B', 'P', 'F', 'U', 'W', 'C' };

struct unwind_cache {
	int dirfd;
	char *dir;
	uint8_t tag[64];
	uint64_t tag_len;
	uid_t uid;
};

/* Every field 64-bit aligned: no padding, so the bytes hashed are the bytes written. */
struct cache_head {
	char magic[8];
	uint32_t format;
	uint32_t head_size;
	uint64_t layout;		/* the formats' sizes and constants (layout()) */
	uint8_t tag[64];		/* the tracer's build id */
	uint64_t tag_len;
	struct unwind_cache_key key;
	uint64_t base, nr_segs, nr_rows, nr_fdes, nr_bad;
	uint64_t sources;		/* 1: .eh_frame, 2: .debug_frame */
	uint8_t cfi_id[64];		/* the table's build id, as cfi.c read it */
	uint64_t cfi_id_len;
	uint64_t sum;			/* of all of the entry, this field 0 */
};

struct cache_seg {
	uint64_t vaddr, offset, filesz, memsz, flags;
};

_Static_assert(sizeof(struct unwind_cache_key) == 112, "unwind_cache_key has padding");
_Static_assert(sizeof(struct cache_head) % 8 == 0, "cache_head has padding");

#define MAX_SEGS 256	/* more PT_LOADs than this is no ELF file a linker made */

/* What an entry's bytes mean: a change of any of these makes every entry stale. */
static uint64_t layout(void)
{
	const uint64_t v[] = {
		UNWIND_CACHE_FORMAT, sizeof(struct cache_head), sizeof(struct cache_seg),
		sizeof(struct unwind_row), offsetof(struct unwind_row, pc),
		offsetof(struct unwind_row, cfa_off), offsetof(struct unwind_row, kind),
		offsetof(struct unwind_row, rbp_off), UNWIND_CFA_MASK, UNWIND_RBP_SAVED,
		UNWIND_RBP_LOST, UNWIND_CFA_X8, UNWIND_CFA_OTHER, UNWIND_CFA_END,
		UNWIND_CFA_SIGNAL, MEMLEAK_CFI_MAX_ROWS,
	};
	uint64_t h = 0x6d656d6c65616b;

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		h = hash__mix(h ^ v[i]);
	return h;
}

static inline uint64_t rotl(uint64_t x, unsigned r)
{
	return x << r | x >> (64 - r);
}

/*
 * A checksum of n bytes, four lanes of 8 at a time (5.7 million rows, 46
 * MB, in a few ms). Each step is a bijection of the lane, so any change
 * of the bytes changes the lanes; against corruption, not an adversary
 * (nobody else can write the directory).
 */
static uint64_t checksum(uint64_t seed, const void *p, size_t n)
{
	const uint64_t k1 = 0x9e3779b97f4a7c15ull, k2 = 0xc2b2ae3d27d4eb4full;
	uint64_t l[4] = { seed, seed ^ k1, seed ^ k2, seed + n };
	const uint8_t *b = p;
	uint64_t w;

	for (; n >= 32; n -= 32, b += 32)
		for (int i = 0; i < 4; i++) {
			memcpy(&w, b + 8 * i, 8);
			l[i] = rotl(l[i] ^ w * k1, 29) * k2;
		}
	for (int i = 0; n >= 8; n -= 8, b += 8, i++) {
		memcpy(&w, b, 8);
		l[i] = rotl(l[i] ^ w * k1, 29) * k2;
	}
	w = 0;
	memcpy(&w, b, n);
	l[3] = rotl(l[3] ^ (w * k1) ^ (n + 1), 29) * k2;
	return hash__mix(l[0] ^ rotl(l[1], 17) ^ rotl(l[2], 37) ^ rotl(l[3], 53));
}

static uint64_t entry_sum(const struct cache_head *h, const struct cache_seg *segs,
			  const struct unwind_row *rows)
{
	struct cache_head z = *h;

	z.sum = 0;
	return checksum(checksum(checksum(1, &z, sizeof(z)), segs, h->nr_segs * sizeof(*segs)),
			rows, h->nr_rows * sizeof(*rows));
}

int unwind_cache__key(int fd, const uint8_t *id, size_t len, struct unwind_cache_key *k)
{
	struct stat st;

	memset(k, 0, sizeof(*k));
	if (len > sizeof(k->build_id))
		return -E2BIG;
	if (fstat(fd, &st))
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	memcpy(k->build_id, id, len);
	k->build_id_len = len;
	k->dev = st.st_dev;
	k->ino = st.st_ino;
	k->size = (uint64_t)st.st_size;
	k->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	k->ctime_ns = (int64_t)st.st_ctim.tv_sec * 1000000000 + st.st_ctim.tv_nsec;
	return 0;
}

size_t unwind_cache__self_tag(uint8_t *tag, size_t max)
{
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	int len = fd >= 0 ? elf__build_id_fd(fd, tag, max) : 0;

	if (fd >= 0)
		close(fd);
	return len > 0 ? (size_t)len : 0;
}

__attribute__((format(printf, 4, 5)))
static int refuse(char *err, size_t errlen, int e, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -e;
}

/* The directory, made if missing; refused unless it is ours alone to write. */
static int open_dir(const char *dir, char *err, size_t errlen)
{
	struct stat st;
	int fd, e;

	if (mkdir(dir, 0700) && errno != EEXIST)
		return refuse(err, errlen, errno, "cannot make %s: %s", dir, strerror(errno));
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	e = errno;
	/* A link fails as ELOOP or, with O_DIRECTORY, as ENOTDIR: which, lstat says. */
	if (fd < 0 && (e == ELOOP || (!lstat(dir, &st) && S_ISLNK(st.st_mode))))
		return refuse(err, errlen, ELOOP, "%s is a symbolic link", dir);
	if (fd < 0)
		return refuse(err, errlen, e, "%s %s", dir,
			      e == ENOTDIR ? "is not a directory" : strerror(e));
	if (fstat(fd, &st) || st.st_uid != geteuid() || (st.st_mode & 022)) {
		e = st.st_uid != geteuid() ? EPERM : EACCES;
		close(fd);
		if (e == EPERM)
			return refuse(err, errlen, e, "%s belongs to uid %u, not to us (uid %u)", dir,
				      (unsigned)st.st_uid, (unsigned)geteuid());
		return refuse(err, errlen, e, "%s is writable by others (mode %04o): want 0700",
			      dir, (unsigned)(st.st_mode & 07777));
	}
	return fd;
}

int unwind_cache__open(const char *dir, const uint8_t *tag, size_t len,
		       struct unwind_cache **out, char *err, size_t errlen)
{
	struct unwind_cache *c;
	int fd;

	*out = NULL;
	if (len > sizeof(c->tag))
		return refuse(err, errlen, E2BIG, "the tracer's build id is too long");
	fd = open_dir(dir, err, errlen);
	if (fd < 0)
		return fd;
	c = calloc(1, sizeof(*c));
	if (!c || !(c->dir = strdup(dir))) {
		free(c);
		close(fd);
		return refuse(err, errlen, ENOMEM, "no memory");
	}
	c->dirfd = fd;
	memcpy(c->tag, tag, len);
	c->tag_len = len;
	c->uid = geteuid();
	*out = c;
	return 0;
}

void unwind_cache__free(struct unwind_cache *c)
{
	if (!c)
		return;
	close(c->dirfd);
	free(c->dir);
	free(c);
}

const char *unwind_cache__dir(const struct unwind_cache *c)
{
	return c->dir;
}

/* "<build id or 'none'>-<dev>-<inode>.rows" */
static void entry_name(const struct unwind_cache_key *k, char *name, size_t len)
{
	size_t n = 0;

	for (size_t i = 0; i < k->build_id_len; i++)
		n += (size_t)snprintf(name + n, len - n, "%02x", k->build_id[i]);
	snprintf(name + n, len - n, "%s-%llx-%llx.rows", k->build_id_len ? "" : "none",
		 (unsigned long long)k->dev, (unsigned long long)k->ino);
}

/* The header against what this run would write for k: 0, -EBADMSG or -ESTALE. */
static int check_head(const struct unwind_cache *c, const struct unwind_cache_key *k,
		      const struct cache_head *h, uint64_t size)
{
	if (memcmp(h->magic, cache_magic, sizeof(cache_magic)) ||
	    h->head_size != sizeof(*h) || h->nr_segs > MAX_SEGS ||
	    h->nr_rows > MEMLEAK_CFI_MAX_ROWS || h->cfi_id_len > sizeof(h->cfi_id))
		return -EBADMSG;
	if (size != sizeof(*h) + h->nr_segs * sizeof(struct cache_seg) +
		    h->nr_rows * sizeof(struct unwind_row))
		return -EBADMSG;
	if (h->format != UNWIND_CACHE_FORMAT || h->layout != layout() ||
	    h->tag_len != c->tag_len || memcmp(h->tag, c->tag, sizeof(h->tag)) ||
	    memcmp(&h->key, k, sizeof(*k)))
		return -ESTALE;
	return 0;
}

/* The table an entry describes (no rows of its own: they are packed). */
static struct cfi_table *table_of(const struct cache_head *h, const struct cache_seg *s)
{
	struct cfi_table *t = calloc(1, sizeof(*t));

	if (!t || (h->nr_segs && !(t->segs = calloc(h->nr_segs, sizeof(*t->segs))))) {
		free(t);
		return NULL;
	}
	for (size_t i = 0; i < h->nr_segs; i++)
		t->segs[i] = (struct elf_segment){ s[i].vaddr, s[i].offset, s[i].filesz,
						   s[i].memsz, (uint32_t)s[i].flags };
	t->nr_segs = h->nr_segs;
	t->base = h->base;
	t->nr_fdes = h->nr_fdes;
	t->nr_bad = h->nr_bad;
	t->eh_frame = h->sources & 1;
	t->debug_frame = h->sources & 2;
	memcpy(t->build_id, h->cfi_id, h->cfi_id_len);
	t->build_id_len = h->cfi_id_len;
	return t;
}

/*
 * The entry open at fd, checked from its header to its checksum; its
 * rows lent from the file mapped whole (MAP_POPULATE: its pages, in the
 * page cache, mapped at once rather than faulted in one by one).
 */
static int read_entry(const struct unwind_cache *c, int fd, const struct unwind_cache_key *k,
		      struct cfi_table **cfi, struct unwind_cache_rows *out)
{
	const struct cache_head *h;
	const struct cache_seg *segs;
	struct stat st;
	uint8_t *map;
	int err;

	if (fstat(fd, &st))
		return -errno;
	if (!S_ISREG(st.st_mode) || st.st_uid != c->uid)
		return -EPERM;	/* not ours: whoever put it there, it is not read */
	if ((uint64_t)st.st_size < sizeof(*h))
		return -EBADMSG;
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
	if (map == MAP_FAILED)
		return -errno;
	h = (const struct cache_head *)map;
	segs = (const struct cache_seg *)(map + sizeof(*h));
	err = check_head(c, k, h, (uint64_t)st.st_size);
	if (!err && entry_sum(h, segs, (const struct unwind_row *)(segs + h->nr_segs)) != h->sum)
		err = -EBADMSG;
	if (!err && !(*cfi = table_of(h, segs)))
		err = -ENOMEM;
	if (err) {
		munmap(map, (size_t)st.st_size);
		return err;
	}
	*out = (struct unwind_cache_rows){ (const struct unwind_row *)(segs + h->nr_segs),
					   h->nr_rows, map, (size_t)st.st_size };
	return 0;
}

void unwind_cache__put_back(struct unwind_cache_rows *rows)
{
	if (rows->map)
		munmap(rows->map, rows->map_len);
	*rows = (struct unwind_cache_rows){ 0 };
}

int unwind_cache__get(const struct unwind_cache *c, const struct unwind_cache_key *k,
		      struct cfi_table **cfi, struct unwind_cache_rows *rows)
{
	char name[256];
	int fd, err;

	*cfi = NULL;
	*rows = (struct unwind_cache_rows){ 0 };
	entry_name(k, name, sizeof(name));
	/* O_NONBLOCK: a FIFO at the name must not hold the target's stop. */
	fd = openat(c->dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;	/* -ENOENT: none; -ELOOP: a link, never followed */
	err = read_entry(c, fd, k, cfi, rows);
	if (!err)
		futimens(fd, NULL);	/* used now: the last to go when the cache is trimmed */
	close(fd);
	return err;
}

static void fill_head(const struct unwind_cache *c, const struct unwind_cache_key *k,
		      const struct cfi_table *cfi, size_t nr, struct cache_head *h)
{
	memset(h, 0, sizeof(*h));
	memcpy(h->magic, cache_magic, sizeof(cache_magic));
	h->format = UNWIND_CACHE_FORMAT;
	h->head_size = sizeof(*h);
	h->layout = layout();
	memcpy(h->tag, c->tag, c->tag_len);
	h->tag_len = c->tag_len;
	h->key = *k;
	h->base = cfi->base;
	h->nr_segs = cfi->nr_segs;
	h->nr_rows = nr;
	h->nr_fdes = cfi->nr_fdes;
	h->nr_bad = cfi->nr_bad;
	h->sources = (cfi->eh_frame ? 1 : 0) | (cfi->debug_frame ? 2 : 0);
	memcpy(h->cfi_id, cfi->build_id, cfi->build_id_len);
	h->cfi_id_len = cfi->build_id_len;
}

static int write_all(int fd, const void *buf, size_t n)
{
	for (size_t done = 0; done < n;) {
		ssize_t w = write(fd, (const char *)buf + done, n - done);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w ? -errno : -EIO;
		done += (size_t)w;
	}
	return 0;
}

/* ".<name>.<random>": nobody can plant something at it in advance. */
static int create_temp(const struct unwind_cache *c, const char *name, char *tmp, size_t len)
{
	static const char chars[] = "abcdefghijklmnopqrstuvwxyz0123456789";
	unsigned char b[8];
	int fd = -EEXIST;

	for (int i = 0; i < TEMP_ATTEMPTS && fd == -EEXIST; i++) {
		char s[sizeof(b) + 1];

		if (getrandom(b, sizeof(b), 0) != (ssize_t)sizeof(b))
			return -EIO;
		for (size_t k = 0; k < sizeof(b); k++)
			s[k] = chars[b[k] % (sizeof(chars) - 1)];
		s[sizeof(b)] = '\0';
		snprintf(tmp, len, ".%s.%s", name, s);
		fd = openat(c->dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			    0600);
		if (fd < 0)
			fd = -errno;
	}
	return fd;
}

int unwind_cache__put(const struct unwind_cache *c, const struct unwind_cache_key *k,
		      const struct cfi_table *cfi, const struct unwind_row *rows, size_t nr)
{
	struct cache_seg segs[MAX_SEGS];
	struct cache_head h;
	char name[256], tmp[300];
	int fd, err;

	if (cfi->nr_segs > MAX_SEGS || nr > MEMLEAK_CFI_MAX_ROWS)
		return -E2BIG;
	fill_head(c, k, cfi, nr, &h);
	for (size_t i = 0; i < cfi->nr_segs; i++) {
		const struct elf_segment *s = &cfi->segs[i];

		segs[i] = (struct cache_seg){ s->vaddr, s->offset, s->filesz, s->memsz, s->flags };
	}
	h.sum = entry_sum(&h, segs, rows);
	entry_name(k, name, sizeof(name));
	fd = create_temp(c, name, tmp, sizeof(tmp));
	if (fd < 0)
		return fd;
	err = write_all(fd, &h, sizeof(h));
	if (!err)
		err = write_all(fd, segs, cfi->nr_segs * sizeof(*segs));
	if (!err)
		err = write_all(fd, rows, nr * sizeof(*rows));
	if (close(fd) && !err)
		err = -errno;
	/* The rename replaces whatever is at the name (a link: the link itself). */
	if (!err && renameat(c->dirfd, tmp, c->dirfd, name))
		err = -errno;
	if (err)
		unlinkat(c->dirfd, tmp, 0);
	return err;
}

/* An entry met while trimming. */
struct trim_entry {
	int64_t used_ns;
	uint64_t size;
	char name[256];
};

static int by_use(const void *a, const void *b)
{
	const struct trim_entry *x = a, *y = b;

	return (x->used_ns > y->used_ns) - (x->used_ns < y->used_ns);
}

static bool is_entry(const char *name)
{
	size_t n = strlen(name);

	return name[0] != '.' && n > 5 && !strcmp(name + n - 5, ".rows");
}

/* Our entries in d (old temporaries removed on the way), their total size in *total. */
static struct trim_entry *list_entries(const struct unwind_cache *c, DIR *d, size_t *nr,
				       uint64_t *total)
{
	struct trim_entry *v = NULL;
	size_t cap = 0;
	struct dirent *de;
	time_t now = time(NULL);

	*nr = 0;
	*total = 0;
	while ((de = readdir(d))) {
		struct stat st;

		if (fstatat(c->dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
		    !S_ISREG(st.st_mode) || st.st_uid != c->uid)
			continue;
		if (de->d_name[0] == '.' && now - st.st_mtime > STALE_TEMP_S)
			unlinkat(c->dirfd, de->d_name, 0);
		if (!is_entry(de->d_name) || strlen(de->d_name) >= sizeof(v->name))
			continue;
		if (*nr == cap) {
			struct trim_entry *g = realloc(v, (cap = cap ? 2 * cap : 64) * sizeof(*v));

			if (!g)
				break;	/* trimmed by what was listed */
			v = g;
		}
		v[*nr].used_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
		v[*nr].size = (uint64_t)st.st_blocks * 512;
		strcpy(v[(*nr)++].name, de->d_name);
		*total += (uint64_t)st.st_blocks * 512;
	}
	return v;
}

size_t unwind_cache__trim(const struct unwind_cache *c, uint64_t max)
{
	int fd = openat(c->dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct trim_entry *v;
	size_t nr, removed = 0;
	uint64_t total;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	v = list_entries(c, d, &nr, &total);
	closedir(d);
	if (total > max)
		qsort(v, nr, sizeof(*v), by_use);
	for (size_t i = 0; i < nr && total > max; i++) {
		if (unlinkat(c->dirfd, v[i].name, 0))
			continue;
		total -= v[i].size;
		removed++;
	}
	free(v);
	return removed;
}
