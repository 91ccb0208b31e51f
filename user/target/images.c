// SPDX-License-Identifier: GPL-2.0
/* --follow: the modules of the processes that exec'd, by tag (images.h). */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "images.h"
#include "util/vec.h"

struct image {
	uint32_t tag;
	struct modules *mods;
	bool shared;		/* another tag's (images__share): freed with that one */
};

struct images {
	const struct modules *peer;	/* whose files the images' share */
	pthread_mutex_t lock;
	struct image *v;	/* tags ascend: added as BPF gives them */
	size_t nr, cap;
};

struct images *images__new(const struct modules *peer)
{
	struct images *im = calloc(1, sizeof(*im));

	if (!im)
		return NULL;
	im->peer = peer;
	pthread_mutex_init(&im->lock, NULL);
	return im;
}

struct modules *images__new_modules(const struct images *im, pid_t pid)
{
	return im->peer ? modules__new_beside(pid, im->peer) : modules__new(pid);
}

static int by_tag_u32(const void *key, const void *elem)
{
	uint32_t a = *(const uint32_t *)key, b = *(const uint32_t *)elem;

	return a < b ? -1 : a > b;
}

static int by_tag(const void *key, const void *elem)
{
	uint32_t tag = *(const uint32_t *)key, other = ((const struct image *)elem)->tag;

	return tag < other ? -1 : tag > other;
}

/* Kept in tag order (events may come a little out of it), the lock held. */
static int insert(struct images *im, const struct image *e)
{
	size_t at = im->nr;

	if (vec__reserve_min(&im->v, &im->cap, im->nr + 1, sizeof(*im->v), 16))
		return -ENOMEM;
	while (at && im->v[at - 1].tag > e->tag)
		at--;
	memmove(im->v + at + 1, im->v + at, (im->nr - at) * sizeof(*im->v));
	im->v[at] = *e;
	im->nr++;
	return 0;
}

int images__add(struct images *im, uint32_t tag, struct modules *mods)
{
	struct image e = { tag, mods, false };
	int err;

	pthread_mutex_lock(&im->lock);
	err = insert(im, &e);
	pthread_mutex_unlock(&im->lock);
	if (err)
		modules__free(mods);
	return err;
}

/* tag's entry, the lock held. */
static const struct image *find(const struct images *im, uint32_t tag)
{
	return im->nr ? bsearch(&tag, im->v, im->nr, sizeof(*im->v), by_tag) : NULL;
}

/* The modules of tag, or NULL. */
static struct modules *mods_of(struct images *im, uint32_t tag)
{
	const struct image *e;
	struct modules *mods;

	pthread_mutex_lock(&im->lock);
	e = find(im, tag);
	mods = e ? e->mods : NULL;
	pthread_mutex_unlock(&im->lock);
	return mods;
}

int images__share(struct images *im, uint32_t tag, uint32_t of)
{
	const struct image *e;
	int err = -ENOENT;

	pthread_mutex_lock(&im->lock);
	e = find(im, of);
	if (e) {
		struct image copy = { tag, e->mods, true };

		err = insert(im, &copy);
	}
	pthread_mutex_unlock(&im->lock);
	return err;
}

const struct modules *images__of(struct images *im, uint32_t tag,
				 const struct modules *fallback)
{
	const struct modules *mods = im && tag ? mods_of(im, tag) : NULL;

	return mods ?: fallback;
}

/*
 * A fork of the target (tag, without modules of its own) maps code the
 * target's modules do not have where it is (a library it dlopen'd itself):
 * from now on it has modules of its own, over the target's. 0 or -errno.
 */
static int own_modules(struct images *im, uint32_t tag, pid_t pid, const struct maps *maps,
		       const struct modules *target)
{
	struct modules *mods;

	if (!target || !modules__lacks_code(target, maps))
		return 0;
	mods = modules__new_over(pid, target);
	return mods ? images__add(im, tag, mods) : -ENOMEM;
}

void images__update(struct images *im, uint32_t tag, pid_t pid, const struct maps *maps,
		    const struct modules *target)
{
	struct modules *mods = mods_of(im, tag);
	pid_t was;

	/* None: no memory for its own, or the target's modules name all it maps. */
	if (!mods && (own_modules(im, tag, pid, maps, target) || !(mods = mods_of(im, tag))))
		return;
	/* Its files, opened through pid's /proc (its maps': the exec'd one may be gone). */
	was = modules__pid(mods);
	modules__set_pid(mods, pid);
	/* A library unread (no memory, or gone) stays unnamed: nothing else to do. */
	modules__update(mods, maps);
	modules__set_pid(mods, was);
}

/* The maps of an earlier entry of the same image, or new ones. */
static int code_maps(const struct images *im, size_t i, struct report_image_maps *v,
		     struct maps **maps)
{
	for (size_t k = 0; k < i; k++) {
		if (im->v[k].mods == im->v[i].mods) {
			*maps = (struct maps *)v[k].maps;
			return 0;
		}
	}
	return modules__code_maps(im->v[i].mods, maps);
}

int images__code_maps(struct images *im, struct report_image_maps **out, size_t *nr)
{
	struct report_image_maps *v;
	struct maps *maps;
	int err = 0;

	*out = NULL;
	*nr = 0;
	pthread_mutex_lock(&im->lock);
	v = calloc(im->nr ?: 1, sizeof(*v));
	for (size_t i = 0; v && !err && i < im->nr; i++) {
		err = code_maps(im, i, v, &maps);
		if (!err)
			v[(*nr)++] = (struct report_image_maps){ im->v[i].tag, maps };
	}
	pthread_mutex_unlock(&im->lock);
	if (!v)
		return -ENOMEM;
	*out = v;
	if (err)
		images__free_code_maps(out, nr);
	return err;
}

void images__free_code_maps(struct report_image_maps **v, size_t *nr)
{
	/* Each image's once: its processes' entries share its maps, and come after it. */
	for (size_t i = 0; *v && i < *nr; i++) {
		bool first = true;

		for (size_t k = 0; k < i && first; k++)
			first = (*v)[k].maps != (*v)[i].maps;
		if (first)
			maps__free((struct maps *)(*v)[i].maps);
	}
	free(*v);
	*v = NULL;
	*nr = 0;
}

static bool has_tag(const uint32_t *tags, size_t nr, uint32_t tag)
{
	return nr && bsearch(&tag, tags, nr, sizeof(*tags), by_tag_u32);
}

struct release {
	bool (*ended)(void *ctx, uint32_t tag);
	void *ctx;
	const uint32_t *tags;
	size_t nr_tags;
};

/* Is every tag on mods ended, none with a site? The lock held. */
static bool done_with(const struct images *im, const struct modules *mods,
		      const struct release *r)
{
	for (size_t k = 0; k < im->nr; k++)
		if (im->v[k].mods == mods &&
		    (!r->ended(r->ctx, im->v[k].tag) || has_tag(r->tags, r->nr_tags, im->v[k].tag)))
			return false;
	return true;
}

/*
 * Drop every entry on mods, in place (tags stay ascending), and free mods:
 * how many of the entries dropped were before at.
 */
static size_t drop_mods(struct images *im, struct modules *mods, size_t at)
{
	size_t n = 0, before = 0;

	for (size_t k = 0; k < im->nr; k++) {
		if (im->v[k].mods != mods)
			im->v[n++] = im->v[k];
		else
			before += k < at;
	}
	im->nr = n;
	modules__free(mods);
	return before;
}

size_t images__release(struct images *im, bool (*ended)(void *ctx, uint32_t tag), void *ctx,
		       const uint32_t *site_tags, size_t nr_tags)
{
	struct release r = { ended, ctx, site_tags, nr_tags };
	size_t freed = 0;

	pthread_mutex_lock(&im->lock);
	for (size_t i = 0; i < im->nr;) {
		struct modules *mods = im->v[i].mods;

		/* Owners only: a shared entry's modules go with its owner's. */
		if (im->v[i].shared || !done_with(im, mods, &r)) {
			i++;
			continue;
		}
		/* Its forks' entries may come before it: the next to look at moves down. */
		i -= drop_mods(im, mods, i);
		freed++;
	}
	pthread_mutex_unlock(&im->lock);
	return freed;
}

void images__free(struct images *im)
{
	if (!im)
		return;
	for (size_t i = 0; i < im->nr; i++)
		if (!im->v[i].shared)
			modules__free(im->v[i].mods);
	free(im->v);
	pthread_mutex_destroy(&im->lock);
	free(im);
}
