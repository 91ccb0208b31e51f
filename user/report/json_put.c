// SPDX-License-Identifier: GPL-2.0
/* JSON strings (json_put.h), below the writers and sections that print them. */
#include <stdbool.h>
#include "model/report.h"
#include "json_put.h"

/*
 * Bytes from s on that go out as they are: printable ASCII and valid UTF-8;
 * in a script, not '<', '>', '&' (no "</script>" or "<!--" can end or
 * change the HTML element the JSON is in) nor U+2028 and U+2029 (line
 * ends to older JavaScript).
 */
static size_t plain_run(const unsigned char *s, bool script)
{
	const unsigned char *p = s;
	int n;

	for (;;) {
		if (*p >= 0x20 && *p < 0x80 && *p != '"' && *p != '\\' &&
		    !(script && (*p == '<' || *p == '>' || *p == '&')))
			p++;
		else if (*p >= 0x80 && (n = report__utf8_len((const char *)p)) &&
			 !(script && n == 3 && p[0] == 0xe2 && p[1] == 0x80 &&
			   (p[2] == 0xa8 || p[2] == 0xa9)))
			p += n;
		else
			return (size_t)(p - s);
	}
}

/*
 * Names and command lines come from the target and may hold any byte; a
 * single bad one would make the whole document unreadable, so invalid UTF-8
 * becomes U+FFFD. What needs no escape goes out a run at a time: a report
 * of 10,000 deep stacks is about 90 MB, mostly names.
 */
static void put_any_string(const char *str, bool script, FILE *f)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t run;

	if (!str) {
		fputs("null", f);
		return;
	}
	fputc('"', f);
	while (*s) {
		run = plain_run(s, script);
		if (run) {
			fwrite(s, 1, run, f);
			s += run;
		} else if (*s == '"' || *s == '\\') {
			fputc('\\', f);
			fputc(*s++, f);
		} else if (*s < 0x80) {	/* a control character, or '<', '>', '&' in a script */
			fprintf(f, "\\u%04x", *s++);
		} else if (report__utf8_len((const char *)s) == 3) {	/* U+2028, U+2029 */
			fprintf(f, "\\u%04x", 0x2000 | (s[2] & 0x3f));
			s += 3;
		} else {
			fputs("\\ufffd", f);
			s++;
		}
	}
	fputc('"', f);
}

void json_put__string(const char *s, FILE *f)
{
	put_any_string(s, false, f);
}

void json_put__script_string(const char *s, FILE *f)
{
	put_any_string(s, true, f);
}
