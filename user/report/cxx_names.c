// SPDX-License-Identifier: GPL-2.0
/* C++ names shortened for the text report (cxx_names.h). */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "cxx_names.h"

#define ELLIPSIS "\xe2\x80\xa6"	/* U+2026, as the text report prints it */

static const struct {
	const char *from, *to;
} cxx_names_same[] = {
	/* " >": the demangler's space between two closing brackets, not needed after it */
	{ "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > >",
	  "std::string>" },
	{ "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >",
	  "std::string" },
	{ "std::basic_string<char, std::char_traits<char>, std::allocator<char> > >", "std::string>" },
	{ "std::basic_string<char, std::char_traits<char>, std::allocator<char> >", "std::string" },
	{ "std::__cxx11::", "std::" },	/* an inline namespace: the same names without it */
};

/* s with every from as to (never longer), in a new string. */
static char *cxx_names_replace(const char *s)
{
	char *out = malloc(strlen(s) + 1), *o = out;

	if (!out)
		return NULL;
	while (*s) {
		size_t i, n = sizeof(cxx_names_same) / sizeof(cxx_names_same[0]);

		for (i = 0; i < n; i++)
			if (!strncmp(s, cxx_names_same[i].from, strlen(cxx_names_same[i].from)))
				break;
		if (i == n) {
			*o++ = *s++;
			continue;
		}
		o = stpcpy(o, cxx_names_same[i].to);
		s += strlen(cxx_names_same[i].from);
	}
	*o = '\0';
	return out;
}

static bool cxx_names_ident(char c)
{
	return c == '_' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/*
 * How many bytes at s are an operator's name after "operator" (and the
 * keyword): "operator<<" is no bracket, nor "operator()"'s parentheses;
 * 0 when s is not at the keyword.
 */
static size_t cxx_names_operator(const char *start, const char *s)
{
	static const char symbols[] = "<>=-!+*/%^&|~,";
	size_t n = strlen("operator");

	if (strncmp(s, "operator", n) || (s > start && cxx_names_ident(s[-1])) || cxx_names_ident(s[n]))
		return 0;
	if (!strncmp(s + n, "()", 2) || !strncmp(s + n, "[]", 2))
		return n + 2;
	while (s[n] && strchr(symbols, s[n]))
		n++;
	return n;
}

/* The bracket at s: +1 opens, -1 closes, 0 neither ("->" is no bracket). */
static int cxx_names_bracket(const char *start, const char *s)
{
	if (*s == '<' || *s == '(')
		return 1;
	if (*s == ')' || (*s == '>' && !(s > start && s[-1] == '-')))
		return -1;
	return 0;
}

/*
 * Copies s to out, the template arguments at depth 2 and deeper as "<…>";
 * false when the brackets do not pair (out is then unfinished).
 */
static bool cxx_names_elide(const char *s, char *out)
{
	const char *start = s;
	int depth = 0, hidden = 0;	/* hidden: the depth at which "<…>" began, or 0 */

	while (*s) {
		size_t op = cxx_names_operator(start, s);
		int b = op ? 0 : cxx_names_bracket(start, s);

		if (op) {
			if (!hidden)
				out = (char *)memcpy(out, s, op) + op;
			s += op;
			continue;
		}
		if (b > 0 && *s == '<' && depth >= 1 && !hidden) {
			hidden = depth + 1;
			out = stpcpy(out, "<" ELLIPSIS);
		} else if (!hidden) {
			*out++ = *s;
		}
		depth += b;
		if (depth < 0)
			return false;
		if (b < 0 && hidden && depth < hidden) {
			if (*s != '>')
				return false;	/* "<" closed by ")" */
			*out++ = '>';
			hidden = 0;
		}
		s++;
	}
	*out = '\0';
	return depth == 0;
}

char *cxx_names__short(const char *name)
{
	char *same = cxx_names_replace(name);
	/*
	 * A '<' that hides writes "<…>"'s first 4 bytes for 1, its '>' 1 for 1,
	 * any other byte at most itself: "(<><><><>)" grows by more than twice.
	 */
	char *out = same ? malloc(4 * strlen(same) + 1) : NULL;

	if (!out) {
		free(same);
		return NULL;
	}
	if (!cxx_names_elide(same, out)) {
		free(out);
		return same;
	}
	free(same);
	return out;
}
