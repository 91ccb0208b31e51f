// SPDX-License-Identifier: GPL-2.0
/* mapmem.c: the kernel cost of the maps, MemAvailable, the budget; /proc/PID/stat. */
#include <errno.h>
#include <unistd.h>
#include <linux/bpf.h>
#include "util/mapmem.h"
#include "util/proc.h"
#include "unit.h"

TEST(mapmem_cost_by_type)
{
	struct mapmem_map array = { BPF_MAP_TYPE_ARRAY, 4, 60, 1000, 0 };
	struct mapmem_map percpu = { BPF_MAP_TYPE_PERCPU_ARRAY, 4, 64, 1, 0 };
	struct mapmem_map hash = { BPF_MAP_TYPE_HASH, 8, 16, 1000, 0 };
	struct mapmem_map stacks = { BPF_MAP_TYPE_STACK_TRACE, 4, 1016, 1000, 0 };
	struct mapmem_map ring = { BPF_MAP_TYPE_RINGBUF, 0, 0, 4096, 0 };

	ASSERT_EQ_U64(mapmem__cost(&array, 2), 1000 * 64);	/* values rounded to 8 */
	ASSERT_EQ_U64(mapmem__cost(&percpu, 4), 4 * 64);
	/* Elements with their header, and a power of two of buckets. */
	ASSERT_EQ_U64(mapmem__cost(&hash, 2), 1000 * (48 + 8 + 16) + 1024 * 16);
	ASSERT_EQ_U64(mapmem__cost(&stacks, 2), 1000 * (24 + 1016) + 1024 * 8);
	ASSERT_EQ_U64(mapmem__cost(&ring, 2), 4096);
	return true;
}

TEST(mapmem_meminfo)
{
	uint64_t b = 0;

	ASSERT(mapmem__parse_meminfo("MemTotal:       24684092 kB\n"
				     "MemFree:        20000000 kB\n"
				     "MemAvailable:   23942560 kB\n", &b) == 0);
	ASSERT_EQ_U64(b, 23942560ull * 1024);
	ASSERT(mapmem__parse_meminfo("MemTotal: 1 kB\n", &b) == -EINVAL);
	return true;
}

TEST(mapmem_budget_of_this_machine)
{
	struct mapmem_budget b;

	ASSERT(mapmem__budget(&b) == 0);
	ASSERT(b.bytes > 0 && b.source);
	ASSERT(mapmem__allowed(&b) <= b.bytes / 2);
	return true;
}

TEST(proc_stat_of_self_and_kthreadd)
{
	struct proc_stat st;

	ASSERT(proc__stat(getpid(), &st) == 0);
	ASSERT(st.state == 'R' && !(st.flags & PROC_PF_KTHREAD));
	/* pid 2 is kthreadd wherever the pid namespace is the host's. */
	if (!proc__stat(2, &st) && access("/proc/2/exe", F_OK))
		ASSERT(st.flags & PROC_PF_KTHREAD);
	ASSERT(proc__stat(-1, &st) < 0);
	return true;
}
