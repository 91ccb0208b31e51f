// SPDX-License-Identifier: GPL-2.0
/* Python's code copies held while a report reads the code (pyrelay.h). */
#include <errno.h>
#include <stdlib.h>
#include "pyrelay.h"
#include "util/vec.h"
#include "util/worker.h"

static void flush_locked(struct pyrelay *r)
{
	for (size_t i = 0; r->fn && i < r->nr_kept; i++)
		r->fn(r->arg, &r->kept[i]);
	r->nr_kept = 0;
}

void pyrelay__flush(struct pyrelay *r)
{
	pthread_mutex_lock(&r->lock);
	flush_locked(r);
	pthread_mutex_unlock(&r->lock);
}

/* A copy from BPF, on the loop's thread: to pytrace, or kept for the job. */
static void relay_copy(void *arg, const struct py_code *c)
{
	struct pyrelay *r = arg;

	pthread_mutex_lock(&r->lock);
	if (!*r->worker || !worker__busy(*r->worker)) {
		flush_locked(r);
		r->fn(r->arg, c);
	} else if (!vec__reserve_min(&r->kept, &r->cap_kept, r->nr_kept + 1, sizeof(*r->kept), 64)) {
		r->kept[r->nr_kept++] = *c;
	}
	/* Lost only without memory: its frames are then read from the target. */
	pthread_mutex_unlock(&r->lock);
}

static void relay_on_code(void *ctx, void (*fn)(void *arg, const struct py_code *c), void *arg)
{
	struct pyrelay *r = ctx;

	pthread_mutex_lock(&r->lock);
	r->fn = fn;
	r->arg = arg;
	if (!fn)
		r->nr_kept = 0;
	pthread_mutex_unlock(&r->lock);
	r->inner.on_code(r->inner.ctx, fn ? relay_copy : NULL, r);
}

static int relay_set_python(void *ctx, const struct py_offsets *py, bool stop_at_exit)
{
	struct pyrelay *r = ctx;

	return r->inner.set_python(r->inner.ctx, py, stop_at_exit);
}

static int relay_set_image(void *ctx, uint32_t tag, const struct py_offsets *py)
{
	struct pyrelay *r = ctx;

	return r->inner.set_image(r->inner.ctx, tag, py);
}

/* On the loop's thread, as the copies: no job is reading what it adds to. */
static void relay_on_exec(void *ctx, void (*fn)(void *arg, pid_t pid, uint32_t tag,
						const struct maps *maps,
						const struct lookup_order *lo), void *arg)
{
	struct pyrelay *r = ctx;

	r->inner.on_exec(r->inner.ctx, fn, arg);
}

static int relay_attach_exit(void *ctx, const char *path, uint64_t offset, bool finalize)
{
	struct pyrelay *r = ctx;

	return r->inner.attach_exit(r->inner.ctx, path, offset, finalize);
}

static int relay_attach_dealloc(void *ctx, const char *path, uint64_t offset)
{
	struct pyrelay *r = ctx;

	return r->inner.attach_dealloc ? r->inner.attach_dealloc(r->inner.ctx, path, offset)
				       : -EOPNOTSUPP;
}

static int relay_attach_image_exit(void *ctx, pid_t pid, const char *path, uint64_t offset)
{
	struct pyrelay *r = ctx;

	return r->inner.attach_image_exit(r->inner.ctx, pid, path, offset);
}

static int relay_each_stack(void *ctx, const struct snapshot *snap, uint64_t *walked,
			    int (*fn)(void *arg, const struct py_stack *py), void *arg)
{
	struct pyrelay *r = ctx;

	return r->inner.each_stack(r->inner.ctx, snap, walked, fn, arg);
}

static struct py_frame *relay_py_frames(void *ctx, size_t *nr)
{
	struct pyrelay *r = ctx;

	*nr = 0;
	return r->inner.py_frames ? r->inner.py_frames(r->inner.ctx, nr) : NULL;
}

static int relay_blocks(void *ctx, uint32_t api, uint64_t size, uint64_t **addrs, size_t *nr)
{
	struct pyrelay *r = ctx;

	return r->inner.blocks(r->inner.ctx, api, size, addrs, nr);
}

void pyrelay__wrap(struct pyrelay *r, struct worker *const *worker, struct pytrace_ops *ops)
{
	r->inner = *ops;
	r->worker = worker;
	pthread_mutex_init(&r->lock, NULL);
	*ops = (struct pytrace_ops){
		.ctx = r,
		.set_python = relay_set_python,
		.set_image = relay_set_image,
		.on_exec = relay_on_exec,
		.on_code = relay_on_code,
		.attach_exit = relay_attach_exit,
		.attach_dealloc = relay_attach_dealloc,
		.attach_image_exit = relay_attach_image_exit,
		.each_stack = relay_each_stack,
		.py_frames = r->inner.py_frames ? relay_py_frames : NULL,
		.blocks = relay_blocks,
	};
}

void pyrelay__free(struct pyrelay *r)
{
	free(r->kept);
	r->kept = NULL;
	r->nr_kept = r->cap_kept = 0;
	if (r->inner.ctx)
		pthread_mutex_destroy(&r->lock);
}
