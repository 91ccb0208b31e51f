// SPDX-License-Identifier: GPL-2.0
/*
 * Report files. The tracer usually runs as root, often for a long time,
 * before it writes anything: so paths are checked before tracing starts, and
 * the file is written so that a failure never leaves a truncated report or a
 * stray temporary, nothing at a guessable name is ever followed, and nothing
 * at the path can make the write wait for good (a FIFO without a reader).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "outfile.h"
#include "outpath.h"

#define TEMP_SUFFIX_LEN 6
#define TEMP_ATTEMPTS 100
#define STUCK_POLL_MS 100

/* What is at the path decides how it is written. */
enum target {
	TARGET_REPLACE,		/* nothing, a regular file, or an entry we do not trust:
				   temporary + rename */
	TARGET_IN_PLACE,	/* a character device (/dev/null), or a file behind a /proc link */
	TARGET_DIR,
	TARGET_DANGLING,	/* symlink to nothing: creating its target is not ours to do */
	TARGET_SPECIAL,		/* a FIFO, socket or block device of ours: refused */
};

static const char *base_of(const char *path);
static int dir_of(const char *path, char *dir, size_t len);

__attribute__((format(printf, 4, 5)))
static int fail(char *err, size_t errlen, int errnum, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return -errnum;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -errnum;
}

static int resolve_fail(const char *path, int e, uid_t uid, char *err, size_t errlen)
{
	char dir[PATH_MAX];

	if (dir_of(path, dir, sizeof(dir)))
		return fail(err, errlen, ENAMETOOLONG, "cannot write %s: path too long", path);
	if (e == -EPERM)
		return fail(err, errlen, EPERM,
			    "cannot write %s: its directory is reached through a symbolic link another user could have planted (owner uid %u): give the real path",
			    path, (unsigned)uid);
	if (e == -ENOENT)
		return fail(err, errlen, ENOENT, "cannot write %s: directory %s does not exist",
			    path, dir);
	if (e == -ENOTDIR)
		return fail(err, errlen, ENOTDIR, "cannot write %s: %s is not a directory", path, dir);
	if (e == -EACCES)
		return fail(err, errlen, EACCES, "cannot write %s: directory %s is not writable (%s)",
			    path, dir, strerror(EACCES));
	return fail(err, errlen, -e, "cannot write %s: %s", path, strerror(-e));
}

/* outpath__resolve(), its failure said in one line. */
static int resolve(const char *path, struct outpath *pl, char *err, size_t errlen)
{
	int e = outpath__resolve(path, pl);

	return e ? resolve_fail(path, e, pl->st.st_uid, err, errlen) : 0;
}

static enum target classify(const struct outpath *pl)
{
	mode_t m = pl->st.st_mode;

	if (!m)
		return pl->via_link ? TARGET_DANGLING : TARGET_REPLACE;
	if (S_ISDIR(m))
		return TARGET_DIR;
	/* A pipe we were given (/dev/stdout, >(cmd)) is opened without waiting. */
	if (pl->magic)
		return S_ISREG(m) || S_ISCHR(m) || S_ISFIFO(m) ? TARGET_IN_PLACE : TARGET_SPECIAL;
	/* A symlink here is another user's: the report takes its name, atomically. */
	if (S_ISREG(m) || S_ISLNK(m) || !outpath__trusted(pl->dirfd, &pl->st))
		return TARGET_REPLACE;
	return S_ISCHR(m) ? TARGET_IN_PLACE : TARGET_SPECIAL;
}

static const char *kind_of(mode_t m)
{
	return S_ISFIFO(m) ? "a FIFO" : S_ISSOCK(m) ? "a socket" : S_ISBLK(m) ? "a block device" :
	       "not a regular file";
}

/*
 * A FIFO would hold the final write until some process reads it (for good,
 * if none does), a socket cannot be opened, and a block device is a disk:
 * none is a place for a report.
 */
static int fail_special(const char *path, mode_t m, char *err, size_t errlen)
{
	return fail(err, errlen, EINVAL,
		    "cannot write %s: it is %s: give a regular file (or a character device such as /dev/null)",
		    path, kind_of(m));
}

/* The refusals of what is at the path, shared by the check and the write; 1 to go on. */
static int refuse(const char *path, enum target t, const struct outpath *pl, char *err,
		  size_t errlen)
{
	switch (t) {
	case TARGET_DIR:
		return fail(err, errlen, EISDIR, "cannot write %s: it is a directory", path);
	case TARGET_DANGLING:
		return fail(err, errlen, ENOENT,
			    "cannot write %s: it is a symbolic link to a missing file", path);
	case TARGET_SPECIAL:
		return fail_special(path, pl->st.st_mode, err, errlen);
	case TARGET_IN_PLACE:
	case TARGET_REPLACE:
		break;
	}
	return 1;
}

static int check_place(const char *path, const struct outpath *pl, char *err, size_t errlen)
{
	char dir[PATH_MAX];
	enum target t = classify(pl);
	int e = refuse(path, t, pl, err, errlen);

	if (e <= 0)
		return e;
	if (t == TARGET_IN_PLACE)
		return faccessat(pl->dirfd, pl->base, W_OK, 0) ?
		       fail(err, errlen, errno, "cannot write %s: %s", path, strerror(errno)) : 0;
	/* The temporary is created there, so the directory itself must be writable. */
	if (!faccessat(pl->dirfd, ".", W_OK | X_OK, 0))
		return 0;
	e = errno;
	if (dir_of(path, dir, sizeof(dir)))
		dir[0] = '\0';	/* too long to name: resolve() would have said */
	return fail(err, errlen, e, "cannot write %s: directory %s is not writable (%s)", path,
		    dir, strerror(e));
}

/* Where path leads (resolve()), refusing a name that cannot be a file's. */
static int find(const char *path, struct outpath *pl, char *err, size_t errlen)
{
	if (!path || !*path)
		return fail(err, errlen, EINVAL, "cannot write an empty file name");
	if (!*base_of(path))
		return fail(err, errlen, EISDIR, "cannot write %s: it names a directory", path);
	return resolve(path, pl, err, errlen);
}

int outfile__check(const char *path, char *err, size_t errlen)
{
	struct outpath pl;
	int e = find(path, &pl, err, errlen);

	if (e)
		return e;
	e = check_place(path, &pl, err, errlen);
	close(pl.dirfd);
	return e;
}

/*
 * The directory is found by the rule of the files: a symlink on the way is
 * followed only when trusted() says nobody else could have planted it.
 * Everything is then created relative to the one descriptor, so no later
 * swap of a path component can send a file elsewhere.
 */
int outfile__open_dir(const char *dir, char *err, size_t errlen)
{
	struct outpath pl;
	int fd;

	if (!dir || !*dir)
		return fail(err, errlen, EINVAL, "cannot write to an empty directory name");
	fd = resolve(dir, &pl, err, errlen);
	if (fd)
		return fd;
	if (S_ISLNK(pl.st.st_mode)) {
		close(pl.dirfd);
		return fail(err, errlen, EPERM,
			    "cannot write to directory %s: it is a symbolic link another user could have planted (owner uid %u): give the real directory",
			    dir, (unsigned)pl.st.st_uid);
	}
	if (!pl.st.st_mode) {
		close(pl.dirfd);
		return fail(err, errlen, ENOENT, "cannot write to directory %s: it does not exist",
			    dir);
	}
	fd = openat(pl.dirfd, pl.base,
		    O_RDONLY | O_DIRECTORY | O_CLOEXEC | (pl.magic ? 0 : O_NOFOLLOW));
	close(pl.dirfd);
	if (fd < 0)
		return fail(err, errlen, errno, "cannot write to %s: %s", dir,
			    errno == ENOTDIR ? "it is not a directory" : strerror(errno));
	if (faccessat(fd, ".", W_OK | X_OK, 0)) {
		int e = errno;

		close(fd);
		return fail(err, errlen, e, "cannot write to directory %s: %s", dir, strerror(e));
	}
	return fd;
}

/*
 * Would a and b be written to one file? The same name in the same directory
 * (however spelt: "./x", "d/../x"), or two names of one existing file.
 */
bool outfile__same(const char *a, const char *b)
{
	char da[PATH_MAX], db[PATH_MAX];
	struct stat sa, sb;

	if (!strcmp(a, b))
		return true;
	if (!stat(a, &sa) && !stat(b, &sb) && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino)
		return true;
	if (strcmp(base_of(a), base_of(b)) || dir_of(a, da, sizeof(da)) ||
	    dir_of(b, db, sizeof(db)) || stat(da, &sa) || stat(db, &sb))
		return false;
	return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* The name after the last '/'; "" for "dir/". */
static const char *base_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* path's directory: "." for "out.json", "/" for "/out.json". */
static int dir_of(const char *path, char *dir, size_t len)
{
	size_t n = base_of(path) - path;

	if (n == 0)
		return snprintf(dir, len, ".") >= (int)len ? -ENAMETOOLONG : 0;
	if (n > 1)
		n--;	/* drop the '/' unless it is the root */
	if (n >= len)
		return -ENAMETOOLONG;
	memcpy(dir, path, n);
	dir[n] = '\0';
	return 0;
}

/* Unpredictable, so nobody can plant something at the name in advance. */
static void random_suffix(char *s)
{
	static const char chars[] =
		"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	static unsigned int counter;
	unsigned char b[TEMP_SUFFIX_LEN];

	if (getrandom(b, sizeof(b), GRND_NONBLOCK) != (ssize_t)sizeof(b)) {
		struct timespec ts;
		uint64_t x;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		x = ((uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 32)) +
		    ++counter * 0x9e3779b97f4a7c15ull;
		for (int i = 0; i < TEMP_SUFFIX_LEN; i++, x >>= 8)
			b[i] = (unsigned char)x;
	}
	for (int i = 0; i < TEMP_SUFFIX_LEN; i++)
		s[i] = chars[b[i] % (sizeof(chars) - 1)];
	s[TEMP_SUFFIX_LEN] = '\0';
}

/* ".<base>.<suffix>" beside path, relative to dirfd (AT_FDCWD: as given). */
static int open_temp_at(int dirfd, const char *path, const char *suffix, char *tmp, size_t len)
{
	const char *base = base_of(path);
	int n, fd;

	/* Same directory as path, so that rename() is atomic. */
	n = snprintf(tmp, len, "%.*s.%s.%s", (int)(base - path), path, base, suffix);
	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	return fd < 0 ? -errno : fd;
}

int outfile__open_temp(const char *path, const char *suffix, char *tmp, size_t len)
{
	return open_temp_at(AT_FDCWD, path, suffix, tmp, len);
}

static int create_temp(int dirfd, const char *path, char *tmp, size_t len)
{
	char suffix[TEMP_SUFFIX_LEN + 1];
	int fd = -EEXIST;

	for (int i = 0; i < TEMP_ATTEMPTS && fd == -EEXIST; i++) {
		random_suffix(suffix);
		fd = open_temp_at(dirfd, path, suffix, tmp, len);
	}
	return fd;
}

/* Write, flush and close f (always closed), checking each step. */
static int write_stream(FILE *f, bool sync, int (*writer)(const struct report *, FILE *),
			const struct report *r)
{
	int err;

	errno = 0;
	err = writer(r, f);
	/* Writers only see the stream's error flag; errno still says why (ENOSPC). */
	if (err == -EIO && errno)
		err = -errno;
	if (!err && fflush(f))
		err = -errno;
	if (!err && sync && fsync(fileno(f)))
		err = -errno;
	if (fclose(f) && !err)
		err = -errno;
	return err;
}

static int write_fd(int fd, bool sync, int (*writer)(const struct report *, FILE *),
		    const struct report *r)
{
	FILE *f = fdopen(fd, "w");
	int err;

	if (!f) {
		err = -errno;
		close(fd);
		return err;
	}
	return write_stream(f, sync, writer, r);
}

/* SIGINT, SIGTERM and SIGHUP are blocked (the main loop reads them from a signalfd). */
static bool interrupt_pending(void)
{
	sigset_t set;

	return !sigpending(&set) && (sigismember(&set, SIGINT) || sigismember(&set, SIGTERM) ||
				     sigismember(&set, SIGHUP));
}

/*
 * A device or pipe opened without blocking may not take the bytes now (a
 * terminal held by Ctrl-S, a reader that stopped reading): wait for room in slices, and give up once SIGINT,
 * SIGTERM or SIGHUP is pending, since the tracer must never hang past them.
 */
static ssize_t nonblock_write(void *cookie, const char *buf, size_t len)
{
	int fd = (int)(intptr_t)cookie;

	for (;;) {
		ssize_t n = write(fd, buf, len);
		struct pollfd p = { .fd = fd, .events = POLLOUT };

		if (n >= 0)
			return n;
		if (errno != EAGAIN && errno != EINTR)
			return 0;	/* an error for stdio: errno says which */
		if (interrupt_pending()) {
			errno = EINTR;
			return 0;
		}
		poll(&p, 1, STUCK_POLL_MS);
	}
}

static int nonblock_close(void *cookie)
{
	return close((int)(intptr_t)cookie);
}

/*
 * A pipe whose reader left gives EPIPE and raises SIGPIPE, whose default
 * action would end the tracer without a word: held while writing, and taken
 * if it came, so that the write fails with its reason instead.
 */
static int write_nonblock(int fd, int (*writer)(const struct report *, FILE *),
			  const struct report *r)
{
	cookie_io_functions_t io = { .write = nonblock_write, .close = nonblock_close };
	struct timespec now = { 0 };
	sigset_t pipe, old;
	FILE *f;
	int err;

	sigemptyset(&pipe);
	sigaddset(&pipe, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe, &old);
	f = fopencookie((void *)(intptr_t)fd, "w", io);
	if (f) {
		err = write_stream(f, false, writer, r);
	} else {
		err = -errno;
		close(fd);
	}
	if (!sigismember(&old, SIGPIPE))
		while (sigtimedwait(&pipe, NULL, &now) > 0)
			;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return err;
}

static void sync_dir(int dirfd)
{
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	/* The new name is in place already: a failure here only costs durability. */
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
}

static int write_replace(const struct outpath *pl, int (*writer)(const struct report *, FILE *),
			 const struct report *r)
{
	char tmp[PATH_MAX];
	int fd, err;

	fd = create_temp(pl->dirfd, pl->base, tmp, sizeof(tmp));
	if (fd < 0)
		return fd;
	err = write_fd(fd, true, writer, r);
	if (!err && renameat(pl->dirfd, tmp, pl->dirfd, pl->base))
		err = -errno;
	if (err) {
		unlinkat(pl->dirfd, tmp, 0);
		return err;
	}
	sync_dir(pl->dirfd);
	return 0;
}

static int fail_unread(const char *path, char *err, size_t errlen)
{
	return fail(err, errlen, EPIPE, "cannot write %s: no process reads the pipe", path);
}

/*
 * A character device, or the file or pipe a /proc link leads to
 * (/dev/stdout, >(cmd)). No O_CREAT: it exists; O_NONBLOCK: a pipe without a
 * reader, or whatever was put there since the check (a FIFO), cannot hold
 * the open; and what was opened is looked at again.
 */
static int write_in_place(const char *path, const struct outpath *pl,
			  int (*writer)(const struct report *, FILE *), const struct report *r,
			  char *err, size_t errlen)
{
	int flags = O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC;
	struct stat st = { 0 };
	int fd, e;

	flags |= pl->magic ? (S_ISREG(pl->st.st_mode) ? O_TRUNC : 0) : O_NOFOLLOW;
	fd = openat(pl->dirfd, pl->base, flags);
	if (fd < 0 && errno == ENXIO && S_ISFIFO(pl->st.st_mode))
		return fail_unread(path, err, errlen);
	if (fd < 0)
		return fail(err, errlen, errno, "cannot write %s: %s", path, strerror(errno));
	if (fstat(fd, &st) ||
	    !(S_ISCHR(st.st_mode) || (pl->magic && (S_ISREG(st.st_mode) || S_ISFIFO(st.st_mode))))) {
		close(fd);
		return fail_special(path, st.st_mode, err, errlen);
	}
	/* A regular file never blocks; fsync() it. */
	e = S_ISREG(st.st_mode) ? write_fd(fd, true, writer, r) : write_nonblock(fd, writer, r);
	if (e == -EINTR)
		return fail(err, errlen, EINTR,
			    "cannot write %s: it took no bytes, and SIGINT or SIGTERM came", path);
	if (e == -EPIPE)
		return fail_unread(path, err, errlen);
	return e ? fail(err, errlen, -e, "cannot write %s: %s", path, strerror(-e)) : 0;
}

/*
 * Publish tmp as name unless something is there. linkat() is the portable
 * no-replace rename, and follows nothing; a file system without hard links
 * gets renameat2's flag.
 */
static int publish_new(int dirfd, const char *tmp, const char *name)
{
	if (!linkat(dirfd, tmp, dirfd, name, 0))
		return 0;
	if (errno != EPERM && errno != EOPNOTSUPP)
		return -errno;
	return renameat2(dirfd, tmp, dirfd, name, RENAME_NOREPLACE) ? -errno : 0;
}

int outfile__exists_at(int dirfd, const char *name)
{
	struct stat st;

	return !fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW);
}

int outfile__write_new(int dirfd, const char *name,
		       int (*writer)(const struct report *, FILE *), const struct report *r)
{
	char tmp[PATH_MAX];
	int fd, err;

	if (!name || !*name || strchr(name, '/'))
		return -EINVAL;
	fd = create_temp(dirfd, name, tmp, sizeof(tmp));
	if (fd < 0)
		return fd;
	err = write_fd(fd, true, writer, r);
	if (!err)
		err = publish_new(dirfd, tmp, name);
	/* After a link the temporary is a second name; after a rename it is gone. */
	unlinkat(dirfd, tmp, 0);
	if (!err)
		fsync(dirfd);	/* the new name is in place: only durability is at stake */
	return err;
}

static int write_place(const char *path, const struct outpath *pl,
		       int (*writer)(const struct report *, FILE *), const struct report *r,
		       char *err, size_t errlen)
{
	enum target t = classify(pl);
	int e = refuse(path, t, pl, err, errlen);

	if (e <= 0)
		return e;
	if (t == TARGET_IN_PLACE)
		return write_in_place(path, pl, writer, r, err, errlen);
	e = write_replace(pl, writer, r);
	return e ? fail(err, errlen, -e, "cannot write %s: %s", path, strerror(-e)) : 0;
}

int outfile__write(const char *path, int (*writer)(const struct report *, FILE *),
		   const struct report *r, char *err, size_t errlen)
{
	struct outpath pl;
	int e = find(path, &pl, err, errlen);

	if (e)
		return e;
	e = write_place(path, &pl, writer, r, err, errlen);
	close(pl.dirfd);
	return e;
}
