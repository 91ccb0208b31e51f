// SPDX-License-Identifier: GPL-2.0
/*
 * util/mapwin.c: a table read through windows gives every entry as the
 * table mapped whole does, forwards, backwards and at random, with entries
 * across a window's end whole, and what is written through a window lands
 * in the table. A memfd stands in for the BPF array: both are mapped with
 * an offset the same way.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "util/mapwin.h"
#include "unit.h"

/* 320 bytes, as a site slot: entries straddle pages. */
struct entry {
	uint64_t key;
	uint64_t words[39];
};

static int make_table(size_t nr, struct entry **whole, size_t *bytes)
{
	long page = sysconf(_SC_PAGESIZE);
	int fd = memfd_create("mapwin", 0);

	*bytes = (nr * sizeof(struct entry) + page - 1) / page * page;
	if (fd < 0 || ftruncate(fd, (off_t)*bytes))
		return -1;
	*whole = mmap(NULL, *bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (*whole == MAP_FAILED)
		return -1;
	for (size_t i = 0; i < nr; i++) {
		(*whole)[i].key = i * 7 + 1;
		(*whole)[i].words[38] = ~i;
	}
	return fd;
}

static bool same(struct mapwin *w, const struct entry *whole, size_t i)
{
	const struct entry *e = mapwin__at(w, i);

	return e && !memcmp(e, &whole[i], sizeof(*e));
}

TEST(mapwin_reads_what_the_whole_map_holds)
{
	enum { NR = 1000 };	/* 320,000 bytes: 79 pages */
	struct entry *whole;
	struct mapwin w;
	size_t bytes;
	int fd = make_table(NR, &whole, &bytes);

	ASSERT(fd >= 0);
	/* Windows of two pages: 25 or 26 entries each, one across each end. */
	mapwin__init(&w, fd, sizeof(struct entry), NR, 2 * (size_t)sysconf(_SC_PAGESIZE));
	ASSERT_EQ_U64(mapwin__table_bytes(&w), bytes);
	for (size_t i = 0; i < NR; i++)
		ASSERT(same(&w, whole, i));
	ASSERT_EQ_U64(w.maps, (bytes + w.span - 1) / w.span);	/* each window once */
	ASSERT(w.len <= w.span + (size_t)sysconf(_SC_PAGESIZE));
	for (size_t i = NR; i-- > 0;)
		ASSERT(same(&w, whole, i));
	ASSERT_EQ_U64(w.maps, 2 * ((bytes + w.span - 1) / w.span) - 1);
	srand(1);
	for (int n = 0; n < 5000; n++)
		ASSERT(same(&w, whole, (size_t)rand() % NR));
	/* Past the end: no entry, and the window stays usable. */
	ASSERT(!mapwin__at(&w, NR) && w.err == -ERANGE);
	ASSERT(same(&w, whole, NR - 1));
	mapwin__end(&w);
	munmap(whole, bytes);
	close(fd);
	return true;
}

TEST(mapwin_writes_land_in_the_table)
{
	enum { NR = 300 };
	struct entry *whole, *e;
	struct mapwin w;
	size_t bytes;
	int fd = make_table(NR, &whole, &bytes);

	ASSERT(fd >= 0);
	mapwin__init(&w, fd, sizeof(struct entry), NR, 0);
	for (size_t i = 0; i < NR; i += 3) {
		e = mapwin__at(&w, i);
		ASSERT(e);
		__atomic_fetch_add(&e->words[38], 5, __ATOMIC_SEQ_CST);
		e->key = 0;
	}
	mapwin__end(&w);
	for (size_t i = 0; i < NR; i++) {
		ASSERT_EQ_U64(whole[i].key, i % 3 ? i * 7 + 1 : 0);
		ASSERT_EQ_U64(whole[i].words[38], i % 3 ? ~i : ~i + 5);
	}
	/* A window failed (a bad fd): NULL and the error, nothing mapped. */
	mapwin__init(&w, -1, sizeof(struct entry), NR, 0);
	ASSERT(!mapwin__at(&w, 0) && w.err == -EBADF && !w.mem);
	munmap(whole, bytes);
	close(fd);
	return true;
}
