// SPDX-License-Identifier: GPL-2.0
/* memstat.c on saved /proc text: status, smaps_rollup, maps with glibc arenas. */
#include <errno.h>
#include <unistd.h>
#include "target/memstat.h"
#include "util/procmaps.h"
#include "unit.h"

#define MiB (1ull << 20)

static const char status_text[] =
	"Name:\tv_frag\n"
	"Umask:\t0022\n"
	"State:\tS (sleeping)\n"
	"VmPeak:\t 1312900 kB\n"
	"VmSize:\t 1312900 kB\n"
	"VmHWM:\t 1050676 kB\n"
	"VmRSS:\t 1050676 kB\n"
	"RssAnon:\t 1048576 kB\n"
	"RssFile:\t    2100 kB\n"
	"RssShmem:\t       0 kB\n"
	"VmData:\t 1049000 kB\n"
	"VmSwap:\t      12 kB\n"
	"Threads:\t5\n";

TEST(memstat_status)
{
	struct memstat m = { 0 };

	ASSERT(memstat__parse_status(status_text, &m) == 0);
	ASSERT_EQ_U64(m.rss, 1050676ull * 1024);
	ASSERT_EQ_U64(m.anon, 1048576ull * 1024);
	ASSERT_EQ_U64(m.swap, 12 * 1024);
	ASSERT(!m.rollup);
	return true;
}

TEST(memstat_status_old_kernel_and_zombie)
{
	struct memstat m = { 0 };

	/* No RssAnon before 4.5: all of RSS stands for it. */
	ASSERT(memstat__parse_status("Name:\tx\nVmRSS:\t  4096 kB\n", &m) == 0);
	ASSERT_EQ_U64(m.anon, 4096 * 1024);
	ASSERT_EQ_U64(m.swap, 0);
	/* A zombie has no memory lines at all. */
	ASSERT(memstat__parse_status("Name:\tx\nState:\tZ (zombie)\n", &m) == -EINVAL);
	ASSERT(memstat__parse_status("VmRSS:\t12 MB\n", &m) == -EINVAL);
	ASSERT(memstat__parse_status("", &m) == -EINVAL);
	return true;
}

static const char rollup_text[] =
	"55d0c0000000-7ffd6a1fe000 ---p 00000000 00:00 0                          [rollup]\n"
	"Rss:             1050000 kB\n"
	"Pss:             1049000 kB\n"
	"Pss_Dirty:       1048000 kB\n"
	"Pss_Anon:        1047000 kB\n"
	"Shared_Clean:       1500 kB\n"
	"Private_Dirty:   1048000 kB\n"
	"Anonymous:       1047000 kB\n"
	"Swap:                  0 kB\n";

TEST(memstat_rollup_replaces_status)
{
	struct memstat m = { 0 };

	ASSERT(memstat__parse_status(status_text, &m) == 0);
	ASSERT(memstat__parse_rollup(rollup_text, &m) == 0);
	ASSERT(m.rollup);
	ASSERT_EQ_U64(m.rss, 1050000ull * 1024);
	/* "Anonymous:", not "Pss_Anon:" (a key is matched at the start of a line). */
	ASSERT_EQ_U64(m.anon, 1047000ull * 1024);
	ASSERT_EQ_U64(m.swap, 0);
	ASSERT(memstat__parse_rollup("Pss:\t1 kB\n", &m) == -EINVAL);
	ASSERT_EQ_U64(m.rss, 1050000ull * 1024);
	return true;
}

/*
 * A process with a brk heap, four thread-arena heaps (A partly used; B full
 * and merged by the kernel with C's used part; D with the next heap's
 * reservation after it), a thread stack at an aligned guard page, a large
 * malloc'd block spanning aligned addresses, and an aligned file mapping.
 */
static const char maps_text[] =
	"55d0c0000000-55d0c0021000 r--p 00000000 fe:00 123                        /usr/bin/app\n"
	"55d0c0021000-55d0c0050000 r-xp 00021000 fe:00 123                        /usr/bin/app\n"
	"55d0c1000000-55d0c3000000 rw-p 00000000 00:00 0                          [heap]\n"
	"7f0000000000-7f0000a00000 rw-p 00000000 00:00 0 \n"
	"7f0000a00000-7f0004000000 ---p 00000000 00:00 0 \n"
	"7f0004000000-7f000a000000 rw-p 00000000 00:00 0 \n"
	"7f000a000000-7f000c000000 ---p 00000000 00:00 0 \n"
	"7f0010000000-7f0010001000 ---p 00000000 00:00 0 \n"
	"7f0010001000-7f0010801000 rw-p 00000000 00:00 0 \n"
	"7f0020100000-7f0028100000 rw-p 00000000 00:00 0 \n"
	"7f0030000000-7f0030001000 rw-p 00000000 fe:00 555                        /usr/lib/libfoo.so\n"
	"7f0040000000-7f0040100000 rw-p 00000000 00:00 0 \n"
	"7f0040100000-7f0048000000 ---p 00000000 00:00 0 \n"
	"7f0050000000-7f0050100000 rw-p 00000000 00:00 0 \n"
	"7f0050100000-7f0050200000 r--p 00000000 00:00 0 \n"
	"7ffd6a1dd000-7ffd6a1fe000 rw-p 00000000 00:00 0                          [stack]\n";

TEST(memstat_maps_heap_and_arenas)
{
	struct memstat m = { .rss = 1 };
	struct maps *maps;

	ASSERT(maps__parse(maps_text, &maps) == 0);
	memstat__add_maps(maps, &m);
	maps__free(maps);
	ASSERT_EQ_U64(m.heap, 32 * MiB);
	/* A (10 MiB), B (64), C (32 of 64), D (1): not the stack, the block, the file, E. */
	ASSERT_EQ_U64(m.arenas, 4);
	ASSERT_EQ_U64(m.arena, (10 + 64 + 32 + 1) * MiB);
	ASSERT_EQ_U64(m.arena_reserved, 4 * MEMSTAT_ARENA_HEAP);
	ASSERT_EQ_U64(m.rss, 1);	/* untouched */
	return true;
}

TEST(memstat_maps_without_heap)
{
	struct memstat m = { .heap = 7, .arenas = 9 };
	struct maps *maps;

	ASSERT(maps__parse("7ffd6a1dd000-7ffd6a1fe000 rw-p 00000000 00:00 0   [stack]\n", &maps) == 0);
	memstat__add_maps(maps, &m);
	maps__free(maps);
	ASSERT_EQ_U64(m.heap, 0);
	ASSERT_EQ_U64(m.arenas, 0);
	return true;
}

TEST(memstat_read_self)
{
	struct memstat m;

	/* Our own process: resident, partly anonymous. */
	ASSERT(memstat__read(getpid(), &m) == 0);
	ASSERT(m.rss > 0 && m.anon > 0 && m.anon <= m.rss);
	ASSERT(memstat__read(0x7ffffff0, &m) < 0);
	return true;
}
