// SPDX-License-Identifier: GPL-2.0
/*
 * model/processes.c (--follow's table of processes) and analyze/per_process.c
 * (each process's figures): exact per process, summing to the totals.
 */
#include <stdlib.h>
#include <string.h>
#include "analyze/aggregate.h"
#include "analyze/per_process.h"
#include "model/processes.h"
#include "unit.h"

static struct snap_site site(uint32_t proc, uint64_t ob, uint64_t oa, uint64_t ta)
{
	return (struct snap_site){
		.stack_id = 100 + proc,
		.api = API_MALLOC,
		.proc = proc,
		.stats = { .outstanding_bytes = ob, .outstanding_allocs = oa,
			   .total_bytes = ob, .total_allocs = ta },
	};
}

static bool add(struct processes *ps, uint32_t tag, pid_t pid, pid_t ppid, double hold_ms)
{
	struct process_info info = { .tag = tag, .pid = pid, .ppid = ppid, .command = "w",
				     .traced = true, .hold_ms = hold_ms };

	return processes__add(ps, &info) == 0;
}

TEST(processes_table_by_tag)
{
	struct processes ps;
	struct process_info got;

	processes__init(&ps);
	ASSERT(add(&ps, 1, 101, 100, 2.5));
	ASSERT(add(&ps, 3, 103, 101, 7.0));	/* tag 2: a child that could not be followed */
	ASSERT(add(&ps, 4, 104, 100, 1.0));
	processes__gone(&ps, 3, false);
	processes__gone(&ps, 4, true);
	processes__gone(&ps, 9, false);	/* unknown: ignored */
	ASSERT(!processes__get(&ps, 2, &got));
	ASSERT(processes__get(&ps, 3, &got));
	ASSERT(got.pid == 103 && got.ppid == 101 && got.exited && !got.execed);
	ASSERT(!strcmp(got.command, "w"));
	ASSERT(processes__get(&ps, 4, &got));
	ASSERT(got.execed && !got.exited);
	ASSERT(ps.max_hold_tag == 3);
	ASSERT(ps.held == 3);
	processes__free(&ps);
	return true;
}

TEST(per_process_figures_sum_to_totals)
{
	struct snap_site sites[] = {
		site(0, 11000, 5, 9),
		site(1, 1000, 1, 1),
		site(3, 3000, 3, 4),
		site(3, 0, 0, 2),	/* all freed */
		site(1, 500, 2, 2),
	};
	struct snapshot snap = { .sites = sites, .nr = 5, .forgotten_allocs = 6 };
	struct processes ps;
	struct aggregate *agg;
	struct report r = {};
	uint64_t bytes = 0, allocs = 0, all = 0;

	processes__init(&ps);
	ASSERT(add(&ps, 1, 101, 100, 1));
	ASSERT(add(&ps, 3, 103, 101, 1));
	ASSERT(aggregate__build(&snap, &agg) == 0);
	ASSERT(per_process__build(&snap, &ps, 100, "master", true, &r) == 0);
	ASSERT(r.nr_processes == 3);
	ASSERT(r.processes[0].pid == 100 && r.processes[0].tag == 0 && r.processes[0].exited);
	ASSERT_EQ_U64(r.processes[0].totals.outstanding_bytes, 11000);
	ASSERT_EQ_U64(r.processes[0].totals.allocs, 15);	/* with the forgotten sites' */
	ASSERT_EQ_U64(r.processes[1].totals.outstanding_bytes, 1500);
	ASSERT_EQ_U64(r.processes[1].totals.outstanding_allocs, 3);
	ASSERT_EQ_U64(r.processes[2].totals.outstanding_bytes, 3000);
	ASSERT_EQ_U64(r.processes[2].totals.frees, 3);
	for (size_t i = 0; i < r.nr_processes; i++) {
		bytes += r.processes[i].totals.outstanding_bytes;
		allocs += r.processes[i].totals.outstanding_allocs;
		all += r.processes[i].totals.allocs;
	}
	ASSERT_EQ_U64(bytes, agg->totals.outstanding_bytes);
	ASSERT_EQ_U64(allocs, agg->totals.outstanding_allocs);
	ASSERT_EQ_U64(all, agg->totals.allocs);
	free(r.processes);
	aggregate__free(agg);
	processes__free(&ps);
	return true;
}
