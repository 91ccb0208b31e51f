// SPDX-License-Identifier: GPL-2.0
/*
 * --follow: what the processes of one exec'd image share, by the image's
 * tag (bpf/memleak.h: memleak_proc.image). The links made for the process
 * that exec'd it (its allocator's, its dynamic linker's, its Python's exit)
 * are recorded as recipes, on files held open, and made again for each
 * process it forks, which runs the same image: no ELF is read at a fork. The
 * image stays while one of its processes lives; with the last, its
 * interpreter leaves BPF (py_images) and its files are closed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "probes_internal.h"
#include "util/vec.h"

struct image {
	uint32_t tag;
	unsigned live;		/* its processes alive (or not yet seen to end) */
	struct image_link *r;
	size_t nr, cap;
};

struct image_links {
	struct image *v;
	size_t nr, cap;
	uint32_t recording;	/* the image whose links are being made; 0: none */
};

int image_links__new(struct probes *p)
{
	if (!p->follow.on)
		return 0;
	p->follow.images = calloc(1, sizeof(*p->follow.images));
	return p->follow.images ? 0 : -ENOMEM;
}

static struct image *find(struct image_links *il, uint32_t tag)
{
	for (size_t i = 0; il && i < il->nr; i++)
		if (il->v[i].tag == tag)
			return &il->v[i];
	return NULL;
}

int image_links__hold(struct probes *p, uint32_t tag)
{
	struct image_links *il = p->follow.images;
	struct image *im = find(il, tag);

	if (!im) {
		if (!il || vec__reserve(&il->v, &il->cap, il->nr + 1, sizeof(*il->v)))
			return -ENOMEM;
		im = &il->v[il->nr++];
		*im = (struct image){ .tag = tag };
	}
	im->live++;
	return 0;
}

static void free_image(struct image *im)
{
	for (size_t i = 0; i < im->nr; i++) {
		close(im->r[i].file_fd);
		free(im->r[i].r.offsets);
		free(im->r[i].r.cookies);
	}
	free(im->r);
}

void image_links__release(struct probes *p, uint32_t tag)
{
	struct image_links *il = p->follow.images;
	struct image *im = find(il, tag);

	if (!im || --im->live)
		return;
	/* Its interpreter, if it has one (probes_python.c: set_image), and its unwind tables. */
	bpfmaps__forget_py_image(p->skel, tag);
	if (p->follow.image_fn)
		p->follow.image_fn(p->follow.image_ctx, tag, 0, NULL);
	free_image(im);
	*im = il->v[--il->nr];
}

void image_links__record(struct probes *p, uint32_t tag)
{
	if (p->follow.images)
		p->follow.images->recording = tag;
}

/*
 * A link just made (probes_attach.c), while an image's are being made. A
 * recipe that cannot be kept leaves that image's forks without the link:
 * said, as a child that cannot be probed is.
 */
void image_links__made(struct probes *p, int prog_fd, const char *path, const __u64 *offsets,
		       const __u64 *cookies, __u32 cnt, bool ret)
{
	struct image_links *il = p->follow.images;
	struct image *im = il && il->recording ? find(il, il->recording) : NULL;
	struct image_link l = { .prog_fd = prog_fd, .ret = ret };
	int err;

	if (!im)
		return;
	l.file_fd = open(path, O_PATH | O_CLOEXEC);
	err = l.file_fd < 0 ? -errno : recipe__keep(&l.r, offsets, cookies, cnt);
	if (!err)
		err = vec__reserve(&im->r, &im->cap, im->nr + 1, sizeof(*im->r));
	if (!err) {
		im->r[im->nr++] = l;
		return;
	}
	fprintf(stderr, "memleakbpf: the processes the image of tag %u forks will lack a probe in %s: %s\n",
		im->tag, path, strerror(-err));
	if (l.file_fd >= 0)
		close(l.file_fd);
	free(l.r.offsets);
	free(l.r.cookies);
}

size_t image_links__max(const struct probes *p, uint32_t tag)
{
	const struct image *im = find(p->follow.images, tag);

	return im ? im->nr : 0;
}

const struct image_link *image_links__of(const struct probes *p, uint32_t tag, size_t *nr)
{
	const struct image *im = find(p->follow.images, tag);

	*nr = im ? im->nr : 0;
	return im ? im->r : NULL;
}

void image_links__free(struct probes *p)
{
	struct image_links *il = p->follow.images;

	if (!il)
		return;
	for (size_t i = 0; i < il->nr; i++)
		free_image(&il->v[i]);
	free(il->v);
	free(il);
	p->follow.images = NULL;
}
