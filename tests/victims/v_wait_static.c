// SPDX-License-Identifier: GPL-2.0
/*
 * v_wait_static: v_wait linked statically (the Makefile adds -static for
 * the name): a -p target whose malloc is in its own executable, with no
 * dynamic linker and no link map to read.
 * Truth: as v_wait's, its protocol too.
 */
#include "v_wait.c"
