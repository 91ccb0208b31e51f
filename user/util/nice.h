/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The calling thread's nice value, raised for work that others wait on (a
 * sweep the churn outruns, a reading that holds the sweep's locks, a scan
 * that holds the target) and set back after.
 */
#ifndef UTIL_NICE_H
#define UTIL_NICE_H

/*
 * Set this thread's nice value to nice; its value before. Without
 * CAP_SYS_NICE it stays as it was: slower, never wrong.
 */
int nice__raise(int nice);
/* Set this thread's nice value back to was (nice__raise's). */
void nice__restore(int was);

#endif
