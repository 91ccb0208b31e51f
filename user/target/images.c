// SPDX-License-Identifier: GPL-2.0
/* --follow: the modules of the processes that exec'd, by tag (images.h). */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include "images.h"
#include "util/vec.h"

struct image {
	uint32_t tag;
	struct modules *mods;
};

struct images {
	pthread_mutex_t lock;
	struct image *v;	/* tags ascend: added as BPF gives them */
	size_t nr, cap;
};

struct images *images__new(void)
{
	struct images *im = calloc(1, sizeof(*im));

	if (im)
		pthread_mutex_init(&im->lock, NULL);
	return im;
}

int images__add(struct images *im, uint32_t tag, struct modules *mods)
{
	int err = 0;

	pthread_mutex_lock(&im->lock);
	if (vec__reserve_min(&im->v, &im->cap, im->nr + 1, sizeof(*im->v), 16))
		err = -ENOMEM;
	else
		im->v[im->nr++] = (struct image){ tag, mods };
	pthread_mutex_unlock(&im->lock);
	if (err)
		modules__free(mods);
	return err;
}

static int by_tag(const void *key, const void *elem)
{
	uint32_t tag = *(const uint32_t *)key, other = ((const struct image *)elem)->tag;

	return tag < other ? -1 : tag > other;
}

const struct modules *images__of(struct images *im, uint32_t tag,
				 const struct modules *fallback)
{
	const struct image *e;

	if (!im || !tag)
		return fallback;
	pthread_mutex_lock(&im->lock);
	e = im->nr ? bsearch(&tag, im->v, im->nr, sizeof(*im->v), by_tag) : NULL;
	pthread_mutex_unlock(&im->lock);
	return e ? e->mods : fallback;
}

void images__free(struct images *im)
{
	if (!im)
		return;
	for (size_t i = 0; i < im->nr; i++)
		modules__free(im->v[i].mods);
	free(im->v);
	pthread_mutex_destroy(&im->lock);
	free(im);
}
