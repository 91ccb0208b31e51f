// SPDX-License-Identifier: GPL-2.0
/*
 * allocator/allocator.c: the lookup order read again at a later stop takes
 * the objects still mapped from the last one (their fds duplicated, not
 * opened again), and resolving marks the objects that define none of the
 * API's functions, which are then not read again; the answer is the same.
 */
#include <string.h>
#include <unistd.h>
#include "allocator/allocator.h"
#include "unit.h"

/* The object whose path ends in base, or NULL. */
static struct lookup_object *object_named(const struct lookup_order *lo, const char *base)
{
	for (size_t i = 0; i < lo->nr; i++) {
		const char *slash = strrchr(lo->objects[i].path, '/');

		if (!strncmp(slash ? slash + 1 : lo->objects[i].path, base, strlen(base)))
			return &lo->objects[i];
	}
	return NULL;
}

/* Do fds a and b share one open file (a dup), rather than two opens of it? */
static bool same_open_file(int a, int b)
{
	off_t was = lseek(b, 0, SEEK_CUR);
	bool shared = lseek(a, 123, SEEK_SET) == 123 && lseek(b, 0, SEEK_CUR) == 123;

	lseek(a, was, SEEK_SET);
	return shared;
}

TEST(lookup_order_takes_the_last_stops_objects)
{
	struct lookup_order *first = NULL, *again = NULL;
	struct lookup_object *c1, *c2;
	struct maps *maps = NULL;

	ASSERT(!maps__read(getpid(), &maps));
	ASSERT(!lookup_order__read(getpid(), maps, NULL, &first));
	ASSERT(!lookup_order__read(getpid(), maps, first, &again));
	ASSERT_EQ_U64(again->nr, first->nr);
	c1 = object_named(first, "libc.so");
	c2 = object_named(again, "libc.so");
	ASSERT(c1 && c2 && c1->fd >= 0 && c2->fd >= 0 && c1->fd != c2->fd);
	ASSERT(c2->dev == c1->dev && c2->ino == c1->ino && c2->open_path);
	/* Taken from the last stop: the same open file, not the file opened again. */
	ASSERT(same_open_file(c1->fd, c2->fd));
	lookup_order__free(again);
	lookup_order__free(first);
	maps__free(maps);
	return true;
}

TEST(lookup_order_resolving_skips_what_defines_none)
{
	struct lookup_order *first = NULL, *again = NULL;
	struct allocator *a = NULL, *b = NULL;
	struct lookup_object *exe, *libc;
	struct maps *maps = NULL;

	ASSERT(!maps__read(getpid(), &maps));
	ASSERT(!lookup_order__read(getpid(), maps, NULL, &first));
	ASSERT(!allocator__resolve(first->objects, first->nr, false, NULL, &a));
	/* The test binary defines no allocation function; libc defines malloc. */
	exe = &first->objects[0];
	libc = object_named(first, "libc.so");
	ASSERT(libc && !libc->defines_none && exe->defines_none);
	ASSERT(!lookup_order__read(getpid(), maps, first, &again));
	ASSERT(again->objects[0].defines_none && !object_named(again, "libc.so")->defines_none);
	ASSERT(!allocator__resolve(again->objects, again->nr, false, NULL, &b));
	ASSERT_EQ_U64(b->nr, a->nr);
	ASSERT_EQ_STR(b->malloc_path, a->malloc_path);
	allocator__free(b);
	allocator__free(a);
	lookup_order__free(again);
	lookup_order__free(first);
	maps__free(maps);
	return true;
}
