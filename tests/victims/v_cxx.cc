// SPDX-License-Identifier: GPL-2.0
/*
 * v_cxx: C++ operator new / new[] leaks, next to delete / delete[] of others.
 * Sites are extern "C" so that frames[0].function is the plain name, however
 * the tracer prints demangled C++ names.
 *
 * What operator new[] is asked for (what the tracer sees, and the truth):
 *  - new int[n]: n * sizeof(int), no cookie (trivially destructible);
 *  - new Widget[n], Widget having a destructor: n * sizeof(Widget) plus an
 *    array cookie in front of the elements holding n, of
 *    max(sizeof(size_t), alignof(Widget)) bytes (Itanium C++ ABI, 2.7): here
 *    3 * 16 + 8 = 56. The victim computes that from the type and checks that
 *    the cookie really holds n before it counts it.
 * A 200,000-byte `new` and a 300,000-byte `new[]`: glibc mmaps them inside
 * malloc, inside operator new; one allocation each, at the user's site.
 * Truth: TRUTH lines (see truth.h) to $VICTIM_TRUTH or stdout, and a
 * "# operator new: <object>" note naming the allocator in use; exit status 0.
 *
 * Truth: 7 TRUTH lines; heap 500,289 bytes in 11 blocks.
 *
 * valgrind 3.19 (--leak-check=full --show-leak-kinds=all), once:
 *   definitely lost: 500,289 bytes in 11 blocks
 *   indirectly lost: 0, possibly lost: 0, still reachable: 0 bytes in 0 blocks
 *   = the sum of the TRUTH lines (valgrind also names them operator new /
 *   operator new[], and the new[] of Widget as 56 bytes).
 */
#include <algorithm>
#include <dlfcn.h>
#include <string>
#include <type_traits>
#include <vector>
#include "truth.h"

struct Obj {
	long a, b, c;	/* 24 bytes, trivial */
};

struct Widget {
	long x, y;	/* 16 bytes, with a destructor: new[] adds a cookie */
	Widget() : x(1), y(2) {}
	~Widget() { asm volatile("" : : "r"(this) : "memory"); }
};

struct Big {
	char bytes[200000];
};

template <typename T> static size_t array_request(size_t n)
{
	size_t cookie = std::is_trivially_destructible<T>::value ?
			0 : std::max(sizeof(size_t), alignof(T));

	return n * sizeof(T) + cookie;
}

template <typename T> static void check_cookie(const T *a, size_t n)
{
	if (!std::is_trivially_destructible<T>::value && ((const size_t *)a)[-1] != n)
		tr_die("no new[] cookie where the ABI puts it");
}

extern "C" {

SITE void site_new_obj(void)
{
	Obj *o = new Obj(); TR_ALLOC(o, sizeof(Obj), "new"); ESCAPE(o);
}

SITE void site_new_big(void)
{
	Big *b = new Big; TR_ALLOC(b, sizeof(Big), "new"); ESCAPE(b);
}

SITE void site_new_ints(size_t n)
{
	int *a = new int[n]; TR_ALLOC(a, array_request<int>(n), "new[]"); ESCAPE(a);
}

SITE void site_new_widgets(size_t n)
{
	Widget *w = new Widget[n]; TR_ALLOC(w, array_request<Widget>(n), "new[]"); ESCAPE(w);
	check_cookie(w, n);
}

SITE void site_new_chars(size_t n)
{
	char *c = new char[n]; TR_ALLOC(c, array_request<char>(n), "new[]"); ESCAPE(c);
}

SITE void site_cxx_malloc(size_t n)
{
	void *p = malloc(n); TR_ALLOC(p, n, "malloc"); ESCAPE(p);
}

SITE void site_cxx_deep(void)
{
	Obj *o = new Obj(); TR_ALLOC(o, sizeof(Obj), "new"); ESCAPE(o);
}

VIA void via_cxx(void)
{
	TR_ENTER();
	site_cxx_deep();
	TR_LEAVE();
}

/* Everything given back: delete (sized), delete[], and the standard containers. */
SITE void site_cxx_freed(int rounds)
{
	for (int i = 0; i < rounds; i++) {
		Obj *o = new Obj(); ESCAPE(o);
		delete o;
		Widget *w = new Widget[i % 5 + 1]; ESCAPE(w);
		delete[] w;
		int *a = new int[i + 1]; ESCAPE(a);
		delete[] a;
		std::vector<int> v(100 + i, i);
		ESCAPE(v.data());
		std::string s(200 + i, 'x');
		ESCAPE(s.data());
	}
	Big *b = new Big; ESCAPE(b);
	delete b;
}

} /* extern "C" */

/* "# operator new: <object>": lets the tests check that LD_PRELOAD took effect. */
static void note_allocator(void)
{
	Dl_info info;

	if (dladdr((void *)static_cast<void *(*)(size_t)>(::operator new), &info) && info.dli_fname)
		tr_note("operator new", info.dli_fname);
}

int main(void)
{
	TR_ENTER();
	for (int i = 0; i < 4; i++)
		site_new_obj();
	site_new_big();
	site_new_ints(10);
	site_new_ints(10);
	site_new_widgets(3);
	site_new_chars(300000);
	site_cxx_malloc(33);
	via_cxx();
	site_cxx_freed(100);
	note_allocator();
	tr_report();
	TR_LEAVE();
	return 0;
}
