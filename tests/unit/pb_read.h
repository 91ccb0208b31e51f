/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A tiny protocol-buffers reader for the tests (written apart from
 * user/util/protobuf.c, which only encodes): fields one at a time, a
 * length-delimited one as a slice to read further.
 */
#ifndef PB_READ_H
#define PB_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pb_read {
	const uint8_t *p, *end;
	bool bad;	/* a truncated varint or length, or an unknown wire type */
};

struct pb_field {
	uint32_t num;
	int wire;		/* 0 varint, 2 length-delimited */
	uint64_t v;		/* a varint's value */
	struct pb_read sub;	/* a length-delimited field's bytes */
};

/* The next field into *f; false at the end or when the input is bad (r->bad). */
bool pb_read__field(struct pb_read *r, struct pb_field *f);
/* A varint alone (a packed run's element); false at the end or when bad. */
bool pb_read__varint(struct pb_read *r, uint64_t *v);
/* How many fields numbered num r holds (r itself untouched). */
size_t pb_read__count(struct pb_read r, uint32_t num);
/* The last varint field numbered num, or 0 (proto3's default). */
uint64_t pb_read__uint(struct pb_read r, uint32_t num);

#endif
