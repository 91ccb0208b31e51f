// SPDX-License-Identifier: GPL-2.0
/* A table behind an fd, mapped a window at a time (mapwin.h). */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "mapwin.h"

/* Every window mapped, by any thread: -v's figures. */
static uint64_t mapped_windows, mapped_bytes;

void mapwin__totals(uint64_t *windows, uint64_t *bytes)
{
	*windows = __atomic_load_n(&mapped_windows, __ATOMIC_RELAXED);
	*bytes = __atomic_load_n(&mapped_bytes, __ATOMIC_RELAXED);
}

static size_t page_size(void)
{
	static size_t page;

	if (!page)
		page = (size_t)sysconf(_SC_PAGESIZE);
	return page;
}

static size_t round_up(size_t v, size_t to)
{
	return (v + to - 1) / to * to;
}

void mapwin__init(struct mapwin *w, int fd, size_t elem, size_t nr, size_t span)
{
	size_t page = page_size();

	*w = (struct mapwin){ .fd = fd, .elem = elem, .nr = nr };
	w->span = round_up(span ? span : MAPWIN_SPAN, page);
	/* A window holds one entry at least. */
	if (w->span < round_up(elem, page))
		w->span = round_up(elem, page);
}

size_t mapwin__table_bytes(const struct mapwin *w)
{
	return round_up(w->elem * w->nr, page_size());
}

void mapwin__end(struct mapwin *w)
{
	if (w->mem)
		munmap(w->mem, w->len);
	w->mem = NULL;
	w->count = 0;
}

/* The window of the entries that start in [k * span, (k + 1) * span), mapped. */
static int map_window(struct mapwin *w, size_t k)
{
	size_t start = k * w->span, first = (start + w->elem - 1) / w->elem;
	size_t last = ((k + 1) * w->span + w->elem - 1) / w->elem;	/* past the window's last */
	size_t end;
	void *mem;

	if (last > w->nr)
		last = w->nr;
	end = round_up(last * w->elem, page_size());
	mapwin__end(w);
	if (first >= last)
		return -ERANGE;
	mem = mmap(NULL, end - start, PROT_READ | PROT_WRITE, MAP_SHARED, w->fd, (off_t)start);
	if (mem == MAP_FAILED)
		return -errno;
	/* A child we fork (-c's target) need not copy it. */
	madvise(mem, end - start, MADV_DONTFORK);
	w->mem = mem;
	w->len = end - start;
	w->first = first;
	w->count = last - first;
	w->skew = first * w->elem - start;
	w->maps++;
	__atomic_fetch_add(&mapped_windows, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&mapped_bytes, end - start, __ATOMIC_RELAXED);
	return 0;
}

void *mapwin__at(struct mapwin *w, size_t i)
{
	int err;

	if (i >= w->nr) {
		w->err = -ERANGE;
		return NULL;
	}
	if (!w->mem || i < w->first || i - w->first >= w->count) {
		err = map_window(w, i * w->elem / w->span);
		if (err) {
			w->err = err;
			return NULL;
		}
	}
	return w->mem + w->skew + (i - w->first) * w->elem;
}

int mapwin__zero(struct mapwin *w)
{
	for (size_t i = 0; i < w->nr; i = w->first + w->count) {
		if (!mapwin__at(w, i))
			return w->err;
		memset(w->mem + w->skew, 0, w->count * w->elem);
	}
	mapwin__end(w);
	return 0;
}
