// SPDX-License-Identifier: GPL-2.0
/* The traced process: -p attach or -c fork/exec, credentials, signals. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "target.h"
#include "util/proc.h"

#define MAX_ARGS 256
#define MAX_GROUPS 256

/* Who the command runs as. */
struct creds {
	bool drop;
	uid_t uid;
	gid_t gid;
	gid_t groups[MAX_GROUPS];
	int nr_groups;
	char name[64];
	char home[PATH_MAX];
};

int target__cmdline(pid_t pid, char **out)
{
	char buf[4096];
	ssize_t n = proc__read_buf(pid, "cmdline", buf, sizeof(buf));

	if (n < 0)
		return (int)n;
	for (ssize_t i = 0; i + 1 < n; i++)
		if (!buf[i])
			buf[i] = ' ';
	/*
	 * A process that sets its title over its arguments (redis-server,
	 * postgres) pads the rest of their room with NULs or spaces: not part
	 * of its name in the header, the JSON or the pprof.
	 */
	while (n > 0 && (isspace((unsigned char)buf[n - 1]) || !buf[n - 1]))
		buf[--n] = '\0';
	*out = strdup(buf);
	return *out ? 0 : -ENOMEM;
}

/* The thread group of pid (a thread id is accepted, as with -p in perf). */
static int read_tgid(pid_t pid, pid_t *tgid)
{
	char value[32];
	int err = proc__status(pid, "Tgid", value, sizeof(value));

	if (err)
		return err;
	return sscanf(value, "%d", tgid) == 1 ? 0 : -EINVAL;
}

static struct target *target_new(pid_t pid)
{
	struct target *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->pid = pid;
	t->pidfd = -1;
	t->gate = -1;
	return t;
}

/* What -p cannot trace, said before anything is loaded. */
static int check_traceable(pid_t pid, pid_t tgid, char *err, size_t errlen)
{
	struct proc_stat st;

	if (tgid == getpid()) {
		snprintf(err, errlen, "-p %d: that is memleakbpf itself", pid);
		return -EINVAL;
	}
	if (proc__stat(tgid, &st)) {
		snprintf(err, errlen, "-p %d: no such process", pid);
		return -ESRCH;
	}
	if (st.flags & PROC_PF_KTHREAD) {
		snprintf(err, errlen, "-p %d: a kernel thread: it has no user-space heap to trace", pid);
		return -EINVAL;
	}
	if (st.state == 'Z' || st.state == 'X') {
		snprintf(err, errlen, "-p %d: a zombie: it has exited, and its parent has not reaped it yet", pid);
		return -ESRCH;
	}
	return 0;
}

int target__attach(pid_t pid, struct target **out, char *err, size_t errlen)
{
	struct target *t;
	pid_t tgid;
	int e;

	e = read_tgid(pid, &tgid);
	if (e) {
		snprintf(err, errlen, "-p %d: no such process", pid);
		return e;
	}
	e = check_traceable(pid, tgid, err, errlen);
	if (e)
		return e;
	t = target_new(tgid);
	if (!t)
		return -ENOMEM;
	t->pidfd = pidfd_open(tgid, 0);
	if (t->pidfd < 0 || target__cmdline(tgid, &t->command)) {
		e = -errno;
		snprintf(err, errlen, "-p %d: cannot open the process: %s", pid, strerror(errno));
		target__free(t);
		return e;
	}
	*out = t;
	return 0;
}

/* Characters that make a command line shell syntax rather than words. */
static bool needs_shell(const char *cmd)
{
	return strpbrk(cmd, "|&;<>()$`\\\"'*?[]#~{}\n") != NULL;
}

static int split_words(char *cmd, char **argv)
{
	int argc = 0;

	for (char *tok = strtok(cmd, " \t"); tok; tok = strtok(NULL, " \t")) {
		if (argc == MAX_ARGS)
			return -E2BIG;
		argv[argc++] = tok;
	}
	argv[argc] = NULL;
	return argc;
}

/*
 * Can file be run: a regular file with an execute bit for us? 0, or -errno
 * with the line a shell would print in err.
 */
static int check_runnable(const char *name, const char *file, char *err, size_t errlen)
{
	struct stat st;

	if (stat(file, &st)) {
		int e = errno;

		snprintf(err, errlen, "-c: %s: %s", name,
			 e == ENOENT ? "command not found" : strerror(e));
		return -e;
	}
	if (S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "-c: %s: is a directory", name);
		return -EISDIR;
	}
	if (!S_ISREG(st.st_mode) || access(file, X_OK)) {
		snprintf(err, errlen, "-c: %s: %s", name,
			 S_ISREG(st.st_mode) ? strerror(errno) : "not a regular file");
		return -EACCES;
	}
	return 0;
}

/* What execvp would run, so that a missing command fails before tracing. */
static int find_program(const char *name, char *err, size_t errlen)
{
	char buf[PATH_MAX];
	const char *path = getenv("PATH");

	if (strchr(name, '/'))
		return check_runnable(name, name, err, errlen);
	for (const char *dir = path ? path : "/usr/bin:/bin"; *dir;) {
		size_t len = strcspn(dir, ":");
		struct stat st;

		snprintf(buf, sizeof(buf), "%.*s/%s", (int)len, len ? dir : ".", name);
		if (!stat(buf, &st) && S_ISREG(st.st_mode) && !access(buf, X_OK))
			return 0;
		dir += len + (dir[len] == ':');
	}
	snprintf(err, errlen, "-c: %s: command not found", name);
	return -ENOENT;
}

static int lookup_user(struct passwd *pw, struct creds *c)
{
	c->drop = true;
	c->uid = pw->pw_uid;
	c->gid = pw->pw_gid;
	snprintf(c->name, sizeof(c->name), "%s", pw->pw_name);
	snprintf(c->home, sizeof(c->home), "%s", pw->pw_dir);
	c->nr_groups = MAX_GROUPS;
	if (getgrouplist(pw->pw_name, pw->pw_gid, c->groups, &c->nr_groups) < 0)
		return -E2BIG;
	return 0;
}

/*
 * Root came through sudo: the command runs as the invoking user, never
 * silently as root. -u USER names the user explicitly.
 */
static int choose_creds(const char *user, struct creds *c, char *err, size_t errlen)
{
	const char *sudo_uid = getenv("SUDO_UID");
	struct passwd *pw;

	memset(c, 0, sizeof(*c));
	if (user) {
		pw = getpwnam(user);
		if (!pw && strspn(user, "0123456789") == strlen(user))
			pw = getpwuid((uid_t)strtoul(user, NULL, 10));
		if (!pw) {
			snprintf(err, errlen, "-u %s: no such user", user);
			return -ENOENT;
		}
		return lookup_user(pw, c);
	}
	if (getuid() != 0 || !sudo_uid)
		return 0;
	pw = getpwuid((uid_t)strtoul(sudo_uid, NULL, 10));
	if (!pw) {
		snprintf(err, errlen, "SUDO_UID=%s: no such user", sudo_uid);
		return -ENOENT;
	}
	if (lookup_user(pw, c))
		return -E2BIG;
	if (getenv("SUDO_GID"))
		c->gid = (gid_t)strtoul(getenv("SUDO_GID"), NULL, 10);
	return 0;
}

static void child_drop(const struct creds *c)
{
	if (!c->drop)
		return;
	if (setgroups((size_t)c->nr_groups, c->groups) || setgid(c->gid) || setuid(c->uid) ||
	    (c->uid != 0 && setuid(0) == 0)) {
		fprintf(stderr, "memleakbpf: cannot switch to user %s\n", c->name);
		_exit(127);
	}
	setenv("HOME", c->home, 1);
	setenv("USER", c->name, 1);
	setenv("LOGNAME", c->name, 1);
}

/* In the child: wait for the gate, then exec. Only async-signal-safe calls matter here. */
static void child_run(int gate, char **argv, const struct creds *c, const struct rlimit *nofile)
{
	sigset_t none;
	char b;

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
	/* The command's limit is its own, not the one we raised for us (a select() past 1,024). */
	if (nofile)
		setrlimit(RLIMIT_NOFILE, nofile);
	child_drop(c);
	/* EOF without a byte: the tracer gave up; do not run untraced. */
	if (read(gate, &b, 1) != 1)
		_exit(127);
	close(gate);
	execvp(argv[0], argv);
	fprintf(stderr, "memleakbpf: cannot run %s: %s\n", argv[0], strerror(errno));
	_exit(127);
}

int target__raise_fd_limit(struct rlimit *was, int verbose)
{
	struct rlimit raised;

	if (getrlimit(RLIMIT_NOFILE, was))
		return -errno;
	raised = (struct rlimit){ was->rlim_max, was->rlim_max };
	if (was->rlim_cur < was->rlim_max && setrlimit(RLIMIT_NOFILE, &raised))
		return -errno;
	if (verbose && was->rlim_cur < was->rlim_max)
		fprintf(stderr, "memleakbpf: open files: our limit raised from %llu to the hard limit, %llu (a -c command keeps %llu)\n",
			(unsigned long long)was->rlim_cur, (unsigned long long)was->rlim_max,
			(unsigned long long)was->rlim_cur);
	else if (verbose)
		fprintf(stderr, "memleakbpf: open files: our limit is the hard limit, %llu\n",
			(unsigned long long)was->rlim_max);
	return 0;
}

int target__spawn(const char *command, const char *user, int verbose,
		  const struct rlimit *nofile, struct target **out, char *err, size_t errlen)
{
	char *argv[MAX_ARGS + 1], *copy;
	struct target *t;
	struct creds creds;
	int pipefd[2], e;
	pid_t pid;

	copy = strdup(command);
	if (!copy)
		return -ENOMEM;
	if (needs_shell(command)) {
		argv[0] = "/bin/sh";
		argv[1] = "-c";
		argv[2] = copy;
		argv[3] = NULL;
	} else if (split_words(copy, argv) <= 0) {
		snprintf(err, errlen, "-c: empty or too long command");
		free(copy);
		return -EINVAL;
	}
	e = find_program(argv[0], err, errlen);
	if (!e)
		e = choose_creds(user, &creds, err, errlen);
	if (e || pipe2(pipefd, O_CLOEXEC)) {
		free(copy);
		return e ? e : -errno;
	}
	if (verbose && creds.drop)
		fprintf(stderr, "memleakbpf: running the command as %s (uid %u)\n", creds.name,
			creds.uid);
	pid = fork();
	if (pid == 0) {
		close(pipefd[1]);
		child_run(pipefd[0], argv, &creds, nofile);
	}
	e = -errno;
	close(pipefd[0]);
	free(copy);
	t = pid > 0 ? target_new(pid) : NULL;
	if (!t) {
		close(pipefd[1]);
		snprintf(err, errlen, "cannot start the command: %s", strerror(pid < 0 ? -e : ENOMEM));
		return pid < 0 ? e : -ENOMEM;
	}
	t->spawned = true;
	t->child = pid;
	t->gate = pipefd[1];
	t->command = strdup(command);
	*out = t;
	return 0;
}

int target__release(struct target *t)
{
	int err = write(t->gate, "x", 1) == 1 ? 0 : -errno;

	close(t->gate);
	t->gate = -1;
	return err;
}

int target__wait_stopped(pid_t pid, int timeout_ms)
{
	for (int waited = 0;; waited++) {
		char state = proc__state(pid);

		if (!state || state == 'Z' || state == 'X')
			return -ESRCH;
		if (state == 'T' || state == 't')
			return 0;
		if (waited >= timeout_ms * 10)
			return -ETIMEDOUT;
		usleep(100);
	}
}

bool target__stop_queued(pid_t pid)
{
	char value[32];
	unsigned long long mask;
	char state = proc__state(pid);

	if (state == 'T' || state == 't')
		return true;
	/* A SIGSTOP sent to the process, not yet taken. */
	if (proc__status(pid, "ShdPnd", value, sizeof(value)) ||
	    sscanf(value, "%llx", &mask) != 1)
		return false;
	return mask & (1ull << (SIGSTOP - 1));
}

int target__continue(pid_t pid)
{
	return kill(pid, SIGCONT) ? -errno : 0;
}

int target__signal(struct target *t, int sig)
{
	if (t->kernel || t->pid <= 0)
		return -ESRCH;	/* kill(0) would signal our own process group */
	if (t->spawned && t->child != t->pid && !t->exited)
		kill(t->child, sig);
	return kill(t->pid, sig) ? -errno : 0;
}

/*
 * A stopped process (SIGSTOP, ^Z, or stopped for us) keeps the signal
 * pending until it runs again: continue it, or it would never end.
 */
int target__interrupt(struct target *t, int sig)
{
	int err = target__signal(t, sig);

	if (t->exited)
		return err;
	if (proc__state(t->pid) == 'T')
		kill(t->pid, SIGCONT);
	if (t->spawned && t->child != t->pid && proc__state(t->child) == 'T')
		kill(t->child, SIGCONT);
	return err;
}

bool target__reap(struct target *t)
{
	int status;

	if (!t->spawned || t->exited)
		return t->exited;
	if (waitpid(t->child, &status, WNOHANG) != t->child)
		return false;
	t->exited = true;
	t->exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	return true;
}

bool target__gone(struct target *t)
{
	char state;

	if (t->exited)
		return true;
	if (t->kernel)
		return false;
	if (t->spawned)
		return false;
	/* A zombie is gone too: its parent may take its time to reap it. */
	state = proc__state(t->pid);
	t->exited = !state || state == 'Z' || state == 'X';
	return t->exited;
}

static bool is_shell_image(pid_t pid)
{
	static const char *const shells[] = { "sh", "dash", "bash", "zsh", "ksh", "mksh", "ash", "busybox" };
	char exe[PATH_MAX], *base;

	if (proc__readlink(pid, "exe", exe, sizeof(exe)) <= 0)
		return false;
	base = strrchr(exe, '/');
	base = base ? base + 1 : exe;
	for (size_t i = 0; i < sizeof(shells) / sizeof(shells[0]); i++)
		if (!strcmp(base, shells[i]))
			return true;
	return false;
}

/* Among the options before the first operand, one with 'c' (-c, -ec, -xc). */
static bool has_command_option(const char *args, size_t len)
{
	const char *arg = args + strlen(args) + 1;	/* skip argv[0] */

	for (; arg < args + len && *arg == '-' && strcmp(arg, "--"); arg += strlen(arg) + 1)
		if (arg[1] != '-' && strchr(arg + 1, 'c'))
			return true;
	return false;
}

bool target__runs_shell_command(pid_t pid)
{
	char args[4096];
	ssize_t n;

	if (!is_shell_image(pid))
		return false;
	n = proc__read_buf(pid, "cmdline", args, sizeof(args));
	if (n <= 0)
		return false;
	return has_command_option(args, (size_t)n);
}

int target__kernel(struct target **out)
{
	struct target *t = calloc(1, sizeof(*t));

	if (!t)
		return -ENOMEM;
	*t = (struct target){ .pidfd = -1, .gate = -1, .kernel = true };
	*out = t;
	return 0;
}

void target__free(struct target *t)
{
	if (!t)
		return;
	if (t->gate >= 0)
		close(t->gate);	/* the child sees EOF and exits without running */
	if (t->pidfd >= 0)
		close(t->pidfd);
	free(t->command);
	free(t);
}
