// SPDX-License-Identifier: GPL-2.0
/*
 * v_life: a target that execs, forks or loads a library at a moment the test
 * chooses. Lines on stdin are triggers (EOF counts as one); "READY pid=N"
 * and the other words go to stdout, one line each.
 *
 *   v_life exec PROG [ARGS]  READY; at a trigger leak the "post" blocks,
 *                            write the truth, print LEAKED; at the next
 *                            trigger exec PROG with $VICTIM_TRUTH.exec as
 *                            its VICTIM_TRUTH (its truth is not ours)
 *   v_life fork              leak, fork a child that frees its copies of the
 *                            parent's blocks (same addresses) and leaks its
 *                            own (site_child_*), reap it, leak again, write
 *                            the truth, exit 0: only the parent's sites count
 *   v_life dlopen LIB        READY; at a trigger dlopen LIB, print LOADED;
 *                            at the next trigger exit 0
 *
 * Truth: exec: phase=pre site_pre_leak 100 bytes in 1 block, phase=post
 * site_post_leak 2,000 in 10; fork: site_parent_before 4,096 in 16 and
 * site_parent_after 1,000 in 5 (the child's 3,000 bytes in 30 at
 * site_child_leak are its own: no TRUTH line).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <sys/wait.h>
#include "truth.h"

#define BEFORE 16

static int wait_line(void)
{
	char c;
	ssize_t n;

	for (;;) {
		n = read(0, &c, 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0 || c == '\n')
			return n > 0;
	}
}

static void ready(void)
{
	char line[64];
	int n = snprintf(line, sizeof(line), "READY pid=%d\n", (int)getpid());

	tr_write_all(1, line, n);
}

SITE void site_pre_leak(void)
{
	void *p = malloc(100); TR_ALLOC(p, 100, "malloc"); ESCAPE(p);
}

SITE void site_post_leak(void)
{
	void *p = malloc(200); TR_ALLOC(p, 200, "malloc"); ESCAPE(p);
}

SITE void *site_parent_before(void)
{
	void *p = malloc(256); TR_ALLOC(p, 256, "malloc"); ESCAPE(p);
	return p;
}

SITE void site_parent_after(void)
{
	void *p = malloc(200); TR_ALLOC(p, 200, "malloc"); ESCAPE(p);
}

/* In the child: no registry (it is the parent's copy), no truth. */
SITE void site_child_leak(void)
{
	void *p = malloc(100); ESCAPE(p);
}

VIA int via_exec(char **argv)
{
	const char *truth = getenv("VICTIM_TRUTH");
	char next[4096];

	TR_ENTER();
	tr_set_phase("pre");
	site_pre_leak();
	ready();
	wait_line();
	tr_set_phase("post");
	for (int i = 0; i < 10; i++)
		site_post_leak();
	tr_report();
	tr_say(1, "LEAKED\n");
	wait_line();
	snprintf(next, sizeof(next), "%s.exec", truth ? truth : "/dev/null");
	setenv("VICTIM_TRUTH", next, 1);
	execv(argv[0], argv);
	tr_die("execv failed");
	return 1;
}

VIA int via_fork(void)
{
	void *before[BEFORE];
	int status;
	pid_t pid;

	TR_ENTER();
	for (int i = 0; i < BEFORE; i++)
		before[i] = site_parent_before();
	pid = fork();
	if (pid == 0) {
		/* The same addresses as the parent's blocks: frees a tracer must not see. */
		for (int i = 0; i < BEFORE; i++)
			free(before[i]);
		for (int i = 0; i < 30; i++)
			site_child_leak();
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		tr_die("the child failed");
	for (int i = 0; i < 5; i++)
		site_parent_after();
	TR_LEAVE();
	return 0;
}

static int do_dlopen(const char *lib)
{
	void *h;

	ready();
	wait_line();
	h = dlopen(lib, RTLD_NOW);
	if (!h)
		tr_die("dlopen failed");
	tr_say(1, "LOADED\n");
	wait_line();
	return 0;
}

int main(int argc, char **argv)
{
	int ret = 2;

	TR_ENTER();
	if (argc > 2 && !strcmp(argv[1], "exec")) {
		ret = via_exec(argv + 2);
	} else if (argc == 2 && !strcmp(argv[1], "fork")) {
		ret = via_fork();
		tr_report();
	} else if (argc == 3 && !strcmp(argv[1], "dlopen")) {
		ret = do_dlopen(argv[2]);
	} else {
		tr_say(2, "usage: v_life exec PROG [ARGS] | fork | dlopen LIB\n");
	}
	TR_LEAVE();
	return ret;
}
