// SPDX-License-Identifier: GPL-2.0
/*
 * util/protobuf.c: the encodings of protobuf's own documentation byte for
 * byte, and what tests/unit/pb_read.c reads back from random fields.
 */
#include <stdlib.h>
#include "util/protobuf.h"
#include "pb_read.h"
#include "unit.h"

static bool same_bytes(const struct pb *b, const uint8_t *want, size_t len)
{
	if (!b->err && b->len == len && !memcmp(b->buf, want, len))
		return true;
	fprintf(stderr, "  got %zu bytes (err %d):", b->len, b->err);
	for (size_t i = 0; i < b->len; i++)
		fprintf(stderr, " %02x", b->buf[i]);
	fputc('\n', stderr);
	return false;
}

/* protobuf.dev's "Encoding" page: 150, "testing", [3, 270, 86942], a nested message. */
TEST(protobuf_known_encodings)
{
	static const uint8_t v150[] = { 0x08, 0x96, 0x01 };
	static const uint8_t testing[] = { 0x12, 0x07, 't', 'e', 's', 't', 'i', 'n', 'g' };
	static const uint8_t packed[] = { 0x22, 0x06, 0x03, 0x8e, 0x02, 0x9e, 0xa7, 0x05 };
	static const uint8_t nested[] = { 0x1a, 0x03, 0x08, 0x96, 0x01 };
	static const uint64_t run[] = { 3, 270, 86942 };
	struct pb b = { 0 }, sub = { 0 };
	bool ok;

	pb__uint(&b, 1, 150);
	ok = same_bytes(&b, v150, sizeof(v150));
	pb__reset(&b);
	pb__string(&b, 2, "testing");
	ok = ok && same_bytes(&b, testing, sizeof(testing));
	pb__reset(&b);
	pb__packed_uint(&b, 4, run, 3);
	ok = ok && same_bytes(&b, packed, sizeof(packed));
	pb__reset(&b);
	pb__uint(&sub, 1, 150);
	pb__message(&b, 3, &sub);
	ok = ok && same_bytes(&b, nested, sizeof(nested));
	pb__free(&b);
	pb__free(&sub);
	return ok;
}

/* int64 -1 is ten bytes; zeros (proto3 defaults) are left out, empty strings are not. */
TEST(protobuf_negative_and_defaults)
{
	static const uint8_t minus1[] = { 0x08, 0xff, 0xff, 0xff, 0xff, 0xff,
					  0xff, 0xff, 0xff, 0xff, 0x01 };
	static const uint8_t empty[] = { 0x32, 0x00 };
	static const uint8_t big_field[] = { 0xf8, 0xff, 0xff, 0xff, 0x0f, 0x01 };
	struct pb b = { 0 };
	bool ok;

	pb__int(&b, 1, -1);
	ok = same_bytes(&b, minus1, sizeof(minus1));
	pb__reset(&b);
	pb__uint(&b, 1, 0);
	pb__int(&b, 2, 0);
	pb__bool(&b, 3, false);
	pb__packed_uint(&b, 4, NULL, 0);
	pb__string(&b, 6, "");
	ok = ok && same_bytes(&b, empty, sizeof(empty));
	pb__reset(&b);
	pb__bool(&b, 536870911, true);	/* the highest field number */
	ok = ok && same_bytes(&b, big_field, sizeof(big_field));
	pb__free(&b);
	return ok;
}

/* Random values of every width, read back by a decoder written apart. */
TEST(protobuf_round_trip)
{
	uint64_t vals[200];
	int64_t ivals[50];
	struct pb b = { 0 }, sub = { 0 };
	struct pb_read r, run;
	struct pb_field f;
	size_t n = 0, k = 0;
	uint64_t v;

	srandom(20);
	for (size_t i = 0; i < 200; i++)
		vals[i] = ((uint64_t)random() << 33 ^ (uint64_t)random()) >> (random() % 64);
	for (size_t i = 0; i < 50; i++)
		ivals[i] = (int64_t)vals[i] - (int64_t)vals[i + 50];
	for (size_t i = 0; i < 200; i++)
		pb__uint(&b, 1 + (uint32_t)(i % 15), vals[i] | 1);
	pb__packed_int(&sub, 2, ivals, 50);
	pb__message(&b, 100000, &sub);
	ASSERT(!b.err);
	r = (struct pb_read){ b.buf, b.buf + b.len, false };
	while (pb_read__field(&r, &f)) {
		if (f.num == 100000) {
			struct pb_field packed;

			ASSERT(pb_read__field(&f.sub, &packed) && packed.num == 2 && packed.wire == 2);
			run = packed.sub;
			while (pb_read__varint(&run, &v))
				ASSERT_EQ_U64(v, (uint64_t)ivals[k++]);
			continue;
		}
		ASSERT_EQ_U64(f.num, 1 + n % 15);
		ASSERT_EQ_U64(f.v, vals[n] | 1);
		n++;
	}
	ASSERT(!r.bad && r.p == r.end);
	ASSERT_EQ_U64(n, 200);
	ASSERT_EQ_U64(k, 50);
	pb__free(&b);
	pb__free(&sub);
	return true;
}
