/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Closing fds whose release waits: a uprobe link's close waits for an RCU
 * grace period (0.03 to 0.15 s here), and waits that run side by side end
 * together.
 */
#ifndef FDCLOSE_H
#define FDCLOSE_H

#include <stddef.h>

/* Close fds[0..n) at once, a thread each; in turn where no thread starts. */
void fdclose__together(const int *fds, size_t n);

#endif
