// SPDX-License-Identifier: GPL-2.0
/*
 * v_pipes N [PER_SECOND]: a victim for -k (the kernel's allocations). It
 * makes N pipes with pipe2() (PER_SECOND of them a second, evenly, when
 * given: a steady leak) and keeps them open; the kernel holds, for each, its
 * pipe_inode_info and its array of buffers, both allocated in
 * alloc_pipe_info (fs/pipe.c) under do_pipe2 and create_pipe_files.
 * Protocol (stdin/stdout, one line each): prints "PIPES n=<N> pid=<pid>"
 * once they are all open, then waits for a line on stdin (or EOF) and
 * exits 0, closing them. Its open files' limit is raised to its hard limit
 * for the 2 N descriptors; it exits 2 when that is too few.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static int wait_line(void)
{
	char c;
	ssize_t n;

	do
		n = read(0, &c, 1);
	while ((n < 0 && errno == EINTR) || (n == 1 && c != '\n'));
	return n == 1;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 0;
	long rate = argc > 2 ? strtol(argv[2], NULL, 10) : 0;
	struct timespec gap = { 0, rate > 0 ? 1000000000L / rate : 0 };
	struct rlimit rl;
	int fds[2];

	if (n <= 0) {
		fprintf(stderr, "usage: v_pipes N\n");
		return 2;
	}
	if (getrlimit(RLIMIT_NOFILE, &rl) || (rlim_t)(2 * n + 16) > rl.rlim_max) {
		fprintf(stderr, "v_pipes: %ld pipes need %ld open files\n", n, 2 * n + 16);
		return 2;
	}
	rl.rlim_cur = rl.rlim_max;
	setrlimit(RLIMIT_NOFILE, &rl);
	for (long i = 0; i < n; i++)
		if (pipe2(fds, O_CLOEXEC)) {
			perror("v_pipes: pipe2");
			return 1;
		} else if (rate > 0) {
			nanosleep(&gap, NULL);
		}
	printf("PIPES n=%ld pid=%d\n", n, (int)getpid());
	fflush(stdout);
	wait_line();
	return 0;
}
