// SPDX-License-Identifier: GPL-2.0
/*
 * Report files. The tracer usually runs as root, often for a long time,
 * before it writes anything: so paths are checked before tracing starts, and
 * the file is written so that a failure never leaves a truncated report or a
 * stray temporary, and nothing at a guessable name is ever followed.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "outfile.h"

#define TEMP_SUFFIX_LEN 6
#define TEMP_ATTEMPTS 100

/* What is at the path decides how it is written. */
enum target {
	TARGET_REPLACE,		/* nothing, a regular file, or an entry we do not trust:
				   temporary + rename */
	TARGET_IN_PLACE,	/* symlink, device, FIFO, socket: open and write */
	TARGET_DIR,
	TARGET_DANGLING,	/* symlink to nothing: creating its target is not ours to do */
};

static int dir_of(const char *path, char *dir, size_t len);

/*
 * May we follow (or open) the symlink, FIFO or device at path? Not when
 * another user could have put it there: in a world-writable directory
 * (/tmp), only an entry of ours or of the directory's owner, and only where
 * the sticky bit keeps others from swapping it. Running as root, following
 * another user's link would let them truncate any file on the system; the
 * kernel's fs.protected_symlinks says the same, but may be off.
 */
static bool trusted_entry(const char *path, const struct stat *lst)
{
	char dir[PATH_MAX];
	struct stat dst;

	if (dir_of(path, dir, sizeof(dir)) || stat(dir, &dst))
		return false;
	if (!(dst.st_mode & S_IWOTH))
		return true;
	if (!(dst.st_mode & S_ISVTX))
		return false;
	return lst->st_uid == geteuid() || lst->st_uid == dst.st_uid;
}

static enum target classify(const char *path)
{
	struct stat st;

	/* Unreadable or absent: the rename will tell. */
	if (lstat(path, &st) || S_ISREG(st.st_mode))
		return TARGET_REPLACE;
	if (S_ISDIR(st.st_mode))
		return TARGET_DIR;
	/* Neither followed nor opened: the report takes its name, atomically. */
	if (!trusted_entry(path, &st))
		return TARGET_REPLACE;
	if (stat(path, &st))
		return TARGET_DANGLING;
	return S_ISDIR(st.st_mode) ? TARGET_DIR : TARGET_IN_PLACE;
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

__attribute__((format(printf, 4, 5)))
static int fail(char *err, size_t errlen, int errnum, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -errnum;
}

static int check_dir(const char *path, char *err, size_t errlen)
{
	char dir[PATH_MAX];
	struct stat st;

	if (dir_of(path, dir, sizeof(dir)))
		return fail(err, errlen, ENAMETOOLONG, "cannot write %s: path too long", path);
	if (stat(dir, &st)) {
		if (errno == ENOENT)
			return fail(err, errlen, ENOENT, "cannot write %s: directory %s does not exist",
				    path, dir);
		return fail(err, errlen, errno, "cannot write %s: directory %s: %s", path, dir,
			    strerror(errno));
	}
	if (!S_ISDIR(st.st_mode))
		return fail(err, errlen, ENOTDIR, "cannot write %s: %s is not a directory", path,
			    dir);
	/* The temporary is created there, so the directory itself must be writable. */
	if (access(dir, W_OK | X_OK))
		return fail(err, errlen, errno, "cannot write %s: directory %s is not writable (%s)",
			    path, dir, strerror(errno));
	return 0;
}

int outfile__check(const char *path, char *err, size_t errlen)
{
	if (!path || !*path)
		return fail(err, errlen, EINVAL, "cannot write an empty file name");
	if (!*base_of(path))
		return fail(err, errlen, EISDIR, "cannot write %s: it names a directory", path);
	switch (classify(path)) {
	case TARGET_DIR:
		return fail(err, errlen, EISDIR, "cannot write %s: it is a directory", path);
	case TARGET_DANGLING:
		return fail(err, errlen, ENOENT,
			    "cannot write %s: it is a symbolic link to a missing file", path);
	case TARGET_IN_PLACE:
		if (access(path, W_OK))
			return fail(err, errlen, errno, "cannot write %s: %s", path,
				    strerror(errno));
		return 0;
	case TARGET_REPLACE:
		break;
	}
	return check_dir(path, err, errlen);
}

/*
 * The directory itself is held to the rule of the files: a symlink there is
 * followed only when trusted_entry() says nobody else could have planted it.
 * Everything is then created relative to the one descriptor, so no later
 * swap of a path component can send a file elsewhere.
 */
int outfile__open_dir(const char *dir, char *err, size_t errlen)
{
	struct stat st;
	int flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC, fd;

	if (!dir || !*dir)
		return fail(err, errlen, EINVAL, "cannot write to an empty directory name");
	if (lstat(dir, &st))
		return fail(err, errlen, errno, "cannot write to directory %s: %s", dir,
			    errno == ENOENT ? "it does not exist" : strerror(errno));
	if (S_ISLNK(st.st_mode) && !trusted_entry(dir, &st))
		return fail(err, errlen, EPERM,
			    "cannot write to directory %s: it is a symbolic link another user could have planted (owner uid %u): give the real directory",
			    dir, (unsigned)st.st_uid);
	if (!S_ISLNK(st.st_mode))
		flags |= O_NOFOLLOW;
	fd = open(dir, flags);
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

/* Write, flush and close fd (always closed), checking each step. */
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

/* The new name is in place already: a failure here only costs durability. */
static void sync_dir(const char *path)
{
	char dir[PATH_MAX];
	int fd;

	if (dir_of(path, dir, sizeof(dir)))
		return;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return;
	fsync(fd);
	close(fd);
}

static int write_replace(const char *path, int (*writer)(const struct report *, FILE *),
			 const struct report *r)
{
	char tmp[PATH_MAX];
	int fd, err;

	fd = create_temp(AT_FDCWD, path, tmp, sizeof(tmp));
	if (fd < 0)
		return fd;
	err = write_fd(fd, true, writer, r);
	if (!err && rename(tmp, path))
		err = -errno;
	if (err) {
		unlink(tmp);
		return err;
	}
	sync_dir(path);
	return 0;
}

/* No O_CREAT: the file exists, and creating through a symlink is refused. */
static int write_in_place(const char *path, int (*writer)(const struct report *, FILE *),
			  const struct report *r)
{
	int fd = open(path, O_WRONLY | O_TRUNC | O_NOCTTY | O_CLOEXEC);
	struct stat st;

	if (fd < 0)
		return -errno;
	/* fsync() fails with EINVAL on pipes and terminals. */
	return write_fd(fd, !fstat(fd, &st) && S_ISREG(st.st_mode), writer, r);
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

int outfile__write(const char *path, int (*writer)(const struct report *, FILE *),
		   const struct report *r)
{
	if (!path || !*path)
		return -EINVAL;
	if (!*base_of(path))
		return -EISDIR;
	switch (classify(path)) {
	case TARGET_DIR:
		return -EISDIR;
	case TARGET_DANGLING:
		return -ENOENT;
	case TARGET_IN_PLACE:
		return write_in_place(path, writer, r);
	case TARGET_REPLACE:
		break;
	}
	return write_replace(path, writer, r);
}
