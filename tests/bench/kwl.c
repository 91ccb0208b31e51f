// SPDX-License-Identifier: GPL-2.0
/*
 * kwl N: a workload that makes the kernel allocate, for -k's bench
 * (scripts/bench_kernel.py): N rounds, each a pipe, a pair of Unix sockets
 * and a file in a directory of /dev/shm (tmpfs), made and closed (the file also
 * unlinked), so that each round allocates and frees inodes, dentries,
 * files, pipe buffers and socket buffers.
 *
 * Prints "ns_per_round=X cpu_ns_per_round=Y rounds=N" to stdout: the loop's
 * wall time and its CPU time (user + system: the BPF programs run in the
 * workload's own system time) per round.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static uint64_t ns_of(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int one_round(int dir)
{
	int p[2], s[2], fd;

	if (pipe2(p, O_CLOEXEC) || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, s))
		return -1;
	fd = openat(dir, "f", O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
	if (fd < 0 || write(s[0], "x", 1) != 1)
		return -1;
	close(fd);
	unlinkat(dir, "f", 0);
	close(p[0]);
	close(p[1]);
	close(s[0]);
	close(s[1]);
	return 0;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 0;
	char tmpl[] = "/dev/shm/kwl.XXXXXX";	/* tmpfs: the kernel, not a disk */
	uint64_t t0, c0, t1, c1;
	int dir;

	if (n <= 0 || !mkdtemp(tmpl) || (dir = open(tmpl, O_DIRECTORY | O_CLOEXEC)) < 0) {
		fprintf(stderr, "usage: kwl ROUNDS\n");
		return 2;
	}
	t0 = ns_of(CLOCK_MONOTONIC);
	c0 = ns_of(CLOCK_PROCESS_CPUTIME_ID);
	for (long i = 0; i < n; i++)
		if (one_round(dir)) {
			perror("kwl");
			return 1;
		}
	t1 = ns_of(CLOCK_MONOTONIC);
	c1 = ns_of(CLOCK_PROCESS_CPUTIME_ID);
	rmdir(tmpl);
	printf("ns_per_round=%.1f cpu_ns_per_round=%.1f rounds=%ld\n", (double)(t1 - t0) / n,
	       (double)(c1 - c0) / n, n);
	return 0;
}
