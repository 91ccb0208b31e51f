/* SPDX-License-Identifier: GPL-2.0 */
/*
 * -t/--trace: BPF's record of each allocation and free (bpf/trace.bpf.h),
 * printed as it comes, a line each, by a thread of its own. A line is
 * written whole, and never inside a report: reports and trace lines take
 * standard output's lock (flockfile) for all of their lines. While a
 * report prints, records wait in the ring; a full ring loses them, counted
 * and said in the stream and at the end.
 */
#ifndef TRACE_RING_H
#define TRACE_RING_H

#include <stdint.h>
#include <stdio.h>
#include <linux/types.h>
#include "memleak.h"

/* One record as its line (no newline) into buf; t0_ns: when tracing began. */
void trace_ring__format(const struct memleak_trace *t, uint64_t t0_ns, char *buf, size_t len);

#endif
