/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The live slots of the site table as BPF copies them out (bpf/site_scan.bpf.h):
 * every walk of the live slots (snapshot__each_slot: a report's reading, a
 * peak's sample) reads these, from 1.5 MiB kept mapped, instead of the
 * whole table mapped afresh a window at a time (about 4 us a page on the
 * test machine: 100-170 ms at 96 MiB, 20 ms now).
 */
#ifndef SITE_SCAN_H
#define SITE_SCAN_H

#include "bpfmaps.h"

/*
 * fn for each live slot, in slot order (its error stops the scan): 0, fn's
 * error, -EOPNOTSUPP when the scan cannot run here (the caller walks the
 * table itself), or another -errno. The caller holds the tables' lock: one
 * scan at a time.
 */
int site_scan__each(const struct probes_tables *t,
		    int (*fn)(void *arg, const struct site_scan_rec *r), void *arg);

#endif
