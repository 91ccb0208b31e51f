// SPDX-License-Identifier: GPL-2.0
/* analyze/reach_roots.c: which mappings are roots, and from where. */
#include <stdlib.h>
#include "analyze/reach_roots.h"
#include "unit.h"

static const char maps_text[] =
	"555555554000-555555556000 r-xp 00000000 08:01 100 /usr/bin/app\n"
	"555555556000-555555557000 rw-p 00002000 08:01 100 /usr/bin/app\n"
	"555555557000-555555558000 rw-p 00000000 00:00 0 \n"
	"555555558000-555555600000 rw-p 00000000 00:00 0 [heap]\n"
	"7ffff0000000-7ffff0021000 rw-p 00000000 00:00 0 \n"
	"7ffff0021000-7ffff4000000 ---p 00000000 00:00 0 \n"
	"7ffff7000000-7ffff7100000 rw-p 00000000 00:00 0 \n"
	"7ffff7100000-7ffff7101000 rw-s 00000000 00:05 7 /dev/dri/card0\n"
	"7ffff7101000-7ffff7102000 rw-s 00000000 00:05 8 /dev/zero\n"
	"7ffff7102000-7ffff7103000 r--p 00000000 08:01 101 /usr/lib/libc.so.6\n"
	"7ffffffde000-7ffffffff000 rw-p 00000000 00:00 0 [stack]\n";

TEST(reach_roots_are_writable_memory_but_the_heap)
{
	struct maps *m;
	struct reach_range *r;
	struct reach_roots_info info;
	uint64_t sps[] = { 0x7fffffffe000, 0x7ffff7080000 }, tps[] = { 0x7ffff70ff000, 0x7ffff7080100 };
	size_t nr;
	static const struct reach_range want[] = {
		{ 0x555555556000, 0x555555557000 },	/* .data */
		{ 0x555555557000, 0x555555558000 },	/* .bss after it */
		{ 0x7ffff7080000, 0x7ffff7100000 },	/* a thread's stack, from its sp */
		{ 0x7ffff7101000, 0x7ffff7102000 },	/* /dev/zero is memory */
		{ 0x7fffffffe000, 0x7ffffffff000 },	/* the main stack, from its sp */
	};

	ASSERT(!maps__parse(maps_text, &m));
	ASSERT(!reach_roots__choose(m, sps, tps, 2, &r, &nr, &info));
	ASSERT_EQ_U64(nr, sizeof(want) / sizeof(want[0]));
	for (size_t i = 0; i < nr; i++) {
		ASSERT_EQ_U64(r[i].start, want[i].start);
		ASSERT_EQ_U64(r[i].end, want[i].end);
	}
	/* [heap], and the arena heap (64 MiB aligned, its reserve after it) */
	ASSERT_EQ_U64(info.heap_maps, 2);
	ASSERT_EQ_U64(info.stacks, 2);
	free(r);
	maps__free(m);
	return true;
}

/* A static binary's main thread: its TLS and TCB at the start of [heap]. */
TEST(reach_roots_static_tls_in_heap)
{
	struct maps *m;
	struct reach_range *r;
	struct reach_roots_info info;
	uint64_t sps[] = { 0x7fffffffe000 }, tps[] = { 0x555555558400 };
	size_t nr;

	ASSERT(!maps__parse(maps_text, &m));
	ASSERT(!reach_roots__choose(m, sps, tps, 1, &r, &nr, &info));
	ASSERT_EQ_U64(nr, 6);	/* the other anonymous mapping is whole now: no stack in it */
	ASSERT_EQ_U64(r[2].start, 0x555555558000);
	ASSERT_EQ_U64(r[2].end, 0x555555559400);
	free(r);
	maps__free(m);
	return true;
}

/* The stacks glibc keeps of exited threads: their top only (the descriptor, TLS, last frame). */
TEST(reach_roots_dead_thread_stacks)
{
	static const char text[] =
		"7ffff6fff000-7ffff7000000 ---p 00000000 00:00 0 \n"
		"7ffff7000000-7ffff7800000 rw-p 00000000 00:00 0 \n"
		"7ffff7800000-7ffff7801000 ---p 00000000 00:00 0 \n"
		"7ffff7801000-7ffff8001000 rw-p 00000000 00:00 0 \n";
	struct maps *m;
	struct reach_range *r;
	struct reach_roots_info info;
	uint64_t sps[] = { 0x7ffff7ff0000 }, tps[] = { 0x7ffff8000000 };
	size_t nr;

	ASSERT(!maps__parse(text, &m));
	ASSERT(!reach_roots__choose(m, sps, tps, 1, &r, &nr, &info));
	ASSERT_EQ_U64(nr, 2);
	ASSERT_EQ_U64(r[0].start, 0x7ffff7800000 - 8192);	/* dead */
	ASSERT_EQ_U64(r[0].end, 0x7ffff7800000);
	ASSERT_EQ_U64(r[1].start, 0x7ffff7ff0000);		/* live, from its sp */
	ASSERT_EQ_U64(info.dead_stacks, 1);
	free(r);
	maps__free(m);
	return true;
}
