// SPDX-License-Identifier: GPL-2.0
/* A tiny protocol-buffers reader for the tests (pb_read.h). */
#include "pb_read.h"

bool pb_read__varint(struct pb_read *r, uint64_t *v)
{
	*v = 0;
	if (r->p >= r->end)
		return false;
	for (unsigned shift = 0; shift < 64; shift += 7) {
		uint8_t byte;

		if (r->p >= r->end)
			break;
		byte = *r->p++;
		*v |= (uint64_t)(byte & 0x7f) << shift;
		if (!(byte & 0x80))
			return true;
	}
	r->bad = true;
	return false;
}

bool pb_read__field(struct pb_read *r, struct pb_field *f)
{
	uint64_t key, len;

	if (r->bad || !pb_read__varint(r, &key))
		return false;
	f->num = (uint32_t)(key >> 3);
	f->wire = (int)(key & 7);
	f->v = 0;
	f->sub = (struct pb_read){ 0 };
	if (f->wire == 0)
		return pb_read__varint(r, &f->v) || (r->bad = true, false);
	if (f->wire != 2 || !pb_read__varint(r, &len) || len > (uint64_t)(r->end - r->p)) {
		r->bad = true;
		return false;
	}
	f->sub = (struct pb_read){ r->p, r->p + len, false };
	r->p += len;
	return true;
}

size_t pb_read__count(struct pb_read r, uint32_t num)
{
	struct pb_field f;
	size_t n = 0;

	while (pb_read__field(&r, &f))
		n += f.num == num;
	return n;
}

uint64_t pb_read__uint(struct pb_read r, uint32_t num)
{
	struct pb_field f;
	uint64_t v = 0;

	while (pb_read__field(&r, &f))
		if (f.num == num && f.wire == 0)
			v = f.v;
	return v;
}
