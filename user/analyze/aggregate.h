/* SPDX-License-Identifier: GPL-2.0 */
/* Totals, filtering and ordering of a snapshot's sites (pure). */
#ifndef AGGREGATE_H
#define AGGREGATE_H

#include <stddef.h>
#include "model/report.h"
#include "probe/snapshot.h"

struct aggregate {
	const struct snap_site **sites;	/* outstanding only, bytes then allocs descending */
	size_t nr;
	struct report_totals totals;
};

int aggregate__build(const struct snapshot *snap, struct aggregate **out);
void aggregate__free(struct aggregate *agg);

#endif
