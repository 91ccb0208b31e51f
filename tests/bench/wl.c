// SPDX-License-Identifier: GPL-2.0
/*
 * wl: the C workloads of `make bench`, timing themselves so that the tracer's
 * start and final report are not counted.
 *
 *   wl loop N SIZE        N malloc(SIZE)/free pairs, back to back
 *   wl ws N LIVE          N pairs over a working set of LIVE live blocks:
 *                         each step frees a random one and allocates another
 *                         (16 to 527 bytes), so the tracer's map holds LIVE
 *                         entries and the allocator does real work
 *   wl threads N T        T threads, each making N malloc(64)/free pairs
 *   wl forks N PAIRS      N children in a row (fork, then wait), each making
 *                         PAIRS malloc(64)/free pairs and _exiting; prints
 *                         "ns_per_fork=F ns_per_pair=X pairs=P": the loop's
 *                         time per child, and the children's pairs timed in
 *                         the children (--follow's costs, scripts/bench_follow.py)
 *   wl live N DEPTH       N blocks of 32 bytes, all kept, allocated from
 *                         (DEPTH + 1)^3 distinct stacks (three recursive
 *                         functions nested 0..DEPTH deep each); prints
 *                         "exit_ns=T" (CLOCK_MONOTONIC at exit) instead
 *
 * Prints "ns_per_pair=X pairs=N" to the file named by $BENCH_OUT (else to
 * stderr): the loop's time divided by the pairs one thread made; with threads,
 * the slowest thread's, so it is what a pair costs each thread while all of
 * them run. Then "cpu_ns_per_pair=C": the process's CPU time over the pairs,
 * traps and BPF programs included, which a loaded machine leaves exact
 * where it stretches the loop's wall time.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

/* Keep gcc from folding malloc/free pairs away. */
#define ESCAPE(p) asm volatile("" : : "r"(p) : "memory")

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The process's CPU time, traps and BPF programs included: what a loaded machine leaves exact. */
static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

__attribute__((noinline)) static void pairs(uint64_t n, size_t size)
{
	for (uint64_t i = 0; i < n; i++) {
		void *p = malloc(size);

		ESCAPE(p);
		free(p);
	}
}

__attribute__((noinline)) static void working_set(void **live, uint64_t n, uint64_t nlive)
{
	uint64_t seed = 88172645463325252ull;

	for (uint64_t i = 0; i < n; i++) {
		uint64_t r = xorshift(&seed);
		uint64_t k = r % nlive;

		free(live[k]);
		live[k] = malloc(16 + (r >> 32) % 512);
		ESCAPE(live[k]);
	}
}

struct thread_arg {
	uint64_t n;
	uint64_t ns;		/* this thread's own time for its pairs */
	pthread_barrier_t *go;
};

static void *thread_main(void *p)
{
	struct thread_arg *a = p;
	uint64_t t0;

	pthread_barrier_wait(a->go);
	t0 = now_ns();
	pairs(a->n, 64);
	a->ns = now_ns() - t0;
	return NULL;
}

/* Each thread times itself: the main thread may not even run meanwhile. */
static uint64_t run_threads(uint64_t n, unsigned nthreads)
{
	struct thread_arg args[64];
	pthread_t tids[64];
	pthread_barrier_t go;
	uint64_t slowest = 0;

	pthread_barrier_init(&go, NULL, nthreads);
	for (unsigned t = 0; t < nthreads; t++) {
		args[t] = (struct thread_arg){ .n = n, .go = &go };
		pthread_create(&tids[t], NULL, thread_main, &args[t]);
	}
	for (unsigned t = 0; t < nthreads; t++) {
		pthread_join(tids[t], NULL);
		if (args[t].ns > slowest)
			slowest = args[t].ns;
	}
	return slowest;
}

/* Three recursions, a then b then c deep: one distinct stack per (a, b, c). */
__attribute__((noinline)) static void *rec_c(unsigned c)
{
	void *p = c ? rec_c(c - 1) : malloc(32);

	ESCAPE(p);
	return p;
}

__attribute__((noinline)) static void *rec_b(unsigned b, unsigned c)
{
	void *p = b ? rec_b(b - 1, c) : rec_c(c);

	ESCAPE(p);
	return p;
}

__attribute__((noinline)) static void *rec_a(unsigned a, unsigned b, unsigned c)
{
	void *p = a ? rec_a(a - 1, b, c) : rec_b(b, c);

	ESCAPE(p);
	return p;
}

static void run_live(uint64_t n, unsigned depth)
{
	unsigned k = depth + 1;

	for (uint64_t i = 0; i < n; i++) {
		uint64_t s = i % ((uint64_t)k * k * k);

		ESCAPE(rec_a((unsigned)(s / (k * k)), (unsigned)(s / k % k), (unsigned)(s % k)));
	}
}

static uint64_t run_ws(uint64_t n, uint64_t nlive)
{
	void **live = calloc(nlive, sizeof(*live));
	uint64_t t0, dt;

	if (!live)
		return 0;
	for (uint64_t k = 0; k < nlive; k++)
		live[k] = malloc(16 + k % 512);
	t0 = now_ns();
	working_set(live, n, nlive);
	dt = now_ns() - t0;
	for (uint64_t k = 0; k < nlive; k++)
		free(live[k]);
	free(live);
	return dt;
}

/* Total ns of the children's pairs into *pair_ns; the loop's ns returned. */
static uint64_t run_forks(uint64_t n, uint64_t npairs, uint64_t *pair_ns)
{
	uint64_t t0 = now_ns(), dt;
	int fds[2];

	*pair_ns = 0;
	if (pipe(fds))
		return 0;
	for (uint64_t i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid < 0)
			return 0;
		if (!pid) {
			uint64_t c0 = now_ns();

			pairs(npairs, 64);
			dt = now_ns() - c0;
			_exit(write(fds[1], &dt, sizeof(dt)) != sizeof(dt));
		}
		waitpid(pid, NULL, 0);
		if (read(fds[0], &dt, sizeof(dt)) == sizeof(dt))
			*pair_ns += dt;
	}
	return now_ns() - t0;
}

static int usage(void)
{
	fprintf(stderr, "usage: wl loop N SIZE | wl ws N LIVE | wl threads N T | wl forks N PAIRS | wl live N DEPTH\n");
	return 2;
}

int main(int argc, char **argv)
{
	const char *out = getenv("BENCH_OUT");
	uint64_t n, arg, t0, dt, c0 = cpu_ns();
	FILE *f;

	if (argc != 4)
		return usage();
	n = strtoull(argv[2], NULL, 10);
	arg = strtoull(argv[3], NULL, 10);
	if (!n || !arg)
		return usage();
	if (!strcmp(argv[1], "loop")) {
		t0 = now_ns();
		pairs(n, arg);
		dt = now_ns() - t0;
	} else if (!strcmp(argv[1], "ws")) {
		dt = run_ws(n, arg);
	} else if (!strcmp(argv[1], "threads") && arg <= 64) {
		dt = run_threads(n, (unsigned)arg);
	} else if (!strcmp(argv[1], "forks")) {
		uint64_t pair_ns;

		dt = run_forks(n, arg, &pair_ns);
		f = out ? fopen(out, "w") : stderr;
		if (!f || !dt)
			return 1;
		fprintf(f, "ns_per_fork=%.0f ns_per_pair=%.2f pairs=%llu\n", (double)dt / (double)n,
			(double)pair_ns / (double)(n * arg), (unsigned long long)(n * arg));
		return f == stderr ? 0 : fclose(f) != 0;
	} else if (!strcmp(argv[1], "live") && arg < 64) {
		run_live(n, (unsigned)arg);
		f = out ? fopen(out, "w") : stderr;
		if (!f)
			return 1;
		fprintf(f, "exit_ns=%llu\n", (unsigned long long)now_ns());
		return f == stderr ? 0 : fclose(f) != 0;
	} else {
		return usage();
	}
	f = out ? fopen(out, "w") : stderr;
	if (!f)
		return 1;
	fprintf(f, "ns_per_pair=%.2f pairs=%llu cpu_ns_per_pair=%.2f\n", (double)dt / (double)n,
		(unsigned long long)n, (double)(cpu_ns() - c0) / (double)n);
	return f == stderr ? 0 : fclose(f) != 0;
}
