// SPDX-License-Identifier: GPL-2.0
/* procmaps: parsing saved /proc/PID/maps text. */
#include <errno.h>
#include <stdlib.h>
#include <sys/sysmacros.h>
#include "unit.h"
#include "util/procmaps.h"

/*
 * From a real process, edited to cover the odd cases: a deleted library, a
 * path with spaces, an anonymous mapping with the kernel's trailing blank,
 * one without it, and a device number above 0xff.
 */
static const char saved_maps[] =
	"55d0c3a00000-55d0c3a02000 r--p 00000000 fe:01 1835023                    /usr/bin/victim\n"
	"55d0c3a02000-55d0c3a07000 r-xp 00002000 fe:01 1835023                    /usr/bin/victim\n"
	"55d0c4e1e000-55d0c4e3f000 rw-p 00000000 00:00 0                          [heap]\n"
	"7f2a1c000000-7f2a1c021000 rw-p 00000000 00:00 0 \n"
	"7f2a1d400000-7f2a1d401000 r-xp 00001000 103:02 42                        /tmp/plug in/libplug.so (deleted)\n"
	"7f2a1d600000-7f2a1d626000 r--p 00000000 fe:01 2359309                    /usr/lib/x86_64-linux-gnu/libc.so.6\n"
	"7f2a1d626000-7f2a1d77c000 r-xp 00026000 fe:01 2359309                    /usr/lib/x86_64-linux-gnu/libc.so.6\n"
	"7f2a1d800000-7f2a1d808000 rw-s 00000000 00:01 1029                       /dev/shm/my data\n"
	"7f2a1d900000-7f2a1d901000 rw-p 00000000 00:00 0\n"
	"7ffc5e9f1000-7ffc5e9f3000 r-xp 00000000 00:00 0                          [vdso]\n"
	"ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]\n";

TEST(procmaps_parse_fields)
{
	struct maps *maps = NULL;
	const struct map_entry *e;

	ASSERT(maps__parse(saved_maps, &maps) == 0);
	ASSERT_EQ_U64(maps->nr, 11);

	e = &maps->entries[1];
	ASSERT_EQ_U64(e->start, 0x55d0c3a02000);
	ASSERT_EQ_U64(e->end, 0x55d0c3a07000);
	ASSERT_EQ_U64(e->offset, 0x2000);
	ASSERT_EQ_U64(e->dev, makedev(0xfe, 0x01));
	ASSERT_EQ_U64(e->inode, 1835023);
	ASSERT(e->readable && !e->writable && e->executable && !e->shared);
	ASSERT(!e->deleted);
	ASSERT_EQ_STR(e->path, "/usr/bin/victim");
	ASSERT(map_entry__is_file(e));

	e = &maps->entries[10];
	ASSERT_EQ_U64(e->start, 0xffffffffff600000);
	ASSERT(!e->readable && !e->writable && e->executable);
	ASSERT_EQ_STR(e->path, "[vsyscall]");
	maps__free(maps);
	return true;
}

TEST(procmaps_pseudo_and_anonymous)
{
	struct maps *maps = NULL;

	ASSERT(maps__parse(saved_maps, &maps) == 0);
	ASSERT_EQ_STR(maps->entries[2].path, "[heap]");
	ASSERT(!map_entry__is_file(&maps->entries[2]));
	ASSERT_EQ_STR(maps->entries[9].path, "[vdso]");
	/* Anonymous, with and without the trailing blank. */
	ASSERT_EQ_STR(maps->entries[3].path, "");
	ASSERT_EQ_U64(maps->entries[3].inode, 0);
	ASSERT(!map_entry__is_file(&maps->entries[3]));
	ASSERT_EQ_STR(maps->entries[8].path, "");
	maps__free(maps);
	return true;
}

TEST(procmaps_deleted_and_spaces)
{
	struct maps *maps = NULL;
	const struct map_entry *e;

	ASSERT(maps__parse(saved_maps, &maps) == 0);
	e = &maps->entries[4];
	ASSERT(e->deleted);
	ASSERT_EQ_STR(e->path, "/tmp/plug in/libplug.so");
	ASSERT_EQ_U64(e->dev, makedev(0x103, 0x02));
	ASSERT_EQ_U64(e->inode, 42);
	ASSERT_EQ_U64(e->offset, 0x1000);

	e = &maps->entries[7];
	ASSERT(!e->deleted);
	ASSERT(e->shared && e->writable);
	ASSERT_EQ_STR(e->path, "/dev/shm/my data");
	maps__free(maps);
	return true;
}

TEST(procmaps_find)
{
	struct maps *maps = NULL;

	ASSERT(maps__parse(saved_maps, &maps) == 0);
	ASSERT(maps__find(maps, 0x55d0c3a02000) == &maps->entries[1]);
	ASSERT(maps__find(maps, 0x55d0c3a06fff) == &maps->entries[1]);
	ASSERT(maps__find(maps, 0x55d0c3a00000) == &maps->entries[0]);
	ASSERT(maps__find(maps, 0x7f2a1d77bfff) == &maps->entries[6]);
	ASSERT(maps__find(maps, 0x7ffc5e9f2000) == &maps->entries[9]);
	/* Gaps and the ends. */
	ASSERT(maps__find(maps, 0x55d0c3a07000) == NULL);
	ASSERT(maps__find(maps, 0x1000) == NULL);
	ASSERT(maps__find(maps, 0xffffffffff601000) == NULL);
	maps__free(maps);
	return true;
}

TEST(procmaps_empty)
{
	struct maps *maps = NULL;

	ASSERT(maps__parse("", &maps) == 0);
	ASSERT_EQ_U64(maps->nr, 0);
	ASSERT(maps__find(maps, 0x1000) == NULL);
	maps__free(maps);
	maps__free(NULL);
	return true;
}

TEST(procmaps_no_final_newline)
{
	struct maps *maps = NULL;

	ASSERT(maps__parse("1000-2000 r-xp 00000000 08:01 7 /bin/x", &maps) == 0);
	ASSERT_EQ_U64(maps->nr, 1);
	ASSERT_EQ_STR(maps->entries[0].path, "/bin/x");
	maps__free(maps);
	return true;
}

TEST(procmaps_bad_lines)
{
	static const char *const bad[] = {
		"garbage\n",
		"1000-2000 r-xp 00000000 08:01 7 /bin/x\nnot a maps line\n",
		"1000 r-xp 00000000 08:01 7 /bin/x\n",		/* no end */
		"1000-2000 rwxq 00000000 08:01 7 /bin/x\n",	/* bad perms */
		"1000-2000 r-x 00000000 08:01 7 /bin/x\n",	/* short perms */
		"1000-2000 r-xp 00000000 0801 7 /bin/x\n",	/* no minor */
		"1000-2000 r-xp 00000000 08:01 /bin/x\n",	/* no inode */
		"1000-2000 r-xp 00000000 08:01 7x /bin/x\n",	/* inode not decimal */
		"2000-1000 r-xp 00000000 08:01 7 /bin/x\n",	/* end < start */
		"1000-2000 r-xp 00000000 08:01\n",		/* truncated */
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct maps *maps = NULL;

		if (maps__parse(bad[i], &maps) != -EINVAL) {
			fprintf(stderr, "  accepted: %s", bad[i]);
			maps__free(maps);
			return false;
		}
	}
	return true;
}
