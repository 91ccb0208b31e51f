/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Protocol buffers' wire format, encoding only (pure): varints, 64-bit
 * integers as varints (two's complement for negatives, as int64 fields
 * are), length-delimited strings and messages, packed repeated integers.
 * A message nested in another is written into a buffer of its own and then
 * appended whole (pb__message), so every length is exact and minimal.
 *
 * Errors are sticky: after a failed allocation every call does nothing and
 * pb.err stays -ENOMEM, so a writer checks once, at the end.
 *
 *	struct pb m = { 0 };
 *	pb__uint(&m, 1, id);
 *	pb__message(&outer, 4, &m);
 *	pb__free(&m);
 */
#ifndef PROTOBUF_H
#define PROTOBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum pb_wire {
	PB_VARINT = 0,
	PB_FIXED64 = 1,
	PB_LEN = 2,	/* strings, bytes, messages, packed repeated fields */
	PB_FIXED32 = 5,
};

struct pb {
	uint8_t *buf;
	size_t len, cap;
	int err;	/* 0, or -ENOMEM once an append failed */
};

/* A bare varint, then a field's key (its number and wire type). */
void pb__varint(struct pb *b, uint64_t v);
void pb__key(struct pb *b, uint32_t field, enum pb_wire wire);
/* Scalar fields, left out when 0 (false, ""), as proto3 writes its defaults. */
void pb__uint(struct pb *b, uint32_t field, uint64_t v);
void pb__int(struct pb *b, uint32_t field, int64_t v);
void pb__bool(struct pb *b, uint32_t field, bool v);
/* Length-delimited: always written, empty or not (a repeated string must be). */
void pb__bytes(struct pb *b, uint32_t field, const void *data, size_t len);
void pb__string(struct pb *b, uint32_t field, const char *s);
/* A repeated integer field, packed (one length-delimited run); nothing when n is 0. */
void pb__packed_uint(struct pb *b, uint32_t field, const uint64_t *v, size_t n);
void pb__packed_int(struct pb *b, uint32_t field, const int64_t *v, size_t n);
/* sub, encoded, as field of b (sub's error carries over). */
void pb__message(struct pb *b, uint32_t field, const struct pb *sub);
/* Empty it, keeping the room (and the error). */
void pb__reset(struct pb *b);
void pb__free(struct pb *b);

#endif
