/* SPDX-License-Identifier: GPL-2.0 */
/* gzip (RFC 1952) through zlib: how pprof's profiles are stored. */
#ifndef GZIP_H
#define GZIP_H

#include <stddef.h>
#include <stdio.h>

/* data[0..len) compressed into one gzip member on f. 0 or -errno. */
int gzip__write(const void *data, size_t len, FILE *f);

#endif
