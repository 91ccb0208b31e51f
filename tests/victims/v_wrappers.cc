// SPDX-License-Identifier: GPL-2.0
/*
 * v_wrappers: blocks a library allocates for the program, the calls whose
 * stacks frame pointers lose: Debian builds glibc and libstdc++ without
 * them, so the walk from inside strdup, getdelim or std::string's
 * _M_create skips the victim's function that made the call, or stops dead.
 * With CFI unwinding the first frame of the victim's own code (this file) is
 * the site, at the line of its call, and the victim's own frames after it
 * are exactly its callers (TRUTH callers=), whatever library frames lie in
 * between:
 *   site_strdup     strdup -> malloc(strlen + 1) inside libc
 *   site_getline    getline -> getdelim's malloc(120) inside libc
 *   site_string     new std::string(n, 'x'): the object (new, from the site)
 *                   and its buffer (new of capacity + 1, from libstdc++'s
 *                   _M_create), both at one line
 *   site_vector     push_back growth of a vector placed in static memory:
 *                   operator new from the vector's template code (inlined
 *                   or not); the freed smaller buffers are not outstanding
 *   site_new_obj    operator new, site_new_array operator new[]
 *   site_in_handler malloc in a SIGUSR1 handler run by raise(): the stack
 *                   goes through the kernel's signal frame (__restore_rt)
 *                   back into raise and via_signal
 * Sites are extern "C" so that their names read the same in every report.
 * Truth: TRUTH lines (see truth.h) to $VICTIM_TRUTH or stdout; exit status 0.
 *
 * Truth: 7 TRUTH lines; heap 1,622 bytes in 14 blocks: strdup 2 x 12,
 * string 32 + 101 and 32 + 201, getline 120, vector 512 (128 ints),
 * new 3 x 24, new[] 400, handler 2 x 64.
 *
 * valgrind 3.19 (--leak-check=full --show-leak-kinds=all), once:
 *   definitely lost: 808 bytes in 11 blocks
 *   indirectly lost: 302 bytes in 2 blocks (the strings' characters)
 *   possibly lost: 0, still reachable: 512 bytes in 1 block (the vector's,
 *   its pointer in static memory) = the sum of the TRUTH lines.
 */
#include <csignal>
#include <cstdio>
#include <cstring>
#include <new>
#include <string>
#include <vector>
#include "truth.h"

struct Obj {
	long a, b, c;
};

static const char text[] = "first line\nsecond line\n";

extern "C" {

SITE void site_strdup(const char *s)
{
	char *p = strdup(s); TR_ALLOC(p, strlen(s) + 1, "malloc"); ESCAPE(p);
}

/* getdelim starts a NULL line with a malloc of 120 bytes, its *n. */
SITE void site_getline(FILE *f)
{
	char *line = NULL;
	size_t n = 0;

	ssize_t len = getline(&line, &n, f); if (len >= 0) TR_ALLOC(line, n, "malloc"); ESCAPE(line);
}

/* Longer than the short-string buffer: the characters get a block of their own. */
SITE void site_string(size_t n)
{
	std::string *s = new std::string(n, 'x'); TR_ALLOC(s, sizeof(*s), "new"); TR_ALLOC(s->data(), s->capacity() + 1, "new"); ESCAPE(s);
}

SITE void site_vector(int n)
{
	alignas(std::vector<int>) static unsigned char mem[sizeof(std::vector<int>)];
	std::vector<int> *v = new (mem) std::vector<int>();

	for (int i = 0; i < n; i++) v->push_back(i); TR_ALLOC(v->data(), v->capacity() * sizeof(int), "new"); ESCAPE(v);
}

SITE void site_new_obj(void)
{
	Obj *o = new Obj(); TR_ALLOC(o, sizeof(Obj), "new"); ESCAPE(o);
}

SITE void site_new_array(size_t n)
{
	int *a = new int[n]; TR_ALLOC(a, n * sizeof(int), "new[]"); ESCAPE(a);
}

SITE void site_in_handler(size_t n)
{
	void *p = malloc(n); TR_ALLOC(p, n, "malloc"); ESCAPE(p);
}

VIA void via_handler(int sig)
{
	TR_ENTER();
	site_in_handler(64);
	TR_LEAVE();
}

VIA void via_signal(void)
{
	TR_ENTER();
	signal(SIGUSR1, via_handler);
	raise(SIGUSR1);
	TR_LEAVE();
}

VIA void via_getline(void)
{
	FILE *f = fmemopen((void *)text, sizeof(text) - 1, "r");

	TR_ENTER();
	if (!f)
		tr_die("fmemopen");
	site_getline(f);
	fclose(f);	/* the FILE and its buffer go; the line stays */
	TR_LEAVE();
}

VIA void via_strings(void)
{
	TR_ENTER();
	site_strdup("hello world");
	site_strdup("hello again");
	site_string(100);
	site_string(200);
	TR_LEAVE();
}

} /* extern "C" */

int main(void)
{
	TR_ENTER();
	via_strings();
	via_getline();
	site_vector(100);
	for (int i = 0; i < 3; i++)
		site_new_obj();
	site_new_array(100);
	via_signal();
	via_signal();
	tr_report();
	TR_LEAVE();
	return 0;
}
