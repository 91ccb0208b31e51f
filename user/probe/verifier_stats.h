/* SPDX-License-Identifier: GPL-2.0 */
/*
 * -v: the kernel verifier's own time for each program it checked, from the
 * statistics it writes into a program's log at BPF_LOG_STATS (no line of
 * the check itself: a few hundred bytes). Loading is most of a start-up,
 * and the verifier is only part of it: on the test machine 100 of 210 ms,
 * the rest libbpf's reading of the kernel's BTF (5.3 MiB, each page of its
 * two copies fresh) and the maps made.
 */
#ifndef VERIFIER_STATS_H
#define VERIFIER_STATS_H

#include <stddef.h>
#include <stdint.h>

struct bpf_object;

struct verifier_stats {
	char *logs;		/* one buffer per program, in the object's order */
	size_t nr;
};

/* Before the object loads: each program's log asked for at BPF_LOG_STATS. 0 or -ENOMEM. */
int verifier_stats__ask(struct verifier_stats *v, struct bpf_object *obj);
/* Once it loaded: the verifier's time for the i-th program in microseconds (0: none said). */
uint64_t verifier_stats__usec(const struct verifier_stats *v, size_t i);
void verifier_stats__free(struct verifier_stats *v);

#endif
