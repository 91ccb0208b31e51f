// SPDX-License-Identifier: GPL-2.0
/*
 * v_fork: a process that starts children, for --follow (and for the line
 * that says, without it, how many were not traced).
 *
 *   v_fork workers N   N forked workers, one after the other; worker i
 *                      (0-based) frees its copy of one block it inherited
 *                      and leaks i + 1 blocks of 1,000 bytes at
 *                      site_child_leak, then _exits. Notes "# children:
 *                      pid,pid,..." in fork order.
 *   v_fork many N      N short children in a row, each leaking one block of
 *                      100 bytes at site_child_leak and _exiting at once.
 *   v_fork burst N     the same N children forked at once, then waited for.
 *   v_fork daemon      one child that outlives the parent: it leaks 2 blocks
 *                      of 1,000 bytes 0.5 s after the parent has exited.
 *                      Notes "# children: pid".
 *   v_fork vfork       a vfork child that execs /bin/true, then a
 *                      posix_spawn'ed /bin/true.
 *   v_fork exec PROG   a forked child that allocates a block of 1,000 bytes
 *                      at site_child_leak and execs PROG (no arguments),
 *                      with $VICTIM_TRUTH.1 as PROG's $VICTIM_TRUTH.
 *   v_fork spawn PROG  a vfork child that execs PROG ($VICTIM_TRUTH.1),
 *                      then a posix_spawn'ed PROG ($VICTIM_TRUTH.2).
 *   v_fork prefork     for -p: forks 2 workers that wait, says "READY
 *                      pid=N" and reads a line (memleakbpf attaches
 *                      meanwhile); then worker i leaks i + 1 blocks of
 *                      1,000 bytes and _exits, a third worker started now
 *                      leaks 3, it says "LEAKED" and reads a line before
 *                      it exits. Notes "# children: pid,pid,pid".
 *
 * The parent, in every mode: site_parent_before leaks 4 blocks of 2,000
 * bytes before the first fork (the children inherit them; one is freed by
 * each worker, in its own copy, which is not the parent's free), and
 * site_parent_after 1 block of 3,000 bytes once every child has ended.
 * Truth: TRUTH lines (see truth.h) for the parent only; exit status 0.
 *
 * Truth: 2 TRUTH lines; heap 11,000 bytes in 5 blocks. valgrind 3.19
 * (--leak-check=full, parent only): definitely lost: 11,000 bytes in 5
 * blocks.
 */
#define _GNU_SOURCE
#include <spawn.h>
#include <stdbool.h>
#include <sys/wait.h>
#include "truth.h"

extern char **environ;

#define PARENT_BLOCKS 4

static void *inherited[PARENT_BLOCKS];

SITE void *site_parent_before(size_t n)
{
	void *p = malloc(n); TR_ALLOC(p, n, "malloc"); ESCAPE(p);
	return p;
}

SITE void site_parent_after(size_t n)
{
	void *p = malloc(n); TR_ALLOC(p, n, "malloc"); ESCAPE(p);
}

/* In a child: no truth of its own (the test knows what each child leaks). */
SITE void site_child_leak(size_t n)
{
	void *p = malloc(n); ESCAPE(p);
}

VIA void via_worker(int i)
{
	free(inherited[i % PARENT_BLOCKS]);	/* its copy: the parent's stays */
	for (int k = 0; k <= i; k++)
		site_child_leak(1000);
	_exit(0);
}

static pid_t fork_or_die(void)
{
	pid_t pid = fork();

	if (pid < 0)
		tr_die("fork");
	return pid;
}

static void wait_all(void)
{
	while (wait(NULL) > 0 || errno == EINTR)
		;
}

static void workers(int n)
{
	char pids[400] = "", one[16];

	for (int i = 0; i < n; i++) {
		pid_t pid = fork_or_die();

		if (!pid)
			via_worker(i);
		snprintf(one, sizeof(one), "%s%d", i ? "," : "", (int)pid);
		strncat(pids, one, sizeof(pids) - strlen(pids) - 1);
		waitpid(pid, NULL, 0);
	}
	tr_note("children", pids);
}

static void many(int n, bool burst)
{
	for (int i = 0; i < n; i++) {
		pid_t pid = fork_or_die();

		if (!pid) {
			site_child_leak(100);
			_exit(0);
		}
		if (!burst)
			waitpid(pid, NULL, 0);
	}
	wait_all();
}

static void notes_children(const pid_t *pids, int n)
{
	char text[64] = "", one[16];

	for (int i = 0; i < n; i++) {
		snprintf(one, sizeof(one), "%s%d", i ? "," : "", (int)pids[i]);
		strncat(text, one, sizeof(text) - strlen(text) - 1);
	}
	tr_note("children", text);
}

static pid_t waiting_worker(int i, int go)
{
	pid_t pid = fork_or_die();
	char c;

	if (!pid) {
		if (read(go, &c, 1) != 1)
			_exit(1);
		for (int k = 0; k <= i; k++)
			site_child_leak(1000);
		_exit(0);
	}
	return pid;
}

static void line_from_stdin(void)
{
	char c;

	while (read(0, &c, 1) == 1 && c != '\n')
		;
}

static void prefork(void)
{
	pid_t pids[3];
	int go[2];

	if (pipe(go))
		tr_die("pipe");
	for (int i = 0; i < 2; i++)
		pids[i] = waiting_worker(i, go[0]);
	printf("READY pid=%d\n", (int)getpid());
	fflush(stdout);
	line_from_stdin();
	if (write(go[1], "gg", 2) != 2)
		tr_die("write");
	pids[2] = fork_or_die();
	if (!pids[2])
		via_worker(2);
	wait_all();
	notes_children(pids, 3);
}

static void daemon_child(void)
{
	char pid[16];
	pid_t child = fork_or_die();

	if (!child) {
		usleep(500000);
		site_child_leak(1000);
		site_child_leak(1000);
		_exit(0);
	}
	snprintf(pid, sizeof(pid), "%d", (int)child);
	tr_note("children", pid);
}

static void spawns(void)
{
	char *argv[] = { "true", NULL };
	pid_t pid = vfork();

	if (pid < 0)
		tr_die("vfork");
	if (!pid) {
		execve("/bin/true", argv, environ);
		_exit(127);
	}
	if (posix_spawn(&pid, "/bin/true", NULL, NULL, argv, environ))
		tr_die("posix_spawn");
	wait_all();
}

/* environ, with $VICTIM_TRUTH.n for $VICTIM_TRUTH: the exec'd victim's own truth. */
static char **child_env(int n)
{
	static char *env[256], truth[4200];
	const char *t = getenv("VICTIM_TRUTH");
	size_t k = 0;

	for (char **e = environ; *e && k < 254; e++)
		if (strncmp(*e, "VICTIM_TRUTH=", 13))
			env[k++] = *e;
	if (t) {
		snprintf(truth, sizeof(truth), "VICTIM_TRUTH=%s.%d", t, n);
		env[k++] = truth;
	}
	env[k] = NULL;
	return env;
}

static void exec_prog(const char *prog, bool spawn)
{
	char *argv[] = { (char *)prog, NULL };
	pid_t pid = spawn ? vfork() : fork();

	if (pid < 0)
		tr_die("fork");
	if (!pid) {
		if (!spawn)
			site_child_leak(1000);	/* held at the exec: its image's, freed by it */
		execve(prog, argv, child_env(1));
		_exit(127);
	}
	if (spawn && posix_spawn(&pid, prog, NULL, NULL, argv, child_env(2)))
		tr_die("posix_spawn");
	wait_all();
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "workers";
	int n = argc > 2 ? atoi(argv[2]) : 3;

	for (int i = 0; i < PARENT_BLOCKS; i++)
		inherited[i] = site_parent_before(2000);
	if (!strcmp(mode, "workers"))
		workers(n);
	else if (!strcmp(mode, "many") || !strcmp(mode, "burst"))
		many(n, !strcmp(mode, "burst"));
	else if (!strcmp(mode, "vfork"))
		spawns();
	else if ((!strcmp(mode, "exec") || !strcmp(mode, "spawn")) && argc > 2)
		exec_prog(argv[2], !strcmp(mode, "spawn"));
	else if (!strcmp(mode, "prefork"))
		prefork();
	else if (!strcmp(mode, "daemon"))
		daemon_child();
	else
		tr_die("mode: workers, many, burst, vfork, exec, spawn, prefork or daemon");
	site_parent_after(3000);
	tr_report();
	if (!strcmp(mode, "prefork")) {
		printf("LEAKED\n");
		fflush(stdout);
		line_from_stdin();
	}
	return 0;
}
