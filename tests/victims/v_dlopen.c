// SPDX-License-Identifier: GPL-2.0
/*
 * v_dlopen: leaks from inside plugins loaded with dlopen once main runs (so
 * after tracing began, under -c): plugins/libp_kept.so stays loaded,
 * plugins/libp_closed.so is dlclose'd (unmapped) before the victim exits, so
 * before any final report. Both must be named, with file and line.
 * The plugins are found next to this executable, in plugins/.
 * Truth: TRUTH lines (see truth.h) to $VICTIM_TRUTH or stdout; exit status 0.
 * Comments "@name" mark the lines tests/e2e/run.py expects frames at.
 *
 * Truth: 2 TRUTH lines; heap 384 bytes in 5 blocks (site_plugin_kept 192 in
 * 3, site_plugin_closed 192 in 2), plus whatever dlopen itself keeps.
 *
 *   v_dlopen wait   a target for -p whose own code calls through a library
 *                   that is no allocator's: it loads libp_kept.so, prints
 *                   "READY pid=N", waits for a line on stdin (EOF: exits 3),
 *                   leaks through it (1 TRUTH line: site_plugin_kept 192
 *                   bytes in 3 blocks), prints "LEAKED", waits for another
 *                   line and exits 0.
 *   v_dlopen fork   the same as without arguments, in a forked child (the
 *                   parent loads no plugin; the truth is the child's); the
 *                   parent waits for it and exits with its status.
 *   v_dlopen leader_gone  the same, in a thread (run_plugins) that waits
 *                   for main to have ended with pthread_exit (the process
 *                   lives on, its main thread a zombie whose /proc/PID/stat
 *                   says 'Z' and whose maps are empty) before its dlopens;
 *                   the process exits 0 when that thread returns.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <sys/wait.h>
#include "truth.h"
#include "plugins/plugin.h"

/* A copy that outlives the plugin: its strings go away with its dlclose. */
static const char *intern(const char *str)
{
	static char names[8][64];

	for (int i = 0; i < 8; i++) {
		if (!names[i][0])
			snprintf(names[i], sizeof(names[i]), "%s", str);
		if (!strcmp(names[i], str))
			return names[i];
	}
	tr_die("too many plugin strings");
	return NULL;
}

/* The registry keeps the site's and the api's pointers. */
static void plugin_alloc_at(const void *p, uint64_t size, const char *site, const char *api,
			    int line)
{
	tr_alloc_at(p, size, intern(site), intern(api), line);
}

static const struct plugin_api api = { plugin_alloc_at };

/* <dir of this executable>/plugins/name, without allocating (thread-self: the main thread may be gone). */
static void plugin_path(const char *name, char *buf, size_t len)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/thread-self/exe", exe, sizeof(exe) - 1);
	char *slash;

	if (n <= 0)
		tr_die("readlink /proc/self/exe");
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (slash)
		*slash = '\0';
	snprintf(buf, len, "%s/plugins/%s", exe, name);
}

static void *load(const char *lib)
{
	char path[PATH_MAX + 64];
	void *handle;

	plugin_path(lib, path, sizeof(path));
	handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!handle)
		tr_die(dlerror());
	return handle;
}

static plugin_site_fn *load_site(const char *lib, const char *site, void **handle)
{
	plugin_site_fn *fn;

	*handle = load(lib);
	fn = (plugin_site_fn *)dlsym(*handle, site);
	if (!fn)
		tr_die(dlerror());
	return fn;
}

VIA void via_plugin_kept(void)
{
	plugin_site_fn *fn;
	void *h;

	TR_ENTER();
	fn = load_site("libp_kept.so", "site_plugin_kept", &h);
	for (int i = 0; i < 3; i++)
		fn(&api, 64);	/* @kept_call */
	ESCAPE(h);
	TR_LEAVE();
}

VIA void via_plugin_closed(void)
{
	plugin_site_fn *fn;
	void *h;

	TR_ENTER();
	fn = load_site("libp_closed.so", "site_plugin_closed", &h);
	for (int i = 0; i < 2; i++)
		fn(&api, 48);	/* @closed_call */
	if (dlclose(h))
		tr_die(dlerror());
	TR_LEAVE();
}

/* "# closed: unmapped" once libp_closed.so is really gone from the maps. */
static void note_unmapped(void)
{
	static char maps[1 << 18];
	int fd = open("/proc/thread-self/maps", O_RDONLY | O_CLOEXEC);
	size_t len = 0;
	ssize_t n = 1;

	while (fd >= 0 && n > 0 && len < sizeof(maps) - 1) {
		n = read(fd, maps + len, sizeof(maps) - 1 - len);
		len += n > 0 ? n : 0;
	}
	if (fd >= 0)
		close(fd);
	maps[len] = '\0';
	tr_note("closed", strstr(maps, "libp_closed.so") ? "still mapped" : "unmapped");
}

/* One line from stdin, without stdio: 1 when a line (or partial line) came, 0 at EOF. */
static int wait_line(void)
{
	char c;
	ssize_t n;
	int got = 0;

	for (;;) {
		n = read(0, &c, 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return got;
		got = 1;
		if (c == '\n')
			return 1;
	}
}

/* wait: the kept plugin mapped before a tracer attaches, and used after. */
static void *wait_ready(void)
{
	char line[64];
	void *kept = load("libp_kept.so");
	int n = snprintf(line, sizeof(line), "READY pid=%d\n", (int)getpid());

	tr_write_all(1, line, (size_t)n);
	if (!wait_line())
		_exit(3);
	return kept;
}

/* fork: the parent's part; the child returns to main's plugins (0). */
static int forked(void)
{
	pid_t pid = fork();
	int status;

	if (pid < 0)
		tr_die("fork");
	if (!pid)
		return 0;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			tr_die("waitpid");
	_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 1);
}

/* Main's own stat (/proc/self/stat is the leader's) says 'Z': it has ended. */
static int leader_gone(void)
{
	char buf[512], *p;
	int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;

	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = '\0';
	p = strrchr(buf, ')');
	return p && p[1] == ' ' && p[2] == 'Z';
}

/* leader_gone: main's plugins, from a thread once main has ended. */
VIA void *run_plugins(void *arg)
{
	int waited = 0;

	TR_ENTER();
	while (!leader_gone())
		if (waited++ > 10000)	/* 10 s */
			tr_die("main did not end");
		else
			usleep(1000);
	tr_note("leader", "gone");
	via_plugin_kept();	/* @thread_kept */
	via_plugin_closed();	/* @thread_closed */
	note_unmapped();
	tr_report();
	TR_LEAVE();
	return arg;
}

int main(int argc, char **argv)
{
	int wait = argc > 1 && !strcmp(argv[1], "wait");
	void *kept = NULL;

	if (argc > 1 && !strcmp(argv[1], "fork"))
		forked();
	if (argc > 1 && !strcmp(argv[1], "leader_gone")) {
		pthread_t t;

		if (pthread_create(&t, NULL, run_plugins, NULL))
			tr_die("pthread_create");
		pthread_exit(NULL);
	}
	TR_ENTER();
	if (wait)
		kept = wait_ready();
	via_plugin_kept();	/* @main_kept */
	if (!wait) {
		via_plugin_closed();	/* @main_closed */
		note_unmapped();
	}
	tr_report();
	if (wait) {
		tr_say(1, "LEAKED\n");
		wait_line();
	}
	ESCAPE(kept);
	TR_LEAVE();
	return 0;
}
