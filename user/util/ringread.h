/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A BPF ring buffer (BPF_MAP_TYPE_RINGBUF) read through one mapping of its
 * data. libbpf maps the data twice, back to back, so that a record that
 * wraps past the end reads whole; the kernel maps every page at mmap, so
 * the second copy is resident from the start: 16 MiB of our RSS for the
 * default stack ring. Here the data is mapped once, and the few records
 * that wrap are copied whole before they are handed on.
 */
#ifndef RINGREAD_H
#define RINGREAD_H

#include <stddef.h>
#include <stdint.h>

/* What is read: the positions and the data (a power of two of bytes). */
struct ring_view {
	unsigned long *consumer;		/* ours to move */
	const unsigned long *producer;		/* the kernel's */
	const uint8_t *data;
	size_t size;
};

/* Each record's bytes; non-zero: stop after it (it is consumed), returned. */
typedef int (*ringread_fn)(void *ctx, void *data, size_t len);

struct ring_read {
	struct ring_view v;
	int fd;			/* the map's: poll it for records */
	size_t page;
	void *wrap;		/* room for a record that wraps */
	size_t wrap_cap;
};

/* The ring map fd, of size bytes of data, mapped (the fd stays the caller's). 0 or -errno. */
int ringread__open(struct ring_read *r, int fd, size_t size);
void ringread__close(struct ring_read *r);
/*
 * The records committed, in order, each consumed once fn returns; up to
 * the first fn returns non-zero for (its value), else 0. -ENOMEM: a
 * wrapping record found no room to be copied to (left unread).
 */
int ringread__consume(struct ring_read *r, ringread_fn fn, void *ctx);
/* The same over a view (ringread__consume's; a test's). */
int ringread__consume_view(const struct ring_view *v, void **wrap, size_t *wrap_cap,
			   ringread_fn fn, void *ctx);

#endif
