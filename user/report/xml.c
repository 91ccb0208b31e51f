// SPDX-License-Identifier: GPL-2.0
/* Text from the target as XML 1.0 (see xml.h): one writer for both SVG files. */
#include <stdbool.h>
#include "model/report.h"
#include "xml.h"

#define REPLACEMENT "\xef\xbf\xbd"	/* U+FFFD */
#define ELLIPSIS "\xe2\x80\xa6"		/* U+2026 */

/* The well-formed character of n bytes at s is one XML may carry (tab kept; see xml.h). */
static bool allowed(const unsigned char *s, int n)
{
	if (n == 1)
		return (s[0] >= 0x20 && s[0] != 0x7f) || s[0] == '\t';
	if (n == 2)
		return s[0] != 0xc2 || s[1] >= 0xa0;	/* C1: U+0080..U+009F */
	/* U+FFFE and U+FFFF are not XML characters. */
	return n != 3 || s[0] != 0xef || s[1] != 0xbf || s[2] < 0xbe;
}

static void put_char(const unsigned char *s, int n, FILE *f)
{
	switch (*s) {
	case '&': fputs("&amp;", f); break;
	case '<': fputs("&lt;", f); break;
	case '>': fputs("&gt;", f); break;
	case '"': fputs("&quot;", f); break;
	case '\'': fputs("&apos;", f); break;
	default: fwrite(s, 1, n, f);
	}
}

/*
 * At most len bytes and max characters. A byte that starts no UTF-8
 * character is replaced alone, so that the next one is read afresh;
 * report__utf8_len stops at a NUL, so it never reads past the string.
 */
static void put(const char *str, size_t len, size_t max, FILE *f)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t left = len;

	for (size_t chars = 0; left && *s; chars++) {
		int n = report__utf8_len((const char *)s);

		if (chars == max) {
			fputs(ELLIPSIS, f);
			return;
		}
		if (!n || (size_t)n > left) {
			fputs(REPLACEMENT, f);
			n = 1;
		} else if (!allowed(s, n)) {
			fputs(REPLACEMENT, f);
		} else {
			put_char(s, n, f);
		}
		s += n;
		left -= n;
	}
}

void xml__put(const char *s, size_t len, FILE *f)
{
	put(s, len, XML_ALL, f);
}

void xml__put_max(const char *s, size_t max, FILE *f)
{
	put(s, XML_ALL, max, f);
}
