// SPDX-License-Identifier: GPL-2.0
/* gzip through zlib (gzip.h). */
#include <errno.h>
#include <stdint.h>
#include <zlib.h>
#include "gzip.h"

#define GZIP_WINDOW (15 + 16)	/* deflate's largest window, with a gzip header and trailer */
#define CHUNK 65536

/* Deflate what is left of z's input into f until flush is done. */
static int pump(z_stream *z, int flush, FILE *f)
{
	unsigned char out[CHUNK];
	int ret;

	do {
		z->next_out = out;
		z->avail_out = sizeof(out);
		ret = deflate(z, flush);
		if (ret == Z_STREAM_ERROR)
			return -EINVAL;
		if (fwrite(out, 1, sizeof(out) - z->avail_out, f) != sizeof(out) - z->avail_out)
			return -EIO;
	} while (z->avail_out == 0 || (flush == Z_FINISH && ret != Z_STREAM_END));
	return 0;
}

int gzip__write(const void *data, size_t len, FILE *f)
{
	const unsigned char *p = data;
	z_stream z = { 0 };
	int err = 0;

	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, GZIP_WINDOW, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	/* avail_in is an unsigned int: a buffer past 4 GiB goes in slices. */
	while (!err && len) {
		size_t n = len < UINT32_MAX ? len : UINT32_MAX;

		z.next_in = (unsigned char *)p;
		z.avail_in = (unsigned)n;
		err = pump(&z, Z_NO_FLUSH, f);
		p += n;
		len -= n;
	}
	if (!err)
		err = pump(&z, Z_FINISH, f);
	deflateEnd(&z);
	return err ?: (ferror(f) ? -EIO : 0);
}
