/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A coarse CLOCK_MONOTONIC for the BPF programs, kept in a word of their
 * .bss by a thread of ours: reading it costs BPF a load where
 * bpf_ktime_get_ns() costs about 55 ns in a VM, on every allocation.
 */
#ifndef CLOCK_H
#define CLOCK_H

#include <stdint.h>

#define CLOCK_FEED_PERIOD_MS 5	/* the timestamps' resolution */

struct clock_feed;

/* CLOCK_MONOTONIC in ns: the clock of the BPF timestamps. */
uint64_t clock__now_ns(void);
/* Milliseconds from t_ns (bpf_ktime_get_ns()'s clock) until now. */
double clock__ms_since_ns(uint64_t t_ns);
/* Write CLOCK_MONOTONIC (ns) into *word now and every period; NULL with errno on failure. */
struct clock_feed *clock__feed_start(volatile uint64_t *word);
void clock__feed_stop(struct clock_feed *cf);

#endif
