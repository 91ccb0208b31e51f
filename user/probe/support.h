/* SPDX-License-Identifier: GPL-2.0 */
/* Can this machine and this process trace at all? Checked before anything starts. */
#ifndef SUPPORT_H
#define SUPPORT_H

#include <stdbool.h>
#include <stddef.h>

/* 0, or -errno with one line in err naming what is missing. */
int support__check(char *err, size_t errlen);

/* Is this Linux major.minor or later (uname)? Kernel features without a cheaper probe. */
bool support__kernel_at_least(int major, int minor);

#endif
