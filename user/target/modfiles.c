// SPDX-License-Identifier: GPL-2.0
/* The object files of all module sets, each open once (modfiles.h). */
#include <errno.h>
#include <gelf.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "modfiles.h"
#include "util/vec.h"

struct modfiles {
	pthread_mutex_t lock;
	unsigned users;		/* the module sets sharing it */
	struct modfile **v;	/* unordered: a few hundred distinct files at most */
	size_t nr, cap;
};

struct modfiles *modfiles__new(void)
{
	struct modfiles *fs = calloc(1, sizeof(*fs));

	if (!fs)
		return NULL;
	pthread_mutex_init(&fs->lock, NULL);
	fs->users = 1;
	elf_version(EV_CURRENT);
	return fs;
}

struct modfiles *modfiles__share(struct modfiles *fs)
{
	pthread_mutex_lock(&fs->lock);
	fs->users++;
	pthread_mutex_unlock(&fs->lock);
	return fs;
}

static void file_free(struct modfile *f)
{
	close(f->fd);
	free(f->segs);
	free(f);
}

void modfiles__drop(struct modfiles *fs)
{
	unsigned left;

	if (!fs)
		return;
	pthread_mutex_lock(&fs->lock);
	left = --fs->users;
	pthread_mutex_unlock(&fs->lock);
	if (left)
		return;
	/* Every set is gone, and its modules' references with it: nothing is left open. */
	for (size_t i = 0; i < fs->nr; i++)
		file_free(fs->v[i]);
	free(fs->v);
	pthread_mutex_destroy(&fs->lock);
	free(fs);
}

struct modfile *modfiles__get(struct modfiles *fs, dev_t dev, ino_t inode)
{
	struct modfile *found = NULL;

	pthread_mutex_lock(&fs->lock);
	for (size_t i = 0; i < fs->nr && !found; i++)
		if (fs->v[i]->dev == dev && fs->v[i]->inode == inode)
			found = fs->v[i];
	if (found)
		found->refs++;
	pthread_mutex_unlock(&fs->lock);
	return found;
}

static void read_build_id(Elf *elf, struct modfile *f)
{
	uint8_t id[MODFILE_BUILD_ID_MAX];
	int len = elf__build_id(elf, id, sizeof(id));

	for (int i = 0; i < len; i++)
		snprintf(f->build_id + 2 * i, 3, "%02x", id[i]);
}

/* The PT_LOAD segments and the build id, from the headers. */
static int read_elf(struct modfile *f)
{
	Elf *elf = elf_begin(f->fd, ELF_C_READ_MMAP, NULL);
	int err = -EINVAL;

	if (elf && elf_kind(elf) == ELF_K_ELF)
		err = elf__load_segments(elf, &f->segs, &f->nr_segs);
	if (!err)
		read_build_id(elf, f);
	if (elf)
		elf_end(elf);
	return err;
}

int modfiles__add(struct modfiles *fs, dev_t dev, ino_t inode, int fd, struct modfile **out)
{
	struct modfile *f = calloc(1, sizeof(*f));
	int err;

	*out = NULL;
	if (!f) {
		close(fd);
		return -ENOMEM;
	}
	*f = (struct modfile){ .dev = dev, .inode = inode, .fd = fd, .refs = 1 };
	err = read_elf(f);
	pthread_mutex_lock(&fs->lock);
	if (!err && vec__reserve_min(&fs->v, &fs->cap, fs->nr + 1, sizeof(*fs->v), 32))
		err = -ENOMEM;
	if (!err)
		fs->v[fs->nr++] = f;
	pthread_mutex_unlock(&fs->lock);
	if (err) {
		file_free(f);
		return err;
	}
	*out = f;
	return 0;
}

void modfiles__hold(struct modfiles *fs, struct modfile *f)
{
	pthread_mutex_lock(&fs->lock);
	f->refs++;
	pthread_mutex_unlock(&fs->lock);
}

void modfiles__put(struct modfiles *fs, struct modfile *f)
{
	bool last;

	if (!f)
		return;
	pthread_mutex_lock(&fs->lock);
	last = !--f->refs;
	for (size_t i = 0; last && i < fs->nr; i++) {
		if (fs->v[i] == f) {
			fs->v[i] = fs->v[--fs->nr];
			break;
		}
	}
	pthread_mutex_unlock(&fs->lock);
	if (last)
		file_free(f);
}
