// SPDX-License-Identifier: GPL-2.0
/*
 * The reachability scan's workload (scripts/bench_reach.py): MiB of heap
 * (argv[1], default 1024) in 1 KiB blocks, each pointing to 8 others; half
 * of them held by a global array (still reachable), the other half a list
 * whose head is dropped (lost). Prints "READY" and waits for a line on
 * stdin (or EOF), then exits.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define BLOCK 1024

static void **held;

int main(int argc, char **argv)
{
	size_t mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 1024;
	size_t n = mib * 1024, half = n / 2;
	void **all = malloc(n * sizeof(*all));
	uint64_t x = 88172645463325252ull;
	char c;

	if (!all)
		return 1;
	for (size_t i = 0; i < n; i++) {
		uint64_t *b = malloc(BLOCK);

		if (!b)
			return 1;
		for (size_t w = 0; w < BLOCK / 8; w++)
			b[w] = (i << 20) | w;	/* data, no pointer */
		all[i] = b;
	}
	/* 8 pointers in each: to others of its own half, so the halves stay apart. */
	for (size_t i = 0; i < n; i++) {
		size_t base = i < half ? 0 : half, span = i < half ? half : n - half;

		for (int k = 0; k < 8; k++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			((void **)all[i])[1 + k] = all[base + x % span];
		}
		((void **)all[i])[0] = i + 1 < n && i + 1 != half ? all[i + 1] : NULL;
	}
	held = malloc(half * sizeof(*held));
	for (size_t i = 0; i < half; i++)
		held[i] = all[i];
	free(all);	/* the second half: lost, a list and a graph */
	printf("READY\n");
	fflush(stdout);
	if (read(0, &c, 1) < 0)
		return 1;
	return held[0] ? 0 : 1;
}
