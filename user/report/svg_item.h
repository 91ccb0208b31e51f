/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The flame graph's boxes (report_svg.c): a stack's items from the root,
 * how two of them compare, and the stacks sorted from the root by them.
 */
#ifndef SVG_ITEM_H
#define SVG_ITEM_H

#include <stddef.h>
#include "model/report.h"

/* K_NATIVE: a native frame until drawn, when its module gives its kind (report_svg.c). */
enum kind { K_PROGRAM, K_LIBC, K_CXX, K_LIB, K_UNKNOWN, K_PYTHON, K_PYLIB, K_API, K_OTHER,
	    K_NATIVE, K__COUNT };

/* One box's identity: a frame, or a synthetic one (root, marker, API). */
struct svg_item {
	enum kind kind;
	const char *name;		/* function, API, marker; NULL: unnamed frame */
	const struct report_frame *fr;	/* NULL when synthetic */
};

/* s's items: [marker], its frames, the API. */
size_t svg_item__count(const struct report_stack *s);
/* Item i of s, counted from the root: [marker], frames outermost first, the API. */
struct svg_item svg_item__at(const struct report_stack *s, size_t i);
/* Their order in the graph; 0: one box (function and module, a Python frame's line). */
int svg_item__cmp(const struct svg_item *a, const struct svg_item *b);
/* v[0..n) from the root, as svg_item__cmp orders items. 0 or -ENOMEM (v as it was). */
int svg_item__sort(const struct report_stack **v, size_t n);

#endif
