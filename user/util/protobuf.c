// SPDX-License-Identifier: GPL-2.0
/* Protocol buffers' wire format, encoding only (protobuf.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "protobuf.h"
#include "vec.h"

#define VARINT_MAX 10	/* 64 bits, 7 a byte */

static uint8_t *room(struct pb *b, size_t n)
{
	if (b->err)
		return NULL;
	if (n > SIZE_MAX - b->len || vec__reserve_min(&b->buf, &b->cap, b->len + n, 1, 64)) {
		b->err = -ENOMEM;
		return NULL;
	}
	return b->buf + b->len;
}

static void append(struct pb *b, const void *data, size_t n)
{
	uint8_t *p = n ? room(b, n) : NULL;

	if (p) {
		memcpy(p, data, n);
		b->len += n;
	}
}

void pb__varint(struct pb *b, uint64_t v)
{
	uint8_t tmp[VARINT_MAX];
	size_t n = 0;

	do {
		tmp[n++] = (uint8_t)(v & 0x7f) | (v > 0x7f ? 0x80 : 0);
		v >>= 7;
	} while (v);
	append(b, tmp, n);
}

void pb__key(struct pb *b, uint32_t field, enum pb_wire wire)
{
	pb__varint(b, (uint64_t)field << 3 | wire);
}

void pb__uint(struct pb *b, uint32_t field, uint64_t v)
{
	if (!v)
		return;
	pb__key(b, field, PB_VARINT);
	pb__varint(b, v);
}

/* int64 (not sint64): a negative value is its two's complement, ten bytes. */
void pb__int(struct pb *b, uint32_t field, int64_t v)
{
	pb__uint(b, field, (uint64_t)v);
}

void pb__bool(struct pb *b, uint32_t field, bool v)
{
	pb__uint(b, field, v);
}

void pb__bytes(struct pb *b, uint32_t field, const void *data, size_t len)
{
	pb__key(b, field, PB_LEN);
	pb__varint(b, len);
	append(b, data, len);
}

void pb__string(struct pb *b, uint32_t field, const char *s)
{
	pb__bytes(b, field, s, strlen(s));
}

static size_t varint_len(uint64_t v)
{
	size_t n = 1;

	while (v > 0x7f) {
		v >>= 7;
		n++;
	}
	return n;
}

void pb__packed_uint(struct pb *b, uint32_t field, const uint64_t *v, size_t n)
{
	size_t len = 0;

	if (!n)
		return;
	for (size_t i = 0; i < n; i++)
		len += varint_len(v[i]);
	pb__key(b, field, PB_LEN);
	pb__varint(b, len);
	for (size_t i = 0; i < n; i++)
		pb__varint(b, v[i]);
}

/* int64 and uint64 are one varint each: C lets the unsigned type read the signed. */
void pb__packed_int(struct pb *b, uint32_t field, const int64_t *v, size_t n)
{
	pb__packed_uint(b, field, (const uint64_t *)v, n);
}

void pb__message(struct pb *b, uint32_t field, const struct pb *sub)
{
	if (sub->err && !b->err)
		b->err = sub->err;
	pb__bytes(b, field, sub->buf, sub->len);
}

void pb__reset(struct pb *b)
{
	b->len = 0;
}

void pb__free(struct pb *b)
{
	free(b->buf);
	*b = (struct pb){ 0 };
}
