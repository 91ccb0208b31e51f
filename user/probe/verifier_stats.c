// SPDX-License-Identifier: GPL-2.0
/* The verifier's time for each program, from its BPF_LOG_STATS log (verifier_stats.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "verifier_stats.h"

#define BPF_LOG_STATS 4	/* linux/bpf.h's: the statistics alone */
/*
 * Room for the statistics: a truncated log fails the load (ENOSPC), and
 * libbpf does not grow a buffer it was given.
 */
#define STATS_LOG_BYTES 1024

int verifier_stats__ask(struct verifier_stats *v, struct bpf_object *obj)
{
	struct bpf_program *prog;
	size_t i = 0;

	v->nr = 0;
	bpf_object__for_each_program(prog, obj)
		v->nr++;
	v->logs = calloc(v->nr ?: 1, STATS_LOG_BYTES);
	if (!v->logs)
		return -ENOMEM;
	bpf_object__for_each_program(prog, obj) {
		bpf_program__set_log_buf(prog, v->logs + i++ * STATS_LOG_BYTES, STATS_LOG_BYTES);
		bpf_program__set_log_level(prog, BPF_LOG_STATS);
	}
	return 0;
}

uint64_t verifier_stats__usec(const struct verifier_stats *v, size_t i)
{
	const char *log = i < v->nr ? v->logs + i * STATS_LOG_BYTES : NULL;
	const char *at = log ? strstr(log, "verification time ") : NULL;
	unsigned long long usec;

	if (!at || sscanf(at, "verification time %llu usec", &usec) != 1)
		return 0;
	return usec;
}

void verifier_stats__free(struct verifier_stats *v)
{
	free(v->logs);
	v->logs = NULL;
	v->nr = 0;
}
