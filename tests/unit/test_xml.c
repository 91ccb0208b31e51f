// SPDX-License-Identifier: GPL-2.0
/* xml.c: any bytes from the target as XML 1.0 text, the same way in both SVG files. */
#include <stdlib.h>
#include "model/report.h"
#include "report/xml.h"
#include "unit.h"

#define FFFD "\xef\xbf\xbd"

/* xml__put of len bytes of s, or with max xml__put_max, into a buffer reused by the next call. */
static char *xml(const char *s, size_t len, size_t max)
{
	static char buf[4096];
	FILE *f;

	buf[0] = '\0';		/* fmemopen writes no NUL when nothing is written */
	f = fmemopen(buf, sizeof(buf), "w");
	if (!f)
		return NULL;
	if (max)
		xml__put_max(s, max, f);
	else
		xml__put(s, len, f);
	fclose(f);
	return buf;
}

#define ASSERT_XML(in, len, max, want) ASSERT_EQ_STR(xml(in, len, max), want)

TEST(xml_escapes_markup)
{
	ASSERT_XML("ns::Tpl<int, std::less<int> >::get & \"x\" 'y'", XML_ALL, 0,
		   "ns::Tpl&lt;int, std::less&lt;int&gt; &gt;::get &amp; &quot;x&quot; &apos;y&apos;");
	ASSERT_XML("plain_name", XML_ALL, 0, "plain_name");
	ASSERT_XML("", XML_ALL, 0, "");
	return true;
}

/* Tab kept; the other C0 controls, DEL and C1 replaced, one U+FFFD each. */
TEST(xml_controls)
{
	ASSERT_XML("a\tb", XML_ALL, 0, "a\tb");
	ASSERT_XML("a\nb\rc\x01" "d\x1b[31m\x1f", XML_ALL, 0, "a" FFFD "b" FFFD "c" FFFD "d" FFFD "[31m" FFFD);
	ASSERT_XML("del\x7f", XML_ALL, 0, "del" FFFD);
	ASSERT_XML("c1 \xc2\x80 \xc2\x9b \xc2\x9f", XML_ALL, 0, "c1 " FFFD " " FFFD " " FFFD);
	ASSERT_XML("nbsp \xc2\xa0", XML_ALL, 0, "nbsp \xc2\xa0");
	return true;
}

/* What is not UTF-8 becomes U+FFFD a byte at a time; U+FFFE and U+FFFF one each. */
TEST(xml_invalid_utf8)
{
	ASSERT_XML("\xff\xfe", XML_ALL, 0, FFFD FFFD);
	ASSERT_XML("\xc3", XML_ALL, 0, FFFD);			/* cut short by the NUL */
	ASSERT_XML("\xe2\x82" "A", XML_ALL, 0, FFFD FFFD "A");
	ASSERT_XML("\xc0\x80", XML_ALL, 0, FFFD FFFD);		/* overlong */
	ASSERT_XML("\xed\xa0\x80", XML_ALL, 0, FFFD FFFD FFFD);	/* a surrogate */
	ASSERT_XML("\xf4\x90\x80\x80", XML_ALL, 0, FFFD FFFD FFFD FFFD);	/* past U+10FFFF */
	ASSERT_XML("\xef\xbf\xbe \xef\xbf\xbf", XML_ALL, 0, FFFD " " FFFD);
	ASSERT_XML("\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 " FFFD, XML_ALL, 0,
		   "\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 " FFFD);
	return true;
}

/* len cuts bytes (a character it cuts is replaced), max characters (then an ellipsis). */
TEST(xml_limits)
{
	ASSERT_XML("abcdef", 3, 0, "abc");
	ASSERT_XML("ab\xc3\xa9", 3, 0, "ab" FFFD);
	ASSERT_XML("ab", 10, 0, "ab");
	ASSERT_XML("abcdef", XML_ALL, 3, "abc\xe2\x80\xa6");
	ASSERT_XML("abc", XML_ALL, 3, "abc");
	ASSERT_XML("\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", XML_ALL, 3, "\xc3\xa9\xc3\xa9\xc3\xa9\xe2\x80\xa6");
	ASSERT_XML("\xff<\x01z", XML_ALL, 3, FFFD "&lt;" FFFD "\xe2\x80\xa6");
	return true;
}

/* The output at s is markup XML 1.0 allows in text: an entity, or a permitted character. */
static int xml_char_len(const char *s)
{
	static const char *const refs[] = { "&amp;", "&lt;", "&gt;", "&quot;", "&apos;" };
	const unsigned char *u = (const unsigned char *)s;
	int n = report__utf8_len(s);

	if (*s == '&') {
		for (size_t i = 0; i < sizeof(refs) / sizeof(refs[0]); i++)
			if (!strncmp(s, refs[i], strlen(refs[i])))
				return (int)strlen(refs[i]);
		return 0;
	}
	if (!n || strchr("<>\"'", *s) || (*u < 0x20 && *u != '\t') || *u == 0x7f)
		return 0;
	if ((n == 2 && u[0] == 0xc2 && u[1] < 0xa0) ||
	    (n == 3 && u[0] == 0xef && u[1] == 0xbf && u[2] >= 0xbe))
		return 0;
	return n;
}

/* Every two bytes, before continuation bytes that may complete them: valid XML text. */
TEST(xml_any_bytes)
{
	char in[8] = { 0 };

	for (unsigned a = 1; a < 256; a++) {
		for (unsigned b = 1; b < 256; b++) {
			const char *out;
			int n;

			snprintf(in, sizeof(in), "%c%c\x80\x80" "x", a, b);
			out = xml(in, XML_ALL, 0);
			for (; *out; out += n)
				ASSERT((n = xml_char_len(out)) > 0);
		}
	}
	return true;
}
