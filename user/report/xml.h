/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Text from the target (function names, paths, the command line) in the SVG
 * writers' XML. It may hold any byte, and one byte XML 1.0 cannot carry
 * makes the whole file unreadable; so each byte that does not start a
 * well-formed UTF-8 character, and each character XML forbids or that is a
 * control character (C0 but the tab, DEL, C1: invisible, and escape
 * sequences to some terminals that show the file), becomes U+FFFD. '&', '<',
 * '>', '"' and ''' are escaped: the text is safe in character data and in
 * attribute values of either quote. Pure.
 */
#ifndef XML_H
#define XML_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define XML_ALL SIZE_MAX

/* The C string s, up to its NUL or len bytes (XML_ALL: no limit), a character cut by len replaced. */
void xml__put(const char *s, size_t len, FILE *f);
/* The C string s; of more than max characters, the first max and an ellipsis (U+2026). */
void xml__put_max(const char *s, size_t max, FILE *f);

#endif
