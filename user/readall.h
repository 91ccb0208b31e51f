/* SPDX-License-Identifier: GPL-2.0 */
/* Reading a whole file into memory: /proc files report no size. */
#ifndef READALL_H
#define READALL_H

#include <stddef.h>

/*
 * Read fd to EOF into a NUL-terminated buffer the caller frees; hint is the
 * expected size (0 if unknown). 0 or -errno.
 */
int read_all(int fd, size_t hint, char **out);

#endif
