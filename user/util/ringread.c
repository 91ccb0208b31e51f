// SPDX-License-Identifier: GPL-2.0
/*
 * A BPF ring buffer read through one mapping of its data (ringread.h). The
 * protocol is the kernel's (kernel/bpf/ringbuf.c): a record is an 8-byte
 * header (its length, with a busy bit while BPF writes it and a discard
 * bit) and its bytes, 8-aligned, at consumer position & (size - 1); the
 * producer position says how far BPF reserved, the consumer position how
 * far we read. A header never wraps (8-aligned in a power of two); the
 * bytes after it may.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <linux/bpf.h>
#include "ringread.h"

#define FLAGS (BPF_RINGBUF_BUSY_BIT | BPF_RINGBUF_DISCARD_BIT)

int ringread__open(struct ring_read *r, int fd, size_t size)
{
	void *cons, *prod;

	memset(r, 0, sizeof(*r));
	r->page = (size_t)sysconf(_SC_PAGESIZE);
	if (!size || size & (size - 1))
		return -EINVAL;
	cons = mmap(NULL, r->page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (cons == MAP_FAILED)
		return -errno;
	/* The producer's page and the data once (libbpf maps the data twice). */
	prod = mmap(NULL, r->page + size, PROT_READ, MAP_SHARED, fd, (off_t)r->page);
	if (prod == MAP_FAILED) {
		int err = -errno;

		munmap(cons, r->page);
		return err;
	}
	r->fd = fd;
	r->v = (struct ring_view){ cons, prod, (const uint8_t *)prod + r->page, size };
	return 0;
}

void ringread__close(struct ring_read *r)
{
	if (r->v.consumer)
		munmap(r->v.consumer, r->page);
	if (r->v.producer)
		munmap((void *)r->v.producer, r->page + r->v.size);
	free(r->wrap);
	memset(r, 0, sizeof(*r));
}

/* The len bytes at position pos: in place, or copied whole into *wrap when they wrap. */
static void *bytes_at(const struct ring_view *v, unsigned long pos, size_t len, void **wrap,
		      size_t *wrap_cap)
{
	size_t at = pos & (v->size - 1), first = v->size - at;
	void *p;

	if (len <= first)
		return (void *)(v->data + at);
	if (len > *wrap_cap) {
		p = realloc(*wrap, len);
		if (!p)
			return NULL;
		*wrap = p;
		*wrap_cap = len;
	}
	memcpy(*wrap, v->data + at, first);
	memcpy((uint8_t *)*wrap + first, v->data, len - first);
	return *wrap;
}

int ringread__consume_view(const struct ring_view *v, void **wrap, size_t *wrap_cap,
			   ringread_fn fn, void *ctx)
{
	unsigned long cons = __atomic_load_n(v->consumer, __ATOMIC_ACQUIRE);
	unsigned long prod = __atomic_load_n(v->producer, __ATOMIC_ACQUIRE);

	while (cons < prod) {
		const uint32_t *hdr = (const uint32_t *)(v->data + (cons & (v->size - 1)));
		uint32_t len = __atomic_load_n(hdr, __ATOMIC_ACQUIRE);
		unsigned long next = cons + ((((len & ~FLAGS) + BPF_RINGBUF_HDR_SZ) + 7) & ~7ul);
		int ret = 0;

		if (len & BPF_RINGBUF_BUSY_BIT)
			break;	/* BPF still writes it: the rest waits */
		if (!(len & BPF_RINGBUF_DISCARD_BIT)) {
			void *rec = bytes_at(v, cons + BPF_RINGBUF_HDR_SZ, len, wrap, wrap_cap);

			if (!rec)
				return -ENOMEM;
			ret = fn(ctx, rec, len);
		}
		cons = next;
		__atomic_store_n(v->consumer, cons, __ATOMIC_RELEASE);
		if (ret)
			return ret;
		if (cons == prod)	/* more may have come meanwhile */
			prod = __atomic_load_n(v->producer, __ATOMIC_ACQUIRE);
	}
	return 0;
}

int ringread__consume(struct ring_read *r, ringread_fn fn, void *ctx)
{
	return ringread__consume_view(&r->v, &r->wrap, &r->wrap_cap, fn, ctx);
}
