// SPDX-License-Identifier: GPL-2.0
/*
 * target/images.c (--follow: the files of each exec'd image, by tag): an
 * image's forks share its modules; tags may come a little out of order;
 * a process of no image of its own falls back to the target's, until it
 * loads a library the target has not.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "target/images.h"
#include "unit.h"

TEST(images_shared_by_forks)
{
	struct images *im = images__new(NULL);
	struct modules *a = modules__new(getpid()), *b = modules__new(getpid());
	const struct modules *target = (const struct modules *)im;	/* any pointer: the fallback */

	ASSERT(im && a && b);
	ASSERT(images__add(im, 5, a) == 0);
	ASSERT(images__add(im, 3, b) == 0);	/* an earlier tag's event, taken later */
	ASSERT(images__share(im, 7, 5) == 0);	/* 7: a fork of image 5 */
	ASSERT(images__share(im, 4, 3) == 0);
	ASSERT(images__share(im, 9, 8) == -ENOENT);	/* 8 was never probed */
	ASSERT(images__of(im, 5, target) == a);
	ASSERT(images__of(im, 7, target) == a);
	ASSERT(images__of(im, 3, target) == b);
	ASSERT(images__of(im, 4, target) == b);
	ASSERT(images__of(im, 6, target) == target);	/* a fork of the target */
	ASSERT(images__of(im, 0, target) == target);
	images__free(im);	/* each set freed once (unit-san) */
	return true;
}

/* self's maps without libc's mappings: what the target had before a fork loaded it. */
static struct maps without_libc(const struct maps *all)
{
	struct maps some = { calloc(all->nr ?: 1, sizeof(*some.entries)), 0 };

	for (size_t i = 0; some.entries && i < all->nr; i++)
		if (!strstr(all->entries[i].path, "/libc.so"))
			some.entries[some.nr++] = all->entries[i];	/* borrowed strings */
	return some;
}

/* The code mapping of the file whose path contains name, in maps. */
static const struct map_entry *code_of(const struct maps *maps, const char *name)
{
	for (size_t i = 0; i < maps->nr; i++)
		if (maps->entries[i].executable && strstr(maps->entries[i].path, name))
			return &maps->entries[i];
	return NULL;
}

TEST(images_fork_loads_library)
{
	struct images *im = images__new(NULL);
	struct modules *target = modules__new(getpid());
	struct maps *all = NULL, *code = NULL;
	struct maps before;
	const struct modules *own;
	const struct map_entry *libc, *exe;
	size_t libcs = 0;

	ASSERT(im && target && maps__read(getpid(), &all) == 0);
	before = without_libc(all);
	libc = code_of(all, "/libc.so");
	exe = code_of(all, "unit_tests");
	ASSERT(before.entries && libc && exe);
	ASSERT(modules__update(target, &before) == 0);
	ASSERT(!modules__find(target, libc->start));
	ASSERT(!modules__lacks_code(target, &before));
	ASSERT(modules__lacks_code(target, all));
	/* A fork that maps nothing new keeps the target's modules. */
	images__update(im, 8, getpid(), &before, target);
	ASSERT(images__of(im, 8, target) == target);
	/* One that loaded libc gets its own, over the target's. */
	images__update(im, 6, getpid(), all, target);
	own = images__of(im, 6, target);
	ASSERT(own != target);
	ASSERT(modules__find(own, libc->start) && strstr(modules__find(own, libc->start)->path, "/libc.so"));
	ASSERT(modules__find(own, exe->start) == modules__find(target, exe->start));
	ASSERT(!modules__find(target, libc->start));
	ASSERT(images__share(im, 7, 6) == 0);	/* its fork */
	ASSERT(images__of(im, 7, target) == own);
	/* Its profile mappings: the target's and its own, each file once. */
	ASSERT(modules__code_maps(own, &code) == 0);
	for (size_t i = 0; i < code->nr; i++)
		libcs += strstr(code->entries[i].path, "/libc.so") != NULL;
	ASSERT(libcs == 1 && code_of(code, "unit_tests"));
	maps__free(code);
	images__free(im);
	modules__free(target);	/* after the modules over it */
	free(before.entries);
	maps__free(all);
	return true;
}

/* Is fd open in this process? */
static bool fd_open(int fd)
{
	return fd >= 0 && fcntl(fd, F_GETFD) >= 0;
}

/*
 * An exec'd image's modules share the target's files: 600 images of one
 * program hold its files once (issue 25), and the last to go closes them.
 */
TEST(images_share_files)
{
	struct modules *target = modules__new(getpid());
	struct images *im = images__new(target);
	struct modules *a = im ? images__new_modules(im, getpid()) : NULL;
	struct modules *b = im ? images__new_modules(im, getpid()) : NULL;
	struct maps *all = NULL;
	const struct map_entry *libc;
	int fd;

	ASSERT(target && im && a && b && maps__read(getpid(), &all) == 0);
	libc = code_of(all, "/libc.so");
	ASSERT(libc);
	ASSERT(modules__update(target, all) == 0 && modules__update(a, all) == 0 &&
	       modules__update(b, all) == 0);
	fd = modules__find(target, libc->start)->fd;
	ASSERT(fd_open(fd));
	ASSERT(modules__find(a, libc->start)->fd == fd && modules__find(b, libc->start)->fd == fd);
	ASSERT(images__add(im, 5, a) == 0);
	images__free(im);	/* a goes; its files stay, the target's and b's */
	ASSERT(fd_open(fd) && modules__find(b, libc->start)->fd == fd);
	modules__free(target);
	ASSERT(fd_open(fd));	/* b's still */
	modules__free(b);
	ASSERT(!fd_open(fd));	/* the last user closed it */
	maps__free(all);
	return true;
}

/* Tags 1..31 ended when their bit is set in *ctx. */
static bool ended_bits(void *ctx, uint32_t tag)
{
	return (*(uint32_t *)ctx >> tag) & 1;
}

/*
 * An image's modules go once every process on them has ended and no report
 * names them any more; a fork still running, or a site, keeps them.
 */
TEST(images_release_when_done)
{
	struct images *im = images__new(NULL);
	struct modules *a = modules__new(getpid()), *b = modules__new(getpid());
	const struct modules *target = (const struct modules *)im;	/* any pointer: the fallback */
	uint32_t ended = 1u << 5, sites[] = { 7 };

	ASSERT(im && a && b);
	ASSERT(images__add(im, 3, b) == 0 && images__add(im, 5, a) == 0);
	ASSERT(images__share(im, 7, 5) == 0);	/* 7: a fork of image 5, running */
	ASSERT(images__release(im, ended_bits, &ended, NULL, 0) == 0);
	ended |= 1u << 7;	/* it ended, but a report named it */
	ASSERT(images__release(im, ended_bits, &ended, sites, 1) == 0);
	ASSERT(images__of(im, 7, target) == a);
	ASSERT(images__release(im, ended_bits, &ended, NULL, 0) == 1);	/* a freed (unit-san) */
	ASSERT(images__of(im, 5, target) == target && images__of(im, 7, target) == target);
	ASSERT(images__of(im, 3, target) == b);	/* still running */
	images__free(im);
	return true;
}
