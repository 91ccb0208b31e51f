// SPDX-License-Identifier: GPL-2.0
/*
 * unwind/unwind_cache: a real file's rows, built, written and read back,
 * are byte for byte the rows built (and so is what places them); an entry
 * is refused when the file changed (mtime, size, build id), when the
 * tracer or the format differ, when it is short or corrupted, when it is
 * a link or not ours; a directory that is a link, not ours or writable
 * by others is refused; the trim removes the entries used longest ago.
 * The tests run in temporary directories (the tracer's default is root's
 * /var/cache/memleakbpf).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "unit.h"
#include "unwind/unwind_internal.h"

static const uint8_t tag[] = { 1, 2, 3, 4, 5, 6, 7, 8 };

struct fixture {
	char dir[64];		/* the cache */
	char files[64];		/* copies of real files, to change */
	struct unwind_cache *c;
};

static bool fixture_open(struct fixture *f)
{
	char err[256];

	strcpy(f->dir, "/tmp/memleakbpf-ucache-XXXXXX");
	strcpy(f->files, "/tmp/memleakbpf-ufiles-XXXXXX");
	ASSERT(mkdtemp(f->dir) && mkdtemp(f->files));
	ASSERT(unwind_cache__open(f->dir, tag, sizeof(tag), &f->c, err, sizeof(err)) == 0);
	return true;
}

static void rm_tree(const char *dir)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		fprintf(stderr, "  could not remove %s\n", dir);
}

static void fixture_close(struct fixture *f)
{
	unwind_cache__free(f->c);
	rm_tree(f->dir);
	rm_tree(f->files);
}

/* A table for the file at path, as unwind.c makes one: pending, its build id read. */
static bool table_open(const char *path, struct table *t)
{
	int len;

	*t = (struct table){ .fd = open(path, O_RDONLY | O_CLOEXEC), .path = (char *)path };
	ASSERT(t->fd >= 0);
	len = elf__build_id_fd(t->fd, t->build_id, sizeof(t->build_id));
	ASSERT(len >= 0);
	t->build_id_len = (size_t)len;
	return true;
}

static bool same_table(const struct cfi_table *a, const struct cfi_table *b)
{
	ASSERT_EQ_U64(a->base, b->base);
	ASSERT_EQ_U64(a->nr_segs, b->nr_segs);
	for (size_t i = 0; i < a->nr_segs; i++) {
		ASSERT_EQ_U64(a->segs[i].vaddr, b->segs[i].vaddr);
		ASSERT_EQ_U64(a->segs[i].offset, b->segs[i].offset);
		ASSERT_EQ_U64(a->segs[i].filesz, b->segs[i].filesz);
		ASSERT_EQ_U64(a->segs[i].memsz, b->segs[i].memsz);
		ASSERT_EQ_U64(a->segs[i].flags, b->segs[i].flags);
	}
	ASSERT_EQ_U64(a->nr_fdes, b->nr_fdes);
	ASSERT_EQ_U64(a->nr_bad, b->nr_bad);
	ASSERT_EQ_U64(a->eh_frame, b->eh_frame);
	ASSERT_EQ_U64(a->debug_frame, b->debug_frame);
	ASSERT_EQ_U64(a->build_id_len, b->build_id_len);
	ASSERT(!memcmp(a->build_id, b->build_id, a->build_id_len));
	return true;
}

/*
 * path's rows built (a miss), written, then taken from the cache by the
 * tracer's own path (unwind_pack__one): the same bytes, the same placing.
 */
static bool round_trip(struct fixture *f, const char *path)
{
	struct table built, again;
	struct unwind_packed pb, pc;
	uint64_t b1, b2;

	ASSERT(table_open(path, &built));
	unwind_pack__one(&built, f->c, NULL, &pb);
	ASSERT(!pb.err && pb.keyed && !pb.cached && pb.nr > 1000);
	ASSERT(unwind_cache__put(f->c, &pb.key, built.cfi, pb.rows, pb.nr) == 0);
	ASSERT(table_open(path, &again));
	unwind_pack__one(&again, f->c, NULL, &pc);
	ASSERT(!pc.err && pc.cached);
	ASSERT_EQ_U64(pc.nr, pb.nr);
	ASSERT(!memcmp(unwind_packed__rows(&pc), pb.rows, pb.nr * sizeof(*pb.rows)));
	ASSERT(same_table(again.cfi, built.cfi));
	/* Placed in a process as the built table is. */
	ASSERT(!cfi_table__runtime_base(built.cfi, 0x7f0000001000, 0x1000, &b1));
	ASSERT(!cfi_table__runtime_base(again.cfi, 0x7f0000001000, 0x1000, &b2));
	ASSERT_EQ_U64(b1, b2);
	unwind_pack__release(&pb);
	unwind_pack__release(&pc);
	cfi__table_free(built.cfi);
	cfi__table_free(again.cfi);
	return true;
}

TEST(unwind_cache_round_trip_real_files)
{
	static const char *const files[] = {
		"/lib/x86_64-linux-gnu/libc.so.6",
		"/lib/x86_64-linux-gnu/libstdc++.so.6",
	};
	struct fixture f;
	bool ok = true;

	ASSERT(fixture_open(&f));
	for (size_t i = 0; ok && i < sizeof(files) / sizeof(files[0]); i++)
		ok = round_trip(&f, files[i]);
	fixture_close(&f);
	return ok;
}

static bool copy_file(const char *from, const char *to)
{
	int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	char buf[65536];
	ssize_t n;

	ASSERT(in >= 0 && out >= 0);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		ASSERT(write(out, buf, (size_t)n) == n);
	ASSERT(n == 0);
	close(in);
	ASSERT(close(out) == 0);
	return true;
}

/* The entry of the file at path, written: its key in *k. */
static bool put_file(struct fixture *f, const char *path, struct unwind_cache_key *k)
{
	struct table t;
	struct unwind_packed p;

	ASSERT(table_open(path, &t));
	/* The key as the tracer takes it, from the fd, before the rows are built. */
	ASSERT(unwind_cache__key(t.fd, t.build_id, t.build_id_len, k) == 0);
	unwind_pack__one(&t, NULL, NULL, &p);
	ASSERT(!p.err && t.cfi);
	ASSERT(unwind_cache__put(f->c, k, t.cfi, p.rows, p.nr) == 0);
	free(p.rows);
	cfi__table_free(t.cfi);
	return true;
}

static int get(const struct unwind_cache *c, const struct unwind_cache_key *k)
{
	struct cfi_table *cfi;
	struct unwind_cache_rows rows;
	int err = unwind_cache__get(c, k, &cfi, &rows);

	if (err && (cfi || rows.rows || rows.nr || rows.map))
		return -EFAULT;	/* a refused entry must give nothing */
	cfi__table_free(cfi);
	unwind_cache__put_back(&rows);
	return err;
}

/* The key of the file at path now. */
static bool key_now(const char *path, struct unwind_cache_key *k)
{
	struct table t;

	ASSERT(table_open(path, &t));
	ASSERT(unwind_cache__key(t.fd, t.build_id, t.build_id_len, k) == 0);
	close(t.fd);
	return true;
}

TEST(unwind_cache_changed_file_refused)
{
	struct unwind_cache_key k, now, other;
	struct timespec times[2] = { { 0, UTIME_OMIT }, { 1000000000, 0 } };
	struct unwind_cache *c2;
	char path[128], err[256];
	struct fixture f;
	int fd;

	ASSERT(fixture_open(&f));
	snprintf(path, sizeof(path), "%s/libc.so.6", f.files);
	ASSERT(copy_file("/lib/x86_64-linux-gnu/libc.so.6", path));
	ASSERT(put_file(&f, path, &k));
	ASSERT(get(f.c, &k) == 0);
	/* Another tracer (or format): its tag differs. */
	ASSERT(unwind_cache__open(f.dir, tag, sizeof(tag) - 1, &c2, err, sizeof(err)) == 0);
	ASSERT(get(c2, &k) == -ESTALE);
	unwind_cache__free(c2);
	/* mtime changed (and so ctime): the entry at the file's name is stale. */
	ASSERT(utimensat(AT_FDCWD, path, times, 0) == 0);
	ASSERT(key_now(path, &now));
	ASSERT(get(f.c, &now) == -ESTALE);
	/* Written again, then the size changed. */
	ASSERT(put_file(&f, path, &k));
	ASSERT(get(f.c, &k) == 0);
	fd = open(path, O_WRONLY | O_APPEND);
	ASSERT(fd >= 0 && write(fd, "x", 1) == 1 && close(fd) == 0);
	ASSERT(key_now(path, &now));
	ASSERT(now.size == k.size + 1);
	ASSERT(get(f.c, &now) == -ESTALE);
	/* Another build id: another name; at this entry's name, stale. */
	ASSERT(put_file(&f, path, &k));
	other = k;
	other.build_id[0] ^= 0xff;
	ASSERT(get(f.c, &other) == -ENOENT);
	{
		char cmd[800];

		/* The entry renamed to the other id's name: its header still says k. */
		snprintf(cmd, sizeof(cmd), "cd '%s' && for e in *.rows; do mv \"$e\" %02x\"${e#??}\"; done",
			 f.dir, other.build_id[0]);
		ASSERT(system(cmd) == 0);
	}
	ASSERT(get(f.c, &other) == -ESTALE);
	ASSERT(get(f.c, &k) == -ENOENT);
	fixture_close(&f);
	return true;
}

/* The one entry in dir, by name into name. */
static bool the_entry(const char *dir, char *name, size_t len)
{
	char cmd[200];
	FILE *p;

	snprintf(cmd, sizeof(cmd), "cd '%s' && ls *.rows", dir);
	p = popen(cmd, "r");
	ASSERT(p && fgets(name, (int)len, p));
	pclose(p);
	name[strcspn(name, "\n")] = '\0';
	return true;
}

/* Overwrite byte at off (from the end when negative) of the entry. */
static bool poke(const char *path, off_t off)
{
	int fd = open(path, O_RDWR);
	struct stat st;
	uint8_t b;

	ASSERT(fd >= 0 && !fstat(fd, &st));
	if (off < 0)
		off += st.st_size;
	ASSERT(pread(fd, &b, 1, off) == 1);
	b ^= 0x40;
	ASSERT(pwrite(fd, &b, 1, off) == 1);
	close(fd);
	return true;
}

TEST(unwind_cache_corrupt_entry_refused)
{
	struct unwind_cache_key k;
	char name[256], path[400];
	struct fixture f;
	struct stat st;

	ASSERT(fixture_open(&f));
	ASSERT(put_file(&f, "/lib/x86_64-linux-gnu/libc.so.6", &k));
	ASSERT(the_entry(f.dir, name, sizeof(name)));
	snprintf(path, sizeof(path), "%s/%s", f.dir, name);
	ASSERT(stat(path, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0777) == 0600);
	ASSERT(get(f.c, &k) == 0);
	/* A row's byte: only the checksum tells. */
	ASSERT(poke(path, -3));
	ASSERT(get(f.c, &k) == -EBADMSG);
	ASSERT(poke(path, -3));
	ASSERT(get(f.c, &k) == 0);
	/* The header's magic. */
	ASSERT(poke(path, 0));
	ASSERT(get(f.c, &k) == -EBADMSG);
	ASSERT(poke(path, 0));
	/* Short by a byte, then empty. */
	ASSERT(truncate(path, st.st_size - 1) == 0);
	ASSERT(get(f.c, &k) == -EBADMSG);
	ASSERT(truncate(path, 0) == 0);
	ASSERT(get(f.c, &k) == -EBADMSG);
	/* Rewritten: trusted again. */
	ASSERT(put_file(&f, "/lib/x86_64-linux-gnu/libc.so.6", &k));
	ASSERT(get(f.c, &k) == 0);
	fixture_close(&f);
	return true;
}

TEST(unwind_cache_links_and_owners_refused)
{
	struct unwind_cache_key k;
	char name[256], path[400], elsewhere[400];
	struct fixture f;
	struct stat st;
	int fd;

	ASSERT(fixture_open(&f));
	ASSERT(put_file(&f, "/lib/x86_64-linux-gnu/libc.so.6", &k));
	ASSERT(the_entry(f.dir, name, sizeof(name)));
	snprintf(path, sizeof(path), "%s/%s", f.dir, name);
	snprintf(elsewhere, sizeof(elsewhere), "%s/planted", f.files);
	/* A good entry, moved out and linked to from its name: never followed. */
	ASSERT(rename(path, elsewhere) == 0);
	ASSERT(symlink(elsewhere, path) == 0);
	ASSERT(get(f.c, &k) == -ELOOP);
	/* Written over the link: the link is replaced, what it pointed to untouched. */
	ASSERT(stat(elsewhere, &st) == 0);
	fd = open(elsewhere, O_WRONLY | O_APPEND);
	ASSERT(fd >= 0 && write(fd, "z", 1) == 1 && close(fd) == 0);
	ASSERT(put_file(&f, "/lib/x86_64-linux-gnu/libc.so.6", &k));
	{
		struct stat now, entry;

		ASSERT(stat(elsewhere, &now) == 0 && now.st_size == st.st_size + 1);
		ASSERT(lstat(path, &entry) == 0 && S_ISREG(entry.st_mode));
	}
	ASSERT(get(f.c, &k) == 0);
	/* An entry another user owns. */
	if (geteuid() == 0) {
		ASSERT(chown(path, 65534, 65534) == 0);
		ASSERT(get(f.c, &k) == -EPERM);
	} else {
		fprintf(stderr, "  skip: not root, no entry of another owner to make\n");
	}
	fixture_close(&f);
	return true;
}

static int open_at(const char *dir)
{
	struct unwind_cache *c = NULL;
	char err[256];
	int e = unwind_cache__open(dir, tag, sizeof(tag), &c, err, sizeof(err));

	if (!e && !c)
		return -EFAULT;
	if (e && (c || !*err))
		return -EFAULT;	/* refused: nothing, and one line that says why */
	unwind_cache__free(c);
	return e;
}

TEST(unwind_cache_directory_refused)
{
	char dir[] = "/tmp/memleakbpf-ucdir-XXXXXX", sub[100], link[100], file[100];
	int fd;

	ASSERT(mkdtemp(dir));
	snprintf(sub, sizeof(sub), "%s/cache", dir);
	snprintf(link, sizeof(link), "%s/link", dir);
	snprintf(file, sizeof(file), "%s/file", dir);
	/* Made when missing, 0700. */
	ASSERT(open_at(sub) == 0);
	{
		struct stat st;

		ASSERT(stat(sub, &st) == 0 && (st.st_mode & 0777) == 0700);
	}
	ASSERT(symlink(sub, link) == 0);
	ASSERT(open_at(link) == -ELOOP);
	fd = open(file, O_WRONLY | O_CREAT, 0600);
	ASSERT(fd >= 0 && close(fd) == 0);
	ASSERT(open_at(file) == -ENOTDIR);
	ASSERT(chmod(sub, 0777) == 0);
	ASSERT(open_at(sub) == -EACCES);
	ASSERT(chmod(sub, 0755) == 0);
	ASSERT(open_at(sub) == 0);
	if (geteuid() == 0) {
		ASSERT(chown(sub, 65534, 65534) == 0);
		ASSERT(open_at(sub) == -EPERM);
	} else {
		fprintf(stderr, "  skip: not root, no directory of another owner to make\n");
	}
	rm_tree(dir);
	return true;
}

TEST(unwind_cache_trim_oldest_first)
{
	static const char *const files[] = {
		"/lib/x86_64-linux-gnu/libc.so.6",
		"/lib/x86_64-linux-gnu/libstdc++.so.6",
		"/lib64/ld-linux-x86-64.so.2",
	};
	struct unwind_cache_key k[3];
	struct timespec times[2];
	char name[256], stale[400];
	struct fixture f;
	struct stat st;
	int fd;

	ASSERT(fixture_open(&f));
	for (int i = 0; i < 3; i++)
		ASSERT(put_file(&f, files[i], &k[i]));
	/* Used: libstdc++ longest ago, then libc, ld.so last (a hit marks its entry). */
	ASSERT(get(f.c, &k[1]) == 0);
	usleep(50000);
	ASSERT(get(f.c, &k[0]) == 0);
	usleep(50000);
	ASSERT(get(f.c, &k[2]) == 0);
	/* A temporary a write left behind two hours ago. */
	snprintf(stale, sizeof(stale), "%s/.x.rows.abcdefgh", f.dir);
	fd = open(stale, O_WRONLY | O_CREAT, 0600);
	ASSERT(fd >= 0 && close(fd) == 0);
	times[0] = times[1] = (struct timespec){ time(NULL) - 7200, 0 };
	ASSERT(utimensat(AT_FDCWD, stale, times, 0) == 0);
	/* Room for little more than ld.so's entry: the two others go, oldest first. */
	ASSERT(unwind_cache__trim(f.c, 1 << 30) == 0);
	ASSERT(stat(stale, &st) != 0);
	ASSERT(unwind_cache__trim(f.c, 200 << 10) == 2);
	ASSERT(the_entry(f.dir, name, sizeof(name)));
	ASSERT(get(f.c, &k[2]) == 0);
	ASSERT(get(f.c, &k[0]) == -ENOENT && get(f.c, &k[1]) == -ENOENT);
	fixture_close(&f);
	return true;
}
