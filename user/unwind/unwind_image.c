// SPDX-License-Identifier: GPL-2.0
/*
 * --follow: the CFI mappings of each exec'd image alive, published apart
 * from the target's (BPF gives each image a slot of its own), so that a
 * program a child exec's is unwound by its own files' rows, not by frame
 * pointers. So is a fork of the target's that loaded libraries the target
 * has not (an "image" here, by its own tag). The rows are the tables
 * unwind.c keeps by build id: libc's, read for the target, serve every
 * image. An image's new files are built at once, while its process is held
 * (at its exec, or at its dynamic linker's event), never left pending.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include "unwind_internal.h"
#include "util/vec.h"

static struct image_pub *find_image(struct unwind *u, uint32_t tag)
{
	for (size_t i = 0; i < u->nr_images; i++)
		if (u->images[i].tag == tag)
			return &u->images[i];
	return NULL;
}

static struct image_pub *add_image(struct unwind *u, uint32_t tag)
{
	if (vec__reserve(&u->images, &u->cap_images, u->nr_images + 1, sizeof(*u->images)))
		return NULL;
	u->images[u->nr_images] = (struct image_pub){ .tag = tag };
	return &u->images[u->nr_images++];
}

/* Build now the pending tables of im's mappings. */
static void build_pending(struct unwind *u, const struct image_pub *im)
{
	size_t *which = calloc(im->nr ?: 1, sizeof(*which)), n = 0;

	if (!which)
		return;	/* they stay pending: BPF ends those stacks there, marked */
	for (size_t i = 0; i < im->nr; i++)
		unwind__add_pending(u, &im->pub[i], which, &n);
	if (n)
		unwind_build__tables(u, which, n, 0);
	free(which);
}

static int publish_image(struct unwind *u, const struct image_pub *im)
{
	struct unwind_mapping *m = calloc(im->nr ?: 1, sizeof(*m));
	int err;

	if (!m)
		return -ENOMEM;
	for (size_t i = 0; i < im->nr; i++)
		m[i] = unwind__mapping_of(u, &im->pub[i]);
	err = u->ops.set_image_mappings(u->ops.ctx, im->tag, m, im->nr);
	free(m);
	return err;
}

int unwind_image__update(struct unwind *u, uint32_t image, pid_t pid, const struct maps *maps,
			 bool add)
{
	struct image_pub *im;
	struct published *pub;
	size_t nr;
	int err;

	if (!u || !u->ops.set_image_mappings)
		return 0;
	im = find_image(u, image);
	if (!im && !add)
		return 0;	/* not an image (a fork with no library of its own), or no slot */
	pub = calloc(MEMLEAK_UNWIND_MAPPINGS, sizeof(*pub));
	if (!pub || (!im && !(im = add_image(u, image)))) {
		free(pub);
		return -ENOMEM;
	}
	unwind__resolve(u, pid, maps, pub, &nr);
	free(im->pub);
	im->pub = pub;
	im->nr = nr;
	build_pending(u, im);
	err = publish_image(u, im);
	if (err == -ENOSPC) {
		if (!u->said_no_slot)
			fprintf(stderr, "memleakbpf: more than %d exec'd images, and forks with libraries of their own, alive at once: the later ones are walked by frame pointers\n",
				MEMLEAK_UNWIND_SLOTS - 1);
		u->said_no_slot = true;
		unwind_image__forget(u, image);
		err = 0;
	}
	/* The target's own mappings may have been waiting (-p) for a table built here. */
	return err ?: unwind__publish(u);
}

void unwind_image__forget(struct unwind *u, uint32_t image)
{
	struct image_pub *im = u ? find_image(u, image) : NULL;

	if (!im)
		return;
	u->ops.set_image_mappings(u->ops.ctx, image, NULL, 0);
	free(im->pub);
	*im = u->images[--u->nr_images];
}

