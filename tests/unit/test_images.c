// SPDX-License-Identifier: GPL-2.0
/*
 * target/images.c (--follow: the files of each exec'd image, by tag): an
 * image's forks share its modules; tags may come a little out of order;
 * a process of no image of its own falls back to the target's.
 */
#include <errno.h>
#include <unistd.h>
#include "target/images.h"
#include "unit.h"

TEST(images_shared_by_forks)
{
	struct images *im = images__new();
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
